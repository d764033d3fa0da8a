/* What gemmtune adds per call to microsecond GEMMs, in one process: for a 100^3 call and a few tiny shapes, the
 * median over many rounds of the host time per call (the issuing thread, no synchronisation between calls) and of
 * the wall time per call (CUDA events around a round on the stream), for each way of making the call. Each round is
 * issued behind a host function that holds the stream until the last call is issued, so the host time is the cost
 * of issuing alone: a GPU busy with earlier calls cannot push back on the issuing thread (without the gate a 100^3
 * call's host time was the GPU's ~16 us, and its noise hid differences of 0.3 us). The paths:
 *   cuBLAS (real)        cublasSgemm_v2 of the real cuBLAS (found by soname, past any interposer), default math
 *   cuBLAS pedantic      the same on a CUBLAS_PEDANTIC_MATH handle (what gemmtune's own cuBLAS calls use)
 *   cublasSgemm_v2       the program's own symbol: the real cuBLAS, or under LD_PRELOAD the interposer
 *   gemmtune -> cuBLAS   gemmtune_sgemm, no winners, cuBLAS fallback (not under the preload, whose interposer
 *                        would take the library's own cuBLAS calls)
 *   gemmtune built-in    gemmtune_sgemm, no winners, the built-in kernel (GEMMTUNE_FALLBACK_DEFAULT)
 *   cuBLASLt (real)      cublasLtMatmul of the real cuBLASLt, FP32 with a bias epilogue, A transposed: what PyTorch's
 *                        nn.Linear calls (its descriptors made once per shape, as a program that keeps them would)
 *   cublasLtMatmul       the same through the program's own symbol: under LD_PRELOAD the interposer
 * tests/preload/overhead.sh runs it without the preload and under it (forwarding, served by gemmtune's cuBLAS,
 * served by the built-in kernel); it needs a GPU.
 *   build/preload_overhead [--rounds R] [--calls N] [--max-us X] [--parts]
 * --parts: first the host cost of the pieces a judged call is made of (cuBLAS's getters, the device and context
 * queries, a gemmtune_sgemm that finds no kernel, a cuBLASLt descriptor read), nanoseconds a call.
 * --max-us: exit 1 unless the path this run is about adds at most X us of host time per call over its baseline,
 * on every shape: gemmtune -> cuBLAS over cuBLAS without the preload; under it, cublasSgemm_v2 over cuBLAS
 * (real), or over gemmtune built-in with GEMMTUNE_FALLBACK=default (the same kernel), and cublasLtMatmul over
 * cuBLASLt (real). */
#include "gemmtune.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define STR_(x) #x
#define STR(x) STR_(x)

enum { NSHAPES = 5, MAX_ROUNDS = 201 };
enum { P_REAL, P_PEDANTIC, P_SYMBOL, P_GT_CUBLAS, P_GT_BUILTIN, P_LT_REAL, P_LT_SYMBOL, NPATHS };
static const char *const path_name[NPATHS] = {"cuBLAS (real)",     "cuBLAS pedantic",   "cublasSgemm_v2",
                                              "gemmtune -> cuBLAS", "gemmtune built-in", "cuBLASLt (real)",
                                              "cublasLtMatmul"};
static const int shapes[NSHAPES][3] = {{100, 100, 100}, {16, 16, 16}, {32, 32, 32}, {45, 303, 475}, {128, 8, 256}};

typedef __typeof__(cublasSgemm_v2) sgemm_fn;
typedef __typeof__(cublasLtMatmul) ltmatmul_fn;

/* The cuBLASLt call of one shape: y = op(A) B + bias, A transposed (k x m), FP32, the BIAS epilogue. */
typedef struct {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t a, b, c;
} lt_call;

