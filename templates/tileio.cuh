// Shared-memory tile loaders with a float4 fast path, and a four-wide epilogue, for vec4.cu and warptile.cu.
// The float4 path is taken per block only when the pointer and leading dimension allow it (a uniform branch) and
// per float4 only when all four elements are in range; everything else goes through guarded scalar loads, so any
// shape, ld and alignment computes correctly. Compiled with those templates (tests/test_families.c, test_nvrtc.c).
#ifndef GT_TILEIO_CUH
#define GT_TILEIO_CUH

#include "common.cuh"

// 1 when p is 16-byte aligned and every row start p + r*ld is too: float4 along the contiguous dimension is legal.
__device__ __forceinline__ bool gt_vec_ok(const float *p, int ld)
{
    return (((unsigned long long)p & 15ull) == 0) && (ld & 3) == 0;
}

// op(A)[bm0, bm0+TBM) x [kt, kt+TBK) into As, stored k-major (As[k*LDS + i]); zero outside [0,M) x [kt,k1).
// kt is a multiple of 4 (tiles and split-K slices are multiples of TBK, itself a multiple of 4).
template <int TBM, int TBK, int LDS, int NT>
__device__ __forceinline__ void gt_load_a(float *As, const float *__restrict__ A, int lda, int M, int bm0, int kt,
                                          int k1, bool vec, int tid)
{
    constexpr int COUNT = TBM * TBK / 4, ROUNDS = (COUNT + NT - 1) / NT;
#pragma unroll
    for (int r = 0; r < ROUNDS; ++r) {
        const int e = tid + r * NT;
        if (COUNT % NT != 0 && e >= COUNT) break;
#if GT_TA == 0
        // A rows run along k: a float4 is four k of one row, scattered into four rows of As.
        const int i = e / (TBK / 4), k = (e % (TBK / 4)) * 4;
        const int gi = bm0 + i, gk = kt + k;
        const float *p = A + (size_t)gi * lda + gk;
        float4 v;
        if (vec && gi < M && gk + 3 < k1) {
            v = *(const float4 *)p;
        } else {
            const bool in = gi < M;
            v.x = in && gk < k1 ? p[0] : 0.0f;
            v.y = in && gk + 1 < k1 ? p[1] : 0.0f;
            v.z = in && gk + 2 < k1 ? p[2] : 0.0f;
            v.w = in && gk + 3 < k1 ? p[3] : 0.0f;
        }
        As[(k + 0) * LDS + i] = v.x;
        As[(k + 1) * LDS + i] = v.y;
        As[(k + 2) * LDS + i] = v.z;
        As[(k + 3) * LDS + i] = v.w;
#else
        // A stored K x M: a float4 is four rows i at one k, already in As's order.
        const int k = e / (TBM / 4), i = (e % (TBM / 4)) * 4;
        const int gi = bm0 + i, gk = kt + k;
        const float *p = A + (size_t)gk * lda + gi;
        float4 v;
        if (vec && gk < k1 && gi + 3 < M) {
            v = *(const float4 *)p;
        } else {
            const bool in = gk < k1;
            v.x = in && gi < M ? p[0] : 0.0f;
            v.y = in && gi + 1 < M ? p[1] : 0.0f;
            v.z = in && gi + 2 < M ? p[2] : 0.0f;
            v.w = in && gi + 3 < M ? p[3] : 0.0f;
        }
        *(float4 *)&As[k * LDS + i] = v;
#endif
    }
}

