// Shared-memory tile loaders: the plain one of smem, tile1d and tile2d, and the one with a float4 fast path of vec4
// and warptile. The float4 path is taken per block only when the pointer and leading dimension allow it (a uniform
// branch) and per float4 only when all four elements are in range; everything else goes through guarded scalar
// loads, so any shape, ld and alignment computes correctly. Compiled with those templates (tests/test_families.c,
// tests/test_nvrtc.c).
#ifndef GT_TILEIO_CUH
#define GT_TILEIO_CUH

#include "common.cuh"

// One K tile of A and B, from kt to the end of the slice k1 at most, into the k-major shared tiles
// As[BK][>= BM] and Bs[BK][>= BN]; elements past an edge of the matrices or of the slice are zero. Consecutive
// threads walk each operand's contiguous dimension so global loads coalesce. The caller synchronizes.
template <int TBM, int TBN, int TBK, int TNT, int LDAS, int LDBS>
__device__ __forceinline__ void gt_load_tiles(float (*As)[LDAS], float (*Bs)[LDBS], const float *__restrict__ A,
                                              int lda, const float *__restrict__ B, int ldb, int M, int N, int bm0,
                                              int bn0, int kt, int k1, int tid)
{
#pragma unroll
    for (int e = tid; e < TBM * TBK; e += TNT) {
        const int i = GT_TA ? e % TBM : e / TBK, kk = GT_TA ? e / TBM : e % TBK;
        const int gi = bm0 + i, gk = kt + kk;
        As[kk][i] = (gi < M && gk < k1) ? GT_A(gi, gk) : 0.0f;
    }
#pragma unroll
    for (int e = tid; e < TBK * TBN; e += TNT) {
        const int j = GT_TB ? e / TBK : e % TBN, kk = GT_TB ? e % TBK : e / TBN;
        const int gj = bn0 + j, gk = kt + kk;
        Bs[kk][j] = (gj < N && gk < k1) ? GT_B(gk, gj) : 0.0f;
    }
}

// Four consecutive floats from p, the first at index lo of a dimension that ends at hi, in row r of rn: one float4
// when vec (p is 16-byte aligned) and all four are in range, else guarded scalar loads, zero outside.
__device__ __forceinline__ float4 gt_load4(const float *p, bool vec, int r, int rn, int lo, int hi)
{
    float4 v;
    if (vec && r < rn && lo + 3 < hi) {
        v = *(const float4 *)p;
    } else {
        const bool in = r < rn;
        v.x = in && lo < hi ? p[0] : 0.0f;
        v.y = in && lo + 1 < hi ? p[1] : 0.0f;
        v.z = in && lo + 2 < hi ? p[2] : 0.0f;
        v.w = in && lo + 3 < hi ? p[3] : 0.0f;
    }
    return v;
}

// An operand's tile [d0, d0+TD) x [kt, kt+TBK) into S, stored k-major (S[k*LDS + d]); zero outside [0,D) x [kt,k1).
// d runs along M for A and N for B. KCONTIG: k is the operand's contiguous dimension (A without GT_TA, B with
// GT_TB): X(d, k) = X[d*ld + k] and a float4 is four k of one d, scattered into four rows of S; otherwise
// X(d, k) = X[k*ld + d] and a float4 is four d at one k, already in S's order. kt is a multiple of 4 (tiles and
// split-K slices are multiples of TBK, itself a multiple of 4). vec: GT_VEC_OK(4, X, ld).
template <int TD, int TBK, int LDS, int NT, bool KCONTIG>
__device__ __forceinline__ void gt_load_tile(float *S, const float *__restrict__ X, int ld, int D, int d0, int kt,
                                             int k1, bool vec, int tid)
{
    constexpr int COUNT = TD * TBK / 4, ROUNDS = (COUNT + NT - 1) / NT;
#pragma unroll
    for (int r = 0; r < ROUNDS; ++r) {
        const int e = tid + r * NT;
        if (COUNT % NT != 0 && e >= COUNT) break;
        if constexpr (KCONTIG) {
            const int d = e / (TBK / 4), k = (e % (TBK / 4)) * 4;
            const int gd = d0 + d, gk = kt + k;
            const float4 v = gt_load4(X + (size_t)gd * ld + gk, vec, gd, D, gk, k1);
            S[(k + 0) * LDS + d] = v.x;
            S[(k + 1) * LDS + d] = v.y;
            S[(k + 2) * LDS + d] = v.z;
            S[(k + 3) * LDS + d] = v.w;
        } else {
            const int k = e / (TD / 4), d = (e % (TD / 4)) * 4;
            const int gd = d0 + d, gk = kt + k;
            *(float4 *)&S[k * LDS + d] = gt_load4(X + (size_t)gk * ld + gd, vec, gk, k1, gd, D);
        }
    }
}

// op(A)[bm0, bm0+TBM) x [kt, kt+TBK) into As (As[k*LDS + i]) and op(B)[kt, kt+TBK) x [bn0, bn0+TBN) into Bs
// (Bs[k*LDS + j]): gt_load_tile for each operand's layout.
template <int TBM, int TBK, int LDS, int NT>
__device__ __forceinline__ void gt_load_a(float *As, const float *__restrict__ A, int lda, int M, int bm0, int kt,
                                          int k1, bool vec, int tid)
{
    gt_load_tile<TBM, TBK, LDS, NT, !GT_TA>(As, A, lda, M, bm0, kt, k1, vec, tid);
}
template <int TBN, int TBK, int LDS, int NT>
__device__ __forceinline__ void gt_load_b(float *Bs, const float *__restrict__ B, int ldb, int N, int bn0, int kt,
                                          int k1, bool vec, int tid)
{
    gt_load_tile<TBN, TBK, LDS, NT, (bool)GT_TB>(Bs, B, ldb, N, bn0, kt, k1, vec, tid);
}

#endif
