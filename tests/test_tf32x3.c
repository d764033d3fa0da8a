/* Family tf32x3 (3xTF32 tensor-core SGEMM): registration, constraints, launch geometry, rendering and NVRTC
 * compiles of its whole default space in all four layouts without a GPU; on a GPU, key configurations of tf32x3
 * and of tf32x3wg (its wgmma sibling, CPU tests in test_tf32x3wg.c) against cuBLAS DGEMM with cuBLAS SGEMM's error
 * on the same inputs as the bar, NaN/Inf propagation and determinism.
 * Run: build/gt_tests --cpu tf32x3   (and build/gt_tests --gpu tf32x3 on an H100) */
#include "compile.h"
#include "family.h"
#include "harness.h"
#include "toolkit.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* BM BN BK WM WN STAGES KC MINB */
static const gt_params study = {{128, 128, 32, 64, 32, 3, 128, 1}};   /* the study's best: 8 warps of 64x32 */
static const gt_params narrow = {{128, 64, 16, 32, 32, 3, 128, 1}};   /* 8 warps of 32x32, BK 16 */
static const gt_params two_warps = {{64, 64, 32, 64, 32, 2, 128, 1}}; /* 64 threads, 2 stages */
static const gt_params a_whole = {{64, 128, 16, 32, 64, 4, 64, 1}};   /* not in the default space: the k step
                                                                          splits A whole (32x64 warps), KC 64 */

static const gt_family *fam(void) { return gt_family_find("tf32x3"); }

static gt_limits sm90(void)
{
    gt_limits l;
    gt_limits_for_arch("sm_90", &l);
    return l;
}

static int is_legal(const gt_params *p, char *why, size_t n)
{
    const gt_limits l = sm90();
    return fam()->legal(p, &l, why, n);
}

/* A copy of base with parameter `name` set to v. */
static gt_params with(gt_params p, const char *name, int v) { return gt_params_with(fam(), p, name, v); }

GT_TEST(tf32x3_is_registered_with_its_math_and_reference, GT_NEEDS_NONE)
{
    const gt_family *f = fam();
    CHECK(f != NULL);
    if (!f) return;
    CHECK(f->math == GT_MATH_TF32X3 && f->reference == GT_REF_FP64);
    CHECK(gt_math_name(f->math) && !strcmp(gt_math_name(f->math), "tf32x3"));
    CHECK(f->build == GT_BUILD_NVRTC && f->space == GT_SPACE_STATIC && !f->backend && !f->test_only);
    CHECK(gt_template_text(f->template_name) != NULL);
    CHECK(gt_param_get(f, &study, "SPLITK", -1) == -1 && gt_param_get(f, &study, "KC", -1) == 128);
}

typedef struct {
    int n, bad;
    char first_bad[160];
} space_ctx;

static int space_cb(const gt_family *f, const gt_params *p, void *vctx)
{
    space_ctx *c = vctx;
    const int bk = gt_param_get(f, p, "BK", 0), kc = gt_param_get(f, p, "KC", 0);
    if (!memcmp(p, &study, sizeof *p)) c->n++; /* counts the study's point */
    if (kc <= 0 || kc % bk) c->bad++, gt_params_format(f, p, c->first_bad, sizeof c->first_bad);
    return 0;
}

GT_TEST(tf32x3_default_space_is_small_and_holds_the_study_point, GT_NEEDS_NONE)
{
    const gt_limits l = sm90();
    space_ctx c = {0, 0, ""};
    const int n = gt_enumerate(fam(), &l, space_cb, &c);
    CHECK_MSG(n >= 8 && n <= 32, "%d candidates", n);
    CHECK_MSG(c.n == 1, "the study's 128x128 / 64x32 point is not in the default space");
    CHECK_MSG(c.bad == 0, "%d points with KC not a multiple of BK, e.g. %s", c.bad, c.first_bad);
    gt_limits old = l;
    old.cc_major = 7, old.cc_minor = 5; /* no TF32 mma.sync before sm_80 */
    CHECK(gt_enumerate(fam(), &old, NULL, NULL) == 0);
}

