/* The CUDA side of one compiled candidate: load its cubin into the current context and launch it on a stream.
 * Shared by the tuner's worker and the runtime loader (src/lib/loader_call.c). Needs a GPU; tested by the GPU tests. */
#ifndef GT_KERNEL_H
#define GT_KERNEL_H

#include "family.h"

#include <cuda_runtime_api.h>
#include <stddef.h>

typedef struct gt_kernel gt_kernel;

/* Device-side arguments of one GEMM call (row-major, see templates/common.cuh). */
typedef struct {
    int m, n, k;
    int ta, tb;         /* layout (baked into a candidate's cubin; read by cuBLAS runs) */
    float alpha, beta;
    const float *A, *B;
    float *C;
    int lda, ldb, ldc;
    float *ws;          /* split-K workspace of at least gt_launch.ws_bytes, NULL when splitk == 1 */
    int batch;          /* matrices in a strided batch; 0 and 1 both mean one GEMM */
    long long sa, sb, sc; /* elements from one matrix of A, B, C to the next (batch > 1) */
} gt_args;

/* Load a cubin on the current device; max_smem is the largest dynamic shared memory it will launch with (the
 * opt-in attribute is raised when above 48 KiB). Returns 0, or -1 with the CUDA error in err. */
int gt_kernel_load(const void *cubin, size_t size, unsigned max_smem, gt_kernel **out, char *err, size_t errlen);

/* Enqueue the GEMM (and the split-K reduce when L->splitk > 1) on stream. A batch of a->batch matrices runs with
 * grid z over them, in launches of L->grid[2] matrices (gt_family_launch made L for the batch). Never synchronises
 * or allocates. Returns 0, or -1 with the launch error in err. */
int gt_kernel_launch(const gt_kernel *k, const gt_launch *L, cudaStream_t stream, const gt_args *a, char *err,
                     size_t errlen);

/* Registers per thread of gt_gemm as loaded, or -1. */
int gt_kernel_regs(const gt_kernel *k);

void gt_kernel_unload(gt_kernel *k);

#endif
