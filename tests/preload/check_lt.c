/* GPU check of cublasLtMatmul in the cuBLAS drop-in (docs/PRELOAD.md), written against cuBLASLt alone (it never
 * includes gemmtune.h): tests/preload/run_check.sh runs it without the preload (the reference), with it, with
 * GEMMTUNE_PRELOAD=off, and compares. Calls are made as PyTorch's gemm_and_bias makes them (the heuristic's first
 * algorithm and a workspace), on two threads with a cuBLASLt handle and a stream each.
 *   check_lt run DIR                        every case -> DIR (D, padding included, and the statuses)
 *   check_lt compare REF TEST [--bitwise]   TEST against REF: the FP32 bound or bitwise, per case */
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a run under the preload must give: within the FP32 bound of cuBLASLt's result (gemmtune served it),
 * cuBLASLt's bits (forwarded untouched), or cuBLASLt's status with D as cuBLASLt left it (rejected calls). */
enum { EXPECT_TOL, EXPECT_BITWISE, EXPECT_STATUS };
enum { MAX_CASES = 80, GAP = 3, WORKSPACE = 32 << 20 };

/* Zero fields: COMPUTE_32F, DEFAULT epilogue, host scalars, column-major, one matrix, C and D the same matrix. */
typedef struct {
    const char *what;
    int ta, tb, m, n, k, pad;
    float alpha, beta;
    int bias, c_apart, compute, device_scalars, row_order, batch, sm_count, bias_type, bad_ldb, in_place_two;
    unsigned epilogue; /* other than DEFAULT or BIAS */
    int expect;
    unsigned seed;
} lcase;

static void die(void)
{
    static atomic_flag dying = ATOMIC_FLAG_INIT;
    if (atomic_flag_test_and_set(&dying)) pthread_exit(NULL);
    exit(1);
}

