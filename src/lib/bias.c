/* The bias broadcast (bias.h): templates/bias.cu compiled with NVRTC for the device's architecture and loaded
 * once per device, then one launch per call. Tests: tests/test_preload_lt.c (the compile on the CPU, the
 * broadcast on a GPU).
 *
 * Why a kernel (nothing was measured): the alternative without one, copying the bias into D's first column and
 * then doubling the filled columns with cudaMemcpy2DAsync, takes 1 + ceil(log2 n) API calls of a few µs of host
 * time each (13 for n = 4096), where this is a single launch; both write D once. The one-time cost is an NVRTC
 * compile of a ten-line kernel per device and process. Either way D is written once and read back by the GEMM
 * (beta = 1): O(mn) traffic beside the GEMM's O(mnk) work, which a bias epilogue fused into gemmtune's kernels
 * would remove. */
#include "bias.h"

#include "cuda_check.h"
#include "fixed.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    MAX_DEVICES = 64,  /* as the drop-in: ordinals past it are not served */
    THREADS = 256,     /* threads per block: rendered into the source as GT_BIAS_THREADS */
    MAX_GRID_Y = 65535 /* gridDim.y's limit; the kernel walks the columns beyond it */
};

static _Atomic(cudaKernel_t) loaded[MAX_DEVICES];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char failed[MAX_DEVICES][256]; /* why the device's compile or load failed; "" while not failed */

/* Loading a library is not a capture-safe call under the global capture mode: never while the stream captures.
 * Any error of the query counts as capturing. */
static int capturing(cudaStream_t stream)
{
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    cudaError_t e = cudaStreamIsCapturing(stream, &cs);
    if (e != cudaSuccess) (void)cudaGetLastError();
    return e != cudaSuccess || cs != cudaStreamCaptureStatusNone;
}

/* Compile for the device's sm_XY and load; the kernel handle is published once it is usable. */
static int compile_and_load(int device, char *msg, size_t msglen)
{
    static const char *const names[] = {"gt_bias_broadcast"};
    char define[48];
    cudaKernel_t k = NULL;
    snprintf(define, sizeof define, "#define GT_BIAS_THREADS %d\n", THREADS);
    if (gt_fixed_load(device, "bias.cu", define, names, 1, &k, msg, msglen)) return -1;
    atomic_store_explicit(&loaded[device], k, memory_order_release); /* kept loaded until the process ends */
    return 0;
}

/* The device's kernel, loaded on first use: 0 with *k, 1 while the stream captures, -1 with err. */
static int kernel_for(int device, cudaStream_t stream, cudaKernel_t *k, char *err, size_t errlen)
{
    if ((*k = atomic_load_explicit(&loaded[device], memory_order_acquire))) return 0;
    pthread_mutex_lock(&lock);
    int rc = 0;
    if ((*k = atomic_load_explicit(&loaded[device], memory_order_acquire))) rc = 0;
    else if (failed[device][0]) rc = -1;
    else if (capturing(stream)) rc = 1;
    else if ((rc = compile_and_load(device, failed[device], sizeof failed[device])) == 0) *k = loaded[device];
    if (rc < 0) snprintf(err, errlen, "%s", failed[device][0] ? failed[device] : "bias kernel not loaded");
    pthread_mutex_unlock(&lock);
    return rc;
}

int gt_bias_broadcast(int device, void *stream, int m, int n, const float *bias, float *D, int ld, char *err,
                      size_t errlen)
{
    if (device < 0 || device >= MAX_DEVICES || m < 0 || n < 0 || ld < (m > 1 ? m : 1))
        return snprintf(err, errlen, "gt_bias_broadcast: bad arguments (device %d, %dx%d, ld %d)", device, m, n, ld),
               -1;
    if (m == 0 || n == 0) return 0;
    cudaKernel_t k = NULL;
    int rc = kernel_for(device, (cudaStream_t)stream, &k, err, errlen);
    if (rc != 0) return rc;
    dim3 grid = {(unsigned)((m + THREADS - 1) / THREADS), (unsigned)(n < MAX_GRID_Y ? n : MAX_GRID_Y), 1};
    dim3 block = {THREADS, 1, 1};
    void *args[] = {&m, &n, &bias, &D, &ld};
    GT_CUDA_CHECK(cudaLaunchKernel((const void *)k, grid, block, args, 0, (cudaStream_t)stream),
                  "bias broadcast launch", (void)cudaGetLastError(); return -1);
    return 0;
}
