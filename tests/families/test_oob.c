/* Test-only family test_oob: its kernel faults with an illegal address, to prove the tuner's
 * isolation. Never enumerated for sweeps (test_only). Template: tests/families/test_oob.cu,
 * embedded into the test binary only (the library never carries it). Tested by tests/test_families.c. */
#include "family.h"

#include <stdio.h>

static int legal(const gt_params *p, const gt_limits *lim, char *why, size_t n)
{
    if (p->v[0] < 1 || p->v[0] > lim->max_threads_per_block) return snprintf(why, n, "BX outside [1, threads]"), 0;
    return 1;
}

static void launch(const gt_params *p, const gt_shape *s, gt_launch *out)
{
    (void)s;
    *out = (gt_launch){.grid = {1, 1, 1}, .block = {(unsigned)p->v[0], 1, 1}, .splitk = 1};
}

static const gt_family family = {
    .name = "test_oob",
    .doc = "test only: writes far out of bounds (illegal address)",
    .template_name = "test_oob.cu",
    .nparams = 1,
    .params = {{"BX", "threads per block", 1, {32}}},
    .legal = legal,
    .launch = launch,
    .test_only = 1,
};

__attribute__((constructor)) static void register_family(void) { gt_family_register(&family); }
