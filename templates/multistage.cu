// Multistage warp-tiled FFMA SGEMM: STAGES shared-memory buffers filled by cp.async, warp tiles split into
// WMITER x WNITER sub-tiles of TM x TN per thread, register fragments double-buffered, blocks rasterized in
// groups of RASTER tile rows for L2 reuse, optional deterministic split-K. Interior tiles run a branch-free
// steady loop; shared memory is addressed with 32-bit shared-window addresses throughout.  Alone:
// nvcc -arch=sm_90 -cubin -Xptxas -v -I templates templates/multistage.cu   (tests: tests/test_multistage.c)
#include "common.cuh"

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

static_assert(BK % 8 == 0 && TM % 4 == 0 && TN % 4 == 0, "BK multiple of 8, TM and TN multiples of 4");
static_assert(BM % WM == 0 && BN % WN == 0 && WN % WNITER == 0, "warp tiling must divide the block tile");
static_assert(WMITER >= 1 && WM % WMITER == 0 && WSUBM % TM == 0 && WSUBN % TN == 0, "bad warp sub-tile");
static_assert((WSUBM / TM) * TCOLS == 32, "a warp sub-tile must hold exactly 32 thread tiles");
static_assert(STAGES >= 2 && STAGES <= 8 && RASTER >= 1, "STAGES 2..8, RASTER >= 1");

// cp.async with a source size: bytes past `bytes` are zero-filled, so edge tiles need no other copy routine.
// dst is a shared-window byte address: 32-bit arithmetic, no generic-to-shared conversion per copy. The L2
// prefetch hint matters for the 4-byte copies, whose warps touch only 32 bytes of each row per tile.
__device__ __forceinline__ void cp_async16(unsigned dst, const float *src, int bytes)
{
    asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void cp_async4(unsigned dst, const float *src, int bytes)
{
    asm volatile("cp.async.ca.shared.global.L2::128B [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

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
// one) is ever issued.
template <int D, bool FULL>
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
            const bool in = FULL || (kk0 + q * RPP < kleft && f.room > 0);
            const float *src = f.p + (size_t)q * RPP * ld;
            cp_async16(dst + 4 * q * RPP * (D + PAD), in ? src : X, FULL ? 16 : in ? 4 * min(4, f.room) : 0);
        }
    } else {
#pragma unroll 1 // rare fallback: kept rolled so it costs the fast path no registers
        for (int q = 0; q < PASSES; ++q) {
            if (BK % RPP && kk0 + q * RPP >= BK) break;
            const bool in = FULL || kk0 + q * RPP < kleft;
#pragma unroll
            for (int e = 0; e < 4; ++e)
                cp_async4(dst + 4 * (q * RPP * (D + PAD) + e), in && e < f.room ? f.p + (size_t)q * RPP * ld + e : X,
                          in && e < f.room ? 4 : 0);
        }
    }
}

// Operand stored with k contiguous (A without GT_TA, B with GT_TB): element (k, d) at X[d*ld + k], transposed
// into the same k-major tile with 4-byte copies. Eight consecutive threads take eight consecutive k of one row
// (a full 32-byte sector); a warp covers 8 k x 4 rows, whose stores land in 32 distinct banks thanks to PAD.
template <int D>
__device__ __forceinline__ Feed feed_transposed(const float *X, int ld, int d0, int E, int k0, int tid)
{
    return {X + (size_t)(d0 + tid / 8) * ld + k0 + tid % 8, E - d0 - tid / 8};
}

template <int D, bool FULL>
__device__ __forceinline__ void copy_transposed(unsigned S, const Feed &f, const float *X, int ld, int kleft,
                                                int tid)
{
    constexpr int RPP = NT / 8; // rows per pass
    const int klo = tid % 8;
    const unsigned dst = S + 4 * (klo * (D + PAD) + tid / 8);
#pragma unroll
    for (int kc = 0; kc < BK; kc += 8) {
        const bool kin = FULL || kc + klo < kleft;
#pragma unroll
        for (int r = 0; r < (D + RPP - 1) / RPP; ++r) { // fixed trip count: fully unrolled
            if (D % RPP && tid / 8 + r * RPP >= D) break;
            const bool in = FULL || (kin && r * RPP < f.room);
            cp_async4(dst + 4 * (kc * (D + PAD) + r * RPP), in ? f.p + (size_t)r * RPP * ld + kc : X, in ? 4 : 0);
        }
    }
}

