// Family gemv (kernels/gemv.c): C with a small side of at most SR rows (M with SIDE 0, N with SIDE 1) whose large
// operand runs along K, as a matrix-vector product reads it: the rows of W in y = x W^T. Tested by tests/test_gemv.c
// (CPU: legality, launch, NVRTC), tests/test_gpu.c (every family against cuBLAS) and the CPU emulator.
//
// Names, as in skinny.cu: S the small side, L the large one, X(s, k) the small operand, Y(k, l) the large one, C(s,
// l) the result. A warp owns RW columns of L and walks K with its lanes side by side, each lane four consecutive k
// of each column at a time (16-byte loads straight into registers, U of them per column in flight), so a warp reads
// 512 contiguous bytes of a column per load and every element of Y once. X, small and read by every warp, comes
// through L1. KW warps share the same columns and interleave K's chunks; at the end each warp adds its lanes' sums
// by a butterfly, and one thread per result adds the KW warps' sums in order: the bits depend on the shape alone.
// Where Y does not run along K (or a pointer or ld forbids 16-byte loads) every element is read on its own: correct,
// slow, and never the kernel a sweep keeps (applicable() offers this family only the layouts it is for).
#ifndef SIDE
#define SIDE 0 // 0: M is the small side; 1: N is
#endif
#ifndef SR
#define SR 8 // rows of the small side the kernel holds, at least S
#endif
#ifndef RW
#define RW 4 // columns of L per warp
#endif
#ifndef WARPS
#define WARPS 8 // warps per block
#endif
#ifndef KW
#define KW 1 // warps that share a warp's columns and split K between them (divides WARPS)
#endif
#ifndef U
#define U 4 // 16-byte loads per lane and column in flight
#endif

#include "common.cuh"

#define GV_KSTEP (128 * U)       // k of one chunk: 32 lanes, four k each, U times
#define GV_CW (WARPS / KW)       // column groups per block
#define GV_BL (GV_CW * RW)       // columns of L per block

#if SIDE == 0 // X = op(A), Y = op(B), C(s, l) = C[s][l]
#define GV_YK (GT_TB)
#define GV_XK (!GT_TA)
#else // X(s, k) = op(B)(k, s), Y(k, l) = op(A)(l, k), C(s, l) = C[l][s]
#define GV_YK (!GT_TA)
#define GV_XK (GT_TB)
#endif

struct gv_ops {
    const float *X, *Y;
    int ldx, ldy, S, L;
};

// Y(k, l) and X(s, k) one element at a time, any layout.
__device__ __forceinline__ float gv_y(const gv_ops &o, int k, int l)
{
    return GV_YK ? o.Y[(size_t)l * o.ldy + k] : o.Y[(size_t)k * o.ldy + l];
}

__device__ __forceinline__ float gv_x(const gv_ops &o, int s, int k)
{
    return GV_XK ? __ldg(o.X + (size_t)s * o.ldx + k) : __ldg(o.X + (size_t)k * o.ldx + s);
}

// acc[r][s] += the chunk of K from k0 for the warp's columns l (16-byte loads: Y along K, its pointer and ld allow
// them; X along K in 16-byte loads under the same condition, else one element at a time). Columns past L read
// column L - 1 and are never stored; rows past S are skipped.
__device__ __forceinline__ void gv_chunk(const gv_ops &o, int l, int k0, bool xvec, float (&acc)[RW][SR])
{
    const int lane = threadIdx.x % 32;
    float4 y[U][RW];
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
        for (int r = 0; r < RW; ++r)
            y[u][r] = __ldcs((const float4 *)(o.Y + (size_t)min(l + r, o.L - 1) * o.ldy + k0 + 128 * u + 4 * lane));
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const int k = k0 + 128 * u + 4 * lane;
#pragma unroll
        for (int s = 0; s < SR; ++s) {
            if (s >= o.S) break;
            float4 x;
            if (GV_XK && xvec) x = __ldg((const float4 *)(o.X + (size_t)s * o.ldx + k));
            else x = make_float4(gv_x(o, s, k), gv_x(o, s, k + 1), gv_x(o, s, k + 2), gv_x(o, s, k + 3));
#pragma unroll
            for (int r = 0; r < RW; ++r) {
                acc[r][s] = fmaf(x.x, y[u][r].x, acc[r][s]);
                acc[r][s] = fmaf(x.y, y[u][r].y, acc[r][s]);
                acc[r][s] = fmaf(x.z, y[u][r].z, acc[r][s]);
                acc[r][s] = fmaf(x.w, y[u][r].w, acc[r][s]);
            }
        }
    }
}