typedef struct {
    cudaStream_t s;
    cublasHandle_t plain, pedantic;
    cublasLtHandle_t lt;
    gemmtune_handle via_cublas, builtin; /* NULL when not measured */
    sgemm_fn *real;                      /* the real cuBLAS's cublasSgemm_v2 */
    ltmatmul_fn *lt_real;                /* and the real cuBLASLt's cublasLtMatmul */
    int preloaded;                       /* cublasSgemm_v2 here is not the real one */
    float *A, *B, *C, *bias;
    lt_call *ltc;                        /* the shape's, while it is measured */
} setup;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One call of shape sh by path p; nonzero when it failed. */
static int call(const setup *x, int p, const int *sh)
{
    const float one = 1.0f, zero = 0.0f;
    const int m = sh[0], n = sh[1], k = sh[2];
    switch (p) {
    case P_REAL: return x->real(x->plain, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, x->A, m, x->B, k, &zero, x->C, m);
    case P_PEDANTIC:
        return x->real(x->pedantic, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, x->A, m, x->B, k, &zero, x->C, m);
    case P_SYMBOL: return cublasSgemm(x->plain, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, x->A, m, x->B, k, &zero, x->C, m);
    case P_LT_REAL:
    case P_LT_SYMBOL:
        return (p == P_LT_REAL ? x->lt_real : cublasLtMatmul)(x->lt, x->ltc->op, &one, x->A, x->ltc->a, x->B, x->ltc->b,
                                                              &zero, x->C, x->ltc->c, x->C, x->ltc->c, NULL, NULL, 0,
                                                              x->s);
    default:
        return gemmtune_sgemm(p == P_GT_CUBLAS ? x->via_cublas : x->builtin, x->s, GEMMTUNE_OP_N, GEMMTUNE_OP_N, m, n,
                              k, one, x->A, m, x->B, k, zero, x->C, m);
    }
}

static int measured(const setup *x, int p)
{
    return p == P_GT_CUBLAS ? x->via_cublas != NULL : p == P_GT_BUILTIN ? x->builtin != NULL : 1;
}

/* The gate: the stream waits in this host function until the round's calls are issued (at most 2 s, should a call
 * wait for the stream itself). */
static _Atomic int gate_open;
static void CUDART_CB hold(void *arg)
{
    (void)arg;
    const double t0 = now_us();
    while (!atomic_load_explicit(&gate_open, memory_order_acquire) && now_us() - t0 < 2e6) {
    }
}

/* One round of `calls` calls: host and wall microseconds per call. Nonzero when a call failed. */
static int round_of(const setup *x, int p, const int *sh, int calls, double *host, double *wall)
{
    cudaEvent_t e0, e1;
    float ms = 0;
    int bad = 0;
    cudaEventCreate(&e0), cudaEventCreate(&e1);
    atomic_store_explicit(&gate_open, 0, memory_order_release);
    bad |= cudaLaunchHostFunc(x->s, hold, NULL) != cudaSuccess;
    cudaEventRecord(e0, x->s);
    const double t0 = now_us();
    for (int i = 0; i < calls; ++i) bad |= call(x, p, sh);
    *host = (now_us() - t0) / calls;
    atomic_store_explicit(&gate_open, 1, memory_order_release);
    cudaEventRecord(e1, x->s);
    bad |= cudaEventSynchronize(e1) != cudaSuccess; /* the next round starts on an empty queue */
    cudaEventElapsedTime(&ms, e0, e1);
    *wall = ms * 1e3 / calls;
    cudaEventDestroy(e0), cudaEventDestroy(e1);
    return bad;
}

static gemmtune_handle make_gemmtune(gemmtune_fallback fb)
{
    gemmtune_options o;
    gemmtune_handle h = NULL;
    gemmtune_options_init(&o);
    o.column_major = 1, o.fallback = fb, o.record_path = "";
    if (gemmtune_create_from_table(&h, NULL, 0, &o)) {
        fprintf(stderr, "overhead: gemmtune_create_from_table: %s\n", gemmtune_last_error());
        return NULL;
    }
    return h;
}

/* A real library's entry point, past any interposer: from the library itself, by its soname. */
static void *find_real(const char *soname, const char *symbol)
{
    void *lib = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
    void *f = lib ? dlsym(lib, symbol) : NULL;
    if (lib) dlclose(lib); /* NOLOAD took a reference; the library stays loaded */
    return f;
}

/* What make_lt_call made (the NULL ones left alone). */
static void free_lt_call(lt_call *c)
{
    if (c->op) cublasLtMatmulDescDestroy(c->op);
    if (c->a) cublasLtMatrixLayoutDestroy(c->a);
    if (c->b) cublasLtMatrixLayoutDestroy(c->b);
    if (c->c) cublasLtMatrixLayoutDestroy(c->c);
}

