// Multistage warp-tiled FFMA SGEMM: STAGES shared-memory buffers filled by cp.async, warp tiles split into
// WMITER x WNITER sub-tiles of TM x TN per thread, register fragments double-buffered, blocks rasterized in
// groups of RASTER tile rows for L2 reuse, optional deterministic split-K. Interior tiles run a branch-free
// steady loop (with KT, an operand stored with k contiguous comes there by 16-byte loads through registers);
// shared memory is addressed with 32-bit shared-window addresses throughout.  Alone:
// nvcc -arch=sm_90 -cubin -Xptxas -v -I templates templates/multistage.cu   (tests: tests/test_multistage.c)
#include "common.cuh"
#include "async.cuh"
#include "epilogue.cuh"
#include "raster.cuh"

#ifndef BM
#define BM 128 // rows of C per block
#endif
#ifndef BN
#define BN 128 // columns of C per block
#endif
#ifndef BK
#define BK 8 // K depth of one pipeline stage (multiple of 8)
#endif
#ifndef WM
#define WM 64 // rows of C per warp
#endif
#ifndef WN
#define WN 32 // columns of C per warp
#endif
#ifndef WNITER
#define WNITER 2 // warp sub-tiles along N; WMITER follows from the warp's 32 threads
#endif
#ifndef TM
#define TM 4 // rows of one thread sub-tile (multiple of 4: read with LDS.128)
#endif
#ifndef TN
#define TN 4 // columns of one thread sub-tile (multiple of 4)
#endif
#ifndef STAGES
#define STAGES 3 // shared-memory buffers in the cp.async pipeline (2..4)
#endif
#ifndef MINB
#define MINB 1 // blocks per SM promised to __launch_bounds__ (2 caps registers at 32768 / threads)
#endif
#ifndef RASTER
#define RASTER 1 // tile rows per rasterization group (1: row-major block order)
#endif
#ifndef EDGE
#define EDGE 0 // 1: edge and unaligned blocks keep a steady loop of their own (always so with stream-K)
#endif
#ifndef SK
#define SK 0 // stream-K: 0 off; n > 0 a persistent grid (n blocks per SM, sized by the launch) shares the MAC loop
#endif
#ifndef KT
#define KT 0 // 1: an operand stored with k contiguous comes in quads of k (16-byte loads) through registers
#endif
#ifndef EVEN
#define EVEN 0 // 1: only for calls of whole tiles with 16-byte aligned operands and ld (gt_gemm traps on others):
               // no edge code, 0.35-0.9x the compile (the sweep compiles this variant where its shape allows)
#endif
// Measurement hooks for tests/perf/ablate.sh, never set by gemmtune: 1 drops the main loop's global copies,
// 2 also drops its cp.async wait and barrier. The results are then wrong; they only time what is left.
#ifndef GT_ABLATE
#define GT_ABLATE 0
#endif

#define NT ((BM / WM) * (BN / WN) * 32)              // threads per block
#define WMITER ((WM * WN) / (32 * TM * TN * WNITER)) // warp sub-tiles along M
#define WSUBM (WM / WMITER)                          // rows of one warp sub-tile
#define WSUBN (WN / WNITER)                          // columns of one warp sub-tile
#define TCOLS (WSUBN / TN)                           // threads across a warp sub-tile
#define PAD 4                                        // floats after each k row: conflict-free transposing stores
#define LDA_S (BM + PAD)                             // shared row pitch of the A tile (k-major)
#define LDB_S (BN + PAD)
#define STAGE_FLOATS (BK * (LDA_S + LDB_S))
#define QPR (BK / 4)                                 // KT: quads of k in a row of a k-contiguous operand's tile
#define QRPP (NT / QPR)                              // KT: rows such a tile's quads cover per pass of the block
#define KTQ(D) (((D) + QRPP - 1) / QRPP)             // KT: quads of a D-row tile per thread

static_assert(BK % 8 == 0 && TM % 4 == 0 && TN % 4 == 0, "BK multiple of 8, TM and TN multiples of 4");
static_assert(BM % WM == 0 && BN % WN == 0 && WN % WNITER == 0, "warp tiling must divide the block tile");
static_assert(WMITER >= 1 && WM % WMITER == 0 && WSUBM % TM == 0 && WSUBN % TN == 0, "bad warp sub-tile");
static_assert((WSUBM / TM) * TCOLS == 32, "a warp sub-tile must hold exactly 32 thread tiles");
static_assert(STAGES >= 2 && STAGES <= 8 && RASTER >= 1, "STAGES 2..8, RASTER >= 1");
static_assert(SK == 0 || SPLITK == 1, "stream-K and split-K are exclusive");