#define CUDA_OK(x)                                                                                               \
    do {                                                                                                         \
        cudaError_t e_ = (x);                                                                                    \
        if (e_ != cudaSuccess) {                                                                                 \
            fprintf(stderr, "check_lt: %s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));      \
            die();                                                                                               \
        }                                                                                                        \
    } while (0)

static unsigned rnd(unsigned *s)
{
    *s ^= *s << 13, *s ^= *s >> 17, *s ^= *s << 5;
    return *s;
}

static float frnd(unsigned *s) { return (float)(rnd(s) % 2000001u) / 1000000.0f - 1.0f; } /* [-1, 1] */

/* Stored shapes (column-major unless row_order, whose cases are square): A is op(A) as stored, and so on. */
static int rows_a(const lcase *c) { return c->ta == CUBLAS_OP_N ? c->m : c->k; }
static int cols_a(const lcase *c) { return c->ta == CUBLAS_OP_N ? c->k : c->m; }
static int rows_b(const lcase *c) { return c->tb == CUBLAS_OP_N ? c->k : c->n; }
static int cols_b(const lcase *c) { return c->tb == CUBLAS_OP_N ? c->n : c->k; }
static int lda(const lcase *c) { return rows_a(c) + c->pad; }
static int ldb(const lcase *c) { return rows_b(c) + c->pad; }
static int ldd(const lcase *c) { return c->m + c->pad; }
static int ldc(const lcase *c) { return c->c_apart || c->in_place_two ? ldd(c) + 2 : ldd(c); }
static int batches(const lcase *c) { return c->batch > 1 ? c->batch : 1; }
static size_t stride(int ld, int cols) { return (size_t)(ld > 0 ? ld : 1) * (size_t)(cols > 0 ? cols : 1) + GAP; }
static size_t sa(const lcase *c) { return stride(lda(c), cols_a(c)); }
static size_t sb(const lcase *c) { return stride(ldb(c), cols_b(c)); }
static size_t sc(const lcase *c) { return stride(ldc(c) > ldd(c) ? ldc(c) : ldd(c), c->n); }

static lcase base(const char *what, int ta, int tb, int m, int n, int k, int pad, float alpha, float beta, int expect)
{
    lcase c = {what, ta, tb, m, n, k, pad, alpha, beta, 0, 0, 0, 0, 0, 0, 0, -1, 0, 0, 0, expect, 0};
    return c;
}

/* Operands of a case, the same in every run. C random, or NaN where beta == 0 (it must not be read); D apart from
 * C starts NaN; the bias in [-1, 1]. */
static void make_data(const lcase *c, float **A, float **B, float **C, float **D, float **bias)
{
    unsigned s = c->seed * 2654435761u + 1;
    const size_t na = sa(c) * batches(c), nb = sb(c) * batches(c), nc = sc(c) * batches(c);
    *A = malloc(na * 4), *B = malloc(nb * 4), *C = malloc(nc * 4), *D = malloc(nc * 4), *bias = malloc(((size_t)c->m + 1) * 4);
    for (size_t i = 0; i < na; ++i) (*A)[i] = frnd(&s);
    for (size_t i = 0; i < nb; ++i) (*B)[i] = frnd(&s);
    for (size_t i = 0; i < nc; ++i) (*C)[i] = c->beta == 0.0f ? NAN : frnd(&s), (*D)[i] = NAN;
    for (int i = 0; i <= c->m; ++i) (*bias)[i] = frnd(&s);
}

static const int N = CUBLAS_OP_N, T = CUBLAS_OP_T;

/* Every pair of N, T, C: plain (beta 0), with the bias (beta 0, in place as PyTorch calls it), beta != 0 in place,
 * and C apart from D; odd sizes, ld > dim on most. */
static int served_cases(lcase *o)
{
    static const int ops[] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};
    unsigned s = 777;
    int n = 0;
    for (int i = 0; i < 9; ++i) {
        const int ta = ops[i % 3], tb = ops[i / 3], m = 1 + (int)(rnd(&s) % 300), nn = 1 + (int)(rnd(&s) % 300);
        const int k = 1 + (int)(rnd(&s) % 300), pad = (int)(rnd(&s) % 4);
        o[n++] = base("plain", ta, tb, m, nn, k, pad, 1.0f, 0.0f, EXPECT_TOL);
        o[n++] = base("bias", ta, tb, nn, m, k, pad, -0.75f, 0.0f, EXPECT_TOL);
        o[n - 1].bias = 1;
        o[n++] = base("beta in place", ta, tb, k, m, nn, pad, 1.25f, 0.5f, EXPECT_TOL);
        o[n++] = base("C apart", ta, tb, m, k, nn, pad, 1.0f, -1.5f, EXPECT_TOL);
        o[n - 1].c_apart = 1;
    }
    o[n++] = base("C apart, beta 0", T, N, 65, 33, 17, 1, 1.0f, 0.0f, EXPECT_TOL);
    o[n - 1].c_apart = 1;
    o[n++] = base("bias, C apart", N, T, 96, 40, 24, 2, 1.0f, 0.0f, EXPECT_TOL);
    o[n - 1].bias = o[n - 1].c_apart = 1;
    o[n++] = base("bias 1000^3 (nn.Linear-like)", T, N, 1000, 1000, 1000, 0, 1.0f, 0.0f, EXPECT_TOL);
    o[n - 1].bias = 1;
    o[n++] = base("bias, n past gridDim.y", N, N, 3, 70000, 5, 1, 1.0f, 0.0f, EXPECT_TOL);
    o[n - 1].bias = 1;
    o[n++] = base("bias, m 1", T, N, 1, 300, 257, 3, 1.0f, 0.0f, EXPECT_TOL);
    o[n - 1].bias = 1;
    o[n++] = base("COMPUTE_32F_PEDANTIC", N, T, 129, 65, 33, 1, 1.0f, 0.25f, EXPECT_TOL);
    o[n - 1].compute = CUBLAS_COMPUTE_32F_PEDANTIC;
    return n;
}

/* Calls the preload must hand to cuBLASLt untouched: its bits, or its status for what it rejects. */
static int forwarded_cases(lcase *o)
{
    int n = 0;
    o[n++] = base("FAST_TF32 with bias", T, N, 256, 128, 512, 0, 1.0f, 0.0f, EXPECT_BITWISE);
    o[n - 1].compute = CUBLAS_COMPUTE_32F_FAST_TF32, o[n - 1].bias = 1;
    o[n++] = base("RELU_BIAS", T, N, 128, 64, 96, 1, 1.0f, 0.0f, EXPECT_BITWISE);
    o[n - 1].epilogue = CUBLASLT_EPILOGUE_RELU_BIAS;
    o[n++] = base("GELU", N, N, 128, 64, 96, 0, 1.0f, 0.0f, EXPECT_BITWISE);
    o[n - 1].epilogue = CUBLASLT_EPILOGUE_GELU;
    o[n++] = base("bias with beta != 0", T, N, 100, 50, 60, 0, 1.0f, 0.5f, EXPECT_BITWISE);
    o[n - 1].bias = 1;
    o[n++] = base("device pointer mode", N, T, 96, 64, 80, 1, 1.0f, 0.5f, EXPECT_BITWISE);
    o[n - 1].device_scalars = 1;
    o[n++] = base("row order", N, N, 64, 64, 64, 0, 1.0f, 0.0f, EXPECT_BITWISE);
    o[n - 1].row_order = 1;
    o[n++] = base("batch of 2", N, N, 48, 40, 32, 1, 1.0f, 0.5f, EXPECT_BITWISE);
    o[n - 1].batch = 2;
    o[n++] = base("SM_COUNT_TARGET", N, N, 128, 128, 128, 0, 1.0f, 0.0f, EXPECT_BITWISE);
    o[n - 1].sm_count = 8;
    o[n++] = base("alpha == 0", N, N, 30, 20, 10, 0, 0.0f, 0.5f, EXPECT_BITWISE);
    o[n++] = base("bias type 16F", T, N, 64, 32, 16, 0, 1.0f, 0.0f, EXPECT_STATUS);
    o[n - 1].bias = 1, o[n - 1].bias_type = CUDA_R_16F;
    o[n++] = base("ldb < rows", N, N, 30, 20, 10, 0, 1.0f, 0.5f, EXPECT_STATUS);
    o[n - 1].bad_ldb = 1;
    o[n++] = base("in place, two layouts", N, N, 30, 20, 10, 0, 1.0f, 0.5f, EXPECT_STATUS);
    o[n - 1].in_place_two = 1;
    return n;
}

static int make_cases(lcase *c)
{
    int n = served_cases(c);
    n += forwarded_cases(c + n);
    for (int i = 0; i < n; ++i) c[i].seed = (unsigned)i + 1;
    return n;
}

/* ---- run ---- */

static cublasLtMatrixLayout_t layout(const lcase *c, int rows, int cols, int ld, size_t batch_stride)
{
    cublasLtMatrixLayout_t l = NULL;
    if (cublasLtMatrixLayoutCreate(&l, CUDA_R_32F, (uint64_t)rows, (uint64_t)cols, ld)) return NULL;
    if (c->row_order) {
        int32_t order = CUBLASLT_ORDER_ROW;
        cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_ORDER, &order, sizeof order);
    }
    if (c->batch > 1) {
        int32_t b = c->batch;
        int64_t s = (int64_t)batch_stride;
        cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b, sizeof b);
        cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &s, sizeof s);
    }
    return l;
}

