// Host emulation of the CUDA subset the templates use, for the one CPU emulator (tests/emu/run.sh builds
// tests/emu/driver.cpp against a template): one std::thread per CUDA thread, std::barrier for __syncthreads,
// __shared__ arrays as function statics, dynamic shared memory as emu_smem (poisoned with NaN before each block),
// and cp.async (templates/async.cuh, whose functions this file defines instead) queued per thread and performed at
// wait_group (lazy: a missing wait reads NaN) or at issue (EMU_EAGER: a missing barrier overwrites a stage in use);
// the TF32 rounding and MMA of templates/tf32.cuh for skinny3, the named barriers of templates/groupsync.cuh for
// skinnyt.
#pragma once
#include <algorithm>
#include <barrier>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>
using std::max;
using std::min;
#define __global__
#define __device__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
#define __restrict__ __restrict
struct alignas(16) float4 { float x, y, z, w; };
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
struct alignas(8) float2 { float x, y; };
inline float2 make_float2(float a, float b) { return {a, b}; }
inline void __nanosleep(unsigned) {}
struct uint3e { unsigned x, y, z; };
inline thread_local uint3e threadIdx, blockIdx;
inline uint3e gridDim, blockDim;
inline std::barrier<> *emu_bar;
inline void __syncthreads() { emu_bar->arrive_and_wait(); }
// Blocks run one after another, so a block's global writes are visible to the next: fences have nothing to do.
inline void __threadfence() {}
inline unsigned atomicAdd(unsigned *p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline float4 __ldcg(const float4 *p) { return *p; }

inline float4 *emu_smem;       // dynamic shared memory of the block being run
inline size_t emu_smem_bytes;
inline bool emu_eager;
struct emu_range { const char *lo, *hi; };
inline std::vector<emu_range> emu_globals; // the operands a cp.async may read
struct emu_copy { char *dst; const char *src; int size, bytes; };
inline thread_local std::vector<emu_copy> emu_cur;                 // copies since the last commit
inline thread_local std::vector<std::vector<emu_copy>> emu_groups; // committed, not yet waited for

[[noreturn]] inline void emu_fail(const char *what) { fprintf(stderr, "emulator: %s\n", what), abort(); }

// Global loads through L1 or streamed past it: the cache hints mean nothing here; a 16-byte one must be aligned.
inline float4 emu_ld128(const float4 *p)
{
    if ((size_t)p % 16) emu_fail("16-byte global load misaligned");
    return *p;
}
inline float4 __ldcs(const float4 *p) { return emu_ld128(p); }
inline float4 __ldg(const float4 *p) { return emu_ld128(p); }
inline float __ldg(const float *p) { return *p; }
// __shfl_xor_sync, for templates whose every thread of the block calls it together (gemv's butterfly): each
// leaves its value in a slot, and after the block's barrier reads its partner's.
inline float emu_shfl[1024];
inline float __shfl_xor_sync(unsigned, float v, int off)
{
    emu_shfl[threadIdx.x] = v;
    emu_bar->arrive_and_wait();
    const float r = emu_shfl[threadIdx.x ^ (unsigned)off];
    emu_bar->arrive_and_wait();
    return r;
}

inline void emu_do(const emu_copy &c)
{
    char *lo = (char *)emu_smem;
    if (c.dst < lo || c.dst + c.size > lo + emu_smem_bytes) emu_fail("cp.async dst outside shared memory");
    if ((size_t)c.dst % c.size || (size_t)c.src % c.size) emu_fail("cp.async misaligned");
    if (c.bytes < 0 || c.bytes > c.size) emu_fail("cp.async bad source size");
    bool in = false;
    for (auto &r : emu_globals) in |= c.src >= r.lo && c.src + (c.bytes ? c.bytes : 4) <= r.hi;
    if (!in) emu_fail("cp.async source outside every operand");
    if (c.bytes) memcpy(c.dst, c.src, c.bytes);
    memset(c.dst + c.bytes, 0, c.size - c.bytes);
}
#define __cvta_generic_to_shared(p) ((size_t)((const char *)(p) - (const char *)emu_smem))
inline void emu_cp(unsigned dst, const void *src, int size, int bytes)
{
    emu_copy c{(char *)emu_smem + dst, (const char *)src, size, bytes};
    if (emu_eager) emu_do(c);
    else emu_cur.push_back(c);
}
inline void emu_commit() { emu_groups.push_back(emu_cur), emu_cur.clear(); }
inline void emu_wait(int n)
{
    while ((int)emu_groups.size() > n) {
        for (auto &c : emu_groups.front()) emu_do(c);
        emu_groups.erase(emu_groups.begin());
    }
}
// templates/async.cuh's primitives, run by the emulator (its include guard keeps the inline PTX out).
#define GT_ASYNC_CUH
template <int SIZE, bool L2 = false> inline void gt_cp_async(unsigned dst, const float *src, int bytes)
{
    emu_cp(dst, src, SIZE, bytes);
}
inline void gt_cp_async_commit() { emu_commit(); }
template <int N> inline void gt_cp_async_wait() { emu_wait(N); }
// templates/groupsync.cuh's copy and named barrier (skinnyt's warp groups): barrier id is a std::barrier of N
// threads, made by the first thread to reach it (every use of an id in a kernel names the same N).
#define GT_GROUPSYNC_CUH
template <int SIZE> inline void gt_cp_async_free(unsigned dst, const float *src, int bytes)
{
    emu_cp(dst, src, SIZE, bytes);
}
inline std::mutex emu_named_mu;
inline std::unique_ptr<std::barrier<>> emu_named[16];
template <int N> inline void gt_bar_named(int id)
{
    if (id < 1 || id > 15) emu_fail("named barrier id outside 1..15");
    std::barrier<> *b;
    {
        std::lock_guard<std::mutex> lock(emu_named_mu);
        if (!emu_named[id]) emu_named[id] = std::make_unique<std::barrier<>>(N);
        b = emu_named[id].get();
    }
    b->arrive_and_wait();
}
// A thread ends its block with every copy committed and waited for.
inline void emu_block_done()
{
    if (!emu_cur.empty()) emu_fail("uncommitted cp.async at block exit");
    for (auto &g : emu_groups)
        if (!g.empty()) emu_fail("unwaited cp.async at block exit");
    emu_groups.clear();
}
// ld.shared.v4.f32 at a shared-window byte address: in bounds and 16-byte aligned, or the run aborts.
inline float4 emu_lds128(unsigned a)
{
    if (a % 16 || a + 16 > emu_smem_bytes) emu_fail("ld.shared.v4 outside shared memory or misaligned");
    return *(const float4 *)((const char *)emu_smem + a);
}
// st.shared.f32 at a shared-window byte address: in bounds and 4-byte aligned, or the run aborts.
inline void emu_sts32(unsigned a, float v)
{
    if (a % 4 || a + 4 > emu_smem_bytes) emu_fail("st.shared.f32 outside shared memory or misaligned");
    *(float *)((char *)emu_smem + a) = v;
}
// templates/tf32.cuh's primitives (its include guard keeps the inline PTX out). TF32 rounding as sm_90's cvt.rn.tf32:
// to nearest, ties to even, at 10 explicit mantissa bits, the 13 below zero; Inf and NaN unchanged.
#define GT_TF32_CUH
inline unsigned gt_tf32_round(float x)
{
    unsigned u;
    memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) == 0x7f800000u) return u;
    return (u + 0xfffu + ((u >> 13) & 1u)) & 0xffffe000u;
}
inline float emu_tf32(unsigned u) // what the tensor core reads of an operand register: its TF32 bits
{
    u &= 0xffffe000u;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
inline void gt_tf32_split(float x, unsigned &big, unsigned &small)
{
    big = gt_tf32_round(x);
    small = gt_tf32_round(x - emu_tf32(big));
}
// d += a * b on one m16n8k8 tile of a warp, for templates whose every thread of the block calls it together
// (skinny3's stages): each leaves its fragments in slots and, after the block's barrier, computes its own four sums
// from its warp's (the fragment layout of tf32.cuh), in double, rounded once.
struct emu_mma_frag { float a[4], b[2]; };
inline emu_mma_frag emu_mma[1024];
inline void gt_mma_tf32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    emu_mma_frag &me = emu_mma[threadIdx.x];
    for (int i = 0; i < 4; ++i) me.a[i] = emu_tf32(a[i]);
    for (int i = 0; i < 2; ++i) me.b[i] = emu_tf32(b[i]);
    emu_bar->arrive_and_wait();
    const unsigned w0 = threadIdx.x & ~31u, g = threadIdx.x % 32 / 4, t = threadIdx.x % 4;
    auto A = [&](int r, int c) { return emu_mma[w0 + r % 8 * 4 + c % 4].a[(r >= 8) + 2 * (c >= 4)]; };
    auto B = [&](int k, int n) { return emu_mma[w0 + n * 4 + k % 4].b[k >= 4]; };
    float out[4];
    for (int e = 0; e < 4; ++e) {
        const int r = (int)g + 8 * (e / 2), c = 2 * (int)t + e % 2;
        double sum = d[e];
        for (int k = 0; k < 8; ++k) sum += (double)A(r, k) * B(k, c);
        out[e] = (float)sum;
    }
    emu_bar->arrive_and_wait();
    for (int e = 0; e < 4; ++e) d[e] = out[e];
}

// templates/ldg.cuh's load: the cache hints mean nothing here.
#define GT_LDG_CUH
inline void gt_ldg_stream(float &v, const float *p, bool ok)
{
    if (ok) v = *p;
}
// templates/stream.cuh's copies: the L2 policy means nothing here.
#define GT_STREAM_CUH
inline unsigned long long gt_evict_first() { return 0; }
template <int SIZE> inline void gt_cp_async_stream(unsigned dst, const float *src, int bytes, unsigned long long)
{
    emu_cp(dst, src, SIZE, bytes);
}