// Every copy is a cp.async (async.cuh) with the L2 prefetch hint: it matters for the 4-byte copies, whose warps
// touch only 32 bytes of each row per tile.
constexpr bool L2HINT = true;

// Where this thread's copies of one operand start in the next K tile, and how many rows (transposed) or
// columns (k-major) of the matrix are left from its first one. Kernel parameters stay in the constant bank, so
// this is all the per-thread state the loads keep in registers.
struct Feed {
    const float *p;
    int room;
};

// Operand stored k-major in global memory (A with GT_TA, B without GT_TB): element (k, d) at X[k*ld + d].
// Consecutive threads take consecutive quads of a k row: 16-byte copies when the base is 16-byte aligned and
// ld % 4 == 0 (`vec`, checked at run time), else four 4-byte copies. Shared tile: S[kk * (D + PAD) + d].
template <int D>
__device__ __forceinline__ Feed feed_kmajor(const float *X, int ld, int d0, int E, int k0, int tid)
{
    const int d = tid % (D / 4) * 4;
    return {X + (size_t)(k0 + tid / (D / 4)) * ld + d0 + d, E - d0 - d};
}

// kleft: K elements of the slice from this tile on. Copies past an edge read nothing (source size 0) and
// zero-fill; they still get the operand's base X as source, so no out-of-range address (nor an L2 prefetch of
// one) is ever issued. KIN: the whole tile lies inside the K slice (no k predicate); DIN: inside the matrix along
// the operand's other dimension (no row predicate).
template <int D, bool KIN, bool DIN>
__device__ __forceinline__ void copy_kmajor(unsigned S, const Feed &f, const float *X, int ld, int kleft, bool vec,
                                            int tid)
{
    constexpr int CPR = D / 4, RPP = NT / CPR; // quads per k row, k rows per pass (NT % CPR == 0)
    constexpr int PASSES = (BK + RPP - 1) / RPP;
    const unsigned dst = S + 4 * (tid / CPR * (D + PAD) + tid % CPR * 4);
    const int kk0 = tid / CPR;
    if (vec) {
#pragma unroll
        for (int q = 0; q < PASSES; ++q) {
            if (BK % RPP && kk0 + q * RPP >= BK) break;
            const bool in = (KIN || kk0 + q * RPP < kleft) && (DIN || f.room > 0);
            const float *src = f.p + (size_t)q * RPP * ld;
            gt_cp_async<16, L2HINT>(dst + 4 * q * RPP * (D + PAD), in ? src : X,
                                    !in ? 0 : DIN ? 16 : 4 * min(4, f.room));
        }
    } else if (KIN && !DIN) { // T_KSTEADY with an unaligned operand (odd ld): unrolled like the 16-byte path
#pragma unroll
        for (int q = 0; q < PASSES; ++q) {
            if (BK % RPP && kk0 + q * RPP >= BK) break;
#pragma unroll
            for (int e = 0; e < 4; ++e)
                gt_cp_async<4, L2HINT>(dst + 4 * (q * RPP * (D + PAD) + e),
                                       e < f.room ? f.p + (size_t)q * RPP * ld + e : X, e < f.room ? 4 : 0);
        }
    } else {
#pragma unroll 1 // the other tiles: kept rolled so it costs the steady paths no registers
        for (int q = 0; q < PASSES; ++q) {
            if (BK % RPP && kk0 + q * RPP >= BK) break;
            const bool in = KIN || kk0 + q * RPP < kleft;
#pragma unroll
            for (int e = 0; e < 4; ++e)
                gt_cp_async<4, L2HINT>(dst + 4 * (q * RPP * (D + PAD) + e),
                                       in && e < f.room ? f.p + (size_t)q * RPP * ld + e : X, in && e < f.room ? 4 : 0);
        }
    }
}

// Operand stored with k contiguous (A without GT_TA, B with GT_TB): element (k, d) at X[d*ld + k], transposed
// into the same k-major tile with 4-byte copies. Eight consecutive threads take eight consecutive k of one row
// (a full 32-byte sector); a warp covers 8 k x 4 rows, whose stores land in 32 distinct banks thanks to PAD.
// With KT, a thread takes a quad of four consecutive k of a row instead (QPR threads a row), which it copies in
// four 4-byte pieces (copy_transposed) or, in steady tiles, loads whole and stores transposed (kt_load, kt_store).
template <int D>
__device__ __forceinline__ Feed feed_transposed(const float *X, int ld, int d0, int E, int k0, int tid)
{
#if KT
    return {X + (size_t)(d0 + tid / QPR) * ld + k0 + tid % QPR * 4, E - d0 - tid / QPR};
#else
    return {X + (size_t)(d0 + tid / 8) * ld + k0 + tid % 8, E - d0 - tid / 8};
#endif
}