GT_TEST(tf32x3_constraints_reject_bad_points, GT_NEEDS_NONE)
{
    char why[160];
    CHECK_MSG(is_legal(&study, why, sizeof why), "%s", why); /* 255 registers under MINB=1 */
    CHECK_MSG(is_legal(&a_whole, why, sizeof why) && is_legal(&narrow, why, sizeof why), "%s", why);
    gt_params p = with(study, "WM", 24);                         /* not a multiple of 16 */
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "WM"));
    p = with(study, "WN", 12);
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "WN"));
    p = with(with(study, "WM", 48), "BM", 128);                 /* 128 % 48 */
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "BM % WM"));
    p = with(study, "BK", 12);
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "BK"));
    p = with(study, "KC", 48);                                   /* BK 32 */
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "KC=48"));
    p = with(study, "KC", 0);
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "KC=0"));
    gt_params big = {{256, 256, 32, 32, 32, 3, 128, 1}};          /* 64 warps */
    CHECK(!is_legal(&big, why, sizeof why) && strstr(why, "threads"));
    p = with(with(study, "BK", 128), "STAGES", 8);               /* 8 x (128x136 + 128x136) x 4 B = 1.1 MB */
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "shared memory"));
    p = with(study, "WN", 64);                                   /* 64x64 warps: 384 accumulator registers */
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "registers"));
    p = with(study, "MINB", 2);                                  /* 192 accumulators under a 128 cap */
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "registers"));
    p = with(study, "STAGES", 1);
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "STAGES"));
    p = with(study, "BM", 1000000);                              /* refused before any product overflows */
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "BM=1000000"));
    p = with(study, "STAGES", 2);                                /* legal; BK 16 with 2 stages is not in the space */
    CHECK(is_legal(&p, why, sizeof why) && fam()->in_space(&p, why, sizeof why));
    p = with(narrow, "STAGES", 2);
    CHECK(is_legal(&p, why, sizeof why) && !fam()->in_space(&p, why, sizeof why) && strstr(why, "default space"));
}

GT_TEST(tf32x3_limits_are_inputs, GT_NEEDS_NONE)
{
    char why[160];
    gt_limits l = sm90();
    l.max_smem_optin = 96 * 1024; /* the study point needs 120 KiB in the nt layout */
    CHECK(!fam()->legal(&study, &l, why, sizeof why) && strstr(why, "shared memory"));
    l = sm90();
    l.max_threads_per_block = 128;
    CHECK(!fam()->legal(&study, &l, why, sizeof why) && strstr(why, "threads"));
    CHECK(gt_limits_for_arch("sm_80", &l) && fam()->legal(&study, &l, why, sizeof why));
    CHECK(gt_limits_for_arch("sm_75", &l) && !fam()->legal(&study, &l, why, sizeof why) && strstr(why, "sm_80"));
}

/* Shared memory per layout for the study point: STAGES x (A tile + B tile) floats, a k-contiguous tile being
 * 128 rows of 32 + 8, a k-major one 32 rows of 128 + 4. */
