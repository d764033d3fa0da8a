/* The test-only family test_hook: its launch hook (family.h) passes the call's pointers, ld's and stream to the
 * kernel as an extra parameter, then a magic word, and with CLUSTER > 1 launches it in clusters along x; it refuses
 * operands a TMA descriptor could not take (16-byte aligned starts and rows). Tested by tests/test_kernels.c (CPU)
 * and tests/test_gpu.c (GPU). Template: tests/families/test_hook.cu. */
#include "family.h"
#include "hook.h"

#include <stdint.h>
#include <stdio.h>

enum { TILE = 16 }; /* the kernel's block: TILE x TILE threads, one element of C each */

static int legal(const gt_params *p, const gt_limits *lim, char *why, size_t n)
{
    if (p->v[0] > 1 && lim->cc_major < 9) return snprintf(why, n, "clusters need sm_90"), 0;
    return 1;
}

static void launch(const gt_params *p, const gt_shape *s, int sms, gt_launch *out)
{
    (void)sms;
    const unsigned cl = p->v[0] > 1 ? (unsigned)p->v[0] : 1, cols = gt_cdiv(s->n, TILE);
    *out = (gt_launch){.grid = {gt_cdiv(cols, cl) * cl, gt_cdiv(s->m, TILE), 1}, .block = {TILE, TILE, 1},
                       .splitk = 1};
}

static int aligned(const void *ptr, long long ld) { return (uintptr_t)ptr % 16 == 0 && ld % 4 == 0; }

static int hook(const gt_params *p, const gt_launch *L, const gt_args *a, void *stream, gt_launch_extra *out,
                char *err, size_t errlen)
{
    (void)L;
    if (!aligned(a->A, a->lda) || !aligned(a->B, a->ldb) || !aligned(a->C, a->ldc))
        return snprintf(err, errlen, "its descriptor takes 16-byte aligned operands and rows only"), -1;
    const gt_test_hook_view v = {a->A, a->B, a->C, a->lda, a->ldb, a->ldc, (unsigned long long)(uintptr_t)stream,
                                 a->m, a->n, a->k};
    const unsigned magic = GT_TEST_HOOK_MAGIC;
    if (gt_launch_extra_add(out, &v, sizeof v, _Alignof(gt_test_hook_view)) ||
        gt_launch_extra_add(out, &magic, sizeof magic, sizeof magic))
        return snprintf(err, errlen, "its parameters do not fit"), -1;
    if (p->v[0] > 1) out->cluster[0] = (unsigned)p->v[0], out->cluster[1] = out->cluster[2] = 1;
    return 0;
}

static const gt_family test_hook = {
    .name = "test_hook",
    .doc = "test only: operands from its launch hook's parameters",
    .template_name = "test_hook.cu",
    .nparams = 1,
    .params = {{"CLUSTER", "blocks per cluster along x the hook asks for (0: none)", 2, {0, 2}}},
    .legal = legal,
    .launch = launch,
    .launch_hook = hook,
    .test_only = 1,
};

__attribute__((constructor)) static void register_family(void) { gt_family_register(&test_hook); }