#if KT
template <int D, bool KIN, bool DIN>
__device__ __forceinline__ void copy_transposed(unsigned S, const Feed &f, const float *X, int ld, int kleft,
                                                int tid)
{
    const int k4 = tid % QPR * 4;
    const unsigned dst = S + 4 * (k4 * (D + PAD) + tid / QPR);
#pragma unroll
    for (int r = 0; r < KTQ(D); ++r) {
        if (D % QRPP && tid / QPR + r * QRPP >= D) break;
        const bool din = DIN || r * QRPP < f.room;
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const bool in = din && (KIN || k4 + e < kleft);
            gt_cp_async<4, L2HINT>(dst + 4 * (e * (D + PAD) + r * QRPP), in ? f.p + (size_t)r * QRPP * ld + e : X,
                                   in ? 4 : 0);
        }
    }
}

// 4 bytes into shared memory at a shared-window byte address (as lds128, in PTX to keep the address 32-bit).
__device__ __forceinline__ void sts32(unsigned addr, float v)
{
    asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(addr), "f"(v) : "memory");
}

// 16 bytes from global memory into registers, read-only, with the 128-byte L2 prefetch hint (a warp touches 32
// bytes of a row per tile, as with the 4-byte copies). src must be 16-byte aligned.
__device__ __forceinline__ float4 ldg128_l2(const float *src)
{
    float4 v;
    asm("ld.global.nc.L2::128B.v4.f32 {%0, %1, %2, %3}, [%4];\n"
        : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
        : "l"(src));
    return v;
}

// A steady tile of a k-contiguous operand: this thread's quads by 16-byte loads (the operand aligned, the tile
// whole), issued as the tile STAGES - 1 before it starts computing...
template <int D> __device__ __forceinline__ void kt_load(float4 (&q)[KTQ(D)], const Feed &f, int ld, int tid)
{
#pragma unroll
    for (int r = 0; r < KTQ(D); ++r) {
        if (D % QRPP && tid / QPR + r * QRPP >= D) break;
        q[r] = ldg128_l2(f.p + (size_t)r * QRPP * ld);
    }
}

// ...and stored transposed into its stage as that tile ends, before the barrier that publishes the stage's
// previous copies. A warp's stores of one k land in distinct banks (QPR <= 2: rows and quads side by side).
template <int D> __device__ __forceinline__ void kt_store(unsigned S, const float4 (&q)[KTQ(D)], int tid)
{
    const unsigned dst = S + 4 * (tid % QPR * 4 * (D + PAD) + tid / QPR);
#pragma unroll
    for (int r = 0; r < KTQ(D); ++r) {
        if (D % QRPP && tid / QPR + r * QRPP >= D) break;
        const unsigned a = dst + 4 * r * QRPP;
        sts32(a, q[r].x), sts32(a + 4 * (D + PAD), q[r].y);
        sts32(a + 8 * (D + PAD), q[r].z), sts32(a + 12 * (D + PAD), q[r].w);
    }
}
#else
template <int D, bool KIN, bool DIN>
__device__ __forceinline__ void copy_transposed(unsigned S, const Feed &f, const float *X, int ld, int kleft,
                                                int tid)
{
    constexpr int RPP = NT / 8; // rows per pass
    const int klo = tid % 8;
    const unsigned dst = S + 4 * (klo * (D + PAD) + tid / 8);
#pragma unroll
    for (int kc = 0; kc < BK; kc += 8) {
        const bool kin = KIN || kc + klo < kleft;
#pragma unroll
        for (int r = 0; r < (D + RPP - 1) / RPP; ++r) { // fixed trip count: fully unrolled
            if (D % RPP && tid / 8 + r * RPP >= D) break;
            const bool in = kin && (DIN || r * RPP < f.room);
            gt_cp_async<4, L2HINT>(dst + 4 * (kc * (D + PAD) + r * RPP), in ? f.p + (size_t)r * RPP * ld + kc : X,
                                   in ? 4 : 0);
        }
    }
}
#endif

