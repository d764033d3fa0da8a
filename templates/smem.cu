// Shared-memory tiling (seed 004, seed 003 v2, seed 001 v1): a block of BM x BN threads, one C element each,
// stages BK-deep tiles of A and B in shared memory. Loads walk each operand's contiguous dimension (coalesced in
// all four layouts) and zero-fill outside M, N and K, so any shape works; stores are guarded.
// Alone: nvcc -arch=sm_90 -cubin -I templates templates/smem.cu
#include "common.cuh"
#include "epilogue.cuh"
#include "tileio.cuh"

#ifndef BM
#define BM 16 // rows of C per block
#endif
#ifndef BN
#define BN 16 // columns of C per block
#endif
#ifndef BK
#define BK 16 // K depth of one shared-memory tile
#endif

#define NT (BM * BN) // threads per block, one per C element

extern "C" __global__ void __launch_bounds__(NT) gt_gemm(GT_GEMM_ARGS)
{
    GT_BATCH_OFFSET();
    __shared__ float As[BK][BM + 1]; // k-major; the pad keeps the transposing stores off one bank
    __shared__ float Bs[BK][BN + 1];
    const int tid = threadIdx.x, ty = tid / BN, tx = tid % BN;
    const int tiles_n = (N + BN - 1) / BN;
    const int bm0 = (int)(blockIdx.x / tiles_n) * BM, bn0 = (int)(blockIdx.x % tiles_n) * BN;
    int k0, k1;
    gt_k_range(K, BK, &k0, &k1);

    float acc = 0.0f;
    for (int kt = k0; kt < k1; kt += BK) {
        gt_load_tiles<BM, BN, BK, NT>(As, Bs, A, lda, B, ldb, M, N, bm0, bn0, kt, k1, tid);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) acc = fmaf(As[kk][ty], Bs[kk][tx], acc);
        __syncthreads();
    }
    const int i = bm0 + ty, j = bn0 + tx;
    if (i < M && j < N) gt_out(M, N, C, ldc, ws, i, j, acc, alpha, beta);
}
