/* Test-only family test_hang: its kernel never returns, to prove the tuner's
 * isolation. Never enumerated for sweeps (test_only). Template: tests/families/test_hang.cu,
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
    .name = "test_hang",
    .doc = "test only: spins forever (watchdog)",
    .template_name = "test_hang.cu",
    .nparams = 1,
    .params = {{"BX", "threads per block", 1, {32}}},
    .legal = legal,
    .launch = launch,
    .test_only = 1,
};

__attribute__((constructor)) static void register_family(void) { gt_family_register(&family); }