/* The cuBLASLt call of shape sh into *c: 0, or -1 (what failed said; nothing kept). */
static int make_lt_call(const int *sh, lt_call *c, const float *bias)
{
    const int32_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
    memset(c, 0, sizeof *c);
    if (cublasLtMatmulDescCreate(&c->op, CUBLAS_COMPUTE_32F, CUDA_R_32F) ||
        cublasLtMatmulDescSetAttribute(c->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta) ||
        cublasLtMatmulDescSetAttribute(c->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb) ||
        cublasLtMatmulDescSetAttribute(c->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi) ||
        cublasLtMatmulDescSetAttribute(c->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias) ||
        cublasLtMatrixLayoutCreate(&c->a, CUDA_R_32F, (uint64_t)sh[2], (uint64_t)sh[0], sh[2]) ||
        cublasLtMatrixLayoutCreate(&c->b, CUDA_R_32F, (uint64_t)sh[2], (uint64_t)sh[1], sh[2]) ||
        cublasLtMatrixLayoutCreate(&c->c, CUDA_R_32F, (uint64_t)sh[0], (uint64_t)sh[1], sh[0]))
        return free_lt_call(c), fprintf(stderr, "overhead: cuBLASLt descriptors for %dx%dx%d failed\n", sh[0], sh[1],
                                        sh[2]), -1;
    return 0;
}

static int make_setup(setup *x)
{
    const size_t floats = 512 * 512;
    memset(x, 0, sizeof *x);
    if (cudaStreamCreateWithFlags(&x->s, cudaStreamNonBlocking) || cudaMalloc((void **)&x->A, floats * 4) ||
        cudaMalloc((void **)&x->B, floats * 4) || cudaMalloc((void **)&x->C, floats * 4) ||
        cudaMalloc((void **)&x->bias, 512 * 4))
        return fprintf(stderr, "overhead: CUDA setup failed\n"), -1;
    cudaMemset(x->A, 0, floats * 4), cudaMemset(x->B, 0, floats * 4), cudaMemset(x->bias, 0, 512 * 4);
    if (cublasLtCreate(&x->lt) ||
        !(x->lt_real = (ltmatmul_fn *)find_real("libcublasLt.so." STR(CUBLAS_VER_MAJOR), "cublasLtMatmul")))
        return fprintf(stderr, "overhead: cuBLASLt setup failed\n"), -1;
    if (cublasCreate(&x->plain) || cublasSetStream(x->plain, x->s) || cublasCreate(&x->pedantic) ||
        cublasSetStream(x->pedantic, x->s) || cublasSetMathMode(x->pedantic, CUBLAS_PEDANTIC_MATH))
        return fprintf(stderr, "overhead: cuBLAS setup failed\n"), -1;
    if (!(x->real = (sgemm_fn *)find_real("libcublas.so." STR(CUBLAS_VER_MAJOR), "cublasSgemm_v2")))
        return fprintf(stderr, "overhead: libcublas.so." STR(CUBLAS_VER_MAJOR) " not found\n"), -1;
    x->preloaded = (void *)x->real != dlsym(RTLD_DEFAULT, "cublasSgemm_v2");
    if (!x->preloaded && !(x->via_cublas = make_gemmtune(GEMMTUNE_FALLBACK_CUBLAS))) return -1;
    return (x->builtin = make_gemmtune(GEMMTUNE_FALLBACK_DEFAULT)) ? 0 : -1;
}

/* ---- --parts: the pieces of a judged call, each timed alone ---- */

enum { PART_CALLS = 100000, PART_REPS = 7 };
typedef int (*ctx_get_fn)(void **ctx);

typedef struct {
    const setup *x;
    gemmtune_handle none; /* no winners, no fallback: every call finds no kernel */
    ctx_get_fn ctx_get;
    lt_call *ltc;
} parts_ctx;

