// 3xTF32 study: can tensor cores give an FP32-accurate SGEMM on Hopper faster than cuBLAS SGEMM? Each operand
// element x is split in registers into big = tf32(x) and small = tf32(x - big); three m16n8k8 TF32 MMAs per
// fragment pair (big*small and small*big into a "correction" accumulator, big*big into a "chunk" accumulator).
// Hopper's MMA accumulates with truncation, so every KC k-values the chunk is added into a plain FP32 register
// accumulator (round to nearest) and zeroed; KC=0 never folds, "merged" variants put the corrections into the
// chunk too. Column-major "nn" like cuBLAS, shapes must be multiples of the block tile (checked).
// The "3xs"/"3xsm" variants (kernel tf32x3s) split once per block into shared memory instead of in registers.
// The harness times every variant against cuBLAS SGEMM (pedantic) and TF32 cuBLAS on the same inputs, with DGEMM
// on the same inputs as the reference: max and normwise relative error, NaNs after a NaN-poisoned beta=0 run,
// bitwise equality of two runs. Before that, small checks on an odd shape with alpha/beta and padded leading
// dimensions, two of them on integer data where every correct method is exact, so an index bug cannot hide.
//   tf32x3 [M N K ...]          (default 2048^3 4096^3 8192^3; env INPUTS=uniform|wide|both, default both)
// tests/perf/tf32x3.sh builds and runs it. Exit status 1 when any check fails.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda_check.h"

// ---------------------------------------------------------------------------------------------------------------
// The kernel

// Shared-memory geometry of one pipeline stage. A tile: BK rows (one per k) of BM floats, contiguous in global
// memory; B tile: BN rows (one per n) of BK floats. Within each 8-wide k step the MMA's k slots are permuted (slot
// t is k = 2t, slot t+4 is k = 2t+1, the same for A and B, so the sum is unchanged): a lane's two B values are then
// adjacent, one 64-bit load. The pads make the fragment loads conflict-free: A loads touch banks
// (2t*LDA + g) % 32, distinct for the 32 lanes when LDA % 8 == 4; B's 64-bit loads (half a warp per phase) touch
// g*LDB + 2t + {0,1}, distinct when LDB % 32 is 8 or 24. Both keep rows 16-byte aligned for cp.async.
template <int BM, int BN, int BK, int WM, int WN, int STAGES> struct Tile {
    static constexpr int NT = (BM / WM) * (BN / WN) * 32;
    static constexpr int LDA = BM + 4, LDB = BK + 8;
    static constexpr int A_FLOATS = BK * LDA, B_FLOATS = BN * LDB, STAGE_FLOATS = A_FLOATS + B_FLOATS;
    static constexpr int SMEM = STAGES * STAGE_FLOATS * 4;
    static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 8 == 0 && BK % 8 == 0, "tile shape");
    static_assert(LDA % 8 == 4, "A pad: fragment loads would conflict");
    static_assert(LDB % 32 == 8 || LDB % 32 == 24, "B pad: fragment loads would conflict");
    static_assert((BM * BK / 4) % NT == 0 && (BN * BK / 4) % NT == 0, "cp.async chunks must divide evenly");
    static_assert(A_FLOATS % 4 == 0 && STAGE_FLOATS % 4 == 0, "16-byte aligned stages");
    static_assert(STAGES >= 2, "pipeline");
};

