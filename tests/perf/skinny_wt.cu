// Study (issue 28): a skinny FP32 GEMM tiled like a square one. The compute-bound skinny shapes (M or N 33-64, the
// others large) run the FMA pipe at 58-62% in families skinny and multistage (ncu, docs/BENCHMARKS.md, twenty-seventh
// session): skinny's lane holds all rows for 2-4 columns and reads X for every 2-4 FMAs (75% of its instructions
// FFMA), multistage's tiles pad the rows to 64. Here a thread holds R rows by TN columns (13 x 8 for 50 rows: a
// warp of RT = 4 row groups covers 52 rows), fragments double-buffered in registers; X and Y come through
// shared-memory rings of cp.async copies (X transposed on the way, 4 bytes a copy, so that a k's R rows of a
// group are 16-byte reads); the block's WK warp groups each take a part of the block's slice of K with a ring and a
// named barrier of their own, and add their sums in shared memory in group order; slices of K meet in a workspace,
// added in slice order by a second kernel. Row-major, as the templates: C (S x L) = X (S x K) Y (K x L), Y along L,
// X stored S x K (nn) or K x S (tn). Against cuBLAS SGEMM pedantic in one process, cold L2, median of 20.
// Build and run on the GPU machine:
//   nvcc -O3 -arch=sm_90 -std=c++17 -o build/perfx/skinny_wt tests/perf/skinny_wt.cu -lcublas
//   build/perfx/skinny_wt [SHAPE_INDEX [Z]]
#include <cstdlib>

#include "skinny_study.h"

__device__ __forceinline__ void wt_cp4(unsigned d, const float *src, int n)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(n));
}
__device__ __forceinline__ void wt_cp16(unsigned d, const float *src, int n)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(n));
}
__device__ __forceinline__ void wt_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void wt_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }
__device__ __forceinline__ void wt_bar(int id, int n) { asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n)); }

template <int R_, int RT_, int TN_, int WL_, int WK_, int KC_, int ST_> struct wt_cfg {
    static constexpr int R = R_, RT = RT_, TN = TN_, WL = WL_, WK = WK_, KC = KC_, ST = ST_;
    static constexpr int LC = 32 / RT;                         // lanes of a row group (column groups of a warp)
    static constexpr int SP = RT * R;                          // rows of S a block holds (>= S)
    static constexpr int RP = (R + 3) / 4 * 4;                 // a group's rows in whole 16-byte reads
    static constexpr int XG = (RP / 4) % 2 ? RP : RP + 4;      // floats between groups: odd quads, no bank conflict
    // floats of X a k in a stage: an odd number of quads, so that the 4-byte copies of consecutive k (nn) spread
    static constexpr int XK = (RT * XG / 4) % 2 ? RT * XG : RT * XG + 4;
    static constexpr int BL = WL * LC * TN;                    // columns of L a block
    static constexpr int NG = 32 * WL;                         // threads of a K group
    static constexpr int NT = NG * WK;                         // threads of a block
    static constexpr int STAGE = KC * (XK + BL);               // floats of a stage (X then Y)
    static constexpr size_t smem() { return (size_t)4 * WK * ST * STAGE; }
};

