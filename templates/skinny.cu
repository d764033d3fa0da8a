// Family skinny (kernels/skinny.c): C with one small side (M with SIDE 0, N with SIDE 1), where a square tile
// wastes most of its rows and reading the large operand is the cost. Tested by tests/test_skinny.c (CPU: legality,
// launch, NVRTC) and tests/test_gpu.c (every family against cuBLAS); the CPU emulator runs it (tests/emu/run.sh).
//
// Names: S is the small side, L the large one; X(s, k) is the small operand, Y(k, l) the large one, C(s, l) the
// result. Every lane holds all SR rows of S (SR >= S; rows past S compute zeros) for its TL columns of L, so each
// element of Y is read from memory once, by one lane, and used SR times from a register. Both operands stream
// through a STAGES-deep cp.async pipeline of KC-deep stages in shared memory: Y as each lane's own columns (it
// copies what it reads, so the pipeline, not the register file, holds the bytes in flight), X (small, shared by
// the block) as KC x SR floats read as broadcasts, four rows per 16-byte read. A block of WARPS warps owns
// BL = 32 WARPS TL consecutive columns of L and a slice of K (blockIdx.z).
//
// Split K (grid z > 1, as many slices as fill the GPU: launch() decides): each block writes its raw sums to its
// slice of the workspace, and gt_splitk_reduce adds the slices in a fixed order and applies alpha and beta.
#ifndef SIDE
#define SIDE 0 // 0: M is the small side; 1: N is
#endif
#ifndef SR
#define SR 32 // rows of the small side held by every lane (a multiple of 4, at least S)
#endif
#ifndef TL
#define TL 2 // columns of the large side per lane (1, 2 or 4)
#endif
#ifndef WARPS
#define WARPS 4 // warps per block
#endif
#ifndef KC
#define KC 16 // K depth of a shared stage of X and of a register load of Y (a multiple of 4)
#endif
#ifndef STAGES
#define STAGES 3 // shared-memory stages of X in flight
#endif

#include "async.cuh"
#include "common.cuh"
#include "stream.cuh"

#define BL (32 * WARPS * TL) // columns of L per block
#define SK_HEAD 64            // floats before the split-K slices in the workspace (the slice count)
#define GT_SPLITK_AT_LAUNCH 1 // the K split is launch()'s, not a tunable: gt_splitk_reduce reads it from ws

#if SIDE == 0 // X = op(A), Y = op(B), C(s, l) = C[s][l]
#define SK_Y_LMAJOR (!GT_TB)
#define SK_X_SMAJOR (GT_TA)
#else // X(s, k) = op(B)(k, s), Y(k, l) = op(A)(l, k), C(s, l) = C[l][s]
#define SK_Y_LMAJOR (GT_TA)
#define SK_X_SMAJOR (!GT_TB)
#endif

struct sk_ops {
    const float *X, *Y;
    int ldx, ldy, S, L, l0, k1;
    bool vx, vy; // X, Y allow 16-byte copies
    unsigned long long stream; // Y's L2 policy: evict first (it is read once)
};

// Column of the block's tile held by lane's j-th sums: along L, TL adjacent columns per lane (one vector load);
// along K, lane + 32 j (C's stores stay coalesced).
__device__ __forceinline__ int sk_col(int warp, int lane, int j)
{
#if SK_Y_LMAJOR
    return (warp * 32 + lane) * TL + j;
#else
    return warp * 32 * TL + lane + 32 * j;
#endif
}

// The W floats at src (W = 1, 2 or 4), of which the first n are in range, to the shared address d, the rest
// zero-filled: one 16-byte copy where W is 4 and vec (src 16-byte aligned), else W 4-byte ones; base stands in for
// src where nothing is read. STREAM: with Y's evict-first L2 policy (stream.cuh).
template <int W, bool STREAM>
__device__ __forceinline__ void sk_copy(unsigned d, const float *src, int n, bool vec, const float *base,
                                        unsigned long long policy)
{
    if (W == 4 && vec) {
        const float *from = n > 0 ? src : base;
        if constexpr (STREAM) gt_cp_async_stream<16>(d, from, 4 * max(n, 0), policy);
        else gt_cp_async<16>(d, from, 4 * max(n, 0));
        return;
    }
#pragma unroll
    for (int i = 0; i < W; ++i) {
        if constexpr (STREAM) gt_cp_async_stream<4>(d + 4 * i, i < n ? src + i : base, i < n ? 4 : 0, policy);
        else gt_cp_async<4>(d + 4 * i, i < n ? src + i : base, i < n ? 4 : 0);
    }
}

// Floats of one stage of Y: ys[KC][BL] along L (a lane's TL columns side by side), ys[BL][KC + 4] along K (a
// lane's column as one row; 16-byte reads of four k without bank conflicts).
#if SK_Y_LMAJOR
#define SK_YSTAGE (KC * BL)
#else
#define SK_YSTAGE (BL * (KC + 4))
#endif

