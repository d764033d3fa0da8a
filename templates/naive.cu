// Naive (seed 004, seed 003 v1): one thread per C element, a plain dot product over K from global memory.
// threadIdx.x walks rows of C as in the seeds, so a warp's B reads and C writes are strided (the baseline the
// later families improve on). Blocks are numbered on a 1-D grid, so any M, N fits the grid limits; the guard
// on (i, j) handles edges. Alone: nvcc -arch=sm_90 -cubin -I templates templates/naive.cu
#include "common.cuh"
#include "epilogue.cuh"

#ifndef BX
#define BX 32 // threads per block along rows of C (threadIdx.x)
#endif
#ifndef BY
#define BY 32 // threads per block along columns of C (threadIdx.y)
#endif
#ifndef KU
#define KU 1 // unroll factor of the K loop
#endif

extern "C" __global__ void __launch_bounds__(BX * BY) gt_gemm(GT_GEMM_ARGS)
{
    GT_BATCH_OFFSET();
    const int tiles_m = (M + BX - 1) / BX;
    const int i = (int)(blockIdx.x % tiles_m) * BX + threadIdx.x;
    const int j = (int)(blockIdx.x / tiles_m) * BY + threadIdx.y;
    if (i >= M || j >= N) return;
    gt_out(M, N, C, ldc, ws, i, j, gt_dot<KU>(A, lda, B, ldb, i, j, K), alpha, beta);
}
