// Family skinny (kernels/skinny.c): C with one small side (M with SIDE 0, N with SIDE 1), where a square tile
// wastes most of its rows and reading the large operand is the cost. Tested by tests/test_skinny.c (CPU: legality,
// launch, NVRTC) and tests/test_gpu.c (every family against cuBLAS); the CPU emulator runs it (tests/emu/run.sh).
//
// Names: S is the small side, L the large one; X(s, k) is the small operand, Y(k, l) the large one, C(s, l) the
// result. A warp's lanes form RG row groups of 32 / RG lanes; group g holds rows g R .. g R + R - 1 of S (R = SR /
// RG; SR >= S, rows past S compute zeros) for its lanes' TL columns of L each. So each element of Y is read from
// memory once and used R times from a register by each of the RG lanes that share its column, and each X value
// read from shared memory serves TL FMAs. Both operands stream through a STAGES-deep cp.async pipeline of KC-deep
// stages in shared memory, copied by the whole block in 16-byte pieces where alignment allows (Y with an L2
// evict-first policy: it is read once). A block of WARPS warps owns BL = WARPS TL 32 / RG consecutive columns of L
// and a slice of K (blockIdx.z).
//
// Split K (grid z > 1, as many slices as fill the GPU: launch() decides): each block writes its raw sums to its
// slice of the workspace, and gt_splitk_reduce adds the slices in a fixed order and applies alpha and beta. With
// CL > 1 (sm_90) the slices of a tile are one cluster instead (at most CL of them): each block leaves its sums in
// its shared memory, and each reduces a CL-th of the tile from all of them in rank order, on chip; no workspace,
// no second kernel.
//
// Family skinny3 is this kernel with TC 1 (math class tf32x3): the same stages, split and epilogue, the products on
// tensor cores (sk_tc_stage). Tested by tests/test_skinny.c and tests/test_gpu.c (against FP64); the CPU emulator
// runs it too (tests/emu/run.sh skinny3, its MMA a warp's fragments multiplied in double).
#ifndef SIDE
#define SIDE 0 // 0: M is the small side; 1: N is
#endif
#ifndef SR
#define SR 32 // rows of the small side the warp holds, at least S (a multiple of 2 and of RG)
#endif
#ifndef RG
#define RG 1 // row groups per warp (1, 2, 4 or 8): each holds SR / RG rows
#endif
#ifndef TL
#define TL 2 // columns of the large side per lane (1, 2, 4 or 8)
#endif
#ifndef WARPS
#define WARPS 4 // warps per block
#endif
#ifndef KC
#define KC 16 // K depth of a shared-memory stage of X and Y (a multiple of 4)
#endif
#ifndef STAGES
#define STAGES 3 // shared-memory stages in the pipeline
#endif
#ifndef CL
#define CL 1 // 1: split K reduced through the workspace; 2 to 16: the slices of a tile are one cluster (sm_90)
#endif
#ifndef TC
#define TC 0 // 1 (family skinny3, math tf32x3): the products on tensor cores, three TF32 ones a pair (sm_80+)
#endif

#include "async.cuh"
#include "common.cuh"
#include "pdl.cuh"
#include "stream.cuh"
#if CL > 1
#include "cluster.cuh"
#endif
#if TC
#include "tf32.cuh"
#endif

#define SK_LG (32 / RG)                  // lanes per row group
#define SK_R (SR / RG)                   // rows per lane
#define SK_RP ((SK_R + 3) / 4 * 4)       // ... rounded up to whole 16-byte reads
// Floats between row groups in a k row of X: RP, or RP + 4 where RP is a multiple of 8 (the groups' 16-byte reads
// then fall in distinct banks); one group keeps RP.
#define SK_XG (RG > 1 && SK_RP % 8 == 0 ? SK_RP + 4 : SK_RP)
#if TC
#define SK_XK (SR + 4)                   // ... with TC (RG 1): k rows 2t apart start in distinct banks
#else
#define SK_XK (RG * SK_XG)               // floats of X per k in a stage along S
#endif
#define SK_V (TL < 4 ? TL : 4)           // columns of one vector read of Y along L
#define BL (WARPS * SK_LG * TL)          // columns of L per block
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

