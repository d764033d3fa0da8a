// A study, not a family: 3xTF32 SGEMM on Hopper's warpgroup tensor cores, warp-specialized (sm_90a). tf32x3wg's
// arithmetic (every operand value split once per block into big = tf32(x) and small = tf32(x - big); big*small and
// small*big into a correction accumulator, big*big into a chunk accumulator folded into FP32 every KC k-values), with
// the work divided:
//   - one producer warpgroup loads each k tile of A and B from global memory into registers (zero past the matrix),
//     splits it and stores the big and small tiles into one of STAGES shared-memory stages in wgmma's layout, and
//     signals it full on an mbarrier;
//   - BM / 64 consumer warpgroups only issue wgmma (64 rows each) and fold, waiting on the full barriers and
//     releasing each stage on an empty barrier once its wgmmas are done.
// It computes correctly in every layout and on every shape the harness checks, and runs at tf32x3wg's speed (92-98
// TFLOPS on an H100 at 4096^3 and 8192^3), not above it: the block is bound by shared memory's bandwidth, which the
// wgmmas (144 KiB per 128 x 128 x 32 tile: B is read by both warpgroups and by two of the three products) and the
// split stores (64 KiB) share, wherever the split runs. A cp.async stage of raw tiles before the split added 64 KiB
// a tile and ran 10% slower. docs/BENCHMARKS.md has the steps and the bound; the next step would read A from
// registers (wgmma's RS form), split there by the consumers. The correction accumulator runs over all of K (its
// values are 2^-11 of the result's, so the tensor cores' truncating adds cost nothing there) and is folded once at
// the end (CORR_FOLD 1: with every chunk, as tf32x3wg). WS_NOSPLIT / WS_NOMMA leave out a side (wrong results: for
// timing the other). With SPLITK > 1, grid z splits K as in tf32x3wg.
//   bash tests/perf/wgmma.sh build "ws:-DTEMPLATE='\"tf32x3ws.cu\"'"; bash tests/perf/wgmma.sh run
#include "common.cuh"
#include "epilogue.cuh"
#include "raster.cuh"
#include "tf32.cuh"
#include "wgmma.cuh"

#ifndef BM
#define BM 128 // rows of C per block: 64 per consumer warpgroup (64 or 128)
#endif
#ifndef BN
#define BN 128 // columns of C per block: the wgmma's N (64, 96 or 128)
#endif
#ifndef BK
#define BK 32 // K depth of a stage: 32, one 128-byte swizzled line per row
#endif
#ifndef STAGES
#define STAGES 3 // shared-memory stages (big and small tiles of A and B in wgmma's layout)
#endif
#ifndef KC
#define KC 128 // k-values between folds of the chunk into the FP32 accumulator (multiple of BK)
#endif
#ifndef CORR_FOLD
#define CORR_FOLD 0 // 1: the corrections are folded with every chunk too; 0: once, at the end
#endif
#define RASTER 8 // tile rows per rasterization group (blocks in flight share A and B panels in L2)

#define NC (BM / 64)        // consumer warpgroups
#define NP 128              // producer threads: one warpgroup, the last
#define NT (NC * 128 + NP)  // threads per block
#define NACC (BN / 2)       // accumulator registers of a consumer thread per set
#define CH (KC / BK)        // k tiles per chunk
// Registers after setmaxnreg with two consumer warpgroups. The block holds what __launch_bounds__(384, 1) gave it at
// launch, 384 x 168 (ptxas's cap, a multiple of 8), and the consumers' setmaxnreg.inc waits until the producer's
// .dec has returned enough of it: 128 x 104 + 256 x 200 = 384 x 168 exactly (more would wait forever).
#define PRODUCER_REGS 104
#define CONSUMER_REGS 200
static_assert(NC == 1 || NP * PRODUCER_REGS + NC * 128 * CONSUMER_REGS <= NT * 168, "setmaxnreg: more than the block holds");

static_assert(BM == 64 || BM == 128, "BM: 64 or 128 (one or two consumer warpgroups)");
static_assert(BN == 64 || BN == 96 || BN == 128, "BN: 64, 96 or 128 (the wgmma shapes of wgmma.cuh)");
static_assert(BK == 32, "BK: 32 (the 128-byte swizzle)");
static_assert(KC > 0 && KC % BK == 0, "KC must be a positive multiple of BK");
static_assert(STAGES >= 2, "STAGES: at least 2");

#define A_BYTES (BM * BK * 4)
#define B_BYTES (BN * BK * 4)
#define SPLIT_BYTES (2 * A_BYTES + 2 * B_BYTES) // a stage: A big, A small, B big, B small
#define BAR_BYTES (16 * STAGES)                 // full[STAGES], empty[STAGES]: 8 bytes each
#define SMEM_BYTES (STAGES * SPLIT_BYTES + BAR_BYTES + 1024) // 1024: the swizzle's alignment

