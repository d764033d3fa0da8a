// Family skinnyr3 (kernels/skinnyr3.c, math class tf32x3): skinnyr's shapes and loads (one small side S of C, M
// with SIDE 0, N with SIDE 1, the large operand along L straight from global memory into registers, no shared-memory
// stage of it and no barrier in the K loop) with skinny3's products: three TF32 MMAs a pair on tensor cores
// (tf32.cuh). Tested by tests/test_skinnyr3.c (CPU: legality, launch, NVRTC) and tests/test_gpu.c (against FP64, as
// a sweep checks it). The study it comes from: tests/perf/skinny_tc_direct.cu.
//
// Names as in skinnyr.cu: X(s, k) the small operand, Y(k, l) the large one, C(s, l) the result. The tensor cores
// compute C transposed: a warp's 16 MT columns of L are MT tiles of the MMA's m16, the SR rows of S (a multiple of
// 8) its SR / 8 n8 tiles, K runs in steps of 8. Lane (g, t) = (lane / 4, lane % 4) loads the A fragment of each m16
// tile, Y(k + t, l + g), Y(k + t, l + g + 8), Y(k + t + 4, l + g), Y(k + t + 4, l + g + 8) (32 contiguous bytes a
// row along L: whole sectors), P steps ahead in registers, and splits it into big and small TF32 parts at use. X's
// slice of K waits in shared memory in the B fragments' order (a lane's two k's of an n8 tile: one 8-byte read,
// a warp's 256 contiguous bytes), split at use. big*small and small*big go into corr, big*big into chunk, both
// added into sum in FP32 every Y3_FOLD steps: the tensor cores' accumulation truncates, the fold keeps FP32
// accuracy (skinny3's scheme). Where Y runs along K the same code is correct and slow: applicable() offers the
// family only the layouts it is for.
//
// K is split over grid z (launch() picks the slices to fill the GPU, and enough of them that a slice's X fits the
// shared memory it asks for): each block writes its raw sums to its slice of the workspace and gt_splitk_reduce
// (slicesum.cuh) adds the slices in slice order and applies alpha and beta. A batch walks grid z instead, one
// slice a matrix.
#ifndef SIDE
#define SIDE 0 // 0: M is the small side; 1: N is
#endif
#ifndef SR
#define SR 40 // rows of the small side, a multiple of 8 (the n8 tiles), at least S
#endif
#ifndef MT
#define MT 2 // m16 tiles of the large side per warp
#endif
#ifndef WARPS
#define WARPS 8 // warps per block
#endif
#ifndef P
#define P 4 // steps of 8 k of Y in flight in a lane's registers
#endif
#ifndef MINB
#define MINB 1 // blocks per SM asked of the compiler (a register budget)
#endif

#include "async.cuh"
#include "common.cuh"
#include "ldg.cuh"
#include "slicesum.cuh"
#include "tf32.cuh"

static_assert(SR % 8 == 0, "SR: whole n8 tiles");
#define Y3_NS (SR / 8)           // n8 tiles of S
#define Y3_NT (32 * WARPS)       // threads per block
#define Y3_BL (16 * MT * WARPS)  // the block's columns of L
#define Y3_FOLD 4                // steps between the folds into sum
#define GT_SPLITK_AT_LAUNCH 1    // the K split is launch()'s, not a tunable: gt_splitk_reduce reads it from ws

#if SIDE == 0 // X = op(A), Y = op(B), C(s, l) = C[s][l]
#define Y3_Y_LMAJOR (!GT_TB)
#define Y3_X_SMAJOR (GT_TA)
#define Y3_X A
#define Y3_Y B
#define Y3_LDX lda
#define Y3_LDY ldb
#define Y3_S M
#define Y3_L N
#else // X(s, k) = op(B)(k, s), Y(k, l) = op(A)(l, k), C(s, l) = C[l][s]
#define Y3_Y_LMAJOR (GT_TA)
#define Y3_X_SMAJOR (!GT_TB)
#define Y3_X B
#define Y3_Y A
#define Y3_LDX ldb
#define Y3_LDY lda
#define Y3_S N
#define Y3_L M
#endif

// Where X(s, kk) of the slice waits: the B fragment of step kk / 8 and n8 tile s / 8, lane (g, t) = (s % 8, kk % 4),
// b0 (kk % 8 < 4) or b1.
__device__ __forceinline__ int y3_xat(int s, int kk)
{
    return ((kk / 8 * Y3_NS + s / 8) * 32 + s % 8 * 4 + kk % 4) * 2 + kk % 8 / 4;
}

