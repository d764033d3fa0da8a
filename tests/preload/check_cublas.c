/* GPU check of the cuBLAS drop-in (docs/PRELOAD.md), written against cuBLAS alone: it never includes gemmtune.h,
 * so under LD_PRELOAD=build/libgemmtune_cublas.so it is any cuBLAS program. tests/preload/run_check.sh runs it
 * without the preload (the reference), with it, with GEMMTUNE_PRELOAD=off, and compares the runs.
 *   check_cublas probe                      statuses of cublasCreate and of calls on a NULL handle (no GPU needed)
 *   check_cublas run DIR                    every case, two threads with a handle and a stream each -> DIR
 *   check_cublas compare REF TEST [--bitwise]   TEST against REF: FP32 tolerance or bitwise, per case
 *   check_cublas streams                    calls run on the handle's stream (a blocked stream holds them back)
 *   check_cublas loop [REPS]                a few fixed shapes, timed (the record -> tune -> rerun loop) */
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { API_SGEMM, API_GEMMEX, API_STRIDED };
/* What a run under the preload must give: within the FP32 bound of cuBLAS's result (gemmtune served it),
 * cuBLAS's exact bits (forwarded untouched), or cuBLAS's status (an invalid call; C untouched too). */
enum { EXPECT_TOL, EXPECT_BITWISE, EXPECT_STATUS };
enum { MAX_CASES = 96, STRIDE_GAP = 3 };

typedef struct {
    const char *what;
    int api, ta, tb, m, n, k, lda, ldb, ldc;
    float alpha, beta;
    int device_scalars, math, compute, algo, batch, expect;
    unsigned seed;
} ccase;

/* Two worker threads may fail at once: the first one exits the process, the other just stops. */
static void die(void)
{
    static atomic_flag dying = ATOMIC_FLAG_INIT;
    if (atomic_flag_test_and_set(&dying)) pthread_exit(NULL);
    exit(1);
}

