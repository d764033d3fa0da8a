// Study (issue 28): a skinny GEMM whose large operand goes straight from global memory into registers, with no
// shared-memory stage and no barrier in the K loop (the design of family skinnyr, templates/skinnyr.cu). Row-major,
// as the templates: C (S x L) = X (S x K) Y (K x L), Y along L (nn or tn). sd_gemm: a lane owns TL columns of L
// (lane + 32 t, so that each load of a warp is 128 contiguous bytes whatever ld's alignment) and all R >= S rows; it
// keeps P rows of K of its columns in flight in registers (D: the loads' cache policy). The block's warps share
// their slice of K, whose X waits in shared memory along S (each k's R values read as broadcast 16-byte reads),
// filled once before the loop. Slices of K meet in a workspace, added in slice order by a second kernel, or (CLU)
// in a cluster's shared memory. Variants measured beside it (docs/BENCHMARKS.md, 2026-11-28, twenty-second
// session): sd_ring (Y through a per-warp ring of cp.async copies in shared memory, deeper than registers allow),
// sd_rg (RG row groups a warp sharing the same Y loads), sd_read and study_read_flat (the loads alone). Against cuBLAS
// SGEMM pedantic in one process, cold L2 (a 256 MiB memset before each run), median of 20.
// Build and run on the GPU machine:
//   nvcc -O3 -arch=sm_90 -std=c++17 -o build-perf/skinny_direct tests/perf/skinny_direct.cu -lcublas
//   build-perf/skinny_direct [SHAPE_INDEX [Z]]
#include <cooperative_groups.h>
#include <cstdlib>
#include <type_traits>

#include "skinny_study.h"
namespace cg = cooperative_groups;

// A float of Y by policy LP: 0 streaming (evict first), 1 the read-only path, 2 no L1 and 256 bytes fetched into L2.
template <int LP> __device__ __forceinline__ float yload(const float *p)
{
    if constexpr (LP == 0) return __ldcs(p);
    if constexpr (LP == 1) return __ldg(p);
    float v;
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.f32 %0, [%1];\n" : "=f"(v) : "l"(p));
    return v;
}

// 4 bytes (or zeros where n is 0) at src to shared address d.
__device__ __forceinline__ void cp4(unsigned d, const float *src, int n)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(n));
}

// X's slice (rows 0 .. R, k0 .. k0 + np) into xs along S, rows XP floats apart, zeros past S and n.
template <int R, int NT, bool XT>
__device__ __forceinline__ void fill_x(float *xs, const float *X, int ldx, int S, int k0, int n, int np)
{
    constexpr int XP = (R + 3) / 4 * 4;
    // X's slice into shared memory by 4-byte cp.async (zeros past S and the slice): issued at once, waited for once.
    const unsigned xs_s = (unsigned)__cvta_generic_to_shared(xs);
    if (XT) {
        for (int i = threadIdx.x; i < np * XP; i += NT) {
            const int kk = i / XP, s = i % XP;
            const bool in = kk < n && s < S;
            cp4(xs_s + 4 * i, in ? X + (size_t)(k0 + kk) * ldx + s : X, in ? 4 : 0);
        }
    } else {
        for (int kk = threadIdx.x; kk < np; kk += NT) {
            const bool kin = kk < n;
            const float *src = X + k0 + kk;
#pragma unroll
            for (int s = 0; s < XP; ++s, src += ldx) {
                const bool in = kin && s < S;
                cp4(xs_s + 4 * (kk * XP + s), in ? src : X, in ? 4 : 0);
            }
        }
    }
}

// Floats between split-K slices in the workspace: S L rounded up to 4 (16-byte reads in the reduce).
__host__ __device__ inline size_t slice(int S, int L) { return ((size_t)S * L + 3) / 4 * 4; }

