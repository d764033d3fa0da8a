/* Family naive: one thread per C element (seeds 004, 003 v1). Template: templates/naive.cu.
 * Tested by tests/test_families.c and tests/test_nvrtc.c. */
#include "family.h"

#include <stdio.h>

enum { P_BX, P_BY, P_KU };

static int legal(const gt_params *p, const gt_limits *lim, char *why, size_t n)
{
    const int bx = p->v[P_BX], by = p->v[P_BY], ku = p->v[P_KU];
    if (bx <= 0 || by <= 0 || ku <= 0) return snprintf(why, n, "non-positive parameter"), 0;
    if (bx > 1024 || by > 1024) return snprintf(why, n, "block dimension over 1024"), 0;
    const long threads = (long)bx * by;
    if (threads % 32 || threads < 64 || threads > lim->max_threads_per_block)
        return snprintf(why, n, "%ld threads: not a whole number of warps in [64, %d]", threads,
                        lim->max_threads_per_block), 0;
    return 1;
}

/* Blocks on a 1-D grid (x has the 2^31 - 1 limit; y and z only 65535). */
static void launch(const gt_params *p, const gt_shape *s, int sms, gt_launch *out)
{
    (void)sms;
    const int bx = p->v[P_BX], by = p->v[P_BY];
    gt_launch_tiles(s, bx, by, (unsigned)bx, 0, 1, 1, out);
    out->block[1] = (unsigned)by; /* a bx x by block of threads, one per element of the tile */
}

const gt_family gt_family_naive = {
    .name = "naive",
    .order = 1,
    .batched = 1,
    .doc = "one thread per C element, threadIdx.x along rows as in the seeds (seeds 004, 003 v1)",
    .template_name = "naive.cu",
    .nparams = 3,
    .params = {{"BX", "threads per block along rows of C", 6, {8, 16, 32, 64, 128, 256}},
               {"BY", "threads per block along columns of C", 6, {1, 2, 4, 8, 16, 32}},
               {"KU", "unroll factor of the K loop", 2, {1, 4}}},
    .legal = legal,
    .launch = launch,
};