static int part_call(const parts_ctx *c, int i)
{
    cublasPointerMode_t pm;
    cublasMath_t mm;
    cudaStream_t s;
    int dev, v;
    uint64_t rows;
    void *ctx;
    size_t w;
    const float one = 1.0f, zero = 0.0f;
    switch (i) {
    case 0: return 0;
    case 1: return cublasGetPointerMode(c->x->plain, &pm);
    case 2: return cublasGetMathMode(c->x->plain, &mm);
    case 3: return cublasGetStream(c->x->plain, &s);
    case 4: return cudaGetDevice(&dev);
    case 5: return c->ctx_get ? c->ctx_get(&ctx) : 0;
    case 6:
        return gemmtune_sgemm(c->none, c->x->s, GEMMTUNE_OP_N, GEMMTUNE_OP_N, 100, 100, 100, one, c->x->A, 100,
                              c->x->B, 100, zero, c->x->C, 100) != GEMMTUNE_STATUS_NO_KERNEL;
    case 7: return cublasLtMatmulDescGetAttribute(c->ltc->op, CUBLASLT_MATMUL_DESC_TRANSA, &v, sizeof v, &w);
    default: return cublasLtMatrixLayoutGetAttribute(c->ltc->a, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows, sizeof rows, &w);
    }
}

static int print_parts(const setup *x)
{
    static const char *const name[] = {"(the loop itself)", "cublasGetPointerMode", "cublasGetMathMode",
                                       "cublasGetStream", "cudaGetDevice", "cuCtxGetCurrent",
                                       "gemmtune_sgemm, no kernel", "cublasLtMatmulDescGetAttribute",
                                       "cublasLtMatrixLayoutGetAttribute"};
    parts_ctx c = {x, make_gemmtune(GEMMTUNE_FALLBACK_NONE), NULL, NULL};
    lt_call lc;
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
        c.ctx_get = (ctx_get_fn)fn;
    if (!c.none || make_lt_call(shapes[0], &lc, x->bias)) return gemmtune_destroy(c.none), 1;
    c.ltc = &lc;
    printf("parts: host ns a call, median of %d runs of %d calls\n", PART_REPS, PART_CALLS);
    for (int i = 0; i < (int)(sizeof name / sizeof name[0]); ++i) {
        double t[PART_REPS];
        int bad = 0;
        for (int r = 0; r < PART_REPS; ++r) {
            const double t0 = now_us();
            for (int j = 0; j < PART_CALLS; ++j) bad |= part_call(&c, i);
            t[r] = (now_us() - t0) * 1e3 / PART_CALLS;
        }
        qsort(t, PART_REPS, sizeof t[0], cmp_double);
        printf("  %-34s %8.1f%s\n", name[i], t[PART_REPS / 2], bad ? "  (a call failed)" : "");
    }
    free_lt_call(&lc);
    gemmtune_destroy(c.none);
    return 0;
}

/* Median host and wall time per call of every path on shape sh, rounds interleaved across the paths. */
static int measure_shape(const setup *x, const int *sh, int rounds, int calls, double host[NPATHS],
                         double wall[NPATHS])
{
    static double h[NPATHS][MAX_ROUNDS], w[NPATHS][MAX_ROUNDS];
    for (int p = 0; p < NPATHS; ++p) /* plans made, kernels loaded, clocks up */
        for (int r = 0; measured(x, p) && r < 3; ++r)
            if (round_of(x, p, sh, calls, &h[p][0], &w[p][0]))
                return fprintf(stderr, "overhead: %s failed on %dx%dx%d: %s\n", path_name[p], sh[0], sh[1], sh[2],
                               p == P_GT_CUBLAS || p == P_GT_BUILTIN ? gemmtune_last_error() : "cuBLAS status"), -1;
    for (int r = 0; r < rounds; ++r)
        for (int i = 0; i < NPATHS; ++i) {
            const int p = (i + r) % NPATHS; /* rotate which path goes first */
            if (measured(x, p) && round_of(x, p, sh, calls, &h[p][r], &w[p][r]))
                return fprintf(stderr, "overhead: %s failed\n", path_name[p]), -1;
        }
    for (int p = 0; p < NPATHS; ++p) {
        qsort(h[p], (size_t)rounds, sizeof(double), cmp_double), qsort(w[p], (size_t)rounds, sizeof(double), cmp_double);
        host[p] = measured(x, p) ? h[p][rounds / 2] : -1, wall[p] = measured(x, p) ? w[p][rounds / 2] : -1;
    }
    return 0;
}

