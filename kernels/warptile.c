/* Family warptile: block, warp and thread tiles (seed 003 v6), with split-K and an L2 rasterisation group.
 * Template: templates/warptile.cu (+ tileio.cuh). Tested by tests/test_families.c and tests/test_nvrtc.c.
 * The seed's static_asserts miss (WM/WMITER) % TM and (WN/WNITER) % TN; legal() checks every index identity the
 * kernel relies on, so each legal point maps the block's threads one-to-one onto its BM x BN tile. */
#include "family.h"

#include <stdio.h>

enum { P_BM, P_BN, P_BK, P_WM, P_WN, P_WNITER, P_TM, P_TN, P_NTHREADS, P_SPLITK, P_SWZ };

#define FAIL(...) return snprintf(why, n, __VA_ARGS__), 0

/* The warp tile: WMITER x WNITER steps of WSUBM x WSUBN, the 32 lanes covering one step exactly. */
static int warp_ok(int wm, int wn, int wniter, int tm, int tn, char *why, size_t n)
{
    if (tm % 4 || tn % 4) FAIL("TM and TN must be multiples of 4 (float4 shared-memory reads)");
    if (wn % wniter) FAIL("WN %% WNITER != 0");
    const long step = 32L * tm * tn * wniter;
    if ((long)wm * wn % step) FAIL("WM*WN %% (32*TM*TN*WNITER) != 0: WMITER not whole");
    const int wmiter = (int)((long)wm * wn / step);
    if (wm % wmiter) FAIL("WM %% WMITER != 0 (WMITER = %d)", wmiter);
    if ((wm / wmiter) % tm) FAIL("(WM/WMITER) %% TM != 0: a warp step's rows split a thread tile");
    if ((wn / wniter) % tn) FAIL("(WN/WNITER) %% TN != 0: a warp step's columns split a thread tile");
    return 1;
}

static int legal(const gt_params *p, const gt_limits *lim, char *why, size_t n)
{
    const int *v = p->v;
    for (int i = 0; i <= P_SWZ; ++i)
        if (v[i] <= 0) FAIL("non-positive parameter");
        else if (v[i] > 4096) FAIL("parameter %d over 4096", v[i]); /* keeps the products below in int range */
    const int bm = v[P_BM], bn = v[P_BN], bk = v[P_BK], wm = v[P_WM], wn = v[P_WN], nt = v[P_NTHREADS];
    if (!warp_ok(wm, wn, v[P_WNITER], v[P_TM], v[P_TN], why, n)) return 0;
    if (bk % 4) FAIL("BK must be a multiple of 4 (float4 loads)");
    if (bm % wm || bn % wn) FAIL("BM %% WM or BN %% WN != 0");
    if (bm < 32) FAIL("BM %d under 32 (grid y limit)", bm);
    /* a pruning rule, not a limit: smaller warp tiles give each lane under 64 accumulators, vec4's territory */
    if ((long)wm * wn < 2048) FAIL("warp tile WM*WN %ld under 2048", (long)wm * wn);
    const long warps = (long)(bm / wm) * (bn / wn);
    if (nt != 32 * warps) FAIL("NTHREADS %d != 32 * (BM/WM) * (BN/WN) = %ld", nt, 32 * warps);
    if (nt < 64 || nt > lim->max_threads_per_block) FAIL("%d threads outside [64, %d]", nt, lim->max_threads_per_block);
    const long smem = 4L * bk * (bm + 4 + bn + 4);
    if (smem > lim->max_smem_per_block) FAIL("%ld B static shared memory", smem);
    /* accumulators (WM*WN/32) + one column of A and row of B per step + addressing, under launch bounds */
    const int wmiter = wm * wn / (32 * v[P_TM] * v[P_TN] * v[P_WNITER]);
    const long regs = (long)wm * wn / 32 + wmiter * v[P_TM] + v[P_WNITER] * v[P_TN] + 32;
    const long cap = lim->max_regs_per_block / nt;
    if (regs > lim->max_regs_per_thread || regs > cap)
        FAIL("~%ld registers/thread over the cap of %ld", regs, cap < lim->max_regs_per_thread ? cap : lim->max_regs_per_thread);
    if (v[P_SPLITK] > 64) FAIL("SPLITK %d over 64", v[P_SPLITK]);
    return 1;
}

/* grid z = SPLITK slices; their partial sums (splitk * M * N floats) are folded by a one-thread-per-element reduce. */
static void launch(const gt_params *p, const gt_shape *s, int sms, gt_launch *out)
{
    (void)sms;
    gt_launch_tiles(s, p->v[P_BM], p->v[P_BN], (unsigned)p->v[P_NTHREADS], 0, p->v[P_SPLITK], 0, out);
}

const gt_family gt_family_warptile = {
    .name = "warptile",
    .order = 7,
    .batched = 1,
    .doc = "warp tiling: block, warp and thread tiles with float4 I/O, split-K and L2 grouping (seed 003 v6)",
    .template_name = "warptile.cu",
    .nparams = 11,
    .params = {{"BM", "rows of C per block", 3, {64, 128, 256}},
               {"BN", "columns of C per block", 2, {64, 128}},
               {"BK", "K depth of a shared-memory tile", 2, {8, 16}},
               {"WM", "rows of C per warp", 2, {32, 64}},
               {"WN", "columns of C per warp", 2, {32, 64}},
               {"WNITER", "column steps of a warp over WN", 2, {2, 4}},
               {"TM", "rows of C per lane per step", 2, {4, 8}},
               {"TN", "columns of C per lane per step", 1, {4}},
               {"NTHREADS", "threads per block = 32 * (BM/WM) * (BN/WN)", 2, {128, 256}},
               {"SPLITK", "K slices reduced by gt_splitk_reduce", 2, {1, 4}},
               {"SWZ", "block rows per L2 rasterisation group (1: row-major)", 2, {1, 8}}},
    .legal = legal,
    .launch = launch,
};
