// Family skinnyr (kernels/skinnyr.c): skinny's shapes (one small side S of C: M with SIDE 0, N with SIDE 1) where the
// large operand runs along L, read straight from global memory into registers: no shared-memory stage of it, and no
// barrier for it. Tested by tests/test_skinnyr.c (CPU: legality, launch, NVRTC), tests/test_gpu.c (every family
// against cuBLAS) and the CPU emulator (tests/emu/run.sh skinnyr).
//
// Names as in skinny.cu: S the small side, L the large one, X(s, k) the small operand, Y(k, l) the large one, C(s,
// l) the result. Lane j of warp w owns the columns c0 + j + 32 t (t < TL, c0 the warp's first), so that each load of
// a warp is 128 contiguous bytes whatever ld's alignment (skinny's 16-byte copies need an aligned ld), and all SR
// rows of S for them (SR >= S: rows past S compute zeros). It keeps P rows of K of its columns in flight in
// registers: the row it adds is the one it loaded P rows before. X, small and read by every lane, waits in shared
// memory along S (a k's SR values in broadcast 16-byte reads): the block's whole slice of K, copied by cp.async
// before the loop, so that the loop holds nothing but rows and registers. Where Y runs along K the same code is
// correct and slow (each load a column apart): applicable() offers the family only the layouts it is for.
//
// With KW > 1, KW warps of the block share its columns, each over its own part of the block's slice of K (whole
// steps of P), and join their sums through shared memory in part order at the end: half (KW 2) the slices for the
// same warps, so half the partial sums through the workspace and the reduce.
//
// K is split over grid z (launch() picks the slices to fill the GPU, and enough of them that a slice's X fits the
// shared memory it asks for): each block writes its raw sums to its slice of the workspace, and gt_splitk_reduce
// adds the slices in slice order (the bits depend on the shape alone) and applies alpha and beta. A batch walks grid
// z instead, one slice a matrix.
#ifndef SIDE
#define SIDE 0 // 0: M is the small side; 1: N is
#endif
#ifndef SR
#define SR 32 // rows of the small side each lane holds, at least S
#endif
#ifndef TL
#define TL 2 // columns of the large side per lane, 32 apart
#endif
#ifndef WARPS
#define WARPS 8 // warps per block
#endif
#ifndef P
#define P 8 // rows of K of Y in flight in a lane's registers
#endif
#ifndef MINB
#define MINB 2 // blocks per SM asked of the compiler (a register budget)
#endif
#ifndef KW
#define KW 1 // warps that share their columns, each over its own part of the block's slice of K
#endif

#include "async.cuh"
#include "common.cuh"
#include "ldg.cuh"
#include "pdl.cuh"

#define YR_XP ((SR + 3) / 4 * 4) // floats of X per k in shared memory: whole 16-byte reads
#define YR_NT (32 * WARPS)       // threads per block
#define YR_CW (WARPS / KW)       // warps across the block's columns
static_assert(WARPS % KW == 0, "KW divides WARPS");
#define YR_HEAD 64               // floats before the split-K slices in the workspace (the slice count)
#define GT_SPLITK_AT_LAUNCH 1    // the K split is launch()'s, not a tunable: gt_splitk_reduce reads it from ws

#if SIDE == 0 // X = op(A), Y = op(B), C(s, l) = C[s][l]
#define YR_Y_LMAJOR (!GT_TB)
#define YR_X_SMAJOR (GT_TA)
#else // X(s, k) = op(B)(k, s), Y(k, l) = op(A)(l, k), C(s, l) = C[l][s]
#define YR_Y_LMAJOR (GT_TA)
#define YR_X_SMAJOR (!GT_TB)
#endif

// The operands by role, from gt_gemm's arguments: kernel parameters (the compiler reloads them where it needs
// them rather than hold registers), not copies.
#if SIDE == 0
#define YR_X A
#define YR_Y B
#define YR_LDX lda
#define YR_LDY ldb
#define YR_S M
#define YR_L N
#else
#define YR_X B
#define YR_Y A
#define YR_LDX ldb
#define YR_LDY lda
#define YR_S N
#define YR_L M
#endif

// The slice's rows 0 .. rows of X (k0 its first k; rows past n zero, and past S) into xs[rows][YR_XP] by 4-byte
// cp.async: along S a thread per element (coalesced along S), along K a thread per k (coalesced along K).
__device__ __forceinline__ void yr_fill_x(const float *X, int ldx, int S, float *xs, int k0, int rows, int n)
{
    const unsigned base = (unsigned)__cvta_generic_to_shared(xs);
#if YR_X_SMAJOR
    for (int i = threadIdx.x; i < rows * YR_XP; i += YR_NT) {
        const int kk = i / YR_XP, s = i % YR_XP;
        const bool in = kk < n && s < S;
        gt_cp_async<4>(base + 4 * i, in ? X + (size_t)(k0 + kk) * ldx + s : X, in ? 4 : 0);
    }
#else
    for (int kk = threadIdx.x; kk < rows; kk += YR_NT) {
        const bool kin = kk < n;
#pragma unroll 4
        for (int s = 0; s < YR_XP; ++s) {
            const bool in = kin && s < S;
            gt_cp_async<4>(base + 4 * (kk * YR_XP + s), in ? X + (size_t)s * ldx + k0 + kk : X, in ? 4 : 0);
        }
    }
#endif
}

