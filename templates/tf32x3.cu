// 3xTF32 SGEMM on tensor cores (mma.sync m16n8k8, sm_80+, tuned for sm_90): FP32 accuracy from TF32 products.
// Each operand value x is split after its shared-memory load into big = tf32(x) and small = tf32(x - big); per
// fragment pair big*small and small*big go into a correction accumulator and big*big into a chunk accumulator,
// which is added into a plain FP32 accumulator every KC k-values (the tensor cores' accumulation truncates: the
// fold is what keeps FP32 accuracy). The design and its measurements: docs/BENCHMARKS.md, "3xTF32 study".  Alone:
// nvcc -arch=sm_90 -cubin -Xptxas -v -I templates templates/tf32x3.cu   (tests: tests/test_tf32x3.c)
#include "common.cuh"
#include "async.cuh"
#include "epilogue.cuh"
#include "raster.cuh"
#include "tf32.cuh"

#ifndef BM
#define BM 128 // rows of C per block
#endif
#ifndef BN
#define BN 128 // columns of C per block
#endif
#ifndef BK
#define BK 32 // K depth of one pipeline stage (multiple of 8)
#endif
#ifndef WM
#define WM 64 // rows of C per warp (multiple of 16: m16n8k8 tiles)
#endif
#ifndef WN
#define WN 32 // columns of C per warp (multiple of 8)
#endif
#ifndef STAGES
#define STAGES 3 // shared-memory buffers in the cp.async pipeline (2..8)
#endif
#ifndef KC
#define KC 128 // k-values between folds of the big*big chunk into the FP32 accumulator (multiple of BK)
#endif
#ifndef MINB
#define MINB 1 // blocks per SM promised to __launch_bounds__
#endif
#define RASTER 8 // tile rows per rasterization group (fixed: blocks in flight share A and B panels in L2)

#define NT ((BM / WM) * (BN / WN) * 32) // threads per block
#define MI (WM / 16)                    // m16n8k8 tiles of a warp along M
#define NI (WN / 8)                     // and along N

// Shared tiles keep the global storage order, so every layout copies rows of contiguous floats (16-byte cp.async
// where aligned) and nothing is transposed; the fragment loads follow the order instead. Within each 8-wide k step
// the MMA's k slots are permuted, the same for A and B (slot t is k = 2t, slot t+4 is k = 2t+1; the sum does not
// change), so a lane's two k values are adjacent in a k-contiguous tile: one 64-bit load.
//   k-major tile (A with GT_TA, B without GT_TB): BK rows of D = BM or BN floats, pitch D + 4. 32-bit loads of lanes
//     (g, t) hit banks (2t * pitch + g) % 32, distinct when pitch % 8 == 4.
//   k-contiguous tile (A without GT_TA, B with GT_TB): D rows of BK floats, pitch KPITCH. 64-bit loads (half a warp
//     per phase) hit g * pitch + 2t + {0, 1}, distinct when pitch % 32 is 8 or 24.
#define KPITCH (BK + (BK % 16 ? 0 : 8))
#if GT_TA
#define A_ROWS BK
#define A_COLS BM
#define A_PITCH (BM + 4)
#else
#define A_ROWS BM
#define A_COLS BK
#define A_PITCH KPITCH
#endif
#if GT_TB
#define B_ROWS BN
#define B_COLS BK
#define B_PITCH KPITCH
#else
#define B_ROWS BK
#define B_COLS BN
#define B_PITCH (BN + 4)
#endif
#define A_FLOATS (A_ROWS * A_PITCH)
#define STAGE_FLOATS (A_FLOATS + B_ROWS * B_PITCH) // kernels/tf32x3.c sizes the dynamic shared memory the same

static_assert(BK % 8 == 0 && WM % 16 == 0 && WN % 8 == 0, "BK multiple of 8, WM of 16, WN of 8");
static_assert(BM % WM == 0 && BN % WN == 0, "warp tiling must divide the block tile");
static_assert(KC > 0 && KC % BK == 0, "KC must be a positive multiple of BK");
static_assert(NT % (A_COLS / 4) == 0 && NT % (B_COLS / 4) == 0, "a pass of 16-byte copies covers whole rows");
static_assert(KPITCH % 32 == 8 || KPITCH % 32 == 24, "k-contiguous pitch: fragment loads would conflict");
static_assert(STAGES >= 2 && STAGES <= 8, "STAGES 2..8");
static_assert(SPLITK == 1, "tf32x3 has no split-K");

