/* Family skinnyt: one small side of C (M or N, as SIDE says) tiled as a square GEMM is: a thread holds ROWS rows of it
 * by TN columns of the large side, a warp RT row groups; WL warps side by side, WK groups of them sharing out the
 * block's slice of K, each through a cp.async ring of its own, joined in shared memory in group order; K split over
 * the GPU and reduced in slice order. For the large operand along the large side.
 * Template: templates/skinnyt.cu. Tested by tests/test_skinnyt.c. */
#include "family.h"

#include <stdio.h>

enum { P_SIDE, P_ROWS, P_RT, P_TN, P_WL, P_WK, P_KC, P_STAGES, P_FILL, NPARAMS };

#define REJECT GT_REJECT

/* Rows of the small side a block holds, threads of a K group, columns of the large side a block (ST_SP, ST_NG and
 * ST_BL in the template). */
static int block_rows(const gt_params *p) { return p->v[P_RT] * p->v[P_ROWS]; }
static int group_threads(const gt_params *p) { return 32 * p->v[P_WL]; }
static long block_cols(const gt_params *p) { return (long)p->v[P_WL] * (32 / p->v[P_RT]) * p->v[P_TN]; }

/* Floats of X a k in a stage (ST_XK): RT groups of ROWS rounded up to 4, an odd number of quads apart, and the whole
 * an odd number of quads. */
static long x_floats_per_k(const gt_params *p)
{
    const int rp = (p->v[P_ROWS] + 3) / 4 * 4, xg = rp / 4 % 2 ? rp : rp + 4, xk = p->v[P_RT] * xg;
    return xk / 4 % 2 ? xk : xk + 4;
}

/* Dynamic shared memory: WK rings of STAGES stages of X and Y, or the WK - 1 later groups' sums where they meet
 * group 0's, whichever is more. */
static long smem_bytes(const gt_params *p)
{
    const long rings = 4L * p->v[P_WK] * p->v[P_STAGES] * p->v[P_KC] * (x_floats_per_k(p) + block_cols(p));
    const long join = 4L * (p->v[P_WK] - 1) * p->v[P_ROWS] * p->v[P_TN] * group_threads(p);
    return rings > join ? rings : join;
}

/* Registers per thread: the sums, two fragments (rows rounded up to 4, and TN), ~16 for addresses and loop state
 * (NVRTC, uncapped: ROWS 13 TN 8 took 168-199, ROWS 8 TN 8 128-140, ROWS 12 TN 8 172-182). */
static long regs_estimate(const gt_params *p)
{
    const long r = p->v[P_ROWS], tn = p->v[P_TN];
    return r * tn + 2 * ((r + 3) / 4 * 4 + tn) + 16;
}

/* The copies' rule (the template's static_asserts; the others hold for every legal value): where X runs along K a
 * pass of the group's copies covers 32 WL / KC rows, whole row groups, so that each thread's copies stay in one. */
static int copies_keep_their_group(const gt_params *p, char *why, size_t n)
{
    const int ng = group_threads(p), kc = p->v[P_KC];
    if ((ng / kc) % p->v[P_RT]) REJECT("%d threads a group, KC=%d: a pass of X's copies not whole row groups", ng, kc);
    return 1;
}

static int legal(const gt_params *p, const gt_limits *lim, char *why, size_t n)
{
    const int *v = p->v;
    if (v[P_SIDE] < 0 || v[P_SIDE] > 1) REJECT("SIDE=%d: 0 (M small) or 1 (N small)", v[P_SIDE]);
    if (v[P_RT] != 2 && v[P_RT] != 4) REJECT("RT=%d: 2 or 4 row groups", v[P_RT]);
    if (v[P_ROWS] < 1 || v[P_ROWS] > 32) REJECT("ROWS=%d outside 1..32", v[P_ROWS]);
    if (v[P_TN] != 4 && v[P_TN] != 8) REJECT("TN=%d: 4 or 8", v[P_TN]);
    if (v[P_WL] != 1 && v[P_WL] != 2 && v[P_WL] != 4 && v[P_WL] != 8) REJECT("WL=%d: 1, 2, 4 or 8", v[P_WL]);
    if (v[P_WK] < 1 || v[P_WK] > 4) REJECT("WK=%d outside 1..4", v[P_WK]);
    if (v[P_WL] * v[P_WK] > 16) REJECT("WL=%d x WK=%d: over 16 warps", v[P_WL], v[P_WK]);
    if (v[P_KC] != 8 && v[P_KC] != 16 && v[P_KC] != 32) REJECT("KC=%d: 8, 16 or 32", v[P_KC]);
    if (v[P_STAGES] < 2 || v[P_STAGES] > 6) REJECT("STAGES=%d outside 2..6", v[P_STAGES]);
    if (v[P_FILL] < 1 || v[P_FILL] > 256) REJECT("FILL=%d outside 1..256", v[P_FILL]);
    if (!copies_keep_their_group(p, why, n)) return 0;
    return gt_block_fits_dynamic(32L * v[P_WL] * v[P_WK], 1, smem_bytes(p), regs_estimate(p), lim, why, n);
}

