/* The drop-in's own cost per forwarded call, apart from cuBLAS's: cublasSgemm_v2 (100^3, nn) and cublasLtMatmul
 * (100^3, A transposed, a bias epilogue: nn.Linear's call) made on the stand-in cuBLAS and cuBLASLt
 * (tests/preload/fake_cublas.c, fake_cublaslt.c), which return at once. Under LD_PRELOAD on a machine with a GPU
 * and no winners, each call is judged, its descriptors read, the loader asked, and the call forwarded: the time per
 * call with the preload less the time without it is what the drop-in adds to a call it does not serve, without the
 * microsecond of noise that the real cuBLAS's own host time has from run to run. tests/preload/overhead.sh runs it.
 *   build/tests/preload_cost [--calls N]      prints "sgemm_ns X" and "lt_ns Y": median of 9 runs of N calls */
#include "fake_cublas.h"
#include "fake_cublaslt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { RUNS = 9 };

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static float A[16], B[16], C[16], bias[16];

typedef struct {
    cublasHandle_t h;
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t a, b, c;
} calls;

static int one(const calls *x, int lt)
{
    const float one = 1.0f, zero = 0.0f;
    if (!lt) return cublasSgemm_v2(x->h, CUBLAS_OP_N, CUBLAS_OP_N, 100, 100, 100, &one, A, 100, B, 100, &zero, C, 100);
    return cublasLtMatmul(x->lt, x->desc, &one, A, x->a, B, x->b, &zero, C, x->c, C, x->c, NULL, NULL, 0, NULL);
}

/* Median ns a call of n calls, over RUNS runs. */
static double timed(const calls *x, int lt, int n)
{
    double t[RUNS];
    for (int r = 0; r < RUNS; ++r) {
        const double t0 = now_ns();
        for (int i = 0; i < n; ++i) (void)one(x, lt);
        t[r] = (now_ns() - t0) / n;
    }
    qsort(t, RUNS, sizeof t[0], cmp);
    return t[RUNS / 2];
}

int main(int argc, char **argv)
{
    int n = 200000;
    if (argc == 3 && !strcmp(argv[1], "--calls")) n = atoi(argv[2]);
    else if (argc != 1) return fprintf(stderr, "usage: preload_cost [--calls N]\n"), 2;
    if (n < 1) return fprintf(stderr, "preload_cost: bad --calls\n"), 2;
    static int handle, lt_handle;
    calls x = {(cublasHandle_t)&handle, (cublasLtHandle_t)&lt_handle, NULL, NULL, NULL, NULL};
    const int32_t ta = CUBLAS_OP_T;
    const uint32_t epi = CUBLASLT_EPILOGUE_BIAS;
    const void *bp = bias;
    if (cublasLtMatmulDescCreate(&x.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F) ||
        cublasLtMatmulDescSetAttribute(x.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta) ||
        cublasLtMatmulDescSetAttribute(x.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi) ||
        cublasLtMatmulDescSetAttribute(x.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bp, sizeof bp) ||
        cublasLtMatrixLayoutCreate(&x.a, CUDA_R_32F, 100, 100, 100) ||
        cublasLtMatrixLayoutCreate(&x.b, CUDA_R_32F, 100, 100, 100) ||
        cublasLtMatrixLayoutCreate(&x.c, CUDA_R_32F, 100, 100, 100))
        return fprintf(stderr, "preload_cost: descriptors failed\n"), 1;
    for (int lt = 0; lt < 2; ++lt)
        if (one(&x, lt)) return fprintf(stderr, "preload_cost: the first %s call failed\n", lt ? "Lt" : "SGEMM"), 1;
    (void)timed(&x, 0, n / 10 + 1), (void)timed(&x, 1, n / 10 + 1); /* warm */
    printf("sgemm_ns %.1f\nlt_ns %.1f\n", timed(&x, 0, n), timed(&x, 1, n));
    cublasLtMatmulDescDestroy(x.desc);
    cublasLtMatrixLayoutDestroy(x.a), cublasLtMatrixLayoutDestroy(x.b), cublasLtMatrixLayoutDestroy(x.c);
    return 0;
}