// FULL: the whole tile lies inside the matrices and the K slice, so no copy needs a predicate.
template <bool FULL>
__device__ __forceinline__ void copy_stage(unsigned S, const Feed &fa, const float *A, int lda, const Feed &fb,
                                           const float *B, int ldb, int kleft, bool va, bool vb, int tid)
{
#if GT_TA
    copy_kmajor<BM, FULL>(S, fa, A, lda, kleft, va, tid);
#else
    (void)va;
    copy_transposed<BM, FULL>(S, fa, A, lda, kleft, tid);
#endif
#if GT_TB
    (void)vb;
    copy_transposed<BN, FULL>(S + 4 * BK * LDA_S, fb, B, ldb, kleft, tid);
#else
    copy_kmajor<BN, FULL>(S + 4 * BK * LDA_S, fb, B, ldb, kleft, vb, tid);
#endif
}

// Issue the copies of the next K tile into stage S and step both feeds one tile on. STEADY: the caller knows
// the tile is whole and in range and the k-major operand takes 16-byte copies, so nothing is tested.
template <bool STEADY = false>
__device__ __forceinline__ void load_tile(unsigned S, Feed &fa, const float *A, int lda, Feed &fb, const float *B,
                                          int ldb, int kleft, bool va, bool vb, bool inner, int tid)
{
    if (STEADY) copy_stage<true>(S, fa, A, lda, fb, B, ldb, BK, true, true, tid);
    else if (inner && kleft >= BK) copy_stage<true>(S, fa, A, lda, fb, B, ldb, kleft, va, vb, tid);
    else copy_stage<false>(S, fa, A, lda, fb, B, ldb, kleft, va, vb, tid);
    fa.p += GT_TA ? (size_t)BK * lda : BK;
    fb.p += GT_TB ? BK : (size_t)BK * ldb;
}

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