// The lane's Y registers: y[p] holds row (kb + p) of its columns while rows kb .. kb + P - 1 are added.
struct yr_lane {
    const float *next; // the lane's first column at the next row to load
    bool ok[TL];       // column t lies inside L (a column past it is never loaded, and its sums never stored)
    float y[P][TL];
};

// Row `row` of the slice into y[p]: TAIL, rows past n load zeros (X is zero there too); otherwise every row is in
// range, and a column past L keeps whatever its register held.
template <bool TAIL>
__device__ __forceinline__ void yr_load(int ldy, yr_lane &ln, int p, int row, int n)
{
    const size_t cs = YR_Y_LMAJOR ? 32 : (size_t)32 * ldy; // from one of the lane's columns to the next
#pragma unroll
    for (int t = 0; t < TL; ++t) {
        if (!TAIL) {
            gt_ldg_stream(ln.y[p][t], ln.next + t * cs, ln.ok[t]);
        } else {
            ln.y[p][t] = 0.0f;
            gt_ldg_stream(ln.y[p][t], ln.next + t * cs, row < n && ln.ok[t]);
        }
    }
    ln.next += YR_Y_LMAJOR ? ldy : 1; // to the next row of K
}

// acc += X(rows, kb .. kb + P) Y(kb .. kb + P, the lane's columns), xr at X's row kb in shared memory; each row's
// registers then take the row P further on.
template <bool TAIL>
__device__ __forceinline__ void yr_rows(int ldy, yr_lane &ln, const float *xr, int kb, int n,
                                        float (&acc)[SR][TL])
{
#pragma unroll
    for (int p = 0; p < P; ++p) {
#pragma unroll
        for (int r = 0; r < SR; r += 4) {
            const float4 v = *(const float4 *)(xr + p * YR_XP + r);
            const float x[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int i = 0; i < 4; ++i)
                if (r + i < SR)
#pragma unroll
                    for (int t = 0; t < TL; ++t) acc[r + i][t] = fmaf(x[i], ln.y[p][t], acc[r + i][t]);
        }
        yr_load<TAIL>(ldy, ln, p, kb + p + P, n);
    }
}

// C(s, l) = alpha v + beta C(s, l), C not read where beta == 0 (it may hold NaN).
__device__ __forceinline__ void yr_put(float *C, int ldc, int s, int l, float v, float alpha, float beta)
{
    float *c = C + (SIDE == 0 ? (size_t)s * ldc + l : (size_t)l * ldc + s);
    *c = beta == 0.0f ? alpha * v : fmaf(beta, *c, alpha * v);
}

// Rows of K per slice of a split into z: whole steps of P rows (kernels/skinnyr.c sizes shared memory by it).
__device__ __forceinline__ int yr_per(int K, int z) { return ((K + z - 1) / z + P - 1) / P * P; }

// Floats between split-K slices in the workspace: S L rounded up to 4 (16-byte reads in gt_splitk_reduce).
__device__ __forceinline__ size_t yr_slice(int S, int L) { return ((size_t)S * L + 3) / 4 * 4; }

// One thread per four elements of C (in the order of a slice): the slices added in the order z = 0, 1, ..., then
// alpha and beta. Launched after gt_gemm on its stream (gt_kernel_launch), on sm_90 before gt_gemm has finished: it
// waits for it first (pdl.cuh). skinny.cu's, less the bias and three of its four 64-bit divisions a thread (a
// header shared with it would change that template's text, which is part of every stored skinny kernel's id).
extern "C" __global__ void gt_splitk_reduce(int M, int N, float alpha, const float *__restrict__ ws, float beta,
                                            float *__restrict__ C, int ldc)
{
    gt_wait_gemm();
    const int S = SIDE ? N : M, L = SIDE ? M : N;
    const size_t e = 4 * ((size_t)blockIdx.x * blockDim.x + threadIdx.x), n = (size_t)S * L, stride = yr_slice(S, L);
    if (e >= n) return;
    const unsigned z = *(const unsigned *)ws;
    const float4 *p = (const float4 *)(ws + YR_HEAD + e);
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
        if (e + i < n) yr_put(C, ldc, r, l, out[i], alpha, beta);
    }
}

