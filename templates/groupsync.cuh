// For a template whose warps work in groups, each with a cp.async ring of its own (skinnyt): a copy without
// async.cuh's memory clobber, and a named barrier for one group's threads. tests/emu/emu.h stands in for both.
#ifndef GT_GROUPSYNC_CUH
#define GT_GROUPSYNC_CUH

// A cp.async of SIZE bytes (4 or 16; bytes of them read, the rest zero-filled). No memory clobber: a stage's copies
// only write a ring slot that no thread reads before the group's next barrier (which has one, as the wait does), so
// the compiler may move the reads of the slot being computed across them.
template <int SIZE> __device__ __forceinline__ void gt_cp_async_free(unsigned dst, const float *src, int bytes)
{
    static_assert(SIZE == 4 || SIZE == 16, "cp.async: 4 or 16 bytes");
    if constexpr (SIZE == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes));
    else asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(bytes));
}

// Named barrier id (1 to 15; 0 is __syncthreads's) for the N threads (whole warps) of a group; a memory clobber, so
// that no read of shared memory moves above it.
template <int N> __device__ __forceinline__ void gt_bar_named(int id)
{
    static_assert(N % 32 == 0, "a named barrier counts whole warps");
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "n"(N) : "memory");
}

#endif
