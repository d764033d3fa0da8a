// 3xTF32 SGEMM on Hopper's warpgroup tensor cores (wgmma, sm_90a): FP32 accuracy from TF32 products, as the tf32x3
// family, at wgmma's rate. Every operand value x is split once per block, when its tile is stored to shared memory,
// into big = tf32(x) and small = tf32(x - big); each warpgroup issues big*small and small*big into a correction
// accumulator and big*big into a chunk accumulator per 8-wide k step (wgmma m64nBNk8, both operands from shared
// memory), and both are added into an FP32 accumulator every KC k-values (the tensor cores' accumulation truncates:
// the fold keeps FP32 accuracy; merging the corrections into the chunk tripled the truncating adds and lost to
// SGEMM on wide inputs). With SPLITK > 1, grid z splits K into slices (common.cuh's gt_k_range, whole BK tiles) whose
// partial sums go to the workspace and gt_splitk_reduce adds them in a fixed order: deterministic, and for a deep K
// over few tiles of C both faster (more blocks) and more accurate (shorter sums) than one block per tile. With SK,
// a persistent grid of SK blocks per SM shares the tiles' K loops out evenly (streamk.cuh): the last wave is never
// a part of the GPU, and a tile cut between blocks is added up in block order (deterministic too). With CT the
// blocks compute Cᵀ = op(B)ᵀ op(A)ᵀ and store it transposed, so that C's rows take the wgmma's N (any multiple of 8:
// BN 16 to 128) where tiles of 64 rows would pad them much (777 rows; a batch of 8 to 48). With PT a block takes
// tiles of C in turn, its K loop one pipeline over them (a short K's loads and stores overlap).
// Study harness and measurements: tests/perf/wgmma.cu, docs/BENCHMARKS.md.
// Alone: nvcc -gencode arch=compute_90a,code=sm_90a -cubin -Xptxas -v -I templates templates/tf32x3wg.cu
// (tests: tests/test_tf32x3wg.c; on the GPU tests/test_tf32x3.c)
#include "common.cuh"
#include "raster.cuh"
#include "streamk.cuh"
#include "tf32.cuh"
#include "wgmma.cuh"

#ifndef BM
#define BM 128 // rows of C per block: 64 per warpgroup
#endif
#ifndef BN
#define BN 128 // columns of C per block: the wgmma's N (16, 32, 48, 64, 96, 112 or 128)
#endif
#ifndef BK
#define BK 32 // K depth of one stage (multiple of 16)
#endif
#ifndef STAGES
#define STAGES 3 // shared-memory stages: 2, or 3 to keep one tile's wgmmas running across the barrier
#endif
#ifndef KC
#define KC 128 // k-values between folds of the chunk into the FP32 accumulator (multiple of BK)
#endif
#ifndef PF
#define PF 1 // 1: the next tile's operands wait in registers for an iteration; 0: loaded and stored one operand at a
             // time, fewer registers
#endif
#ifndef MINB
#define MINB 1 // blocks per SM promised to __launch_bounds__
#endif
#ifndef SK
#define SK 0 // stream-K: 0 off; n > 0 a persistent grid of n blocks per SM (sized by the launch) shares the MAC loop
#endif
#ifndef CT
#define CT 0 // 1: the blocks compute C transposed, op(B)^T op(A)^T, whose rows are C's columns: a side of C that
             // tiles of 64 rows would pad much takes the wgmma's N instead (777 rows: 896 in tiles of 128, 784 in
             // tiles of 112)
#endif
#ifndef PT
#define PT 0 // 1: a block takes tiles of C in turn (blockIdx.x, then on by gridDim.x; kernels/tf32x3wg.c's launch
             // picks how many), its K loop one pipeline over them: at a short K a tile's first loads and last stores
             // weigh as much as its products, and then overlap the tiles before and after
#endif
#ifndef EVEN
#define EVEN 0 // 1: only for calls whose product is whole tiles (BN a multiple of 32: no rows past BN) with 16-byte
               // aligned operands and ld (gemm traps on others): no edge code, two thirds of the compile
#endif
#define RASTER 8 // tile rows per rasterization group (fixed: blocks in flight share A and B panels in L2)

#define NT (BM / 64 * 128) // threads per block: one warpgroup per 64 rows
#define BNL ((BN + 31) / 32 * 32) // rows of B's shared tiles: BN rounded up to the loads' 32 (16, 48, 112: 16 unused)
// The layout of the blocks' own product: with CT, A's part is op(B)^T and B's is op(A)^T.
#define OP_TA (CT ? !GT_TB : GT_TA)
#define OP_TB (CT ? !GT_TA : GT_TB)
#define NACC (BN / 2)      // accumulator registers of a thread per set (m64 x BN over 128 threads)
#define PEND (STAGES - 2)  // wgmma groups left running at a barrier
#define EPI_PARTS (SK || PT ? 2 : 1) // parts of the columns whose C is read before they are written: stream-K's
                                    // loop, and PT's next tile, keep more registers live across the epilogue