static cublasLtMatmulDesc_t descriptor(const lcase *c, const float *dbias)
{
    cublasLtMatmulDesc_t d = NULL;
    cublasComputeType_t compute = c->compute ? (cublasComputeType_t)c->compute : CUBLAS_COMPUTE_32F;
    if (cublasLtMatmulDescCreate(&d, compute, CUDA_R_32F)) return NULL;
    int32_t ta = c->ta, tb = c->tb, pm = c->device_scalars ? CUBLASLT_POINTER_MODE_DEVICE : CUBLASLT_POINTER_MODE_HOST;
    uint32_t epi = c->epilogue ? c->epilogue : c->bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_POINTER_MODE, &pm, sizeof pm);
    cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
    if (epi & CUBLASLT_EPILOGUE_BIAS)
        cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &dbias, sizeof dbias);
    if (c->bias_type >= 0) {
        int32_t bt = c->bias_type;
        cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt);
    }
    if (c->sm_count) {
        int32_t sm = c->sm_count;
        cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &sm, sizeof sm);
    }
    return d;
}

typedef struct {
    float *A, *B, *C, *D, *bias, *scal;
} dbufs;

static void *to_device(const void *src, size_t bytes, cudaStream_t s)
{
    void *d = NULL;
    CUDA_OK(cudaMalloc(&d, bytes));
    CUDA_OK(cudaMemcpyAsync(d, src, bytes, cudaMemcpyHostToDevice, s));
    return d;
}