template <bool KIN, bool DIN>
__device__ __forceinline__ void copy_stage(unsigned S, const Feed &fa, const float *A, int lda, const Feed &fb,
                                           const float *B, int ldb, int kleft, bool va, bool vb, int tid)
{
#if GT_TA
    copy_kmajor<BM, KIN, DIN>(S, fa, A, lda, kleft, va, tid);
#else
    (void)va;
    copy_transposed<BM, KIN, DIN>(S, fa, A, lda, kleft, tid);
#endif
#if GT_TB
    (void)vb;
    copy_transposed<BN, KIN, DIN>(S + 4 * BK * LDA_S, fb, B, ldb, kleft, tid);
#else
    copy_kmajor<BN, KIN, DIN>(S + 4 * BK * LDA_S, fb, B, ldb, kleft, vb, tid);
#endif
}

// How a tile's copies are guarded. The steady modes are for tiles the caller knows lie whole inside the K slice.
enum {
    T_GUARDED = 0, // decided per tile: no predicate for an interior block's whole tile, else every predicate
    T_KSTEADY = 1, // whole in K; rows past M or N predicated, 16- or 4-byte copies as the operand's alignment allows
    T_STEADY = 2   // an interior block with 16-byte copies: nothing is tested
};

// Both feeds one K tile on.
__device__ __forceinline__ void step_feeds(Feed &fa, int lda, Feed &fb, int ldb)
{
    fa.p += GT_TA ? (size_t)BK * lda : BK;
    fb.p += GT_TB ? BK : (size_t)BK * ldb;
}

// Issue the copies of the next K tile into stage S and step both feeds one tile on.
template <int MODE = T_GUARDED>
__device__ __forceinline__ void load_tile(unsigned S, Feed &fa, const float *A, int lda, Feed &fb, const float *B,
                                          int ldb, int kleft, bool va, bool vb, bool inner, int tid)
{
    if (MODE == T_STEADY) copy_stage<true, true>(S, fa, A, lda, fb, B, ldb, BK, true, true, tid);
    else if (MODE == T_KSTEADY) copy_stage<true, false>(S, fa, A, lda, fb, B, ldb, BK, va, vb, tid);
    else if (inner && kleft >= BK) copy_stage<true, true>(S, fa, A, lda, fb, B, ldb, kleft, va, vb, tid);
    else copy_stage<false, false>(S, fa, A, lda, fb, B, ldb, kleft, va, vb, tid);
    step_feeds(fa, lda, fb, ldb);
}

#if KT
// KT's steady tiles: the k-major operand by cp.async as in load_tile, the k-contiguous one into registers (qa, qb),
// which kt_stores puts into stage S when the tile ends.
__device__ __forceinline__ void load_tile_kt(unsigned S, float4 (&qa)[KTQ(BM)], float4 (&qb)[KTQ(BN)], Feed &fa,
                                             const float *A, int lda, Feed &fb, const float *B, int ldb, int tid)
{
#if GT_TA
    (void)qa;
    copy_kmajor<BM, true, true>(S, fa, A, lda, BK, true, tid);
#else
    kt_load<BM>(qa, fa, lda, tid);
#endif
#if GT_TB
    kt_load<BN>(qb, fb, ldb, tid);
#else
    (void)qb;
    copy_kmajor<BN, true, true>(S + 4 * BK * LDA_S, fb, B, ldb, BK, true, tid);
#endif
    step_feeds(fa, lda, fb, ldb);
}

__device__ __forceinline__ void kt_stores(unsigned S, const float4 (&qa)[KTQ(BM)], const float4 (&qb)[KTQ(BN)],
                                          int tid)
{
#if GT_TA
    (void)qa;
#else
    kt_store<BM>(S, qa, tid);
#endif
#if GT_TB
    kt_store<BN>(S + 4 * BK * LDA_S, qb, tid);
#else
    (void)qb;
#endif
}
#endif

// 16 bytes of shared memory at a shared-window byte address. Written in PTX so the address stays 32-bit:
// NVRTC otherwise addresses shared memory with 64-bit registers (nvcc does not), which costs the hot loop
// registers and address arithmetic. Volatile with a memory clobber: never moved across a barrier or a wait.
__device__ __forceinline__ float4 lds128(unsigned addr)
{
    float4 v;
    asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "r"(addr)
                 : "memory");
    return v;
}

