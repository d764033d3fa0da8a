/* What the cuBLAS drop-in adds per call over calling gemmtune_sgemm directly, in one process: the same tiny
 * column-major SGEMM on the same stream, 10000 calls each way in alternating rounds of 500, timed on the host
 * without a synchronisation per call (the GPU queue never fills within a round). Run under the preload with
 * GEMMTUNE_FALLBACK=default so both paths run the same built-in kernel (tests/preload/run_check.sh):
 *   GEMMTUNE_FALLBACK=default LD_PRELOAD=build/libgemmtune_cublas.so build/preload_overhead [--max-us 1.0]
 * Without the preload the cuBLAS column is the real cuBLAS, for comparison. */
#include "gemmtune.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { N = 32, ROUNDS = 20, PER_ROUND = 500 };

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

typedef struct {
    gemmtune_handle g;
    cublasHandle_t c;
    cudaStream_t s;
    float *A, *B, *C;
} setup;

/* One round of PER_ROUND calls one way; returns microseconds per call, or -1 when a call failed. */
static double round_us(const setup *x, int via_cublas)
{
    const float one = 1.0f, zero = 0.0f;
    int bad = 0;
    double t0 = now_us();
    for (int i = 0; i < PER_ROUND; ++i) {
        if (via_cublas)
            bad |= cublasSgemm(x->c, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, x->A, N, x->B, N, &zero, x->C, N) != 0;
        else
            bad |= gemmtune_sgemm(x->g, x->s, GEMMTUNE_OP_N, GEMMTUNE_OP_N, N, N, N, one, x->A, N, x->B, N, zero, x->C,
                                  N) != 0;
    }
    double t = (now_us() - t0) / PER_ROUND;
    cudaStreamSynchronize(x->s); /* outside the timed loop: the next round starts on an empty queue */
    return bad ? -1 : t;
}

static int make_setup(setup *x)
{
    gemmtune_options o;
    gemmtune_options_init(&o);
    o.column_major = 1;
    o.fallback = GEMMTUNE_FALLBACK_DEFAULT;
    if (cudaStreamCreateWithFlags(&x->s, cudaStreamNonBlocking) || cudaMalloc((void **)&x->A, N * N * 4) ||
        cudaMalloc((void **)&x->B, N * N * 4) || cudaMalloc((void **)&x->C, N * N * 4))
        return fprintf(stderr, "overhead: CUDA setup failed\n"), -1;
    cudaMemset(x->A, 0, N * N * 4), cudaMemset(x->B, 0, N * N * 4);
    if (gemmtune_create(&x->g, &o))
        return fprintf(stderr, "overhead: gemmtune_create: %s\n", gemmtune_last_error()), -1;
    if (cublasCreate(&x->c) || cublasSetStream(x->c, x->s)) return fprintf(stderr, "overhead: cublasCreate failed\n"), -1;
    return 0;
}

int main(int argc, char **argv)
{
    double max_us = argc >= 3 && !strcmp(argv[1], "--max-us") ? atof(argv[2]) : -1;
    setup x;
    if (make_setup(&x)) return 1;
    for (int w = 0; w < 2; ++w) round_us(&x, 0), round_us(&x, 1); /* plans made, kernels loaded, clocks up */
    double direct[ROUNDS], via[ROUNDS];
    for (int r = 0; r < ROUNDS; ++r) {
        const int first = r % 2; /* alternate which way goes first */
        const double t0 = round_us(&x, first), t1 = round_us(&x, !first);
        direct[r] = first ? t1 : t0, via[r] = first ? t0 : t1;
        if (direct[r] < 0 || via[r] < 0) return fprintf(stderr, "overhead: a call failed\n"), 1;
    }
    qsort(direct, ROUNDS, sizeof(double), cmp_double);
    qsort(via, ROUNDS, sizeof(double), cmp_double);
    double d = direct[ROUNDS / 2], v = via[ROUNDS / 2];
    int ok = max_us < 0 || v - d <= max_us;
    printf("overhead: gemmtune_sgemm %.3f us/call, cublasSgemm_v2 %.3f us/call, difference %+.3f us/call "
           "(%dx%dx%d, median of %d rounds of %d calls each way)%s\n", d, v, v - d, N, N, N, ROUNDS, PER_ROUND,
           max_us < 0 ? "" : ok ? " PASS" : " FAIL");
    gemmtune_destroy(x.g);
    cublasDestroy(x.c);
    return ok ? 0 : 1;
}
