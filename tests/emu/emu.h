// CPU emulation of the CUDA subset the templates use, for tests/emu/run.py: one block at a time, its threads as
// std::threads, __shared__ as function statics, __syncthreads as a barrier.
#pragma once
#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>
struct uint3e { unsigned x, y, z; };
inline thread_local uint3e threadIdx, blockIdx;
inline uint3e gridDim, blockDim;
inline std::barrier<> *g_bar;
inline void __syncthreads() { g_bar->arrive_and_wait(); }
struct alignas(16) float4 { float x, y, z, w; };
inline float4 make_float4(float a, float b, float c, float d) { return float4{a, b, c, d}; }
inline void __nanosleep(unsigned) {}
using std::min;
using std::max;
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
#define __restrict__ __restrict