// One operand's fragment of one k row: ITER sub-tiles of T values, SUB floats apart, from the shared-window byte
// address base, all LDS.128.
template <int ITER, int T, int SUB> __device__ __forceinline__ void frag_row(float (&f)[ITER * T], unsigned base)
{
#pragma unroll
    for (int i = 0; i < ITER; ++i)
#pragma unroll
        for (int v = 0; v < T; v += 4) {
            const float4 t = lds128(base + 4 * (i * SUB + v));
            f[i * T + v] = t.x, f[i * T + v + 1] = t.y, f[i * T + v + 2] = t.z, f[i * T + v + 3] = t.w;
        }
}

// One k row of this thread's fragments: WMITER x TM values of A and WNITER x TN of B. S: the stage's shared-window
// byte address.
__device__ __forceinline__ void load_frag(float (&a)[WMITER * TM], float (&b)[WNITER * TN], unsigned S, int kk,
                                          int am, int bn)
{
    const unsigned As = S + 4 * (kk * LDA_S + am), Bs = S + 4 * (BK * LDA_S + kk * LDB_S + bn);
    frag_row<WMITER, TM, WSUBM>(a, As);
    frag_row<WNITER, TN, WSUBN>(b, Bs);
}

// acc += a b^T for one k: the thread's whole outer product.
__device__ __forceinline__ void outer(float (&acc)[WMITER * TM][WNITER * TN], const float (&a)[WMITER * TM],
                                      const float (&b)[WNITER * TN])
{
#pragma unroll
    for (int m = 0; m < WMITER * TM; ++m)
#pragma unroll
        for (int n = 0; n < WNITER * TN; ++n) acc[m][n] = fmaf(a[m], b[n], acc[m][n]);
}

// One K tile: issue the copies of tile t+STAGES-1 into stage wsg (which held tile t-1, read by every thread
// before the last barrier), run the BK outer products of stage rs with fragments double-buffered, wait for
// tile t+1 and move on. MODE: how the copies are guarded (load_tile).
template <int MODE>
__device__ __forceinline__ void tile(float (&acc)[WMITER * TM][WNITER * TN], float (&a)[2][WMITER * TM],
                                     float (&b)[2][WNITER * TN], unsigned sbase, int &rs, int &wsg,
                                     Feed &fa, const float *A, int lda, Feed &fb, const float *B, int ldb, int &kleft,
                                     bool va, bool vb, bool inner, int am, int bn, int tid, int t, int ntiles)
{
    const unsigned S = sbase + 4 * rs * STAGE_FLOATS;
#if KT
    float4 qa[KTQ(BM)], qb[KTQ(BN)]; // steady tiles: the k-contiguous operand's quads of tile t+STAGES-1
    const unsigned kdst = sbase + 4 * wsg * STAGE_FLOATS;
#endif
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
        if (kk == 0) {
#if KT
            if (MODE == T_STEADY && !(GT_ABLATE & 1))
                load_tile_kt(kdst, qa, qb, fa, A, lda, fb, B, ldb, tid);
            else
#endif
            if (!(GT_ABLATE & 1) && (MODE != T_GUARDED || t + STAGES - 1 < ntiles))
                load_tile<MODE>(sbase + 4 * wsg * STAGE_FLOATS, fa, A, lda, fb, B, ldb, kleft, va, vb, inner, tid);
            kleft -= BK;
            gt_cp_async_commit();
            wsg = wsg + 1 == STAGES ? 0 : wsg + 1;
        }
        if (kk == BK - 1) {
#if KT
            if (MODE == T_STEADY && !(GT_ABLATE & 1)) kt_stores(kdst, qa, qb, tid);
#endif
            // Tiles 0..t+STAGES-1 are committed; tile t+1 must have landed for every thread.
            if (!(GT_ABLATE & 2)) {
                gt_cp_async_wait<STAGES - 2>();
                __syncthreads();
            }
            rs = rs + 1 == STAGES ? 0 : rs + 1;
            load_frag(a[(kk + 1) % 2], b[(kk + 1) % 2], sbase + 4 * rs * STAGE_FLOATS, 0, am, bn);
        } else {
            load_frag(a[(kk + 1) % 2], b[(kk + 1) % 2], S, kk + 1, am, bn);
        }
        outer(acc, a[kk % 2], b[kk % 2]);
    }
}

typedef float Acc[WMITER * TM][WNITER * TN]; // one thread's results

// This thread's offsets inside a k row of the A and B tiles (and of its results in the block's tile of C).
__device__ __forceinline__ void thread_offsets(int lane, int warp, int *am, int *bn)
{
    const int wr = warp / (BN / WN), wc = warp % (BN / WN);
    *am = wr * WM + lane / TCOLS * TM, *bn = wc * WN + lane % TCOLS * TN;
}