// Column of the block's tile held by the lane's j-th sums (li: the lane within its row group). Along L, vector
// reads of SK_V adjacent columns, the group's lanes side by side, then the next vector SK_LG lanes on; along K,
// li + SK_LG j (C's stores stay coalesced).
__device__ __forceinline__ int sk_col(int warp, int li, int j)
{
#if SK_Y_LMAJOR
    return warp * SK_LG * TL + (li + SK_LG * (j / SK_V)) * SK_V + j % SK_V;
#else
    return warp * SK_LG * TL + li + SK_LG * j;
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

// A stage in shared memory. Y: ys[KC][SK_YP] along L, ys[BL][SK_KP] along K. X: xs[KC][SK_XK] along S (row s of
// a k at sk_xat(s)), xs[SR][SK_KP] along K. Pitches: a column's four k in one 16-byte read (KC + 4); with TC, the
// fragments' reads without bank conflicts: along L or S k rows 2t apart (pitch 4 mod 8), along K a lane's two k in
// one 8-byte read (pitch 8 or 24 mod 32).
#define SK_YP (TC ? BL + 4 : BL)
#define SK_KP (!TC ? KC + 4 : KC % 16 ? KC : KC + 8)
#if SK_Y_LMAJOR
#define SK_YSTAGE (KC * SK_YP)
#else
#define SK_YSTAGE (BL * SK_KP)
#endif
#if SK_X_SMAJOR
#define SK_XSTAGE (KC * SK_XK)
#else
#define SK_XSTAGE (SR * SK_KP)
#endif
#define SK_NT (32 * WARPS) // threads of a block

// Where row s of X goes in a k row of an along-S stage: its group's slot, then its place in the group.
__device__ __forceinline__ int sk_xat(int s) { return RG == 1 ? s : s / SK_R * SK_XG + s % SK_R; }

// f(row, i) for the copies of a stage that this thread makes, of N copies in rows of P: copy c = row P + i for c =
// threadIdx.x, + SK_NT, ... (the block copies together; the barrier before a stage is read makes them every
// lane's). Where P divides the block's threads or they divide P, the thread's part of row and i is the same for
// each of its copies.
template <int N, int P, class F> __device__ __forceinline__ void sk_each(F f)
{
    const int t = threadIdx.x;
#pragma unroll
    for (int c0 = 0; c0 < N; c0 += SK_NT) {
        int row, i;
        if constexpr (SK_NT % P == 0) row = c0 / P + t / P, i = t % P;
        else if constexpr (P % SK_NT == 0) row = c0 / P, i = c0 % P + t;
        else row = (c0 + t) / P, i = (c0 + t) % P;
        if (N % SK_NT == 0 || c0 + t < N) f(row, i);
    }
}

// The block's copies of Y's stage <- Y(kb .. kb + KC, the block's columns), zero past k1 and L, four floats each,
// along L or K; VEC: in 16-byte copies.
template <bool VEC, bool WHOLE> __device__ __forceinline__ void sk_copy_y(const sk_ops &o, float *ys, int kb)
{
#if SK_Y_LMAJOR
    sk_each<KC * BL / 4, BL / 4>([&](int k, int i) {
        const int col = 4 * i, l = o.l0 + col, gk = kb + k;
        sk_copy<4, true>((unsigned)__cvta_generic_to_shared(ys + k * SK_YP + col), o.Y + (size_t)gk * o.ldy + l,
                         WHOLE ? 4 : gk < o.k1 ? min(4, o.L - l) : 0, VEC, o.Y, o.stream);
    });
#else
    sk_each<BL * KC / 4, KC / 4>([&](int col, int i) {
        const int k = 4 * i, l = o.l0 + col;
        sk_copy<4, true>((unsigned)__cvta_generic_to_shared(ys + col * SK_KP + k), o.Y + (size_t)l * o.ldy + kb + k,
                         WHOLE ? 4 : l < o.L ? min(4, o.k1 - kb - k) : 0, VEC, o.Y, o.stream);
    });
#endif
}

// The block's copies of X's stage <- X(0 .. SR, kb .. kb + KC), zero past S and k1: four rows per copy along S
// where a group's rows are a multiple of 4 (else one), four k along K; VEC as for Y. The pad past R in a group is
// read by the 16-byte reads, never used.
template <bool VEC> __device__ __forceinline__ void sk_copy_x(const sk_ops &o, float *xs, int kb)
{
#if SK_X_SMAJOR && SK_R % 4 == 0
    sk_each<KC * SR / 4, SR / 4>([&](int k, int i) {
        const int s = 4 * i, gk = kb + k;
        sk_copy<4, false>((unsigned)__cvta_generic_to_shared(xs + k * SK_XK + sk_xat(s)), o.X + (size_t)gk * o.ldx + s,
                          gk < o.k1 ? min(4, o.S - s) : 0, VEC, o.X, 0);
    });
#elif SK_X_SMAJOR
    sk_each<KC * SR, SR>([&](int k, int s) {
        const int gk = kb + k;
        sk_copy<1, false>((unsigned)__cvta_generic_to_shared(xs + k * SK_XK + sk_xat(s)), o.X + (size_t)gk * o.ldx + s,
                          gk < o.k1 && s < o.S, false, o.X, 0);
    });
#else
    sk_each<SR * KC / 4, KC / 4>([&](int s, int i) {
        const int k = 4 * i;
        sk_copy<4, false>((unsigned)__cvta_generic_to_shared(xs + s * SK_KP + k), o.X + (size_t)s * o.ldx + kb + k,
                          s < o.S ? min(4, o.k1 - kb - k) : 0, VEC, o.X, 0);
    });
#endif
}

// Both stages from kb: 16-byte copies for an operand whose address and ld allow them (the same for every copy of
// the call: one branch, outside the copies).
// WHOLE (TC): a stage inside Y, all its k before k1 and the block's columns before L, copies without a bound test
// (with TC the copies are most of a stage's instructions; the FP32 kernel ran no faster without them).
__device__ __forceinline__ void sk_load_y(const sk_ops &o, float *ys, int kb)
{
    const bool whole = TC && kb + KC <= o.k1 && o.l0 + BL <= o.L;
    if (o.vy) whole ? sk_copy_y<true, true>(o, ys, kb) : sk_copy_y<true, false>(o, ys, kb);
    else whole ? sk_copy_y<false, true>(o, ys, kb) : sk_copy_y<false, false>(o, ys, kb);
}

__device__ __forceinline__ void sk_load_x(const sk_ops &o, float *xs, int kb)
{
    if (o.vx) sk_copy_x<true>(o, xs, kb);
    else sk_copy_x<false>(o, xs, kb);
}

// acc += X(the group's rows, k) Y(k, the lane's columns) over one stage, four k at a time: X in 16-byte reads of
// four rows (along S) or four k (along K), each a broadcast to the group's lanes.
__device__ __forceinline__ void sk_compute(const float *xs, const float *ys, int warp, int li, int g,
                                           float (&acc)[SK_R][TL])
{
#pragma unroll
    for (int k = 0; k < KC; k += 4) {
        float y[4][TL];
#if SK_Y_LMAJOR
#pragma unroll
        for (int q = 0; q < 4; ++q)
#pragma unroll
            for (int j = 0; j < TL; j += SK_V) {
                const float *p = ys + (k + q) * SK_YP + sk_col(warp, li, j);
                if constexpr (SK_V == 4) {
                    const float4 v = *(const float4 *)p;
                    y[q][j] = v.x, y[q][j + 1] = v.y, y[q][j + 2] = v.z, y[q][j + 3] = v.w;
                } else if constexpr (SK_V == 2) {
                    const float2 v = *(const float2 *)p;
                    y[q][j] = v.x, y[q][j + 1] = v.y;
                } else {
                    y[q][j] = *p;
                }
            }
#else
#pragma unroll
        for (int j = 0; j < TL; ++j) {
            const float4 v = *(const float4 *)(ys + sk_col(warp, li, j) * SK_KP + k);
            y[0][j] = v.x, y[1][j] = v.y, y[2][j] = v.z, y[3][j] = v.w;
        }
#endif
#if SK_X_SMAJOR
#pragma unroll
        for (int q = 0; q < 4; ++q)
#pragma unroll
            for (int r = 0; r < SK_R; r += 4) {
                const float4 v = *(const float4 *)(xs + (k + q) * SK_XK + g * SK_XG + r);
                const float x[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
                for (int i = 0; i < 4; ++i)
                    if (r + i < SK_R)
#pragma unroll
                        for (int j = 0; j < TL; ++j) acc[r + i][j] = fmaf(x[i], y[q][j], acc[r + i][j]);
            }
#else
#pragma unroll
        for (int r = 0; r < SK_R; ++r) {
            const float4 v = *(const float4 *)(xs + (g * SK_R + r) * SK_KP + k);
            const float x[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int q = 0; q < 4; ++q)
#pragma unroll
                for (int j = 0; j < TL; ++j) acc[r][j] = fmaf(x[q], y[q][j], acc[r][j]);
        }
#endif
    }
}

#if TC
#if CL > 1 || RG > 1
#error "TC: one row group, K slices through the workspace"
#endif
// With TC the tensor cores compute each warp's tile of C transposed: its 32 TL columns of L are SK_MT tiles of the
// MMA's m16, its SR rows of S (a multiple of 8) SK_NS tiles of its n8, and K runs in steps of 8 with the k slots
// permuted as in tf32x3.cu (slot t is k 2t, slot t + 4 is k 2t + 1; the sum does not change), so that a lane's two k
// are adjacent along K. Each value is split into big and small TF32 parts (tf32.cuh); big*small and small*big go
// into corr, big*big into chunk, and both are added into sum in FP32 after each stage (the tensor cores'
// accumulation truncates: the fold keeps FP32 accuracy; tf32x3.cu folds the chunk alone, every 128). C = sum.
#define SK_MT (2 * TL)
#define SK_NS (SR / 8)
typedef float sk_frag[SK_MT][SK_NS][4];
struct sk_tc {
    sk_frag sum, chunk, corr;
};

// V(i, k) and V(i, k + 1), k even, of an operand's stage: one 8-byte read where it runs along K (rows i of pitch
// P), else one from each of two k rows of pitch P.
template <bool ALONG_K, int P> __device__ __forceinline__ float2 sk_pair(const float *v, int i, int k)
{
    if constexpr (ALONG_K) return *(const float2 *)(v + i * P + k);
    else return make_float2(v[k * P + i], v[(k + 1) * P + i]);
}

// Y(k, l) and Y(k + 1, l); X(s, k) and X(s, k + 1).
__device__ __forceinline__ float2 sk_y2(const float *ys, int k, int l)
{
    return sk_pair<!SK_Y_LMAJOR, SK_Y_LMAJOR ? SK_YP : SK_KP>(ys, l, k);
}
__device__ __forceinline__ float2 sk_x2(const float *xs, int s, int k)
{
    return sk_pair<!SK_X_SMAJOR, SK_X_SMAJOR ? SK_XK : SK_KP>(xs, s, k);
}

// The three products of one stage into tc (lane = g 4 + t), then chunk and corr folded into sum.
__device__ __forceinline__ void sk_tc_stage(const float *xs, const float *ys, int warp, int lane, sk_tc &tc)
{
    const int g = lane / 4, t = lane % 4, l0 = warp * 32 * TL;
#pragma unroll
    for (int kk = 0; kk < KC; kk += 8) {
        const int k = kk + 2 * t;
        unsigned b[SK_NS][2][2]; // [n tile][big, small][slot t, slot t + 4]
#pragma unroll
        for (int j = 0; j < SK_NS; ++j) {
            const float2 x = sk_x2(xs, 8 * j + g, k);
            gt_tf32_split(x.x, b[j][0][0], b[j][1][0]);
            gt_tf32_split(x.y, b[j][0][1], b[j][1][1]);
        }
#pragma unroll
        for (int i = 0; i < SK_MT; ++i) {
            const float2 top = sk_y2(ys, k, l0 + 16 * i + g), low = sk_y2(ys, k, l0 + 16 * i + g + 8);
            unsigned a[2][4]; // [big, small][rows g, g + 8 at slot t, then at slot t + 4]
            gt_tf32_split(top.x, a[0][0], a[1][0]);
            gt_tf32_split(low.x, a[0][1], a[1][1]);
            gt_tf32_split(top.y, a[0][2], a[1][2]);
            gt_tf32_split(low.y, a[0][3], a[1][3]);
#pragma unroll
            for (int j = 0; j < SK_NS; ++j) { // corrections first: 2^-11 of the chunk, in their own sum
                gt_mma_tf32(tc.corr[i][j], a[0], b[j][1]);
                gt_mma_tf32(tc.corr[i][j], a[1], b[j][0]);
                gt_mma_tf32(tc.chunk[i][j], a[0], b[j][0]);
            }
        }
    }
#pragma unroll
    for (int i = 0; i < SK_MT; ++i)
#pragma unroll
        for (int j = 0; j < SK_NS; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                tc.sum[i][j][e] += tc.chunk[i][j][e] + tc.corr[i][j][e];
                tc.chunk[i][j][e] = tc.corr[i][j][e] = 0.0f;
            }
}

// f(s, col, v) for each of the lane's sums, as sk_each_sum: the MMA's row g (+ 8) is column col of the warp's tile,
// its column 2t (+ 1) row s.
template <class F> __device__ __forceinline__ void sk_each_tc(int warp, int lane, const sk_tc &tc, F f)
{
    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int i = 0; i < SK_MT; ++i)
#pragma unroll
        for (int j = 0; j < SK_NS; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e)
                f(8 * j + 2 * t + e % 2, warp * 32 * TL + 16 * i + g + 8 * (e / 2), tc.sum[i][j][e]);
}
#endif

// Buffer b of both pipelines <- the stage of K from kb.
__device__ __forceinline__ void sk_load_stage(const sk_ops &o, float *xs, float *ys, int b, int kb)
{
    sk_load_x(o, xs + b * SK_XSTAGE, kb);
    sk_load_y(o, ys + b * SK_YSTAGE, kb);
}

// Step c of the pipeline, c from 1 - STAGES: wait for stage c (c >= 0), start the copies of stage c + STAGES - 1
// into the buffers every thread has finished with, and return stage c's buffer (-1 while c < 0, which only fills
// the pipeline). The prologue's copies are this loop's: issued from a second, unrolled site before the loop, NVRTC
// 13.0 had a few of them read their L2 policy from a uniform register no instruction wrote (at STAGES=3 in some
// nt kernels, at STAGES=4 in most, even as a loop of its own): "illegal instruction" on an H100 once an earlier
// kernel had left garbage there. tests/perf/undef_desc.py finds such reads in SASS.
__device__ __forceinline__ int sk_step(const sk_ops &o, float *xs, float *ys, int k0, int c, int chunks)
{
    if (c >= 0) {
        gt_cp_async_wait<STAGES - 2>();
        __syncthreads();
    }
    const int next = c + STAGES - 1;
    if (next < chunks) sk_load_stage(o, xs, ys, next % STAGES, k0 + next * KC);
    gt_cp_async_commit();
    return c >= 0 ? c % STAGES : -1;
}

// C(s, l) = alpha v + beta C(s, l), C not read where beta == 0 (it may hold NaN). With a bias (the family's bias
// epilogue, kernels/family.h: beta is 0 then), C(s, l) = alpha v + bias[j] for C's column j, rounded as a pass
// writing the bias into C and beta 1 would round it.
__device__ __forceinline__ void sk_put(float *C, int ldc, int s, int l, float v, float alpha, float beta,
                                       const float *bias)
{
    float *c = C + (SIDE == 0 ? (size_t)s * ldc + l : (size_t)l * ldc + s);
    if (bias) *c = fmaf(1.0f, bias[SIDE == 0 ? l : s], alpha * v);
    else *c = beta == 0.0f ? alpha * v : fmaf(beta, *c, alpha * v);
}

// f(s, col, v) for each of the lane's sums v = acc[r][j]: row s = g SK_R + r of the small side, column col of the
// block's tile (rows past S and columns past L included: f decides).
template <class F>
__device__ __forceinline__ void sk_each_sum(int warp, int li, int g, const float (&acc)[SK_R][TL], F f)
{
#pragma unroll
    for (int r = 0; r < SK_R; ++r)
#pragma unroll
        for (int j = 0; j < TL; ++j) f(g * SK_R + r, sk_col(warp, li, j), acc[r][j]);
}

// Floats between split-K slices in the workspace: the S L sums rounded up to 4, so that gt_splitk_reduce reads
// each slice in 16-byte pieces.
__device__ __forceinline__ size_t sk_slice(int S, int L) { return ((size_t)S * L + 3) / 4 * 4; }

// Split K: the block's sums (each(f) calls f on every sum of the thread) to its slice of the workspace, ws[SK_HEAD
// + z sk_slice + s L + l]; the first block also writes the slice count into the head for gt_splitk_reduce.
template <class Each> __device__ __forceinline__ void sk_partial(const sk_ops &o, float *ws, Each each)
{
    if (blockIdx.x == 0 && blockIdx.z == 0 && threadIdx.x == 0) *(unsigned *)ws = gridDim.z;
    float *slice = ws + SK_HEAD + blockIdx.z * sk_slice(o.S, o.L);
    each([&](int s, int col, float v) {
        const int l = o.l0 + col;
        if (s < o.S && l < o.L) slice[(size_t)s * o.L + l] = v;
    });
}

#if CL > 1
// Where the sum of row s, column col of the block's tile waits in shared memory for the cluster's reduction: along
// L for SIDE 0, along S for SIDE 1, so that four consecutive floats are four consecutive elements of a column of C.
__device__ __forceinline__ int sk_tat(int s, int col) { return SIDE == 0 ? s * BL + col : col * SR + s; }

// Split K in a cluster of the tile's gridDim.z slices: the block's sums to its shared memory (over the stages, all
// read), then after the cluster's barrier, block r of the cluster takes the quads r NT, r NT + 1, ... of every
// Z NT, adds that quad of each block's tile in rank order 0, 1, ... (the bits do not depend on timing), and
// applies alpha and beta. The second barrier keeps every block's shared memory alive until all have read it.
__device__ __forceinline__ void sk_cluster_reduce(const sk_ops &o, float *C, int ldc, float alpha, float beta,
                                                  const float *bias, int warp, int li, int g,
                                                  const float (&acc)[SK_R][TL], float *tile)
{
    if (gt_cluster_size() != gridDim.z) __trap(); // launched without its cluster: fail, never a partial sum
    __syncthreads(); // every warp is past its last read of the stages
    sk_each_sum(warp, li, g, acc, [&](int s, int col, float v) { tile[sk_tat(s, col)] = v; });
    gt_cluster_sync();
    const unsigned z = gridDim.z, rank = gt_cluster_rank(), base = (unsigned)__cvta_generic_to_shared(tile);
    for (int q = (int)(rank * SK_NT + threadIdx.x); q < SR * BL / 4; q += (int)z * SK_NT) {
        float4 sum = gt_cluster_ld4(base + 16 * q, 0);
        for (unsigned i = 1; i < z; ++i) {
            const float4 v = gt_cluster_ld4(base + 16 * q, i);
            sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
        }
        const float out[4] = {sum.x, sum.y, sum.z, sum.w};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int e = 4 * q + i, s = SIDE == 0 ? e / BL : e % SR, l = o.l0 + (SIDE == 0 ? e % BL : e / SR);
            if (s < o.S && l < o.L) sk_put(C, ldc, s, l, out[i], alpha, beta, bias);
        }
    }
    gt_cluster_sync();
}
#endif

