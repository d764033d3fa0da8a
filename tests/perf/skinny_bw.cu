// Study (issue 28): the memory-bound skinny shapes (a small side of 1 to 16 rows, Y along L: nn and tn) at the
// bandwidth roofline. Row-major, as the templates: C (S x L) = X (S x K) Y (K x L). bw_gemm: a block owns 128
// columns of L (a lane four adjacent ones, one 16-byte load a row of K: a warp reads 512 contiguous bytes) and a
// slice of K, which its warps split in contiguous runs of rows, each lane U loads in flight; X's slice waits in
// shared memory along S (a k's R values read as broadcast 16-byte reads). The warps' sums meet in shared memory,
// added in warp order; the block writes its slice's sums to the workspace. Then either slice_reduce adds the
// slices in slice order (a second kernel), or (LAST) the last block of a column group to finish adds them, in
// slice order too, found by a counter a group (reset by that block). Against cuBLAS SGEMM pedantic and two reads
// of Y's bytes (grid-stride, and a contiguous chunk a block with loads in flight), in one process, cold L2 (a 256 MiB memset before each run, or with "clean" a 256 MiB read), median
// of 20. Build and run on the GPU machine:
//   nvcc -O3 -arch=sm_90 -std=c++17 -o build-perf/skinny_bw tests/perf/skinny_bw.cu -lcublas
//   build-perf/skinny_bw [SHAPE_INDEX|-1 [clean]]
#include <cstdlib>
#include <cstring>

#include "skinny_study.h"

__device__ __forceinline__ float4 ld_stream(const float *p) { return __ldcs((const float4 *)p); }

// Floats between split-K slices in the workspace: S L rounded up to 4.
__host__ __device__ inline size_t bw_slice(int S, int L) { return ((size_t)S * L + 3) / 4 * 4; }

template <int R, int WARPS, int U, bool XT, bool LAST>
__global__ void __launch_bounds__(32 * WARPS)
    bw_gemm(const float *__restrict__ X, const float *__restrict__ Y, float *__restrict__ ws, float *__restrict__ C,
            unsigned *cnt, int S, int L, int K, int ldx, int ldy, int per)
{
    constexpr int RP = (R + 3) / 4 * 4, NT = 32 * WARPS;
    extern __shared__ float4 sm4[];
    float *sm = (float *)sm4;
    const int z = blockIdx.y, k0 = z * per, n = max(0, min(K, k0 + per) - k0);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, col = blockIdx.x * 128 + 4 * lane;
    // X's slice along S: xs[k][RP], zeros past S.
    if (XT) {
        for (int i = threadIdx.x; i < n * RP; i += NT) {
            const int kk = i / RP, s = i % RP;
            sm[i] = s < S ? X[(size_t)(k0 + kk) * ldx + s] : 0.0f;
        }
    } else {
        for (int i = threadIdx.x; i < n * RP; i += NT) {
            const int s = i / n, kk = i % n;
            sm[kk * RP + s] = s < S ? X[(size_t)s * ldx + k0 + kk] : 0.0f;
        }
    }
    __syncthreads();
    const int pw = (n + WARPS - 1) / WARPS, wk0 = min(n, warp * pw), wk1 = min(n, wk0 + pw);
    const bool okc = col < L;
    float acc[R][4];
#pragma unroll
    for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = acc[r][2] = acc[r][3] = 0.0f;
    const float *yp = Y + (size_t)(k0 + wk0) * ldy + (okc ? col : 0);
    auto use = [&](const float4 &y, int k) {
        const float *xr = sm + k * RP;
#pragma unroll
        for (int r = 0; r < R; r += 4) {
            const float4 v = *(const float4 *)(xr + r);
            const float x[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int i = 0; i < 4; ++i)
                if (r + i < R) {
                    acc[r + i][0] = fmaf(x[i], y.x, acc[r + i][0]);
                    acc[r + i][1] = fmaf(x[i], y.y, acc[r + i][1]);
                    acc[r + i][2] = fmaf(x[i], y.z, acc[r + i][2]);
                    acc[r + i][3] = fmaf(x[i], y.w, acc[r + i][3]);
                }
        }
    };
    int k = wk0;
#pragma unroll 1
    for (; k + U <= wk1; k += U) {
        float4 y[U];
#pragma unroll
        for (int u = 0; u < U; ++u) y[u] = okc ? ld_stream(yp + (size_t)u * ldy) : make_float4(0, 0, 0, 0);
#pragma unroll
        for (int u = 0; u < U; ++u) use(y[u], k + u);
        yp += (size_t)U * ldy;
    }
#pragma unroll 1
    for (; k < wk1; ++k, yp += ldy) use(okc ? ld_stream(yp) : make_float4(0, 0, 0, 0), k);
    // The warps' sums, added in warp order.
    __syncthreads();
#pragma unroll
    for (int r = 0; r < R; ++r)
        *(float4 *)(sm + (warp * R + r) * 128 + 4 * lane) = make_float4(acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
    __syncthreads();
    float *out = ws + (size_t)z * bw_slice(S, L);
    for (int e = threadIdx.x; e < R * 128; e += NT) {
        float s = 0.0f;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) s += sm[w * R * 128 + e];
        const int r = e / 128, l = blockIdx.x * 128 + e % 128;
        if (r < S && l < L) out[(size_t)r * L + l] = s;
    }
    if constexpr (LAST) {
        __shared__ bool last;
        __threadfence();
        __syncthreads();
        if (threadIdx.x == 0) last = atomicAdd(&cnt[blockIdx.x], 1u) == gridDim.y - 1;
        __syncthreads();
        if (!last) return;
        __threadfence();
        for (int e = threadIdx.x; e < R * 128; e += NT) {
            const int r = e / 128, l = blockIdx.x * 128 + e % 128;
            if (r >= S || l >= L) continue;
            float s = 0.0f;
            for (int q = 0; q < (int)gridDim.y; ++q) s += __ldcg(ws + (size_t)q * bw_slice(S, L) + (size_t)r * L + l);
            C[(size_t)r * L + l] = s;
        }
        if (threadIdx.x == 0) cnt[blockIdx.x] = 0;
    }
}