// acc = the products of the tile of C at (bm0, bn0) over K range [k0, k1). Shared memory is free on entry (the
// caller synchronizes between tiles) and every copy has landed on return.
__device__ __forceinline__ void mac_tile(Acc &acc, int M, int N, const float *__restrict__ A, int lda,
                                         const float *__restrict__ B, int ldb, int bm0, int bn0, int k0, int k1,
                                         unsigned sbase, int tid, int lane, int warp)
{
    const int ntiles = (k1 - k0 + BK - 1) / BK;
#if EVEN
    const bool inner = true, va = true, vb = true; // gt_gemm checked
#else
    const bool inner = bm0 + BM <= M && bn0 + BN <= N; // no edge in M or N: only the K tail needs predicates
    const bool va = GT_VEC_OK(4, A, lda), vb = GT_VEC_OK(4, B, ldb);
#endif
    int am, bn;
    thread_offsets(lane, warp, &am, &bn);

#if GT_TA
    Feed fa = feed_kmajor<BM>(A, lda, bm0, M, k0, tid);
#else
    Feed fa = feed_transposed<BM>(A, lda, bm0, M, k0, tid);
#endif
#if GT_TB
    Feed fb = feed_transposed<BN>(B, ldb, bn0, N, k0, tid);
#else
    Feed fb = feed_kmajor<BN>(B, ldb, bn0, N, k0, tid);
#endif
    int kleft = k1 - k0; // K of the slice from the next tile to load on

    // Prologue: tiles 0..STAGES-2, one commit group each (empty past the end, so the counts below hold).
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < ntiles) load_tile(sbase + 4 * s * STAGE_FLOATS, fa, A, lda, fb, B, ldb, kleft, va, vb, inner, tid);
        kleft -= BK;
        gt_cp_async_commit();
    }

#pragma unroll
    for (int m = 0; m < WMITER * TM; ++m)
#pragma unroll
        for (int n = 0; n < WNITER * TN; ++n) acc[m][n] = 0.0f;
    float a[2][WMITER * TM], b[2][WNITER * TN];

    gt_cp_async_wait<STAGES - 2>();
    __syncthreads();
    load_frag(a[0], b[0], sbase, 0, am, bn);

    // Steady tiles: the load they issue is a whole tile inside the K slice, so their loop has no branch but its
    // own. An interior block whose k-major operands take 16-byte copies (with KT, every operand 16-byte aligned)
    // tests nothing (T_STEADY). With EDGE or
    // stream-K, an edge block or an unaligned operand (odd ld) keeps a steady loop with row predicates and 4-byte
    // copies (T_KSTEADY); without, such blocks take the guarded loop. The last STAGES-1 tiles, and the K tail, take
    // the guarded loop after it.
    const bool vk = (GT_TA || KT ? va : true) && (GT_TB && !KT ? true : vb); // KT: 16-byte loads of both
#if SK > 0 || EDGE
    const int nsteady = max(0, (k1 - k0) / BK - STAGES + 1);
#else
    // Without EDGE the kernel keeps the code it was measured with on big squares (the same cubin): the steady
    // loop for interior, aligned blocks only. A second steady loop changes ptxas's register allocation.
    const int nsteady = inner && vk ? max(0, (k1 - k0) / BK - STAGES + 1) : 0;
#endif
    int wsg = STAGES - 1, rs = 0; // stage the next load fills, stage read now
    int t = 0;
#if SK > 0 || EDGE
    if (!(inner && vk))
        for (; t < nsteady; ++t)
            tile<T_KSTEADY>(acc, a, b, sbase, rs, wsg, fa, A, lda, fb, B, ldb, kleft, va, vb, inner, am, bn, tid,
                            t, ntiles);
#endif
    for (; t < nsteady; ++t)
        tile<T_STEADY>(acc, a, b, sbase, rs, wsg, fa, A, lda, fb, B, ldb, kleft, true, true, inner, am, bn, tid, t,
                       ntiles);
    for (; t < ntiles; ++t)
        tile<T_GUARDED>(acc, a, b, sbase, rs, wsg, fa, A, lda, fb, B, ldb, kleft, va, vb, inner, am, bn, tid, t,
                        ntiles);
    gt_cp_async_wait<0>();
}

