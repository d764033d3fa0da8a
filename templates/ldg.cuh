// Loads from global memory straight into registers, for an operand read exactly once (the large operand of
// templates/skinnyr.cu). Compiled with skinnyr.cu (tests/test_skinnyr.c); the CPU emulator (tests/emu/emu.h) defines
// its own versions, as for async.cuh.
#ifndef GT_LDG_CUH
#define GT_LDG_CUH

// v <- *p where ok, else v unchanged: streamed (evict first), with 256 bytes around p fetched into L2 (the next
// lanes' and rows' reads of the same lines). The predicate sits inside the instruction, so the address is computed
// whether or not it loads: written as `if (ok) v = __ldcs(p)` the compiler built the address under each column's
// predicate, twice the address arithmetic of skinnyr's loop (60 instructions more every 8 rows, 10% slower).
__device__ __forceinline__ void gt_ldg_stream(float &v, const float *p, bool ok)
{
    asm volatile("{\n .reg .pred q;\n setp.ne.b32 q, %2, 0;\n @q ld.global.cs.L2::256B.f32 %0, [%1];\n}\n"
                 : "+f"(v)
                 : "l"(p), "r"((int)ok));
}

#endif