template <int R, int TL, int WARPS, int P, int MINB, bool XT, int D = 0, bool CLU = false>
__global__ void __launch_bounds__(32 * WARPS, MINB)
    sd_gemm(const float *__restrict__ X, const float *__restrict__ Y, float *__restrict__ ws, int S, int L, int K,
            int ldx, int ldy, int per)
{
    constexpr int XP = (R + 3) / 4 * 4;
    extern __shared__ float4 sm4[];
    float *xs = (float *)sm4;
    const int k0 = blockIdx.z * per, k1 = min(K, k0 + per), n = max(0, k1 - k0), np = (n + P - 1) / P * P;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int lw = (blockIdx.x * WARPS + warp) * 32 * TL + lane;
    bool ok[TL];
#pragma unroll
    for (int t = 0; t < TL; ++t) ok[t] = lw + 32 * t < L;
    const float *yk = Y + (size_t)k0 * ldy + (lw < L ? lw : 0);
    float y[P][TL];
#pragma unroll
    for (int p = 0; p < P; ++p) {
#pragma unroll
        for (int t = 0; t < TL; ++t) y[p][t] = p < n && ok[t] ? yload<D>(yk + 32 * t) : 0.0f;
        yk += ldy;
    }
    fill_x<R, 32 * WARPS, XT>(xs, X, ldx, S, k0, n, np);
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 0;\n" ::);
    __syncthreads();
    float acc[R][TL];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int t = 0; t < TL; ++t) acc[r][t] = 0.0f;
    // P rows of K: each consumes the row loaded P rows ago and loads the one P rows on. TAIL: the last P rows' loads
    // may lie past the slice (zeros then, as X is there). A column past L is loaded nowhere: its sums are never
    // stored, so its registers may hold anything.
    auto rows = [&](int kb, auto tail) {
#pragma unroll
        for (int p = 0; p < P; ++p) {
            const float *xr = xs + (kb + p) * XP;
#pragma unroll
            for (int r = 0; r < R; r += 4) {
                const float4 v = *(const float4 *)(xr + r);
                const float x[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
                for (int i = 0; i < 4; ++i)
                    if (r + i < R)
#pragma unroll
                        for (int t = 0; t < TL; ++t) acc[r + i][t] = fmaf(x[i], y[p][t], acc[r + i][t]);
            }
            const bool more = !decltype(tail)::value || kb + p + P < n;
#pragma unroll
            for (int t = 0; t < TL; ++t) {
                if (!decltype(tail)::value) {
                    if (ok[t]) y[p][t] = yload<D>(yk + 32 * t);
                } else {
                    y[p][t] = more && ok[t] ? yload<D>(yk + 32 * t) : 0.0f;
                }
            }
            yk += ldy;
        }
    };
    int kb = 0;
#pragma unroll 1
    for (; kb + 2 * P <= n; kb += P) rows(kb, std::false_type{});
#pragma unroll 1
    for (; kb < np; kb += P) rows(kb, std::true_type{});
    if constexpr (CLU) { // the z slices of the strip are one cluster: sums meet in shared memory, C written here
        constexpr int BL = WARPS * 32 * TL;
        __syncthreads(); // every warp is past its reads of X
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
            for (int t = 0; t < TL; ++t) xs[r * BL + warp * 32 * TL + lane + 32 * t] = acc[r][t];
        cg::cluster_group cl = cg::this_cluster();
        cl.sync();
        const unsigned z = gridDim.z, rank = cl.block_rank();
        const int l0 = blockIdx.x * BL;
        for (int q = (int)(rank * 32 * WARPS + threadIdx.x); q < R * BL / 4; q += (int)z * 32 * WARPS) {
            float4 sum = *(const float4 *)cl.map_shared_rank(xs + 4 * q, 0);
            for (unsigned i = 1; i < z; ++i) {
                const float4 v = *(const float4 *)cl.map_shared_rank(xs + 4 * q, i);
                sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
            }
            const float o[4] = {sum.x, sum.y, sum.z, sum.w};
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const int e = 4 * q + i, r = e / BL, l = l0 + e % BL;
                if (r < S && l < L) ws[(size_t)r * L + l] = o[i];
            }
        }
        cl.sync();
        return;
    }
    float *out = ws + (size_t)blockIdx.z * slice(S, L);
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int t = 0; t < TL; ++t)
            if (r < S && ok[t]) out[(size_t)r * L + lw + 32 * t] = acc[r][t];
}