#define CUDA_OK(x)                                                                                  \
    do {                                                                                            \
        cudaError_t e_ = (x);                                                                       \
        if (e_ != cudaSuccess) {                                                                    \
            fprintf(stderr, "check_cublas: %s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            die();                                                                                  \
        }                                                                                           \
    } while (0)

static unsigned rnd(unsigned *s)
{
    *s ^= *s << 13, *s ^= *s >> 17, *s ^= *s << 5;
    return *s;
}

static float frnd(unsigned *s) { return (float)(rnd(s) % 2000001u) / 1000000.0f - 1.0f; } /* [-1, 1] */

/* Elements of the buffers (column-major; a strided batch puts its matrices STRIDE_GAP floats apart). */
static size_t a_elems(const ccase *c) { return (size_t)(c->lda > 0 ? c->lda : 1) * (size_t)(c->ta == CUBLAS_OP_N ? c->k : c->m > 0 ? c->m : 1); }
static size_t b_elems(const ccase *c) { return (size_t)(c->ldb > 0 ? c->ldb : 1) * (size_t)(c->tb == CUBLAS_OP_N ? c->n : c->k > 0 ? c->k : 1); }
static size_t c_elems(const ccase *c) { return (size_t)(c->ldc > 0 ? c->ldc : 1) * (size_t)(c->n > 0 ? c->n : 1); }
static long long stride_of(size_t elems) { return (long long)elems + STRIDE_GAP; }
static size_t total(const ccase *c, size_t elems)
{
    return c->api == API_STRIDED && c->batch > 1 ? (size_t)stride_of(elems) * (size_t)c->batch : (size_t)stride_of(elems);
}

/* Operands of a case, the same in every run: A and B in [-1, 1]; C random, or NaN where beta == 0 (which must
 * never be read). */
static void make_data(const ccase *c, float **A, float **B, float **C)
{
    unsigned s = c->seed * 2654435761u + 1;
    size_t na = total(c, a_elems(c)), nb = total(c, b_elems(c)), nc = total(c, c_elems(c));
    *A = malloc(na * sizeof **A), *B = malloc(nb * sizeof **B), *C = malloc(nc * sizeof **C);
    for (size_t i = 0; i < na; ++i) (*A)[i] = frnd(&s);
    for (size_t i = 0; i < nb; ++i) (*B)[i] = frnd(&s);
    for (size_t i = 0; i < nc; ++i) (*C)[i] = c->beta == 0.0f ? NAN : frnd(&s);
}

static ccase base(const char *what, int api, int ta, int tb, int m, int n, int k, int pad, float alpha, float beta,
                  int expect)
{
    ccase c = {what, api, ta, tb, m, n, k, 0, 0, 0, alpha, beta, 0, CUBLAS_DEFAULT_MATH, CUBLAS_COMPUTE_32F,
               CUBLAS_GEMM_DEFAULT, 1, expect, 0};
    c.lda = (ta == CUBLAS_OP_N ? m : k) + pad;
    c.ldb = (tb == CUBLAS_OP_N ? k : n) + pad;
    c.ldc = m + pad;
    if (c.lda < 1) c.lda = 1;
    if (c.ldb < 1) c.ldb = 1;
    if (c.ldc < 1) c.ldc = 1;
    return c;
}

/* 27 random shapes: every pair of N, T, C three times, ld > dim on most, beta == 0 on a third. */
static int random_cases(ccase *out)
{
    static const int ops[] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};
    unsigned s = 12345;
    int n = 0;
    for (int i = 0; i < 27; ++i) {
        int big = i % 9 == 4;
        int m = 1 + (int)(rnd(&s) % (big ? 600 : 200)), nn = 1 + (int)(rnd(&s) % (big ? 600 : 200));
        int k = 1 + (int)(rnd(&s) % (big ? 600 : 200)), pad = (int)(rnd(&s) % 5);
        float alpha = (0.5f + (float)(rnd(&s) % 150) / 100.0f) * (rnd(&s) % 2 ? 1.0f : -1.0f);
        float beta = i % 3 == 0 ? 0.0f : frnd(&s);
        out[n++] = base("random", API_SGEMM, ops[i % 3], ops[(i / 3) % 3], m, nn, k, pad, alpha, beta, EXPECT_TOL);
    }
    return n;
}

static int served_cases(ccase *o)
{
    int n = 0;
    const int N = CUBLAS_OP_N, T = CUBLAS_OP_T;
    o[n++] = base("1000^3 nn", API_SGEMM, N, N, 1000, 1000, 1000, 0, 1.0f, 0.0f, EXPECT_TOL);
    o[n++] = base("512^3 nn", API_SGEMM, N, N, 512, 512, 512, 0, 1.0f, 0.0f, EXPECT_TOL);
    o[n++] = base("1x1x1", API_SGEMM, N, N, 1, 1, 1, 0, 2.0f, 0.5f, EXPECT_TOL);
    o[n++] = base("skinny", API_SGEMM, T, N, 1, 300, 257, 3, 1.0f, 1.0f, EXPECT_TOL);
    o[n++] = base("pedantic math", API_SGEMM, N, T, 129, 65, 33, 1, 1.0f, 0.25f, EXPECT_TOL);
    o[n - 1].math = CUBLAS_PEDANTIC_MATH;
    o[n++] = base("gemmex 32F", API_GEMMEX, T, T, 77, 99, 55, 2, -1.0f, 0.5f, EXPECT_TOL);
    o[n++] = base("gemmex 32F_PEDANTIC", API_GEMMEX, N, N, 64, 64, 64, 0, 1.0f, 0.0f, EXPECT_TOL);
    o[n - 1].compute = CUBLAS_COMPUTE_32F_PEDANTIC;
    o[n++] = base("gemmex legacy CUDA_R_32F", API_GEMMEX, N, T, 40, 50, 60, 1, 1.0f, 0.0f, EXPECT_TOL);
    o[n - 1].compute = (int)CUDA_R_32F;
    o[n++] = base("strided x3", API_STRIDED, N, T, 70, 30, 50, 2, 1.0f, 0.5f, EXPECT_TOL);
    o[n - 1].batch = 3;
    o[n++] = base("gemmex tensor-op algo", API_GEMMEX, N, N, 64, 64, 64, 0, 1.0f, 0.0f, EXPECT_TOL); /* sm_80+ */
    o[n - 1].algo = CUBLAS_GEMM_DEFAULT_TENSOR_OP;
    return n;
}

/* Calls the preload must hand to cuBLAS untouched: same bits as without it. */
static int forwarded_cases(ccase *o)
{
    int n = 0;
    const int N = CUBLAS_OP_N, T = CUBLAS_OP_T;
    for (int i = 0; i < 3; ++i) {
        o[n++] = base("device pointer mode", API_SGEMM, i ? T : N, N, 96 + i, 64, 80, i, 1.0f, 0.5f, EXPECT_BITWISE);
        o[n - 1].device_scalars = 1;
    }
    for (int i = 0; i < 2; ++i) {
        o[n++] = base("TF32 math", API_SGEMM, N, i ? T : N, 256, 128 + i, 512, 0, 1.0f, 0.0f, EXPECT_BITWISE);
        o[n - 1].math = CUBLAS_TF32_TENSOR_OP_MATH;
    }
    o[n++] = base("TF32 math gemmex", API_GEMMEX, N, N, 200, 200, 300, 0, 1.0f, 0.0f, EXPECT_BITWISE);
    o[n - 1].math = CUBLAS_TF32_TENSOR_OP_MATH;
    o[n++] = base("TF32 math strided", API_STRIDED, N, N, 128, 128, 128, 0, 1.0f, 0.0f, EXPECT_BITWISE);
    o[n - 1].math = CUBLAS_TF32_TENSOR_OP_MATH, o[n - 1].batch = 2;
    o[n++] = base("gemmex FAST_TF32", API_GEMMEX, N, N, 256, 256, 256, 0, 1.0f, 0.0f, EXPECT_BITWISE);
    o[n - 1].compute = CUBLAS_COMPUTE_32F_FAST_TF32;
    o[n++] = base("gemmex tensor-op algo, TF32 math", API_GEMMEX, N, N, 64, 64, 64, 0, 1.0f, 0.0f, EXPECT_BITWISE);
    o[n - 1].algo = CUBLAS_GEMM_DEFAULT_TENSOR_OP, o[n - 1].math = CUBLAS_TF32_TENSOR_OP_MATH;
    o[n++] = base("gemmex ALGO0_TENSOR_OP", API_GEMMEX, N, N, 64, 64, 64, 0, 1.0f, 0.0f, EXPECT_BITWISE);
    o[n - 1].algo = CUBLAS_GEMM_ALGO0_TENSOR_OP;
    o[n++] = base("gemmex ALGO5", API_GEMMEX, T, N, 33, 17, 9, 0, 1.5f, -1.0f, EXPECT_BITWISE);
    o[n - 1].algo = CUBLAS_GEMM_ALGO5;
    o[n++] = base("strided x20", API_STRIDED, T, N, 20, 20, 20, 1, 1.0f, 0.5f, EXPECT_BITWISE);
    o[n - 1].batch = 20;
    o[n++] = base("k == 0", API_SGEMM, N, N, 30, 20, 0, 0, 1.0f, 0.5f, EXPECT_BITWISE);
    o[n++] = base("alpha == 0", API_SGEMM, N, N, 30, 20, 10, 0, 0.0f, 0.5f, EXPECT_BITWISE);
    return n;
}

static int invalid_cases(ccase *o)
{
    int n = 0;
    const int N = CUBLAS_OP_N;
    o[n++] = base("lda < m", API_SGEMM, N, N, 30, 20, 10, 0, 1.0f, 0.5f, EXPECT_STATUS);
    o[n - 1].lda = 29;
    o[n++] = base("transa 7", API_SGEMM, 7, N, 30, 20, 10, 0, 1.0f, 0.5f, EXPECT_STATUS);
    o[n++] = base("m < 0", API_SGEMM, N, N, 30, 20, 10, 0, 1.0f, 0.5f, EXPECT_STATUS);
    o[n - 1].m = -1;
    o[n++] = base("m == 0", API_SGEMM, N, N, 0, 20, 10, 0, 1.0f, 0.5f, EXPECT_STATUS);
    o[n++] = base("gemmex ldc < m", API_GEMMEX, N, N, 30, 20, 10, 0, 1.0f, 0.5f, EXPECT_STATUS);
    o[n - 1].ldc = 10;
    o[n++] = base("strided batch -1", API_STRIDED, N, N, 30, 20, 10, 0, 1.0f, 0.5f, EXPECT_STATUS);
    o[n - 1].batch = -1;
    return n;
}

static int make_cases(ccase *c)
{
    int n = random_cases(c);
    n += served_cases(c + n);
    n += forwarded_cases(c + n);
    n += invalid_cases(c + n);
    for (int i = 0; i < n; ++i) c[i].seed = (unsigned)i + 1;
    return n;
}

/* ---- run: every case on the GPU, results to files ---- */

static cublasStatus_t call(cublasHandle_t h, const ccase *c, const void *alpha, const void *beta, const float *A,
                           const float *B, float *C)
{
    if (c->api == API_GEMMEX)
        return cublasGemmEx(h, c->ta, c->tb, c->m, c->n, c->k, alpha, A, CUDA_R_32F, c->lda, B, CUDA_R_32F, c->ldb,
                            beta, C, CUDA_R_32F, c->ldc, (cublasComputeType_t)c->compute, (cublasGemmAlgo_t)c->algo);
    if (c->api == API_STRIDED)
        return cublasSgemmStridedBatched(h, c->ta, c->tb, c->m, c->n, c->k, alpha, A, c->lda,
                                         stride_of(a_elems(c)), B, c->ldb, stride_of(b_elems(c)), beta, C, c->ldc,
                                         stride_of(c_elems(c)), c->batch);
    return cublasSgemm(h, c->ta, c->tb, c->m, c->n, c->k, alpha, A, c->lda, B, c->ldb, beta, C, c->ldc);
}

static void *to_device(const void *src, size_t bytes, cudaStream_t s)
{
    void *d = NULL;
    CUDA_OK(cudaMalloc(&d, bytes));
    CUDA_OK(cudaMemcpyAsync(d, src, bytes, cudaMemcpyHostToDevice, s));
    return d;
}

/* One case on the handle (whose stream is s); the whole C buffer, padding included, comes back in *out. */
static cublasStatus_t run_case(cublasHandle_t h, cudaStream_t s, const ccase *c, float **out)
{
    float *A, *B, *C, scal[2] = {c->alpha, c->beta};
    make_data(c, &A, &B, &C);
    size_t nc = total(c, c_elems(c));
    float *dA = to_device(A, total(c, a_elems(c)) * sizeof(float), s);
    float *dB = to_device(B, total(c, b_elems(c)) * sizeof(float), s), *dC = to_device(C, nc * sizeof(float), s);
    float *dS = to_device(scal, sizeof scal, s);
    cublasSetPointerMode(h, c->device_scalars ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST);
    cublasSetMathMode(h, (cublasMath_t)c->math);
    cublasStatus_t st = c->device_scalars ? call(h, c, dS, dS + 1, dA, dB, dC) : call(h, c, &scal[0], &scal[1], dA, dB, dC);
    cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST);
    cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
    CUDA_OK(cudaMemcpyAsync(C, dC, nc * sizeof(float), cudaMemcpyDeviceToHost, s));
    CUDA_OK(cudaStreamSynchronize(s));
    cudaFree(dA), cudaFree(dB), cudaFree(dC), cudaFree(dS);
    free(A), free(B);
    *out = C;
    return st;
}

typedef struct {
    const ccase *cases;
    int n, which, nthreads;
    const char *dir;
    cublasStatus_t *status;
} worker_arg;

static void save(const char *dir, int i, const float *C, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/c%02d.bin", dir, i);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(C, sizeof(float), n, f) != n) fprintf(stderr, "check_cublas: cannot write %s\n", path), die();
    fclose(f);
}

/* A thread with its own handle on its own non-blocking stream, running every nthreads-th case. Its exit also
 * exercises the preload's release of the thread's handles. */
static void *worker(void *p)
{
    worker_arg *w = p;
    cublasHandle_t h;
    cudaStream_t s;
    CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) fprintf(stderr, "check_cublas: cublasCreate failed\n"), die();
    cublasSetStream(h, s);
    for (int i = w->which; i < w->n; i += w->nthreads) {
        float *C;
        w->status[i] = run_case(h, s, &w->cases[i], &C);
        save(w->dir, i, C, total(&w->cases[i], c_elems(&w->cases[i])));
        free(C);
    }
    cublasDestroy(h);
    cudaStreamDestroy(s);
    return NULL;
}

