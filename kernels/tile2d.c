/* Family tile2d: 2D thread tile (seed 000). Template: templates/tile2d.cu. Tested by tests/test_kernels.c. */
#include "family.h"

#include <stdio.h>

enum { P_BM, P_BN, P_BK, P_TM, P_TN };

static int legal(const gt_params *p, const gt_limits *lim, char *why, size_t n)
{
    const int bm = p->v[P_BM], bn = p->v[P_BN], bk = p->v[P_BK], tm = p->v[P_TM], tn = p->v[P_TN];
    if (bm <= 0 || bn <= 0 || bk <= 0 || tm <= 0 || tn <= 0) return snprintf(why, n, "non-positive parameter"), 0;
    if (bm % tm || bn % tn) return snprintf(why, n, "BM %% TM or BN %% TN != 0"), 0;
    /* accumulators + one column of A and row of B + ~24 for addressing, under the launch-bounds cap */
    return gt_block_fits((long)(bm / tm) * (bn / tn), 4L * bk * (bm + bn), (long)tm * tn + tm + tn + 24, lim, why, n);
}

static void launch(const gt_params *p, const gt_shape *s, int sms, gt_launch *out)
{
    (void)sms;
    const unsigned threads = (unsigned)((p->v[P_BM] / p->v[P_TM]) * (p->v[P_BN] / p->v[P_TN]));
    gt_launch_tiles(s, p->v[P_BM], p->v[P_BN], threads, 0, 1, 0, out);
}

const gt_family gt_family_tile2d = {
    .name = "tile2d",
    .order = 5,
    .builtin_params = "BM=64,BN=64,BK=8,TM=8,TN=8", /* scalar loads and edge guards: any call, any arch */
    .batched = 1,
    .doc = "2D thread tile: each thread computes TM x TN of C from registers (seed 000)",
    .template_name = "tile2d.cu",
    .nparams = 5,
    .params = {{"BM", "rows of C per block", 4, {32, 64, 128, 256}},
               {"BN", "columns of C per block", 4, {32, 64, 128, 256}},
               {"BK", "K depth of a shared-memory tile", 3, {8, 16, 32}},
               {"TM", "rows of C per thread", 2, {4, 8}},
               {"TN", "columns of C per thread", 2, {4, 8}}},
    .legal = legal,
    .launch = launch,
};
