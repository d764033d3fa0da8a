// Family skinnyt (kernels/skinnyt.c): one small side S of C (M with SIDE 0, N with SIDE 1) tiled as a square GEMM
// is: a thread holds ROWS rows of S by TN columns of L, so that each 16-byte read of shared memory serves 4 TN or 4
// ROWS FMAs (skinny's lanes hold all rows for 2 to 4 columns: a read of X every 2 to 4). Tested by tests/test_skinnyt.c
// (CPU: legality, launch, NVRTC), tests/test_gpu.c (against cuBLAS) and the CPU emulator (tests/emu/run.sh skinnyt).
// The study it comes from: tests/perf/skinny_wt.cu.
//
// Names as in skinny.cu: X(s, k) the small operand, Y(k, l) the large one (along L: applicable() offers the family only
// those layouts; along K it is correct and slow, a 4-byte copy an element), C(s, l) the result. A warp's lanes form RT
// row groups of 32 / RT lanes; lane (tr, lc) holds rows tr, tr + RT, ..., tr + RT (ROWS - 1) of S (RT ROWS >= S; rows
// past S are never stored) and columns lc 4 + j % 4 + (j / 4) 32 / RT 4 of its warp's 32 TN / RT. WL warps side by side
// cover a block's BL columns; WK such groups each take a part of the block's slice of K, with a STAGES-deep cp.async
// ring of KC-deep stages and a named barrier of their own (a group's warps copy and read only their ring), and add
// their sums in shared memory in group order at the end. In a stage X lies along S (row s at group s % RT, place s /
// RT, groups an odd number of 16-byte quads apart: a warp's RT reads hit distinct banks), copied 4 bytes at a time
// (transposed where X runs along K), Y along L in 16-byte copies where its address and ld allow. Each thread's copies
// keep one row (X along K), one pair of rows (X along S) or one column (Y) and step along k: a base and constant
// offsets. Fragments of X and Y are double-buffered in registers across the k's of a stage.
//
// K is split over grid z (launch() picks the slices to fill the GPU): each block writes its raw sums to its slice of
// the workspace and gt_splitk_reduce (slicesum.cuh) adds the slices in slice order and applies alpha and beta. A batch
// walks grid z instead, one slice a matrix.
#ifndef SIDE
#define SIDE 0 // 0: M is the small side; 1: N is
#endif
#ifndef ROWS
#define ROWS 13 // rows of S a thread holds (RT ROWS >= S)
#endif
#ifndef RT
#define RT 4 // row groups of a warp (2 or 4)
#endif
#ifndef TN
#define TN 8 // columns of L a thread holds (4 or 8)
#endif
#ifndef WL
#define WL 2 // warps side by side along L
#endif
#ifndef WK
#define WK 2 // groups of WL warps that share out the block's slice of K
#endif
#ifndef KC
#define KC 16 // K depth of a stage
#endif
#ifndef STAGES
#define STAGES 3 // stages in each group's ring
#endif

#include "async.cuh"
#include "common.cuh"
#include "groupsync.cuh"
#include "slicesum.cuh"

#define GT_SPLITK_AT_LAUNCH 1 // the K split is launch()'s, not a tunable: gt_splitk_reduce reads it from ws
#define ST_LC (32 / RT)                            // lanes of a row group
#define ST_SP (RT * ROWS)                          // rows of S a block holds
#define ST_RP ((ROWS + 3) / 4 * 4)                 // a group's rows in whole 16-byte reads
#define ST_XG (ST_RP / 4 % 2 ? ST_RP : ST_RP + 4) // floats from group to group: an odd number of quads
#define ST_XK (RT * ST_XG / 4 % 2 ? RT * ST_XG : RT * ST_XG + 4) // floats of X a k: odd quads (k rows spread)
#define ST_BL (WL * ST_LC * TN)                    // columns of L a block
#define ST_NG (32 * WL)                            // threads of a K group
#define ST_NT (ST_NG * WK)                         // threads of a block
#define ST_STAGE (KC * (ST_XK + ST_BL))            // floats of a stage: X, then Y