// The lane's own stage of Y <- Y(kb .. kb + KC, its columns), zero past k1 and L.
__device__ __forceinline__ void sk_load_y(const sk_ops &o, float *ys, int warp, int lane, int kb)
{
#if SK_Y_LMAJOR
#pragma unroll
    for (int k = 0; k < KC; ++k)
#pragma unroll
        for (int j = 0; j < TL; j += 4) {
            const int c = sk_col(warp, lane, j), l = o.l0 + c, gk = kb + k;
            sk_copy<(TL < 4 ? TL : 4), true>((unsigned)__cvta_generic_to_shared(ys + k * BL + c),
                                             o.Y + (size_t)gk * o.ldy + l, gk < o.k1 ? min(min(TL, 4), o.L - l) : 0,
                                             o.vy, o.Y, o.stream);
        }
#else
#pragma unroll
    for (int j = 0; j < TL; ++j) {
        const int c = sk_col(warp, lane, j), l = o.l0 + c;
#pragma unroll
        for (int k = 0; k < KC; k += 4)
            sk_copy<4, true>((unsigned)__cvta_generic_to_shared(ys + c * (KC + 4) + k), o.Y + (size_t)l * o.ldy + kb + k,
                             l < o.L ? min(4, o.k1 - kb - k) : 0, o.vy, o.Y, o.stream);
    }
#endif
}

// Shared stage xs[KC][SR] <- X(0 .. SR, kb .. kb + KC), zero past S and k1.
__device__ __forceinline__ void sk_load_x(const sk_ops &o, float *xs, int kb)
{
#if SK_X_SMAJOR
#pragma unroll
    for (int e = threadIdx.x; e < KC * SR / 4; e += 32 * WARPS) {
        const int k = e / (SR / 4), s = e % (SR / 4) * 4, gk = kb + k;
        const int n = gk < o.k1 ? min(4, o.S - s) : 0;
        sk_copy<4, false>((unsigned)__cvta_generic_to_shared(xs + k * SR + s), o.X + (size_t)gk * o.ldx + s, n, o.vx,
                          o.X, 0);
    }
#else
#pragma unroll
    for (int e = threadIdx.x; e < KC * SR; e += 32 * WARPS) {
        const int s = e / KC, k = e % KC, gk = kb + k;
        const bool in = s < o.S && gk < o.k1;
        gt_cp_async<4>((unsigned)__cvta_generic_to_shared(xs + k * SR + s), in ? o.X + (size_t)s * o.ldx + gk : o.X,
                       in ? 4 : 0);
    }
#endif
}

// acc += X(rows, k) Y(k, the lane's columns) over one stage: four rows of X per broadcast read.
__device__ __forceinline__ void sk_compute(const float *xs, const float *ys, int warp, int lane, float (&acc)[SR][TL])
{
#pragma unroll
    for (int k = 0; k < KC; k += 4) {
        float y[4][TL];
#if SK_Y_LMAJOR
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            const float *p = ys + (k + q) * BL + sk_col(warp, lane, 0);
            if constexpr (TL == 4) {
                const float4 v = *(const float4 *)p;
                y[q][0] = v.x, y[q][1] = v.y, y[q][2] = v.z, y[q][3] = v.w;
            } else if constexpr (TL == 2) {
                const float2 v = *(const float2 *)p;
                y[q][0] = v.x, y[q][1] = v.y;
            } else {
                y[q][0] = *p;
            }
        }
#else
#pragma unroll
        for (int j = 0; j < TL; ++j) {
            const float4 v = *(const float4 *)(ys + sk_col(warp, lane, j) * (KC + 4) + k);
            y[0][j] = v.x, y[1][j] = v.y, y[2][j] = v.z, y[3][j] = v.w;
        }
#endif
#pragma unroll
        for (int q = 0; q < 4; ++q)
#pragma unroll
            for (int r = 0; r < SR; r += 4) {
                const float4 x = *(const float4 *)(xs + (k + q) * SR + r);
#pragma unroll
                for (int j = 0; j < TL; ++j) {
                    acc[r][j] = fmaf(x.x, y[q][j], acc[r][j]);
                    acc[r + 1][j] = fmaf(x.y, y[q][j], acc[r + 1][j]);
                    acc[r + 2][j] = fmaf(x.z, y[q][j], acc[r + 2][j]);
                    acc[r + 3][j] = fmaf(x.w, y[q][j], acc[r + 3][j]);
                }
            }
    }
}

// Buffer b of both pipelines <- the stage of K from kb.
__device__ __forceinline__ void sk_load_stage(const sk_ops &o, float *xs, float *ys, int warp, int lane, int b, int kb)
{
    sk_load_x(o, xs + b * (KC * SR), kb);
    sk_load_y(o, ys + b * SK_YSTAGE, warp, lane, kb);
}