GT_TEST(tf32x3_launch_geometry, GT_NEEDS_NONE)
{
    gt_launch L;
    const unsigned kc = 128 * 40, km = 32 * 132, want[4] = {3 * 4 * (kc + km), 3 * 4 * (kc + kc), 3 * 4 * (km + km),
                                                             3 * 4 * (km + kc)};
    for (int l = 0; l < 4; ++l) {
        gt_shape one = {1, 1, 1, l >> 1, l & 1};
        fam()->launch(&study, &one, GT_TEST_SMS, &L);
        CHECK(L.grid[0] == 1 && L.grid[1] == 1 && L.grid[2] == 1 && L.block[0] == 256 && L.block[1] == 1);
        CHECK_MSG(L.smem == want[l], "%s: %u B, want %u", gt_layout_name(l >> 1, l & 1), L.smem, want[l]);
        CHECK(L.splitk == 1 && L.ws_bytes == 0 && L.ws_zero == 0);
    }
    gt_shape odd = {127, 4099, 1025, 0, 1}; /* 1 x 33 tiles of 128, one flat grid dimension */
    fam()->launch(&study, &odd, GT_TEST_SMS, &L);
    CHECK(L.grid[0] == 33 && L.grid[1] == 1 && L.grid[2] == 1 && L.smem == want[1]);
    gt_shape big = {4096, 4096, 4096, 0, 0};
    fam()->launch(&study, &big, GT_TEST_SMS, &L);
    CHECK(L.grid[0] == 32 * 32 && L.block[0] == 256);
    fam()->launch(&two_warps, &odd, GT_TEST_SMS, &L); /* 2 x 65 tiles of 64; 2 x (64x40 + 64x40) x 4 B */
    CHECK(L.grid[0] == 2 * 65 && L.block[0] == 64 && L.smem == 2u * 4 * (64 * 40 + 64 * 40));
    fam()->launch(&narrow, &big, GT_TEST_SMS, &L); /* BK 16: k-contiguous rows of 16 + 8 */
    CHECK(L.grid[0] == 32 * 64 && L.block[0] == 256 && L.smem == 3u * 4 * (128 * 24 + 16 * 68));
}

GT_TEST(tf32x3_render_has_layout_params_and_the_split, GT_NEEDS_NONE)
{
    char err[256];
    char *src = gt_render(fam(), &study, 1, 0, 0, err, sizeof err);
    CHECK_MSG(src != NULL, "%s", err);
    if (!src) return;
    CHECK(strstr(src, "#define GT_TA 1\n#define GT_TB 0\n"));
    CHECK(strstr(src, "#define BM 128\n") && strstr(src, "#define KC 128\n") && strstr(src, "#define MINB 1\n"));
    char *all = gt_source_expand(src); /* with its headers (tf32.cuh: the split and the MMA), as NVRTC compiles it */
    CHECK(all && strstr(all, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32") && strstr(all, "cvt.rn.tf32.f32"));
    CHECK(all && !strstr(all, "atomic")); /* deterministic: no atomics on results */
    free(all);
    free(src);
}

typedef struct {
    gt_compile_job *jobs;
    int n, cap;
} job_list;

static int add_layouts(const gt_family *f, const gt_params *p, void *ctx)
{
    job_list *l = ctx;
    static const int pairs[2][2] = {{0, 3}, {1, 2}}; /* the points take nn and tt, nt and tn in turn */
    const int *pair = pairs[l->n / 2 % 2];
    for (int i = 0; i < 2 && l->n < l->cap; ++i) l->jobs[l->n++] = gt_compile_job_make(f, p, pair[i] >> 1, pair[i] & 1);
    return 0;
}

/* Every point of the default space in two layouts, every layout by half of the points (CI's ten minutes). */
GT_TEST(tf32x3_nvrtc_default_space_all_layouts_no_spills, GT_NEEDS_NVRTC)
{
    const gt_limits l = sm90();
    const int points = gt_enumerate(fam(), &l, NULL, NULL);
    job_list jl = {malloc(sizeof(gt_compile_job) * 2 * (points + 1)), 0, 2 * (points + 1)};
    gt_enumerate(fam(), &l, add_layouts, &jl);
    CHECK(points > 0 && jl.n == 2 * points);
    gt_compile_all_clean(jl.jobs, jl.n, "sm_90", "tf32x3 configurations");
    free(jl.jobs);
}

/* Before sm_90 the split rounds with cvt.rna (no cvt.rn to TF32 there): the study point still compiles clean. */
GT_TEST(tf32x3_nvrtc_sm80_split, GT_NEEDS_NVRTC)
{
    gt_compile_job jobs[4];
    for (int lay = 0; lay < 4; ++lay) jobs[lay] = gt_compile_job_make(fam(), &study, lay >> 1, lay & 1);
    gt_compile_all_clean(jobs, 4, "sm_80", "tf32x3 configurations");
}

/* ---- GPU: key configurations against cuBLAS DGEMM on the same inputs, cuBLAS SGEMM (pedantic) as the bar ----
 * Per element, err = |c - c64| / (|alpha| (|A||B|)_ij + |beta c0_ij|), maximized over C; norm = ||C - C64||_F /
 * ||C64||_F. Every case must have no NaN or Inf in C, untouched padding, the same bits from a second run, and
 * err_tf32x3 <= max(err_sgemm, FLOOR): FLOOR, 32 units of 2^-24, is what a correct kernel stays under at any K
 * (each TF32 half keeps 11 significant bits, so a lone product is off by up to ~6 units where SGEMM rounds once,
 * and the tensor cores' truncating sums within a KC chunk add 10 to 18 on wide-exponent inputs), while an index or
 * fold bug errs by orders of magnitude more. Where K >= 2048 the normwise error must stay within 3x SGEMM's: a
 * fold that does not happen gives 8x to 15x at 4096 (the study). Whether tf32x3 beats SGEMM depends on the shape,
 * not only on K: its norm is about 3.5e-7 on uniform inputs and 3.0e-7 on wide ones, flat in K, while SGEMM's
 * depends on the algorithm cuBLAS picks (on an H100: 1.15e-6 at 4096^3, but 2.2e-7 at 384x256x4096, where it
 * splits K). So the claim is judged per shape and input by the tuner's FP64 validation (tuner/worker.c), which
 * refuses the family where it loses (4096x4096x256 and small shapes). The lines printed per configuration give
 * the worst errors seen. */
#define FLOOR (32.0 / 16777216.0)

typedef struct {
    int m, n, k, pad;
    float beta;
} gcase;

typedef struct {
    double err, norm; /* max scaled error, normwise error */
    long long bad;    /* NaN or Inf in C's window */
    long long pad;    /* padding elements of C changed */
} score;

static float urand(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) & 0xffffff) / 8388608.0f - 1.0f;
}

