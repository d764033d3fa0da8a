// A K split's slices added in slice order, for a family whose gt_gemm writes raw partial sums of C (S x L, S the
// small side: M with SIDE 0, N with SIDE 1) to a workspace of its own layout: GT_SLICE_HEAD floats whose first
// holds the slice count, then the slices, each S x L floats (s major) rounded up to 4. The template defines SIDE
// before including it; templates/skinnyr3.cu does. (skinny.cu and skinnyr.cu keep their own copies of the same
// reduce: their text is part of every stored kernel's id, so moving them here would make every stored skinny and
// skinnyr winner stale.) Launched after gt_gemm on its stream, on sm_90 before gt_gemm has finished: it waits
// for it first (pdl.cuh).
#ifndef GT_SLICESUM_CUH
#define GT_SLICESUM_CUH

#include "pdl.cuh"

#define GT_SLICE_HEAD 64 // floats before the slices in the workspace (the slice count)

// Floats from one slice to the next: S L rounded up to 4 (the reduce's 16-byte reads).
__device__ __forceinline__ size_t gt_slice_floats(int S, int L) { return ((size_t)S * L + 3) / 4 * 4; }

// C(s, l) = alpha v + beta C(s, l), C not read where beta == 0 (it may hold NaN).
__device__ __forceinline__ void gt_slice_put(float *C, int ldc, int s, int l, float v, float alpha, float beta)
{
    float *c = C + (SIDE == 0 ? (size_t)s * ldc + l : (size_t)l * ldc + s);
    *c = beta == 0.0f ? alpha * v : fmaf(beta, *c, alpha * v);
}

// One thread per four elements of C (in the order of a slice): the slices added in the order z = 0, 1, ..., then
// alpha and beta.
extern "C" __global__ void gt_splitk_reduce(int M, int N, float alpha, const float *__restrict__ ws, float beta,
                                            float *__restrict__ C, int ldc)
{
    gt_wait_gemm();
    const int S = SIDE ? N : M, L = SIDE ? M : N;
    const size_t e = 4 * ((size_t)blockIdx.x * blockDim.x + threadIdx.x), n = (size_t)S * L;
    const size_t stride = gt_slice_floats(S, L);
    if (e >= n) return;
    const unsigned z = *(const unsigned *)ws;
    const float4 *p = (const float4 *)(ws + GT_SLICE_HEAD + e);
    float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll 8
    for (unsigned i = 0; i < z; ++i) {
        const float4 v = p[i * (stride / 4)];
        sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
    }
    const float out[4] = {sum.x, sum.y, sum.z, sum.w};
    int r = (int)(e / L), l = (int)(e - (size_t)r * L); // one division a thread (64-bit: dozens of instructions)
#pragma unroll
    for (int i = 0; i < 4; ++i, ++l) {
        if (l == L) ++r, l = 0;
        if (e + i < n) gt_slice_put(C, ldc, r, l, out[i], alpha, beta);
    }
}

#endif