// As sd_gemm with RG row groups a warp: group g (lanes g LG .. g LG + LG - 1, LG = 32 / RG) holds rows g R .. g R +
// R - 1 for its lanes' TL columns li + LG t; the groups' lanes load the same Y addresses (one request). X's k row
// holds the groups' R rows XG floats apart (XG: R rounded up to 4, plus 4 where that is a multiple of 8, so that the
// groups' 16-byte reads fall in distinct banks).
template <int R, int RG> struct rg_geom {
    static constexpr int RP = (R + 3) / 4 * 4, XG = RG > 1 && RP % 8 == 0 ? RP + 4 : RP, XK = RG * XG;
};

template <int R, int RG, int NT, bool XT>
__device__ __forceinline__ void fill_xg(float *xs, const float *X, int ldx, int S, int k0, int n, int np)
{
    using G = rg_geom<R, RG>;
    const unsigned xs_s = (unsigned)__cvta_generic_to_shared(xs);
    for (int kk = threadIdx.x; kk < np; kk += NT) {
        const bool kin = kk < n;
#pragma unroll
        for (int s = 0; s < R * RG; ++s) {
            const bool in = kin && s < S;
            const float *src = XT ? X + (size_t)(k0 + kk) * ldx + s : X + (size_t)s * ldx + k0 + kk;
            cp4(xs_s + 4 * (kk * G::XK + s / R * G::XG + s % R), in ? src : X, in ? 4 : 0);
        }
    }
}

template <int R, int RG, int TL, int WARPS, int P, int MINB, bool XT>
__global__ void __launch_bounds__(32 * WARPS, MINB)
    sd_rg(const float *__restrict__ X, const float *__restrict__ Y, float *__restrict__ ws, int S, int L, int K,
          int ldx, int ldy, int per)
{
    using G = rg_geom<R, RG>;
    constexpr int LG = 32 / RG;
    extern __shared__ float4 sm4[];
    float *xs = (float *)sm4;
    const int k0 = blockIdx.z * per, k1 = min(K, k0 + per), n = max(0, k1 - k0), np = (n + P - 1) / P * P;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / LG;
    const int lw = (blockIdx.x * WARPS + warp) * LG * TL + lane % LG;
    bool ok[TL];
#pragma unroll
    for (int t = 0; t < TL; ++t) ok[t] = lw + LG * t < L;
    const float *yk = Y + (size_t)k0 * ldy + (lw < L ? lw : 0);
    float y[P][TL];
#pragma unroll
    for (int p = 0; p < P; ++p) {
#pragma unroll
        for (int t = 0; t < TL; ++t) y[p][t] = p < n && ok[t] ? yload<2>(yk + LG * t) : 0.0f;
        yk += ldy;
    }
    fill_xg<R, RG, 32 * WARPS, XT>(xs, X, ldx, S, k0, n, np);
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 0;\n" ::);
    __syncthreads();
    float acc[R][TL];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int t = 0; t < TL; ++t) acc[r][t] = 0.0f;
    auto rows = [&](int kb, auto tail) {
#pragma unroll
        for (int p = 0; p < P; ++p) {
            const float *xr = xs + (kb + p) * G::XK + g * G::XG;
#pragma unroll
            for (int r = 0; r < R; r += 4) {
                const float4 v = *(const float4 *)(xr + r);
                const float x[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
                for (int i = 0; i < 4; ++i)
                    if (r + i < R)
#pragma unroll
                        for (int t = 0; t < TL; ++t) acc[r + i][t] = fmaf(x[i], y[p][t], acc[r + i][t]);
            }
            const bool more = !decltype(tail)::value || kb + p + P < n;
#pragma unroll
            for (int t = 0; t < TL; ++t) {
                if (!decltype(tail)::value) {
                    if (ok[t]) y[p][t] = yload<2>(yk + LG * t);
                } else {
                    y[p][t] = more && ok[t] ? yload<2>(yk + LG * t) : 0.0f;
                }
            }
            yk += ldy;
        }
    };
    int kb = 0;
#pragma unroll 1
    for (; kb + 2 * P <= n; kb += P) rows(kb, std::false_type{});
#pragma unroll 1
    for (; kb < np; kb += P) rows(kb, std::true_type{});
    float *out = ws + (size_t)blockIdx.z * slice(S, L);
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int t = 0; t < TL; ++t)
            if (g * R + r < S && ok[t]) out[(size_t)(g * R + r) * L + lw + LG * t] = acc[r][t];
}