// One stage of the group's ring <- X(0 .. SP, kb .. kb + KC) transposed and Y(kb .. kb + KC, l0 .. l0 + BL). PART:
// k past kend (the slice's last stage) zero-filled, columns past L too. VEC: Y in 16-byte copies. Row s of X goes to
// group s % RT at place s / RT (a thread's rows are tr, tr + RT, ...). Each thread's copies keep one row or column
// and step along k, so that their addresses are a base and constant steps.
template <class G, bool XT, bool VEC, bool PART>
__device__ __forceinline__ void wt_load(unsigned st, const float *X, const float *Y, int ldx, int ldy, int S, int L,
                                        int l0, int kb, int kend, int gt)
{
    if constexpr (!XT) { // X(s, k) at X[s ldx + k]: a thread one k, rows PS apart (PS a multiple of RT)
        constexpr int PS = G::NG / G::KC;
        static_assert(G::NG % G::KC == 0 && PS % G::RT == 0, "nn: a thread's X copies keep their group");
        const int k = gt % G::KC, s0 = gt / G::KC;
        const bool kin = !PART || kb + k < kend;
        const unsigned d = st + 4 * (k * G::XK + (s0 % G::RT) * G::XG + s0 / G::RT);
        const float *src = X + (size_t)s0 * ldx + kb + k;
#pragma unroll
        for (int i = 0; i < (G::SP + PS - 1) / PS; ++i) {
            const int s = s0 + PS * i;
            if (G::SP % PS && s >= G::SP) break;
            const bool in = kin && s < S;
            wt_cp4(d + 4 * (PS / G::RT) * i, in ? src + (size_t)PS * i * ldx : X, in ? 4 : 0);
        }
    } else { // X(s, k) at X[k ldx + s]: a lane rows lane and lane + 32, the group's warps k apart
        constexpr int KW = G::NG / 32;
        static_assert(G::KC % KW == 0, "tn: the group's warps divide a stage's k");
        const int lane = gt % 32, k0 = gt / 32;
#pragma unroll
        for (int j = 0; j < (G::SP + 31) / 32; ++j) {
            const int s = lane + 32 * j;
            if (G::SP % 32 && s >= G::SP) break;
            const unsigned d = st + 4 * (k0 * G::XK + (s % G::RT) * G::XG + s / G::RT);
            const float *src = X + (size_t)(kb + k0) * ldx + s;
#pragma unroll
            for (int i = 0; i < G::KC / KW; ++i) {
                const bool in = s < S && (!PART || kb + k0 + KW * i < kend);
                wt_cp4(d + 4 * KW * i * G::XK, in ? src + (size_t)KW * i * ldx : X, in ? 4 : 0);
            }
        }
    }
    const unsigned ys = st + 4 * G::KC * G::XK;
    constexpr int W = VEC ? 4 : 1, CR = G::BL / W; // floats a copy, copies a row of the stage
    static_assert(G::NG % CR == 0 || CR % G::NG == 0, "a thread's copies keep their column");
#pragma unroll
    for (int i = 0; i < G::KC * CR / G::NG; ++i) {
        const int q = G::NG % CR == 0 ? gt % CR : gt + G::NG * (i % (CR / G::NG));
        const int k = G::NG % CR == 0 ? gt / CR + G::NG / CR * i : i / (CR / G::NG);
        const int c = W * q, l = l0 + c;
        const unsigned d = ys + 4 * (k * G::BL + c);
        if constexpr (VEC) {
            const int n = PART ? (kb + k < kend ? 4 * max(0, min(4, L - l)) : 0) : 16;
            wt_cp16(d, n ? Y + (size_t)(kb + k) * ldy + l : Y, n);
        } else {
            const bool in = !PART || (kb + k < kend && l < L);
            wt_cp4(d, in ? Y + (size_t)(kb + k) * ldy + l : Y, in ? 4 : 0);
        }
    }
}

template <class G> struct wt_frag {
    float x[G::RP], y[G::TN];
};

// The thread's fragment at k of a stage: its group's rows, its columns (TN / 4 16-byte reads LC * 4 floats apart).
template <class G>
__device__ __forceinline__ void wt_read(wt_frag<G> &f, const float *xs, const float *ys, int k, int tr, int cb)
{
#pragma unroll
    for (int q = 0; q < G::RP; q += 4) {
        const float4 v = *(const float4 *)(xs + k * G::XK + tr * G::XG + q);
        f.x[q] = v.x, f.x[q + 1] = v.y, f.x[q + 2] = v.z, f.x[q + 3] = v.w;
    }
#pragma unroll
    for (int h = 0; h < G::TN / 4; ++h) {
        const float4 v = *(const float4 *)(ys + k * G::BL + cb + h * G::LC * 4);
        f.y[4 * h] = v.x, f.y[4 * h + 1] = v.y, f.y[4 * h + 2] = v.z, f.y[4 * h + 3] = v.w;
    }
}

