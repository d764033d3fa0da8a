// Study (issue 28, math class tf32x3): skinnyr3's loads (the large operand straight from global memory into the
// MMA's A fragments, P steps ahead, no shared-memory stage of it) with Hopper's warpgroup MMA, its A operand in
// registers: wgmma.mma_async m64nNk8 with N the small side rounded up to 8, where skinnyr3 issues NS m16n8k8
// mma.sync a tile. Row-major, as the templates: C (S x L) = X (S x K) Y (K x L), Y along L (nn, or tn with X
// stored K x S).
//
// swd_gemm: a warpgroup computes C transposed for 64 columns of L (warp q of it the 16 from 16 q: the A fragment's
// rows) by all N of S, over the block's slice of K; the WG warpgroups of a block share the slice and X. Lane (g, t)
// of warp q loads Y(k + t, l + g), Y(k + t, l + g + 8), Y(k + t + 4, l + g), Y(k + t + 4, l + g + 8) for each step
// of 8 k's (l = the warp's first column), P steps ahead in registers, and splits them into big and small TF32 parts
// at use. X waits in shared memory split once, big and small parts in two K-major tiles of N rows (templates/
// wgmma.cuh's layout without swizzle), the B operands: with CH 0 the block's whole slice, filled before the loop;
// with CH > 0 chunks of CH steps through two buffers, the next chunk's 4-byte cp.async copies in flight while a
// chunk is used, one barrier a chunk. Per step three wgmmas: big*big into chunk, big*small and small*big into corr;
// every FOLD steps the group waits for them and adds both into sum in FP32 (skinny3's scheme). K slices meet in a
// workspace, added in slice order by a second kernel. docs/BENCHMARKS.md (2026-11-29) has the measurements, and a
// third form (Y through a per-lane cp.async ring in shared memory) that lost.
//
// Checked against FP64 (a double GEMM on the GPU): the error beside cuBLAS SGEMM pedantic's on the same inputs.
// Timed against cuBLAS SGEMM pedantic in one process, cold L2, median of 20 (cold_timer.h). On the GPU machine:
//   nvcc -O3 -gencode arch=compute_90a,code=sm_90a -std=c++17 -o build-perf/skinny_wg_direct \
//     tests/perf/skinny_wg_direct.cu -lcublas
//   build-perf/skinny_wg_direct [SHAPE_INDEX]
#include <cstdlib>
#include <type_traits>

#include "../../templates/tf32.cuh"
#include "../../templates/wgmma.cuh"
#include "skinny_study.h"

// v <- *p where ok (streamed, 256 bytes into L2), else v unchanged.
__device__ __forceinline__ void ld_y(float &v, const float *p, bool ok)
{
    asm volatile("{\n .reg .pred q;\n setp.ne.b32 q, %2, 0;\n @q ld.global.cs.L2::256B.f32 %0, [%1];\n}\n"
                 : "+f"(v)
                 : "l"(p), "r"((int)ok));
}

// d (+)= A B for one m64 x N x k8 step, A in registers (the m16n8k8 A fragment of the warp's 16 rows), B in
// shared memory (descriptor db); add 0 overwrites d. d: N / 2 registers a thread.
#define SW_F4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define SW_L4 "%0, %1, %2, %3"
#define SW_L8 SW_L4 ", %4, %5, %6, %7"
#define SW_L12 SW_L8 ", %8, %9, %10, %11"
#define SW_L16 SW_L12 ", %12, %13, %14, %15"
#define SW_L20 SW_L16 ", %16, %17, %18, %19"
#define SW_L24 SW_L20 ", %20, %21, %22, %23"
#define SW_L28 SW_L24 ", %24, %25, %26, %27"
#define SW_L32 SW_L28 ", %28, %29, %30, %31"
#define SW_D4 SW_F4(0)
#define SW_D8 SW_D4, SW_F4(4)
#define SW_D12 SW_D8, SW_F4(8)
#define SW_D16 SW_D12, SW_F4(12)
#define SW_D20 SW_D16, SW_F4(16)
#define SW_D24 SW_D20, SW_F4(20)
#define SW_D28 SW_D24, SW_F4(24)
#define SW_D32 SW_D28, SW_F4(28)
#define SW_RS(N, REGS, A, DB, ADD, ...)                                                                        \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " ADD ", 0;\n"                                                \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k8.f32.tf32.tf32 {" REGS "}, {" A "}, " DB ", p, 1, 1;\n}\n" \
                 : __VA_ARGS__                                                                                   \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(add))