// Four results x of row r from column c into C (or the split-K workspace): gt_store, or with EVEN (every quad inside
// C and 16-byte aligned: gt_gemm checked) its vector path with no bounds tests.
__device__ __forceinline__ void store_quad(int M, int N, float *__restrict__ C, int ldc, float *__restrict__ ws, int r,
                                           int c, const float *x, float alpha, float beta, bool vc)
{
#if EVEN && SPLITK > 1
    (void)C, (void)ldc, (void)alpha, (void)beta, (void)vc;
    *(float4 *)(ws + ((size_t)blockIdx.z * M + r) * N + c) = make_float4(x[0], x[1], x[2], x[3]);
#elif EVEN
    (void)M, (void)N, (void)ws, (void)vc;
    gt_put_fma<4>(C + (size_t)r * ldc + c, x, alpha, beta);
#else
    gt_store<4, GT_EPI_FMA_VEC>(M, N, C, ldc, ws, r, c, x, alpha, beta, vc);
#endif
}

// C (or the split-K workspace) from this thread's results of the tile at (bm0, bn0).
__device__ __forceinline__ void store_tile(const Acc &acc, int M, int N, float *__restrict__ C, int ldc,
                                           float *__restrict__ ws, int bm0, int bn0, float alpha, float beta, int lane,
                                           int warp)
{
    int am, bn;
    thread_offsets(lane, warp, &am, &bn);
    const int i0 = bm0 + am, j0 = bn0 + bn;
    const bool vc = EVEN || GT_VEC_OK(4, C, ldc);
#pragma unroll
    for (int i = 0; i < WMITER; ++i)
#pragma unroll
        for (int m = 0; m < TM; ++m)
#pragma unroll
            for (int j = 0; j < WNITER; ++j)
#pragma unroll
                for (int n = 0; n < TN; n += 4)
                    store_quad(M, N, C, ldc, ws, i0 + i * WSUBM + m, j0 + j * WSUBN + n, &acc[i * TM + m][j * TN + n],
                               alpha, beta, vc);
}

#if SK > 0
// Stream-K (a hybrid with data-parallel tiles). The grid is persistent: G blocks. Of the T tiles of C, the first
// `skt` (in raster order) are shared out as MAC-loop iterations: the skt * I iterations (I K tiles per tile) are cut
// into G contiguous, equal ranges, one per block, so every block does the same work whatever T is. The other T - skt
// tiles are data-parallel, block c taking tiles skt + c, skt + c + G, ...; skt is T when T < 2G (and T % G != 0),
// G + T % G above that, 0 when T % G == 0, as a data-parallel wave of whole tiles costs no fix-up.
// A tile cut between blocks is fixed up without waiting and in a fixed order: each block that holds part of it
// writes its partial sums to its own workspace slot, then counts itself in on the tile's counter; the block that
// comes last adds every part in block order and writes C. So C is bitwise the same from
// run to run, whichever block comes last. Workspace: the counters (zeroed by the launch), then 2 slots per block
// (a block's range has at most two partial tiles: where it starts and where it ends).
#define SK_COUNTERS(T) (((T) + 63) / 64 * 64) // floats before the slots: the counters, padded to 256 bytes

__device__ __forceinline__ int sk_owner(int x, int W, int G) // the block whose range holds iteration x
{
    return (int)(((long long)(x + 1) * G + W - 1) / W - 1);
}

// This block holds part of tile t (iterations [kb, ke) of I) in its slot `slot`. Returns 1 when it is the last to
// arrive, with acc replaced by the whole tile's sum (its own part read back too: acc need not live across the wait).
__device__ __forceinline__ int sk_fixup(Acc &acc, float *__restrict__ ws, int T, int t, int I, int W, int slot,
                                        int tid)
{
    __shared__ int last;
    const int G = gridDim.x, c = blockIdx.x;
    unsigned *cnt = (unsigned *)ws;
    float4 *slots = (float4 *)(ws + SK_COUNTERS(T));
    constexpr int Q = WMITER * TM * WNITER * TN / 4; // float4s per thread; slot layout [q][tid]
    float4 *mine = slots + (size_t)(2 * c + slot) * (BM * BN / 4);
#pragma unroll
    for (int q = 0; q < Q; ++q) {
        const float *v = &acc[q / (WNITER * TN / 4)][q % (WNITER * TN / 4) * 4];
        mine[q * NT + tid] = make_float4(v[0], v[1], v[2], v[3]);
    }
    const int cf = sk_owner(t * I, W, G), cl = sk_owner(t * I + I - 1, W, G);
    __threadfence(); // the partial is visible before the count
    __syncthreads();
    if (tid == 0) last = atomicAdd(&cnt[t], 1u) == (unsigned)(cl - cf);
    __syncthreads();
    if (!last) return 0;
    __threadfence();
    // Parts in block order from zero (as gt_splitk_reduce adds), eight loads of a part in flight at once (not one
    // L2 round trip per load, nor the whole part, which would spill the 128-result tiles).
#pragma unroll
    for (int m = 0; m < WMITER * TM; ++m)
#pragma unroll
        for (int n = 0; n < WNITER * TN; ++n) acc[m][n] = 0.0f;
    for (int o = cf; o <= cl; ++o) {
        // Block o's slot for tile t: 0 when t is where o's range starts, else 1.
        const int os = (int)((long long)W * o / G) / I == t ? 0 : 1;
        const float4 *part = slots + (size_t)(2 * o + os) * (BM * BN / 4) + tid;
#pragma unroll
        for (int q0 = 0; q0 < Q; q0 += 8) {
            float4 p[8];
#pragma unroll
            for (int q = q0; q < q0 + 8 && q < Q; ++q) p[q - q0] = __ldcg(part + q * NT);
#pragma unroll
            for (int q = q0; q < q0 + 8 && q < Q; ++q) {
                float *v = &acc[q / (WNITER * TN / 4)][q % (WNITER * TN / 4) * 4];
                const float4 x = p[q - q0];
                v[0] += x.x, v[1] += x.y, v[2] += x.z, v[3] += x.w;
            }
        }
    }
    return 1;
}