// ---------------------------------------------------------------------------------------------------------------
// Producer. An operand tile is R rows (m of A, n of B) by BK k-values; a quad is 4 consecutive k-values of one row.
// KCONTIG: k is the contiguous dimension in global memory (A without GT_TA, B with GT_TB). Which quads producer
// thread p moves, chosen so that its global loads are coalesced and its stores into the swizzled tiles free of bank
// conflicts (as tf32x3wg's): item 0 at row r0, quad q0, item i at r0 + DR(i), q0 + DQ(i).
//   KCONTIG: a warp takes the 8 quads (a 128-byte line) of each of 4 rows, lane l of row s = l % 4 quad
//     (l / 4) ^ s ^ 2s; warp w row groups w, w + 4, ...: one 16-byte load when aligned.
//   otherwise: a warp takes 32 consecutive rows of one quad, warp w quads w and w + 4: four coalesced 4-byte loads.
template <int R, bool KCONTIG> struct Map {
    static constexpr int W = NP / 32, ITEMS = R * BK / 4 / NP;
    static_assert(R % 32 == 0, "rows: a multiple of 32");
    static __device__ __forceinline__ void origin(int p, int &r0, int &q0)
    {
        const int w = p / 32, l = p % 32;
        if (KCONTIG) r0 = l % 4 + 4 * w, q0 = l / 4 ^ (l % 4 ^ 2 * (l % 4));
        else r0 = l, q0 = w;
    }
    static __host__ __device__ constexpr int DR(int i) { return KCONTIG ? 4 * W * i : 32 * (i / 2); }
    static __host__ __device__ constexpr int DQ(int i) { return KCONTIG ? 0 : W * (i % 2); }
};

// x, hidden from the optimizer: products of the leading dimension stay in the loop instead of being hoisted into
// registers the loads need.
__device__ __forceinline__ int opaque(int x)
{
    asm volatile("" : "+r"(x));
    return x;
}

// Thread p's quads of k tile t of operand X (rows from d0) into x. FULL: the tile lies whole inside the matrix and,
// KCONTIG, 16-byte loads are allowed: nothing is tested. Otherwise rows past dn and k past kn read nothing and are
// zero; vec: X 16-byte aligned and ld % 4 == 0.
template <int R, bool KCONTIG, bool FULL>
__device__ __forceinline__ void fetch(float (&x)[Map<R, KCONTIG>::ITEMS][4], const float *X, int ld, int d0, int dn,
                                      int t, int kn, bool vec, int p)
{
    using Mp = Map<R, KCONTIG>;
    int r0, q0;
    Mp::origin(p, r0, q0);
    ld = opaque(ld);
    const int k0 = t * BK + 4 * q0;
    const float *base = KCONTIG ? X + (size_t)(d0 + r0) * ld + k0 : X + (size_t)k0 * ld + d0 + r0;
#pragma unroll
    for (int i = 0; i < Mp::ITEMS; ++i) {
        const int d = d0 + r0 + Mp::DR(i), k = k0 + 4 * Mp::DQ(i);
        if (KCONTIG) {
            const float *pi = base + (ptrdiff_t)Mp::DR(i) * ld + 4 * Mp::DQ(i);
            if (FULL || (vec && d < dn && k + 3 < kn)) {
                const float4 v = __ldg((const float4 *)pi);
                x[i][0] = v.x, x[i][1] = v.y, x[i][2] = v.z, x[i][3] = v.w;
            } else {
#pragma unroll
                for (int e = 0; e < 4; ++e) x[i][e] = d < dn && k + e < kn ? __ldg(pi + e) : 0.0f;
            }
        } else {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const float *pe = base + (ptrdiff_t)(4 * Mp::DQ(i) + e) * ld + Mp::DR(i);
                x[i][e] = FULL || (d < dn && k + e < kn) ? __ldg(pe) : 0.0f;
            }
        }
    }
}

// Split thread p's quads x and store them into the big and small tiles at big and small.
template <int R, bool KCONTIG>
__device__ __forceinline__ void put(unsigned big, unsigned small, const float (&x)[Map<R, KCONTIG>::ITEMS][4], int p)
{
    using Mp = Map<R, KCONTIG>;
    int r0, q0;
    Mp::origin(p, r0, q0);
#pragma unroll
    for (int i = 0; i < Mp::ITEMS; ++i) {
        unsigned b[4], s[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) gt_tf32_split(x[i][e], b[e], s[e]);
        const unsigned off = gt_wg_off<R, true>(r0 + Mp::DR(i), q0 + Mp::DQ(i));
        asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(big + off), "r"(b[0]), "r"(b[1]), "r"(b[2]),
                     "r"(b[3])
                     : "memory");
        asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(small + off), "r"(s[0]), "r"(s[1]), "r"(s[2]),
                     "r"(s[3])
                     : "memory");
    }
}