// One thread per four elements of C (in the order of a slice: 16-byte reads): the slices added in the order z =
// 0, 1, ... (the bits do not depend on which block finished first), then alpha and beta. Launched after gt_gemm
// on its stream (gt_kernel_launch), on sm_90 before gt_gemm has finished: it waits for it first (pdl.cuh).
extern "C" __global__ void gt_splitk_reduce(int M, int N, float alpha, const float *__restrict__ ws, float beta,
                                            float *__restrict__ C, int ldc)
{
    gt_wait_gemm();
    const int S = SIDE ? N : M, L = SIDE ? M : N;
    const size_t e = 4 * ((size_t)blockIdx.x * blockDim.x + threadIdx.x), n = (size_t)S * L, stride = sk_slice(S, L);
    if (e >= n) return;
    const unsigned z = *(const unsigned *)ws;
    const float4 *p = (const float4 *)(ws + SK_HEAD + e);
    float4 sum = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll 8
    for (unsigned i = 0; i < z; ++i) { // loads ahead, adds in order
        const float4 v = p[i * (stride / 4)];
        sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
    }
    const float out[4] = {sum.x, sum.y, sum.z, sum.w};
#pragma unroll
    for (int i = 0; i < 4; ++i)
        if (e + i < n) sk_put(C, ldc, (int)((e + i) / L), (int)((e + i) % L), out[i], alpha, beta, nullptr);
}

