// 2D thread tile (seed 000): each block computes BM x BN of C through BK-deep shared-memory tiles, each thread a
// TM x TN sub-tile held in registers. Edges are zero-filled on load and guarded on store, so any M, N, K works.
// Alone: nvcc -arch=sm_90 -cubin -I templates templates/tile2d.cu
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
#ifndef TN
#define TN 8 // columns of C per thread
#endif

#define NT ((BM / TM) * (BN / TN)) // threads per block

extern "C" __global__ void __launch_bounds__(NT) gt_gemm(GT_GEMM_ARGS)
{
    GT_BATCH_OFFSET();
    __shared__ float As[BK][BM]; // A tile stored k-major so a thread's TM values are contiguous
    __shared__ float Bs[BK][BN];
    const int tid = threadIdx.x;
    const int bm0 = blockIdx.y * BM, bn0 = blockIdx.x * BN;
    const int tr = tid / (BN / TN), tc = tid % (BN / TN);
    int k0, k1;
    gt_k_range(K, BK, &k0, &k1);

    float acc[TM][TN];
#pragma unroll
    for (int m = 0; m < TM; ++m)
#pragma unroll
        for (int n = 0; n < TN; ++n) acc[m][n] = 0.0f;

    for (int kt = k0; kt < k1; kt += BK) {
        gt_load_tiles<BM, BN, BK, NT>(As, Bs, A, lda, B, ldb, M, N, bm0, bn0, kt, k1, tid);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float a[TM], b[TN];
#pragma unroll
            for (int m = 0; m < TM; ++m) a[m] = As[kk][tr * TM + m];
#pragma unroll
            for (int n = 0; n < TN; ++n) b[n] = Bs[kk][tc * TN + n];
#pragma unroll
            for (int m = 0; m < TM; ++m)
#pragma unroll
                for (int n = 0; n < TN; ++n) acc[m][n] = fmaf(a[m], b[n], acc[m][n]);
        }
        __syncthreads();
    }

#pragma unroll
    for (int m = 0; m < TM; ++m) {
        const int i = bm0 + tr * TM + m;
#pragma unroll
        for (int n = 0; n < TN; ++n) {
            const int j = bn0 + tc * TN + n;
            if (i < M && j < N) gt_out(M, N, C, ldc, ws, i, j, acc[m][n], alpha, beta);
        }
    }
}