template <class G, bool XT, bool VEC, int MINB>
__global__ void __launch_bounds__(G::NT, MINB)
    wt_gemm(const float *__restrict__ X, const float *__restrict__ Y, float *__restrict__ ws, int S, int L, int K,
            int ldx, int ldy, int per)
{
    extern __shared__ __align__(16) float sm[];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = warp / G::WL, wl = warp % G::WL;
    const int gt = threadIdx.x % G::NG, tr = lane / G::LC, lc = lane % G::LC;
    const int cb = wl * G::LC * G::TN + lc * 4, l0 = blockIdx.x * G::BL;
    // The block's slice of K, its stages shared out among the WK groups in order.
    const int kz0 = blockIdx.z * per, kz1 = min(K, kz0 + per);
    const int nst = (kz1 - kz0 + G::KC - 1) / G::KC;
    const int c0 = nst * g / G::WK, c1 = nst * (g + 1) / G::WK, n = c1 - c0;
    float *ring = sm + (size_t)g * G::ST * G::STAGE;
    const unsigned ring_s = (unsigned)__cvta_generic_to_shared(ring);
    float acc[G::R][G::TN] = {};
    auto load = [&](int c) {
        const int kb = kz0 + (c0 + c) * G::KC;
        const unsigned st = ring_s + 4 * (c % G::ST) * G::STAGE;
        if (kb + G::KC <= kz1 && l0 + G::BL <= L)
            wt_load<G, XT, VEC, false>(st, X, Y, ldx, ldy, S, L, l0, kb, kz1, gt);
        else
            wt_load<G, XT, VEC, true>(st, X, Y, ldx, ldy, S, L, l0, kb, kz1, gt);
    };
#pragma unroll
    for (int c = 0; c < G::ST - 1; ++c) {
        if (c < n) load(c);
        wt_commit();
    }
    for (int c = 0; c < n; ++c) {
        wt_wait<G::ST - 2>();
        wt_bar(1 + g, G::NG);
        if (c + G::ST - 1 < n) load(c + G::ST - 1);
        wt_commit();
        const float *xs = ring + (c % G::ST) * G::STAGE, *ys = xs + G::KC * G::XK;
        wt_frag<G> f[2];
        wt_read<G>(f[0], xs, ys, 0, tr, cb);
#pragma unroll
        for (int k = 0; k < G::KC; ++k) {
            if (k + 1 < G::KC) wt_read<G>(f[(k + 1) % 2], xs, ys, k + 1, tr, cb);
#pragma unroll
            for (int i = 0; i < G::R; ++i)
#pragma unroll
                for (int j = 0; j < G::TN; ++j) acc[i][j] = fmaf(f[k % 2].x[i], f[k % 2].y[j], acc[i][j]);
        }
    }
    wt_wait<0>();
    // The groups' sums meet in shared memory (the rings' space): group g > 0 leaves them, group 0 adds them in order.
    if constexpr (G::WK > 1) {
        __syncthreads();
        if (g > 0) {
            float *red = sm + (size_t)(g - 1) * G::R * G::TN * G::NG;
#pragma unroll
            for (int i = 0; i < G::R; ++i)
#pragma unroll
                for (int j = 0; j < G::TN; ++j) red[(i * G::TN + j) * G::NG + gt] = acc[i][j];
        }
        __syncthreads();
        if (g > 0) return;
        for (int h = 1; h < G::WK; ++h) {
            const float *red = sm + (size_t)(h - 1) * G::R * G::TN * G::NG;
#pragma unroll
            for (int i = 0; i < G::R; ++i)
#pragma unroll
                for (int j = 0; j < G::TN; ++j) acc[i][j] += red[(i * G::TN + j) * G::NG + gt];
        }
    }
    float *out = ws + (size_t)blockIdx.z * (((size_t)S * L + 3) / 4 * 4);
#pragma unroll
    for (int i = 0; i < G::R; ++i) {
        const int s = tr + G::RT * i;
        if (s >= S) break;
#pragma unroll
        for (int j = 0; j < G::TN; ++j) {
            const int l = l0 + cb + (j / 4) * G::LC * 4 + j % 4;
            if (l < L) out[(size_t)s * L + l] = acc[i][j];
        }
    }
}