__device__ __forceinline__ void cp_async16(float *smem, const float *gmem)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(__cvta_generic_to_global(gmem))
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// x = big + small, both TF32, up to small's rounding (x - big is exact in FP32: big is x rounded to 11 bits).
// SPLIT_RNA: cvt.rna, as CUTLASS-style 3xTF32 does (ptxas emulates it on sm_90: compare, add, mask).
// SPLIT_RN: cvt.rn (sm_90: one F2FP instruction); differs from rna only on ties, same accuracy. Both read the
// .tf32 result as an FP32 bit pattern, which PTX leaves to the implementation: the exact checks would catch it.
// SPLIT_INT: round half away on the bits (add half an ulp of TF32, mask): two integer instructions, the same bits
// as cvt.rna for finite x (a NaN input may come out as 0 or Inf); the checks compare it bitwise with SPLIT_RNA.
enum { SPLIT_RNA, SPLIT_RN, SPLIT_INT, SPLIT_RN_SMEM }; // the last: tf32x3s (cvt.rn once per block), a label
template <int SPLIT> __device__ __forceinline__ uint32_t tf32(float x)
{
    uint32_t r;
    if constexpr (SPLIT == SPLIT_RNA) asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    else if constexpr (SPLIT == SPLIT_RN) asm("cvt.rn.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    else r = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
    return r;
}
template <int SPLIT> __device__ __forceinline__ void split(float x, uint32_t &big, uint32_t &small)
{
    big = tf32<SPLIT>(x);
    small = tf32<SPLIT>(x - __uint_as_float(big));
}

// d += a * b on one 16x8x8 tile. a: (g,t) (g+8,t) (g,t+4) (g+8,t+4); b: (k=t,n=g) (k=t+4,n=g);
// d: (g,2t) (g,2t+1) (g+8,2t) (g+8,2t+1), with g = lane/4, t = lane%4 (PTX ISA, mma.m16n8k8 .tf32).
__device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2])
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// C = alpha*A*B + beta*C, A M x K (lda), B K x N (ldb), C M x N (ldc), all column-major. M % BM, N % BN, K % BK
// must be 0, lda and ldb multiples of 4, A and B 16-byte aligned (the launcher checks). One block per BM x BN
// tile of C, blocks rastered in groups of 8 block rows so that the blocks in flight share A and B panels in L2.
template <int BM, int BN, int BK, int WM, int WN, int STAGES, int KC, bool MERGED, int SPLIT>
__global__ void __launch_bounds__(Tile<BM, BN, BK, WM, WN, STAGES>::NT, 1)
    tf32x3(int M, int N, int K, float alpha, const float *__restrict__ A, int lda, const float *__restrict__ B,
           int ldb, float beta, float *__restrict__ C, int ldc)
{
    using T = Tile<BM, BN, BK, WM, WN, STAGES>;
    constexpr int NT = T::NT, LDA = T::LDA, LDB = T::LDB;
    constexpr int MI = WM / 16, NI = WN / 8; // MMA tiles per warp
    constexpr int GROUP = 8;
    static_assert(KC % BK == 0 && KC >= 0, "KC must be a multiple of BK");
    extern __shared__ __align__(16) float smem[];

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int wm0 = (warp % (BM / WM)) * WM, wn0 = (warp / (BM / WM)) * WN;

    // Grouped raster: block ids run down GROUP block rows, then to the next block column.
    const int nbm = M / BM, nbn = N / BN;
    const int bid = blockIdx.x, per_group = GROUP * nbn;
    const int first = (bid / per_group) * GROUP, rows = min(nbm - first, GROUP);
    const int inner = bid % per_group;
    const int m0 = (first + inner % rows) * BM, n0 = (inner / rows) * BN;

    // Tile kt into stage s in 16-byte chunks, consecutive threads on consecutive chunks of one contiguous row.
    // Chunk c = tid + i*NT of the A tile is row (k) c / (BM/4), column (m) 4 * (c % (BM/4)); as NT is a multiple
    // of the row length, chunk i is the thread's chunk 0 moved down i * A_ROWS rows. Same for B. One running
    // pointer per operand (not one per chunk) keeps the register count down.
    constexpr int A_ROWS = NT / (BM / 4), B_ROWS = NT / (BK / 4); // rows covered by one pass of the block
    static_assert(NT % (BM / 4) == 0 && NT % (BK / 4) == 0, "a pass covers whole rows");
    const float *ga = A + m0 + (tid % (BM / 4)) * 4 + (size_t)(tid / (BM / 4)) * lda;      // A(m, k = row), tile 0
    const float *gb = B + (tid % (BK / 4)) * 4 + (size_t)(n0 + tid / (BK / 4)) * ldb;      // B(k, n = row), tile 0
    const size_t a_pass = (size_t)A_ROWS * lda, b_pass = (size_t)B_ROWS * ldb;
    const int sa = (tid / (BM / 4)) * LDA + (tid % (BM / 4)) * 4, sb = (tid / (BK / 4)) * LDB + (tid % (BK / 4)) * 4;
    auto load = [&](int kt, int s) {
        float *as = smem + s * T::STAGE_FLOATS + sa, *bs = smem + s * T::STAGE_FLOATS + T::A_FLOATS + sb;
        const float *pa = ga + (size_t)kt * BK * lda, *pb = gb + kt * BK;
#pragma unroll
        for (int i = 0; i < BM * BK / 4 / NT; ++i) cp_async16(as + i * A_ROWS * LDA, pa + i * a_pass);
#pragma unroll
        for (int i = 0; i < BN * BK / 4 / NT; ++i) cp_async16(bs + i * B_ROWS * LDB, pb + i * b_pass);
    };

    float chunk[MI][NI][4];                           // big*big (and corrections when MERGED) since the last fold
    float corr[MERGED ? 1 : MI][MERGED ? 1 : NI][4];  // big*small + small*big, never folded (2^-11 smaller)
    float acc[KC ? MI : 1][KC ? NI : 1][4];           // FP32 sum of folded chunks
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                chunk[i][j][r] = 0.0f;
                if constexpr (!MERGED) corr[i][j][r] = 0.0f;
                if constexpr (KC > 0) acc[i][j][r] = 0.0f;
            }
    auto fold = [&] {
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < NI; ++j)
#pragma unroll
                for (int r = 0; r < 4; ++r) {
                    if constexpr (KC > 0) acc[i][j][r] += chunk[i][j][r];
                    chunk[i][j][r] = 0.0f;
                }
    };

    const int KT = K / BK;
    // Prologue: STAGES-1 tiles in flight. Always commit (groups may be empty) so that group i is tile i.
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < KT) load(s, s);
        cp_async_commit();
    }
    int kc_count = 0; // k-tiles in the current chunk
    for (int kt = 0; kt < KT; ++kt) {
        // STAGES-1+kt groups committed; tiles 0..kt done leaves at most STAGES-2 pending.
        cp_async_wait<STAGES - 2>();
        // Tile kt visible to all threads, and every warp is past tile kt-1, whose stage is refilled next.
        __syncthreads();
        if (kt + STAGES - 1 < KT) load(kt + STAGES - 1, (kt + STAGES - 1) % STAGES);
        cp_async_commit();

        const float *as = smem + (kt % STAGES) * T::STAGE_FLOATS, *bs = as + T::A_FLOATS;
#pragma unroll
        for (int kk = 0; kk < BK; kk += 8) {
            uint32_t bb[NI][2], bsm[NI][2];
#pragma unroll
            for (int j = 0; j < NI; ++j) { // b0 = B(kk+2t, n), b1 = B(kk+2t+1, n), n = wn0+8j+g
                const float2 b = *(const float2 *)(bs + (wn0 + j * 8 + g) * LDB + kk + 2 * t);
                split<SPLIT>(b.x, bb[j][0], bsm[j][0]);
                split<SPLIT>(b.y, bb[j][1], bsm[j][1]);
            }
#pragma unroll
            for (int i = 0; i < MI; ++i) {
                const float *p = as + (kk + 2 * t) * LDA + wm0 + i * 16 + g; // A(m = wm0+16i+g, k = kk+2t)
                uint32_t ab[4], asm_[4];
                split<SPLIT>(p[0], ab[0], asm_[0]);       // a0 (row g,   slot t):   m,   k = kk+2t
                split<SPLIT>(p[8], ab[1], asm_[1]);       // a1 (row g+8, slot t):   m+8, k = kk+2t
                split<SPLIT>(p[LDA], ab[2], asm_[2]);     // a2 (row g,   slot t+4): m,   k = kk+2t+1
                split<SPLIT>(p[LDA + 8], ab[3], asm_[3]); // a3 (row g+8, slot t+4): m+8, k = kk+2t+1
#pragma unroll
                for (int j = 0; j < NI; ++j) {
                    // Small terms first, so that in the merged accumulator they are not added to a large sum.
                    if constexpr (MERGED) {
                        mma(chunk[i][j], ab, bsm[j]);
                        mma(chunk[i][j], asm_, bb[j]);
                    } else {
                        mma(corr[i][j], ab, bsm[j]);
                        mma(corr[i][j], asm_, bb[j]);
                    }
                    mma(chunk[i][j], ab, bb[j]);
                }
            }
        }
        if constexpr (KC > 0) {
            if (++kc_count == KC / BK) { // block-uniform
                kc_count = 0;
                fold();
            }
        }
    }
    if constexpr (KC > 0) {
        if (kc_count) fold(); // the last, partial chunk
    }
    cp_async_wait<0>(); // only empty groups remain; leave none behind

#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j) {
            float v[4];
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                float x;
                if constexpr (KC > 0) x = acc[i][j][r];
                else x = chunk[i][j][r];
                if constexpr (!MERGED) x += corr[i][j][r];
                v[r] = x;
            }
            const int m = m0 + wm0 + i * 16 + g, n = n0 + wn0 + j * 8 + 2 * t;
            float *c0 = C + m + (size_t)n * ldc, *c1 = c0 + ldc; // (m, n), (m, n+1); +8: rows m+8
            if (beta == 0.0f) { // C is not read: it may hold anything, NaN included
                c0[0] = alpha * v[0];
                c1[0] = alpha * v[1];
                c0[8] = alpha * v[2];
                c1[8] = alpha * v[3];
            } else { // all loads before the stores: c0 and c1 could alias as far as the compiler knows
                const float o0 = c0[0], o1 = c1[0], o2 = c0[8], o3 = c1[8];
                c0[0] = alpha * v[0] + beta * o0;
                c1[0] = alpha * v[1] + beta * o1;
                c0[8] = alpha * v[2] + beta * o2;
                c1[8] = alpha * v[3] + beta * o3;
            }
        }
}