// One operand's copies into a tile of ROWS x COLS floats whose columns are contiguous in global memory (KMAJOR:
// the rows are k, as for A with GT_TA and B without GT_TB; else the columns are). A thread takes one 16-byte quad
// of a row per pass, at the same column in every pass; its feed points at its first element of the next tile.
// Only that pointer is kept across the main loop: with 192 accumulator registers live, every other per-thread
// value is recomputed from the thread index where needed (ptxas -v spilled otherwise).
template <int COLS> __device__ __forceinline__ int quad_row(int tid) { return tid / (COLS / 4); }
template <int COLS> __device__ __forceinline__ int quad_col(int tid) { return tid % (COLS / 4) * 4; }

// The feed of tile 0 for the operand X whose block tile starts at d0 along M or N.
template <int COLS, bool KMAJOR>
__device__ __forceinline__ const float *feed_start(const float *X, int ld, int d0, int tid)
{
    const int r = quad_row<COLS>(tid), c = quad_col<COLS>(tid);
    return KMAJOR ? X + (size_t)r * ld + d0 + c : X + (size_t)(d0 + r) * ld + c;
}

// Copy one tile into the stage at byte address S. FULL: the tile lies whole inside the matrix and the operand takes
// 16-byte copies: nothing is tested. Otherwise kleft and dleft count the k-values and the rows (or columns) of the
// matrix along M or N from the tile's first one; elements past them read nothing (source size 0, with the
// operand's base X as address so no out-of-range address is ever issued) and are zero-filled. vec (X 16-byte
// aligned and ld % 4 == 0) picks 16-byte copies, else four 4-byte ones per quad.
template <int ROWS, int COLS, int PITCH, bool KMAJOR, bool FULL>
__device__ __forceinline__ void copy_tile(unsigned S, const float *p, const float *X, int ld, int kleft, int dleft,
                                          bool vec, int tid)
{
    constexpr int RPP = NT / (COLS / 4), PASSES = (ROWS + RPP - 1) / RPP; // rows per pass, passes
    const int r = quad_row<COLS>(tid), c = quad_col<COLS>(tid);
    const int rows = (KMAJOR ? kleft : dleft) - r, cols = (KMAJOR ? dleft : kleft) - c; // from the thread's first
#pragma unroll
    for (int q = 0; q < PASSES; ++q) {
        if (ROWS % RPP && r + q * RPP >= ROWS) break;
        const float *src = p + (size_t)q * RPP * ld;
        const unsigned dst = S + 4 * ((r + q * RPP) * PITCH + c);
        const bool rin = q * RPP < rows;
        if (FULL) {
            gt_cp_async<16>(dst, src, 16);
        } else if (vec) {
            const int n = rin ? min(max(cols, 0), 4) : 0;
            gt_cp_async<16>(dst, n ? src : X, 4 * n);
        } else {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const bool in = rin && e < cols;
                gt_cp_async<4>(dst + 4 * e, in ? src + e : X, in ? 4 : 0);
            }
        }
    }
}

// Tile t of K of both operands into the stage at S, and both feeds one tile on. FULL as in copy_tile.
template <bool FULL>
__device__ __forceinline__ void load_stage(unsigned S, const float *&pa, const float *A, int lda, bool va,
                                           const float *&pb, const float *B, int ldb, bool vb, int M, int N, int K,
                                           int t)
{
    const int tid = gt_thread_id();
    int bm0 = 0, bn0 = 0;
    if (!FULL) gt_tile_origin<BM, BN, RASTER>(gt_block_id(), M, N, &bm0, &bn0);
    copy_tile<A_ROWS, A_COLS, A_PITCH, GT_TA, FULL>(S, pa, A, lda, K - t * BK, M - bm0, va, tid);
    copy_tile<B_ROWS, B_COLS, B_PITCH, !GT_TB, FULL>(S + 4 * A_FLOATS, pb, B, ldb, K - t * BK, N - bn0, vb, tid);
    pa += GT_TA ? (size_t)BK * lda : BK;
    pb += GT_TB ? BK : (size_t)BK * ldb;
}