// Largest |C - cuBLAS| over the largest |cuBLAS| (inf on a NaN or Inf).
static double rel_err(const shape &s, bufs &b)
{
    std::vector<float> c((size_t)s.S * s.L), r(c.size());
    CK(cudaMemcpy(c.data(), b.C, c.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(r.data(), b.R, r.size() * 4, cudaMemcpyDeviceToHost));
    double e = 0, m = 0;
    for (size_t i = 0; i < c.size(); ++i) {
        if (!std::isfinite(c[i])) return INFINITY;
        e = std::max(e, (double)std::fabs(c[i] - r[i]));
        m = std::max(m, (double)std::fabs(r[i]));
    }
    return e / m;
}

static int force_z;

template <int R, int RT, int TN, int WL, int WK, int KC, int ST, int MINB = 1>
static void variant(const shape &s, bufs &b, float cub)
{
    typedef wt_cfg<R, RT, TN, WL, WK, KC, ST> G;
    if (s.S > G::SP) return;
    const bool vec = s.L % 4 == 0;
    auto kern = s.xt ? (vec ? wt_gemm<G, true, true, MINB> : wt_gemm<G, true, false, MINB>)
                     : (vec ? wt_gemm<G, false, true, MINB> : wt_gemm<G, false, false, MINB>);
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, kern));
    const int gx = (s.L + G::BL - 1) / G::BL;
    study_best best;
    const size_t red = (size_t)4 * (WK - 1) * R * TN * G::NG;
    auto smem = [&](int) { return std::max(G::smem(), red); };
    study_slices(s, b, kern, {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 16, 20, 24}, force_z, KC * WK, smem,
                 227 * 1024, gx, G::NT, [&] { return rel_err(s, b); }, best);
    const double ffma_us = 2.0 * s.S * s.L * s.K / 66.9e12 * 1e6, bw_us = 4.0 * s.L * s.K / 4.4e12 * 1e6;
    printf("%-16s R=%2d RT=%d TN=%d WL=%d WK=%d KC=%d ST=%d MINB=%d regs=%3d spill=%zu  %6.1f us (main %5.1f, z %2d)"
           "  x cuBLAS %.3f  roof %.0f%%  err %.2g\n",
           s.name, R, RT, TN, WL, WK, KC, ST, MINB, fa.numRegs, fa.localSizeBytes, best.us, best.main_us, best.z,
           cub / best.us, 100.0 * std::max(ffma_us, bw_us) / best.us, best.err);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const shape shapes[] = {
        {50, 4492, 6473, false, "50x4492x6473 nn"}, {50, 4492, 6473, true, "50x4492x6473 tn"},
        {64, 4096, 4096, false, "64x4096x4096 nn"}, {33, 8191, 4097, false, "33x8191x4097 nn"},
        {48, 4096, 4096, false, "48x4096x4096 nn"}, {32, 4096, 4096, false, "32x4096x4096 nn"},
        {64, 11008, 4096, false, "64x11008x4096 nn"},
    };
    force_z = argc > 2 ? atoi(argv[2]) : 0;
    bufs b;
    study_each(shapes, argc, argv, b, [&](const shape &s) {
        const float cub = cublas_us(s, b);
        printf("%-16s cuBLAS %.1f us\n", s.name, cub);
        if (s.S > 48) {
            variant<13, 4, 8, 2, 2, 16, 3>(s, b, cub);
            variant<13, 4, 8, 2, 2, 8, 4>(s, b, cub);
            variant<13, 4, 8, 2, 2, 16, 4>(s, b, cub);
            variant<13, 4, 8, 4, 2, 16, 3>(s, b, cub);
            variant<13, 4, 8, 4, 1, 16, 3>(s, b, cub);
            variant<13, 4, 8, 2, 4, 8, 4>(s, b, cub);
            variant<13, 4, 8, 2, 1, 16, 3, 2>(s, b, cub);
            variant<13, 4, 8, 1, 4, 8, 4>(s, b, cub);
            variant<16, 4, 8, 2, 2, 16, 3>(s, b, cub);
            variant<26, 2, 4, 2, 2, 16, 3>(s, b, cub);
        } else if (s.S > 32) {
            variant<12, 4, 8, 2, 2, 16, 3>(s, b, cub);
            variant<9, 4, 8, 2, 2, 16, 3>(s, b, cub);
            variant<9, 4, 8, 2, 2, 8, 4>(s, b, cub);
            variant<9, 4, 8, 4, 2, 16, 3>(s, b, cub);
            variant<9, 4, 8, 2, 4, 8, 4>(s, b, cub);
            variant<17, 2, 4, 2, 2, 16, 3>(s, b, cub);
        } else {
            variant<8, 4, 8, 2, 2, 16, 3>(s, b, cub);
            variant<8, 4, 8, 2, 2, 8, 4>(s, b, cub);
            variant<8, 4, 8, 4, 2, 16, 3>(s, b, cub);
            variant<8, 4, 8, 2, 4, 8, 4>(s, b, cub);
        }
    });
    return 0;
}
