// What the skinny studies share (tests/perf/skinny_direct.cu, skinny_tc_direct.cu, skinny_wg_direct.cu,
// skinny_bw.cu, skinny_wt.cu): the shapes' buffers, cuBLAS SGEMM pedantic on them and its time, the FP64 reference
// on the GPU and the error against it, the reduce that adds K slices in slice order, and a slice count's trial.
// Row-major, as the templates: C (S x L) = X (S x K) Y (K x L), Y along L, X stored S x K (nn) or K x S (xt: tn).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <cublas_v2.h>
#include <vector>

#include "cold_timer.h"

struct shape {
    int S, L, K;
    bool xt;
    const char *name;
};

struct bufs {
    float *X, *Y, *C, *R, *ws, *flush;
    double *D;
    cublasHandle_t h;
};

// Buffers for every shape up to S 64, L 16384, K 8192 (Y and X random in [-0.5, 0.5)), 32 slices of workspace, a
// 256 MiB buffer to flush L2 with, and a cuBLAS handle in pedantic FP32.
static void study_setup(bufs &b)
{
    CK(cudaMalloc(&b.Y, (size_t)8192 * 16384 * 4));
    CK(cudaMalloc(&b.X, (size_t)64 * 8192 * 4));
    CK(cudaMalloc(&b.C, (size_t)64 * 16384 * 4));
    CK(cudaMalloc(&b.R, (size_t)64 * 16384 * 4));
    CK(cudaMalloc(&b.D, (size_t)64 * 16384 * 8));
    CK(cudaMalloc(&b.ws, (size_t)32 * 64 * 16384 * 4));
    CK(cudaMalloc(&b.flush, 256u << 20));
    std::vector<float> h((size_t)8192 * 16384);
    unsigned x = 12345;
    for (auto &v : h) x = x * 1664525u + 1013904223u, v = (float)((x >> 8) & 0xffff) / 65536.0f - 0.5f;
    CK(cudaMemcpy(b.Y, h.data(), h.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b.X, h.data() + 12345, (size_t)64 * 8192 * 4, cudaMemcpyHostToDevice));
    CB(cublasCreate(&b.h));
    CB(cublasSetMathMode(b.h, CUBLAS_PEDANTIC_MATH));
}

// C row-major S x L (cuBLAS's column-major L x S) = X Y, cuBLAS SGEMM pedantic, into b.R.
static void cublas_run(const shape &s, bufs &b)
{
    const float one = 1.0f, zero = 0.0f;
    CB(cublasSgemm(b.h, CUBLAS_OP_N, s.xt ? CUBLAS_OP_T : CUBLAS_OP_N, s.L, s.S, s.K, &one, b.Y, s.L, b.X,
                   s.xt ? s.S : s.K, &zero, b.R, s.L));
}

// cuBLAS's median µs on the shape, cold.
static float cublas_us(const shape &s, bufs &b) { return timed([&] { cublas_run(s, b); }, b.flush); }

// The FP64 reference: D(s, l) = sum over k of X(s, k) Y(k, l), a thread an element.
__global__ void ref64(const float *X, const float *Y, double *D, int S, int L, int K, bool xt)
{
    const int l = blockIdx.x * blockDim.x + threadIdx.x, s = blockIdx.y;
    if (l >= L) return;
    double acc = 0;
    for (int k = 0; k < K; ++k)
        acc += (double)(xt ? X[(size_t)k * S + s] : X[(size_t)s * K + k]) * Y[(size_t)k * L + l];
    D[(size_t)s * L + l] = acc;
}

