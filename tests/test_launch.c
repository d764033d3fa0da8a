/* A launch's host side without a GPU (src/lib/kernel.c): gt_gemm's argument array, a family's launch hook given
 * the call, and the parameters and cluster it appends (gt_launch_extra_add, gt_kernel_argv_make,
 * gt_kernel_prepare), on the test family test_hook (tests/families/hook.c), and its kernel compiled by NVRTC.
 * Run: build/gt_tests --cpu launch */
#include "compile.h"
#include "family.h"
#include "harness.h"
#include "hook.h"
#include "kernel.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A call with made-up device addresses (nothing is dereferenced on the host), 16-byte aligned unless moved. */
static gt_args fake_call(void)
{
    return (gt_args){.m = 64, .n = 48, .k = 32, .alpha = 1.5f, .beta = 0.5f, .A = (const float *)0x10000,
                     .B = (const float *)0x20000, .C = (float *)0x30000, .lda = 32, .ldb = 48, .ldc = 52,
                     .ws = (float *)0x40000};
}

/* gt_gemm's own parameters, in GT_GEMM_ARGS's order, point at a's values. */
static int own_args_are(const gt_kernel_argv *v, const gt_args *a)
{
    void *const *p = v->ptr;
    return *(int *)p[0] == a->m && *(int *)p[1] == a->n && *(int *)p[2] == a->k && *(float *)p[3] == a->alpha &&
           *(const float **)p[4] == a->A && *(int *)p[5] == a->lda && *(const float **)p[6] == a->B &&
           *(int *)p[7] == a->ldb && *(float *)p[8] == a->beta && *(float **)p[9] == a->C && *(int *)p[10] == a->ldc &&
           *(float **)p[11] == a->ws;
}

/* Family's candidate params (NULL when either is unknown), with its launch for the fake call's shape in *L. */
static const gt_family *candidate(const char *family, const char *params, gt_params *p, gt_launch *L)
{
    const gt_family *f = gt_family_find(family);
    char err[256];
    if (!f || gt_params_parse(f, params, p, err, sizeof err)) return NULL;
    gt_family_launch(f, p, &(gt_shape){64, 48, 32, 0, 0}, GT_TEST_SMS, L);
    return f;
}

/* A family with no hook (every built-in one) gets gt_gemm's 12 parameters, 15 for a batched kernel, and no
 * cluster: the launch as it was before hooks. */
GT_TEST(launch_args_without_a_hook_are_gt_gemms_own, GT_NEEDS_NONE)
{
    gt_params p;
    gt_launch L;
    gt_launch_extra x;
    gt_kernel_argv v;
    char err[256];
    gt_args a = fake_call();
    const gt_family *f = candidate("tile2d", "BM=64,BN=64,BK=8,TM=8,TN=8", &p, &L);
    CHECK(f && !f->launch_hook);
    if (!f) return;
    memset(&x, 0xff, sizeof x);
    CHECK(gt_kernel_prepare(f, &p, &L, L.grid, &a, 0, NULL, &x, &v, err, sizeof err) == 0);
    CHECK(v.count == GT_GEMM_NARGS && own_args_are(&v, &a));
    CHECK(x.nextra == 0 && !x.cluster[0] && !x.cluster[1] && !x.cluster[2]);
    a.batch = 3, a.sa = 111, a.sb = 222, a.sc = 333;
    CHECK(gt_kernel_prepare(f, &p, &L, L.grid, &a, 1, NULL, &x, &v, err, sizeof err) == 0);
    CHECK(v.count == GT_GEMM_NARGS_BATCHED && own_args_are(&v, &a));
    CHECK(*(long long *)v.ptr[12] == 111 && *(long long *)v.ptr[13] == 222 && *(long long *)v.ptr[14] == 333);
}

/* test_hook's hook is given the call (its pointers, ld's, sizes and stream), and what it appends follows gt_gemm's
 * own parameters in order, each at its alignment; its cluster comes with them. */
