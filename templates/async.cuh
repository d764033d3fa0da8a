// Asynchronous global-to-shared copies (cp.async, sm_80+) and their commit groups, for the pipelined families
// (multistage.cu, tf32x3.cu). Compiled with them (tests/test_multistage.c, tests/test_tf32x3.c); the CPU emulator
// (tests/emu/emu.h) defines its own versions of these, so a template's pipeline runs there as written.
#ifndef GT_ASYNC_CUH
#define GT_ASYNC_CUH

#define GT_CP_ASYNC(op) \
    asm volatile(op " [%0], [%1], %3, %2;\n" ::"r"(dst), "l"(src), "r"(bytes), "n"(SIZE) : "memory")

// Copy SIZE bytes (4 or 16) from src to the shared-window byte address dst (__cvta_generic_to_shared: 32-bit
// arithmetic, no generic-to-shared conversion per copy) with a source size: the bytes past `bytes` are zero-filled,
// so edge tiles need no other copy routine. 16-byte copies bypass L1 (.cg), 4-byte ones cannot (.ca). L2: add the
// 128-byte L2 prefetch hint (multistage: it matters for the 4-byte copies, whose warps touch only 32 bytes of a
// row per tile).
template <int SIZE, bool L2 = false>
__device__ __forceinline__ void gt_cp_async(unsigned dst, const float *src, int bytes)
{
    static_assert(SIZE == 4 || SIZE == 16, "cp.async: 4 or 16 bytes");
    if constexpr (SIZE == 16 && L2) GT_CP_ASYNC("cp.async.cg.shared.global.L2::128B");
    else if constexpr (SIZE == 16) GT_CP_ASYNC("cp.async.cg.shared.global");
    else if constexpr (L2) GT_CP_ASYNC("cp.async.ca.shared.global.L2::128B");
    else GT_CP_ASYNC("cp.async.ca.shared.global");
}
#undef GT_CP_ASYNC

// Close the group of copies issued since the last commit.
__device__ __forceinline__ void gt_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Wait until at most N committed groups are pending (this thread's copies only: a barrier follows for the block's).
template <int N> __device__ __forceinline__ void gt_cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

#endif