// Split once per block, in shared memory ("3xs"/"3xsm" variants). Raw tiles land by cp.async in RS stages laid out
// as above; after a tile lands, the block converts it once into big and small TF32 words in a split buffer laid
// out in fragment order, so that the warps load ready fragments with 128-bit loads and no cvt (in the register
// split each A value is converted by BN/WN warps and each B value by BM/WM warps). Split buffer, uint32 words:
// A: [BK/8 k steps][BM/16 m tiles][big, small][32 lanes][a0..a3]; B: [BK/8][BN/8 n tiles][32 lanes][b0 b1 big,
// b0 b1 small]. A warp's 128-bit load or store covers 512 contiguous bytes: no bank conflicts; the split pass reads
// the raw tile with the fragment loads' conflict-free pattern (32 consecutive threads act as the 32 lanes of one
// fragment). Two split buffers: while the warps compute tile kt from one, they split tile kt+1 into the other
// (the split work of tile kt+1 is spread over the k steps of tile kt, interleaved with the MMAs), so there is one
// __syncthreads per k-tile, as in the register-split kernel.
template <int BM, int BN, int BK, int WM, int WN, int RS> struct SplitTile {
    using R = Tile<BM, BN, BK, WM, WN, RS>; // the raw stages
    static constexpr int NT = R::NT, KS = BK / 8;
    static constexpr int SA_WORDS = BK * BM * 2, SPLIT_WORDS = SA_WORDS + BK * BN * 2;
    static constexpr int SMEM = R::SMEM + 2 * SPLIT_WORDS * 4;
    static constexpr int UA = BK * BM / (4 * NT), UB = BK * BN / (2 * NT); // split units per thread and tile
    static_assert(UA * 4 * NT == BK * BM && UB * 2 * NT == BK * BN, "split units must divide evenly");
    static_assert(UA % KS == 0 && UB % KS == 0, "split units must spread evenly over the k steps");
    static_assert(SMEM <= 227 * 1024, "shared memory per block");
    static constexpr int SMEM_PER_SM = 228 * 1024, SMEM_RESERVED = 1024; // sm_90; 1 KB reserved per block
};

// MINB: blocks per SM asked of ptxas through __launch_bounds__ (2: at most 128 registers a thread).
template <int BM, int BN, int BK, int WM, int WN, int RS, int KC, bool MERGED, int MINB>
__global__ void __launch_bounds__(Tile<BM, BN, BK, WM, WN, RS>::NT, MINB)
    tf32x3s(int M, int N, int K, float alpha, const float *__restrict__ A, int lda, const float *__restrict__ B,
            int ldb, float beta, float *__restrict__ C, int ldc)
{
    using T = Tile<BM, BN, BK, WM, WN, RS>;
    using S = SplitTile<BM, BN, BK, WM, WN, RS>;
    constexpr int NT = T::NT, LDA = T::LDA, LDB = T::LDB, KS = S::KS, UA = S::UA, UB = S::UB;
    constexpr int MI = WM / 16, NI = WN / 8;
    constexpr int GROUP = 8;
    // Spread the next tile's split over the k steps (interleaved with the MMAs) or do it after them: with separate
    // corrections (192 accumulator registers) and BK 32 the spread split's live values spill (ptxas -v).
    constexpr bool SPREAD = MERGED || BK <= 16;
    static_assert(KC % BK == 0 && KC >= 0, "KC must be a multiple of BK");
    extern __shared__ __align__(16) float smem[];
    uint32_t *const split_buf = (uint32_t *)(smem + RS * T::STAGE_FLOATS); // 2 buffers of SPLIT_WORDS

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int g = lane >> 2, t = lane & 3;
    const int wm0 = (warp % (BM / WM)) * WM, wn0 = (warp / (BM / WM)) * WN;

    const int nbm = M / BM, nbn = N / BN;
    const int bid = blockIdx.x, per_group = GROUP * nbn;
    const int first = (bid / per_group) * GROUP, rows = min(nbm - first, GROUP);
    const int inner = bid % per_group;
    const int m0 = (first + inner % rows) * BM, n0 = (inner / rows) * BN;

    constexpr int A_ROWS = NT / (BM / 4), B_ROWS = NT / (BK / 4);
    static_assert(NT % (BM / 4) == 0 && NT % (BK / 4) == 0, "a pass covers whole rows");
    const float *ga = A + m0 + (tid % (BM / 4)) * 4 + (size_t)(tid / (BM / 4)) * lda;
    const float *gb = B + (tid % (BK / 4)) * 4 + (size_t)(n0 + tid / (BK / 4)) * ldb;
    const size_t a_pass = (size_t)A_ROWS * lda, b_pass = (size_t)B_ROWS * ldb;
    const int sa = (tid / (BM / 4)) * LDA + (tid % (BM / 4)) * 4, sb = (tid / (BK / 4)) * LDB + (tid % (BK / 4)) * 4;
    auto load = [&](int kt, int s) {
        float *as = smem + s * T::STAGE_FLOATS + sa, *bs = smem + s * T::STAGE_FLOATS + T::A_FLOATS + sb;
        const float *pa = ga + (size_t)kt * BK * lda, *pb = gb + kt * BK;
#pragma unroll
        for (int i = 0; i < BM * BK / 4 / NT; ++i) cp_async16(as + i * A_ROWS * LDA, pa + i * a_pass);
#pragma unroll
        for (int i = 0; i < BN * BK / 4 / NT; ++i) cp_async16(bs + i * B_ROWS * LDB, pb + i * b_pass);
    };
    // Split this thread's units of the raw tile in stage s into split buffer sb: with part < 0 all of them, else
    // only the part-th of KS equal shares (part is a constant after unrolling). Unit u = tid + r*NT is lane u%32
    // of fragment q = u/32: A fragment (k step q / (BM/16), m tile q % (BM/16)), B fragment likewise.
    // Fragment q = warp + r*NW as (k step, tile) with NT_ tiles per k step, written so that the warp-dependent part
    // is computed once and r only adds constants (the compiler does not know warp < NW; with q / NT_ per unit the
    // split addresses took registers and the separate-corrections kernel spilled).
    constexpr int NW = NT / 32;
    auto frag_of = [&](int r, auto tiles, int &ks, int &ft) {
        constexpr int NT_ = decltype(tiles)::value;
        static_assert(NW % NT_ == 0 || NT_ % NW == 0, "warps and fragments per k step");
        if constexpr (NW % NT_ == 0) ks = warp / NT_ + r * (NW / NT_), ft = warp % NT_;
        else ks = r / (NT_ / NW), ft = warp + (r % (NT_ / NW)) * NW;
    };
    auto split_part = [&](int part, int s, int sbuf) {
        const float *as = smem + s * T::STAGE_FLOATS, *bs = as + T::A_FLOATS;
        uint32_t *pa = split_buf + sbuf * S::SPLIT_WORDS, *pb = pa + S::SA_WORDS;
#pragma unroll
        for (int r = 0; r < UA; ++r) {
            if (part >= 0 && r / (UA / KS) != part) continue;
            const int q = warp + r * NW;
            int ks, mt;
            frag_of(r, std::integral_constant<int, BM / 16>(), ks, mt);
            const float *p = as + (ks * 8 + 2 * t) * LDA + mt * 16 + g;
            uint4 big, small;
            split<SPLIT_RN>(p[0], big.x, small.x);       // a0: m,   k = 8ks+2t
            split<SPLIT_RN>(p[8], big.y, small.y);       // a1: m+8, k = 8ks+2t
            split<SPLIT_RN>(p[LDA], big.z, small.z);     // a2: m,   k = 8ks+2t+1
            split<SPLIT_RN>(p[LDA + 8], big.w, small.w); // a3: m+8, k = 8ks+2t+1
            *(uint4 *)(pa + (q * 2) * 128 + lane * 4) = big;
            *(uint4 *)(pa + (q * 2 + 1) * 128 + lane * 4) = small;
        }
#pragma unroll
        for (int r = 0; r < UB; ++r) {
            if (part >= 0 && r / (UB / KS) != part) continue;
            const int q = warp + r * NW;
            int ks, nt;
            frag_of(r, std::integral_constant<int, BN / 8>(), ks, nt);
            const float2 b = *(const float2 *)(bs + (nt * 8 + g) * LDB + ks * 8 + 2 * t);
            uint4 v; // b0 big, b1 big, b0 small, b1 small
            split<SPLIT_RN>(b.x, v.x, v.z);
            split<SPLIT_RN>(b.y, v.y, v.w);
            *(uint4 *)(pb + q * 128 + lane * 4) = v;
        }
    };

    float chunk[MI][NI][4];
    float corr[MERGED ? 1 : MI][MERGED ? 1 : NI][4];
    float acc[KC ? MI : 1][KC ? NI : 1][4];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                chunk[i][j][r] = 0.0f;
                if constexpr (!MERGED) corr[i][j][r] = 0.0f;
                if constexpr (KC > 0) acc[i][j][r] = 0.0f;
            }
    auto fold = [&] {
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < NI; ++j)
#pragma unroll
                for (int r = 0; r < 4; ++r) {
                    if constexpr (KC > 0) acc[i][j][r] += chunk[i][j][r];
                    chunk[i][j][r] = 0.0f;
                }
    };

    const int KT = K / BK;
    // Prologue: RS tiles in flight (group i is tile i, groups may be empty), then tile 0 split into buffer 0.
