/* Load a candidate's cubin as a CUDA library and launch gt_gemm (after zeroing the part of the workspace the launch
 * names, and followed by gt_splitk_reduce). Runtime API only, so the binary starts without a driver. Exercised by
 * the GPU tests (make gpu-test). */
#include "kernel.h"

#include <stdio.h>
#include <stdlib.h>

struct gt_kernel {
    cudaLibrary_t lib;
    cudaKernel_t gemm, reduce; /* reduce is NULL unless the source was rendered with SPLITK > 1 */
    int regs;
};

#define CUDA_TRY(call)                                                                                   \
    do {                                                                                                 \
        cudaError_t e_ = (call);                                                                         \
        if (e_ != cudaSuccess) {                                                                         \
            snprintf(err, errlen, "%s:%d: %s: %s", __FILE__, __LINE__, #call, cudaGetErrorString(e_));   \
            goto fail;                                                                                   \
        }                                                                                                \
    } while (0)

int gt_kernel_load(const void *cubin, size_t size, unsigned max_smem, gt_kernel **out, char *err, size_t errlen)
{
    (void)size; /* a cubin is an ELF image: its size is in its header */
    gt_kernel *k = calloc(1, sizeof *k);
    *out = NULL;
    if (!k) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    CUDA_TRY(cudaLibraryLoadData(&k->lib, cubin, NULL, NULL, 0, NULL, NULL, 0));
    CUDA_TRY(cudaLibraryGetKernel(&k->gemm, k->lib, "gt_gemm"));
    if (cudaLibraryGetKernel(&k->reduce, k->lib, "gt_splitk_reduce") != cudaSuccess) {
        k->reduce = NULL;
        (void)cudaGetLastError();
    }
    if (max_smem > 48 * 1024)
        CUDA_TRY(cudaFuncSetAttribute((const void *)k->gemm, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)max_smem));
    struct cudaFuncAttributes attr;
    k->regs = cudaFuncGetAttributes(&attr, (const void *)k->gemm) == cudaSuccess ? attr.numRegs : -1;
    *out = k;
    return 0;
fail:
    if (k->lib) cudaLibraryUnload(k->lib);
    free(k);
    return -1;
}

int gt_kernel_launch(const gt_kernel *k, const gt_launch *L, cudaStream_t stream, const gt_args *a, char *err,
                     size_t errlen)
{
    int m = a->m, n = a->n, kk = a->k, lda = a->lda, ldb = a->ldb, ldc = a->ldc;
    float alpha = a->alpha, beta = a->beta;
    const float *A = a->A, *B = a->B;
    float *C = a->C, *ws = a->ws;
    long long sa = a->sa, sb = a->sb, sc = a->sc;
    void *args[] = {&m, &n, &kk, &alpha, &A, &lda, &B, &ldb, &beta, &C, &ldc, &ws, &sa, &sb, &sc};
    dim3 grid = {L->grid[0], L->grid[1], L->grid[2]}, block = {L->block[0], L->block[1], L->block[2]};
    const int batch = a->batch > 1 ? a->batch : 1;
    if ((L->splitk > 1 && !k->reduce) || (L->ws_bytes && !ws) || (batch > 1 && (L->splitk > 1 || L->ws_bytes))) {
        snprintf(err, errlen, "a launch that needs %s without it",
                 batch > 1 ? "one matrix of a batch" : L->ws_bytes && !ws ? "a workspace" : "gt_splitk_reduce");
        return -1;
    }
    if (L->ws_zero) CUDA_TRY(cudaMemsetAsync(ws, 0, L->ws_zero, stream));
    CUDA_TRY(cudaLaunchKernel((const void *)k->gemm, grid, block, args, L->smem, stream));
    for (int done = (int)grid.z; batch > 1 && done < batch; done += (int)grid.z) { /* batches past grid z's limit */
        A += sa * grid.z, B += sb * grid.z, C += sc * grid.z;
        grid.z = (unsigned)(batch - done) < L->grid[2] ? (unsigned)(batch - done) : L->grid[2];
        CUDA_TRY(cudaLaunchKernel((const void *)k->gemm, grid, block, args, L->smem, stream));
    }
    if (L->splitk > 1) {
        const float *cws = ws;
        void *rargs[] = {&m, &n, &alpha, &cws, &beta, &C, &ldc};
        dim3 rgrid = {L->rgrid[0], L->rgrid[1], L->rgrid[2]}, rblock = {L->rblock[0], L->rblock[1], L->rblock[2]};
        CUDA_TRY(cudaLaunchKernel((const void *)k->reduce, rgrid, rblock, rargs, 0, stream));
    }
    return 0;
fail:
    return -1;
}

int gt_kernel_regs(const gt_kernel *k) { return k ? k->regs : -1; }

void gt_kernel_unload(gt_kernel *k)
{
    if (!k) return;
    cudaLibraryUnload(k->lib);
    free(k);
}