/* The heuristic's first algorithm with a workspace, as PyTorch asks; for a call cuBLASLt rejects, none (the call
 * itself then reports). */
static cublasStatus_t matmul(cublasLtHandle_t h, cudaStream_t s, const lcase *c, const dbufs *d, void *ws)
{
    cublasLtMatmulDesc_t desc = descriptor(c, d->bias);
    cublasLtMatrixLayout_t la = layout(c, rows_a(c), cols_a(c), lda(c), sa(c));
    cublasLtMatrixLayout_t lb = layout(c, rows_b(c), cols_b(c), c->bad_ldb ? rows_b(c) - 1 : ldb(c), sb(c));
    cublasLtMatrixLayout_t ld = layout(c, c->m, c->n, ldd(c), sc(c));
    cublasLtMatrixLayout_t lc = ldc(c) != ldd(c) ? layout(c, c->m, c->n, ldc(c), sc(c)) : ld;
    cublasLtMatmulPreference_t pref = NULL;
    cublasLtMatmulHeuristicResult_t res;
    int found = 0;
    size_t wsize = WORKSPACE;
    memset(&res, 0, sizeof res);
    cublasLtMatmulPreferenceCreate(&pref);
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsize, sizeof wsize);
    if (c->expect != EXPECT_STATUS &&
        cublasLtMatmulAlgoGetHeuristic(h, desc, la, lb, lc, ld, pref, 1, &res, &found) != CUBLAS_STATUS_SUCCESS)
        found = 0;
    const void *alpha = c->device_scalars ? (const void *)d->scal : (const void *)&c->alpha;
    const void *beta = c->device_scalars ? (const void *)(d->scal + 1) : (const void *)&c->beta;
    const float *C = c->c_apart ? d->C : d->D;
    cublasStatus_t st = cublasLtMatmul(h, desc, alpha, d->A, la, d->B, lb, beta, C, lc, d->D, ld,
                                       found ? &res.algo : NULL, ws, WORKSPACE, s);
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatmulDescDestroy(desc);
    cublasLtMatrixLayoutDestroy(la), cublasLtMatrixLayoutDestroy(lb), cublasLtMatrixLayoutDestroy(ld);
    if (lc != ld) cublasLtMatrixLayoutDestroy(lc);
    return st;
}

/* One case; D's whole buffer (padding and the gaps between batch matrices included) comes back in *out. */
static cublasStatus_t run_case(cublasLtHandle_t h, cudaStream_t s, void *ws, const lcase *c, float **out)
{
    float *A, *B, *C, *D, *bias, scal[2] = {c->alpha, c->beta};
    make_data(c, &A, &B, &C, &D, &bias);
    const size_t nc = sc(c) * batches(c);
    if (!c->c_apart) memcpy(D, C, nc * 4); /* in place: D holds C */
    dbufs d = {to_device(A, sa(c) * batches(c) * 4, s), to_device(B, sb(c) * batches(c) * 4, s),
               to_device(C, nc * 4, s), to_device(D, nc * 4, s), to_device(bias, ((size_t)c->m + 1) * 4, s),
               to_device(scal, sizeof scal, s)};
    cublasStatus_t st = matmul(h, s, c, &d, ws);
    CUDA_OK(cudaMemcpyAsync(D, d.D, nc * 4, cudaMemcpyDeviceToHost, s));
    CUDA_OK(cudaStreamSynchronize(s));
    cudaFree(d.A), cudaFree(d.B), cudaFree(d.C), cudaFree(d.D), cudaFree(d.bias), cudaFree(d.scal);
    free(A), free(B), free(C), free(bias);
    *out = D;
    return st;
}

