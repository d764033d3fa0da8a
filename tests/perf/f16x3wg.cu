// A study, not a family: 3xFP16 on Hopper's warpgroup tensor cores, tf32x3wg's scheme (templates/tf32x3wg.cu) with
// FP16 parts. FP16 has TF32's 11 significant bits, twice its tensor-core rate and half its bytes in shared memory.
// FP16's range is narrow, so every row of op(A) and column of op(B) is first scaled by a power of two that puts its
// largest magnitude in [2^13, 2^14) (gt_amax_* find the maxima; the scaling is exact), split as x = big + small
// (each FP16), and C gets the two scales back in the epilogue (ldexpf, exact). Products, folds and accumulators as
// tf32x3wg's. ws: the maxima as FP32 bits, M of op(A)'s rows then N of op(B)'s columns (zeroed before gt_amax_*).
// Measured (docs/BENCHMARKS.md, "2026-11-27 (third session)"): exact everywhere, no faster than tf32x3wg (the
// halved tensor and shared-memory cost bought nothing, so neither binds tf32x3wg), and on wide inputs at a short K
// an element 2^27 below its row's largest underflows FP16: 70x SGEMM's error at 1024 x 1024 x 64. Not pursued.
//   BUILD_PERF=build-perf bash tests/perf/wgmma.sh build 'h128:-DTEMPLATE="f16x3wg.cu" -DBN=128 -DSTAGES=3 -DPF=0'
#include "common.cuh"
#include "epilogue.cuh"
#include "raster.cuh"
#include "wgmma.cuh"

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#define GT_NEEDS_AMAX 1 // the harness runs gt_amax_* into ws first (tests/perf/wgmma.cu)
#define BK 64 // k-values a stage: 128-byte rows of FP16, the 128-byte swizzle
#ifndef STAGES
#define STAGES 3
#endif
#ifndef KC
#define KC 128
#endif
#ifndef PF
#define PF 0
#endif
#ifndef MINB
#define MINB 1
#endif
#define RASTER 8

#define NT (BM / 64 * 128)
#define NACC (BN / 2)
#define PEND (STAGES - 2)
#define SWIZZLE 1
#define A_BYTES (BM * BK * 2)
#define B_BYTES (BN * BK * 2)
#define STAGE_BYTES (2 * A_BYTES + 2 * B_BYTES)
#define SMEM_BYTES (STAGES * STAGE_BYTES + 1024)
#define ITEMS_A (BM * BK / 8 / NT) // an item: 8 k-values of one row, one 16-byte slot of a part's tile
#define ITEMS_B (BN * BK / 8 / NT)

static_assert(BM % 64 == 0 && BM >= 64 && BM <= 256, "BM");
static_assert(BN == 64 || BN == 96 || BN == 128, "BN");
static_assert(KC % BK == 0, "KC");
static_assert((BM * BK / 8) % NT == 0 && (BN * BK / 8) % NT == 0, "items");