__device__ __forceinline__ void stream_k(Acc &acc, int M, int N, int K, float alpha, const float *__restrict__ A,
                                         int lda, const float *__restrict__ B, int ldb, float beta,
                                         float *__restrict__ C, int ldc, float *__restrict__ ws, unsigned sbase,
                                         int tid)
{
    const int T = ((M + BM - 1) / BM) * ((N + BN - 1) / BN), I = (K + BK - 1) / BK;
    const int G = gridDim.x, c = blockIdx.x;
    const int skt = T % G == 0 ? 0 : T < 2 * G ? T : G + T % G;
    const int W = skt * I; // under 2^31: applicable() bounds K
    int it = (int)((long long)W * c / G);
    const int end = (int)((long long)W * (c + 1) / G);
    int dpt = skt + c; // this block's next data-parallel tile
    for (int done = 0;; ++done) {
        int t, kb, ke; // tile t, K tiles [kb, ke) of its I
        if (it < end) {
            t = it / I, kb = it % I, ke = min(I, kb + (end - it));
            it += ke - kb;
        } else if (dpt < T) {
            t = dpt, kb = 0, ke = I;
            dpt += G;
        } else {
            break;
        }
        if (done) __syncthreads(); // every warp is done with the stages before they are refilled
        int bm0, bn0;
        gt_tile_origin<BM, BN, RASTER>(t, M, N, &bm0, &bn0);
        mac_tile(acc, M, N, A, lda, B, ldb, bm0, bn0, kb * BK, min(K, ke * BK), sbase, tid, tid % 32, tid / 32);
        if ((kb == 0 && ke == I) || sk_fixup(acc, ws, T, t, I, W, done ? 1 : 0, tid))
            store_tile(acc, M, N, C, ldc, ws, bm0, bn0, alpha, beta, tid % 32, tid / 32);
    }
}
#endif

extern "C" __global__ void __launch_bounds__(NT, MINB) gt_gemm(GT_GEMM_ARGS)
{
    GT_BATCH_OFFSET();
    extern __shared__ float4 smem4[];
    const unsigned sbase = (unsigned)__cvta_generic_to_shared(smem4); // every shared access goes through it
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
#if EVEN // a call this variant cannot compute (applicable() refuses it) faults here, never writes a wrong C
    if (M % BM || N % BN || !GT_VEC_OK(4, A, lda) || !GT_VEC_OK(4, B, ldb) || !GT_VEC_OK(4, C, ldc) ||
        (SPLITK > 1 && ((unsigned long long)ws & 15ull)))
        __trap();
#endif
    Acc acc;
#if SK > 0
    (void)lane, (void)warp;
    stream_k(acc, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, ws, sbase, tid);
#else
    int bm0, bn0, k0, k1;
    gt_tile_origin<BM, BN, RASTER>(blockIdx.x, M, N, &bm0, &bn0);
    gt_k_range(K, BK, &k0, &k1);
    mac_tile(acc, M, N, A, lda, B, ldb, bm0, bn0, k0, k1, sbase, tid, lane, warp);
    store_tile(acc, M, N, C, ldc, ws, bm0, bn0, alpha, beta, lane, warp);
#endif
}
