/* The library's fixed kernels (see fixed.h). */
#include "fixed.h"
#include "compile.h"
#include "family.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NVRTC (compile.c) is referenced weakly, as by cubin.c: a program that links the static library for the table
 * path alone pulls in no NVRTC, and has no fixed kernels. */
#pragma weak gt_nvrtc_compile
#pragma weak gt_cubin_free

static int device_arch(int device, char *arch, size_t n, char *msg, size_t msglen)
{
    int major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess)
        return snprintf(msg, msglen, "compute capability of device %d: %s", device,
                        cudaGetErrorString(cudaGetLastError())), -1;
    snprintf(arch, n, "sm_%d%d", major, minor);
    return 0;
}

static int load(const gt_cubin *cb, const char *tmpl, const char *arch, const char *const *names, int n,
                cudaKernel_t *kernels, char *msg, size_t msglen)
{
    cudaLibrary_t lib = NULL;
    cudaError_t e = cudaLibraryLoadData(&lib, cb->data, NULL, NULL, 0, NULL, NULL, 0);
    for (int i = 0; e == cudaSuccess && i < n; ++i) e = cudaLibraryGetKernel(&kernels[i], lib, names[i]);
    if (e == cudaSuccess) return 0;
    (void)cudaGetLastError();
    snprintf(msg, msglen, "loading %s's kernels for %s: %s", tmpl, arch, cudaGetErrorString(e));
    if (lib) cudaLibraryUnload(lib);
    return -1;
}

int gt_fixed_load(int device, const char *tmpl, const char *define, const char *const *names, int n,
                  cudaKernel_t *kernels, char *msg, size_t msglen)
{
    char arch[16];
    const char *text = gt_template_text(tmpl);
    if (!gt_nvrtc_compile) return snprintf(msg, msglen, "%s: NVRTC is not linked into this program", tmpl), -1;
    if (!text) return snprintf(msg, msglen, "%s: no template", tmpl), -1;
    if (device_arch(device, arch, sizeof arch, msg, msglen)) return -1;
    char *src = malloc(strlen(define) + strlen(text) + 1);
    if (!src) return snprintf(msg, msglen, "out of memory"), -1;
    strcat(strcpy(src, define), text);
    gt_cubin cb;
    memset(&cb, 0, sizeof cb);
    int rc = gt_nvrtc_compile(src, arch, &cb, msg, msglen) != 0 ? -1 : load(&cb, tmpl, arch, names, n, kernels, msg,
                                                                             msglen);
    if (rc == 0) msg[0] = '\0';
    gt_cubin_free(&cb);
    free(src);
    return rc;
}