// Shared memory: STAGES stages of four tiles, A big, A small, B big, B small, each in a K-major layout wgmma reads
// (wgmma.cuh): at BK = 32 (SWIZZLE) the 128-byte swizzle, whose stages start 1024-byte aligned, and in which any
// eight threads storing eight different (row % 8, quad) slots hit all 32 banks; otherwise core matrices.
#define SWIZZLE (BK == 32)
#define A_BYTES (BM * BK * 4)
#define B_BYTES (BNL * BK * 4)
#define STAGE_BYTES (2 * A_BYTES + 2 * B_BYTES)
#define SMEM_BYTES (STAGES * STAGE_BYTES + (SWIZZLE ? 1024 : 0)) // with the alignment slack; kernels/tf32x3wg.c too

// Each thread carries ITEMS_A + ITEMS_B quads of 4 k-values of the next tile in registers between its global load
// and its split store.
#define ITEMS_A (BM * BK / 4 / NT)
#define ITEMS_B (BNL * BK / 4 / NT)

static_assert(BM % 64 == 0 && BM >= 64 && BM <= 256, "BM: 64 to 256, a multiple of 64 (one warpgroup each)");
static_assert(BN % 16 == 0 && BN >= 16 && BN <= 128 && BN != 80, "BN: 16 to 128 by 16 but 80 (wgmma.cuh's shapes)");
static_assert(BK % 16 == 0, "BK: a multiple of 16");
static_assert(KC > 0 && KC % BK == 0, "KC must be a positive multiple of BK");
static_assert(STAGES == 2 || STAGES == 3, "STAGES: 2 or 3");
static_assert((BM * BK / 4) % NT == 0 && (BNL * BK / 4) % NT == 0, "quads must divide evenly among the threads");
static_assert(SK == 0 || SPLITK == 1, "stream-K and split-K are exclusive");
static_assert(CT == 0 || SPLITK == 1, "CT: gt_splitk_reduce writes C untransposed");
static_assert(PT == 0 || (PF && SK == 0 && SPLITK == 1), "PT: prefetches into PF's registers, one K slice a tile");
static_assert((BN / 8) % EPI_PARTS == 0, "the epilogue's parts: whole groups of 8 columns");

// ---------------------------------------------------------------------------------------------------------------
// Global memory to registers to shared memory. An operand tile is R rows (m of A, n of B) by BK k-values; a quad
// is 4 consecutive k-values of one row. KCONTIG: k is the contiguous dimension in global memory (A without OP_TA, B
// with OP_TB), a quad is one 16-byte load when aligned; otherwise a warp takes 32 consecutive rows of one quad,
// four coalesced 32-bit loads each.

// Which quads a thread moves: item 0 at row r0 and quad q0 (from the lane and the warp), item i at r0 + DR(i),
// q0 + DQ(i) with compile-time DR and DQ, so that a tile's addresses cost one multiply-add per load and the shared
// offsets are immediates.
//   KCONTIG: a warp load takes QW quads (a 128-byte line when BK >= 32) of each of RW = 32 / QW rows; warp w takes
//     row groups w, w + W, ... then the next QW quads. With SWIZZLE, lane l of row s = l % 4 takes quad
//     (l / 4) ^ s ^ 2s: each eight lanes storing together then fill eight different swizzled slots (conflict-free;
//     without the swizzle two rows' bank groups are hit twice, the price of whole lines).
//   otherwise: a warp load takes 32 consecutive rows of one quad (4 coalesced 128-byte loads), conflict-free stores.
#define QW (BK / 4 < 8 ? BK / 4 : 8) // quads per row of a k-contiguous warp load (half lines measured 7% slower)
template <int R, bool KCONTIG> struct Map {
    static constexpr int W = NT / 32, Q = BK / 4; // warps, quads per row
    static constexpr int RW = 32 / QW, PER = R / RW / W; // KCONTIG: rows per warp load, loads per quad group
    static_assert(!KCONTIG || (R / RW) % W == 0, "KCONTIG: row groups must divide among the warps");
    static_assert(KCONTIG || R % 32 == 0, "rows: a multiple of 32");
    static_assert(KCONTIG || W % Q == 0 || Q % W == 0, "warps and quads: one must divide the other");
    static __device__ __forceinline__ void origin(int tid, int &r0, int &q0)
    {
        const int w = tid / 32, l = tid % 32;
        if (KCONTIG) r0 = l % RW + RW * w, q0 = SWIZZLE ? l / RW ^ (l % RW ^ 2 * (l % RW)) : l / RW;
        else if (W % Q == 0) r0 = l + 32 * (w / Q), q0 = w % Q;
        else r0 = l, q0 = w;
    }
    static __host__ __device__ constexpr int DR(int i)
    {
        return KCONTIG ? RW * W * (i % PER) : W % Q == 0 ? 32 * (W / Q) * i : 32 * (i / (Q / W));
    }
    static __host__ __device__ constexpr int DQ(int i)
    {
        return KCONTIG ? QW * (i / PER) : W % Q == 0 ? 0 : W * (i % (Q / W));
    }
};

