/* The bias broadcast behind the cuBLAS drop-in's cublasLtMatmul BIAS epilogue (src/preload/lt.c): D's columns
 * set to one vector on a stream, by templates/bias.cu (NVRTC, loaded once per device). Needs no CUDA header.
 * Tests: preload_lt_bias_template_compiles (NVRTC), preload_lt_gpu_bias_broadcast (GPU), tests/test_preload_lt.c. */
#ifndef GT_BIAS_H
#define GT_BIAS_H

#include <stddef.h>

/* D[i + j*ld] = bias[i] for i < m, j < n (column-major, ld >= m; the rows past m are not written), enqueued on
 * stream (a cudaStream_t; NULL the legacy default stream) of device, the calling thread's current device. The
 * first call on a device compiles and loads the kernel, never inside stream capture: such a call returns 1 and
 * enqueues nothing. Returns 0, 1, or -1 with err (compile, load or launch failed; a failed launch's error is
 * cleared, and a device whose compile or load failed is not tried again). Thread-safe. */
int gt_bias_broadcast(int device, void *stream, int m, int n, const float *bias, float *D, int ld, char *err,
                      size_t errlen);

#endif