/* Stored rows, columns and ld of an operand (row-major). */
static void dims(const gt_problem *q, char op, int *rows, int *cols, int *ld)
{
    if (op == 'A') *rows = q->ta ? q->k : q->m, *cols = q->ta ? q->m : q->k, *ld = q->lda;
    else if (op == 'B') *rows = q->tb ? q->n : q->k, *cols = q->tb ? q->k : q->n, *ld = q->ldb;
    else *rows = q->m, *cols = q->n, *ld = q->ldc;
}

/* Values uniform in [-1, 1), times 2^e with e uniform in [-20, 20] when wide. A's and B's padding is NaN: a kernel
 * that reads it into a product (even against a zero-filled element) fails. C0's window is NaN when beta == 0. */
static void fill(const gt_problem *q, char op, int wide, unsigned *seed, float *x)
{
    int rows, cols, ld;
    dims(q, op, &rows, &cols, &ld);
    const size_t n = gt_problem_elems(q, op);
    for (size_t e = 0; e < n; ++e) {
        float v = urand(seed);
        if (wide) v = ldexpf(v, (int)((urand(seed) + 1.0f) * 20.5f) - 20);
        const int pad = (int)(e % ld) >= cols;
        x[e] = (op != 'C' && pad) || (op == 'C' && !pad && q->beta == 0.0f) ? NAN : v;
    }
}

static double *to_double(const float *x, size_t n, int absolute)
{
    double *d = malloc(sizeof(double) * n);
    for (size_t e = 0; e < n; ++e) d[e] = isnan(x[e]) ? 0.0 : absolute ? fabs((double)x[e]) : (double)x[e];
    return d;
}