// The largest |c - d| over S x L, relative to the largest |d| (inf where c holds a NaN or Inf).
static double err64(const shape &s, const float *c_dev, const double *d_dev)
{
    std::vector<float> c((size_t)s.S * s.L);
    std::vector<double> d(c.size());
    CK(cudaMemcpy(c.data(), c_dev, c.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(d.data(), d_dev, d.size() * 8, cudaMemcpyDeviceToHost));
    double e = 0, m = 0;
    for (size_t i = 0; i < c.size(); ++i) {
        if (!std::isfinite(c[i])) return INFINITY;
        e = std::max(e, std::fabs(c[i] - d[i]));
        m = std::max(m, std::fabs(d[i]));
    }
    return e / m;
}

// A study's main loop: b set up (study_setup), then f(s) for each of the shapes, or for shapes[argv[1]] alone where
// that is given.
template <size_t N, class F> static void study_each(const shape (&shapes)[N], int argc, char **argv, bufs &b, F f)
{
    const int only = argc > 1 ? atoi(argv[1]) : -1;
    study_setup(b);
    for (int i = 0; i < (int)N; ++i)
        if (only < 0 || i == only) f(shapes[i]);
}

// The shape's FP64 reference into b.D, and cuBLAS's error against it.
static double study_reference(const shape &s, bufs &b)
{
    ref64<<<dim3((s.L + 127) / 128, s.S), 128>>>(b.X, b.Y, b.D, s.S, s.L, s.K, s.xt);
    CK(cudaGetLastError());
    cublas_run(s, b);
    CK(cudaDeviceSynchronize());
    return err64(s, b.R, b.D);
}

// C = sum over the z slices of ws (each n floats rounded up to 4), in slice order: a thread four floats.
__global__ void slice_reduce(const float *__restrict__ ws, float *__restrict__ C, size_t n, int z)
{
    const size_t e = 4 * ((size_t)blockIdx.x * blockDim.x + threadIdx.x), stride = (n + 3) / 4 * 4;
    if (e >= n) return;
    float4 s = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll 8
    for (int i = 0; i < z; ++i) {
        const float4 v = *(const float4 *)(ws + i * stride + e);
        s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
    }
    const float o[4] = {s.x, s.y, s.z, s.w};
    for (int i = 0; i < 4; ++i)
        if (e + i < n) C[e + i] = o[i];
}

// Y's bytes as one contiguous array, 16-byte loads (launched with 4 blocks of 256 an SM): what reading them costs.
__global__ void study_read_flat(const float4 *__restrict__ Y, float *__restrict__ out, size_t n4)
{
    float acc = 0.0f;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
        const float4 v = __ldcs(Y + i);
        acc += v.x + v.y + v.z + v.w;
    }
    if (acc == 1.2345f) out[0] = acc;
}

// The fastest slice count so far: both kernels' median µs, the main kernel's alone, the count, and its error.
struct study_best {
    float us = 1e30f, main_us = 0;
    int z = 0;
    double err = 0;
};

// One slice count zz: main() launches the study's kernel, slice_reduce adds its zz slices into b.C (poisoned
// first); err() then measures the result, and both are timed cold.
template <class Main, class Err>
static void study_try(const shape &s, bufs &b, int zz, Main main, Err err, study_best &best)
{
    const size_t n = (size_t)s.S * s.L;
    auto run = [&] {
        main();
        slice_reduce<<<(unsigned)((n / 4 + 256) / 256), 256>>>(b.ws, b.C, n, zz);
    };
    CK(cudaMemset(b.C, 0xff, n * 4));
    run();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    const double e = err();
    const float us = timed(run, b.flush), main_us = timed(main, b.flush);
    if (us < best.us) best = {us, main_us, zz, e};
}

// A study's main kernel: X, Y, the workspace, S, L, K, ldx, ldy, and the rows of K a slice.
typedef void (*study_kernel)(const float *, const float *, float *, int, int, int, int, int, int);

// study_try for each slice count z of zs (only force_z, where it is not 0): slices of K / z rows rounded up to a
// multiple of step, a grid of gx x 1 x slices blocks of threads with smem(per) bytes of shared memory, skipped
// past limit bytes or where no block fits an SM.
template <class Smem, class Err>
static void study_slices(const shape &s, bufs &b, study_kernel kern, std::initializer_list<int> zs, int force_z,
                         int step, Smem smem, size_t limit, int gx, int threads, Err err, study_best &best)
{
    const int ldx = s.xt ? s.S : s.K;
    for (int z : zs) {
        if (force_z && z != force_z) continue;
        const int per = ((s.K + z - 1) / z + step - 1) / step * step, zz = (s.K + per - 1) / per;
        const size_t bytes = smem(per);
        if (bytes > limit) continue;
        CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
        int bps = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, kern, threads, bytes));
        if (bps == 0) continue;
        study_try(
            s, b, zz, [&] { kern<<<dim3(gx, 1, zz), threads, bytes>>>(b.X, b.Y, b.ws, s.S, s.L, s.K, ldx, s.L, per); },
            err, best);
    }
}
