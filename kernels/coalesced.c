/* Family coalesced: one thread per C element, consecutive threads on consecutive columns (seed 001 matmul_v0).
 * Template: templates/coalesced.cu. Tested by tests/test_families.c and tests/test_nvrtc.c. */
#include "family.h"

#include <stdio.h>

enum { P_BM, P_BN, P_KU };

static int legal(const gt_params *p, const gt_limits *lim, char *why, size_t n)
{
    const int bm = p->v[P_BM], bn = p->v[P_BN], ku = p->v[P_KU];
    if (bm <= 0 || bn <= 0 || ku <= 0) return snprintf(why, n, "non-positive parameter"), 0;
    if (bn % 32) return snprintf(why, n, "BN %d: a warp must lie in one row of C", bn), 0;
    const long threads = (long)bm * bn;
    if (threads < 64 || threads > lim->max_threads_per_block)
        return snprintf(why, n, "%ld threads outside [64, %d]", threads, lim->max_threads_per_block), 0;
    return 1;
}

static void launch(const gt_params *p, const gt_shape *s, int sms, gt_launch *out)
{
    (void)sms;
    gt_launch_tiles(s, p->v[P_BM], p->v[P_BN], (unsigned)(p->v[P_BM] * p->v[P_BN]), 0, 1, 1, out);
}

const gt_family gt_family_coalesced = {
    .name = "coalesced",
    .order = 2,
    .batched = 1,
    .doc = "one thread per C element, a warp along a row of C so its accesses coalesce (seed 001 matmul_v0)",
    .template_name = "coalesced.cu",
    .nparams = 3,
    .params = {{"BM", "rows of C per block", 6, {1, 2, 4, 8, 16, 32}},
               {"BN", "columns of C per block, consecutive threads", 4, {32, 64, 128, 256}},
               {"KU", "unroll factor of the K loop", 2, {1, 4}}},
    .legal = legal,
    .launch = launch,
};
