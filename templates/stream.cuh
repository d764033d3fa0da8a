// Streaming copies: cp.async (sm_80+) with an L2 evict-first policy, for an operand that is read exactly once (the
// large operand of templates/skinny.cu). Its lines are the first L2 gives up, so the stream neither evicts what the
// program keeps there nor forces dirty lines out to DRAM in the middle of the read. Compiled with skinny.cu
// (tests/test_skinny.c); the CPU emulator (tests/emu/emu.h) defines its own versions, as for async.cuh.
#ifndef GT_STREAM_CUH
#define GT_STREAM_CUH

// The policy operand of the copies below: evict first, for every line they bring into L2.
__device__ __forceinline__ unsigned long long gt_evict_first()
{
    unsigned long long policy;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
    return policy;
}

// gt_cp_async (async.cuh) with the L2 policy: SIZE bytes (4 or 16) from src to the shared-window address dst, the
// bytes past `bytes` zero-filled.
template <int SIZE>
__device__ __forceinline__ void gt_cp_async_stream(unsigned dst, const float *src, int bytes, unsigned long long policy)
{
    static_assert(SIZE == 4 || SIZE == 16, "cp.async: 4 or 16 bytes");
    if constexpr (SIZE == 16)
        asm volatile("cp.async.cg.shared.global.L2::cache_hint [%0], [%1], 16, %2, %3;\n" ::"r"(dst), "l"(src),
                     "r"(bytes), "l"(policy)
                     : "memory");
    else
        asm volatile("cp.async.ca.shared.global.L2::cache_hint [%0], [%1], 4, %2, %3;\n" ::"r"(dst), "l"(src),
                     "r"(bytes), "l"(policy)
                     : "memory");
}

#endif