/* Row-major C = alpha op(A) op(B) + beta C is column-major C^T = op(B)^T op(A)^T. */
static int dgemm(cublasHandle_t h, const gt_problem *q, double alpha, const double *hA, const double *hB,
                 const double *hC, double beta, double *out)
{
    const size_t na = gt_problem_elems(q, 'A'), nb = gt_problem_elems(q, 'B'), nc = gt_problem_elems(q, 'C');
    double *dA = NULL, *dB = NULL, *dC = NULL;
    int ok = !cudaMalloc((void **)&dA, na * 8) && !cudaMalloc((void **)&dB, nb * 8) &&
             !cudaMalloc((void **)&dC, nc * 8) && !cudaMemcpy(dA, hA, na * 8, cudaMemcpyHostToDevice) &&
             !cudaMemcpy(dB, hB, nb * 8, cudaMemcpyHostToDevice) && !cudaMemcpy(dC, hC, nc * 8, cudaMemcpyHostToDevice);
    ok = ok && cublasDgemm(h, q->tb ? CUBLAS_OP_T : CUBLAS_OP_N, q->ta ? CUBLAS_OP_T : CUBLAS_OP_N, q->n, q->m, q->k,
                           &alpha, dB, q->ldb, dA, q->lda, &beta, dC, q->ldc) == CUBLAS_STATUS_SUCCESS;
    ok = ok && !cudaMemcpy(out, dC, nc * 8, cudaMemcpyDeviceToHost);
    cudaFree(dA), cudaFree(dB), cudaFree(dC);
    return ok;
}

/* ref = the FP64 result, bound = |alpha| |A||B| + |beta c0|, both laid out as C. */
static int references(cublasHandle_t h, const gt_problem *q, const float *A, const float *B, const float *C0,
                      double *ref, double *bound)
{
    const size_t na = gt_problem_elems(q, 'A'), nb = gt_problem_elems(q, 'B'), nc = gt_problem_elems(q, 'C');
    int ok = 1;
    for (int absolute = 0; absolute < 2 && ok; ++absolute) {
        double *a = to_double(A, na, absolute), *b = to_double(B, nb, absolute), *c = to_double(C0, nc, absolute);
        ok = absolute ? dgemm(h, q, fabs(q->alpha), a, b, c, fabs(q->beta), bound)
                      : dgemm(h, q, q->alpha, a, b, c, q->beta, ref);
        free(a), free(b), free(c);
    }
    return ok;
}

static score score_of(const gt_problem *q, const float *C, const float *C0, const double *ref, const double *bound)
{
    score s = {0, 0, 0, 0};
    double e2 = 0, r2 = 0;
    for (size_t e = 0; e < gt_problem_elems(q, 'C'); ++e) {
        if ((int)(e % q->ldc) >= q->n) {
            s.pad += memcmp(&C[e], &C0[e], sizeof *C) != 0;
            continue;
        }
        if (!isfinite(C[e])) {
            s.bad++;
            continue;
        }
        const double d = fabs(C[e] - ref[e]), x = bound[e] > 0 ? d / bound[e] : d > 0 ? INFINITY : 0;
        s.err = x > s.err ? x : s.err;
        e2 += d * d, r2 += ref[e] * ref[e];
    }
    s.norm = r2 > 0 ? sqrt(e2 / r2) : sqrt(e2);
    return s;
}

typedef struct {
    const gt_family *f;
    const gt_params *p;
    int ta, tb;
    cudaKernel_t gemm;
    cublasHandle_t blas;
    double worst[2]; /* over the cases so far: tf32x3's and SGEMM's max error, in units of 2^-24 */
} grun;

/* The candidate (sgemm = 0) or cuBLAS SGEMM into dC. Returns the CUDA status after the run. */
static cudaError_t run_one(const grun *r, const gt_problem *q, const float *dA, const float *dB, float *dC, int sgemm)
{
    int M = q->m, N = q->n, K = q->k, lda = q->lda, ldb = q->ldb, ldc = q->ldc;
    float alpha = q->alpha, beta = q->beta, *dW = NULL;
    if (sgemm)
        return cublasSgemm(r->blas, r->tb ? CUBLAS_OP_T : CUBLAS_OP_N, r->ta ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K,
                           &alpha, dB, ldb, dA, lda, &beta, dC, ldc) == CUBLAS_STATUS_SUCCESS
                   ? cudaDeviceSynchronize()
                   : cudaErrorUnknown;
    gt_shape sh = {M, N, K, r->ta, r->tb};
    gt_launch L;
    r->f->launch(r->p, &sh, GT_TEST_SMS, &L);
    void *args[] = {&M, &N, &K, &alpha, &dA, &lda, &dB, &ldb, &beta, &dC, &ldc, &dW};
    dim3 grid = {L.grid[0], L.grid[1], L.grid[2]}, block = {L.block[0], L.block[1], L.block[2]};
    cudaError_t e = cudaFuncSetAttribute((const void *)r->gemm, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)L.smem);
    if (e == cudaSuccess) e = cudaLaunchKernel((const void *)r->gemm, grid, block, args, L.smem, 0);
    return e == cudaSuccess ? cudaDeviceSynchronize() : e;
}