// The KW parts' sums added in part order into part 0's warps (KW > 1), through the shared memory X leaves; false
// in the other parts' warps, which are then done. The warp's place is read again from threadIdx here: gt_gemm's
// copies, kept live across the main loop, cost its TL 2 points a spill.
__device__ __forceinline__ bool yr_join(float *red, float (&acc)[SR][TL])
{
    const int lane = threadIdx.x % 32, cw = threadIdx.x / 32 % YR_CW, part = threadIdx.x / 32 / YR_CW;
    __syncthreads(); // every warp is done with X
    auto at = [&](int q, int r, int t) -> float & { // part q + 1's sum (r, t): a warp's lanes side by side
        return red[((q * SR + r) * TL + t) * (32 * YR_CW) + cw * 32 + lane];
    };
    if (part > 0)
#pragma unroll
        for (int r = 0; r < SR; ++r)
#pragma unroll
            for (int t = 0; t < TL; ++t) at(part - 1, r, t) = acc[r][t];
    __syncthreads();
    if (part > 0) return false;
    for (int q = 0; q < KW - 1; ++q)
#pragma unroll
        for (int r = 0; r < SR; ++r)
#pragma unroll
            for (int t = 0; t < TL; ++t) acc[r][t] += at(q, r, t);
    return true;
}

extern "C" __global__ void __launch_bounds__(YR_NT, MINB) gt_gemm(GT_GEMM_ARGS)
{
    GT_BATCH_OFFSET();
    extern __shared__ float4 smem4[];
    float *xs = (float *)smem4; // X's slice: its rows of K, YR_XP floats each
    int k0 = 0, n = K; // the block's slice of K: rows k0 .. k0 + n
#if !GT_BATCHED
    const int per = yr_per(K, (int)gridDim.z);
    k0 = min(K, (int)blockIdx.z * per), n = min(K - k0, per);
#endif
#if KW > 1
    // The warp's part of the slice: rows pk .. pk + pn of it, whole steps of P (X past n is zero, Y loads zeros).
    const int cw = threadIdx.x / 32 % YR_CW, part = threadIdx.x / 32 / YR_CW;
    const int pper = (n + KW * P - 1) / (KW * P) * P, pk = min(n, part * pper), pn = min(n - pk, pper);
#else
    const int cw = threadIdx.x / 32, pk = 0, pn = n;
#endif
    const int rows = (pn + P - 1) / P * P; // rows added: pn, rounded up to whole P (zeros past pn)
    const int lane = threadIdx.x % 32, c0 = (blockIdx.x * YR_CW + cw) * 32 * TL, col = c0 + lane;
    yr_lane ln;
#pragma unroll
    for (int t = 0; t < TL; ++t) ln.ok[t] = col + 32 * t < YR_L;
    ln.next = YR_Y_LMAJOR ? YR_Y + (size_t)(k0 + pk) * YR_LDY + (col < YR_L ? col : 0)
                          : YR_Y + (size_t)(col < YR_L ? col : 0) * YR_LDY + k0 + pk;
#pragma unroll
    for (int p = 0; p < P; ++p) yr_load<true>(YR_LDY, ln, p, p, pn);
    yr_fill_x(YR_X, YR_LDX, YR_S, xs, k0, (n + P - 1) / P * P, n); // the whole slice's X, every part's rows
    gt_cp_async_commit();
    gt_cp_async_wait<0>();
    __syncthreads(); // the slice's X is everyone's
    float acc[SR][TL];
#pragma unroll
    for (int r = 0; r < SR; ++r)
#pragma unroll
        for (int t = 0; t < TL; ++t) acc[r][t] = 0.0f;
    const float *xp = xs + pk * YR_XP;
    int kb = 0;
#pragma unroll 1
    for (; kb + 2 * P <= pn; kb += P) yr_rows<false>(YR_LDY, ln, xp + kb * YR_XP, kb, pn, acc); // loads inside the part
#pragma unroll 1
    for (; kb < rows; kb += P) yr_rows<true>(YR_LDY, ln, xp + kb * YR_XP, kb, pn, acc);
#if KW > 1
    if (!yr_join(xs, acc)) return;
#endif
    float *slice = nullptr; // split K: the block's raw sums go to its slice of the workspace
#if !GT_BATCHED
    if (gridDim.z > 1) {
        if (blockIdx.x == 0 && blockIdx.z == 0 && threadIdx.x == 0) *(unsigned *)ws = gridDim.z;
        slice = ws + YR_HEAD + blockIdx.z * yr_slice(YR_S, YR_L);
    }
#else
    (void)ws;
#endif
#pragma unroll
    for (int r = 0; r < SR; ++r)
#pragma unroll
        for (int t = 0; t < TL; ++t) {
            const int l = col + 32 * t;
            if (r >= YR_S || !ln.ok[t]) continue;
            if (slice) slice[(size_t)r * YR_L + l] = acc[r][t];
            else yr_put(C, ldc, r, l, acc[r][t], alpha, beta);
        }
}
