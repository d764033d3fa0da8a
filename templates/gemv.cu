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
// With XS = 1 (and KW = 1) the block's warps walk K's chunks together and X's chunk waits for them in shared
// memory (cp.async, two buffers): from a few rows on, X read through L1 by every warp at its own place in K
// outgrows L1, and each of its loads serves only RW of Y's. X along K is kept as rows of the chunk's k; X along S
// as its k rows of GV_SP floats, their 16-byte pieces swizzled so that the lanes' reads, four k apart, fall in
// distinct banks.
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
#ifndef XS
#define XS 0 // 1: X's chunk of K in shared memory, the block's warps on one chunk at a time (KW = 1)
#endif

#include "async.cuh"
#include "common.cuh"

#define GV_KSTEP (128 * U)       // k of one chunk: 32 lanes, four k each, U times
#define GV_CW (WARPS / KW)       // column groups per block
#define GV_BL (GV_CW * RW)       // columns of L per block
#if XS && KW != 1
#error "XS: the block's warps walk K together (KW = 1)"
#endif
#define GV_SP ((SR + 3) / 4 * 4)       // floats of a k row of X along S in shared memory
#define GV_XBUF (GV_SP * GV_KSTEP)    // floats of one chunk of X in shared memory, either way

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

// The warp's loads of Y for the chunk of K from k0 (16-byte loads: Y along K, its pointer and ld allow them).
// Columns past L read column L - 1 and are never stored.
__device__ __forceinline__ void gv_load_y(const gv_ops &o, int l, int k0, float4 (&y)[U][RW])
{
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
        for (int r = 0; r < RW; ++r)
            y[u][r] = __ldcs((const float4 *)(o.Y + (size_t)min(l + r, o.L - 1) * o.ldy + k0 + 128 * u + 4 * lane));
}