// Y's bytes read as U 16-byte loads in flight a thread, each block a contiguous chunk: whether a read with more in
// flight beats study_read_flat's.
template <int U> __global__ void bw_read_chunks(const float4 *__restrict__ Y, float *__restrict__ out, size_t n4)
{
    const size_t per = (n4 + gridDim.x - 1) / gridDim.x, base = (size_t)blockIdx.x * per;
    const size_t len = base < n4 ? min(per, n4 - base) : 0;
    float acc = 0.0f;
    for (size_t i = threadIdx.x; i < len; i += (size_t)U * blockDim.x) {
        float4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u)
            v[u] = i + (size_t)u * blockDim.x < len ? __ldcs(Y + base + i + (size_t)u * blockDim.x)
                                                    : make_float4(0, 0, 0, 0);
#pragma unroll
        for (int u = 0; u < U; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
    }
    if (acc == 1.2345f) out[0] = acc;
}

// The fastest of bw_read_chunks over unrolls and grids (blocks of 256), µs.
static float best_chunk_read(const float4 *Y, float *out, size_t n4, int sms, bufs &b);

static unsigned *counters;
static bool clean; // argv[2] "clean": flush L2 by reading 256 MiB (L2 left holding clean lines), not by a memset

__global__ void bw_flush_read(const float4 *__restrict__ f, float *__restrict__ out, size_t n4)
{
    float acc = 0.0f;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x)
        acc += f[i].x;
    if (acc == 1.2345f) out[0] = acc;
}

// timed() (cold_timer.h), or with clean the same with a read of the 256 MiB flush buffer before each run: then the
// run's reads evict no dirty lines, where a memset leaves L2 full of them to be written back first.
template <class F> static float timed_bw(F f, bufs &b)
{
    if (!clean) return timed(f, b.flush);
    const size_t n4 = (256u << 20) / 16;
    return timed_with(f, [&](int) { bw_flush_read<<<132 * 4, 256>>>((const float4 *)b.flush, b.R, n4); });
}

