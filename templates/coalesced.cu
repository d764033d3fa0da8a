// Coalesced (seed 001 matmul_v0): one thread per C element, with consecutive threads on consecutive columns j,
// so a warp's C writes and (untransposed) B reads are contiguous and its A reads are one broadcast address.
// A block covers BM rows x BN columns on a 1-D grid (any M, N fits); the guard on (i, j) handles edges.
// Alone: nvcc -arch=sm_90 -cubin -I templates templates/coalesced.cu
#include "common.cuh"
#include "epilogue.cuh"

#ifndef BM
#define BM 8 // rows of C per block
#endif
#ifndef BN
#define BN 32 // columns of C per block, consecutive threads
#endif
#ifndef KU
#define KU 1 // unroll factor of the K loop
#endif

extern "C" __global__ void __launch_bounds__(BM * BN) gt_gemm(GT_GEMM_ARGS)
{
    GT_BATCH_OFFSET();
    const int tiles_n = (N + BN - 1) / BN;
    const int i = (int)(blockIdx.x / tiles_n) * BM + (int)threadIdx.x / BN;
    const int j = (int)(blockIdx.x % tiles_n) * BN + (int)threadIdx.x % BN;
    if (i >= M || j >= N) return;
    gt_out(M, N, C, ldc, ws, i, j, gt_dot<KU>(A, lda, B, ldb, i, j, K), alpha, beta);
}