// One k row of this thread's fragments: WMITER x TM values of A and WNITER x TN of B, all LDS.128. S: the
// stage's shared-window byte address.
__device__ __forceinline__ void load_frag(float (&a)[WMITER * TM], float (&b)[WNITER * TN], unsigned S, int kk,
                                          int am, int bn)
{
    const unsigned As = S + 4 * (kk * LDA_S + am), Bs = S + 4 * (BK * LDA_S + kk * LDB_S + bn);
#pragma unroll
    for (int i = 0; i < WMITER; ++i)
#pragma unroll
        for (int v = 0; v < TM; v += 4) {
            const float4 t = lds128(As + 4 * (i * WSUBM + v));
            a[i * TM + v] = t.x, a[i * TM + v + 1] = t.y, a[i * TM + v + 2] = t.z, a[i * TM + v + 3] = t.w;
        }
#pragma unroll
    for (int j = 0; j < WNITER; ++j)
#pragma unroll
        for (int v = 0; v < TN; v += 4) {
            const float4 t = lds128(Bs + 4 * (j * WSUBN + v));
            b[j * TN + v] = t.x, b[j * TN + v + 1] = t.y, b[j * TN + v + 2] = t.z, b[j * TN + v + 3] = t.w;
        }
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
// tile t+1 and move on. STEADY: the copies are known whole and in range (no predicate, no branch).
template <bool STEADY>
__device__ __forceinline__ void tile(float (&acc)[WMITER * TM][WNITER * TN], float (&a)[2][WMITER * TM],
                                     float (&b)[2][WNITER * TN], unsigned sbase, int &rs, int &wsg,
                                     Feed &fa, const float *A, int lda, Feed &fb, const float *B, int ldb, int &kleft,
                                     bool va, bool vb, bool inner, int am, int bn, int tid, int t, int ntiles)
{
    const unsigned S = sbase + 4 * rs * STAGE_FLOATS;
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
        if (kk == 0) {
            if (!(GT_ABLATE & 1) && (STEADY || t + STAGES - 1 < ntiles))
                load_tile<STEADY>(sbase + 4 * wsg * STAGE_FLOATS, fa, A, lda, fb, B, ldb, kleft, va, vb, inner, tid);
            kleft -= BK;
            cp_async_commit();
            wsg = wsg + 1 == STAGES ? 0 : wsg + 1;
        }
        if (kk == BK - 1) {
            // Tiles 0..t+STAGES-1 are committed; tile t+1 must have landed for every thread.
            if (!(GT_ABLATE & 2)) {
                cp_async_wait<STAGES - 2>();
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

// Block tile (row, column) from the linear block index: groups of RASTER tile rows are walked column by column,
// so blocks running together share A rows and B columns in L2.
__device__ __forceinline__ void block_tile(int M, int N, int *tm, int *tn)
{
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN, lin = blockIdx.x;
#if RASTER > 1
    const int per_group = RASTER * tiles_n, first = lin / per_group * RASTER;
    const int rows = min(tiles_m - first, RASTER), in = lin % per_group;
    *tm = first + in % rows;
    *tn = in / rows;
#else
    (void)tiles_m;
    *tm = lin / tiles_n;
    *tn = lin % tiles_n;
#endif
}

// Scalar path through gt_out (edges, split-K, unaligned C); 16-byte path for full aligned quads of C.
__device__ __forceinline__ void store_quad(int M, int N, float *__restrict__ C, int ldc, float *__restrict__ ws, int i,
                                           int j, const float *acc, float alpha, float beta, bool vc)
{
    if (i >= M) return;
#if SPLITK == 1
    if (vc && j + 3 < N) {
        float4 *c = reinterpret_cast<float4 *>(C + (size_t)i * ldc + j);
        float4 r = make_float4(alpha * acc[0], alpha * acc[1], alpha * acc[2], alpha * acc[3]);
        if (beta != 0.0f) {
            const float4 o = *c;
            r.x = fmaf(beta, o.x, r.x), r.y = fmaf(beta, o.y, r.y), r.z = fmaf(beta, o.z, r.z),
            r.w = fmaf(beta, o.w, r.w);
        }
        *c = r;
        return;
    }
#else
    (void)vc;
#endif
#pragma unroll
    for (int n = 0; n < 4; ++n)
        if (j + n < N) gt_out(M, N, C, ldc, ws, i, j + n, acc[n], alpha, beta);
}

extern "C" __global__ void __launch_bounds__(NT, MINB) gt_gemm(GT_GEMM_ARGS)
{
    extern __shared__ float4 smem4[];
    const unsigned sbase = (unsigned)__cvta_generic_to_shared(smem4); // every shared access goes through it
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    int tm, tn, k0, k1;
    block_tile(M, N, &tm, &tn);
    const int bm0 = tm * BM, bn0 = tn * BN;
    gt_k_range(K, BK, &k0, &k1);
    const int ntiles = (k1 - k0 + BK - 1) / BK;
    const bool inner = bm0 + BM <= M && bn0 + BN <= N; // no edge in M or N: only the K tail needs predicates
    const bool va = ((size_t)A & 15) == 0 && (lda & 3) == 0, vb = ((size_t)B & 15) == 0 && (ldb & 3) == 0;

    // This thread's offsets inside a k row of the A and B tiles.
    const int wr = warp / (BN / WN), wc = warp % (BN / WN);
    const int am = wr * WM + lane / TCOLS * TM, bn = wc * WN + lane % TCOLS * TN;

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
        cp_async_commit();
    }

    float acc[WMITER * TM][WNITER * TN];
#pragma unroll
    for (int m = 0; m < WMITER * TM; ++m)
#pragma unroll
        for (int n = 0; n < WNITER * TN; ++n) acc[m][n] = 0.0f;
    float a[2][WMITER * TM], b[2][WNITER * TN];

    cp_async_wait<STAGES - 2>();
    __syncthreads();
    load_frag(a[0], b[0], sbase, 0, am, bn);

    // Steady tiles: the load they issue is a whole tile inside the matrices and the K slice, and the k-major
    // operand takes 16-byte copies, so their loop has no branch but its own. The other tiles (the last
    // STAGES-1, every tile of an edge block, misaligned operands) take the guarded loop after it.
    const bool vk = (GT_TA ? va : true) && (GT_TB ? true : vb);
    const int nsteady = inner && vk ? max(0, (k1 - k0) / BK - STAGES + 1) : 0;
    int rs = 0, wsg = STAGES - 1; // stage read now, stage the next load fills
    int t = 0;
    for (; t < nsteady; ++t)
        tile<true>(acc, a, b, sbase, rs, wsg, fa, A, lda, fb, B, ldb, kleft, true, true, inner, am, bn, tid,
                   t, ntiles);
    for (; t < ntiles; ++t)
        tile<false>(acc, a, b, sbase, rs, wsg, fa, A, lda, fb, B, ldb, kleft, va, vb, inner, am, bn, tid, t,
                    ntiles);
    cp_async_wait<0>();

    const bool vc = ((size_t)C & 15) == 0 && (ldc & 3) == 0;
#pragma unroll
    for (int i = 0; i < WMITER; ++i)
#pragma unroll
        for (int m = 0; m < TM; ++m)
#pragma unroll
            for (int j = 0; j < WNITER; ++j)
#pragma unroll
                for (int n = 0; n < TN; n += 4)
                    store_quad(M, N, C, ldc, ws, bm0 + am + i * WSUBM + m, bn0 + bn + j * WSUBN + n,
                               &acc[i * TM + m][j * TN + n], alpha, beta, vc);
}