static_assert(RT == 2 || RT == 4, "RT: 2 or 4 row groups");
static_assert(TN == 4 || TN == 8, "TN: 4 or 8 columns");
static_assert(ST_NG % KC == 0 && (ST_NG / KC) % RT == 0, "X along K: a thread's copies keep their row group");
static_assert(KC % (ST_NG / 32) == 0, "X along S: the group's warps divide a stage's k");
static_assert((ST_NG % (ST_BL / 4) == 0 || (ST_BL / 4) % ST_NG == 0) && (ST_NG % ST_BL == 0 || ST_BL % ST_NG == 0),
              "Y: a thread's copies keep their column");

#if SIDE == 0 // X = op(A), Y = op(B), C(s, l) = C[s][l]
#define ST_Y_LMAJOR (!GT_TB)
#define ST_X_SMAJOR (GT_TA)
#define ST_X A
#define ST_Y B
#define ST_LDX lda
#define ST_LDY ldb
#define ST_S M
#define ST_L N
#else // X(s, k) = op(B)(k, s), Y(k, l) = op(A)(l, k), C(s, l) = C[l][s]
#define ST_Y_LMAJOR (GT_TA)
#define ST_X_SMAJOR (!GT_TB)
#define ST_X B
#define ST_Y A
#define ST_LDX ldb
#define ST_LDY lda
#define ST_S N
#define ST_L M
#endif

struct st_ops {
    const float *X, *Y;
    int ldx, ldy, S, L, l0, kend, gt;
};

// X's copies of a stage at shared address st: X(0 .. SP, kb .. kb + KC), zeros at k from kend (PART). Rows past S
// are zeros where X runs along K and left as they were along S: their sums are never stored.
template <bool PART> __device__ __forceinline__ void st_load_x(const st_ops &o, unsigned st, int kb)
{
#if !ST_X_SMAJOR // X(s, k) at X[s ldx + k]: a thread one k, rows PS apart (PS a multiple of RT: one row group)
    constexpr int PS = ST_NG / KC;
    const int k = o.gt % KC, s0 = o.gt / KC;
    const bool kin = !PART || kb + k < o.kend;
    const unsigned d = st + 4 * (k * ST_XK + s0 % RT * ST_XG + s0 / RT);
    const float *src = o.X + (size_t)s0 * o.ldx + kb + k;
#pragma unroll
    for (int i = 0; i < (ST_SP + PS - 1) / PS; ++i) {
        const int s = s0 + PS * i;
        if (ST_SP % PS && s >= ST_SP) break;
        const bool in = kin && s < o.S; // rows past S zero-filled (a predicate, not a branch)
        gt_cp_async_free<4>(d + 4 * (PS / RT) * i, in ? src + (size_t)PS * i * o.ldx : o.X, in ? 4 : 0);
    }
#else // X(s, k) at X[k ldx + s]: a lane rows lane and lane + 32, the group's warps k's apart
    constexpr int KW = ST_NG / 32;
    const int lane = o.gt % 32, k0 = o.gt / 32;
#pragma unroll
    for (int j = 0; j < (ST_SP + 31) / 32; ++j) {
        const int s = lane + 32 * j;
        if (s >= o.S || s >= ST_SP) break;
        const unsigned d = st + 4 * (k0 * ST_XK + s % RT * ST_XG + s / RT);
        const float *src = o.X + (size_t)(kb + k0) * o.ldx + s;
#pragma unroll
        for (int i = 0; i < KC / KW; ++i) {
            const bool in = !PART || kb + k0 + KW * i < o.kend;
            gt_cp_async_free<4>(d + 4 * KW * i * ST_XK, in ? src + (size_t)KW * i * o.ldx : o.X, in ? 4 : 0);
        }
    }
#endif
}