typedef struct {
    const lcase *cases;
    int n, which;
    const char *dir;
    cublasStatus_t *status;
} worker_arg;

static void save(const char *dir, int i, const float *D, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/d%02d.bin", dir, i);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(D, sizeof(float), n, f) != n) fprintf(stderr, "check_lt: cannot write %s\n", path), die();
    fclose(f);
}

static void *worker(void *p)
{
    worker_arg *w = p;
    cublasLtHandle_t h;
    cudaStream_t s;
    void *ws = NULL;
    CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUDA_OK(cudaMalloc(&ws, WORKSPACE));
    if (cublasLtCreate(&h) != CUBLAS_STATUS_SUCCESS) fprintf(stderr, "check_lt: cublasLtCreate failed\n"), die();
    for (int i = w->which; i < w->n; i += 2) {
        float *D;
        w->status[i] = run_case(h, s, ws, &w->cases[i], &D);
        save(w->dir, i, D, sc(&w->cases[i]) * batches(&w->cases[i]));
        free(D);
    }
    cublasLtDestroy(h);
    cudaFree(ws);
    cudaStreamDestroy(s);
    return NULL;
}

static int cmd_run(const char *dir)
{
    static lcase cases[MAX_CASES];
    static cublasStatus_t status[MAX_CASES];
    int n = make_cases(cases);
    pthread_t th[2];
    worker_arg args[2];
    for (int t = 0; t < 2; ++t) {
        args[t] = (worker_arg){cases, n, t, dir, status};
        pthread_create(&th[t], NULL, worker, &args[t]);
    }
    for (int t = 0; t < 2; ++t) pthread_join(th[t], NULL);
    char path[4096];
    snprintf(path, sizeof path, "%s/status.txt", dir);
    FILE *f = fopen(path, "w");
    if (!f) return fprintf(stderr, "check_lt: cannot write %s\n", path), 1;
    for (int i = 0; i < n; ++i) fprintf(f, "%d %d %s\n", i, (int)status[i], cases[i].what);
    fclose(f);
    printf("run: %d cublasLtMatmul cases in %s (two threads, a handle and a stream each)\n", n, dir);
    return 0;
}

/* ---- compare ---- */

static float *load(const char *dir, int i, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/d%02d.bin", dir, i);
    FILE *f = fopen(path, "rb");
    float *D = malloc(n * sizeof *D);
    if (!f || fread(D, sizeof(float), n, f) != n) {
        if (f) fclose(f);
        free(D);
        return NULL;
    }
    fclose(f);
    return D;
}

static int load_status(const char *dir, int *st, int n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/status.txt", dir);
    FILE *f = fopen(path, "r");
    int i, v, got = 0;
    if (!f) return -1;
    while (got < n && fscanf(f, "%d %d %*[^\n]", &i, &v) == 2)
        if (i >= 0 && i < n) st[i] = v, got++;
    fclose(f);
    return got == n ? 0 : -1;
}

static float opa(const lcase *c, const float *A, int i, int p)
{
    return c->ta == CUBLAS_OP_N ? A[i + (size_t)p * lda(c)] : A[p + (size_t)i * lda(c)];
}

static float opb(const lcase *c, const float *B, int p, int j)
{
    return c->tb == CUBLAS_OP_N ? B[p + (size_t)j * ldb(c)] : B[j + (size_t)p * ldb(c)];
}

/* Worst |d - ref| / (|alpha| (|A||B|)_ij + |beta c_ij| + |bias_i|) in units of 16 sqrt(K) FLT_EPSILON (<= 1
 * passes); NaN or Inf is a failure (INFINITY). Everything of D outside its m x n block must be bit-identical. */
