/* The CUDA side of one compiled candidate: load its cubin into the current context and launch it on a stream.
 * Shared by the tuner's worker and the runtime loader (src/lib/loader_call.c). Needs a GPU; tested by the GPU tests. */
#ifndef GT_KERNEL_H
#define GT_KERNEL_H

#include "family.h"

#include <cuda_runtime_api.h>
#include <stddef.h>

typedef struct gt_kernel gt_kernel;

/* Load a cubin on the current device as candidate (f, p) (f NULL: a kernel of no family, launched without a
 * hook); max_smem is the largest dynamic shared memory it will launch with (the opt-in attribute is raised when
 * above 48 KiB). Returns 0, or -1 with the CUDA error in err. */
int gt_kernel_load(const void *cubin, size_t size, unsigned max_smem, const gt_family *f, const gt_params *p,
                   gt_kernel **out, char *err, size_t errlen);

/* Enqueue the GEMM (and the split-K reduce when L->splitk > 1) on stream. A batch of a->batch matrices runs with
 * grid z over them, in launches of L->grid[2] matrices (gt_family_launch made L for the batch). Where the family
 * has a launch_hook, it is asked before each launch of gt_gemm (family.h states its contract) and its parameters
 * and cluster go with that launch; a hook's refusal fails the call with "launch hook of <family>: <reason>".
 * Never synchronises or allocates. Returns 0, or -1 with the launch error in err. */
int gt_kernel_launch(const gt_kernel *k, const gt_launch *L, cudaStream_t stream, const gt_args *a, char *err,
                     size_t errlen);

/* gt_gemm's own parameters (GT_GEMM_ARGS, templates/common.cuh): 12 for one GEMM, then sa, sb, sc for a batched
 * kernel. */
#define GT_GEMM_NARGS 12
#define GT_GEMM_NARGS_BATCHED 15

/* One launch of gt_gemm as cudaLaunchKernel takes it: ptr[0 .. count) points at each parameter in order, gt_gemm's
 * own at the values held here, then a hook's extra ones into its gt_launch_extra's bytes. It points into itself
 * and into that extra, so neither may move or end while ptr is used. */
typedef struct {
    int m, n, k, lda, ldb, ldc;
    float alpha, beta;
    const float *A, *B;
    float *C, *ws;
    long long sa, sb, sc;
    int count;
    void *ptr[GT_GEMM_NARGS_BATCHED + GT_LAUNCH_MAX_EXTRA];
} gt_kernel_argv;

/* Fill v for one launch over grid of a kernel rendered batched or not, from a and the hook's extra x (NULL: none).
 * Returns 0, or -1 with err when x is not one gt_launch_extra_add could make (too many parameters, one outside
 * the bytes) or its cluster is not all 0 yet some dimension does not divide grid's. No CUDA: the CPU tests call it. */
int gt_kernel_argv_make(gt_kernel_argv *v, const gt_args *a, int batched, const unsigned grid[3],
                        const gt_launch_extra *x, char *err, size_t errlen);

/* The host side of one launch of gt_gemm over grid for a call: family f's launch_hook (none when f or its hook is
 * NULL: x then asks for no parameter and no cluster) fills x from a and stream, and v is made from a and x
 * (gt_kernel_argv_make). What gt_kernel_launch does before each launch, without CUDA (the CPU tests call it). Returns 0, or -1 with
 * "launch hook of <family>: <reason>" in err when the hook refuses the call or fills x wrongly. */
int gt_kernel_prepare(const gt_family *f, const gt_params *p, const gt_launch *L, const unsigned grid[3],
                      const gt_args *a, int batched, void *stream, gt_launch_extra *x, gt_kernel_argv *v, char *err,
                      size_t errlen);

/* Registers per thread of gt_gemm as loaded, or -1. */
int gt_kernel_regs(const gt_kernel *k);
/* 1 when k's gt_splitk_reduce waits for gt_gemm's grid itself (its cubin holds gt_reduce_waits: templates/pdl.cuh),
 * so gt_kernel_launch launches it before gt_gemm has finished (a programmatic dependent launch); else 0. */
int gt_kernel_reduce_waits(const gt_kernel *k);

void gt_kernel_unload(gt_kernel *k);

#endif