// acc[r][s] += X(s, the chunk from k0) y: X from its shared-memory chunk xs (XS), else in 16-byte loads where X
// runs along K and its pointer and ld allow them, else one element at a time. Rows past S are skipped.
__device__ __forceinline__ void gv_chunk(const gv_ops &o, const float4 (&y)[U][RW], int k0, bool xvec,
                                         const float *xs, float (&acc)[RW][SR])
{
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const int k = k0 + 128 * u + 4 * lane;
#pragma unroll
        for (int s = 0; s < SR; ++s) {
            if (s >= o.S) break;
            float4 x;
            if (XS && GV_XK) x = *(const float4 *)(xs + s * GV_KSTEP + 128 * u + 4 * lane);
            else if (GV_XK && xvec) x = __ldg((const float4 *)(o.X + (size_t)s * o.ldx + k));
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

#if XS
// The 16-byte piece where piece g of a chunk of X along S lives: its low three bits (its bank group) XOR the next
// three, so that the pieces of k rows 4 apart, which a warp's lanes read together, spread over the banks.
__device__ __forceinline__ int gv_swz(int g) { return g ^ ((g >> 3) & 7); }

// acc[r][s] += X(s, the chunk) y for X along S, from its shared-memory chunk: each of the lane's k rows in 16-byte
// reads of four rows of S, then its k's share of y. Rows past S hold zeros, and rows past SR are never read.
__device__ __forceinline__ void gv_chunk_srows(const gv_ops &o, const float4 (&y)[U][RW], const float *xs,
                                               float (&acc)[RW][SR])
{
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            const int kl = 128 * u + 4 * lane + q;
            float yq[RW];
#pragma unroll
            for (int r = 0; r < RW; ++r) {
                const float4 v = y[u][r];
                yq[r] = q == 0 ? v.x : q == 1 ? v.y : q == 2 ? v.z : v.w;
            }
#pragma unroll
            for (int j = 0; j < GV_SP / 4; ++j) {
                if (4 * j >= o.S) break;
                const float4 v = *(const float4 *)(xs + 4 * gv_swz(kl * (GV_SP / 4) + j));
                const float x[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
                for (int i = 0; i < 4; ++i)
                    if (4 * j + i < SR)
#pragma unroll
                        for (int r = 0; r < RW; ++r) acc[r][4 * j + i] = fmaf(x[i], yq[r], acc[r][4 * j + i]);
            }
        }
}

// The block's copies of X(0 .. S, k0 .. k0 + GV_KSTEP): along K into rows xs[s][k - k0], along S into k rows of
// GV_SP floats (pieces swizzled, zeros past S); 16 bytes each where X's pointer and ld allow them, else one float
// each.
__device__ __forceinline__ void gv_stage_x(const gv_ops &o, int k0, bool xvec, float *xs)
{
    const int nt = 32 * WARPS;
    if (GV_XK && xvec) {
        for (int c = threadIdx.x; c < o.S * GV_KSTEP / 4; c += nt) {
            const int s = c / (GV_KSTEP / 4), k = 4 * (c % (GV_KSTEP / 4));
            gt_cp_async<16>((unsigned)__cvta_generic_to_shared(xs + s * GV_KSTEP + k),
                            o.X + (size_t)s * o.ldx + k0 + k, 16);
        }
    } else if (GV_XK) {
        for (int c = threadIdx.x; c < o.S * GV_KSTEP; c += nt) {
            const int s = c / GV_KSTEP, k = c % GV_KSTEP;
            gt_cp_async<4>((unsigned)__cvta_generic_to_shared(xs + s * GV_KSTEP + k), o.X + (size_t)s * o.ldx + k0 + k,
                           4);
        }
    } else {
        for (int c = threadIdx.x; c < GV_KSTEP * GV_SP / 4; c += nt) { // piece c: k row c / (SP / 4), rows 4 j..
            const int k = c / (GV_SP / 4), s = 4 * (c % (GV_SP / 4)), n = max(0, min(4, o.S - s));
            const float *src = o.X + (size_t)(k0 + k) * o.ldx + s;
            const unsigned d = (unsigned)__cvta_generic_to_shared(xs + 4 * gv_swz(c));
            if (xvec) {
                gt_cp_async<16>(d, n > 0 ? src : o.X, 4 * n);
            } else {
#pragma unroll
                for (int i = 0; i < 4; ++i) gt_cp_async<4>(d + 4 * i, i < n ? src + i : o.X, i < n ? 4 : 0);
            }
        }
    }
    gt_cp_async_commit();
}

// The whole chunks of K, the block's warps together: chunk c + 1's X is copied while chunk c's Y is loaded and
// used; each chunk's X waits in one of two buffers, and the barrier after a chunk frees its buffer.
__device__ __forceinline__ void gv_chunks_staged(const gv_ops &o, int l, int chunks, bool xvec, float *xs,
                                                 float (&acc)[RW][SR])
{
    if (chunks > 0) gv_stage_x(o, 0, xvec, xs);
#pragma unroll 1
    for (int c = 0; c < chunks; ++c) {
        float *now = xs + (c & 1) * GV_XBUF;
        if (c + 1 < chunks) gv_stage_x(o, (c + 1) * GV_KSTEP, xvec, xs + ((c + 1) & 1) * GV_XBUF);
        else gt_cp_async_commit(); // an empty group: the wait below always leaves the newest one
        float4 y[U][RW];
        gv_load_y(o, l, c * GV_KSTEP, y);
        gt_cp_async_wait<1>();
        __syncthreads();
        if (GV_XK) gv_chunk(o, y, c * GV_KSTEP, xvec, now, acc);
        else gv_chunk_srows(o, y, now, acc);
        __syncthreads();
    }
    gt_cp_async_wait<0>();
}
#endif

// C(s, l) = alpha v + beta C(s, l) for s < S and l < L (C not read where beta == 0: it may hold NaN). With a bias
// (the family's bias epilogue, kernels/family.h: beta is 0 then), C(s, l) = alpha v + bias[j] for C's column j,
// rounded as a pass writing the bias into C and beta 1 would round it.
__device__ __forceinline__ void gv_put(const gv_ops &o, float *C, int ldc, int s, int l, float v, float alpha,
                                       float beta, const float *bias)
{
    if (s >= o.S || l >= o.L) return;
    float *c = C + (SIDE == 0 ? (size_t)s * ldc + l : (size_t)l * ldc + s);
    if (bias) *c = fmaf(1.0f, bias[SIDE == 0 ? l : s], alpha * v);
    else *c = beta == 0.0f ? alpha * v : fmaf(beta, *c, alpha * v);
}

// acc <- the lane's share of X(s, k) Y(k, l + r) for its warp's columns from l: the whole chunks (all KW warps in
// turn, or staged with XS), then the tail one element at a time.
__device__ __forceinline__ void gv_accumulate(const gv_ops &o, int K, int l, int kw, float (&acc)[RW][SR])
{
    const int lane = threadIdx.x % 32;
    const bool yvec = GV_YK && GT_VEC_OK(4, o.Y, o.ldy), xvec = GT_VEC_OK(4, o.X, o.ldx);
#pragma unroll
    for (int r = 0; r < RW; ++r)
#pragma unroll
        for (int s = 0; s < SR; ++s) acc[r][s] = 0.0f;
    const int chunks = yvec ? K / GV_KSTEP : 0;
#if XS
    extern __shared__ float4 smem4[];
    gv_chunks_staged(o, l, chunks, xvec, (float *)smem4, acc);
#else
#pragma unroll 1
    for (int c = kw; c < chunks; c += KW) {
        float4 y[U][RW];
        gv_load_y(o, l, c * GV_KSTEP, y);
        gv_chunk(o, y, c * GV_KSTEP, xvec, nullptr, acc);
    }
#endif
    gv_tail(o, l, chunks * GV_KSTEP + kw * 32 + lane, KW * 32, K, acc);
}

// The warp's lanes' sums added by a butterfly; with KW = 1 lane 0 stores them, else lane 0 of each warp leaves
// them in part and one thread per result adds the KW warps' in order and stores it.
__device__ __forceinline__ void gv_finish(const gv_ops &o, float *C, int ldc, float alpha, float beta,
                                          const float *bias, int l, int cw, int kw, float (&acc)[RW][SR], float *part)
{
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int r = 0; r < RW; ++r)
#pragma unroll
        for (int s = 0; s < SR; ++s)
#pragma unroll
            for (int off = 16; off > 0; off /= 2) acc[r][s] += __shfl_xor_sync(0xffffffffu, acc[r][s], off);
    if (KW == 1) {
        if (lane == 0)
#pragma unroll
            for (int r = 0; r < RW; ++r)
#pragma unroll
                for (int s = 0; s < SR; ++s) gv_put(o, C, ldc, s, l + r, acc[r][s], alpha, beta, bias);
        return;
    }
    if (lane == 0)
#pragma unroll
        for (int r = 0; r < RW; ++r)
#pragma unroll
            for (int s = 0; s < SR; ++s) part[((cw * RW + r) * SR + s) * KW + kw] = acc[r][s];
    __syncthreads();
    for (int t = threadIdx.x; t < GV_BL * SR; t += 32 * WARPS) {
        float v = 0.0f;
#pragma unroll
        for (int i = 0; i < KW; ++i) v += part[t * KW + i];
        gv_put(o, C, ldc, t % SR, blockIdx.x * GV_BL + t / SR, v, alpha, beta, bias);
    }
}

extern "C" __global__ void __launch_bounds__(32 * WARPS) gt_gemm(GT_GEMM_ARGS)
{
    GT_BATCH_OFFSET();
    const float *bias = ws; // no workspace: ws is the bias of a call with one (kernels/family.h), else NULL
    __shared__ float part[KW > 1 ? WARPS * RW * SR : 1];
    const int warp = threadIdx.x / 32, kw = warp % KW, cw = warp / KW;
    gv_ops o;
#if SIDE == 0
    o.X = A, o.Y = B, o.ldx = lda, o.ldy = ldb, o.S = M, o.L = N;
#else
    o.X = B, o.Y = A, o.ldx = ldb, o.ldy = lda, o.S = N, o.L = M;
#endif
    const int l = blockIdx.x * GV_BL + cw * RW;
    float acc[RW][SR];
    gv_accumulate(o, K, l, kw, acc);
    gv_finish(o, C, ldc, alpha, beta, bias, l, cw, kw, acc, part);
}
