// Hopper's warpgroup MMA (wgmma, sm_90a) on TF32 operands in shared memory, and the mbarriers, named barriers and
// setmaxnreg of a warp-specialized block: the primitives of tf32x3wg.cu and of the warp-specialized study
// tests/perf/tf32x3ws.cu. Both store every operand tile K-major, rows being m (A) or n (B) and a quad 4 consecutive k-values (16 bytes):
//   SW (BK = 32): a row's 32 k-values are one 128-byte line, row r at byte 128 r, its quad q at 16-byte slot
//     q ^ (r % 8) of the line ("128-byte swizzle", PTX ISA "Shared Memory Matrix Layout"). Eight rows make a
//     1024-byte atom (SBO 1024); a tile starts 1024-byte aligned.
//   otherwise: "core matrices" of 8 rows x 1 quad, 128 contiguous bytes each, the core matrix of row group r / 8 and
//     quad q at byte (q * (R / 8) + r / 8) * 128 of an R-row tile (no swizzle: SBO 128, LBO R * 16).
// Compiled with them (tests/test_tf32x3wg.c; the study by tests/perf/wgmma.sh).
#ifndef GT_WGMMA_CUH
#define GT_WGMMA_CUH

// Byte offset of row r, quad q in an R-row tile of the layout above.
template <int R, bool SW> __device__ __forceinline__ unsigned gt_wg_off(int r, int q)
{
    if constexpr (SW) return (unsigned)(r * 128 + ((q ^ (r & 7)) << 4));
    else return (unsigned)((q * (R / 8) + r / 8) * 128 + r % 8 * 16);
}

// Shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format") of k step ks (8 k-values) of the 64 or R
// rows from row0 of an R-row tile at byte address base: start address, LBO, SBO in units of 16 bytes, and the
// layout in bits 62-63 (1: 128-byte swizzle, whose k steps start 32 bytes apart inside the line; 0: none).
template <int R, bool SW> __device__ __forceinline__ unsigned long long gt_wg_desc(unsigned base, int row0, int ks)
{
    const unsigned addr = SW ? base + row0 * 128 + ks * 32 : base + row0 / 8 * 128 + 2 * ks * (R * 16);
    const unsigned lbo = SW ? 16 : R * 16, sbo = SW ? 1024 : 128;
    const unsigned long long layout = SW ? 1ull << 62 : 0;
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | (unsigned long long)(lbo >> 4) << 16 |
           (unsigned long long)(sbo >> 4) << 32 | layout;
}

__device__ __forceinline__ void gt_wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void gt_wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void gt_wg_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Shared-memory writes of the generic proxy (st.shared), made visible to wgmma's reads (the async proxy).
__device__ __forceinline__ void gt_proxy_fence() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// Operand lists of gt_wgmma_tf32's asm: GT_N<n>_ names d's first n registers ("%0, %1, ..."), GT_D<n>_ gives them as
// "+f" operands.
#define GT_F4_(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define GT_N8_ "%0, %1, %2, %3, %4, %5, %6, %7"
#define GT_D8_ GT_F4_(0), GT_F4_(4)
#define GT_N16_ GT_N8_ ", %8, %9, %10, %11, %12, %13, %14, %15"
#define GT_D16_ GT_D8_, GT_F4_(8), GT_F4_(12)
#define GT_N24_ GT_N16_ ", %16, %17, %18, %19, %20, %21, %22, %23"
#define GT_D24_ GT_D16_, GT_F4_(16), GT_F4_(20)
#define GT_N32_ GT_N24_ ", %24, %25, %26, %27, %28, %29, %30, %31"
#define GT_D32_ GT_D24_, GT_F4_(24), GT_F4_(28)
#define GT_N40_ GT_N32_ ", %32, %33, %34, %35, %36, %37, %38, %39"
#define GT_D40_ GT_D32_, GT_F4_(32), GT_F4_(36)
#define GT_N48_ GT_N40_ ", %40, %41, %42, %43, %44, %45, %46, %47"
#define GT_D48_ GT_D40_, GT_F4_(40), GT_F4_(44)
#define GT_N56_ GT_N48_ ", %48, %49, %50, %51, %52, %53, %54, %55"
#define GT_D56_ GT_D48_, GT_F4_(48), GT_F4_(52)
#define GT_N64_ GT_N56_ ", %56, %57, %58, %59, %60, %61, %62, %63"
#define GT_D64_ GT_D56_, GT_F4_(56), GT_F4_(60)
// One wgmma of d's registers, named REGS and given as the outputs after them; DA, DB and ADD name its da, db and add.
#define GT_WGMMA_TF32_(N, REGS, DA, DB, ADD, ...)                                                                \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " ADD ", 0;\n"                                                  \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k8.f32.tf32.tf32 {" REGS "}, " DA ", " DB ", p, 1, 1;\n}\n" \
                 : __VA_ARGS__                                                                                     \
                 : "l"(da), "l"(db), "r"(add))