// Byte offset of row r, quad q in an R-row tile (the layouts above: wgmma.cuh).
template <int R> __device__ __forceinline__ unsigned tile_off(int r, int q) { return gt_wg_off<R, SWIZZLE>(r, q); }

// x, hidden from the optimizer: products of the leading dimension stay in the loop instead of being hoisted into
// registers that the accumulators need (ptxas -v spilled otherwise).
__device__ __forceinline__ int opaque(int x)
{
    asm volatile("" : "+r"(x));
    return x;
}

// Where the thread's item 0 of tile 0 of operand X is, for the block's rows from d0.
template <int R, bool KCONTIG>
__device__ __forceinline__ const float *feed0(const float *X, int ld, int d0)
{
    int r0, q0;
    Map<R, KCONTIG>::origin(gt_thread_id(), r0, q0);
    return KCONTIG ? X + (size_t)(d0 + r0) * ld + 4 * q0 : X + (size_t)(4 * q0) * ld + d0 + r0;
}

// The thread's quads of tile t into x; p0: feed0. FULL: the tile lies whole inside the matrix, nothing is tested;
// 1: and, KCONTIG, vec holds (16-byte loads); 2: KCONTIG without vec (4-byte loads: the rows of an odd ld). FULL 0:
// rows past dn (from d0) and k past kn read nothing and are zero. vec: X 16-byte aligned and ld % 4 == 0.
template <int R, bool KCONTIG, int FULL, int ITEMS>
__device__ __forceinline__ void fetch(float (&x)[ITEMS][4], const float *p0, int ld, int t, int d0, int dn, int kn,
                                      bool vec)
{
    using Mp = Map<R, KCONTIG>;
    ld = opaque(ld);
    const float *p = KCONTIG ? p0 + t * BK : p0 + (ptrdiff_t)(t * BK) * ld;
    int r0 = 0, q0 = 0;
    if (!FULL) Mp::origin(gt_thread_id(), r0, q0);
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const int d = d0 + r0 + Mp::DR(i), k = t * BK + 4 * (q0 + Mp::DQ(i)); // used when !FULL
        if (KCONTIG) {
            const float *pi = p + (ptrdiff_t)Mp::DR(i) * ld + 4 * Mp::DQ(i);
            if (FULL == 1 || (!FULL && vec && d < dn && k + 3 < kn)) {
                const float4 v = __ldg((const float4 *)pi);
                x[i][0] = v.x, x[i][1] = v.y, x[i][2] = v.z, x[i][3] = v.w;
            } else {
#pragma unroll
                for (int e = 0; e < 4; ++e) x[i][e] = FULL || (d < dn && k + e < kn) ? __ldg(pi + e) : 0.0f;
            }
        } else {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const float *pe = p + (ptrdiff_t)(4 * Mp::DQ(i) + e) * ld + Mp::DR(i);
                x[i][e] = FULL || (d < dn && k + e < kn) ? __ldg(pe) : 0.0f;
            }
        }
    }
}

// Split the thread's quads and store them into the big and small tiles at shared addresses big and small.
template <int R, bool KCONTIG, int ITEMS>
__device__ __forceinline__ void put(unsigned big, unsigned small, const float (&x)[ITEMS][4])
{
    using Mp = Map<R, KCONTIG>;
    int r0, q0;
    Mp::origin(gt_thread_id(), r0, q0);
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const unsigned off = tile_off<R>(r0 + Mp::DR(i), q0 + Mp::DQ(i));
        unsigned b[4], s[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) gt_tf32_split(x[i][e], b[e], s[e]); // tf32.cuh: sm_90's cvt.rn
        asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(big + off), "r"(b[0]), "r"(b[1]), "r"(b[2]),
                     "r"(b[3])
                     : "memory");
        asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(small + off), "r"(s[0]), "r"(s[1]),
                     "r"(s[2]), "r"(s[3])
                     : "memory");
    }
}

// Operand geometry of one block, fixed for the whole K loop.
struct Operands {
    const float *pa, *pb; // feed0 of A and B
    int lda, ldb, M, N, K, bm0, bn0;
    bool va, vb, interior; // A and B take 16-byte loads; the block's tile of C lies whole inside C
};

// The operands of the tile of C from row bm0 and column bn0, over K's [k0, k1) (k0 a whole number of BK tiles: A
// and B moved there keep their 16-byte alignment).
__device__ __forceinline__ Operands operands(const float *A, int lda, const float *B, int ldb, int M, int N, int k0,
                                             int k1, int bm0, int bn0)
{
    A += OP_TA ? (size_t)k0 * lda : (size_t)k0;
    B += OP_TB ? (size_t)k0 : (size_t)k0 * ldb;
    Operands o;
    o.lda = lda, o.ldb = ldb, o.M = M, o.N = N, o.K = k1 - k0, o.bm0 = bm0, o.bn0 = bn0;
    o.pa = feed0<BM, !OP_TA>(A, lda, bm0);
    o.pb = feed0<BNL, (bool)OP_TB>(B, ldb, bn0);
    o.va = GT_VEC_OK(4, A, lda);
    o.vb = GT_VEC_OK(4, B, ldb);
    o.interior = bm0 + BM <= M && bn0 + BNL <= N;
    return o;
}

