// How fast the skinny families' split-K reduce can add z slices of S x L partial sums that a gemm kernel has just
// written (so they sit in L2, dirty, beside what the benches' memset flush left there). Every form adds each
// element's slices in the order 0, 1, ..., z - 1, so all give the reduce's bits (checked against the first form).
//   nvcc -O3 -arch=sm_90 -std=c++17 -o build/perfx/reduce_study tests/perf/reduce_study.cu
//   build/perfx/reduce_study
// Prints, per (S, L, z), each form's median µs (30 runs, each after the flush and the partials' write).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "cold_timer.h"

// The partials as a gemm leaves them: slice i, element e, a value of i and e.
__global__ void write_partials(float *ws, size_t stride, size_t n, int z)
{
    for (size_t e = blockIdx.x * (size_t)blockDim.x + threadIdx.x; e < n; e += (size_t)gridDim.x * blockDim.x)
        for (int i = 0; i < z; ++i) ws[i * stride + e] = (float)((e * 2654435761u + i * 40503u) & 0xffff) * 1e-4f;
}

// The families' form (templates/slicesum.cuh): a thread four elements, the slices eight loads at a time.
__global__ void r_ref(const float *ws, size_t stride, size_t n, int z, float *C)
{
    const size_t e = 4 * ((size_t)blockIdx.x * blockDim.x + threadIdx.x);
    if (e >= n) return;
    const float4 *p = (const float4 *)(ws + e);
    float4 s = make_float4(0, 0, 0, 0);
#pragma unroll 8
    for (int i = 0; i < z; ++i) {
        const float4 v = p[i * (stride / 4)];
        s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
    }
    *(float4 *)(C + e) = s;
}

// Every slice's load issued before the first add (z at most ZMAX).
template <int ZMAX> __global__ void r_all(const float *ws, size_t stride, size_t n, int z, float *C)
{
    const size_t e = 4 * ((size_t)blockIdx.x * blockDim.x + threadIdx.x);
    if (e >= n) return;
    const float4 *p = (const float4 *)(ws + e);
    float4 v[ZMAX];
#pragma unroll
    for (int i = 0; i < ZMAX; ++i) v[i] = i < z ? p[i * (stride / 4)] : make_float4(0, 0, 0, 0);
    float4 s = make_float4(0, 0, 0, 0);
#pragma unroll
    for (int i = 0; i < ZMAX; ++i)
        if (i < z) s.x += v[i].x, s.y += v[i].y, s.z += v[i].z, s.w += v[i].w;
    *(float4 *)(C + e) = s;
}

// A thread one element (four times the threads), the slices eight loads at a time.
__global__ void r_one(const float *ws, size_t stride, size_t n, int z, float *C)
{
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n) return;
    float s = 0;
#pragma unroll 8
    for (int i = 0; i < z; ++i) s += ws[i * stride + e];
    C[e] = s;
}

// A thread one element, every slice's load first.
template <int ZMAX> __global__ void r_one_all(const float *ws, size_t stride, size_t n, int z, float *C)
{
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n) return;
    float v[ZMAX];
#pragma unroll
    for (int i = 0; i < ZMAX; ++i) v[i] = i < z ? ws[i * stride + e] : 0.0f;
    float s = 0;
#pragma unroll
    for (int i = 0; i < ZMAX; ++i)
        if (i < z) s += v[i];
    C[e] = s;
}

// Reading the partials alone (a floor): each thread sums its four elements' slices, no store unless impossible.
__global__ void r_read(const float *ws, size_t stride, size_t n, int z, float *C)
{
    const size_t e = 4 * ((size_t)blockIdx.x * blockDim.x + threadIdx.x);
    if (e >= n) return;
    const float4 *p = (const float4 *)(ws + e);
    float acc = 0;
#pragma unroll 8
    for (int i = 0; i < z; ++i) {
        const float4 v = p[i * (stride / 4)];
        acc += v.x + v.y + v.z + v.w;
    }
    if (acc == -1.2345f) C[e] = acc;
}

int main()
{
    struct cfg { int S, L, z; const char *what; };
    const cfg cfgs[] = {{50, 4492, 22, "skinny 50x4492x6473 tn (FILL 12)"},
                        {50, 4492, 11, "skinnyt 50x4492x6473 nn"},
                        {33, 8191, 8, "skinnyr 33x8191x4097 nn"},
                        {32, 4096, 8, "skinnyt 32x4096x4096 nn"},
                        {24, 4096, 16, "24x4096x11008"},
                        {64, 4096, 8, "64x4096x4096"}};
    float *ws, *C, *R, *flush;
    CK(cudaMalloc(&ws, (size_t)32 * 64 * 16384 * 4));
    CK(cudaMalloc(&C, (size_t)64 * 16384 * 4));
    CK(cudaMalloc(&R, (size_t)64 * 16384 * 4));
    CK(cudaMalloc(&flush, 256u << 20));
    std::printf("%-34s %8s %8s %8s %8s %8s %8s  (us; MB read)\n", "shape (S x L, z)", "ref", "all<32>", "one",
                "one_all", "read", "MB");
    for (const cfg &c : cfgs) {
        const size_t n = (size_t)c.S * c.L, stride = (n + 3) / 4 * 4;
        const unsigned b4 = (unsigned)((n / 4 + 255) / 256), b1 = (unsigned)((n + 255) / 256);
        auto flush_and_write = [&](int r) {
            CK(cudaMemset(flush, r, 256u << 20));
            write_partials<<<264, 256>>>(ws, stride, n, c.z);
        };
        // n need not be a multiple of 4: the four-element forms read the last quad's pad (the slices are padded)
        const float t_ref = timed_with([&] { r_ref<<<b4, 256>>>(ws, stride, n, c.z, R); }, flush_and_write);
        const float t_all = timed_with([&] { r_all<32><<<b4, 256>>>(ws, stride, n, c.z, C); }, flush_and_write);
        std::vector<float> a(n), b(n);
        CK(cudaMemcpy(a.data(), R, n * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(b.data(), C, n * 4, cudaMemcpyDeviceToHost));
        const bool same_all = !std::memcmp(a.data(), b.data(), n * 4);
        const float t_one = timed_with([&] { r_one<<<b1, 256>>>(ws, stride, n, c.z, C); }, flush_and_write);
        CK(cudaMemcpy(b.data(), C, n * 4, cudaMemcpyDeviceToHost));
        const bool same_one = !std::memcmp(a.data(), b.data(), n * 4);
        const float t_one_all =
            timed_with([&] { r_one_all<32><<<b1, 256>>>(ws, stride, n, c.z, C); }, flush_and_write);
        const float t_read = timed_with([&] { r_read<<<b4, 256>>>(ws, stride, n, c.z, C); }, flush_and_write);
        char name[80];
        std::snprintf(name, sizeof name, "%dx%d z %d", c.S, c.L, c.z);
        std::printf("%-34s %8.2f %8.2f %8.2f %8.2f %8.2f %8.1f  %s%s %s\n", name, t_ref, t_all, t_one, t_one_all,
                    t_read, c.z * n * 4 / 1e6, same_all ? "" : "all DIFFERS ", same_one ? "" : "one DIFFERS ",
                    c.what);
    }
    return 0;
}