#define QW 8
template <int R, bool KCONTIG> struct Map {
    static constexpr int W = NT / 32, Q = BK / 8;
    static constexpr int RW = 32 / QW, PER = R / RW / W;
    static_assert(!KCONTIG || (R / RW) % W == 0, "KCONTIG rows");
    static_assert(KCONTIG || R % 32 == 0, "rows");
    static_assert(KCONTIG || W % Q == 0 || Q % W == 0, "warps and slots");
    static __device__ __forceinline__ void origin(int tid, int &r0, int &q0)
    {
        const int w = tid / 32, l = tid % 32;
        if (KCONTIG) r0 = l % RW + RW * w, q0 = l / RW ^ (l % RW ^ 2 * (l % RW));
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

template <int R> __device__ __forceinline__ unsigned tile_off(int r, int q) { return gt_wg_off<R, true>(r, q); }
template <int R> __device__ __forceinline__ unsigned long long tile_desc(unsigned base, int row0, int ks)
{
    return gt_wg_desc<R, true>(base, row0, ks);
}

__device__ __forceinline__ int opaque(int x)
{
    asm volatile("" : "+r"(x));
    return x;
}

// The power of two that scales a row whose largest magnitude has FP32 bits m into [2^13, 2^14), as an exponent.
__device__ __forceinline__ int scale_exp(unsigned m)
{
    const int e = (int)(m >> 23 & 0xff) - 127; // 128 for Inf/NaN: the row's results are NaN in any case
    return max(-126, min(127, 13 - e));
}

template <int R, bool KCONTIG>
__device__ __forceinline__ const float *feed0(const float *X, int ld, int d0)
{
    int r0, q0;
    Map<R, KCONTIG>::origin(gt_thread_id(), r0, q0);
    return KCONTIG ? X + (size_t)(d0 + r0) * ld + 8 * q0 : X + (size_t)(8 * q0) * ld + d0 + r0;
}

template <int R, bool KCONTIG, bool FULL, int ITEMS>
__device__ __forceinline__ void fetch(float (&x)[ITEMS][8], const float *p0, int ld, int t, int d0, int dn, int kn,
                                      bool vec)
{
    using Mp = Map<R, KCONTIG>;
    ld = opaque(ld);
    const float *p = KCONTIG ? p0 + t * BK : p0 + (ptrdiff_t)(t * BK) * ld;
    int r0 = 0, q0 = 0;
    if (!FULL) Mp::origin(gt_thread_id(), r0, q0);
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const int d = d0 + r0 + Mp::DR(i), k = t * BK + 8 * (q0 + Mp::DQ(i));
        if (KCONTIG) {
            const float *pi = p + (ptrdiff_t)Mp::DR(i) * ld + 8 * Mp::DQ(i);
            if (FULL || (vec && d < dn && k + 7 < kn)) {
                const float4 v = __ldg((const float4 *)pi), w = __ldg((const float4 *)pi + 1);
                x[i][0] = v.x, x[i][1] = v.y, x[i][2] = v.z, x[i][3] = v.w;
                x[i][4] = w.x, x[i][5] = w.y, x[i][6] = w.z, x[i][7] = w.w;
            } else {
#pragma unroll
                for (int e = 0; e < 8; ++e) x[i][e] = d < dn && k + e < kn ? __ldg(pi + e) : 0.0f;
            }
        } else {
#pragma unroll
            for (int e = 0; e < 8; ++e) {
                const float *pe = p + (ptrdiff_t)(8 * Mp::DQ(i) + e) * ld + Mp::DR(i);
                x[i][e] = FULL || (d < dn && k + e < kn) ? __ldg(pe) : 0.0f;
            }
        }
    }
}

// x0, x1 scaled by 2^s, split into FP16 pairs: big holds (x0 low, x1 high) rounded, small the rounded rests.
__device__ __forceinline__ void split2(float x0, float x1, int s, unsigned &big, unsigned &small)
{
    x0 = ldexpf(x0, s), x1 = ldexpf(x1, s);
    float b0, b1;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(big) : "f"(x1), "f"(x0));
    asm("{\n.reg .b16 l, h;\nmov.b32 {l, h}, %2;\ncvt.f32.f16 %0, l;\ncvt.f32.f16 %1, h;\n}\n"
        : "=f"(b0), "=f"(b1)
        : "r"(big));
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(small) : "f"(x1 - b1), "f"(x0 - b0));
}

// maxima: the operand's row maxima from row d0 on (dn rows in all); read again each tile (L1), not held.
template <int R, bool KCONTIG, int ITEMS>
__device__ __forceinline__ void put(unsigned big, unsigned small, const float (&x)[ITEMS][8], const unsigned *maxima,
                                    int d0, int dn)
{
    using Mp = Map<R, KCONTIG>;
    int r0, q0;
    Mp::origin(gt_thread_id(), r0, q0);
    int s[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const int d = d0 + r0 + Mp::DR(i);
        s[i] = scale_exp(d < dn ? __ldg(maxima + d) : 0u);
    }
#pragma unroll
    for (int i = 0; i < ITEMS; ++i) {
        const unsigned off = tile_off<R>(r0 + Mp::DR(i), q0 + Mp::DQ(i));
        unsigned b[4], m[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) split2(x[i][2 * e], x[i][2 * e + 1], s[i], b[e], m[e]);
        asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(big + off), "r"(b[0]), "r"(b[1]), "r"(b[2]),
                     "r"(b[3])
                     : "memory");
        asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(small + off), "r"(m[0]), "r"(m[1]),
                     "r"(m[2]), "r"(m[3])
                     : "memory");
    }
}

struct Operands {
    const float *pa, *pb;
    int lda, ldb, M, N, K, bm0, bn0;
    bool va, vb, interior;
    const unsigned *maxima; // ws: op(A)'s row maxima, then op(B)'s column maxima
};