GT_TEST(launch_hook_sees_the_call_and_its_params_follow_gt_gemms, GT_NEEDS_NONE)
{
    gt_params p;
    gt_launch L;
    gt_launch_extra x;
    gt_kernel_argv v;
    char err[256] = "";
    void *stream = (void *)0x5a5a0;
    const gt_args a = fake_call();
    const gt_family *f = candidate("test_hook", "CLUSTER=2", &p, &L);
    CHECK(f && f->launch_hook);
    if (!f) return;
    CHECK(L.grid[0] == 4 && L.grid[1] == 4); /* 3 column tiles, rounded up to whole clusters */
    CHECK_MSG(gt_kernel_prepare(f, &p, &L, L.grid, &a, 0, stream, &x, &v, err, sizeof err) == 0, "%s", err);
    CHECK(v.count == GT_GEMM_NARGS + 2 && own_args_are(&v, &a));
    const gt_test_hook_view *view = v.ptr[GT_GEMM_NARGS];
    CHECK((uintptr_t)view % _Alignof(gt_test_hook_view) == 0 && (const unsigned char *)view == x.bytes);
    CHECK(view->A == a.A && view->B == a.B && view->C == a.C);
    CHECK(view->lda == 32 && view->ldb == 48 && view->ldc == 52 && view->m == 64 && view->n == 48 && view->k == 32);
    CHECK(view->stream == (uintptr_t)stream);
    CHECK(*(const unsigned *)v.ptr[GT_GEMM_NARGS + 1] == GT_TEST_HOOK_MAGIC);
    CHECK(x.offset[1] == sizeof(gt_test_hook_view) && x.size[1] == sizeof(unsigned));
    CHECK(x.cluster[0] == 2 && x.cluster[1] == 1 && x.cluster[2] == 1);
    /* batched: the extra parameters follow sa, sb, sc */
    CHECK(gt_kernel_prepare(f, &p, &L, L.grid, &a, 1, stream, &x, &v, err, sizeof err) == 0);
    CHECK(v.count == GT_GEMM_NARGS_BATCHED + 2 && v.ptr[GT_GEMM_NARGS_BATCHED] == (void *)x.bytes);
}

/* A hook that cannot serve the call refuses it, and the refusal names the family: the launch then runs nothing. */
GT_TEST(launch_hook_refusal_is_reported_with_the_family, GT_NEEDS_NONE)
{
    gt_params p;
    gt_launch L;
    gt_launch_extra x;
    gt_kernel_argv v;
    char err[256] = "";
    gt_args a = fake_call();
    const gt_family *f = candidate("test_hook", "CLUSTER=0", &p, &L);
    CHECK(f != NULL);
    if (!f) return;
    CHECK(gt_kernel_prepare(f, &p, &L, L.grid, &a, 0, NULL, &x, &v, err, sizeof err) == 0 && !x.cluster[0]);
    a.ldb = 47; /* a row of B no longer 16-byte aligned */
    CHECK(gt_kernel_prepare(f, &p, &L, L.grid, &a, 0, NULL, &x, &v, err, sizeof err) == -1);
    CHECK_MSG(strstr(err, "launch hook of test_hook: ") && strstr(err, "16-byte"), "%s", err);
    a = fake_call();
    a.C = (float *)0x30004;
    CHECK(gt_kernel_prepare(f, &p, &L, L.grid, &a, 0, NULL, &x, &v, err, sizeof err) == -1);
}

/* gt_launch_extra_add aligns each parameter and refuses what does not fit; gt_kernel_argv_make refuses an extra it
 * could not have made and a cluster that does not divide the grid. */
GT_TEST(launch_extra_params_are_aligned_and_bounded, GT_NEEDS_NONE)
{
    gt_launch_extra x;
    gt_kernel_argv v;
    char err[256];
    const unsigned char one = 7;
    const double d = 2.5;
    static const unsigned char desc[128]; /* a CUtensorMap's size */
    memset(&x, 0, sizeof x);
    CHECK(gt_launch_extra_add(&x, &one, 1, 1) == 0 && x.offset[0] == 0);
    CHECK(gt_launch_extra_add(&x, &d, sizeof d, 8) == 0 && x.offset[1] == 8 && !memcmp(x.bytes + 8, &d, sizeof d));
    CHECK(gt_launch_extra_add(&x, desc, sizeof desc, 64) == 0 && x.offset[2] == 64 && x.size[2] == 128);
    CHECK(gt_launch_extra_add(&x, &one, 1, 3) == -1 && gt_launch_extra_add(&x, &one, 1, 128) == -1 && x.nextra == 3);
    CHECK(gt_launch_extra_add(&x, desc, GT_LAUNCH_EXTRA_BYTES - 191, 1) == -1 && x.nextra == 3); /* one byte over */
    CHECK(gt_launch_extra_add(&x, desc, 1, 1) == 0 && x.offset[3] == 192);
    while (x.nextra < GT_LAUNCH_MAX_EXTRA) CHECK(gt_launch_extra_add(&x, &one, 1, 1) == 0);
    CHECK(gt_launch_extra_add(&x, &one, 1, 1) == -1);

    const gt_args a = fake_call();
    const unsigned grid[3] = {6, 4, 1};
    CHECK(gt_kernel_argv_make(&v, &a, 0, grid, &x, err, sizeof err) == 0 && v.count == GT_GEMM_NARGS + 8);
    CHECK(v.ptr[GT_GEMM_NARGS + 2] == (void *)(x.bytes + 64) && *(unsigned char *)v.ptr[GT_GEMM_NARGS] == 7);
    x.cluster[0] = 3, x.cluster[1] = 2, x.cluster[2] = 1;
    CHECK(gt_kernel_argv_make(&v, &a, 0, grid, &x, err, sizeof err) == 0);
    x.cluster[0] = 4;
    CHECK(gt_kernel_argv_make(&v, &a, 0, grid, &x, err, sizeof err) == -1 && strstr(err, "does not divide"));
    x.cluster[0] = 2, x.cluster[1] = 0;
    CHECK(gt_kernel_argv_make(&v, &a, 0, grid, &x, err, sizeof err) == -1);
    x.cluster[1] = 1;
    x.offset[1] = GT_LAUNCH_EXTRA_BYTES - 4; /* 8 bytes from there run past the end */
    CHECK(gt_kernel_argv_make(&v, &a, 0, grid, &x, err, sizeof err) == -1 && strstr(err, "outside"));
    x.offset[1] = 8, x.nextra = GT_LAUNCH_MAX_EXTRA + 1;
    CHECK(gt_kernel_argv_make(&v, &a, 0, grid, &x, err, sizeof err) == -1);
}