template <int N>
__device__ __forceinline__ void wg_rs(float (&d)[N / 2], const unsigned (&a)[4], unsigned long long db, int add)
{
    if constexpr (N == 8) SW_RS(8, SW_L4, "%4, %5, %6, %7", "%8", "%9", SW_D4);
    else if constexpr (N == 16) SW_RS(16, SW_L8, "%8, %9, %10, %11", "%12", "%13", SW_D8);
    else if constexpr (N == 24) SW_RS(24, SW_L12, "%12, %13, %14, %15", "%16", "%17", SW_D12);
    else if constexpr (N == 32) SW_RS(32, SW_L16, "%16, %17, %18, %19", "%20", "%21", SW_D16);
    else if constexpr (N == 40) SW_RS(40, SW_L20, "%20, %21, %22, %23", "%24", "%25", SW_D20);
    else if constexpr (N == 48) SW_RS(48, SW_L24, "%24, %25, %26, %27", "%28", "%29", SW_D24);
    else if constexpr (N == 56) SW_RS(56, SW_L28, "%28, %29, %30, %31", "%32", "%33", SW_D28);
    else SW_RS(64, SW_L32, "%32, %33, %34, %35", "%36", "%37", SW_D32);
}

__device__ __forceinline__ void cp4(unsigned d, const float *src, int n)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(n));
}

// X(s, kk) of the block's slice (k0 its first k, n its length), zero past S and n.
template <bool XT> __device__ __forceinline__ const float *x_ptr(const float *X, int ldx, int k0, int s, int kk)
{
    return XT ? X + (size_t)(k0 + kk) * ldx + s : X + (size_t)s * ldx + k0 + kk;
}

// Element i of a tile of KR rows of K by N of S: coalesced along K (nn) or along S (XT).
template <int N, bool XT> __device__ __forceinline__ void x_elem(int i, int KR, int &s, int &kk)
{
    s = XT ? i % N : i / KR, kk = XT ? i / N : i % KR;
}

// v split into the big and small K-major tiles of N rows (wgmma.cuh's layout without swizzle) at element (s, kk).
template <int N> __device__ __forceinline__ void x_put(float v, int s, int kk, unsigned *big, unsigned *small)
{
    unsigned hi, lo;
    gt_tf32_split(v, hi, lo);
    const unsigned at = (gt_wg_off<N, false>(s, kk / 4) + kk % 4 * 4) / 4;
    big[at] = hi, small[at] = lo;
}

// CH 0: the whole slice's KR rows of X split into the tiles, XU loads in flight a thread.
template <int N, int NT, bool XT>
__device__ __forceinline__ void x_fill(const float *X, int ldx, int S, int n, int k0, int KR, unsigned *big,
                                       unsigned *small)
{
    constexpr int XU = 8;
    for (int i0 = threadIdx.x; i0 < KR * N; i0 += XU * NT) {
        float v[XU];
#pragma unroll
        for (int j = 0; j < XU; ++j) {
            int s, kk;
            x_elem<N, XT>(i0 + j * NT, KR, s, kk);
            v[j] = i0 + j * NT < KR * N && s < S && kk < n ? *x_ptr<XT>(X, ldx, k0, s, kk) : 0.0f;
        }
#pragma unroll
        for (int j = 0; j < XU; ++j) {
            int s, kk;
            x_elem<N, XT>(i0 + j * NT, KR, s, kk);
            if (i0 + j * NT < KR * N) x_put<N>(v[j], s, kk, big, small);
        }
    }
}

// CH > 0: chunk c of X's slice (8 CH rows of K) copied raw into the staging buffer (byte address stage) by 4-byte
// cp.async, to be split by x_split once the chunk before it is done.
template <int N, int CH, int NT, bool XT>
__device__ __forceinline__ void x_fetch(unsigned stage, const float *X, int ldx, int S, int n, int k0, int c)
{
#pragma unroll 1
    for (int i = threadIdx.x; i < CH * 8 * N; i += NT) {
        int s, kk;
        x_elem<N, XT>(i, CH * 8, s, kk);
        const bool in = s < S && c * CH * 8 + kk < n;
        cp4(stage + 4 * i, in ? x_ptr<XT>(X, ldx, k0, s, c * CH * 8 + kk) : X, in ? 4 : 0);
    }
    asm volatile("cp.async.commit_group;\n" ::);
}

// The thread's own staged elements (x_fetch's, waited for) split into a buffer's tiles.
template <int N, int CH, int NT, bool XT>
__device__ __forceinline__ void x_split(const float *stage, unsigned *big, unsigned *small)
{
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#pragma unroll 1
    for (int i = threadIdx.x; i < CH * 8 * N; i += NT) {
        int s, kk;
        x_elem<N, XT>(i, CH * 8, s, kk);
        x_put<N>(stage[i], s, kk, big, small);
    }
}