// Tile t of an interior block lies whole inside both operands: its loads need no test. With EVEN every block is
// interior and A and B take 16-byte loads (gemm checked); only the K tail is tested.
__device__ __forceinline__ bool whole_tile(const Operands &o, int t)
{
    return (EVEN || o.interior) && (t + 1) * BK <= o.K;
}

// Tile t of A (of B) into x: untested where whole, by 16-byte loads where k is contiguous and they are legal, else
// (an odd ld) by 4-byte ones.
__device__ __forceinline__ void fetch_a(float (&x)[ITEMS_A][4], const Operands &o, int t)
{
    if (whole_tile(o, t) && (EVEN || OP_TA || o.va)) fetch<BM, !OP_TA, 1>(x, o.pa, o.lda, t, o.bm0, o.M, o.K, true);
    else if (!EVEN && !OP_TA && whole_tile(o, t)) fetch<BM, true, 2>(x, o.pa, o.lda, t, o.bm0, o.M, o.K, false);
    else fetch<BM, !OP_TA, 0>(x, o.pa, o.lda, t, o.bm0, o.M, o.K, o.va);
}
__device__ __forceinline__ void fetch_b(float (&x)[ITEMS_B][4], const Operands &o, int t)
{
    if (whole_tile(o, t) && (EVEN || !OP_TB || o.vb))
        fetch<BNL, (bool)OP_TB, 1>(x, o.pb, o.ldb, t, o.bn0, o.N, o.K, true);
    else if (!EVEN && OP_TB && whole_tile(o, t)) fetch<BNL, true, 2>(x, o.pb, o.ldb, t, o.bn0, o.N, o.K, false);
    else fetch<BNL, (bool)OP_TB, 0>(x, o.pb, o.ldb, t, o.bn0, o.N, o.K, o.vb);
}
__device__ __forceinline__ void put_a(unsigned stage, const float (&x)[ITEMS_A][4])
{
    put<BM, !OP_TA>(stage, stage + A_BYTES, x);
}
__device__ __forceinline__ void put_b(unsigned stage, const float (&x)[ITEMS_B][4])
{
    put<BNL, (bool)OP_TB>(stage + 2 * A_BYTES, stage + 2 * A_BYTES + B_BYTES, x);
}

// Tile t into the stage at `stage`, one operand at a time: 4 * max(ITEMS_A, ITEMS_B) registers in flight.
__device__ __forceinline__ void load_tile(unsigned stage, const Operands &o, int t)
{
    {
        float x[ITEMS_A][4];
        fetch_a(x, o, t);
        put_a(stage, x);
    }
    float y[ITEMS_B][4];
    fetch_b(y, o, t);
    put_b(stage, y);
}

// ---------------------------------------------------------------------------------------------------------------
// wgmma

// The wgmma descriptor of k step ks of the 64 or R rows from row0 of an R-row tile at base (wgmma.cuh).
template <int R> __device__ __forceinline__ unsigned long long tile_desc(unsigned base, int row0, int ks)
{
    return gt_wg_desc<R, SWIZZLE>(base, row0, ks);
}

// The three products of every k step of the stage at `stage`, for this thread's warpgroup: big*big into chunk, the
// corrections into corr; add: 0 when both start here.
__device__ __forceinline__ void mma_stage(float (&chunk)[NACC], float (&corr)[NACC], unsigned stage, int add)
{
    const int row0 = gt_thread_id() / 128 * 64; // this warpgroup's 64 rows of A
    const unsigned b = stage + 2 * A_BYTES;
    gt_wg_fence();
#pragma unroll
    for (int ks = 0; ks < BK / 8; ++ks) {
        const unsigned long long a_big = tile_desc<BM>(stage, row0, ks);
        const unsigned long long a_small = tile_desc<BM>(stage + A_BYTES, row0, ks);
        const unsigned long long b_big = tile_desc<BNL>(b, 0, ks), b_small = tile_desc<BNL>(b + B_BYTES, 0, ks);
        gt_wgmma_tf32<BN>(corr, a_big, b_small, ks > 0 || add);
        gt_wgmma_tf32<BN>(corr, a_small, b_big, 1);
        gt_wgmma_tf32<BN>(chunk, a_big, b_big, ks > 0 || add);
    }
    gt_wg_commit();
}

// ---------------------------------------------------------------------------------------------------------------
// The kernel

#if PF
// The next tile of both operands, in registers from one iteration to the next.
struct Next {
    float a[ITEMS_A][4], b[ITEMS_B][4];
};
#endif

// A complete chunk into the FP32 sum: every wgmma group waited for, then acc += chunk + corr.
__device__ __forceinline__ void fold(float (&acc)[NACC], const float (&chunk)[NACC], const float (&corr)[NACC])
{
    gt_wg_wait<0>();
#pragma unroll
    for (int i = 0; i < NACC; ++i) acc[i] += chunk[i] + corr[i];
}