// As sd_gemm, but Y comes through a ring of D rows a warp in shared memory, each lane copying (4-byte cp.async)
// exactly the floats it reads back: no barrier, and D rows in flight without registers. Ring slot d of warp w
// holds TL 32 floats, [t][lane].
template <int R, int TL, int WARPS, int D, int MINB, bool XT>
__global__ void __launch_bounds__(32 * WARPS, MINB)
    sd_ring(const float *__restrict__ X, const float *__restrict__ Y, float *__restrict__ ws, int S, int L, int K,
            int ldx, int ldy, int per)
{
    constexpr int XP = (R + 3) / 4 * 4;
    extern __shared__ float4 sm4[];
    float *ring = (float *)sm4;
    float *xs = ring + WARPS * D * 32 * TL;
    const int k0 = blockIdx.z * per, k1 = min(K, k0 + per), n = max(0, k1 - k0), np = (n + D - 1) / D * D;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int lw = (blockIdx.x * WARPS + warp) * 32 * TL + lane;
    bool ok[TL];
#pragma unroll
    for (int t = 0; t < TL; ++t) ok[t] = lw + 32 * t < L;
    const float *yk = Y + (size_t)k0 * ldy + (lw < L ? lw : 0);
    const unsigned mine = (unsigned)__cvta_generic_to_shared(ring + warp * D * 32 * TL + lane);
    auto copy = [&](int slot, bool in) {
#pragma unroll
        for (int t = 0; t < TL; ++t) cp4(mine + 4 * (slot * 32 * TL + 32 * t), in && ok[t] ? yk + 32 * t : Y, in && ok[t] ? 4 : 0);
        yk += ldy;
    };
    fill_x<R, 32 * WARPS, XT>(xs, X, ldx, S, k0, n, np);
    asm volatile("cp.async.commit_group;\n" ::);
#pragma unroll
    for (int d = 0; d < D - 1; ++d) {
        copy(d, d < n);
        asm volatile("cp.async.commit_group;\n" ::);
    }
    asm volatile("cp.async.wait_group %0;\n" ::"n"(D - 1)); // X's group
    __syncthreads();
    float acc[R][TL];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int t = 0; t < TL; ++t) acc[r][t] = 0.0f;
    const float *rl = ring + warp * D * 32 * TL + lane;
#pragma unroll 1
    for (int kb = 0; kb < np; kb += D) {
#pragma unroll
        for (int p = 0; p < D; ++p) {
            copy((p + D - 1) % D, kb + p + D - 1 < n);
            asm volatile("cp.async.commit_group;\n" ::);
            asm volatile("cp.async.wait_group %0;\n" ::"n"(D - 1));
            float y[TL];
#pragma unroll
            for (int t = 0; t < TL; ++t) y[t] = rl[p * 32 * TL + 32 * t];
            const float *xr = xs + (kb + p) * XP;
#pragma unroll
            for (int r = 0; r < R; r += 4) {
                const float4 v = *(const float4 *)(xr + r);
                const float x[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
                for (int i = 0; i < 4; ++i)
                    if (r + i < R)
#pragma unroll
                        for (int t = 0; t < TL; ++t) acc[r + i][t] = fmaf(x[i], y[t], acc[r + i][t]);
            }
        }
    }
    asm volatile("cp.async.wait_group 0;\n" ::);
    float *out = ws + (size_t)blockIdx.z * slice(S, L);
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int t = 0; t < TL; ++t)
            if (r < S && ok[t]) out[(size_t)r * L + lw + 32 * t] = acc[r][t];
}