// CH 0: X's whole slice in shared memory (two tiles of 8 rounded rows), filled before the loop. CH > 0: X in chunks
// of CH steps through two buffers and a staging one, the next chunk's copies in flight while a chunk is used,
// one barrier a chunk.
template <int N, int WG, int P, int MINB, bool XT, int FOLD, int CH>
__global__ void __launch_bounds__(128 * WG, MINB)
    swd_gemm(const float *__restrict__ X, const float *__restrict__ Y, float *__restrict__ ws, int S, int L, int K,
             int ldx, int ldy, int per)
{
    static_assert(N % 8 == 0 && N >= 8 && N <= 64, "N: 8 to 64, a multiple of 8");
    static_assert(CH % P == 0 && CH % FOLD == 0, "a chunk is whole P and whole FOLD steps");
    constexpr int NT = 128 * WG;
    extern __shared__ float4 sm4[];
    unsigned *xu = (unsigned *)sm4;
    const int k0 = blockIdx.z * per, n = max(0, min(K, k0 + per) - k0), steps = (n + 7) / 8;
    const int rounded = (steps + P - 1) / P * P; // steps added: whole P (zeros past n)
    const int cs = CH ? CH : rounded, chunks = CH ? (steps + CH - 1) / CH : 1, E = cs * 8 * N; // E: a tile's floats
    const unsigned base = (unsigned)__cvta_generic_to_shared(sm4), stage_s = base + 16 * E; // CH: 2 buffers, staging
    const int w = threadIdx.x / 128, q = threadIdx.x / 32 % 4, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int l0 = (blockIdx.x * WG + w) * 64 + 16 * q;
    float y[P][4];
    const float *yp = Y + (size_t)(k0 + t) * ldy + l0 + g;
    const bool ok0 = l0 + g < L, ok1 = l0 + g + 8 < L;
    auto load = [&](int p, int step, auto tail_c) {
        constexpr bool tail = decltype(tail_c)::value;
        const int k = 8 * step + t;
        const float *r = yp + (size_t)8 * step * ldy;
        if (tail) y[p][0] = y[p][1] = y[p][2] = y[p][3] = 0.0f;
        ld_y(y[p][0], r, ok0 && (!tail || k < n));
        ld_y(y[p][1], r + 8, ok1 && (!tail || k < n));
        ld_y(y[p][2], r + 4 * (size_t)ldy, ok0 && (!tail || k + 4 < n));
        ld_y(y[p][3], r + 4 * (size_t)ldy + 8, ok1 && (!tail || k + 4 < n));
    };
#pragma unroll
    for (int p = 0; p < P; ++p) load(p, p, std::true_type{});
    if constexpr (CH > 0) {
        x_fetch<N, CH, NT, XT>(stage_s, X, ldx, S, n, k0, 0);
        x_split<N, CH, NT, XT>((const float *)(xu + 4 * E), xu, xu + E);
    } else {
        x_fill<N, NT, XT>(X, ldx, S, n, k0, 8 * cs, xu, xu + E);
    }
    gt_proxy_fence();
    __syncthreads(); // the first tiles are everyone's
    float sum[N / 2], chunk[N / 2], corr[N / 2];
#pragma unroll
    for (int e = 0; e < N / 2; ++e) sum[e] = chunk[e] = corr[e] = 0.0f;
    auto fold = [&] {
#pragma unroll
        for (int e = 0; e < N / 2; ++e) sum[e] += chunk[e] + corr[e];
    };
    // P steps from step st0 of the slice, step sp0 of the tiles at byte addresses xb and xs.
    auto steps_p = [&](int st0, int sp0, unsigned xb, unsigned xs, auto tail) {
#pragma unroll
        for (int p = 0; p < P; ++p) {
            const int sp = sp0 + p;
            unsigned ab[4], as[4];
#pragma unroll
            for (int e = 0; e < 4; ++e) gt_tf32_split(y[p][e], ab[e], as[e]);
            const unsigned long long db = gt_wg_desc<N, false>(xb, 0, sp), ds = gt_wg_desc<N, false>(xs, 0, sp);
            const int add = sp % FOLD != 0;
            gt_wg_fence();
            wg_rs<N>(chunk, ab, db, add);
            wg_rs<N>(corr, ab, ds, add);
            wg_rs<N>(corr, as, db, 1);
            gt_wg_commit();
            load(p, st0 + p + P, tail);
            if ((sp + 1) % FOLD == 0) {
                gt_wg_wait<0>();
                fold();
            }
        }
    };
#pragma unroll 1
    for (int c = 0; c < chunks; ++c) {
        if (CH && c + 1 < chunks) x_fetch<N, CH, NT, XT>(stage_s, X, ldx, S, n, k0, c + 1);
        const unsigned xb = base + 8 * E * (c % 2), xs = xb + 4 * E;
#pragma unroll 1
        for (int sp = 0; sp < cs; sp += P) {
            const int st = c * cs + sp;
            if (8 * (st + 2 * P) <= n) steps_p(st, sp, xb, xs, std::false_type{});
            else steps_p(st, sp, xb, xs, std::true_type{});
        }
        if constexpr (CH > 0) {
            if (c + 1 < chunks) {
                unsigned *next = xu + 2 * E * ((c + 1) % 2);
                x_split<N, CH, NT, XT>((const float *)(xu + 4 * E), next, next + E);
                gt_proxy_fence();
            }
            __syncthreads(); // chunk c + 1 is everyone's, and chunk c no one's
        }
    }
    gt_wg_wait<0>();
    if (cs % FOLD) fold();
    float *slice = ws + (size_t)blockIdx.z * (((size_t)S * L + 3) / 4 * 4);
#pragma unroll
    for (int i = 0; i < N / 8; ++i)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int s = 8 * i + 2 * t + e % 2, l = l0 + g + 8 * (e / 2);
            if (s < S && l < L) slice[(size_t)s * L + l] = sum[4 * i + e];
        }
}