// acc = the products of the block's tile of C over all of K. Every KC k-values, acc += chunk + corr in FP32 and
// both restart from zero (the first wgmma of a chunk overwrites).
__device__ __forceinline__ void mac_tile(float (&acc)[NACC], const Operands &o, unsigned sbase)
{
    float chunk[NACC], corr[NACC];
#pragma unroll
    for (int i = 0; i < NACC; ++i) acc[i] = chunk[i] = corr[i] = 0.0f;
    const int ntiles = (o.K + BK - 1) / BK;
#if PF
    Next n;
    fetch_a(n.a, o, 0), fetch_b(n.b, o, 0);
    put_a(sbase, n.a), put_b(sbase, n.b);
    if (ntiles > 1) fetch_a(n.a, o, 1), fetch_b(n.b, o, 1);
#else
    load_tile(sbase, o, 0);
#endif
    gt_proxy_fence();
    __syncthreads();
    for (int t = 0; t < ntiles; ++t) {
        // Tile t is in its stage. Its wgmmas run while this thread stores tile t + 1 (into the stage of tile
        // t + 1 - STAGES, whose wgmmas every warpgroup finished before the last barrier; PF: loaded one iteration
        // ago, and tile t + 2 is loaded now).
        mma_stage(chunk, corr, sbase + t % STAGES * STAGE_BYTES, t % (KC / BK));
        const unsigned next = sbase + (t + 1) % STAGES * STAGE_BYTES;
#if PF
        if (t + 1 < ntiles) put_a(next, n.a), put_b(next, n.b);
        if (t + 2 < ntiles) fetch_a(n.a, o, t + 2), fetch_b(n.b, o, t + 2);
#else
        if (t + 1 < ntiles) load_tile(next, o, t + 1);
#endif
        if ((t + 1) % (KC / BK) == 0 || t + 1 == ntiles) fold(acc, chunk, corr); // the chunk complete (block-uniform)
        else gt_wg_wait<PEND>();
        gt_proxy_fence();
        __syncthreads();
    }
    gt_wg_wait<0>(); // the last tile folded after a wait: this one tells ptxas (which would insert its own)
}

// The accumulator layout of wgmma m64nN f32 (PTX ISA): warp w of the warpgroup holds rows 16w + g and 16w + g + 8
// (g = lane / 4); register 4j + r is column 8j + 2 (lane % 4) + (r & 1), row + 8 when r >= 2. So a thread's
// results come in NACC / 2 pairs: pair p, registers 2p and 2p + 1, is row i0 + 8 (p % 2) of the blocks' product,
// columns j0 + 8 (p / 2) and the next. The epilogue's functions below take WHOLE: every pair lies inside the
// product and, where a pair is two floats of a row of C (not CT), C takes 8-byte accesses; nothing is tested.
// Otherwise each value is tested on its own, by 4-byte accesses: the edge code stays small (unrolled with a branch
// per access and per vector test, the epilogue was over half of the kernel's SASS and of its compile time).
#define NPAIR (NACC / 2)

// Element (i, j) of the blocks' product: C's, or with CT Cᵀ's, which is C's (j, i).
__device__ __forceinline__ float *at(float *C, int ldc, int i, int j)
{
    return CT ? C + (size_t)j * ldc + i : C + (size_t)i * ldc + j;
}

// SPLITK > 1: the raw sums to the slice's part of the workspace (gt_splitk_reduce's layout).
template <bool WHOLE>
__device__ __forceinline__ void partial_pairs(const float (&acc)[NACC], int M, int N, float *__restrict__ ws, int i0,
                                              int j0)
{
#pragma unroll
    for (int p = 0; p < NPAIR; ++p) {
        const int i = i0 + 8 * (p % 2), j = j0 + 8 * (p / 2);
#pragma unroll
        for (int e = 0; e < 2; ++e)
            if (WHOLE || (i < M && j + e < N)) ws[((size_t)blockIdx.z * M + i) * N + j + e] = acc[2 * p + e];
    }
}

// old[2q + e] for value e of pair p0 + q, q < P: what it is blended with, the bias of its column of C, or C's value
// there (0 past the product).
template <bool WHOLE, int P>
__device__ __forceinline__ void fetch_pairs(float (&old)[2 * P], int p0, int M, int N, float *__restrict__ C, int ldc,
                                            const float *__restrict__ bias, int i0, int j0)
{
#pragma unroll
    for (int q = 0; q < P; ++q) {
        const int p = p0 + q, i = i0 + 8 * (p % 2), j = j0 + 8 * (p / 2);
        if (WHOLE && !CT && !bias) {
            const float2 v = *(const float2 *)at(C, ldc, i, j);
            old[2 * q] = v.x, old[2 * q + 1] = v.y;
            continue;
        }
#pragma unroll
        for (int e = 0; e < 2; ++e)
            old[2 * q + e] = !(WHOLE || (i < M && j + e < N)) ? 0.0f
                             : bias                             ? bias[CT ? i : j + e]
                                                                : *at(C, ldc, i, j + e);
    }
}