/* C0 into a fresh dC, one run (candidate or SGEMM), C back into out. */
static int run_into(const grun *r, const gt_problem *q, const float *dA, const float *dB, float *dC, const float *C0,
                    float *out, int sgemm)
{
    const size_t nc = gt_problem_elems(q, 'C');
    cudaError_t e = cudaMemcpy(dC, C0, nc * 4, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) e = run_one(r, q, dA, dB, dC, sgemm);
    if (e == cudaSuccess) e = cudaMemcpy(out, dC, nc * 4, cudaMemcpyDeviceToHost);
    CHECK_MSG(e == cudaSuccess, "%s: %s", sgemm ? "cuBLAS SGEMM" : "tf32x3", cudaGetErrorString(e));
    return e == cudaSuccess;
}

/* Operands on the device and both runs of the candidate and SGEMM's. Host buffers: A, B, C0, then C, C2, S. */
static int run_all(const grun *r, const gt_problem *q, float *h)
{
    const size_t na = gt_problem_elems(q, 'A'), nb = gt_problem_elems(q, 'B'), nc = gt_problem_elems(q, 'C');
    const float *A = h, *B = h + na, *C0 = h + na + nb;
    float *C = h + na + nb + nc, *C2 = C + nc, *S = C2 + nc, *dA = NULL, *dB = NULL, *dC = NULL;
    int ok = !cudaMalloc((void **)&dA, na * 4) && !cudaMalloc((void **)&dB, nb * 4) &&
             !cudaMalloc((void **)&dC, nc * 4) && !cudaMemcpy(dA, A, na * 4, cudaMemcpyHostToDevice) &&
             !cudaMemcpy(dB, B, nb * 4, cudaMemcpyHostToDevice);
    CHECK_MSG(ok, "device buffers: %s", cudaGetErrorString(cudaGetLastError()));
    ok = ok && run_into(r, q, dA, dB, dC, C0, C, 0) && run_into(r, q, dA, dB, dC, C0, C2, 0) &&
         run_into(r, q, dA, dB, dC, C0, S, 1);
    cudaFree(dA), cudaFree(dB), cudaFree(dC);
    return ok;
}

/* The verdict on one case from the scores of the candidate (t) and SGEMM (s): 1 when it passes, what failed
 * printed if not. The worst errors go to r->worst. */
static int judge(grun *r, const gcase *c, int wide, const score *t, const score *s, int same)
{
    const int fold_ok = c->k < 2048 || t->norm <= 3 * s->norm;
    const int ok = t->bad == 0 && t->pad == 0 && same && t->err <= fmax(s->err, FLOOR) && fold_ok;
    for (int i = 0; i < 2; ++i) {
        const double u = (i ? s->err : t->err) * 16777216.0;
        r->worst[i] = u > r->worst[i] ? u : r->worst[i];
    }
    if (!ok)
        printf("    %dx%dx%d pad %d beta %g %s: err %.2e (SGEMM %.2e), norm %.2e (SGEMM %.2e), %lld NaN/Inf, "
               "%lld padding changed, second run %s\n", c->m, c->n, c->k, c->pad, c->beta, wide ? "wide" : "uniform",
               t->err, s->err, t->norm, s->norm, t->bad, t->pad, same ? "same" : "DIFFERENT");
    return ok;
}

