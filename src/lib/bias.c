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

#include "compile.h"
#include "cuda_check.h"
#include "family.h"

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
    int major = 0, minor = 0, rc = -1;
    char arch[16], *src = NULL;
    const char *tmpl = gt_template_text("bias.cu");
    gt_cubin cb;
    cudaLibrary_t lib = NULL;
    cudaKernel_t k = NULL;
    memset(&cb, 0, sizeof cb);
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
        snprintf(msg, msglen, "compute capability of device %d: %s", device, cudaGetErrorString(cudaGetLastError()));
        return -1;
    }
    snprintf(arch, sizeof arch, "sm_%d%d", major, minor);
    if (!tmpl || !(src = malloc(strlen(tmpl) + 64))) return snprintf(msg, msglen, "bias.cu: no template"), -1;
    sprintf(src, "#define GT_BIAS_THREADS %d\n%s", THREADS, tmpl);
    if (gt_nvrtc_compile(src, arch, &cb, msg, msglen) != 0) goto done;
    cudaError_t e = cudaLibraryLoadData(&lib, cb.data, NULL, NULL, 0, NULL, NULL, 0);
    if (e == cudaSuccess) e = cudaLibraryGetKernel(&k, lib, "gt_bias_broadcast");
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(msg, msglen, "loading the bias kernel for %s: %s", arch, cudaGetErrorString(e));
        if (lib) cudaLibraryUnload(lib);
        goto done;
    }
    atomic_store_explicit(&loaded[device], k, memory_order_release); /* kept loaded until the process ends */
    msg[0] = '\0';
    rc = 0;
done:
    gt_cubin_free(&cb);
    free(src);
    return rc;
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