// The slice's k's 0 .. rows of X (k0 its first; zeros past n and past S) into xs in the fragments' order, by
// 4-byte cp.async: along S a thread per element (coalesced along S), along K a thread per k (coalesced along K).
__device__ __forceinline__ void y3_fill_x(const float *X, int ldx, int S, float *xs, int k0, int rows, int n)
{
    const unsigned base = (unsigned)__cvta_generic_to_shared(xs);
#if Y3_X_SMAJOR
    for (int i = threadIdx.x; i < rows * SR; i += Y3_NT) {
        const int s = i % SR, kk = i / SR;
        const bool in = kk < n && s < S;
        gt_cp_async<4>(base + 4 * y3_xat(s, kk), in ? X + (size_t)(k0 + kk) * ldx + s : X, in ? 4 : 0);
    }
#else
    for (int kk = threadIdx.x; kk < rows; kk += Y3_NT) {
        const bool kin = kk < n;
#pragma unroll 4
        for (int s = 0; s < SR; ++s) {
            const bool in = kin && s < S;
            gt_cp_async<4>(base + 4 * y3_xat(s, kk), in ? X + (size_t)s * ldx + k0 + kk : X, in ? 4 : 0);
        }
    }
#endif
}

// The lane's Y registers: y[p] holds the A fragments of step (kb + p) while steps kb .. kb + P - 1 are added.
struct y3_lane {
    const float *next; // Y(k + t, l + g) of the next step to load, in the lane's first m16 tile
    int kq;            // k + t of that step, in the slice
    bool ok[MT][2];    // columns l + g and l + g + 8 of tile m lie inside L (past it: never loaded, never stored)
    float y[P][MT][4];
};

// The next step's fragments into y[p]. TAIL: k's past n load zeros (X is zero there too); otherwise the whole step
// lies inside the slice, and a column past L keeps whatever its register held.
template <bool TAIL>
__device__ __forceinline__ void y3_load(int ldy, y3_lane &ln, int p, int n)
{
    const int kq = ln.kq;
    const size_t cs = Y3_Y_LMAJOR ? 1 : (size_t)ldy, ks = Y3_Y_LMAJOR ? (size_t)ldy : 1; // along L, along K
#pragma unroll
    for (int m = 0; m < MT; ++m) {
        const float *a = ln.next + 16 * m * cs;
        float(&y)[4] = ln.y[p][m];
        if (TAIL) y[0] = y[1] = y[2] = y[3] = 0.0f;
        gt_ldg_stream(y[0], a, ln.ok[m][0] && (!TAIL || kq < n));
        gt_ldg_stream(y[1], a + 8 * cs, ln.ok[m][1] && (!TAIL || kq < n));
        gt_ldg_stream(y[2], a + 4 * ks, ln.ok[m][0] && (!TAIL || kq + 4 < n));
        gt_ldg_stream(y[3], a + 8 * cs + 4 * ks, ln.ok[m][1] && (!TAIL || kq + 4 < n));
    }
    ln.next += 8 * ks, ln.kq += 8; // to the next step
}

// The MMA sums of the lane: sum in FP32, chunk (big*big) and corr (big*small, small*big) since the last fold.
struct y3_sums {
    float sum[MT][Y3_NS][4], chunk[MT][Y3_NS][4], corr[MT][Y3_NS][4];
};

__device__ __forceinline__ void y3_fold(y3_sums &a)
{
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int j = 0; j < Y3_NS; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                a.sum[m][j][e] += a.chunk[m][j][e] + a.corr[m][j][e];
                a.chunk[m][j][e] = a.corr[m][j][e] = 0.0f;
            }
}

