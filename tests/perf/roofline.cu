// The two ceilings of a skinny GEMM on this GPU, measured: memory read bandwidth (a 2 GiB buffer read once with
// 16-byte loads, median of 20 runs) and the FP32 FMA rate (independent FFMA chains in every lane of a full grid).
// The roofline of an MxNxK product is then the larger of (bytes of A, B and C) / bandwidth and 2MNK / FFMA rate,
// as docs/BENCHMARKS.md gives it beside each skinny shape. Built and run by tests/perf/skinny_session.sh:
//   nvcc -O3 -arch=sm_90 -o roofline tests/perf/roofline.cu && ./roofline
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#define CHECK(x)                                                                                    \
    do {                                                                                            \
        cudaError_t e_ = (x);                                                                       \
        if (e_ != cudaSuccess) return fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)), 1;   \
    } while (0)

__global__ void read_all(const float4 *__restrict__ p, size_t n, float *out)
{
    float4 s = make_float4(0, 0, 0, 0);
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const float4 v = __ldcs(p + i);
        s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
    }
    if (s.x + s.y + s.z + s.w == 12345.0f) out[0] = s.x; // never true for the zero buffer: keeps the loads
}

#define CHAINS 8
__global__ void ffma(float *out, int iters, float a, float b)
{
    float x[CHAINS];
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) x[c] = threadIdx.x + c;
    for (int i = 0; i < iters; ++i)
#pragma unroll
        for (int c = 0; c < CHAINS; ++c) x[c] = fmaf(x[c], a, b);
    float s = 0;
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) s += x[c];
    if (s == 12345.0f) out[0] = s;
}

template <class F> static float median_ms(F launch, int runs)
{
    cudaEvent_t a, b;
    cudaEventCreate(&a), cudaEventCreate(&b);
    std::vector<float> t;
    launch();
    for (int r = 0; r < runs; ++r) {
        cudaEventRecord(a);
        launch();
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

int main()
{
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    const size_t bytes = (size_t)2 << 30, n = bytes / 16;
    float4 *p;
    float *out;
    CHECK(cudaMalloc(&p, bytes));
    CHECK(cudaMalloc(&out, 4));
    CHECK(cudaMemset(p, 0, bytes));
    const int sms = prop.multiProcessorCount;
    const float rd = median_ms([&] { read_all<<<sms * 8, 512>>>(p, n, out); }, 20);
    const int iters = 1 << 16, threads = 1024, blocks = sms * 2;
    const float fm = median_ms([&] { ffma<<<blocks, threads>>>(out, iters, 0.999f, 1e-3f); }, 5);
    CHECK(cudaGetLastError());
    const double flops = 2.0 * CHAINS * iters * (double)threads * blocks;
    printf("%s: %d SMs, read bandwidth %.0f GB/s, FFMA %.1f TFLOPS\n", prop.name, sms, bytes / (rd * 1e6),
           flops / (fm * 1e9));
    printf("roofline\t%.1f\t%.2f\n", bytes / (rd * 1e6), flops / (fm * 1e9));
    return 0;
}