/* One case in one input kind: 1 when it passes. */
static int check_case(grun *r, const gcase *c, int wide)
{
    const gt_problem q = gt_problem_make(0, r->ta, r->tb, c->m, c->n, c->k, c->pad, 1.5f, c->beta);
    const size_t na = gt_problem_elems(&q, 'A'), nb = gt_problem_elems(&q, 'B'), nc = gt_problem_elems(&q, 'C');
    float *h = malloc(sizeof(float) * (na + nb + 4 * nc)), *C0 = h + na + nb, *C = C0 + nc, *C2 = C + nc, *S = C2 + nc;
    double *ref = malloc(sizeof(double) * nc), *bound = malloc(sizeof(double) * nc);
    unsigned seed = 7u + c->m * 131u + c->k * 7u + (unsigned)wide;
    fill(&q, 'A', wide, &seed, h), fill(&q, 'B', wide, &seed, h + na), fill(&q, 'C', wide, &seed, C0);
    int ok = references(r->blas, &q, h, h + na, C0, ref, bound) && run_all(r, &q, h);
    if (ok) {
        const score t = score_of(&q, C, C0, ref, bound), s = score_of(&q, S, C0, ref, bound);
        ok = judge(r, c, wide, &t, &s, !memcmp(C, C2, nc * sizeof *C));
    }
    free(h), free(ref), free(bound);
    return ok;
}

/* A NaN in A poisons its row of C, an Inf in B its column (its small part is Inf - Inf); the rest stays finite. */
static int check_propagation(const grun *r)
{
    const gt_problem q = gt_problem_make(0, r->ta, r->tb, 127, 131, 257, 0, 1.5f, 0.5f);
    const size_t na = gt_problem_elems(&q, 'A'), nb = gt_problem_elems(&q, 'B'), nc = gt_problem_elems(&q, 'C');
    float *h = malloc(sizeof(float) * (na + nb + 4 * nc)), *C = h + na + nb + nc;
    unsigned seed = 99;
    fill(&q, 'A', 0, &seed, h), fill(&q, 'B', 0, &seed, h + na), fill(&q, 'C', 0, &seed, h + na + nb);
    h[r->ta ? (size_t)100 * q.lda + 3 : (size_t)3 * q.lda + 100] = NAN;           /* A(3, 100) */
    h[na + (r->tb ? (size_t)5 * q.ldb + 200 : (size_t)200 * q.ldb + 5)] = INFINITY; /* B(200, 5) */
    int ok = run_all(r, &q, h), wrong = 0;
    for (int i = 0; ok && i < q.m; ++i)
        for (int j = 0; j < q.n; ++j) {
            const float x = C[(size_t)i * q.ldc + j];
            wrong += i == 3 ? !isnan(x) : j == 5 ? isfinite(x) : !isfinite(x);
        }
    CHECK_MSG(wrong == 0, "%s: %d elements of C do not propagate a NaN in A(3,100) and an Inf in B(200,5) as they "
              "should", gt_layout_name(r->ta, r->tb), wrong);
    free(h);
    return ok && wrong == 0;
}