// d (+)= A * B for one m64 x N x k8 step, A and B in shared memory (descriptors da, db); add: 0 overwrites d.
// N: 16, 32, 48, 64, 96, 112 or 128 (d: N / 2 registers per thread).
template <int N>
__device__ __forceinline__ void gt_wgmma_tf32(float (&d)[N / 2], unsigned long long da, unsigned long long db, int add)
{
    static_assert(N == 16 || N == 32 || N == 48 || N == 64 || N == 96 || N == 112 || N == 128,
                  "wgmma N: 16, 32, 48, 64, 96, 112 or 128");
    if constexpr (N == 16)
        GT_WGMMA_TF32_(16, GT_N8_, "%8", "%9", "%10", GT_D8_);
    else if constexpr (N == 32)
        GT_WGMMA_TF32_(32, GT_N16_, "%16", "%17", "%18", GT_D16_);
    else if constexpr (N == 48)
        GT_WGMMA_TF32_(48, GT_N24_, "%24", "%25", "%26", GT_D24_);
    else if constexpr (N == 64)
        GT_WGMMA_TF32_(64, GT_N32_, "%32", "%33", "%34", GT_D32_);
    else if constexpr (N == 96)
        GT_WGMMA_TF32_(96, GT_N48_, "%48", "%49", "%50", GT_D48_);
    else if constexpr (N == 112)
        GT_WGMMA_TF32_(112, GT_N56_, "%56", "%57", "%58", GT_D56_);
    else if constexpr (N == 128)
        GT_WGMMA_TF32_(128, GT_N64_, "%64", "%65", "%66", GT_D64_);
}
#undef GT_WGMMA_TF32_
#undef GT_N8_
#undef GT_D8_
#undef GT_N16_
#undef GT_D16_
#undef GT_N24_
#undef GT_D24_
#undef GT_N32_
#undef GT_D32_
#undef GT_N40_
#undef GT_D40_
#undef GT_N48_
#undef GT_D48_
#undef GT_N56_
#undef GT_D56_
#undef GT_N64_
#undef GT_D64_
#undef GT_F4_

// mbarriers in shared memory (PTX ISA, "mbarrier"), by their shared-window byte address: init with the count of
// arrivals that complete a phase; arrive (release, CTA scope); wait until the phase of the given parity has
// completed (acquire).
__device__ __forceinline__ void gt_mbar_init(unsigned bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void gt_mbar_arrive(unsigned bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void gt_mbar_wait(unsigned bar, unsigned parity)
{
    unsigned done = 0;
    while (!done)
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
}

// Named barrier ID among the first (or any) COUNT threads that reach it, COUNT a multiple of 32; ID 0 is
// __syncthreads'.
template <int ID, int COUNT> __device__ __forceinline__ void gt_bar_sync()
{
    asm volatile("bar.sync %0, %1;\n" ::"n"(ID), "n"(COUNT) : "memory");
}

// A warpgroup's register budget from here on (setmaxnreg, sm_90a): every warp of the warpgroup runs it; the kernel
// needs __launch_bounds__(threads, 1) for ptxas to honour it.
template <int REGS> __device__ __forceinline__ void gt_setmaxnreg_dec()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS> __device__ __forceinline__ void gt_setmaxnreg_inc()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

#endif
