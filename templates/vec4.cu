// float4 tiles (seed 003 v5, seed 001 matmul_v3): the 2D thread tile of tile2d with float4 global loads, A stored
// k-major (transposed) in shared memory so each thread reads its TM rows and TN columns as float4, and float4 C
// stores. Misaligned pointers or ld % 4 != 0 take the scalar path (tileio.cuh), edges are zero-filled and guarded.
// Alone: nvcc -arch=sm_90 -cubin -I templates templates/vec4.cu
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
#define BK 8 // K depth of one shared-memory tile (multiple of 4)
#endif
#ifndef TM
#define TM 8 // rows of C per thread (multiple of 4)
#endif
#ifndef TN
#define TN 8 // columns of C per thread (multiple of 4)
#endif

#define NT ((BM / TM) * (BN / TN)) // threads per block
#define LDA_S (BM + 4)             // As row stride: the pad spreads the transposing stores over banks
#define LDB_S (BN + 4)

extern "C" __global__ void __launch_bounds__(NT) gt_gemm(GT_GEMM_ARGS)
{
    GT_BATCH_OFFSET();
    __shared__ __align__(16) float As[BK * LDA_S];
    __shared__ __align__(16) float Bs[BK * LDB_S];
    const int tid = threadIdx.x;
    const int bm0 = blockIdx.y * BM, bn0 = blockIdx.x * BN;
    const int tr = tid / (BN / TN), tc = tid % (BN / TN);
    const bool va = GT_VEC_OK(4, A, lda), vb = GT_VEC_OK(4, B, ldb), vc = GT_VEC_OK(4, C, ldc);
    int k0, k1;
    gt_k_range(K, BK, &k0, &k1);

    float acc[TM][TN];
#pragma unroll
    for (int m = 0; m < TM; ++m)
#pragma unroll
        for (int n = 0; n < TN; ++n) acc[m][n] = 0.0f;

    for (int kt = k0; kt < k1; kt += BK) {
        gt_load_a<BM, BK, LDA_S, NT>(As, A, lda, M, bm0, kt, k1, va, tid);
        gt_load_b<BN, BK, LDB_S, NT>(Bs, B, ldb, N, bn0, kt, k1, vb, tid);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float a[TM], b[TN];
#pragma unroll
            for (int m = 0; m < TM; m += 4) *(float4 *)&a[m] = *(const float4 *)&As[kk * LDA_S + tr * TM + m];
#pragma unroll
            for (int n = 0; n < TN; n += 4) *(float4 *)&b[n] = *(const float4 *)&Bs[kk * LDB_S + tc * TN + n];
#pragma unroll
            for (int m = 0; m < TM; ++m)
#pragma unroll
                for (int n = 0; n < TN; ++n) acc[m][n] = fmaf(a[m], b[n], acc[m][n]);
        }
        __syncthreads();
    }

#pragma unroll
    for (int m = 0; m < TM; ++m)
#pragma unroll
        for (int n = 0; n < TN; n += 4) {
            const float v[4] = {acc[m][n], acc[m][n + 1], acc[m][n + 2], acc[m][n + 3]};
            gt_store<4, GT_EPI_CONTRACT>(M, N, C, ldc, ws, bm0 + tr * TM + m, bn0 + tc * TN + n, v, alpha, beta, vc);
        }
}