// Pairs p0 .. p0 + P - 1 written: alpha x, or where old is given, fmaf(b, old, alpha x).
template <bool WHOLE, int P>
__device__ __forceinline__ void put_pairs(const float (&acc)[NACC], const float *old, int p0, int M, int N,
                                          float *__restrict__ C, int ldc, int i0, int j0, float alpha, float b)
{
#pragma unroll
    for (int q = 0; q < P; ++q) {
        const int p = p0 + q, i = i0 + 8 * (p % 2), j = j0 + 8 * (p / 2);
        float r[2];
#pragma unroll
        for (int e = 0; e < 2; ++e)
            r[e] = old ? fmaf(b, old[2 * q + e], alpha * acc[2 * p + e]) : alpha * acc[2 * p + e];
        if (WHOLE && !CT) {
            *(float2 *)at(C, ldc, i, j) = make_float2(r[0], r[1]);
            continue;
        }
#pragma unroll
        for (int e = 0; e < 2; ++e)
            if (WHOLE || (i < M && j + e < N)) *at(C, ldc, i, j + e) = r[e];
    }
}

// The thread's results into C (or with SPLITK > 1, the workspace ws): alpha x where beta is 0, else fmaf(beta, C,
// alpha x), C read part by part before it is written. bias: the family's bias epilogue (kernels/family.h), NULL
// but in a call with a bias (beta is 0 then): one value per column of C, so per row of the blocks' product with
// CT; each value is fmaf(1, bias, alpha x), as a pass writing the bias and beta 1 would round it.
template <bool WHOLE>
__device__ __forceinline__ void store_pairs(const float (&acc)[NACC], int M, int N, float *__restrict__ C, int ldc,
                                            float *__restrict__ ws, const float *__restrict__ bias, int i0, int j0,
                                            float alpha, float beta)
{
#if SPLITK > 1
    (void)C, (void)ldc, (void)bias, (void)alpha, (void)beta;
    partial_pairs<WHOLE>(acc, M, N, ws, i0, j0);
#else
    (void)ws;
    const float b = bias ? 1.0f : beta;
    if (b == 0.0f) return put_pairs<WHOLE, NPAIR>(acc, nullptr, 0, M, N, C, ldc, i0, j0, alpha, 0.0f);
#pragma unroll
    for (int p0 = 0; p0 < NPAIR; p0 += NPAIR / EPI_PARTS) {
        float old[2 * (NPAIR / EPI_PARTS)];
        fetch_pairs<WHOLE, NPAIR / EPI_PARTS>(old, p0, M, N, C, ldc, bias, i0, j0);
        put_pairs<WHOLE, NPAIR / EPI_PARTS>(acc, old, p0, M, N, C, ldc, i0, j0, alpha, b);
    }
#endif
}

// The tile of the blocks' product at (bm0, bn0) from the thread's results. M, N: the product's (with CT, C's N and
// M).
__device__ __forceinline__ void store_tile(const float (&acc)[NACC], int M, int N, float *__restrict__ C, int ldc,
                                           float *__restrict__ ws, const float *__restrict__ bias, int bm0, int bn0,
                                           float alpha, float beta)
{
    const int tid = gt_thread_id(), lane = tid % 32;
    const int i0 = bm0 + tid / 32 * 16 + lane / 4, j0 = bn0 + lane % 4 * 2;
#if EVEN // every pair inside C, C aligned (gemm checked)
    store_pairs<true>(acc, M, N, C, ldc, ws, bias, i0, j0, alpha, beta);
#else
    const bool whole = i0 + 8 < M && j0 + BN - 7 < N && (CT || SPLITK > 1 || GT_VEC_OK(2, C, ldc));
    if (whole) store_pairs<true>(acc, M, N, C, ldc, ws, bias, i0, j0, alpha, beta);
    else store_pairs<false>(acc, M, N, C, ldc, ws, bias, i0, j0, alpha, beta);
#endif
}

#if SK > 0
// This block holds K tiles [kb, ke) of tile t in its workspace slot `slot` (streamk.cuh). Returns 1 when it is the
// last of the tile's blocks to arrive, with acc then the whole tile's sum: its parts added from zero in block order,
// its own read back too, as gt_splitk_reduce adds slices. Counting in does not wait for the other blocks.
__device__ __forceinline__ int sk_fixup(float (&acc)[NACC], float *__restrict__ ws, const gt_sk &s, int t, int slot)
{
    constexpr int Q = NACC / 4, PART = BM * BN / 4; // float4s of a thread, of a slot (layout [q][thread])
    const int tid = gt_thread_id();
    unsigned *cnt = (unsigned *)ws;
    float4 *slots = (float4 *)(ws + GT_SK_COUNTERS(s.T));
    float4 *mine = slots + (size_t)(2 * blockIdx.x + slot) * PART;
#pragma unroll
    for (int q = 0; q < Q; ++q) mine[q * NT + tid] = make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]);
    const int cf = gt_sk_owner(s, t * s.I), cl = gt_sk_owner(s, t * s.I + s.I - 1);
    if (!gt_sk_arrive(cnt, t, cl - cf + 1)) return 0;
