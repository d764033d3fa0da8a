/* Family smem: shared-memory tiling, one C element per thread (seeds 004, 003 v2, 001 v1).
 * Template: templates/smem.cu. Tested by tests/test_families.c and tests/test_nvrtc.c. */
#include "family.h"

#include <stdio.h>

enum { P_BM, P_BN, P_BK };

static int legal(const gt_params *p, const gt_limits *lim, char *why, size_t n)
{
    const int bm = p->v[P_BM], bn = p->v[P_BN], bk = p->v[P_BK];
    if (bm <= 0 || bn <= 0 || bk <= 0) return snprintf(why, n, "non-positive parameter"), 0;
    const long threads = (long)bm * bn;
    if (threads % 32 || threads < 64 || threads > lim->max_threads_per_block)
        return snprintf(why, n, "%ld threads: not a whole number of warps in [64, %d]", threads,
                        lim->max_threads_per_block), 0;
    const long smem = 4L * bk * (bm + 1 + bn + 1); /* As[BK][BM+1] + Bs[BK][BN+1] */
    if (smem > lim->max_smem_per_block) return snprintf(why, n, "%ld B static shared memory", smem), 0;
    return 1;
}

/* 1-D grid: BM may be small enough that M / BM passes grid y's 65535. */
static void launch(const gt_params *p, const gt_shape *s, int sms, gt_launch *out)
{
    (void)sms;
    gt_launch_tiles(s, p->v[P_BM], p->v[P_BN], (unsigned)(p->v[P_BM] * p->v[P_BN]), 0, 1, 1, out);
}

const gt_family gt_family_smem = {
    .name = "smem",
    .order = 3,
    .batched = 1,
    .doc = "shared-memory tiles of A and B, one C element per thread (seeds 004, 003 v2, 001 v1)",
    .template_name = "smem.cu",
    .nparams = 3,
    .params = {{"BM", "rows of C per block", 4, {8, 16, 32, 64}},
               {"BN", "columns of C per block", 3, {16, 32, 64}},
               {"BK", "K depth of a shared-memory tile", 4, {8, 16, 32, 64}}},
    .legal = legal,
    .launch = launch,
};
