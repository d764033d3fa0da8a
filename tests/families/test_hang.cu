// Test-only family: a kernel that never returns, so tests can prove the tuner's watchdog kills it
// (never enumerated for sweeps; tests/families/broken.c). Alone: nvcc -arch=sm_90 -cubin -I templates tests/families/test_hang.cu
#include "common.cuh"

#ifndef BX
#define BX 32 // threads per block
#endif

extern "C" __global__ void __launch_bounds__(BX) gt_gemm(GT_GEMM_ARGS)
{
    (void)M; (void)N; (void)K; (void)alpha; (void)A; (void)lda; (void)B; (void)ldb; (void)beta; (void)ws;
    // A volatile load each turn keeps the loop (an empty infinite loop may be removed); C is never written.
    volatile const float *c = C;
    for (;;) {
        if (c[0] != c[0] && c[0] == 1.0f) break; // never true, even for NaN
        __nanosleep(1000);
    }
}