static void check_config(const gt_family *f, const gt_params *p, cublasHandle_t blas, const char *gpu_arch)
{
    static const gcase cases[] = { /* beta 0: over NaN C */
        {1, 1, 1, 0, 0.0f},          {1, 1, 1, 3, 0.5f},          {7, 7, 7, 0, 0.5f},    {7, 7, 7, 1, 0.0f},
        {127, 131, 257, 0, 0.0f},    {127, 131, 257, 5, 0.5f},    {1025, 1023, 1031, 0, 0.0f},
        {1025, 1023, 1031, 1, 0.5f}, {512, 384, 1056, 4, 0.5f}, /* whole tiles, 16-byte copies */
        {384, 256, 4096, 0, 0.5f}};                            /* where tf32x3 must beat SGEMM's error */
    char name[256], err[512], arch[20];
    gt_params_format(f, p, name, sizeof name);
    gt_family_arch(f, gpu_arch, arch, sizeof arch);
    for (int l = 0; l < 4; ++l) {
        grun r = {f, p, l >> 1, l & 1, NULL, blas, {0, 0}};
        char *src = gt_render(f, p, r.ta, r.tb, 0, err, sizeof err);
        gt_cubin cb;
        memset(&cb, 0, sizeof cb);
        cudaLibrary_t lib = NULL;
        int rc = src ? gt_nvrtc_compile(src, arch, &cb, err, sizeof err) : -1, fails = 0;
        CHECK_MSG(rc == 0, "%s: %s", name, err);
        if (rc == 0 && (cudaLibraryLoadData(&lib, cb.data, NULL, NULL, 0, NULL, NULL, 0) ||
                        cudaLibraryGetKernel(&r.gemm, lib, "gt_gemm"))) {
            CHECK_MSG(0, "%s: load failed: %s", name, cudaGetErrorString(cudaGetLastError()));
            rc = -1;
        }
        for (size_t i = 0; rc == 0 && i < sizeof cases / sizeof cases[0]; ++i)
            for (int wide = 0; wide < 2; ++wide) fails += !check_case(&r, &cases[i], wide);
        if (rc == 0) fails += !check_propagation(&r);
        CHECK_MSG(fails == 0, "%s %s: %d cases failed", name, gt_layout_name(r.ta, r.tb), fails);
        printf("    %s %s %s: worst error %.1f units of 2^-24 (SGEMM %.1f), %d failed\n", f->name, name,
               gt_layout_name(r.ta, r.tb), r.worst[0], r.worst[1], fails);
        if (lib) cudaLibraryUnload(lib);
        gt_cubin_free(&cb);
        free(src);
    }
}

GT_TEST(tf32x3_gpu_matches_dgemm_at_least_as_well_as_sgemm, GT_NEEDS_GPU)
{
    const gt_params *keys[] = {&study, &narrow, &two_warps, &a_whole};
    struct cudaDeviceProp prop;
    cublasHandle_t blas;
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess || prop.major < 8) {
        gt_skip("no GPU of sm_80 or newer");
        return;
    }
    if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS) {
        gt_skip("cuBLAS did not initialise");
        return;
    }
    cublasSetMathMode(blas, CUBLAS_PEDANTIC_MATH);
    char arch[16];
    snprintf(arch, sizeof arch, "sm_%d%d", prop.major, prop.minor);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; ++i) check_config(fam(), keys[i], blas, arch);
    cublasDestroy(blas);
}

/* The same checks for family tf32x3wg (tests/test_tf32x3wg.c has its CPU tests), on sm_90 only. */
GT_TEST(tf32x3wg_gpu_matches_dgemm_at_least_as_well_as_sgemm, GT_NEEDS_GPU)
{
    /* BM BN BK STAGES KC PF MINB SPLITK: the 4096^3 winner shape, N 96 with 2 stages, one warpgroup with the
     * operands loaded one at a time, BK 16 with KC 64 (outside the default space), and the winner's shape folding
     * every 32, and so with PT (its blocks' several tiles: gpu_every_family_matches_cublas); unsplit, as this harness
     * launches gt_gemm alone (split-K: gpu_every_family_matches_cublas) */
    static const gt_params keys[] = {{{128, 128, 32, 3, 128, 1, 1, 1}},
                                     {{128, 96, 32, 2, 128, 1, 1, 1}},
                                     {{64, 128, 32, 3, 128, 0, 1, 1}},
                                     {{128, 64, 16, 3, 64, 1, 1, 1}},
                                     {{128, 128, 32, 3, 32, 1, 1, 1}},
                                     {{128, 128, 32, 3, 32, 1, 1, 1, 0, 0, 0, 1}}};
    struct cudaDeviceProp prop;
    cublasHandle_t blas;
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess || prop.major != 9 || prop.minor != 0) {
        gt_skip("no sm_90 GPU (wgmma with sm_90a's features)");
        return;
    }
    if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS) {
        gt_skip("cuBLAS did not initialise");
        return;
    }
    cublasSetMathMode(blas, CUBLAS_PEDANTIC_MATH);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; ++i)
        check_config(gt_family_find("tf32x3wg"), &keys[i], blas, "sm_90");
    cublasDestroy(blas);
}