// Steps kb .. kb + P of the slice (xf: the lane's float2 of X's first step): each step's fragments split and
// multiplied, three MMAs a tile pair, then its registers take the step P further on; a fold every Y3_FOLD steps.
template <bool TAIL>
__device__ __forceinline__ void y3_steps(int ldy, y3_lane &ln, const float2 *xf, int kb, int n, y3_sums &a)
{
#pragma unroll
    for (int p = 0; p < P; ++p) {
        unsigned ya[MT][2][4]; // [tile][big, small][a0 .. a3]
#pragma unroll
        for (int m = 0; m < MT; ++m)
#pragma unroll
            for (int e = 0; e < 4; ++e) gt_tf32_split(ln.y[p][m][e], ya[m][0][e], ya[m][1][e]);
#pragma unroll
        for (int j = 0; j < Y3_NS; ++j) {
            const float2 xv = xf[((kb + p) * Y3_NS + j) * 32];
            unsigned bb[2], bs[2];
            gt_tf32_split(xv.x, bb[0], bs[0]);
            gt_tf32_split(xv.y, bb[1], bs[1]);
#pragma unroll
            for (int m = 0; m < MT; ++m) { // corrections first: 2^-11 of the chunk, in their own sum
                gt_mma_tf32(a.corr[m][j], ya[m][0], bs);
                gt_mma_tf32(a.corr[m][j], ya[m][1], bb);
                gt_mma_tf32(a.chunk[m][j], ya[m][0], bb);
            }
        }
        y3_load<TAIL>(ldy, ln, p, n); // step kb + p + P
        if ((kb + p + 1) % Y3_FOLD == 0) y3_fold(a);
    }
}

// k's per slice of a split into z: whole groups of P steps (kernels/skinnyr3.c sizes shared memory by it).
__device__ __forceinline__ int y3_per(int K, int z) { return ((K + z - 1) / z + 8 * P - 1) / (8 * P) * (8 * P); }

extern "C" __global__ void __launch_bounds__(Y3_NT, MINB) gt_gemm(GT_GEMM_ARGS)
{
    GT_BATCH_OFFSET();
    extern __shared__ float4 smem4[];
    float *xs = (float *)smem4; // X's slice in the B fragments' order
    int k0 = 0, n = K;          // the block's slice of K: k0 .. k0 + n
#if !GT_BATCHED
    const int per = y3_per(K, (int)gridDim.z);
    k0 = min(K, (int)blockIdx.z * per), n = min(K - k0, per);
#endif
    const int steps = (n + 7) / 8, rounded = (steps + P - 1) / P * P; // steps added: whole P (zeros past n)
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int l0 = (blockIdx.x * WARPS + warp) * 16 * MT;
    y3_lane ln;
#pragma unroll
    for (int m = 0; m < MT; ++m) ln.ok[m][0] = l0 + 16 * m + g < Y3_L, ln.ok[m][1] = l0 + 16 * m + g + 8 < Y3_L;
    const int c = l0 + g < Y3_L ? l0 + g : 0;
    ln.next = Y3_Y_LMAJOR ? Y3_Y + (size_t)(k0 + t) * Y3_LDY + c : Y3_Y + (size_t)c * Y3_LDY + k0 + t;
    ln.kq = t;
#pragma unroll
    for (int p = 0; p < P; ++p) y3_load<true>(Y3_LDY, ln, p, n);
    y3_fill_x(Y3_X, Y3_LDX, Y3_S, xs, k0, rounded * 8, n);
    gt_cp_async_commit();
    gt_cp_async_wait<0>();
    __syncthreads(); // the slice's X is everyone's
    y3_sums a = {};
    const float2 *xf = (const float2 *)xs + lane;
    int kb = 0; // steps done
#pragma unroll 1
    for (; 8 * (kb + 2 * P) <= n; kb += P) y3_steps<false>(Y3_LDY, ln, xf, kb, n, a);
#pragma unroll 1
    for (; kb < rounded; kb += P) y3_steps<true>(Y3_LDY, ln, xf, kb, n, a);
    y3_fold(a);
    float *slice = nullptr; // split K: the block's raw sums go to its slice of the workspace
#if !GT_BATCHED
    if (gridDim.z > 1) {
        if (blockIdx.x == 0 && blockIdx.z == 0 && threadIdx.x == 0) *(unsigned *)ws = gridDim.z;
        slice = ws + GT_SLICE_HEAD + blockIdx.z * gt_slice_floats(Y3_S, Y3_L);
    }
#else
    (void)ws;
#endif
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int j = 0; j < Y3_NS; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) { // the MMA's row g (+ 8) is column l, its column 2t (+ 1) row s
                const int s = 8 * j + 2 * t + e % 2, l = l0 + 16 * m + g + 8 * (e / 2);
                if (s >= Y3_S || !ln.ok[m][e / 2]) continue;
                if (slice) slice[(size_t)s * Y3_L + l] = a.sum[m][j][e];
                else gt_slice_put(C, ldc, s, l, a.sum[m][j][e], alpha, beta);
            }
}