/* The path this run is about and its baseline (see the opening comment). */
static void subject(const setup *x, int *p, int *base)
{
    const char *fb = getenv("GEMMTUNE_FALLBACK");
    *p = x->preloaded ? P_SYMBOL : P_GT_CUBLAS;
    *base = x->preloaded && fb && !strcmp(fb, "default") ? P_GT_BUILTIN : P_REAL;
}

/* The table of one shape; returns 1 when a subject (the run's, and cublasLtMatmul under the preload but for
 * GEMMTUNE_FALLBACK=default) exceeds max_us (when given). The cuBLASLt paths are weighed against the real cuBLASLt. */
static int report(const setup *x, const int *sh, const double *host, const double *wall, double max_us)
{
    int subj, base, over = 0;
    subject(x, &subj, &base);
    for (int p = 0; p < NPATHS; ++p) {
        if (host[p] < 0) continue;
        const int lt_subj = x->preloaded && p == P_LT_SYMBOL && base == P_REAL; /* GEMMTUNE_FALLBACK=default: the
                                                                                   built-in kernel, another workload */
        const int b = p == subj ? base : p >= P_LT_REAL ? P_LT_REAL : P_REAL;
        printf("%-20s %4dx%dx%-6d %9.3f %9.3f %+9.3f %+9.3f%s\n", path_name[p], sh[0], sh[1], sh[2], host[p], wall[p],
               host[p] - host[b], wall[p] - wall[b], p == subj || lt_subj ? "  <-" : "");
        if ((p == subj || lt_subj) && max_us >= 0 && host[p] - host[b] > max_us) over = 1;
    }
    return over;
}

int main(int argc, char **argv)
{
    int rounds = 31, calls = 200;
    double max_us = -1;
    int parts = 0;
    for (int i = 1; i < argc; i += 2) {
        if (!strcmp(argv[i], "--parts")) parts = 1, --i;
        else if (i + 1 >= argc) return fprintf(stderr, "preload_overhead: %s needs a value\n", argv[i]), 2;
        else if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--calls")) calls = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--max-us")) max_us = atof(argv[i + 1]);
        else return fprintf(stderr, "usage: preload_overhead [--rounds R] [--calls N] [--max-us X] [--parts]\n"), 2;
    }
    if (rounds < 1 || rounds > MAX_ROUNDS || calls < 1) return fprintf(stderr, "overhead: bad --rounds or --calls\n"), 2;
    setup x;
    if (make_setup(&x) || (parts && print_parts(&x))) return 1;
    const char *fb = getenv("GEMMTUNE_FALLBACK");
    int subj, base, over = 0;
    subject(&x, &subj, &base);
    printf("overhead: %s, GEMMTUNE_FALLBACK=%s; median of %d rounds of %d calls; <- marks %s, its +/- against %s\n",
           x.preloaded ? "under the preload" : "no preload", fb ? fb : "(unset)", rounds, calls, path_name[subj],
           path_name[base]);
    printf("%-20s %-14s %9s %9s %9s %9s\n", "path", "shape (mxnxk)", "host us", "wall us", "host +/-", "wall +/-");
    for (int s = 0; s < NSHAPES; ++s) {
        double host[NPATHS], wall[NPATHS];
        lt_call c;
        if (make_lt_call(shapes[s], &c, x.bias)) return 1;
        x.ltc = &c;
        const int bad = measure_shape(&x, shapes[s], rounds, calls, host, wall);
        free_lt_call(&c);
        if (bad) return 1;
        over |= report(&x, shapes[s], host, wall, max_us);
    }
    if (max_us >= 0)
        printf("overhead: %s%s adds %s %.2f us/call of host time on every shape: %s\n", path_name[subj],
               x.preloaded && base == P_REAL ? " (and cublasLtMatmul)" : "", over ? "more than" : "at most", max_us,
               over ? "FAIL" : "PASS");
    gemmtune_destroy(x.via_cublas), gemmtune_destroy(x.builtin);
    cublasDestroy(x.plain), cublasDestroy(x.pedantic), cublasLtDestroy(x.lt);
    return over;
}
