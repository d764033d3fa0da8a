/* The cuBLAS drop-in's cublasLtMatmul BIAS epilogue (src/preload/lt.c): where the call's kernel adds the bias in
 * its epilogue (kernels/family.h: bias_epilogue) the loader runs it so (src/lib/loader_call.c); elsewhere a broadcast
 * sets D's columns to the vector on the stream, by templates/bias.cu (NVRTC, loaded once per device), and the GEMM
 * runs at beta 1. Needs no CUDA header. Tests: preload_lt_bias_template_compiles (NVRTC),
 * preload_lt_gpu_bias_broadcast and preload_lt_gpu_bias_epilogue_equals_the_pass (GPU), tests/test_preload_lt.c. */
#ifndef GT_BIAS_H
#define GT_BIAS_H

#include "gemmtune.h"

#include <stddef.h>

/* What gemmtune_sgemm would do with these arguments, from one lookup of its plan (the drop-in's cublasLtMatmul asks
 * before it writes a bias or C into D): own, one of gemmtune's kernels (not cuBLAS's, not none); fuses_bias, 1 where
 * that kernel's family adds a bias in its epilogue (kernels/family.h: bias_epilogue; one GEMM, no workspace); and,
 * with times 1, the stored times of the winner and of cuBLAS, as gemmtune_kernel_times. A call that runs no kernel
 * of gemmtune's is counted for the recorder, as by gemmtune_runs_own_kernel. Returns 0, -2 when the calling thread
 * is not on h's device (nothing counted), or -1 as gemmtune_runs_own_kernel. */
typedef struct {
    int own, fuses_bias, times;
    double kernel_ms, cublas_ms;
} gt_loader_facts;

int gt_loader_facts_of(gemmtune_handle h, void *stream, gemmtune_op transa, gemmtune_op transb, int m, int n, int k,
                       const float *A, int lda, const float *B, int ldb, const float *C, int ldc, gt_loader_facts *f);

/* Where the facts say fuses_bias: C = alpha op(A) op(B) + bias, bias one value per element of C's contiguous dimension (a row of a
 * column-major C, a column of a row-major one), rounded as the broadcast and gemmtune_sgemm at beta 1 would (bit for
 * bit); GEMMTUNE_STATUS_INVALID_VALUE where the call's kernel has no bias epilogue, or k < 1. */
gemmtune_status gt_loader_sgemm_bias(gemmtune_handle h, void *stream, gemmtune_op transa, gemmtune_op transb, int m,
                                     int n, int k, float alpha, const float *A, int lda, const float *B, int ldb,
                                     const float *bias, float *C, int ldc);

/* D[i + j*ld] = bias[i] for i < m, j < n (column-major, ld >= m; the rows past m are not written), enqueued on
 * stream (a cudaStream_t; NULL the legacy default stream) of device, the calling thread's current device. The
 * first call on a device compiles and loads the kernel, never inside stream capture: such a call returns 1 and
 * enqueues nothing. Returns 0, 1, or -1 with err (compile, load or launch failed; a failed launch's error is
 * cleared, and a device whose compile or load failed is not tried again). Thread-safe. */
int gt_bias_broadcast(int device, void *stream, int m, int n, const float *bias, float *D, int ld, char *err,
                      size_t errlen);

#endif