#pragma unroll
    for (int i = 0; i < NACC; ++i) acc[i] = 0.0f;
    for (int o = cf; o <= cl; ++o) {
        const float4 *part = slots + (size_t)(2 * o + gt_sk_slot(s, o, t)) * PART + tid;
#pragma unroll
        for (int q0 = 0; q0 < Q; q0 += 8) { // eight loads in flight, not the whole part (which would spill)
            float4 p[8];
#pragma unroll
            for (int q = q0; q < q0 + 8 && q < Q; ++q) p[q - q0] = __ldcg(part + q * NT);
#pragma unroll
            for (int q = q0; q < q0 + 8 && q < Q; ++q) {
                float *v = &acc[4 * q];
                v[0] += p[q - q0].x, v[1] += p[q - q0].y, v[2] += p[q - q0].z, v[3] += p[q - q0].w;
            }
        }
    }
    return 1;
}

// The persistent block's work: its range of shared-out iterations, then its data-parallel tiles. Where no tile is
// shared out, ws holds no workspace and may be the call's bias. The loop's state lives in shared memory, written by
// one thread between two barriers: registers are what the MAC loop lacks (kept in them, it spilled into the loop).
struct SkNext {
    int it, end, dpt; // what is left of the block's range; its next data-parallel tile
    int t, kb, ke;    // the piece of work at hand: tile t (-1: none left), its K tiles [kb, ke)
};

__device__ __forceinline__ gt_sk sk_plan(int M, int N, int K)
{
    return gt_sk_plan(((M + BM - 1) / BM) * ((N + BN - 1) / BN), (K + BK - 1) / BK);
}

__device__ __forceinline__ void stream_k(float (&acc)[NACC], int M, int N, int K, float alpha,
                                         const float *__restrict__ A, int lda, const float *__restrict__ B, int ldb,
                                         float beta, float *__restrict__ C, int ldc, float *__restrict__ ws,
                                         unsigned sbase)
{
    __shared__ SkNext nx;
    if (gt_thread_id() == 0) {
        const gt_sk s = sk_plan(M, N, K);
        nx.it = gt_sk_start(s, blockIdx.x), nx.end = gt_sk_start(s, blockIdx.x + 1), nx.dpt = s.skt + blockIdx.x;
    }
    for (;;) {
        __syncthreads(); // every thread is done with the last piece's stages and state
        if (gt_thread_id() == 0) {
            const gt_sk s = sk_plan(M, N, K);
            if (!gt_sk_next(s, nx.it, nx.end, nx.dpt, nx.t, nx.kb, nx.ke)) nx.t = -1;
        }
        __syncthreads();
        if (nx.t < 0) break;
        {
            int bm0, bn0;
            gt_tile_origin<BM, BN, RASTER>(nx.t, M, N, &bm0, &bn0);
            mac_tile(acc, operands(A, lda, B, ldb, M, N, nx.kb * BK, min(K, nx.ke * BK), bm0, bn0), sbase);
        }
        const gt_sk s = sk_plan(M, N, K);
        const int t = nx.t;
        int bm0, bn0;
        gt_tile_origin<BM, BN, RASTER>(t, M, N, &bm0, &bn0);
        if ((nx.kb == 0 && nx.ke == s.I) || sk_fixup(acc, ws, s, t, gt_sk_slot(s, blockIdx.x, t)))
            store_tile(acc, M, N, C, ldc, ws, s.skt ? nullptr : ws, bm0, bn0, alpha, beta);
    }
}
#endif

#if PT
// Where the block's j-th tile of C (blockIdx.x + j gridDim.x) starts: row *bm0, column *bn0.
__device__ __forceinline__ void nth_origin(int j, int M, int N, int *bm0, int *bn0)
{
    gt_tile_origin<BM, BN, RASTER>(opaque(blockIdx.x + j * gridDim.x), M, N, bm0, bn0);
}

// Operands of the block's j-th tile of C.
__device__ __forceinline__ Operands nth_tile(int j, int M, int N, int K, const float *A, int lda, const float *B,
                                             int ldb)
{
    int bm0, bn0;
    nth_origin(j, M, N, &bm0, &bn0);
    return operands(A, lda, B, ldb, M, N, 0, K, bm0, bn0);
}