static int cmd_run(const char *dir)
{
    static ccase cases[MAX_CASES];
    static cublasStatus_t status[MAX_CASES];
    int n = make_cases(cases);
    pthread_t th[2];
    worker_arg args[2];
    for (int t = 0; t < 2; ++t) {
        args[t] = (worker_arg){cases, n, t, 2, dir, status};
        pthread_create(&th[t], NULL, worker, &args[t]);
    }
    for (int t = 0; t < 2; ++t) pthread_join(th[t], NULL);
    char path[4096];
    snprintf(path, sizeof path, "%s/status.txt", dir);
    FILE *f = fopen(path, "w");
    if (!f) return fprintf(stderr, "check_cublas: cannot write %s\n", path), 1;
    for (int i = 0; i < n; ++i) fprintf(f, "%d %d %s\n", i, (int)status[i], cases[i].what);
    fclose(f);
    printf("run: %d cases in %s (two threads, a handle and a stream each)\n", n, dir);
    return 0;
}

/* ---- compare: a run against the reference run ---- */

static float *load(const char *dir, int i, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/c%02d.bin", dir, i);
    FILE *f = fopen(path, "rb");
    float *C = malloc(n * sizeof *C);
    if (!f || fread(C, sizeof(float), n, f) != n) {
        if (f) fclose(f);
        free(C);
        return NULL;
    }
    fclose(f);
    return C;
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

static float opa(const ccase *c, const float *A, int i, int p)
{
    return c->ta == CUBLAS_OP_N ? A[i + (size_t)p * c->lda] : A[p + (size_t)i * c->lda];
}

static float opb(const ccase *c, const float *B, int p, int j)
{
    return c->tb == CUBLAS_OP_N ? B[p + (size_t)j * c->ldb] : B[j + (size_t)p * c->ldb];
}

/* Worst |c - ref| / (|alpha| (|A||B|)_ij + |beta c0_ij|) over one matrix, in units of 16 sqrt(K) FLT_EPSILON
 * (so <= 1 passes); NaN or Inf anywhere is a failure (returned as INFINITY). Elements outside the m x n block
 * (ld > dim padding) must be bit-identical to the reference. */
static double worst_ratio(const ccase *c, const float *A, const float *B, const float *C0, const float *got,
                          const float *ref)
{
    const double tol = 16.0 * sqrt((double)c->k) * FLT_EPSILON;
    double worst = 0;
    for (int j = 0; j < c->n; ++j)
        for (int i = 0; i < c->ldc; ++i) {
            size_t e = i + (size_t)j * c->ldc;
            if (i >= c->m) {
                if (memcmp(&got[e], &ref[e], sizeof(float))) return INFINITY;
                continue;
            }
            double bound = c->beta == 0.0f ? 0.0 : fabs((double)c->beta * C0[e]);
            for (int p = 0; p < c->k; ++p) bound += fabs((double)c->alpha) * fabs(opa(c, A, i, p)) * fabs(opb(c, B, p, j));
            double err = fabs((double)got[e] - (double)ref[e]);
            if (!isfinite(got[e]) || !isfinite(err)) return INFINITY;
            double r = bound > 0 ? err / (tol * bound) : err > 0 ? INFINITY : 0;
            if (r > worst) worst = r;
        }
    return worst;
}

/* Every matrix of a served case within the bound; the bytes between batch matrices untouched. */
static double case_ratio(const ccase *c, const float *got, const float *ref)
{
    float *A, *B, *C0;
    make_data(c, &A, &B, &C0);
    long long sa = stride_of(a_elems(c)), sb = stride_of(b_elems(c)), sc = stride_of(c_elems(c));
    double worst = 0;
    for (int b = 0; b < c->batch; ++b) {
        double r = worst_ratio(c, A + b * sa, B + b * sb, C0 + b * sc, got + b * sc, ref + b * sc);
        if (r > worst) worst = r;
        if (memcmp(got + b * sc + c_elems(c), ref + b * sc + c_elems(c), STRIDE_GAP * sizeof(float))) worst = INFINITY;
    }
    free(A), free(B), free(C0);
    return worst;
}

typedef struct {
    int tol, bitwise, status, failed;
    double worst;
} tally;

/* One case of the comparison; returns 0 when it passes, printing why when it does not. */
static int compare_case(const ccase *c, int i, int st_ref, int st_test, const char *ref_dir, const char *test_dir,
                        int bitwise, tally *t)
{
    if (st_ref != st_test) return printf("  case %d (%s): status %d, reference %d\n", i, c->what, st_test, st_ref), 1;
    size_t n = total(c, c_elems(c));
    float *ref = load(ref_dir, i, n), *got = load(test_dir, i, n);
    int bad = 0;
    if (!ref || !got) bad = printf("  case %d (%s): result file missing\n", i, c->what);
    else if (bitwise || c->expect != EXPECT_TOL || st_ref != CUBLAS_STATUS_SUCCESS) {
        bad = memcmp(ref, got, n * sizeof(float)) != 0;
        if (bad) printf("  case %d (%s): not bit-identical to cuBLAS\n", i, c->what);
        else ++*(c->expect == EXPECT_STATUS ? &t->status : &t->bitwise);
    } else {
        double r = case_ratio(c, got, ref);
        bad = !(r <= 1.0);
        if (bad) printf("  case %d (%s %dx%dx%d): error %.3g x the FP32 bound\n", i, c->what, c->m, c->n, c->k, r);
        else t->tol++, t->worst = r > t->worst ? r : t->worst;
    }
    free(ref), free(got);
    return bad;
}

static int cmd_compare(const char *ref_dir, const char *test_dir, int bitwise)
{
    static ccase cases[MAX_CASES];
    int n = make_cases(cases), st_ref[MAX_CASES], st_test[MAX_CASES];
    if (load_status(ref_dir, st_ref, n) || load_status(test_dir, st_test, n))
        return printf("compare: missing or short status.txt in %s or %s\n", ref_dir, test_dir), 1;
    tally t = {0, 0, 0, 0, 0};
    for (int i = 0; i < n; ++i)
        t.failed += compare_case(&cases[i], i, st_ref[i], st_test[i], ref_dir, test_dir, bitwise, &t);
    printf("compare %s vs %s: %d cases: %d within the FP32 bound (worst %.3f of it), %d bit-identical, %d with "
           "cuBLAS's status and C untouched; %d failed\n", test_dir, ref_dir, n, t.tol, t.worst, t.bitwise, t.status,
           t.failed);
    printf("summary: %d within bound (worst %.3f), %d bitwise, %d status, %d failed\n", t.tol, t.worst, t.bitwise,
           t.status, t.failed);
    return t.failed ? 1 : 0;
}

/* ---- streams: a call runs on its handle's stream ---- */

static atomic_int gate;

static void CUDART_CB hold(void *p)
{
    (void)p;
    while (!atomic_load(&gate)) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

/* Handle 1 on stream s1, which a host function holds closed; handle 2 on s2. The call on handle 1 must wait for
 * s1 (C1 unchanged while s1 is held, read through s2), the call on handle 2 must finish meanwhile, and both
 * must be right once s1 opens. A call launched on any other stream than the handle's fails this. */
static int cmd_streams(void)
{
    const int n = 256;
    cudaStream_t s1, s2;
    cublasHandle_t h1, h2;
    float *dA, *dC1, *dC2, one = 1.0f, zero = 0.0f, sentinel = -7.0f, got1 = 0, got2 = 0;
    float *hA = malloc((size_t)n * n * sizeof *hA), *hC = malloc((size_t)n * n * sizeof *hC);
    for (int i = 0; i < n * n; ++i) hA[i] = (i % n == i / n) ? 2.0f : 0.0f, hC[i] = sentinel; /* 2 I */
    CUDA_OK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CUDA_OK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    CUDA_OK(cudaMalloc((void **)&dA, (size_t)n * n * 4));
    CUDA_OK(cudaMalloc((void **)&dC1, (size_t)n * n * 4));
    CUDA_OK(cudaMalloc((void **)&dC2, (size_t)n * n * 4));
    CUDA_OK(cudaMemcpy(dA, hA, (size_t)n * n * 4, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dC1, hC, (size_t)n * n * 4, cudaMemcpyHostToDevice));
    if (cublasCreate(&h1) || cublasCreate(&h2)) return printf("streams: cublasCreate failed\n"), 1;
    cublasSetStream(h1, s1), cublasSetStream(h2, s2);
    /* First calls load kernels (which may synchronise the context): make them before a stream is held. */
    cublasSgemm(h1, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dA, n, dA, n, &zero, dC2, n);
    cublasSgemm(h2, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dA, n, dA, n, &zero, dC2, n);
    CUDA_OK(cudaDeviceSynchronize());
    atomic_store(&gate, 0);
    CUDA_OK(cudaLaunchHostFunc(s1, hold, NULL));
    cublasStatus_t st1 = cublasSgemm(h1, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dA, n, dA, n, &zero, dC1, n);
    cublasStatus_t st2 = cublasSgemm(h2, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, dA, n, dA, n, &zero, dC2, n);
    CUDA_OK(cudaStreamSynchronize(s2));
    struct timespec ts = {0, 50000000};
    nanosleep(&ts, NULL); /* a call wrongly on another stream would be done by now */
    CUDA_OK(cudaMemcpyAsync(&got1, dC1, 4, cudaMemcpyDeviceToHost, s2));
    CUDA_OK(cudaMemcpyAsync(&got2, dC2, 4, cudaMemcpyDeviceToHost, s2));
    CUDA_OK(cudaStreamSynchronize(s2));
    int held = cudaStreamQuery(s1) == cudaErrorNotReady && got1 == sentinel, other = got2 == 4.0f;
    atomic_store(&gate, 1);
    CUDA_OK(cudaStreamSynchronize(s1));
    CUDA_OK(cudaMemcpy(&got1, dC1, 4, cudaMemcpyDeviceToHost));
    int ok = st1 == CUBLAS_STATUS_SUCCESS && st2 == CUBLAS_STATUS_SUCCESS && held && other && got1 == 4.0f;
    printf("streams: %s (call on a held stream waited: %s; call on the other stream ran: %s; result after: %g)\n",
           ok ? "ok" : "FAILED", held ? "yes" : "no", other ? "yes" : "no", got1);
    cublasDestroy(h1), cublasDestroy(h2);
    cudaFree(dA), cudaFree(dC1), cudaFree(dC2), free(hA), free(hC);
    return ok ? 0 : 1;
}

/* ---- loop: fixed shapes, timed (what a user's program would do) ---- */

static int cmd_loop(int reps)
{
    static const int shapes[][3] = {{512, 512, 512}, {1000, 1000, 1000}};
    cublasHandle_t h;
    if (cublasCreate(&h)) return printf("loop: cublasCreate failed\n"), 1;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
        int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
        float *A, *B, *C, one = 1.0f, zero = 0.0f, ms = 0;
        CUDA_OK(cudaMalloc((void **)&A, (size_t)m * k * 4));
        CUDA_OK(cudaMalloc((void **)&B, (size_t)k * n * 4));
        CUDA_OK(cudaMalloc((void **)&C, (size_t)m * n * 4));
        CUDA_OK(cudaMemset(A, 0, (size_t)m * k * 4));
        CUDA_OK(cudaMemset(B, 0, (size_t)k * n * 4));
        cudaEvent_t e0, e1;
        cudaEventCreate(&e0), cudaEventCreate(&e1);
        cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, A, m, B, k, &zero, C, m); /* first call: setup */
        cudaEventRecord(e0, NULL);
        for (int r = 0; r < reps; ++r) cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, A, m, B, k, &zero, C, m);
        cudaEventRecord(e1, NULL);
        CUDA_OK(cudaEventSynchronize(e1));
        cudaEventElapsedTime(&ms, e0, e1);
        printf("loop: %dx%dx%d nn: %.4f ms/call (%.2f TFLOPS)\n", m, n, k, ms / reps,
               2.0 * m * n * k * reps / (ms * 1e-3) / 1e12);
        cudaEventDestroy(e0), cudaEventDestroy(e1), cudaFree(A), cudaFree(B), cudaFree(C);
    }
    cublasDestroy(h);
    return 0;
}