static double worst_ratio(const lcase *c, const float *got, const float *ref)
{
    float *A, *B, *C, *D, *bias;
    make_data(c, &A, &B, &C, &D, &bias);
    const double tol = 16.0 * sqrt((double)c->k) * FLT_EPSILON;
    double worst = 0;
    for (size_t e = 0; e < sc(c); ++e) {
        const int i = (int)(e % (size_t)ldd(c)), j = (int)(e / (size_t)ldd(c));
        if (i >= c->m || j >= c->n) {
            if (memcmp(&got[e], &ref[e], sizeof(float))) worst = INFINITY;
            continue;
        }
        double bound = c->beta == 0.0f ? 0.0 : fabs((double)c->beta * C[i + (size_t)j * ldc(c)]);
        if (c->bias) bound += fabs((double)bias[i]);
        for (int p = 0; p < c->k; ++p) bound += fabs((double)c->alpha) * fabs(opa(c, A, i, p)) * fabs(opb(c, B, p, j));
        const double err = fabs((double)got[e] - (double)ref[e]);
        const double r = !isfinite(got[e]) || !isfinite(err) ? INFINITY : bound > 0 ? err / (tol * bound)
                                                                         : err > 0   ? INFINITY : 0;
        if (r > worst) worst = r;
    }
    free(A), free(B), free(C), free(D), free(bias);
    return worst;
}

typedef struct {
    int tol, bitwise, status, failed;
    double worst;
} tally;

static int compare_case(const lcase *c, int i, int st_ref, int st_test, const char *ref_dir, const char *test_dir,
                        int bitwise, tally *t)
{
    if (st_ref != st_test) return printf("  case %d (%s): status %d, reference %d\n", i, c->what, st_test, st_ref), 1;
    const size_t n = sc(c) * batches(c);
    float *ref = load(ref_dir, i, n), *got = load(test_dir, i, n);
    int bad = 0;
    if (!ref || !got) bad = printf("  case %d (%s): result file missing\n", i, c->what);
    else if (bitwise || c->expect != EXPECT_TOL || st_ref != CUBLAS_STATUS_SUCCESS) {
        bad = memcmp(ref, got, n * sizeof(float)) != 0;
        if (bad) printf("  case %d (%s): not bit-identical to cuBLASLt\n", i, c->what);
        else ++*(c->expect == EXPECT_STATUS ? &t->status : &t->bitwise);
    } else {
        const double r = worst_ratio(c, got, ref);
        bad = !(r <= 1.0);
        if (bad) printf("  case %d (%s %dx%dx%d): error %.3g x the FP32 bound\n", i, c->what, c->m, c->n, c->k, r);
        else t->tol++, t->worst = r > t->worst ? r : t->worst;
    }
    free(ref), free(got);
    return bad;
}

static int cmd_compare(const char *ref_dir, const char *test_dir, int bitwise)
{
    static lcase cases[MAX_CASES];
    int n = make_cases(cases), st_ref[MAX_CASES], st_test[MAX_CASES];
    if (load_status(ref_dir, st_ref, n) || load_status(test_dir, st_test, n))
        return printf("compare: missing or short status.txt in %s or %s\n", ref_dir, test_dir), 1;
    tally t = {0, 0, 0, 0, 0};
    for (int i = 0; i < n; ++i)
        t.failed += compare_case(&cases[i], i, st_ref[i], st_test[i], ref_dir, test_dir, bitwise, &t);
    printf("summary: %d within bound (worst %.3f), %d bitwise, %d status, %d failed\n", t.tol, t.worst, t.bitwise,
           t.status, t.failed);
    return t.failed ? 1 : 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 3 && !strcmp(argv[1], "run")) return cmd_run(argv[2]);
    if (argc >= 4 && !strcmp(argv[1], "compare"))
        return cmd_compare(argv[2], argv[3], argc >= 5 && !strcmp(argv[4], "--bitwise"));
    fprintf(stderr, "usage: check_lt run DIR | compare REF TEST [--bitwise]\n");
    return 2;
}