/* The default space, measured on an H200 (docs/BENCHMARKS.md, 2026-11-29, twenty-seventh session, the study
 * tests/perf/skinny_wt.cu): four row groups of eight columns a thread (two groups of four lost 5-11% at 33 and 50
 * rows; ROWS 16 spills); two warps across with two K groups (50 rows), four with two or one (32 and 50 rows); stages
 * of 16 three deep, or of 8 four deep (33 rows). */
static int in_space(const gt_params *p, char *why, size_t n)
{
    const int wl = p->v[P_WL], wk = p->v[P_WK], kc = p->v[P_KC], st = p->v[P_STAGES];
    if (p->v[P_RT] != 4 || p->v[P_TN] != 8) REJECT("default space: RT=4 and TN=8");
    if (p->v[P_ROWS] > 13) REJECT("default space: ROWS up to 13 (16 spills)");
    if (!(wl == 2 && wk == 2) && !(wl == 4 && wk <= 2)) REJECT("default space: WL=2 with WK=2, or WL=4 with WK=1 or 2");
    if (!(kc == 16 && st == 3) && !(kc == 8 && st == 4)) REJECT("default space: KC=16 in 3 stages or KC=8 in 4");
    return 1;
}

/* One block per block_cols() columns of L and K slice (gt_skinny_slices: as many as FILL warps per SM hold, each at
 * least two stages of every group); with slices, a workspace (the slice count, then each slice's S x L sums) and
 * the template's gt_splitk_reduce. */
static void launch(const gt_params *p, const gt_shape *s, int sms, gt_launch *out)
{
    const long tiles = gt_cdiv(gt_large_side(p->v[P_SIDE], s), block_cols(p));
    const int warps = p->v[P_WL] * p->v[P_WK];
    const int z = gt_skinny_slices(s, gt_small_side(p->v[P_SIDE], s), p->v[P_FILL], warps,
                                   p->v[P_KC] * p->v[P_WK], tiles, sms);
    *out = (gt_launch){.grid = {(unsigned)tiles, 1, (unsigned)z},
                       .block = {32u * (unsigned)warps, 1, 1},
                       .smem = (unsigned)smem_bytes(p),
                       .splitk = z};
    gt_skinny_workspace(s, z, out);
}

/* Where Y runs along L, with the fewest rows of RT ROWS that hold the small side (ROWS the smallest that does). */
static int applicable(const gt_params *p, const gt_call *call)
{
    const int s = gt_small_side(p->v[P_SIDE], &call->shape), rt = p->v[P_RT];
    return gt_large_along_l(p->v[P_SIDE], call->shape.ta, call->shape.tb) && s <= block_rows(p) &&
           s > block_rows(p) - rt;
}

/* The cost model's view of a block: RT ROWS rows of the small side by the block's columns of the large one. */
static void work(const gt_params *p, gt_work *out)
{
    gt_side_work(p->v[P_SIDE], block_rows(p), (int)block_cols(p), (int)regs_estimate(p), out);
}

const gt_family gt_family_skinnyt = {
    .name = "skinnyt",
    .batched = 1,
    .doc = "one side of C small, tiled as a square GEMM: a thread ROWS rows by TN columns, warps side by side and in "
           "groups sharing out K, each group's cp.async ring its own; K split over the GPU and reduced in order",
    .template_name = "skinnyt.cu",
    .nparams = NPARAMS,
    .params = {{"SIDE", "the small side: 0 M, 1 N", 2, {0, 1}},
               {"ROWS", "rows of the small side a thread holds (RT ROWS at least the side)", 12,
                {13, 12, 11, 10, 9, 8, 7, 6, 5, 14, 15, 16}},
               {"RT", "row groups of a warp", 2, {4, 2}},
               {"TN", "columns of the large side a thread holds", 2, {8, 4}},
               {"WL", "warps side by side along the large side", 2, {2, 4}},
               {"WK", "groups of WL warps sharing out the block's slice of K", 2, {2, 1}},
               {"KC", "K depth of a stage", 2, {16, 8}},
               {"STAGES", "stages in each group's ring", 2, {3, 4}},
               {"FILL", "warps per SM the K split fills, at most (launch only: no compile of its own)", 3,
                {8, 12, 16},
                .launch_only = 1}},
    .legal = legal,
    .in_space = in_space,
    .launch = launch,
    .applicable = applicable,
    .work = work,
};