// The same reads of Y as sd_gemm<R, TL, WARPS, P> and no arithmetic but a sum a lane (what its loads alone cost).
template <int TL, int WARPS, int P>
__global__ void __launch_bounds__(32 * WARPS) sd_read(const float *__restrict__ Y, float *__restrict__ out, int L, int K,
                                                      int ldy, int per)
{
    const int k0 = blockIdx.z * per, k1 = min(K, k0 + per), n = max(0, k1 - k0);
    const int lw = (blockIdx.x * WARPS + threadIdx.x / 32) * 32 * TL + threadIdx.x % 32;
    const float *yk = Y + (size_t)k0 * ldy + (lw < L ? lw : 0);
    float acc = 0.0f;
#pragma unroll P
    for (int k = 0; k < n; ++k, yk += ldy)
#pragma unroll
        for (int t = 0; t < TL; ++t)
            if (lw + 32 * t < L) acc += yload<0>(yk + 32 * t);
    if (acc == 1.2345f) out[0] = acc;
}

static double max_err(const shape &s, bufs &b)
{
    std::vector<float> c((size_t)s.S * s.L), r((size_t)s.S * s.L);
    CK(cudaMemcpy(c.data(), b.C, c.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(r.data(), b.R, r.size() * 4, cudaMemcpyDeviceToHost));
    double e = 0;
    for (size_t i = 0; i < c.size(); ++i) {
        if (!std::isfinite(c[i])) return INFINITY;
        e = std::max(e, (double)std::fabs(c[i] - r[i]));
    }
    return e;
}


static int force_z;

template <int R, int RG, int TL, int WARPS, int P, int MINB>
static void rg_variant(const shape &s, bufs &b, float cub)
{
    if (s.S > R * RG) return;
    using G = rg_geom<R, RG>;
    auto kern = s.xt ? sd_rg<R, RG, TL, WARPS, P, MINB, true> : sd_rg<R, RG, TL, WARPS, P, MINB, false>;
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, kern));
    const int bl = WARPS * 32 / RG * TL, gx = (s.L + bl - 1) / bl;
    study_best best;
    study_slices(
        s, b, kern, {8, 10, 12, 16, 20, 24, 32}, force_z, P, [](int per) { return (size_t)per * G::XK * 4; },
        220 * 1024, gx, 32 * WARPS, [&] { return max_err(s, b); }, best);
    printf("%-18s rg   R=%d RG=%d TL=%d W=%d P=%d MINB=%d regs=%3d spill=%zu  best %7.1f us (main %5.1f, z %2d)  x "
           "cuBLAS %.3f  err %.2g\n",
           s.name, R, RG, TL, WARPS, P, MINB, fa.numRegs, fa.localSizeBytes, best.us, best.main_us, best.z,
           cub / best.us, best.err);
    fflush(stdout);
}