// acc[r][s] += X(s, k) Y(k, l + r) for k = k0, k0 + step, ... < K, one element at a time (the tail past whole
// chunks, and everything where 16-byte loads of Y are not allowed).
__device__ __forceinline__ void gv_tail(const gv_ops &o, int l, int k0, int step, int K, float (&acc)[RW][SR])
{
    for (int k = k0; k < K; k += step) {
        float y[RW];
#pragma unroll
        for (int r = 0; r < RW; ++r) y[r] = gv_y(o, k, min(l + r, o.L - 1));
#pragma unroll
        for (int s = 0; s < SR; ++s) {
            if (s >= o.S) break;
            const float x = gv_x(o, s, k);
#pragma unroll
            for (int r = 0; r < RW; ++r) acc[r][s] = fmaf(x, y[r], acc[r][s]);
        }
    }
}

// C(s, l) = alpha v + beta C(s, l) for s < S and l < L (C not read where beta == 0: it may hold NaN).
__device__ __forceinline__ void gv_put(const gv_ops &o, float *C, int ldc, int s, int l, float v, float alpha,
                                       float beta)
{
    if (s >= o.S || l >= o.L) return;
    float *c = C + (SIDE == 0 ? (size_t)s * ldc + l : (size_t)l * ldc + s);
    *c = beta == 0.0f ? alpha * v : fmaf(beta, *c, alpha * v);
}

extern "C" __global__ void __launch_bounds__(32 * WARPS) gt_gemm(GT_GEMM_ARGS)
{
    GT_BATCH_OFFSET();
    (void)ws;
    __shared__ float part[KW > 1 ? WARPS * RW * SR : 1];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, kw = warp % KW, cw = warp / KW;
    gv_ops o;
#if SIDE == 0
    o.X = A, o.Y = B, o.ldx = lda, o.ldy = ldb, o.S = M, o.L = N;
#else
    o.X = B, o.Y = A, o.ldx = ldb, o.ldy = lda, o.S = N, o.L = M;
#endif
    const int l = blockIdx.x * GV_BL + cw * RW;
    const bool yvec = GV_YK && GT_VEC_OK(4, o.Y, o.ldy), xvec = GT_VEC_OK(4, o.X, o.ldx);
    float acc[RW][SR];
#pragma unroll
    for (int r = 0; r < RW; ++r)
#pragma unroll
        for (int s = 0; s < SR; ++s) acc[r][s] = 0.0f;
    const int chunks = yvec ? K / GV_KSTEP : 0;
#pragma unroll 1
    for (int c = kw; c < chunks; c += KW) gv_chunk(o, l, c * GV_KSTEP, xvec, acc);
    gv_tail(o, l, chunks * GV_KSTEP + kw * 32 + lane, KW * 32, K, acc);
#pragma unroll
    for (int r = 0; r < RW; ++r)
#pragma unroll
        for (int s = 0; s < SR; ++s)
#pragma unroll
            for (int off = 16; off > 0; off /= 2) acc[r][s] += __shfl_xor_sync(0xffffffffu, acc[r][s], off);
    if (KW == 1) { // lane 0 holds the warp's results
        if (lane == 0)
#pragma unroll
            for (int r = 0; r < RW; ++r)
#pragma unroll
                for (int s = 0; s < SR; ++s) gv_put(o, C, ldc, s, l + r, acc[r][s], alpha, beta);
        return;
    }
    if (lane == 0) // lane 0 of each warp leaves its sums, and one thread per result adds the KW warps' in order
#pragma unroll
        for (int r = 0; r < RW; ++r)
#pragma unroll
            for (int s = 0; s < SR; ++s) part[((cw * RW + r) * SR + s) * KW + kw] = acc[r][s];
    __syncthreads();
    for (int t = threadIdx.x; t < GV_BL * SR; t += 32 * WARPS) {
        float v = 0.0f;
#pragma unroll
        for (int i = 0; i < KW; ++i) v += part[t * KW + i];
        gv_put(o, C, ldc, t % SR, blockIdx.x * GV_BL + t / SR, v, alpha, beta);
    }
}
