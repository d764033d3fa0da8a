// Test-only family: a plain GEMM that reads its operands from the parameters its launch hook appends
// (tests/families/hook.c, layout in hook.h), not from gt_gemm's own, so it is right only when the hook saw the
// call and its parameters reached the kernel in order.
// Alone: nvcc -arch=sm_90 -cubin -I templates tests/families/test_hook.cu
#include "common.cuh"

#ifndef CLUSTER
#define CLUSTER 0 // blocks per cluster along x the hook launches it in (0: no cluster)
#endif
#define HOOK_MAGIC 0x600dcafeu // GT_TEST_HOOK_MAGIC

struct hook_view { // gt_test_hook_view
    const float *A, *B;
    float *C;
    long long lda, ldb, ldc;
    unsigned long long stream;
    int m, n, k;
};

extern "C" __global__ void __launch_bounds__(256) gt_gemm(GT_GEMM_ARGS, const hook_view v, const unsigned magic)
{
    (void)A; (void)lda; (void)B; (void)ldb; (void)C; (void)ldc; (void)ws;
    const int i = blockIdx.y * 16 + threadIdx.y, j = blockIdx.x * 16 + threadIdx.x;
    bool ok = magic == HOOK_MAGIC && v.m == M && v.n == N && v.k == K;
#if CLUSTER > 1
    unsigned ranks;
    asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(ranks));
    ok = ok && ranks == CLUSTER;
#endif
    if (i >= v.m || j >= v.n) return;
    float acc = 0.0f;
    for (int k = 0; k < v.k; ++k)
        acc = fmaf(GT_TA ? v.A[(size_t)k * v.lda + i] : v.A[(size_t)i * v.lda + k],
                   GT_TB ? v.B[(size_t)j * v.ldb + k] : v.B[(size_t)k * v.ldb + j], acc);
    float *c = v.C + (size_t)i * v.ldc + j;
    *c = !ok ? __int_as_float(0x7fc00000) : beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
}