/* test_hook's kernel, with the cluster check, compiles as its hook launches it (the GPU runs it: tests/test_gpu.c). */
GT_TEST(launch_hook_family_compiles, GT_NEEDS_NVRTC)
{
    const gt_family *f = gt_family_find("test_hook");
    gt_params p;
    gt_cubin c;
    char err[512];
    CHECK(f && gt_params_parse(f, "CLUSTER=2", &p, err, sizeof err) == 0);
    if (!f) return;
    char *src = gt_render(f, &p, 1, 0, 0, err, sizeof err);
    CHECK_MSG(src && gt_nvrtc_compile(src, "sm_90", &c, err, sizeof err) == 0, "%s", err);
    CHECK(c.data && memmem(c.data, c.size, "gt_gemm", 8));
    gt_cubin_free(&c);
    free(src);
}

/* The text after `what` and its opening brace, blanks skipped (NULL when what is absent). */
static const char *body_of(const char *text, const char *what)
{
    const char *s = strstr(text, what);
    if (!s || !(s = strchr(s, '{'))) return NULL;
    for (++s; *s == ' ' || *s == '\n'; ++s) {}
    return s;
}

/* templates/pdl.cuh: a reduce the host may launch before gt_gemm has finished must wait for gt_gemm before anything
 * else. Every template that includes the header starts its gt_splitk_reduce with gt_wait_gemm(); an sm_90 cubin of
 * such a family holds the marker the host looks for (src/lib/kernel.c), an sm_80 one (where the wait is compiled
 * out) does not. */
GT_TEST(launch_reduce_early_only_where_it_waits, GT_NEEDS_NVRTC)
{
    int users = 0;
    for (int i = 0; gt_template_text_name(i); ++i) {
        const char *name = gt_template_text_name(i), *text = gt_template_text(name);
        if (!strstr(text, "#include \"pdl.cuh\"")) continue;
        const char *reduce = body_of(text, "void gt_splitk_reduce(");
        CHECK_MSG(reduce && !strncmp(reduce, "gt_wait_gemm();", 15), "%s: its reduce does not wait first", name);
        users++;
    }
    CHECK_MSG(users >= 2, "%d templates include pdl.cuh (skinny.cu and skinnyr.cu did)", users);
    const gt_family *f = gt_family_find("skinnyr");
    gt_params p;
    char err[512];
    CHECK(f && gt_params_parse(f, "SIDE=0,SR=33,TL=2,WARPS=8,P=8,MINB=2,FILL=16", &p, err, sizeof err) == 0);
    if (!f) return;
    char *src = gt_render(f, &p, 0, 0, 0, err, sizeof err);
    static const char *const arch[] = {"sm_90", "sm_80"};
    for (int a = 0; a < 2 && src; ++a) {
        gt_cubin c = {0};
        CHECK_MSG(gt_nvrtc_compile(src, arch[a], &c, err, sizeof err) == 0, "%s: %s", arch[a], err);
        const int marked = c.data && memmem(c.data, c.size, "gt_reduce_waits", 16) != NULL;
        CHECK_MSG(marked == (a == 0), "skinnyr for %s: marker %s", arch[a], marked ? "present" : "absent");
        gt_cubin_free(&c);
    }
    free(src);
}