// sd_gemm with its z slices a cluster (z <= 16), no workspace and no second kernel.
template <int R, int TL, int WARPS, int P, int MINB, int D>
static void cluster_variant(const shape &s, bufs &b, float cub)
{
    if (s.S > R) return;
    constexpr int XP = (R + 3) / 4 * 4, BL = WARPS * 32 * TL;
    auto kern = s.xt ? sd_gemm<R, TL, WARPS, P, MINB, true, D, true> : sd_gemm<R, TL, WARPS, P, MINB, false, D, true>;
    CK(cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    const int gx = (s.L + BL - 1) / BL, ldx = s.xt ? s.S : s.K;
    float best = 1e30f;
    int bestz = 0;
    double err = 0;
    for (int z : {8, 10, 12, 14, 16}) {
        if (force_z && z != force_z) continue;
        const int per = ((s.K + z - 1) / z + P - 1) / P * P, zz = (s.K + per - 1) / per;
        const size_t smem = std::max((size_t)per * XP * 4, (size_t)R * BL * 4);
        if (smem > 220 * 1024) continue;
        CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(gx, 1, zz), cfg.blockDim = dim3(32 * WARPS), cfg.dynamicSmemBytes = smem;
        cudaLaunchAttribute at;
        at.id = cudaLaunchAttributeClusterDimension, at.val.clusterDim.x = 1, at.val.clusterDim.y = 1,
        at.val.clusterDim.z = zz;
        cfg.attrs = &at, cfg.numAttrs = 1;
        int nc = 0;
        if (cudaOccupancyMaxActiveClusters(&nc, kern, &cfg) != cudaSuccess || nc == 0) {
            cudaGetLastError();
            printf("  cluster z %d: cannot be scheduled\n", zz);
            continue;
        }
        auto run = [&] { CK(cudaLaunchKernelEx(&cfg, kern, (const float *)b.X, (const float *)b.Y, b.C, s.S, s.L, s.K, ldx, s.L, per)); };
        CK(cudaMemset(b.C, 0xff, (size_t)s.S * s.L * 4));
        run();
        CK(cudaDeviceSynchronize());
        const double e = max_err(s, b);
        const float us = timed(run, b.flush);
        if (us < best) best = us, bestz = zz, err = e;
        printf("  cluster z %d: %d clusters at once, %.1f us\n", zz, nc, us);
    }
    printf("%-18s cluster D=%d R=%d TL=%d W=%d P=%d MINB=%d  best %7.1f us (z %2d)  x cuBLAS %.3f  err %.2g\n", s.name, D,
           R, TL, WARPS, P, MINB, best, bestz, cub / best, err);
    fflush(stdout);
}

// D: sd_gemm's load policy; RING: sd_ring with P rows a warp's ring.
template <int R, int TL, int WARPS, int P, int MINB, int D = 0, bool RING = false, bool CLU = false>
static void variant(const shape &s, bufs &b, float cub, int sms)
{
    if constexpr (CLU) return cluster_variant<R, TL, WARPS, P, MINB, D>(s, b, cub);
    if (s.S > R) return;
    constexpr int XP = (R + 3) / 4 * 4;
    auto kern = RING ? (s.xt ? sd_ring<R, TL, WARPS, P, MINB, true> : sd_ring<R, TL, WARPS, P, MINB, false>)
                     : (s.xt ? sd_gemm<R, TL, WARPS, P, MINB, true, D> : sd_gemm<R, TL, WARPS, P, MINB, false, D>);
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, kern));
    const int bl = WARPS * 32 * TL, gx = (s.L + bl - 1) / bl;
    study_best best;
    auto smem = [](int per) { return (size_t)per * XP * 4 + (RING ? (size_t)WARPS * P * 32 * TL * 4 : 0); };
    study_slices(s, b, kern, {4, 6, 8, 10, 12, 16, 20, 24, 32}, force_z, P, smem, 220 * 1024, gx, 32 * WARPS,
                 [&] { return max_err(s, b); }, best);
    (void)sms;
    const double ffma_us = 2.0 * s.S * s.L * s.K / 66.9e12 * 1e6, bw_us = 4.0 * s.L * s.K / 4.4e12 * 1e6;
    printf("%-18s %s D=%d R=%d TL=%d W=%d P=%d MINB=%d regs=%3d spill=%zu  best %7.1f us (main %5.1f, z %2d)  x cuBLAS %.3f  roof %.0f%%  "
           "err %.2g\n",
           s.name, RING ? "ring" : "regs", D, R, TL, WARPS, P, MINB, fa.numRegs, fa.localSizeBytes, best.us,
           best.main_us, best.z, cub / best.us, 100.0 * std::max(ffma_us, bw_us) / best.us, best.err);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const shape shapes[] = {
        {33, 8191, 4097, false, "33x8191x4097 nn"}, {33, 8191, 4097, true, "33x8191x4097 tn"},
        {50, 4492, 6473, false, "50x4492x6473 nn"}, {50, 4492, 6473, true, "50x4492x6473 tn"},
        {16, 16384, 4096, false, "16x16384x4096 nn"}, {8, 4096, 4096, false, "8x4096x4096 nn"},
        {64, 4096, 4096, false, "64x4096x4096 nn"}, {33, 8192, 4096, false, "33x8192x4096 nn"},
    };
    force_z = argc > 2 ? atoi(argv[2]) : 0;
    bufs b;
    study_each(shapes, argc, argv, b, [&](const shape &s) {
        const float cub = cublas_us(s, b);
        printf("%-18s cuBLAS %.1f us\n", s.name, cub);
        if (!force_z) {
            const size_t n4 = (size_t)s.K * s.L / 4;
            const float flat = timed([&] { study_read_flat<<<sms * 4, 256>>>((const float4 *)b.Y, b.C, n4); }, b.flush);
            printf("%-18s read Y flat %.1f us (%.2f TB/s)\n", s.name, flat, 16.0 * n4 / flat / 1e6);
            for (int z : {8, 16, 32}) {
                const int per = (s.K + z - 1) / z;
                const float t2 = timed([&] { sd_read<2, 8, 8><<<dim3((s.L + 511) / 512, 1, z), 256>>>(b.Y, b.C, s.L, s.K, s.L, per); }, b.flush);
                const float t4 = timed([&] { sd_read<4, 4, 8><<<dim3((s.L + 511) / 512, 1, z), 128>>>(b.Y, b.C, s.L, s.K, s.L, per); }, b.flush);
                printf("%-18s read Y as the strips, z %2d: TL 2 W 8 %.1f us, TL 4 W 4 %.1f us\n", s.name, z, t2, t4);
            }
        }
        if (s.S <= 8) {
            variant<8, 4, 4, 8, 1>(s, b, cub, sms);
            variant<8, 8, 4, 8, 1>(s, b, cub, sms);
            variant<8, 4, 8, 8, 1>(s, b, cub, sms);
        } else if (s.S <= 16) {
            variant<16, 4, 4, 8, 1>(s, b, cub, sms);
            variant<16, 8, 4, 4, 1>(s, b, cub, sms);
            variant<16, 4, 8, 8, 1>(s, b, cub, sms);
        } else if (s.S <= 33) {
            variant<33, 2, 8, 8, 2, 2>(s, b, cub, sms);
            rg_variant<17, 2, 4, 4, 8, 3>(s, b, cub);
            rg_variant<17, 2, 4, 8, 8, 2>(s, b, cub);
            rg_variant<17, 2, 6, 4, 6, 2>(s, b, cub);
            rg_variant<17, 2, 8, 4, 4, 2>(s, b, cub);
            rg_variant<9, 4, 8, 4, 8, 2>(s, b, cub);
            rg_variant<9, 4, 8, 4, 6, 3>(s, b, cub);
            rg_variant<17, 2, 2, 8, 8, 3>(s, b, cub);
            rg_variant<17, 2, 2, 8, 8, 4>(s, b, cub);
            rg_variant<17, 2, 2, 8, 4, 4>(s, b, cub);
            rg_variant<17, 2, 2, 4, 8, 4>(s, b, cub);
            rg_variant<17, 2, 2, 16, 8, 2>(s, b, cub);
            rg_variant<9, 4, 2, 8, 8, 4>(s, b, cub);
        } else if (s.S <= 50) {
            variant<50, 2, 4, 8, 1>(s, b, cub, sms);
            rg_variant<25, 2, 4, 4, 8, 2>(s, b, cub);
            rg_variant<25, 2, 6, 4, 6, 1>(s, b, cub);
            rg_variant<13, 4, 8, 4, 6, 2>(s, b, cub);
            rg_variant<13, 4, 6, 4, 8, 2>(s, b, cub);
            rg_variant<25, 2, 2, 8, 8, 3>(s, b, cub);
            rg_variant<25, 2, 2, 8, 4, 3>(s, b, cub);
            rg_variant<13, 4, 2, 8, 8, 4>(s, b, cub);
            rg_variant<13, 4, 2, 8, 8, 3>(s, b, cub);
        } else {
            variant<64, 2, 4, 4, 1>(s, b, cub, sms);
            variant<64, 2, 4, 8, 1>(s, b, cub, sms);
            variant<64, 3, 4, 4, 1>(s, b, cub, sms);
        }
    });
    return 0;
}