// Y's copies of a stage at shared address ys: Y(kb .. kb + KC, l0 .. l0 + BL), W floats a copy (4: 16 bytes); PART:
// zeros at k from kend and columns from L; otherwise a copy wholly past L takes the last W columns instead (their
// sums are never stored; st_load keeps copies that straddle L to PART).
template <int W, bool PART> __device__ __forceinline__ void st_load_y(const st_ops &o, unsigned ys, int kb)
{
#if !ST_Y_LMAJOR // Y(k, l) at Y[l ldy + k]: 4-byte copies, consecutive threads consecutive k (correct, not fast)
#pragma unroll 4
    for (int q = o.gt; q < KC * ST_BL; q += ST_NG) {
        const int k = q % KC, c = q / KC, l = PART ? o.l0 + c : min(o.l0 + c, o.L - 1);
        const bool in = !PART || (kb + k < o.kend && l < o.L);
        gt_cp_async_free<4>(ys + 4 * (k * ST_BL + c), in ? o.Y + (size_t)l * o.ldy + kb + k : o.Y, in ? 4 : 0);
    }
    return;
#endif
    constexpr int CR = ST_BL / W; // copies a k row
#pragma unroll
    for (int i = 0; i < KC * CR / ST_NG; ++i) {
        const int q = ST_NG % CR == 0 ? o.gt % CR : o.gt + ST_NG * (i % (CR / ST_NG));
        const int k = ST_NG % CR == 0 ? o.gt / CR + ST_NG / CR * i : i / (CR / ST_NG);
        const int c = W * q, l = PART ? o.l0 + c : min(o.l0 + c, o.L - W); // past L: a copy of the last W (unused)
        const int n = !PART ? 4 * W : kb + k < o.kend ? 4 * max(0, min(W, o.L - l)) : 0;
        gt_cp_async_free<4 * W>(ys + 4 * (k * ST_BL + c), n ? o.Y + (size_t)(kb + k) * o.ldy + l : o.Y, n);
    }
}

// A stage that reaches past K (a slice's last), or past L where 16-byte copies would straddle it: each copy tests its
// bounds. Out of line, so that the main loop's code stays small enough for the instruction cache.
template <bool VY> __device__ __noinline__ void st_load_part(const st_ops &o, unsigned st, int kb)
{
    st_load_x<true>(o, st, kb);
    st_load_y<VY ? 4 : 1, true>(o, st + 4 * KC * ST_XK, kb);
}

// The stage of K from kb into the ring's slot at st. VY: Y in 16-byte copies.
template <bool VY> __device__ __forceinline__ void st_load(const st_ops &o, unsigned st, int kb)
{
    if (kb + KC <= o.kend && (o.l0 + ST_BL <= o.L || (o.L >= 4 && (!VY || o.L % 4 == 0)))) {
        st_load_x<false>(o, st, kb);
        st_load_y<VY ? 4 : 1, false>(o, st + 4 * KC * ST_XK, kb);
    } else {
        st_load_part<VY>(o, st, kb);
    }
}

struct st_frag {
    float x[ST_RP], y[TN];
};

// The thread's fragment at k of a stage: its group's rows (RP / 4 16-byte reads), its columns (TN / 4 reads
// LC 4 floats apart).
__device__ __forceinline__ void st_read(st_frag &f, const float *xs, const float *ys, int k, int tr, int cb)
{
#pragma unroll
    for (int q = 0; q < ST_RP; q += 4) {
        const float4 v = *(const float4 *)(xs + k * ST_XK + tr * ST_XG + q);
        f.x[q] = v.x, f.x[q + 1] = v.y, f.x[q + 2] = v.z, f.x[q + 3] = v.w;
    }
#pragma unroll
    for (int h = 0; h < TN / 4; ++h) {
        const float4 v = *(const float4 *)(ys + k * ST_BL + cb + h * ST_LC * 4);
        f.y[4 * h] = v.x, f.y[4 * h + 1] = v.y, f.y[4 * h + 2] = v.z, f.y[4 * h + 3] = v.w;
    }
}

