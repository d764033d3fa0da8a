// 1D thread tile (seed 002): each thread computes TM consecutive rows of one column of C, reusing each B value
// from shared memory TM times. A is stored k-major in shared memory so a thread's TM values are contiguous.
// Loads walk each operand's contiguous dimension and zero-fill at edges; stores are guarded.
// Alone: nvcc -arch=sm_90 -cubin -I templates templates/tile1d.cu
#include "common.cuh"
#include "epilogue.cuh"
#include "tileio.cuh"

#ifndef BM
#define BM 64 // rows of C per block
#endif
#ifndef BN
#define BN 64 // columns of C per block
#endif
#ifndef BK
#define BK 8 // K depth of one shared-memory tile
#endif
#ifndef TM
#define TM 8 // rows of C per thread
#endif

#define NT ((BM / TM) * BN) // threads per block

extern "C" __global__ void __launch_bounds__(NT) gt_gemm(GT_GEMM_ARGS)
{
    GT_BATCH_OFFSET();
    __shared__ float As[BK][BM + 1]; // the pad keeps the transposing stores off one bank
    __shared__ float Bs[BK][BN + 1];
    const int tid = threadIdx.x, tr = tid / BN, tc = tid % BN;
    const int bm0 = blockIdx.y * BM, bn0 = blockIdx.x * BN;
    int k0, k1;
    gt_k_range(K, BK, &k0, &k1);

    float acc[TM];
#pragma unroll
    for (int m = 0; m < TM; ++m) acc[m] = 0.0f;

    for (int kt = k0; kt < k1; kt += BK) {
        gt_load_tiles<BM, BN, BK, NT>(As, Bs, A, lda, B, ldb, M, N, bm0, bn0, kt, k1, tid);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            const float b = Bs[kk][tc];
#pragma unroll
            for (int m = 0; m < TM; ++m) acc[m] = fmaf(As[kk][tr * TM + m], b, acc[m]);
        }
        __syncthreads();
    }
    const int j = bn0 + tc;
#pragma unroll
    for (int m = 0; m < TM; ++m) {
        const int i = bm0 + tr * TM + m;
        if (i < M && j < N) gt_out(M, N, C, ldc, ws, i, j, acc[m], alpha, beta);
    }
}