template <int R, int WARPS, int U, bool LAST>
static void variant(const shape &s, bufs &b, float cub, float bw_us)
{
    if (s.S > R) return;
    auto kern = s.xt ? bw_gemm<R, WARPS, U, true, LAST> : bw_gemm<R, WARPS, U, false, LAST>;
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, kern));
    const int gx = (s.L + 127) / 128, ldx = s.xt ? s.S : s.K;
    const size_t n = (size_t)s.S * s.L;
    float best = 1e30f, best_main = 0;
    int bestz = 0, bps_best = 0;
    double err = 0;
    for (int z : {4, 6, 8, 12, 16, 24, 32, 48}) {
        const int per = (s.K + z - 1) / z, zz = (s.K + per - 1) / per;
        const size_t smem = std::max((size_t)per * ((R + 3) / 4 * 4), (size_t)WARPS * R * 128) * 4;
        if (smem > 220 * 1024) continue;
        CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        int bps = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, kern, 32 * WARPS, smem));
        if (bps == 0) continue;
        auto main = [&] {
            kern<<<dim3(gx, zz), 32 * WARPS, smem>>>(b.X, b.Y, b.ws, b.C, counters, s.S, s.L, s.K, ldx, s.L, per);
        };
        auto run = [&] {
            main();
            if (!LAST) slice_reduce<<<(unsigned)((n / 4 + 256) / 256), 256>>>(b.ws, b.C, n, zz);
        };
        CK(cudaMemset(b.C, 0xff, n * 4));
        run();
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        const double e = err64(s, b.C, b.D);
        const float us = timed_bw(run, b), mus = LAST ? us : timed_bw(main, b);
        if (us < best) best = us, best_main = mus, bestz = zz, err = e, bps_best = bps;
    }
    printf("%-18s %s R=%2d W=%2d U=%2d regs=%3d spill=%zu  best %6.1f us (main %5.1f, z %2d, %d blocks/SM)  x cuBLAS "
           "%.3f  roof %.0f%%  err %.2g\n",
           s.name, LAST ? "last" : "two ", R, WARPS, U, fa.numRegs, fa.localSizeBytes, best, best_main, bestz, bps_best,
           cub / best, 100.0 * bw_us / best, err);
    fflush(stdout);
}

template <int R> static void family(const shape &s, bufs &b, float cub, float bw_us)
{
    variant<R, 8, 8, false>(s, b, cub, bw_us);
    variant<R, 8, 8, true>(s, b, cub, bw_us);
    variant<R, 4, 8, true>(s, b, cub, bw_us);
    variant<R, 16, 4, true>(s, b, cub, bw_us);
    variant<R, 8, 16, true>(s, b, cub, bw_us);
    variant<R, 8, 4, true>(s, b, cub, bw_us);
}

static float best_chunk_read(const float4 *Y, float *out, size_t n4, int sms, bufs &b)
{
    float best = 1e30f;
    for (int bps : {1, 2, 4, 8})
        for (int u : {2, 4, 8}) {
            const unsigned g = (unsigned)(sms * bps);
            auto k = u == 2 ? bw_read_chunks<2> : u == 4 ? bw_read_chunks<4> : bw_read_chunks<8>;
            best = std::min(best, timed_bw([&] { k<<<g, 256>>>(Y, out, n4); }, b));
        }
    return best;
}

int main(int argc, char **argv)
{
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const shape shapes[] = {
        {8, 4096, 4096, false, "8x4096x4096 nn"},   {8, 4096, 4096, true, "8x4096x4096 tn"},
        {1, 4096, 4096, false, "1x4096x4096 nn"},   {4, 4096, 4096, false, "4x4096x4096 nn"},
        {16, 16384, 4096, false, "16x16384x4096 nn"}, {16, 4096, 4096, false, "16x4096x4096 nn"},
        {8, 11008, 4096, false, "8x11008x4096 nn"}, {2, 14336, 4096, true, "2x14336x4096 tn"},
    };
    clean = argc > 2 && !strcmp(argv[2], "clean");
    bufs b;
    CK(cudaMalloc(&counters, 4096 * sizeof(unsigned)));
    CK(cudaMemset(counters, 0, 4096 * sizeof(unsigned)));
    study_each(shapes, argc, argv, b, [&](const shape &s) {
        const double e_cub = study_reference(s, b);
        const float cub = timed_bw([&] { cublas_run(s, b); }, b);
        const size_t n4 = (size_t)s.K * s.L / 4;
        const float flat = timed_bw([&] { study_read_flat<<<sms * 4, 256>>>((const float4 *)b.Y, b.C, n4); }, b);
        const float bw_us = 4.0f * s.K * s.L / 4.412e12f * 1e6f; // the roofline's read at 4,412 GB/s
        const float chunks = best_chunk_read((const float4 *)b.Y, b.C, n4, sms, b);
        printf("%-18s cuBLAS %.1f us (err %.2g); Y's %.1f MB: flat read %.1f us (%.2f TB/s), in chunks %.1f us, "
               "roofline %.1f us\n",
               s.name, cub, e_cub, 4e-6 * s.K * s.L, flat, 16.0 * n4 / flat / 1e6, chunks, bw_us);
        if (s.S <= 1) family<1>(s, b, cub, bw_us);
        else if (s.S <= 2) family<2>(s, b, cub, bw_us);
        else if (s.S <= 4) family<4>(s, b, cub, bw_us);
        else if (s.S <= 8) family<8>(s, b, cub, bw_us);
        else family<16>(s, b, cub, bw_us);
    });
    return 0;
}