// Split fragments of A (m tile i) and B (n tile j) for k step kk of the stage at As / Bs. aoff, boff: this lane's
// offsets (fragment_offsets). a holds big then small (a[0] big, a[1] small), as does b.
__device__ __forceinline__ void frag_a(unsigned (&a)[2][4], const float *As, int aoff, int i, int kk)
{
    float x[4]; // a0: (m, k = 2t), a1: (m + 8, 2t), a2: (m, 2t + 1), a3: (m + 8, 2t + 1), m = the lane's row g
#if GT_TA
    const float *p = As + aoff + kk * A_PITCH + 16 * i;
    x[0] = p[0], x[1] = p[8], x[2] = p[A_PITCH], x[3] = p[A_PITCH + 8];
#else
    const float *p = As + aoff + 16 * i * A_PITCH + kk;
    const float2 lo = *(const float2 *)p, hi = *(const float2 *)(p + 8 * A_PITCH);
    x[0] = lo.x, x[1] = hi.x, x[2] = lo.y, x[3] = hi.y;
#endif
#pragma unroll
    for (int r = 0; r < 4; ++r) gt_tf32_split(x[r], a[0][r], a[1][r]);
}

__device__ __forceinline__ void frag_b(unsigned (&b)[2][2], const float *Bs, int boff, int j, int kk)
{
    float x[2]; // b0: (k = 2t, n), b1: (2t + 1, n), n = the lane's column g
#if GT_TB
    const float2 v = *(const float2 *)(Bs + boff + 8 * j * B_PITCH + kk);
    x[0] = v.x, x[1] = v.y;
#else
    const float *p = Bs + boff + kk * B_PITCH + 8 * j;
    x[0] = p[0], x[1] = p[B_PITCH];
#endif
#pragma unroll
    for (int r = 0; r < 2; ++r) gt_tf32_split(x[r], b[0][r], b[1][r]);
}

// This lane's offsets (floats) of its fragment elements for m tile 0, n tile 0, k step 0 of a stage.
__device__ __forceinline__ void fragment_offsets(int tid, int *aoff, int *boff)
{
    const int warp = tid / 32, g = tid % 32 / 4, t = tid % 4;
    const int wm0 = warp % (BM / WM) * WM, wn0 = warp / (BM / WM) * WN;
    *aoff = GT_TA ? 2 * t * A_PITCH + wm0 + g : (wm0 + g) * A_PITCH + 2 * t;
    *boff = GT_TB ? (wn0 + g) * B_PITCH + 2 * t : 2 * t * B_PITCH + wn0 + g;
}

typedef float Acc[MI][NI][4]; // one accumulator set of a lane

// The three products of one fragment pair. Corrections first: they are 2^-11 of the chunk and go to their own sum.
__device__ __forceinline__ void mma3(float (&chunk)[4], float (&corr)[4], const unsigned (&a)[2][4],
                                     const unsigned (&b)[2][2])
{
    gt_mma_tf32(corr, a[0], b[1]);
    gt_mma_tf32(corr, a[1], b[0]);
    gt_mma_tf32(chunk, a[0], b[0]);
}

// One stage: BK / 8 k steps over the warp tile. The operand with fewer fragment registers per warp tile is split
// whole first (64x32 warps: B, 16 registers), the other one tile at a time: the difference decides spills at
// 192 accumulator registers.
__device__ __forceinline__ void mac_stage(Acc &chunk, Acc &corr, const float *As, const float *Bs, int aoff, int boff)
{
#pragma unroll
    for (int kk = 0; kk < BK; kk += 8) {
        if constexpr (4 * NI <= 8 * MI) {
            unsigned b[NI][2][2];
#pragma unroll
            for (int j = 0; j < NI; ++j) frag_b(b[j], Bs, boff, j, kk);
#pragma unroll
            for (int i = 0; i < MI; ++i) {
                unsigned a[2][4];
                frag_a(a, As, aoff, i, kk);
#pragma unroll
                for (int j = 0; j < NI; ++j) mma3(chunk[i][j], corr[i][j], a, b[j]);
            }
        } else {
            unsigned a[MI][2][4];
#pragma unroll
            for (int i = 0; i < MI; ++i) frag_a(a[i], As, aoff, i, kk);
#pragma unroll
            for (int j = 0; j < NI; ++j) {
                unsigned b[2][2];
                frag_b(b, Bs, boff, j, kk);
#pragma unroll
                for (int i = 0; i < MI; ++i) mma3(chunk[i][j], corr[i][j], a[i], b);
            }
        }
    }
}

// acc += chunk with FP32 (round to nearest) adds; chunk = 0.
__device__ __forceinline__ void fold(Acc &acc, Acc &chunk)
{
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) acc[i][j][r] += chunk[i][j][r], chunk[i][j][r] = 0.0f;
}

