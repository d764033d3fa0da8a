// Shared by every gemmtune template: the kernel contract, operand accessors, the epilogue and the split-K reduce.
// gemmtune renders `#define` lines for the tunables and the layout before a template; each tunable has a default
// here or in the template so a file also compiles alone: nvcc -arch=sm_90 -cubin -I templates templates/tile2d.cu
//
// Contract (row-major): C[M x N] = alpha * op(A)[M x K] * op(B)[K x N] + beta * C
//   GT_TA = 0: A(i,k) = A[i*lda + k]     GT_TA = 1: A is stored K x M, A(i,k) = A[k*lda + i]
//   GT_TB = 0: B(k,j) = B[k*ldb + j]     GT_TB = 1: B is stored N x K, B(k,j) = B[j*ldb + k]
//   beta == 0 never reads C (C may hold NaN). Every M, N, K >= 1 is computed correctly.
//   A strided batch runs in one launch, grid z over its matrices (GT_BATCH_OFFSET).
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

// sa, sb, sc: a strided batch's distance, in elements, from one matrix of A, B and C to the next (grid z walks
// the batch; see GT_BATCH_OFFSET). They come last so a launch passes the same arguments to every kernel.
#define GT_GEMM_ARGS                                                                                    \
    int M, int N, int K, float alpha, const float *__restrict__ A, int lda, const float *__restrict__ B, \
        int ldb, float beta, float *__restrict__ C, int ldc, float *__restrict__ ws, long long sa,       \
        long long sb, long long sc

// The first statement of every gt_gemm: a block of grid z works on matrix z of a strided batch (z = 0 and no
// offset for one GEMM). With SPLITK > 1 grid z is the K slice, and the host never launches such a kernel on a
// batch (kernels/family.c gt_family_launch), so the strides are unused there.
#if SPLITK > 1
#define GT_BATCH_OFFSET() ((void)sa, (void)sb, (void)sc)
#else
#define GT_BATCH_OFFSET()                                                                               \
    do {                                                                                                \
        const long long z_ = blockIdx.z;                                                                \
        A += z_ * sa, B += z_ * sb, C += z_ * sc;                                                       \
    } while (0)
#endif

#define GT_A(i, k) (GT_TA ? A[(size_t)(k) * lda + (i)] : A[(size_t)(i) * lda + (k)])
#define GT_B(k, j) (GT_TB ? B[(size_t)(j) * ldb + (k)] : B[(size_t)(k) * ldb + (j)])

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

// Final value of one C element (i, j), both in range.
__device__ __forceinline__ void gt_out(int M, int N, float *__restrict__ C, int ldc, float *__restrict__ ws, int i,
                                       int j, float acc, float alpha, float beta)
{
#if SPLITK > 1
    (void)C; (void)ldc; (void)alpha; (void)beta;
    ws[((size_t)blockIdx.z * M + i) * N + j] = acc;
#else
    (void)M; (void)N; (void)ws;
    float *c = C + (size_t)i * ldc + j;
    *c = beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
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

// Where the block's TBM x TBN tile of C starts, from the linear block index: groups of GROUP tile rows walked
// column by column, so that blocks in flight share A and B panels in L2.
template <int TBM, int TBN, int GROUP>
__device__ __forceinline__ void gt_tile_origin(int lin, int M, int N, int *bm0, int *bn0)
{
    const int tiles_m = (M + TBM - 1) / TBM, tiles_n = (N + TBN - 1) / TBN;
    const int per_group = GROUP * tiles_n, first = lin / per_group * GROUP;
    const int rows = min(tiles_m - first, GROUP), in = lin % per_group;
    *bm0 = (first + in % rows) * TBM;
    *bn0 = in / rows * TBN;
}

// C(i, j) and C(i, j + 1) from the products x0, x1 (row i, from column j; either may lie past M or N); beta == 0
// never reads C. vc: C and ldc allow 8-byte aligned pairs.
__device__ __forceinline__ void gt_store_pair(int M, int N, float *__restrict__ C, int ldc, int i, int j, float x0,
                                              float x1, float alpha, float beta, bool vc)
{
    if (i >= M) return;
    float *c = C + (size_t)i * ldc + j;
    if (vc && j + 1 < N) {
        float2 r = make_float2(alpha * x0, alpha * x1);
        if (beta != 0.0f) {
            const float2 o = *(const float2 *)c;
            r.x = fmaf(beta, o.x, r.x), r.y = fmaf(beta, o.y, r.y);
        }
        *(float2 *)c = r;
        return;
    }
    if (j < N) c[0] = beta == 0.0f ? alpha * x0 : fmaf(beta, c[0], alpha * x0);
    if (j + 1 < N) c[1] = beta == 0.0f ? alpha * x1 : fmaf(beta, c[1], alpha * x1);
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