__device__ __forceinline__ bool full_tile(const Operands &o, int t)
{
    return o.interior && (t + 1) * BK <= o.K && (GT_TA || o.va) && (!GT_TB || o.vb);
}
__device__ __forceinline__ void fetch_a(float (&x)[ITEMS_A][8], const Operands &o, int t)
{
    if (full_tile(o, t)) fetch<BM, !GT_TA, true>(x, o.pa, o.lda, t, o.bm0, o.M, o.K, true);
    else fetch<BM, !GT_TA, false>(x, o.pa, o.lda, t, o.bm0, o.M, o.K, o.va);
}
__device__ __forceinline__ void fetch_b(float (&x)[ITEMS_B][8], const Operands &o, int t)
{
    if (full_tile(o, t)) fetch<BN, (bool)GT_TB, true>(x, o.pb, o.ldb, t, o.bn0, o.N, o.K, true);
    else fetch<BN, (bool)GT_TB, false>(x, o.pb, o.ldb, t, o.bn0, o.N, o.K, o.vb);
}
__device__ __forceinline__ void put_a(unsigned stage, const float (&x)[ITEMS_A][8], const Operands &o)
{
    put<BM, !GT_TA>(stage, stage + A_BYTES, x, o.maxima, o.bm0, o.M);
}
__device__ __forceinline__ void put_b(unsigned stage, const float (&x)[ITEMS_B][8], const Operands &o)
{
    put<BN, (bool)GT_TB>(stage + 2 * A_BYTES, stage + 2 * A_BYTES + B_BYTES, x, o.maxima + o.M, o.bn0, o.N);
}
__device__ __forceinline__ void load_tile(unsigned stage, const Operands &o, int t)
{
    {
        float x[ITEMS_A][8];
        fetch_a(x, o, t);
        put_a(stage, x, o);
    }
    float y[ITEMS_B][8];
    fetch_b(y, o, t);
    put_b(stage, y, o);
}

#define GT_F4_(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define GT_F16_(i) GT_F4_(i), GT_F4_(i + 4), GT_F4_(i + 8), GT_F4_(i + 12)
template <int N>
__device__ __forceinline__ void wgmma_f16(float (&d)[N / 2], unsigned long long da, unsigned long long db, int add)
{
    if constexpr (N == 64)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
                     "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
                     "%32, %33, p, 1, 1, 0, 0;\n}\n"
                     : GT_F16_(0), GT_F16_(16)
                     : "l"(da), "l"(db), "r"(add));
    else if constexpr (N == 96)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %50, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n96k16.f32.f16.f16 "
                     "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                     "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47}, "
                     "%48, %49, p, 1, 1, 0, 0;\n}\n"
                     : GT_F16_(0), GT_F16_(16), GT_F16_(32)
                     : "l"(da), "l"(db), "r"(add));
    else
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
                     "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                     "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                     "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
                     "%64, %65, p, 1, 1, 0, 0;\n}\n"
                     : GT_F16_(0), GT_F16_(16), GT_F16_(32), GT_F16_(48)
                     : "l"(da), "l"(db), "r"(add));
}
#undef GT_F4_
#undef GT_F16_

__device__ __forceinline__ void mma_stage(float (&chunk)[NACC], float (&corr)[NACC], unsigned stage, int add)
{
    const int row0 = gt_thread_id() / 128 * 64;
    const unsigned b = stage + 2 * A_BYTES;
    gt_wg_fence();
#pragma unroll
    for (int ks = 0; ks < BK / 16; ++ks) {
        const unsigned long long a_big = tile_desc<BM>(stage, row0, ks);
        const unsigned long long a_small = tile_desc<BM>(stage + A_BYTES, row0, ks);
        const unsigned long long b_big = tile_desc<BN>(b, 0, ks), b_small = tile_desc<BN>(b + B_BYTES, 0, ks);
        wgmma_f16<BN>(corr, a_big, b_small, ks > 0 || add);
        wgmma_f16<BN>(corr, a_small, b_big, 1);
        wgmma_f16<BN>(chunk, a_big, b_big, ks > 0 || add);
    }
    gt_wg_commit();
}

#if PF
struct Next {
    float a[ITEMS_A][8], b[ITEMS_B][8];
};
#endif

__device__ __forceinline__ void mac_tile(float (&acc)[NACC], const Operands &o, unsigned sbase)
{
    float chunk[NACC], corr[NACC];
#pragma unroll
    for (int i = 0; i < NACC; ++i) acc[i] = chunk[i] = corr[i] = 0.0f;
    const int ntiles = (o.K + BK - 1) / BK;
#if PF
    Next n;
    fetch_a(n.a, o, 0), fetch_b(n.b, o, 0);
    put_a(sbase, n.a, o), put_b(sbase, n.b, o);
    if (ntiles > 1) fetch_a(n.a, o, 1), fetch_b(n.b, o, 1);
#else
    load_tile(sbase, o, 0);
#endif
    gt_proxy_fence();
    __syncthreads();
    for (int t = 0; t < ntiles; ++t) {
        mma_stage(chunk, corr, sbase + t % STAGES * STAGE_BYTES, t % (KC / BK));
        const unsigned next = sbase + (t + 1) % STAGES * STAGE_BYTES;
#if PF
        if (t + 1 < ntiles) put_a(next, n.a, o), put_b(next, n.b, o);
        if (t + 2 < ntiles) fetch_a(n.a, o, t + 2), fetch_b(n.b, o, t + 2);
#else
        if (t + 1 < ntiles) load_tile(next, o, t + 1);
#endif
        if ((t + 1) % (KC / BK) == 0 || t + 1 == ntiles) {
            gt_wg_wait<0>();
#pragma unroll
            for (int i = 0; i < NACC; ++i) acc[i] += chunk[i] + corr[i];
        } else {
            gt_wg_wait<PEND>();
        }
        gt_proxy_fence();
        __syncthreads();
    }
    gt_wg_wait<0>();
}