#pragma unroll
    for (int s = 0; s < RS; ++s) {
        if (s < KT) load(s, s);
        cp_async_commit();
    }
    cp_async_wait<RS - 1>();
    __syncthreads();
    split_part(-1, 0, 0);
    int kc_count = 0;
    for (int kt = 0; kt < KT; ++kt) {
        // RS+kt groups committed; tiles 0..kt+1 done leaves at most RS-2 pending.
        cp_async_wait<RS - 2>();
        // Split buffer kt%2 (tile kt) complete; raw tile kt+1 visible; every warp is past tile kt-1's MMAs, so
        // buffer (kt+1)%2 may be rewritten; every thread has split tile kt, so its raw stage may be refilled.
        __syncthreads();
        if (kt + RS < KT) load(kt + RS, kt % RS);
        cp_async_commit();
        const bool split_next = kt + 1 < KT; // block-uniform
        const uint32_t *pa = split_buf + (kt & 1) * S::SPLIT_WORDS, *pb = pa + S::SA_WORDS;
#pragma unroll
        for (int ks = 0; ks < KS; ++ks) {
            uint32_t bb[NI][2], bsm[NI][2];
#pragma unroll
            for (int j = 0; j < NI; ++j) {
                const uint4 v = *(const uint4 *)(pb + (ks * (BN / 8) + wn0 / 8 + j) * 128 + lane * 4);
                bb[j][0] = v.x, bb[j][1] = v.y, bsm[j][0] = v.z, bsm[j][1] = v.w;
            }
#pragma unroll
            for (int i = 0; i < MI; ++i) {
                const int q = ks * (BM / 16) + wm0 / 16 + i;
                const uint4 hb = *(const uint4 *)(pa + (q * 2) * 128 + lane * 4);
                const uint4 hs = *(const uint4 *)(pa + (q * 2 + 1) * 128 + lane * 4);
                const uint32_t ab[4] = {hb.x, hb.y, hb.z, hb.w}, asm_[4] = {hs.x, hs.y, hs.z, hs.w};
                // Small terms first (as in tf32x3); the three passes over j give each accumulator NI
                // independent MMAs between its dependent ones.
#pragma unroll
                for (int j = 0; j < NI; ++j) {
                    if constexpr (MERGED) mma(chunk[i][j], ab, bsm[j]);
                    else mma(corr[i][j], ab, bsm[j]);
                }
#pragma unroll
                for (int j = 0; j < NI; ++j) {
                    if constexpr (MERGED) mma(chunk[i][j], asm_, bb[j]);
                    else mma(corr[i][j], asm_, bb[j]);
                }
#pragma unroll
                for (int j = 0; j < NI; ++j) mma(chunk[i][j], ab, bb[j]);
            }
            if (SPREAD && split_next) split_part(ks, (kt + 1) % RS, (kt + 1) & 1);
        }
        if (!SPREAD && split_next) split_part(-1, (kt + 1) % RS, (kt + 1) & 1);
        if constexpr (KC > 0) {
            if (++kc_count == KC / BK) {
                kc_count = 0;
                fold();
            }
        }
    }
    if constexpr (KC > 0) {
        if (kc_count) fold();
    }
    cp_async_wait<0>();

#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j) {
            float v[4];
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                float x;
                if constexpr (KC > 0) x = acc[i][j][r];
                else x = chunk[i][j][r];
                if constexpr (!MERGED) x += corr[i][j][r];
                v[r] = x;
            }
            const int m = m0 + wm0 + i * 16 + g, n = n0 + wn0 + j * 8 + 2 * t;
            float *c0 = C + m + (size_t)n * ldc, *c1 = c0 + ldc;
            if (beta == 0.0f) {
                c0[0] = alpha * v[0];
                c1[0] = alpha * v[1];
                c0[8] = alpha * v[2];
                c1[8] = alpha * v[3];
            } else {
                const float o0 = c0[0], o1 = c1[0], o2 = c0[8], o3 = c1[8];
                c0[0] = alpha * v[0] + beta * o0;
                c1[0] = alpha * v[1] + beta * o1;
                c0[8] = alpha * v[2] + beta * o2;
                c1[8] = alpha * v[3] + beta * o3;
            }
        }
}

