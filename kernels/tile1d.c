/* Family tile1d: 1D thread tile, TM rows of one column of C per thread (seed 002).
 * Template: templates/tile1d.cu. Tested by tests/test_families.c and tests/test_nvrtc.c. */
#include "family.h"

#include <stdio.h>

enum { P_BM, P_BN, P_BK, P_TM };

static int legal(const gt_params *p, const gt_limits *lim, char *why, size_t n)
{
    const int bm = p->v[P_BM], bn = p->v[P_BN], bk = p->v[P_BK], tm = p->v[P_TM];
    if (bm <= 0 || bn <= 0 || bk <= 0 || tm <= 0) return snprintf(why, n, "non-positive parameter"), 0;
    if (bm % tm) return snprintf(why, n, "BM %% TM != 0"), 0;
    /* grid y is M / BM and limited to 65535: BM >= 32 covers M up to 2^21 */
    if (bm < 32) return snprintf(why, n, "BM %d under 32 (grid y limit)", bm), 0;
    return gt_block_fits((long)(bm / tm) * bn, 4L * bk * (bm + 1 + bn + 1), 2L * tm + 28, lim, why, n);
}

static void launch(const gt_params *p, const gt_shape *s, int sms, gt_launch *out)
{
    (void)sms;
    const int bm = p->v[P_BM], bn = p->v[P_BN], tm = p->v[P_TM];
    gt_launch_tiles(s, bm, bn, (unsigned)(bm / tm * bn), 0, 1, 0, out);
}

const gt_family gt_family_tile1d = {
    .name = "tile1d",
    .order = 4,
    .batched = 1,
    .doc = "1D thread tile: each thread computes TM rows of one column of C (seed 002)",
    .template_name = "tile1d.cu",
    .nparams = 4,
    .params = {{"BM", "rows of C per block", 3, {32, 64, 128}},
               {"BN", "columns of C per block", 3, {32, 64, 128}},
               {"BK", "K depth of a shared-memory tile", 3, {8, 16, 32}},
               {"TM", "rows of C per thread", 3, {4, 8, 16}}},
    .legal = legal,
    .launch = launch,
};