// The block's operands, fixed for its whole K loop.
struct Operands {
    const float *A, *B;
    int lda, ldb, M, N, K, bm0, bn0;
    bool va, vb, interior; // A and B take 16-byte loads; the block's tile of C lies whole inside C
};

// Whole tiles of an interior block with 16-byte loads where k is contiguous need no test.
__device__ __forceinline__ bool full_tile(const Operands &o, int t)
{
    return o.interior && (t + 1) * BK <= o.K && (GT_TA || o.va) && (!GT_TB || o.vb);
}

// The producer's loop: tile t's operands are loaded into registers, then, once the consumers have released stage
// t % STAGES (empty: its wgmmas of tile t - STAGES are done), split into it and signalled full. The loads are in
// flight while the producer waits.
__device__ __forceinline__ void produce(const Operands &o, unsigned split0, unsigned full0, unsigned empty0,
                                        int ntiles, int p)
{
    using MA = Map<BM, !GT_TA>;
    using MB = Map<BN, (bool)GT_TB>;
#pragma unroll 1
    for (int t = 0; t < ntiles; ++t) {
        float a[MA::ITEMS][4], b[MB::ITEMS][4];
        if (full_tile(o, t)) {
            fetch<BM, !GT_TA, true>(a, o.A, o.lda, o.bm0, o.M, t, o.K, true, p);
            fetch<BN, (bool)GT_TB, true>(b, o.B, o.ldb, o.bn0, o.N, t, o.K, true, p);
        } else {
            fetch<BM, !GT_TA, false>(a, o.A, o.lda, o.bm0, o.M, t, o.K, o.va, p);
            fetch<BN, (bool)GT_TB, false>(b, o.B, o.ldb, o.bn0, o.N, t, o.K, o.vb, p);
        }
        const int s = t % STAGES;
        if (t >= STAGES) gt_mbar_wait(empty0 + 8 * s, (t / STAGES - 1) & 1);
        const unsigned st = split0 + s * SPLIT_BYTES;
        put<BM, !GT_TA>(st, st + A_BYTES, a, p);
        put<BN, (bool)GT_TB>(st + 2 * A_BYTES, st + 2 * A_BYTES + B_BYTES, b, p);
        gt_proxy_fence();
        gt_mbar_arrive(full0 + 8 * s);
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Consumers

// Tile t's products for this thread's warpgroup (rows row0 of A) from split stage st: the corrections, and with
// big the big*big chunk product; corr_add / chunk_add: 0 when the set starts at this tile.
__device__ __forceinline__ void corrections(float (&corr)[NACC], unsigned st, int row0, bool corr_add)
{
    const unsigned b = st + 2 * A_BYTES;
#pragma unroll
    for (int ks = 0; ks < BK / 8; ++ks) {
        const unsigned long long a_big = gt_wg_desc<BM, true>(st, row0, ks);
        const unsigned long long a_small = gt_wg_desc<BM, true>(st + A_BYTES, row0, ks);
        const unsigned long long b_big = gt_wg_desc<BN, true>(b, 0, ks), b_small = gt_wg_desc<BN, true>(b + B_BYTES, 0, ks);
        gt_wgmma_tf32<BN>(corr, a_big, b_small, ks > 0 || corr_add);
        gt_wgmma_tf32<BN>(corr, a_small, b_big, 1);
    }
}
__device__ __forceinline__ void chunk_product(float (&chunk)[NACC], unsigned st, int row0, bool chunk_add)
{
    const unsigned b = st + 2 * A_BYTES;
#pragma unroll
    for (int ks = 0; ks < BK / 8; ++ks)
        gt_wgmma_tf32<BN>(chunk, gt_wg_desc<BM, true>(st, row0, ks), gt_wg_desc<BN, true>(b, 0, ks), ks > 0 || chunk_add);
}

// The consumers' loop: acc = the block's tile of C (this warpgroup's 64 rows) over all of K. Each tile's three
// products are one wgmma group; then the groups before it are done, so tile t - 1's stage is released, and where a
// chunk ends every group is waited for and the chunk folded into acc (ptxas serializes every wgmma of a kernel that
// reads an accumulator while a group may still write it, warning C7514). The corrections are folded at the end.
__device__ __forceinline__ void consume(float (&acc)[NACC], unsigned split0, unsigned full0, unsigned empty0, int ntiles)
{
    float chunk[NACC], corr[NACC];
#pragma unroll
    for (int i = 0; i < NACC; ++i) acc[i] = chunk[i] = corr[i] = 0.0f;
    const int row0 = gt_thread_id() / 128 * 64;
#pragma unroll 1
    for (int t = 0; t < ntiles; ++t) {
        const int s = t % STAGES;
        gt_mbar_wait(full0 + 8 * s, (t / STAGES) & 1);
        const unsigned st = split0 + s * SPLIT_BYTES;
        gt_wg_fence();
#ifndef WS_NOMMA // study only (wrong results): the consumers' time without the products
        corrections(corr, st, row0, CORR_FOLD ? t % CH != 0 : t > 0);
        chunk_product(chunk, st, row0, t % CH != 0);
#endif
        gt_wg_commit();
        if ((t + 1) % CH == 0 || t + 1 == ntiles) { // the chunk is complete (uniform across the block)
            gt_wg_wait<0>();
#pragma unroll
            for (int i = 0; i < NACC; ++i) acc[i] += CORR_FOLD ? chunk[i] + corr[i] : chunk[i];
        } else {
            gt_wg_wait<1>();
        }
        if (t > 0) gt_mbar_arrive(empty0 + 8 * ((t - 1) % STAGES));
    }
    gt_wg_wait<0>(); // the last tile waited already: this tells ptxas (which would insert its own)
#pragma unroll
    for (int i = 0; i < NACC; ++i) acc[i] += CORR_FOLD ? 0.0f : corr[i];
}

// The accumulator layout of wgmma m64nN f32 (PTX ISA): warp w of the warpgroup holds rows 16w + g and 16w + g + 8
// (g = lane / 4); register 4j + r is column 8j + 2 (lane % 4) + (r & 1), row + 8 when r >= 2. With SPLITK > 1 the
// raw sums go to the slice's part of the workspace ws instead (gt_store).
__device__ __forceinline__ void store_tile(const float (&acc)[NACC], int M, int N, int bm0, int bn0,
                                           float *__restrict__ C, int ldc, float *__restrict__ ws, float alpha,
                                           float beta)
{
    const int tid = gt_thread_id(), lane = tid % 32;
    const bool vc = GT_VEC_OK(2, C, ldc);
    const int i0 = bm0 + tid / 32 * 16 + lane / 4, j0 = bn0 + lane % 4 * 2;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
        const float top[2] = {acc[4 * j], acc[4 * j + 1]};
        gt_store<2, GT_EPI_FMA>(M, N, C, ldc, ws, i0, j0 + 8 * j, top, alpha, beta, vc);
        const float bottom[2] = {acc[4 * j + 2], acc[4 * j + 3]};
        gt_store<2, GT_EPI_FMA>(M, N, C, ldc, ws, i0 + 8, j0 + 8 * j, bottom, alpha, beta, vc);
    }
}

// ---------------------------------------------------------------------------------------------------------------
// The kernel. Shared memory: STAGES stages (1024-byte aligned), then their full and empty mbarriers.

extern "C" __global__ void __launch_bounds__(NT, 1) gt_gemm(GT_GEMM_ARGS)
{
    GT_BATCH_OFFSET();
    extern __shared__ float4 smem4[];
#if SPLITK > 1
    int k0, k1; // this block's K slice, whole tiles: A and B moved to its start keep their 16-byte alignment
    gt_k_range(K, BK, &k0, &k1);
    A += GT_TA ? (size_t)k0 * lda : (size_t)k0;
    B += GT_TB ? (size_t)k0 : (size_t)k0 * ldb;
    K = k1 - k0; // 0 for a slice past K: its partial sums are zeros, stored like any other slice's
#endif
    Operands o;
    o.A = A, o.B = B, o.lda = lda, o.ldb = ldb, o.M = M, o.N = N, o.K = K;
    gt_tile_origin<BM, BN, RASTER>(blockIdx.x, M, N, &o.bm0, &o.bn0);
    o.va = GT_VEC_OK(4, A, lda);
    o.vb = GT_VEC_OK(4, B, ldb);
    o.interior = o.bm0 + BM <= M && o.bn0 + BN <= N;
    const unsigned split0 = ((unsigned)__cvta_generic_to_shared(smem4) + 1023) & ~1023u;
    const unsigned full0 = split0 + STAGES * SPLIT_BYTES, empty0 = full0 + 8 * STAGES;
    const int tid = gt_thread_id(), ntiles = (K + BK - 1) / BK;
    if (tid == 0)
        for (int s = 0; s < STAGES; ++s) gt_mbar_init(full0 + 8 * s, NP), gt_mbar_init(empty0 + 8 * s, NC * 128);
    __syncthreads();
    if (tid >= NC * 128) {
        if (NC > 1) gt_setmaxnreg_dec<PRODUCER_REGS>();
        produce(o, split0, full0, empty0, ntiles, tid - NC * 128);
    } else {
        if (NC > 1) gt_setmaxnreg_inc<CONSUMER_REGS>();
        float acc[NACC];
        consume(acc, split0, full0, empty0, ntiles);
        store_tile(acc, M, N, o.bm0, o.bn0, C, ldc, ws, alpha, beta);
    }
}