template <int BM, int BN, int BK, int WM, int WN, int STAGES, int KC, bool MERGED, int SPLIT> struct Gemm {
    using T = Tile<BM, BN, BK, WM, WN, STAGES>;
    static void prepare(cudaFuncAttributes *fa)
    {
        auto f = tf32x3<BM, BN, BK, WM, WN, STAGES, KC, MERGED, SPLIT>;
        CK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, T::SMEM));
        CK(cudaFuncGetAttributes(fa, f));
    }
    // False (nothing launched) when the problem does not meet the kernel's requirements.
    static bool launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb, float beta,
                       float *C, int ldc)
    {
        if (M <= 0 || N <= 0 || K <= 0 || M % BM || N % BN || K % BK || lda % 4 || ldb % 4 || lda < M || ldb < K ||
            ldc < M || (((uintptr_t)A | (uintptr_t)B) & 15))
            return false;
        const unsigned blocks = (unsigned)((M / BM) * (N / BN));
        tf32x3<BM, BN, BK, WM, WN, STAGES, KC, MERGED, SPLIT>
            <<<blocks, T::NT, T::SMEM>>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return true;
    }
};

template <int BM, int BN, int BK, int WM, int WN, int RS, int KC, bool MERGED, int MINB> struct GemmS {
    using S = SplitTile<BM, BN, BK, WM, WN, RS>;
    static_assert(MINB * (S::SMEM + S::SMEM_RESERVED) <= S::SMEM_PER_SM, "MINB blocks must fit in shared memory");
    static void prepare(cudaFuncAttributes *fa)
    {
        auto f = tf32x3s<BM, BN, BK, WM, WN, RS, KC, MERGED, MINB>;
        CK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, S::SMEM));
        CK(cudaFuncGetAttributes(fa, f));
    }
    static bool launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb, float beta,
                       float *C, int ldc)
    {
        if (M <= 0 || N <= 0 || K <= 0 || M % BM || N % BN || K % BK || lda % 4 || ldb % 4 || lda < M || ldb < K ||
            ldc < M || (((uintptr_t)A | (uintptr_t)B) & 15))
            return false;
        const unsigned blocks = (unsigned)((M / BM) * (N / BN));
        tf32x3s<BM, BN, BK, WM, WN, RS, KC, MERGED, MINB>
            <<<blocks, S::NT, S::SMEM>>>(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return true;
    }
};

typedef bool (*launch_fn)(int, int, int, float, const float *, int, const float *, int, float, float *, int);
struct Variant {
    const char *name;
    void (*prepare)(cudaFuncAttributes *);
    launch_fn launch;
    int bm, bn, bk, wm, wn, stages, kc, merged, split;
    const char *same_as; // a variant that must give the same bits (integer split vs cvt.rna), or null
};
#define VARIANT(name, BM, BN, BK, WM, WN, S, KC, MG, SP, SAME)                                                \
    {name, Gemm<BM, BN, BK, WM, WN, S, KC, MG, SP>::prepare, Gemm<BM, BN, BK, WM, WN, S, KC, MG, SP>::launch, BM, \
     BN, BK, WM, WN, S, KC, MG, SP, SAME}
// Split in shared memory (tf32x3s): RS raw stages plus two split buffers; split label SPLIT_RN_SMEM.
#define VARIANT_S(name, BM, BN, BK, WM, WN, RS, KC, MG, MINB)                                                    \
    {name, GemmS<BM, BN, BK, WM, WN, RS, KC, MG, MINB>::prepare, GemmS<BM, BN, BK, WM, WN, RS, KC, MG, MINB>::launch, \
     BM, BN, BK, WM, WN, RS, KC, MG, SPLIT_RN_SMEM, nullptr}

// 128x64 blocks of 8 warps of 32x32: three accumulator sets are 96 registers, room for fragments without spills.
// 128x128 with 64x32 warps reuses fragments better but needs 192 accumulator registers (see the resource table).
// The first six are the accuracy family, split with cvt.rna as specified; the others are about speed.
static const Variant variants[] = {
    VARIANT("3x.kc0", 128, 64, 32, 32, 32, 3, 0, false, SPLIT_RNA, nullptr),
    VARIANT("3x.kc32", 128, 64, 32, 32, 32, 3, 32, false, SPLIT_RNA, nullptr),
    VARIANT("3x.kc128", 128, 64, 32, 32, 32, 3, 128, false, SPLIT_RNA, nullptr),
    VARIANT("3x.kc512", 128, 64, 32, 32, 32, 3, 512, false, SPLIT_RNA, nullptr),
    VARIANT("3xm.kc0", 128, 64, 32, 32, 32, 3, 0, true, SPLIT_RNA, nullptr),
    VARIANT("3xm.kc128", 128, 64, 32, 32, 32, 3, 128, true, SPLIT_RNA, nullptr),
    VARIANT("3x.kc128.int", 128, 64, 32, 32, 32, 3, 128, false, SPLIT_INT, "3x.kc128"),
    VARIANT("3x.kc128.rn", 128, 64, 32, 32, 32, 3, 128, false, SPLIT_RN, nullptr),
    VARIANT("3x.kc128.rn.s4", 128, 64, 32, 32, 32, 4, 128, false, SPLIT_RN, nullptr),
    VARIANT("3xm.kc128.rn", 128, 64, 32, 32, 32, 3, 128, true, SPLIT_RN, nullptr),
    VARIANT("3x.kc128.128x128", 128, 128, 32, 64, 32, 3, 128, false, SPLIT_RNA, nullptr),
    VARIANT("3x.kc128.int.128x128", 128, 128, 32, 64, 32, 3, 128, false, SPLIT_INT, "3x.kc128.128x128"),
    VARIANT("3x.kc128.rn.128x128", 128, 128, 32, 64, 32, 3, 128, false, SPLIT_RN, nullptr),
    VARIANT("3xm.kc128.rn.128x128", 128, 128, 32, 64, 32, 3, 128, true, SPLIT_RN, nullptr),
    // Split once per block into shared memory, fragments loaded ready (128-bit, no cvt). BK 32: 2 raw stages
    // (3 would not fit beside the two split buffers); BK 16: 4 raw stages, a barrier every 16 k.
    VARIANT_S("3xs.kc128.128x128", 128, 128, 32, 64, 32, 2, 128, false, 1),
    VARIANT_S("3xsm.kc128.128x128", 128, 128, 32, 64, 32, 2, 128, true, 1),
    VARIANT_S("3xs.kc128.128x128k16", 128, 128, 16, 64, 32, 4, 128, false, 1),
    VARIANT_S("3xsm.kc128.128x128k16", 128, 128, 16, 64, 32, 4, 128, true, 1),
    // Two blocks (16 warps) per SM: 32x32 warps, merged corrections (64 accumulator registers), <= 128 registers.
    VARIANT_S("3xsm.kc128.128x64k16.2b", 128, 64, 16, 32, 32, 3, 128, true, 2),
};
static const int n_variants = sizeof variants / sizeof variants[0];

// ---------------------------------------------------------------------------------------------------------------
// Harness kernels

enum { GEN_UNIFORM, GEN_WIDE, GEN_INT12, GEN_TERNARY };

