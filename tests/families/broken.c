/* The deliberately broken test-only families, to prove the tuner's isolation: test_oob's kernel writes far out of
 * bounds (illegal address), test_hang's never returns (watchdog). Never enumerated for sweeps (test_only).
 * Templates: tests/families/<name>.cu, embedded into the test binary only (the library never carries them).
 * Tested by tests/test_families.c and, on a GPU, tests/test_gpu.c. */
#include "family.h"

#include <stdio.h>

static int legal(const gt_params *p, const gt_limits *lim, char *why, size_t n)
{
    if (p->v[0] < 1 || p->v[0] > lim->max_threads_per_block) return snprintf(why, n, "BX outside [1, threads]"), 0;
    return 1;
}

static void launch(const gt_params *p, const gt_shape *s, int sms, gt_launch *out)
{
    (void)sms;
    (void)s;
    *out = (gt_launch){.grid = {1, 1, 1}, .block = {(unsigned)p->v[0], 1, 1}, .splitk = 1};
}

#define BROKEN(name_, doc_)                                                                                     \
    {.name = name_, .doc = doc_, .template_name = name_ ".cu", .nparams = 1,                                    \
     .params = {{"BX", "threads per block", 1, {32}}}, .legal = legal, .launch = launch, .test_only = 1}

static const gt_family hang = BROKEN("test_hang", "test only: spins forever (watchdog)");
static const gt_family oob = BROKEN("test_oob", "test only: writes far out of bounds (illegal address)");

__attribute__((constructor)) static void register_families(void)
{
    gt_family_register(&hang);
    gt_family_register(&oob);
}