// Wait for stage c, then start the copies of stage c + STAGES - 1 into the buffers every thread has finished.
// Returns stage c's buffer index.
__device__ __forceinline__ int sk_next_stage(const sk_ops &o, float *xs, float *ys, int warp, int lane, int k0, int c,
                                             int chunks)
{
    gt_cp_async_wait<STAGES - 2>();
    __syncthreads();
    const int next = c + STAGES - 1;
    if (next < chunks) sk_load_stage(o, xs, ys, warp, lane, next % STAGES, k0 + next * KC);
    gt_cp_async_commit();
    return c % STAGES;
}

// C(s, l) = alpha v + beta C(s, l), C not read where beta == 0 (it may hold NaN).
__device__ __forceinline__ void sk_put(float *C, int ldc, int s, int l, float v, float alpha, float beta)
{
    float *c = C + (SIDE == 0 ? (size_t)s * ldc + l : (size_t)l * ldc + s);
    *c = beta == 0.0f ? alpha * v : fmaf(beta, *c, alpha * v);
}

// Split K: the block's sums to its slice of the workspace, ws[SK_HEAD + z S L + s L + l]; the first block
// also writes the slice count into the head for gt_splitk_reduce.
__device__ __forceinline__ void sk_partial(const sk_ops &o, float *ws, int warp, int lane, const float (&acc)[SR][TL])
{
    if (blockIdx.x == 0 && blockIdx.z == 0 && threadIdx.x == 0) *(unsigned *)ws = gridDim.z;
    float *slice = ws + SK_HEAD + (size_t)blockIdx.z * o.S * o.L;
#pragma unroll
    for (int r = 0; r < SR; ++r)
#pragma unroll
        for (int j = 0; j < TL; ++j) {
            const int l = o.l0 + sk_col(warp, lane, j);
            if (r < o.S && l < o.L) slice[(size_t)r * o.L + l] = acc[r][j];
        }
}

// One thread per element of C: the slices added in the order z = 0, 1, ... (the bits do not depend on which block
// finished first), then alpha and beta. Launched after gt_gemm on its stream (gt_kernel_launch).
extern "C" __global__ void gt_splitk_reduce(int M, int N, float alpha, const float *__restrict__ ws, float beta,
                                            float *__restrict__ C, int ldc)
{
    const int S = SIDE ? N : M, L = SIDE ? M : N;
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x, n = (size_t)S * L;
    if (e >= n) return;
    const unsigned z = *(const unsigned *)ws;
    const float *p = ws + SK_HEAD + e;
    float sum = 0.0f;
#pragma unroll 8
    for (unsigned i = 0; i < z; ++i) sum += p[i * n]; // loads ahead, adds in order
    sk_put(C, ldc, (int)(e / L), (int)(e % L), sum, alpha, beta);
}

extern "C" __global__ void __launch_bounds__(32 * WARPS) gt_gemm(GT_GEMM_ARGS)
{
    GT_BATCH_OFFSET();
    extern __shared__ float4 smem4[];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    sk_ops o;
#if SIDE == 0
    o.X = A, o.Y = B, o.ldx = lda, o.ldy = ldb, o.S = M, o.L = N;
#else
    o.X = B, o.Y = A, o.ldx = ldb, o.ldy = lda, o.S = N, o.L = M;
#endif
    o.l0 = blockIdx.x * BL;
    o.vx = GT_VEC_OK(4, o.X, o.ldx);
    o.vy = GT_VEC_OK(4, o.Y, o.ldy);
    o.stream = gt_evict_first();
    int k0 = 0;
    o.k1 = K;
#if !GT_BATCHED
    const int per = ((K + KC - 1) / KC + gridDim.z - 1) / gridDim.z * KC;
    k0 = min(K, (int)blockIdx.z * per), o.k1 = min(K, k0 + per);
#endif
    float *xs = (float *)smem4, *ys = xs + STAGES * KC * SR;
    const int chunks = (o.k1 - k0 + KC - 1) / KC;
    float acc[SR][TL];
#pragma unroll
    for (int r = 0; r < SR; ++r)
#pragma unroll
        for (int j = 0; j < TL; ++j) acc[r][j] = 0.0f;
#pragma unroll
    for (int c = 0; c < STAGES - 1; ++c) {
        if (c < chunks) sk_load_stage(o, xs, ys, warp, lane, c, k0 + c * KC);
        gt_cp_async_commit();
    }
#pragma unroll 1
    for (int c = 0; c < chunks; ++c) {
        const int b = sk_next_stage(o, xs, ys, warp, lane, k0, c, chunks);
        sk_compute(xs + b * (KC * SR), ys + b * SK_YSTAGE, warp, lane, acc);
    }
    gt_cp_async_wait<0>();
#if GT_BATCHED
    (void)ws;
#else
    if (gridDim.z > 1) return sk_partial(o, ws, warp, lane, acc);
#endif
#pragma unroll
    for (int r = 0; r < SR; ++r)
#pragma unroll
        for (int j = 0; j < TL; ++j) {
            const int l = o.l0 + sk_col(warp, lane, j);
            if (r < o.S && l < o.L) sk_put(C, ldc, r, l, acc[r][j], alpha, beta);
        }
}