// splitmix64 of (seed, i): the same values whatever the launch shape.
__global__ void gen(float *p, size_t n, unsigned long long seed, int kind)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned long long z = seed * 0xD1B54A32D192ED03ull + 0x9E3779B97F4A7C15ull * (i + 1);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        const float u = (float)((z >> 40) * (1.0 / 16777216.0)) * 2.0f - 1.0f; // 24 bits: exact, in [-1, 1)
        const unsigned low = (unsigned)z;                                       // bits not used by u
        float x;
        switch (kind) {
        case GEN_UNIFORM: x = u; break;
        case GEN_WIDE: x = ldexpf(u, (int)(low % 41u) - 20); break;
        case GEN_INT12: x = (float)((int)(low % 8191u) - 4095); break; // up to 12 significant bits: small != 0
        default: x = (float)((int)(low % 3u) - 1); break;
        }
        p[i] = x;
    }
}

__global__ void widen(const float *x, double *y, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        y[i] = x[i];
}

// Per-block partials of max|C-R|, max|R|, sum (C-R)^2, sum R^2, NaNs in C, C != (float)R over the M x N matrices
// (leading dimension ld); the host adds them in block order, so the numbers are reproducible.
enum { ST_MAXD, ST_MAXR, ST_SSD, ST_SSR, ST_NAN, ST_NEQ, ST_N };
static const int ST_BLOCKS = 512, ST_THREADS = 256;
__global__ void __launch_bounds__(ST_THREADS) stats(const float *C, const double *R, int M, int N, int ld, double *part)
{
    double v[ST_N] = {0, 0, 0, 0, 0, 0};
    const size_t mn = (size_t)M * N;
    for (size_t idx = blockIdx.x * (size_t)blockDim.x + threadIdx.x; idx < mn; idx += (size_t)gridDim.x * blockDim.x) {
        const size_t e = idx % M + (idx / M) * (size_t)ld;
        const float c = C[e];
        const double r = R[e];
        if (c != c) {
            v[ST_NAN] += 1;
            v[ST_NEQ] += 1;
            continue;
        }
        const double d = fabs((double)c - r);
        v[ST_MAXD] = fmax(v[ST_MAXD], d);
        v[ST_MAXR] = fmax(v[ST_MAXR], fabs(r));
        v[ST_SSD] += d * d;
        v[ST_SSR] += r * r;
        v[ST_NEQ] += c != (float)r;
    }
    __shared__ double sh[ST_N][ST_THREADS];
    for (int k = 0; k < ST_N; ++k) sh[k][threadIdx.x] = v[k];
    __syncthreads();
    for (int s = ST_THREADS / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s)
            for (int k = 0; k < ST_N; ++k) {
                const double a = sh[k][threadIdx.x], b = sh[k][threadIdx.x + s];
                sh[k][threadIdx.x] = k == ST_MAXD || k == ST_MAXR ? fmax(a, b) : a + b;
            }
        __syncthreads();
    }
    if (threadIdx.x < ST_N) part[blockIdx.x * ST_N + threadIdx.x] = sh[threadIdx.x][0];
}

__global__ void count_diff(const unsigned *x, const unsigned *y, size_t n, unsigned long long *count)
{
    unsigned long long c = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        c += x[i] != y[i];
    if (c) atomicAdd(count, c);
}

// ---------------------------------------------------------------------------------------------------------------
// Host side

struct Stats {
    double maxrel, normrel;
    unsigned long long nans, neq;
};

static double *d_part;

static Stats compare(const float *C, const double *R, int M, int N, int ld)
{
    stats<<<ST_BLOCKS, ST_THREADS>>>(C, R, M, N, ld, d_part);
    CK(cudaGetLastError());
    std::vector<double> p((size_t)ST_BLOCKS * ST_N);
    CK(cudaMemcpy(p.data(), d_part, sizeof(double) * p.size(), cudaMemcpyDeviceToHost));
    double v[ST_N] = {0, 0, 0, 0, 0, 0};
    for (int b = 0; b < ST_BLOCKS; ++b)
        for (int k = 0; k < ST_N; ++k) {
            const double x = p[(size_t)b * ST_N + k];
            v[k] = k == ST_MAXD || k == ST_MAXR ? std::max(v[k], x) : v[k] + x;
        }
    Stats s;
    s.maxrel = v[ST_MAXR] > 0 ? v[ST_MAXD] / v[ST_MAXR] : v[ST_MAXD];
    s.normrel = v[ST_SSR] > 0 ? sqrt(v[ST_SSD] / v[ST_SSR]) : sqrt(v[ST_SSD]);
    s.nans = (unsigned long long)v[ST_NAN];
    s.neq = (unsigned long long)v[ST_NEQ];
    return s;
}

static unsigned long long *d_count;

static unsigned long long differing_words(const float *x, const float *y, size_t n)
{
    CK(cudaMemset(d_count, 0, sizeof *d_count));
    count_diff<<<1024, 256>>>((const unsigned *)x, (const unsigned *)y, n, d_count);
    CK(cudaGetLastError());
    unsigned long long c;
    CK(cudaMemcpy(&c, d_count, sizeof c, cudaMemcpyDeviceToHost));
    return c;
}

static void generate(float *p, size_t n, unsigned long long seed, int kind)
{
    gen<<<2048, 256>>>(p, n, seed, kind);
    CK(cudaGetLastError());
}

static double *to_double(const float *x, size_t n)
{
    double *y;
    CK(cudaMalloc(&y, sizeof(double) * n));
    widen<<<2048, 256>>>(x, y, n);
    CK(cudaGetLastError());
    return y;
}

// A method: computes C = alpha*A*B + beta*C like cublasSgemm nn; false when it refuses the problem.
typedef std::function<bool(int, int, int, float, const float *, int, const float *, int, float, float *, int)> Gemmfn;
struct Method {
    std::string name;
    Gemmfn run;
    bool exact_capable;  // is exact on the integer checks (TF32 cuBLAS rounds its inputs: not)
    std::string same_as; // must match that method's output bit for bit on the checks
};

static float median(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5f * (v[n / 2 - 1] + v[n / 2]);
}

struct Result {
    int shape, inputs, method;
    float ms;
    Stats st;
    bool same;
};