// op(B)[kt, kt+TBK) x [bn0, bn0+TBN) into Bs (Bs[k*LDS + j]); zero outside [kt,k1) x [0,N).
template <int TBN, int TBK, int LDS, int NT>
__device__ __forceinline__ void gt_load_b(float *Bs, const float *__restrict__ B, int ldb, int N, int bn0, int kt,
                                          int k1, bool vec, int tid)
{
    constexpr int COUNT = TBN * TBK / 4, ROUNDS = (COUNT + NT - 1) / NT;
#pragma unroll
    for (int r = 0; r < ROUNDS; ++r) {
        const int e = tid + r * NT;
        if (COUNT % NT != 0 && e >= COUNT) break;
#if GT_TB == 0
        // B rows run along j: a float4 is four columns at one k, already in Bs's order.
        const int k = e / (TBN / 4), j = (e % (TBN / 4)) * 4;
        const int gj = bn0 + j, gk = kt + k;
        const float *p = B + (size_t)gk * ldb + gj;
        float4 v;
        if (vec && gk < k1 && gj + 3 < N) {
            v = *(const float4 *)p;
        } else {
            const bool in = gk < k1;
            v.x = in && gj < N ? p[0] : 0.0f;
            v.y = in && gj + 1 < N ? p[1] : 0.0f;
            v.z = in && gj + 2 < N ? p[2] : 0.0f;
            v.w = in && gj + 3 < N ? p[3] : 0.0f;
        }
        *(float4 *)&Bs[k * LDS + j] = v;
#else
        // B stored N x K: a float4 is four k of one column, scattered into four rows of Bs.
        const int j = e / (TBK / 4), k = (e % (TBK / 4)) * 4;
        const int gj = bn0 + j, gk = kt + k;
        const float *p = B + (size_t)gj * ldb + gk;
        float4 v;
        if (vec && gj < N && gk + 3 < k1) {
            v = *(const float4 *)p;
        } else {
            const bool in = gj < N;
            v.x = in && gk < k1 ? p[0] : 0.0f;
            v.y = in && gk + 1 < k1 ? p[1] : 0.0f;
            v.z = in && gk + 2 < k1 ? p[2] : 0.0f;
            v.w = in && gk + 3 < k1 ? p[3] : 0.0f;
        }
        Bs[(k + 0) * LDS + j] = v.x;
        Bs[(k + 1) * LDS + j] = v.y;
        Bs[(k + 2) * LDS + j] = v.z;
        Bs[(k + 3) * LDS + j] = v.w;
#endif
    }
}

// C(i, j..j+3) from four accumulators; j % 4 == 0. vec (gt_vec_ok(C, ldc)) allows one float4 read and write.
__device__ __forceinline__ void gt_out4(int M, int N, float *__restrict__ C, int ldc, float *__restrict__ ws, int i,
                                        int j, float4 v, float alpha, float beta, bool vec)
{
    if (i >= M) return;
#if SPLITK > 1
    // ws rows are N floats: float4 stores need N % 4 == 0 and a 16-byte aligned workspace.
    float *w = ws + ((size_t)blockIdx.z * M + i) * N + j;
    if ((N & 3) == 0 && (((unsigned long long)ws & 15ull) == 0) && j + 3 < N) {
        *(float4 *)w = v;
        return;
    }
#else
    if (vec && j + 3 < N) {
        float4 *c = (float4 *)(C + (size_t)i * ldc + j);
        if (beta == 0.0f) {
            v.x *= alpha, v.y *= alpha, v.z *= alpha, v.w *= alpha;
        } else {
            const float4 o = *c;
            v.x = alpha * v.x + beta * o.x;
            v.y = alpha * v.y + beta * o.y;
            v.z = alpha * v.z + beta * o.z;
            v.w = alpha * v.w + beta * o.w;
        }
        *c = v;
        return;
    }
#endif
    if (j < N) gt_out(M, N, C, ldc, ws, i, j, v.x, alpha, beta);
    if (j + 1 < N) gt_out(M, N, C, ldc, ws, i, j + 1, v.y, alpha, beta);
    if (j + 2 < N) gt_out(M, N, C, ldc, ws, i, j + 2, v.z, alpha, beta);
    if (j + 3 < N) gt_out(M, N, C, ldc, ws, i, j + 3, v.w, alpha, beta);
}

#endif
