// Test-only family: a kernel that faults with an illegal address, so tests can prove the tuner isolates it
// (never enumerated for sweeps; tests/families/broken.c). Alone: nvcc -arch=sm_90 -cubin -I templates tests/families/test_oob.cu
#include "common.cuh"

#ifndef BX
#define BX 32 // threads per block
#endif

extern "C" __global__ void __launch_bounds__(BX) gt_gemm(GT_GEMM_ARGS)
{
    (void)K; (void)alpha; (void)A; (void)lda; (void)B; (void)ldb; (void)beta; (void)ws;
    // The null page is never mapped; volatile keeps the store, and M, N, ldc keep the address a run-time value.
    volatile float *bad = (volatile float *)(unsigned long long)(256u + ((unsigned)(M | N | ldc) & 0u));
    bad[threadIdx.x] = 1.0f;
    // Far past the end of C as well, in case a platform ever maps low addresses.
    ((volatile float *)C)[((size_t)1 << 40) + threadIdx.x] = 2.0f;
}