int main(int argc, char **argv)
{
    std::vector<int> shapes;
    for (int i = 1; i < argc; ++i) shapes.push_back(atoi(argv[i]));
    if (shapes.empty()) shapes = {2048, 2048, 2048, 4096, 4096, 4096, 8192, 8192, 8192};
    if (shapes.size() % 3) {
        fprintf(stderr, "usage: %s [M N K ...]   (env INPUTS=uniform|wide|both)\n", argv[0]);
        return 2;
    }
    const char *inputs_env = getenv("INPUTS");
    const std::string inputs_sel = inputs_env ? inputs_env : "both";
    std::vector<int> input_kinds;
    if (inputs_sel == "uniform" || inputs_sel == "both") input_kinds.push_back(GEN_UNIFORM);
    if (inputs_sel == "wide" || inputs_sel == "both") input_kinds.push_back(GEN_WIDE);
    if (input_kinds.empty()) {
        fprintf(stderr, "INPUTS must be uniform, wide or both, not '%s'\n", inputs_sel.c_str());
        return 2;
    }
    const char *input_names[] = {"uniform", "wide"};

    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("device %s, sm_%d%d, %d SMs, L2 %d MB\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount,
           prop.l2CacheSize >> 20);
    CK(cudaMalloc(&d_part, sizeof(double) * ST_BLOCKS * ST_N));
    CK(cudaMalloc(&d_count, sizeof *d_count));
    const size_t flush_bytes = (size_t)256 << 20;
    void *flush;
    CK(cudaMalloc(&flush, flush_bytes));

    cublasHandle_t hp, ht; // pedantic FP32 (also the DGEMM reference); TF32 tensor cores
    CB(cublasCreate(&hp));
    CB(cublasSetMathMode(hp, CUBLAS_PEDANTIC_MATH));
    CB(cublasCreate(&ht));
    CB(cublasSetMathMode(ht, CUBLAS_DEFAULT_MATH));

    std::vector<Method> methods;
    methods.push_back({"sgemm", [&](int M, int N, int K, float al, const float *A, int lda, const float *B, int ldb,
                                    float be, float *C, int ldc) {
                           CB(cublasSgemm(hp, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &al, A, lda, B, ldb, &be, C, ldc));
                           return true;
                       },
                       true, ""});
    methods.push_back({"cublas.tf32", [&](int M, int N, int K, float al, const float *A, int lda, const float *B,
                                          int ldb, float be, float *C, int ldc) {
                           CB(cublasGemmEx(ht, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &al, A, CUDA_R_32F, lda, B,
                                           CUDA_R_32F, ldb, &be, C, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F_FAST_TF32,
                                           CUBLAS_GEMM_DEFAULT));
                           return true;
                       },
                       false, ""});
    printf("\n%-22s %5s %6s %9s %7s %13s %6s %3s %5s %s\n", "variant", "regs", "local", "smem", "threads", "block",
           "warp", "stg", "KC", "split");
    for (int v = 0; v < n_variants; ++v) {
        const Variant &x = variants[v];
        cudaFuncAttributes fa;
        x.prepare(&fa);
        static const char *split_names[] = {"rna", "rn", "int", "rn.smem"};
        printf("%-22s %5d %6zu %9zu %7d %4dx%3dx%3d %3dx%2d %3d %5d %s%s\n", x.name, fa.numRegs, fa.localSizeBytes,
               fa.maxDynamicSharedSizeBytes + fa.sharedSizeBytes, (x.bm / x.wm) * (x.bn / x.wn) * 32, x.bm, x.bn,
               x.bk, x.wm, x.wn, x.stages, x.kc, split_names[x.split], x.merged ? " merged" : "");
        if (fa.localSizeBytes)
            fprintf(stderr, "note: %s uses %zu bytes of local memory (spills)\n", x.name, fa.localSizeBytes);
        const launch_fn f = x.launch;
        methods.push_back({x.name,
                           [f](int M, int N, int K, float al, const float *A, int lda, const float *B, int ldb,
                               float be, float *C, int ldc) { return f(M, N, K, al, A, lda, B, ldb, be, C, ldc); },
                           true, x.same_as ? x.same_as : ""});
    }
    int failures = 0;

    // Small checks: an odd shape with padded leading dimensions (lda, ldb multiples of 4 for cp.async), alpha and
    // beta over a random C, K = 33 tiles of 32 so that every KC > 32 ends on a partial chunk. "uniform", "wide":
    // the benchmark's data, error against DGEMM must be near FP32's. "intA"/"intB": one operand integers up to
    // 4095 (small parts not zero), the other in {-1, 0, 1}, C integers: every partial sum is an integer below
    // 2^23, so any correct method is exact, whatever the accumulation rounds; a mismatch count above 0 is a bug.
    // Variants with same_as must match that variant bit for bit on every check.
    {
        const int M = 256, N = 384, K = 1056, lda = M + 8, ldb = K + 4, ldc = M + 4;
        const float alpha = 1.5f, beta = 0.5f;
        const double alpha_d = alpha, beta_d = beta;
        const size_t na = (size_t)lda * K, nb = (size_t)ldb * N, nc = (size_t)ldc * N;
        float *A, *B, *C0, *C;
        double *Rd;
        CK(cudaMalloc(&A, sizeof(float) * na));
        CK(cudaMalloc(&B, sizeof(float) * nb));
        CK(cudaMalloc(&C0, sizeof(float) * nc));
        CK(cudaMalloc(&C, sizeof(float) * nc));
        CK(cudaMalloc(&Rd, sizeof(double) * nc));
        printf("\nchecks %dx%dx%d lda %d ldb %d ldc %d alpha %g beta %g\n", M, N, K, lda, ldb, ldc, alpha, beta);
        printf("%-7s %-21s %9s %9s %9s %6s %s\n", "check", "method", "maxrel", "normrel", "mismatch", "NaNs",
               "verdict");
        const char *test_names[] = {"uniform", "wide", "intA", "intB"};
        const int kinds[4][3] = {{GEN_UNIFORM, GEN_UNIFORM, GEN_UNIFORM},
                                 {GEN_WIDE, GEN_WIDE, GEN_WIDE},
                                 {GEN_INT12, GEN_TERNARY, GEN_INT12},
                                 {GEN_TERNARY, GEN_INT12, GEN_INT12}};
        std::vector<std::vector<float>> outs(methods.size());
        for (int test = 0; test < 4; ++test) {
            const bool exact = test >= 2;
            generate(A, na, 11, kinds[test][0]);
            generate(B, nb, 12, kinds[test][1]);
            generate(C0, nc, 13, kinds[test][2]);
            double *Ad = to_double(A, na), *Bd = to_double(B, nb), *Cd = to_double(C0, nc);
            CB(cublasDgemm(hp, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &alpha_d, Ad, lda, Bd, ldb, &beta_d, Cd, ldc));
            CK(cudaMemcpy(Rd, Cd, sizeof(double) * nc, cudaMemcpyDeviceToDevice));
            cudaFree(Ad), cudaFree(Bd), cudaFree(Cd);
            for (size_t mi = 0; mi < methods.size(); ++mi) {
                const Method &me = methods[mi];
                outs[mi].clear();
                if (exact && !me.exact_capable) continue;
                CK(cudaMemcpy(C, C0, sizeof(float) * nc, cudaMemcpyDeviceToDevice));
                if (!me.run(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)) {
                    fprintf(stderr, "FAIL: %s refused the check shape\n", me.name.c_str());
                    ++failures;
                    continue;
                }
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
                const Stats s = compare(C, Rd, M, N, ldc);
                outs[mi].resize(nc);
                CK(cudaMemcpy(outs[mi].data(), C, sizeof(float) * nc, cudaMemcpyDeviceToHost));
                // TF32 cuBLAS is there for calibration only (its error is about 1e-3).
                const bool info = !me.exact_capable;
                const bool ok = exact ? s.neq == 0 : s.maxrel < 1e-4 && s.nans == 0;
                printf("%-7s %-21s %9.2e %9.2e %9llu %6llu %s\n", test_names[test], me.name.c_str(), s.maxrel,
                       s.normrel, s.neq, s.nans, info ? "(info)" : ok ? "ok" : "FAIL");
                if (!ok && !info) {
                    fprintf(stderr, "FAIL: check %s, %s: maxrel %.3e, %llu mismatches, %llu NaNs\n",
                            test_names[test], me.name.c_str(), s.maxrel, s.neq, s.nans);
                    ++failures;
                }
            }
            for (size_t mi = 0; mi < methods.size(); ++mi) {
                if (methods[mi].same_as.empty() || outs[mi].empty()) continue;
                size_t other = 0;
                while (other < methods.size() && methods[other].name != methods[mi].same_as) ++other;
                const bool same = other < methods.size() && outs[other].size() == nc &&
                                  !memcmp(outs[mi].data(), outs[other].data(), sizeof(float) * nc);
                printf("%-7s %-21s bitwise %s %s\n", test_names[test], methods[mi].name.c_str(),
                       same ? "same as" : "DIFFERS from", methods[mi].same_as.c_str());
                if (!same) {
                    fprintf(stderr, "FAIL: check %s, %s differs from %s\n", test_names[test],
                            methods[mi].name.c_str(), methods[mi].same_as.c_str());
                    ++failures;
                }
            }
        }
        fflush(stdout);
        cudaFree(A), cudaFree(B), cudaFree(C0), cudaFree(C), cudaFree(Rd);
    }

    // Benchmarks: alpha 1, beta 0 over a NaN-poisoned C.
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<Result> results;
    printf("\nratio = SGEMM time / method time (> 1: faster than SGEMM); errors against DGEMM on the same inputs\n");
    printf("%-16s %-7s %-21s %9s %7s %6s %9s %9s %-7s %s\n", "shape", "inputs", "method", "ms", "TFLOPS", "ratio",
           "maxrel", "normrel", "bitwise", "NaNs");
    for (size_t si = 0; si < shapes.size(); si += 3) {
        const int M = shapes[si], N = shapes[si + 1], K = shapes[si + 2];
        char shape[48];
        snprintf(shape, sizeof shape, "%dx%dx%d", M, N, K);
        const size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
        float *A, *B, *C1, *C2;
        double *Rd;
        CK(cudaMalloc(&A, sizeof(float) * na));
        CK(cudaMalloc(&B, sizeof(float) * nb));
        CK(cudaMalloc(&C1, sizeof(float) * nc));
        CK(cudaMalloc(&C2, sizeof(float) * nc));
        CK(cudaMalloc(&Rd, sizeof(double) * nc));
        const double fl = 2.0 * M * N * K * 1e-9;
        for (int kind : input_kinds) {
            generate(A, na, 1, kind);
            generate(B, nb, 2, kind);
            {
                double *Ad = to_double(A, na), *Bd = to_double(B, nb);
                const double one = 1, zero = 0;
                CB(cublasDgemm(hp, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, Ad, M, Bd, K, &zero, Rd, M));
                CK(cudaDeviceSynchronize());
                cudaFree(Ad), cudaFree(Bd);
            }
            float ms_sgemm = 0;
            for (int mi = 0; mi < (int)methods.size(); ++mi) {
                const Method &me = methods[mi];
                auto run = [&](float *C) { return me.run(M, N, K, 1.0f, A, M, B, K, 0.0f, C, M); };
                CK(cudaMemset(C1, 0xFF, sizeof(float) * nc)); // NaN: beta = 0 must not read C
                if (!run(C1)) { // not a multiple of its tile: a skip, not a failure
                    printf("%-16s %-7s %-21s refused (shape not a multiple of the block tile)\n", shape,
                           input_names[kind], me.name.c_str());
                    continue;
                }
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
                const Stats s = compare(C1, Rd, M, N, M);
                CK(cudaMemset(C2, 0xFF, sizeof(float) * nc));
                run(C2);
                CK(cudaGetLastError());
                const bool same = differing_words(C1, C2, nc) == 0;
                for (int i = 0; i < 3; ++i) run(C1);
                std::vector<float> t;
                for (int i = 0; i < 20; ++i) {
                    CK(cudaMemsetAsync(flush, i, flush_bytes));
                    CK(cudaEventRecord(e0));
                    run(C1);
                    CK(cudaEventRecord(e1));
                    CK(cudaEventSynchronize(e1));
                    float ms;
                    CK(cudaEventElapsedTime(&ms, e0, e1));
                    t.push_back(ms);
                }
                CK(cudaGetLastError());
                const float ms = median(t);
                if (mi == 0) ms_sgemm = ms;
                printf("%-16s %-7s %-21s %9.3f %7.2f %6.3f %9.2e %9.2e %-7s %llu\n", shape, input_names[kind],
                       me.name.c_str(), ms, fl / ms, ms_sgemm / ms, s.maxrel, s.normrel, same ? "same" : "DIFFER",
                       s.nans);
                fflush(stdout);
                if (s.nans || !same) {
                    fprintf(stderr, "FAIL: %s %s %s: %llu NaNs, bitwise %s\n", shape, input_names[kind],
                            me.name.c_str(), s.nans, same ? "same" : "DIFFER");
                    ++failures;
                }
                results.push_back({(int)(si / 3), kind, mi, ms, s, same});
            }
        }
        cudaFree(A), cudaFree(B), cudaFree(C1), cudaFree(C2), cudaFree(Rd);
    }

    // Summary: per method and shape, speed against SGEMM and max relative error for each input kind.
    printf("\nsummary: ratio vs SGEMM (uniform inputs, else wide) | maxrel uniform | maxrel wide\n%-21s", "method");
    for (size_t si = 0; si < shapes.size(); si += 3) {
        char shape[48];
        snprintf(shape, sizeof shape, "%dx%dx%d", shapes[si], shapes[si + 1], shapes[si + 2]);
        printf(" %26s", shape);
    }
    printf("\n");
    for (int mi = 0; mi < (int)methods.size(); ++mi) {
        printf("%-21s", methods[mi].name.c_str());
        for (int sh = 0; sh < (int)shapes.size() / 3; ++sh) {
            const Result *r[2] = {nullptr, nullptr};
            const Result *sg = nullptr;
            for (const Result &x : results)
                if (x.shape == sh && x.method == mi) r[x.inputs] = &x;
            const int timed = r[GEN_UNIFORM] ? GEN_UNIFORM : GEN_WIDE;
            for (const Result &x : results)
                if (x.shape == sh && x.method == 0 && x.inputs == timed) sg = &x;
            char col[64], u[16] = "-", w[16] = "-", ratio[16] = "-";
            if (r[timed] && sg) snprintf(ratio, sizeof ratio, "%.2f", sg->ms / r[timed]->ms);
            if (r[GEN_UNIFORM]) snprintf(u, sizeof u, "%.1e", r[GEN_UNIFORM]->st.maxrel);
            if (r[GEN_WIDE]) snprintf(w, sizeof w, "%.1e", r[GEN_WIDE]->st.maxrel);
            snprintf(col, sizeof col, "%s %s %s", ratio, u, w);
            printf(" %26s", col);
        }
        printf("\n");
    }
    if (failures) {
        fprintf(stderr, "tf32x3: %d failures\n", failures);
        return 1;
    }
    printf("all checks passed\n");
    return 0;
}
