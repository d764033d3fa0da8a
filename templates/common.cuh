// Shared by every gemmtune template: the kernel contract, operand accessors, the plain dot product, the block and
// thread index, the alignment test and the split-K reduce. The other primitives have a header each: epilogue.cuh
// (the C store), tileio.cuh (tile loaders), raster.cuh (block order), async.cuh (cp.async), tf32.cuh (TF32 split and
// MMA). gemmtune renders `#define` lines for the tunables and the layout before a template; each tunable has a
// default here or in the template so a file also compiles alone:
//   nvcc -arch=sm_90 -cubin -I templates templates/tile2d.cu
//
// Contract (row-major): C[M x N] = alpha * op(A)[M x K] * op(B)[K x N] + beta * C
//   GT_TA = 0: A(i,k) = A[i*lda + k]     GT_TA = 1: A is stored K x M, A(i,k) = A[k*lda + i]
//   GT_TB = 0: B(k,j) = B[k*ldb + j]     GT_TB = 1: B is stored N x K, B(k,j) = B[j*ldb + k]
//   beta == 0 never reads C (C may hold NaN). Every M, N, K >= 1 is computed correctly.
//   A strided batch (GT_BATCHED) runs in one launch, grid z over its matrices (GT_BATCH_OFFSET).
//   With SPLITK > 1, blockIdx.z picks a K slice, gt_gemm writes raw partial sums to ws[z][M][N] and
//   gt_splitk_reduce adds the slices in a fixed order (deterministic) and applies alpha and beta.
#ifndef GT_COMMON_CUH
#define GT_COMMON_CUH

#ifndef GT_TA
#define GT_TA 0 // 1: A stored transposed (K x M)
#endif
#ifndef GT_TB
#define GT_TB 0 // 1: B stored transposed (N x K)
#endif
#ifndef SPLITK
#define SPLITK 1 // K slices reduced by gt_splitk_reduce
#endif

#ifndef GT_BATCHED
#define GT_BATCHED 0 // 1: gt_gemm runs a strided batch (rendered only for a shape whose batch is above 1)
#endif
#if GT_BATCHED && SPLITK > 1
#error "a batch walks grid z, which split-K slices K over: the host never asks for both (gt_family_launch)"
#endif

// A batched kernel also takes sa, sb, sc: a strided batch's distance, in elements, from one matrix of A, B and C to
// the next. They come last, so a launch passes the same arguments to every kernel (one GEMM's reads 12 of them),
// and one GEMM's source is exactly what it was before batches existed.
#if GT_BATCHED
#define GT_GEMM_ARGS                                                                                    \
    int M, int N, int K, float alpha, const float *__restrict__ A, int lda, const float *__restrict__ B, \
        int ldb, float beta, float *__restrict__ C, int ldc, float *__restrict__ ws, long long sa,       \
        long long sb, long long sc
// The first statement of every gt_gemm: a block of grid z works on matrix z of the batch.
#define GT_BATCH_OFFSET()                                                                               \
    do {                                                                                                \
        const long long z_ = blockIdx.z;                                                                \
        A += z_ * sa, B += z_ * sb, C += z_ * sc;                                                       \
    } while (0)
#else
#define GT_GEMM_ARGS                                                                                    \
    int M, int N, int K, float alpha, const float *__restrict__ A, int lda, const float *__restrict__ B, \
        int ldb, float beta, float *__restrict__ C, int ldc, float *__restrict__ ws
#define GT_BATCH_OFFSET() ((void)0)
#endif

// 1 when p is 4 * W-byte aligned and so is every row start p + r*ld: W-float vector accesses along a row are legal.
// A macro: written out in place, as the families had it (a call changes tf32x3wg's SASS).
#define GT_VEC_OK(W, p, ld) ((((unsigned long long)(p) & (4ull * (W) - 1)) == 0) && ((ld) & ((W) - 1)) == 0)

#define GT_A(i, k) (GT_TA ? A[(size_t)(k) * lda + (i)] : A[(size_t)(i) * lda + (k)])
#define GT_B(k, j) (GT_TB ? B[(size_t)(j) * ldb + (k)] : B[(size_t)(k) * ldb + (j)])

// The dot product of op(A)'s row i and op(B)'s column j over all of K, the K loop unrolled UNROLL times.
template <int UNROLL>
__device__ __forceinline__ float gt_dot(const float *__restrict__ A, int lda, const float *__restrict__ B, int ldb,
                                        int i, int j, int K)
{
    float acc = 0.0f;
#pragma unroll UNROLL
    for (int k = 0; k < K; ++k) acc = fmaf(GT_A(i, k), GT_B(k, j), acc);
    return acc;
}

// K range of this block's slice: [*k0, *k1). Slices are whole multiples of `step` so tiles never straddle two.
__device__ __forceinline__ void gt_k_range(int K, int step, int *k0, int *k1)
{
#if SPLITK > 1
    int per = (K + SPLITK - 1) / SPLITK;
    per = (per + step - 1) / step * step;
    *k0 = min(K, (int)blockIdx.z * per);
    *k1 = min(K, *k0 + per);
#else
    (void)step;
    *k0 = 0;
    *k1 = K;
#endif
}

// The block and thread index, read again where asked (asm volatile: the compiler can neither merge nor hoist the
// reads), for kernels whose accumulators leave no registers to keep derived values across the main loop.
__device__ __forceinline__ int gt_block_id()
{
    int r;
    asm volatile("mov.u32 %0, %%ctaid.x;\n" : "=r"(r));
    return r;
}
__device__ __forceinline__ int gt_thread_id()
{
    int r;
    asm volatile("mov.u32 %0, %%tid.x;\n" : "=r"(r));
    return r;
}

#if SPLITK > 1
// One thread per C element; slices summed in order 0..SPLITK-1 so the result does not depend on scheduling.
extern "C" __global__ void gt_splitk_reduce(int M, int N, float alpha, const float *__restrict__ ws, float beta,
                                            float *__restrict__ C, int ldc)
{
    size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= (size_t)M * N) return;
    int i = (int)(e / N), j = (int)(e % N);
    float acc = 0.0f;
#pragma unroll
    for (int z = 0; z < SPLITK; ++z) acc += ws[(size_t)z * M * N + e];
    float *c = C + (size_t)i * ldc + j;
    *c = beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
}
#endif

#endif