extern "C" __global__ void __launch_bounds__(32 * WARPS) gt_gemm(GT_GEMM_ARGS)
{
    GT_BATCH_OFFSET();
    extern __shared__ float4 smem4[];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, li = lane % SK_LG, g = lane / SK_LG;
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
    float *xs = (float *)smem4, *ys = xs + STAGES * SK_XSTAGE;
    const int chunks = (o.k1 - k0 + KC - 1) / KC;
    // The thread's sums; compute(b) adds stage buffer b's products to them, each(f) calls f(s, col, v) on each.
#if TC
    sk_tc tc = {}; // every sum zero
    auto compute = [&](int b) { sk_tc_stage(xs + b * SK_XSTAGE, ys + b * SK_YSTAGE, warp, lane, tc); };
    auto each = [&](auto f) { sk_each_tc(warp, lane, tc, f); };
#else
    float acc[SK_R][TL];
#pragma unroll
    for (int r = 0; r < SK_R; ++r)
#pragma unroll
        for (int j = 0; j < TL; ++j) acc[r][j] = 0.0f;
    auto compute = [&](int b) { sk_compute(xs + b * SK_XSTAGE, ys + b * SK_YSTAGE, warp, li, g, acc); };
    auto each = [&](auto f) { sk_each_sum(warp, li, g, acc, f); };
#endif
#pragma unroll 1
    for (int c = 1 - STAGES; c < chunks; ++c) {
        const int b = sk_step(o, xs, ys, k0, c, chunks);
        if (b >= 0) compute(b);
    }
    gt_cp_async_wait<0>();
    // ws: the split's workspace where K slices meet through it (CL 1, grid z > 1); in any other launch, the bias of
    // a call with one (the family's bias epilogue: the loader fuses it only where the launch has no workspace), else
    // NULL; a batch has neither.
#if GT_BATCHED
    (void)ws;
    const float *bias = nullptr;
#elif CL > 1
    const float *bias = ws;
    if (gridDim.z > 1) return sk_cluster_reduce(o, C, ldc, alpha, beta, bias, warp, li, g, acc, xs);
#else
    if (gridDim.z > 1) return sk_partial(o, ws, each);
    const float *bias = ws;
#endif
    each([&](int s, int col, float v) {
        const int l = o.l0 + col;
        if (s < o.S && l < o.L) sk_put(C, ldc, s, l, v, alpha, beta, bias);
    });
}