// The block's tiles of C, blockIdx.x and on by gridDim.x (each round of the grid's blocks a run of neighbours in
// the raster order, as without PT), as one pipeline of K tiles: mac_tile's loop, whose loads run two K tiles ahead
// into the next tile of C, and whose fold of a tile's last chunk stores that tile while the next one's first K
// tiles are in shared memory and in flight (measured 14-16% faster than one tile a block at K 64, and no faster at
// K 768). ws: the bias.
__device__ __forceinline__ void tiles_in_turn(float (&acc)[NACC], int M, int N, int K, float alpha,
                                              const float *__restrict__ A, int lda, const float *__restrict__ B,
                                              int ldb, float beta, float *__restrict__ C, int ldc,
                                              float *__restrict__ ws, unsigned sbase)
{
    const int tiles = ((M + BM - 1) / BM) * ((N + BN - 1) / BN), nk = (K + BK - 1) / BK;
    // K tiles in all; at least one tile each: the launch's grid is never wider than the tiles (kernels/tf32x3wg.c)
    const int total = (tiles - (int)blockIdx.x + (int)gridDim.x - 1) / (int)gridDim.x * nk;
    float chunk[NACC], corr[NACC];
#pragma unroll
    for (int i = 0; i < NACC; ++i) acc[i] = chunk[i] = corr[i] = 0.0f;
    Operands of = nth_tile(0, M, N, K, A, lda, B, ldb); // of the tile the loads reach
    Next n;
    fetch_a(n.a, of, 0), fetch_b(n.b, of, 0);
    put_a(sbase, n.a), put_b(sbase, n.b);
    if (total > 1) { // the loads one K tile ahead (the loop's keep two)
        if (nk == 1) of = nth_tile(1, M, N, K, A, lda, B, ldb);
        fetch_a(n.a, of, 1 % nk), fetch_b(n.b, of, 1 % nk);
    }
    gt_proxy_fence();
    __syncthreads();
    for (int g = 0, j = 0, kt = 0; g < total; ++g) { // K tile kt of the block's tile j
        mma_stage(chunk, corr, sbase + g % STAGES * STAGE_BYTES, kt % (KC / BK));
        const unsigned next = sbase + (g + 1) % STAGES * STAGE_BYTES;
        if (g + 1 < total) put_a(next, n.a), put_b(next, n.b);
        if (g + 2 < total) { // K tile (g + 2) % nk of tile (g + 2) / nk
            const int fk = (g + 2) % nk;
            if (fk == 0) of = nth_tile((g + 2) / nk, M, N, K, A, lda, B, ldb);
            fetch_a(n.a, of, fk), fetch_b(n.b, of, fk);
        }
        if ((kt + 1) % (KC / BK) == 0 || kt + 1 == nk) fold(acc, chunk, corr); // the chunk complete (block-uniform)
        else gt_wg_wait<PEND>();
        if (++kt == nk) { // tile j is whole: stored, and its sum restarts
            int m0, n0;
            nth_origin(j, M, N, &m0, &n0);
            store_tile(acc, M, N, C, ldc, ws, ws, m0, n0, alpha, beta);
#pragma unroll
            for (int i = 0; i < NACC; ++i) acc[i] = 0.0f;
            kt = 0, ++j;
        }
        gt_proxy_fence();
        __syncthreads();
    }
    gt_wg_wait<0>();
}
#endif

// The blocks' product: C itself, or with CT, Cᵀ = op(B)ᵀ op(A)ᵀ (A's part taken by B, M's by N: OP_TA, OP_TB).
__device__ __forceinline__ void gemm(int M, int N, int K, float alpha, const float *__restrict__ A, int lda,
                                     const float *__restrict__ B, int ldb, float beta, float *__restrict__ C, int ldc,
                                     float *__restrict__ ws)
{
    extern __shared__ float4 smem4[];
    const unsigned raw = (unsigned)__cvta_generic_to_shared(smem4);
    const unsigned sbase = SWIZZLE ? (raw + 1023) & ~1023u : raw; // the swizzle's atoms are 1024-byte aligned
#if EVEN // a call this variant cannot compute (applicable() refuses it) faults here, never writes a wrong C. ws is
         // not checked: unsplit it is a bias of any float alignment, and split-K's partials are stored one by one.
    static_assert(BNL == BN, "EVEN: B's tiles hold no rows past BN");
    if (M % BM || N % BN || !GT_VEC_OK(4, A, lda) || !GT_VEC_OK(4, B, ldb) || !GT_VEC_OK(4, C, ldc)) __trap();
#endif
    float acc[NACC];
#if SK > 0
    stream_k(acc, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, ws, sbase);
#elif PT
    tiles_in_turn(acc, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, ws, sbase);
#else
    int k0, k1, bm0, bn0; // this block's K slice (SPLITK > 1: whole tiles; 0 deep for a slice past K)
    gt_k_range(K, BK, &k0, &k1);
    gt_tile_origin<BM, BN, RASTER>(blockIdx.x, M, N, &bm0, &bn0);
    mac_tile(acc, operands(A, lda, B, ldb, M, N, k0, k1, bm0, bn0), sbase);
    store_tile(acc, M, N, C, ldc, ws, SPLITK == 1 ? ws : nullptr, bm0, bn0, alpha, beta);
#endif
}

extern "C" __global__ void __launch_bounds__(NT, MINB) gt_gemm(GT_GEMM_ARGS)
{
    GT_BATCH_OFFSET();
    if (CT) gemm(N, M, K, alpha, B, ldb, A, lda, beta, C, ldc, ws);
    else gemm(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, ws);
}
