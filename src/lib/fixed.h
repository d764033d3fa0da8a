/* The library's fixed kernels (templates that no sweep tunes: bias.cu, ozaki.cu), compiled with NVRTC for a
 * device's architecture and loaded for the rest of the process, on first use. Used by src/lib/bias.c and
 * src/lib/backend_ozaki.c; tested through them (tests/test_preload_lt.c, tests/test_ozaki.c). */
#ifndef GT_FIXED_H
#define GT_FIXED_H

#include <cuda_runtime_api.h>
#include <stddef.h>

/* Renders define (one or more "#define" lines) before the embedded template named tmpl, compiles it for device's
 * sm_XY and loads it; kernels[i] gets the kernel named names[i]. The library stays loaded until the process ends.
 * 0, or -1 with msg (also where NVRTC is not linked in: a table-only program). */
int gt_fixed_load(int device, const char *tmpl, const char *define, const char *const *names, int n,
                  cudaKernel_t *kernels, char *msg, size_t msglen);

#endif