// acc + corr = the products of the block's tile of C over all of K.
__device__ __forceinline__ void mac_tile(Acc &acc, Acc &corr, int M, int N, int K, const float *__restrict__ A,
                                         int lda, const float *__restrict__ B, int ldb, const float *smem,
                                         unsigned sbase)
{
    int bm0, bn0;
    gt_tile_origin<BM, BN, RASTER>(blockIdx.x, M, N, &bm0, &bn0); // a plain read: ptxas keeps it uniform
    const bool va = GT_VEC_OK(4, A, lda), vb = GT_VEC_OK(4, B, ldb);
    const int ntiles = (K + BK - 1) / BK, nfull = K / BK; // tiles, whole tiles
    // Whole tiles of an interior block with 16-byte copies need no predicate (FULL). A flag, not a tile count:
    // ptxas keeps it in a predicate register.
    const bool steady = va && vb && bm0 + BM <= M && bn0 + BN <= N;
    const float *pa = feed_start<A_COLS, GT_TA>(A, lda, bm0, gt_thread_id());
    const float *pb = feed_start<B_COLS, !GT_TB>(B, ldb, bn0, gt_thread_id());
    auto load = [&](int t) {
        const unsigned S = sbase + 4 * (t % STAGES) * STAGE_FLOATS;
        if (steady && t < nfull) load_stage<true>(S, pa, A, lda, true, pb, B, ldb, true, M, N, K, t);
        else load_stage<false>(S, pa, A, lda, va, pb, B, ldb, vb, M, N, K, t);
    };

    // Prologue: tiles 0..STAGES-2, one commit group each (empty past the end, so that group t is tile t).
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < ntiles) load(s);
        gt_cp_async_commit();
    }
    Acc chunk;
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) acc[i][j][r] = corr[i][j][r] = chunk[i][j][r] = 0.0f;

    for (int t = 0; t < ntiles; ++t) {
        // STAGES-1+t groups committed: tiles 0..t have landed when at most STAGES-2 are pending. After the barrier
        // every warp is also done with tile t-1, whose stage is refilled next.
        gt_cp_async_wait<STAGES - 2>();
        __syncthreads();
        if (t + STAGES - 1 < ntiles) load(t + STAGES - 1);
        gt_cp_async_commit();
        const float *As = smem + t % STAGES * STAGE_FLOATS;
        int aoff, boff;
        fragment_offsets(gt_thread_id(), &aoff, &boff);
        mac_stage(chunk, corr, As, As + A_FLOATS, aoff, boff);
        if ((t + 1) % (KC / BK) == 0) fold(acc, chunk); // block-uniform
    }
    if (ntiles % (KC / BK)) fold(acc, chunk); // the last, partial chunk
    gt_cp_async_wait<0>();                    // only empty groups remain; leave none behind
}

__device__ __forceinline__ void store_tile(const Acc &acc, const Acc &corr, int M, int N, float *__restrict__ C,
                                           int ldc, float alpha, float beta)
{
    int bm0, bn0;
    gt_tile_origin<BM, BN, RASTER>(gt_block_id(), M, N, &bm0, &bn0);
    const int tid = gt_thread_id(), warp = tid / 32, lane = tid % 32;
    const bool vc = GT_VEC_OK(2, C, ldc);
    const int i0 = bm0 + warp % (BM / WM) * WM + lane / 4, j0 = bn0 + warp / (BM / WM) * WN + lane % 4 * 2;
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j) {
            const float *a = acc[i][j], *c = corr[i][j];
            const float top[2] = {a[0] + c[0], a[1] + c[1]};
            gt_store<2, GT_EPI_FMA>(M, N, C, ldc, nullptr, i0 + 16 * i, j0 + 8 * j, top, alpha, beta, vc);
            const float bottom[2] = {a[2] + c[2], a[3] + c[3]}; // summed here: the SASS keeps its order
            gt_store<2, GT_EPI_FMA>(M, N, C, ldc, nullptr, i0 + 16 * i + 8, j0 + 8 * j, bottom, alpha, beta,
                                    vc);
        }
}

extern "C" __global__ void __launch_bounds__(NT, MINB) gt_gemm(GT_GEMM_ARGS)
{
    GT_BATCH_OFFSET();
    (void)ws;
    extern __shared__ float4 smem4[];
    const unsigned sbase = (unsigned)__cvta_generic_to_shared(smem4); // the copies' shared-window addresses
    Acc acc, corr;
    mac_tile(acc, corr, M, N, K, A, lda, B, ldb, (const float *)smem4, sbase);
    store_tile(acc, corr, M, N, C, ldc, alpha, beta);
}