/* ---- probe: what a program sees without a GPU, or on a NULL handle ---- */

static int cmd_probe(void)
{
    cublasHandle_t h = NULL;
    float one = 1.0f, zero = 0.0f, x[4] = {0};
    printf("cublasCreate: %d\n", (int)cublasCreate(&h));
    printf("cublasSgemm(NULL handle): %d\n",
           (int)cublasSgemm(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, x, 1, x, 1, &zero, x, 1));
    printf("cublasGemmEx(NULL handle): %d\n",
           (int)cublasGemmEx(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, x, CUDA_R_32F, 1, x, CUDA_R_32F, 1, &zero,
                             x, CUDA_R_32F, 1, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    printf("cublasSgemmStridedBatched(NULL handle): %d\n",
           (int)cublasSgemmStridedBatched(NULL, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, x, 1, 1, x, 1, 1, &zero, x, 1,
                                          1, 1));
    if (h) cublasDestroy(h);
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 2 && !strcmp(argv[1], "probe")) return cmd_probe();
    if (argc >= 3 && !strcmp(argv[1], "run")) return cmd_run(argv[2]);
    if (argc >= 4 && !strcmp(argv[1], "compare"))
        return cmd_compare(argv[2], argv[3], argc >= 5 && !strcmp(argv[4], "--bitwise"));
    if (argc >= 2 && !strcmp(argv[1], "streams")) return cmd_streams();
    if (argc >= 2 && !strcmp(argv[1], "loop")) return cmd_loop(argc >= 3 ? atoi(argv[2]) : 20);
    fprintf(stderr, "usage: check_cublas probe | run DIR | compare REF TEST [--bitwise] | streams | loop [REPS]\n");
    return 2;
}
