// gt_splitk_reduce launched before gt_gemm has finished (a programmatic dependent launch, sm_90+), for the families
// whose K split ends in a reduce kernel of their own (skinny.cu, skinnyr.cu): the reduce's launch overlaps the end
// of gt_gemm's grid, and the reduce waits, before it reads anything, until that grid has completed and its writes
// are visible. The host launches a reduce that way only where the cubin holds gt_reduce_waits (src/lib/kernel.c),
// which this header defines only for sm_90+, where the wait is compiled in; any other reduce is launched after
// gt_gemm the ordinary way. tests/test_launch.c checks that every template including this header calls
// gt_wait_gemm() first thing in its reduce. On a GPU before sm_90 and in the CPU emulator the wait is empty.
//
// gt_gemm does not signal the reduce early (griddepcontrol.launch_dependents): with the signal at its start or after
// its main loop, skinnyr's reduce blocks took SMs while its last blocks ran and it was 2-7% slower than without;
// without it, the launch alone overlaps, 0.6-1.3 us a call (docs/BENCHMARKS.md, 2026-11-28, twenty-third session).
#ifndef GT_PDL_CUH
#define GT_PDL_CUH

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
// Read by the host (cudaLibraryGetGlobal): this cubin's reduce waits for gt_gemm's grid.
extern "C" __device__ int gt_reduce_waits = 1;
#endif

// In gt_splitk_reduce, first thing: until gt_gemm's grid has completed and its memory is visible (at once where the
// reduce was launched the ordinary way).
__device__ __forceinline__ void gt_wait_gemm()
{
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

#endif