__device__ __forceinline__ void store_tile(const float (&acc)[NACC], int M, int N, float *__restrict__ C, int ldc,
                                           const unsigned *maxima, float alpha, float beta)
{
    int bm0, bn0;
    gt_tile_origin<BM, BN, RASTER>(gt_block_id(), M, N, &bm0, &bn0);
    const int tid = gt_thread_id(), lane = tid % 32;
    const bool vc = GT_VEC_OK(2, C, ldc);
    const int i0 = bm0 + tid / 32 * 16 + lane / 4, j0 = bn0 + lane % 4 * 2;
    const int st = -scale_exp(i0 < M ? maxima[i0] : 0u), sb = -scale_exp(i0 + 8 < M ? maxima[i0 + 8] : 0u);
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
        const int c = j0 + 8 * j;
        const int u0 = -scale_exp(c < N ? maxima[M + c] : 0u), u1 = -scale_exp(c + 1 < N ? maxima[M + c + 1] : 0u);
        const float top[2] = {ldexpf(acc[4 * j], st + u0), ldexpf(acc[4 * j + 1], st + u1)};
        gt_store<2, GT_EPI_FMA>(M, N, C, ldc, nullptr, i0, c, top, alpha, beta, vc);
        const float bottom[2] = {ldexpf(acc[4 * j + 2], sb + u0), ldexpf(acc[4 * j + 3], sb + u1)};
        gt_store<2, GT_EPI_FMA>(M, N, C, ldc, nullptr, i0 + 8, c, bottom, alpha, beta, vc);
    }
}

extern "C" __global__ void __launch_bounds__(NT, MINB) gt_gemm(GT_GEMM_ARGS)
{
    GT_BATCH_OFFSET();
    extern __shared__ float4 smem4[];
    const unsigned *maxima = (const unsigned *)ws;
    Operands o;
    o.lda = lda, o.ldb = ldb, o.M = M, o.N = N, o.K = K;
    gt_tile_origin<BM, BN, RASTER>(blockIdx.x, M, N, &o.bm0, &o.bn0);
    o.pa = feed0<BM, !GT_TA>(A, lda, o.bm0);
    o.pb = feed0<BN, (bool)GT_TB>(B, ldb, o.bn0);
    o.va = GT_VEC_OK(4, A, lda);
    o.vb = GT_VEC_OK(4, B, ldb);
    o.interior = o.bm0 + BM <= M && o.bn0 + BN <= N;
    o.maxima = maxima;
    float acc[NACC];
    const unsigned raw = (unsigned)__cvta_generic_to_shared(smem4);
    mac_tile(acc, o, (raw + 1023) & ~1023u);
    store_tile(acc, M, N, C, ldc, maxima, alpha, beta);
}

// The largest magnitude of each of `rows` rows (as FP32 bits, atomicMax into out, zeroed first) of a matrix whose
// element (r, c) is X[r * ld + c] (gt_amax_rowc: a warp per row, 1024 columns a block row) or X[c * ld + r]
// (gt_amax_colc: a thread per row, 64 columns a grid row).
extern "C" __global__ void __launch_bounds__(256) gt_amax_rowc(const float *__restrict__ X, int ld, int rows, int cols,
                                                               unsigned *__restrict__ out)
{
    const int r = blockIdx.x * 8 + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (r >= rows) return;
    unsigned m = 0;
    const int c0 = blockIdx.y * 1024;
    for (int c = c0 + lane; c < min(cols, c0 + 1024); c += 32) m = max(m, __float_as_uint(X[(size_t)r * ld + c]) & 0x7fffffffu);
    m = __reduce_max_sync(0xffffffffu, m);
    if (lane == 0) atomicMax(out + r, m);
}
extern "C" __global__ void __launch_bounds__(256) gt_amax_colc(const float *__restrict__ X, int ld, int rows, int cols,
                                                               unsigned *__restrict__ out)
{
    const int r = blockIdx.x * 256 + threadIdx.x;
    if (r >= rows) return;
    unsigned m = 0;
    const int c0 = blockIdx.y * 64;
    for (int c = c0; c < min(cols, c0 + 64); ++c) m = max(m, __float_as_uint(X[(size_t)c * ld + r]) & 0x7fffffffu);
    atomicMax(out + r, m);
}