template <int N, int WG, int P, int MINB, int FOLD, int CH>
static void variant(const shape &s, bufs &b, float cub, double cub_err)
{
    if (s.S > N || s.S <= N - 8) return;
    auto kern = s.xt ? swd_gemm<N, WG, P, MINB, true, FOLD, CH> : swd_gemm<N, WG, P, MINB, false, FOLD, CH>;
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, kern));
    const int bl = WG * 64, gx = (s.L + bl - 1) / bl;
    study_best best;
    constexpr int step = 8 * (CH ? CH : P); // a slice is whole chunks, or whole P steps
    auto smem = [](int per) { return CH ? (size_t)CH * 8 * N * 4 * 5 : (size_t)per * N * 4 * 2; };
    study_slices(s, b, kern, {1, 2, 3, 4, 6, 8, 11, 16, 22}, 0, step, smem, 227 * 1024, gx, 128 * WG,
                 [&] { return err64(s, b.C, b.D); }, best);
    printf("%-16s N=%d WG=%d P=%d MINB=%d FOLD=%d CH=%d regs=%3d spill=%3zu  best %6.1f us (main %5.1f, z %2d)  "
           "x cuBLAS %.3f  err %.2e (cuBLAS %.2e, x%.2f)\n",
           s.name, N, WG, P, MINB, FOLD, CH, fa.numRegs, fa.localSizeBytes, best.us, best.main_us, best.z,
           cub / best.us, best.err, cub_err, best.err / cub_err);
    fflush(stdout);
}

// Every variant of one N: <N, WG, P, MINB, FOLD, CH>.
template <int N> static void variants(const shape &s, bufs &b, float cub, double cub_err)
{
    variant<N, 4, 4, 1, 4, 0>(s, b, cub, cub_err);
    variant<N, 4, 2, 1, 2, 0>(s, b, cub, cub_err);
    variant<N, 2, 4, 2, 4, 0>(s, b, cub, cub_err);
    variant<N, 4, 4, 1, 4, 16>(s, b, cub, cub_err);
    variant<N, 4, 2, 1, 2, 16>(s, b, cub, cub_err);
    variant<N, 2, 8, 1, 8, 16>(s, b, cub, cub_err);
}

int main(int argc, char **argv)
{
    const shape shapes[] = {
        {33, 8191, 4097, false, "33x8191x4097 nn"}, {33, 8191, 4097, true, "33x8191x4097 tn"},
        {50, 4492, 6473, false, "50x4492x6473 nn"}, {50, 4492, 6473, true, "50x4492x6473 tn"},
        {16, 16384, 4096, false, "16x16384x4096 nn"}, {8, 4096, 4096, false, "8x4096x4096 nn"},
        {64, 4096, 4096, false, "64x4096x4096 nn"}, {32, 4096, 4096, false, "32x4096x4096 nn"},
    };
    bufs b;
    study_each(shapes, argc, argv, b, [&](const shape &s) {
        const double cub_err = study_reference(s, b);
        const float cub = timed([&] { cublas_run(s, b); }, b.flush);
        printf("%-16s cuBLAS %.1f us, err %.2e\n", s.name, cub, cub_err);
        variants<8>(s, b, cub, cub_err);
        variants<16>(s, b, cub, cub_err);
        variants<32>(s, b, cub, cub_err);
        variants<40>(s, b, cub, cub_err);
        variants<56>(s, b, cub, cub_err);
        variants<64>(s, b, cub, cub_err);
    });
    return 0;
}
