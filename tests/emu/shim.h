// Host emulation of the CUDA features the multistage template uses: one std::thread per CUDA thread,
// std::barrier for __syncthreads, cp.async queued per thread and performed at wait_group (lazy) or issue (eager).
#include <barrier>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <vector>
using std::min; using std::max;
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__
struct alignas(16) float4 { float x, y, z, w; };
static inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
struct u3 { unsigned x, y, z; };
thread_local u3 threadIdx, blockIdx;
u3 blockDim, gridDim;
std::barrier<> *emu_bar;
float4 *emu_smem; size_t emu_smem_bytes;
int emu_eager;
struct range { const char *lo, *hi; };
std::vector<range> emu_globals;
struct cpy { char *dst; const char *src; int size, bytes; };
thread_local std::vector<cpy> emu_cur;
thread_local std::vector<std::vector<cpy>> emu_groups;
static void emu_do(const cpy &c)
{
    char *sl = (char *)emu_smem;
    if (c.dst < sl || c.dst + c.size > sl + emu_smem_bytes) { fprintf(stderr, "cp.async dst outside smem\n"); abort(); }
    if (((size_t)c.dst % c.size) || ((size_t)c.src % c.size)) { fprintf(stderr, "cp.async misaligned %d\n", c.size); abort(); }
    if (c.bytes < 0 || c.bytes > c.size) { fprintf(stderr, "cp.async bad src size %d\n", c.bytes); abort(); }
    {
        bool ok = false;
        for (auto &r : emu_globals) ok |= c.src >= r.lo && c.src + (c.bytes ? c.bytes : 4) <= r.hi;
        if (!ok) { fprintf(stderr, "cp.async src outside any operand\n"); abort(); }
        if (c.bytes) memcpy(c.dst, c.src, c.bytes);
    }
    memset(c.dst + c.bytes, 0, c.size - c.bytes);
}
#define __cvta_generic_to_shared(p) ((size_t)((const char *)(p) - (const char *)emu_smem))
static void emu_cp(unsigned dst, const void *src, int size, int bytes)
{
    cpy c{(char *)emu_smem + dst, (const char *)src, size, bytes};
    if (emu_eager) emu_do(c); else emu_cur.push_back(c);
}
// ld.shared.v4.f32 at a shared-window byte address: in bounds and 16-byte aligned, or the run aborts.
static float4 emu_lds128(unsigned a)
{
    if (a % 16 || a + 16 > emu_smem_bytes) { fprintf(stderr, "ld.shared.v4 at %u outside or misaligned\n", a); abort(); }
    return *(const float4 *)((const char *)emu_smem + a);
}
static void emu_commit() { emu_groups.push_back(emu_cur); emu_cur.clear(); }
static void emu_wait(int n)
{
    while ((int)emu_groups.size() > n) { for (auto &c : emu_groups.front()) emu_do(c); emu_groups.erase(emu_groups.begin()); }
}
static void __syncthreads() { emu_bar->arrive_and_wait(); }
