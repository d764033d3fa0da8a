/* Family vec4: 2D thread tile with float4 global and shared loads, A transposed in shared memory
 * (seed 003 v5, seed 001 matmul_v3). Template: templates/vec4.cu (+ tileio.cuh).
 * Tested by tests/test_families.c and tests/test_nvrtc.c. */
#include "family.h"

#include <stdio.h>

enum { P_BM, P_BN, P_BK, P_TM, P_TN };

static int legal(const gt_params *p, const gt_limits *lim, char *why, size_t n)
{
    const int bm = p->v[P_BM], bn = p->v[P_BN], bk = p->v[P_BK], tm = p->v[P_TM], tn = p->v[P_TN];
    if (bm <= 0 || bn <= 0 || bk <= 0 || tm <= 0 || tn <= 0) return snprintf(why, n, "non-positive parameter"), 0;
    /* float4 tiles: four k, rows or columns per load and per shared-memory read */
    if (bk % 4 || tm % 4 || tn % 4) return snprintf(why, n, "BK, TM and TN must be multiples of 4"), 0;
    if (bm % tm || bn % tn) return snprintf(why, n, "BM %% TM or BN %% TN != 0"), 0;
    if (bm < 32) return snprintf(why, n, "BM %d under 32 (grid y limit)", bm), 0;
    return gt_block_fits((long)(bm / tm) * (bn / tn), 4L * bk * (bm + 4 + bn + 4), (long)tm * tn + tm + tn + 32, lim,
                         why, n);
}

static void launch(const gt_params *p, const gt_shape *s, int sms, gt_launch *out)
{
    (void)sms;
    const unsigned threads = (unsigned)((p->v[P_BM] / p->v[P_TM]) * (p->v[P_BN] / p->v[P_TN]));
    gt_launch_tiles(s, p->v[P_BM], p->v[P_BN], threads, 0, 1, 0, out);
}

/* applicable() stays NULL: the kernel checks alignment and ld % 4 itself and falls back to scalar loads. */
const gt_family gt_family_vec4 = {
    .name = "vec4",
    .order = 6,
    .batched = 1,
    .doc = "2D thread tile with float4 loads and stores, A transposed in shared memory (seed 003 v5, 001 v3)",
    .template_name = "vec4.cu",
    .nparams = 5,
    .params = {{"BM", "rows of C per block", 4, {32, 64, 128, 256}},
               {"BN", "columns of C per block", 4, {32, 64, 128, 256}},
               {"BK", "K depth of a shared-memory tile", 3, {8, 16, 32}},
               {"TM", "rows of C per thread", 2, {4, 8}},
               {"TN", "columns of C per thread", 2, {4, 8}}},
    .legal = legal,
    .launch = launch,
};
