// Warp tiling (seed 003 v6): a block of NTHREADS computes BM x BN of C; each warp owns a WM x WN piece, swept in
// WMITER x WNITER steps of (WM/WMITER) x (WN/WNITER), where each lane holds TM x TN accumulators. Loads and stores
// are those of vec4 (tileio.cuh: float4 when aligned, scalar and zero-filled at edges). SPLITK slices K across
// blockIdx.z (partial sums to ws, reduced by gt_splitk_reduce); SWZ groups block rows so neighbours share L2.
// Alone: nvcc -arch=sm_90 -cubin -I templates templates/warptile.cu
#include "common.cuh"
#include "epilogue.cuh"
#include "raster.cuh"
#include "tileio.cuh"

#ifndef BM
#define BM 128 // rows of C per block
#endif
#ifndef BN
#define BN 128 // columns of C per block
#endif
#ifndef BK
#define BK 16 // K depth of one shared-memory tile (multiple of 4)
#endif
#ifndef WM
#define WM 64 // rows of C per warp
#endif
#ifndef WN
#define WN 64 // columns of C per warp
#endif
#ifndef WNITER
#define WNITER 4 // column steps a warp takes over its WN columns
#endif
#ifndef TM
#define TM 8 // rows of C per lane per step (multiple of 4)
#endif
#ifndef TN
#define TN 4 // columns of C per lane per step (multiple of 4)
#endif
#ifndef NTHREADS
#define NTHREADS 128 // threads per block: 32 * (BM / WM) * (BN / WN)
#endif
#ifndef SWZ
#define SWZ 1 // block rows per rasterisation group (1: plain row-major block order)
#endif

#define WMITER ((WM * WN) / (32 * TM * TN * WNITER)) // row steps a warp takes over its WM rows
#define WSUBM (WM / WMITER)                            // rows of one warp step
#define WSUBN (WN / WNITER)                            // columns of one warp step
#define LDA_S (BM + 4)                                 // pads spread the transposing stores over banks
#define LDB_S (BN + 4)

#if NTHREADS != 32 * (BM / WM) * (BN / WN) || (WSUBM / TM) * (WSUBN / TN) != 32 || WSUBM % TM || WSUBN % TN
#error "inconsistent warptile parameters (kernels/warptile.c rejects these)"
#endif

// Block tile (row, column) of this block on the tiles_m x tiles_n grid (gridDim.y x gridDim.x); with SWZ > 1
// consecutive blocks walk down a group of SWZ block rows before moving right, so the B columns they load stay in L2
// (raster.cuh).
__device__ __forceinline__ void block_tile(int *bmi, int *bni)
{
#if SWZ > 1
    gt_raster<SWZ>(blockIdx.y * gridDim.x + blockIdx.x, gridDim.y, gridDim.x, bmi, bni);
#else
    *bmi = blockIdx.y;
    *bni = blockIdx.x;
#endif
}

extern "C" __global__ void __launch_bounds__(NTHREADS) gt_gemm(GT_GEMM_ARGS)
{
    GT_BATCH_OFFSET();
    __shared__ __align__(16) float As[BK * LDA_S];
    __shared__ __align__(16) float Bs[BK * LDB_S];
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    int bmi, bni;
    block_tile(&bmi, &bni);
    const int bm0 = bmi * BM, bn0 = bni * BN;
    const int wr = warp / (BN / WN), wc = warp % (BN / WN);         // warp's place in the block tile
    const int tr = lane / (WSUBN / TN), tc = lane % (WSUBN / TN);   // lane's place in one warp step
    const int row0 = wr * WM + tr * TM, col0 = wc * WN + tc * TN;   // lane's first element, block-relative
    const bool va = GT_VEC_OK(4, A, lda), vb = GT_VEC_OK(4, B, ldb), vc = GT_VEC_OK(4, C, ldc);
    int k0, k1;
    gt_k_range(K, BK, &k0, &k1);

    float acc[WMITER * TM][WNITER * TN];
#pragma unroll
    for (int m = 0; m < WMITER * TM; ++m)
#pragma unroll
        for (int n = 0; n < WNITER * TN; ++n) acc[m][n] = 0.0f;

    for (int kt = k0; kt < k1; kt += BK) {
        gt_load_a<BM, BK, LDA_S, NTHREADS>(As, A, lda, M, bm0, kt, k1, va, tid);
        gt_load_b<BN, BK, LDB_S, NTHREADS>(Bs, B, ldb, N, bn0, kt, k1, vb, tid);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            float a[WMITER * TM], b[WNITER * TN];
#pragma unroll
            for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
                for (int m = 0; m < TM; m += 4)
                    *(float4 *)&a[wm * TM + m] = *(const float4 *)&As[kk * LDA_S + row0 + wm * WSUBM + m];
#pragma unroll
            for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
                for (int n = 0; n < TN; n += 4)
                    *(float4 *)&b[wn * TN + n] = *(const float4 *)&Bs[kk * LDB_S + col0 + wn * WSUBN + n];
#pragma unroll
            for (int m = 0; m < WMITER * TM; ++m)
#pragma unroll
                for (int n = 0; n < WNITER * TN; ++n) acc[m][n] = fmaf(a[m], b[n], acc[m][n]);
        }
        __syncthreads();
    }

#pragma unroll
    for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
        for (int m = 0; m < TM; ++m)
#pragma unroll
            for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
                for (int n = 0; n < TN; n += 4) {
                    const float *v = &acc[wm * TM + m][wn * TN + n];
                    const float x[4] = {v[0], v[1], v[2], v[3]};
                    gt_store<4, GT_EPI_CONTRACT>(M, N, C, ldc, ws, bm0 + row0 + wm * WSUBM + m,
                                               bn0 + col0 + wn * WSUBN + n, x, alpha, beta, vc);
                }
}