// acc += the products of one stage, the next k's fragment read while this one's FMAs run.
__device__ __forceinline__ void st_compute(const float *xs, const float *ys, int tr, int cb, float (&acc)[ROWS][TN])
{
    st_frag f[2];
    st_read(f[0], xs, ys, 0, tr, cb);
#pragma unroll
    for (int k = 0; k < KC; ++k) {
        if (k + 1 < KC) st_read(f[(k + 1) % 2], xs, ys, k + 1, tr, cb);
#pragma unroll
        for (int i = 0; i < ROWS; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(f[k % 2].x[i], f[k % 2].y[j], acc[i][j]);
    }
}

// Group g's stages c0 .. c0 + n of the block's slice from kz0 through its ring: acc += their products. VY: as
// st_load (one loop for each, so that neither carries the other's copies).
template <bool VY>
__device__ __forceinline__ void st_mainloop(const st_ops &o, float *ring, int kz0, int c0, int n, int g, int tr,
                                            int cb, float (&acc)[ROWS][TN])
{
    const unsigned ring_s = (unsigned)__cvta_generic_to_shared(ring);
#pragma unroll
    for (int c = 0; c < STAGES - 1; ++c) {
        if (c < n) st_load<VY>(o, ring_s + 4 * c * ST_STAGE, kz0 + (c0 + c) * KC);
        gt_cp_async_commit();
    }
#pragma unroll 1
    for (int c = 0; c < n; ++c) {
        gt_cp_async_wait<STAGES - 2>();
        gt_bar_named<ST_NG>(1 + g); // stage c is every thread's; all are past stage c - 1, whose slot the copies take
        const int next = c + STAGES - 1;
        if (next < n) st_load<VY>(o, ring_s + 4 * (next % STAGES) * ST_STAGE, kz0 + (c0 + next) * KC);
        gt_cp_async_commit();
        const float *xs = ring + (c % STAGES) * ST_STAGE;
        st_compute(xs, xs + KC * ST_XK, tr, cb, acc);
    }
    gt_cp_async_wait<0>();
}

// The groups' sums meet in shared memory (the rings' space): group g > 0 leaves its sums there, group 0 adds them in
// group order (the bits do not depend on timing). Returns whether this thread holds the block's sums.
__device__ __forceinline__ bool st_join(float *sm, int g, int gt, float (&acc)[ROWS][TN])
{
    if (WK == 1) return true;
    __syncthreads();
    if (g > 0) {
        float *red = sm + (size_t)(g - 1) * ROWS * TN * ST_NG;
#pragma unroll
        for (int i = 0; i < ROWS; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) red[(i * TN + j) * ST_NG + gt] = acc[i][j];
    }
    __syncthreads();
    if (g > 0) return false;
#pragma unroll 1
    for (int h = 1; h < WK; ++h) {
        const float *red = sm + (size_t)(h - 1) * ROWS * TN * ST_NG;
#pragma unroll
        for (int i = 0; i < ROWS; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[i][j] += red[(i * TN + j) * ST_NG + gt];
    }
    return true;
}

extern "C" __global__ void __launch_bounds__(ST_NT) gt_gemm(GT_GEMM_ARGS)
{
    GT_BATCH_OFFSET();
    extern __shared__ float4 smem4[];
    float *sm = (float *)smem4;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = warp / WL, wl = warp % WL;
    const int tr = lane / ST_LC, cb = wl * ST_LC * TN + lane % ST_LC * 4;
    st_ops o = {ST_X, ST_Y, ST_LDX, ST_LDY, ST_S, ST_L, (int)blockIdx.x * ST_BL, K, (int)(threadIdx.x % ST_NG)};
    int kz0 = 0; // the block's slice of K: kz0 .. o.kend, its stages shared out among the WK groups in order
#if !GT_BATCHED
    const int per = ((K + KC - 1) / KC + (int)gridDim.z - 1) / (int)gridDim.z * KC;
    kz0 = min(K, (int)blockIdx.z * per), o.kend = min(K, kz0 + per);
#endif
    const int nst = (o.kend - kz0 + KC - 1) / KC, c0 = nst * g / WK, c1 = nst * (g + 1) / WK;
    float acc[ROWS][TN];
#pragma unroll
    for (int i = 0; i < ROWS; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
    float *ring = sm + (size_t)g * STAGES * ST_STAGE;
    if (GT_VEC_OK(4, o.Y, o.ldy)) st_mainloop<true>(o, ring, kz0, c0, c1 - c0, g, tr, cb, acc);
    else st_mainloop<false>(o, ring, kz0, c0, c1 - c0, g, tr, cb, acc);
    if (!st_join(sm, g, o.gt, acc)) return;
    float *slice = nullptr; // split K: the block's raw sums go to its slice of the workspace
#if !GT_BATCHED
    if (gridDim.z > 1) {
        if (blockIdx.x == 0 && blockIdx.z == 0 && threadIdx.x == 0) *(unsigned *)ws = gridDim.z;
        slice = ws + GT_SLICE_HEAD + blockIdx.z * gt_slice_floats(o.S, o.L);
    }
#else
    (void)ws;
#endif
#pragma unroll
    for (int i = 0; i < ROWS; ++i) {
        const int s = tr + RT * i;
        if (s >= o.S) break;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int l = o.l0 + cb + j / 4 * ST_LC * 4 + j % 4;
            if (l >= o.L) continue;
            if (slice) slice[(size_t)s * o.L + l] = acc[i][j];
            else gt_slice_put(C, ldc, s, l, acc[i][j], alpha, beta);
        }
    }
}
