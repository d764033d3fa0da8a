/* Load a candidate's cubin as a CUDA library and launch gt_gemm (after its family's launch hook, if any, and
 * zeroing the part of the workspace the launch names; followed by gt_splitk_reduce, launched before gt_gemm has
 * finished where the reduce waits for it itself: templates/pdl.cuh). Runtime API only, so the binary starts
 * without a driver. The argument building (gt_kernel_argv_make) is tested on the CPU (tests/test_kernels.c); the
 * launches by the GPU tests (make gpu-test). */
#include "kernel.h"
#include "cuda_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gt_kernel {
    cudaLibrary_t lib;
    cudaKernel_t gemm, reduce; /* reduce is NULL unless the source was rendered with SPLITK > 1 */
    int reduce_waits;          /* the reduce waits for gt_gemm's grid itself (templates/pdl.cuh) */
    int regs;
    const gt_family *family;   /* NULL: no family, so no hook */
    gt_params params;
};

int gt_kernel_load(const void *cubin, size_t size, unsigned max_smem, const gt_family *f, const gt_params *p,
                   gt_kernel **out, char *err, size_t errlen)
{
    (void)size; /* a cubin is an ELF image: its size is in its header */
    gt_kernel *k = calloc(1, sizeof *k);
    *out = NULL;
    if (!k) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    k->family = f;
    if (p) k->params = *p;
    GT_CUDA_TRY_GOTO(cudaLibraryLoadData(&k->lib, cubin, NULL, NULL, 0, NULL, NULL, 0));
    GT_CUDA_TRY_GOTO(cudaLibraryGetKernel(&k->gemm, k->lib, "gt_gemm"));
    if (cudaLibraryGetKernel(&k->reduce, k->lib, "gt_splitk_reduce") != cudaSuccess) {
        k->reduce = NULL;
        (void)cudaGetLastError();
    }
    void *mark;
    size_t mark_size;
    if (cudaLibraryGetGlobal(&mark, &mark_size, k->lib, "gt_reduce_waits") == cudaSuccess) k->reduce_waits = 1;
    else (void)cudaGetLastError();
    if (max_smem > 48 * 1024)
        GT_CUDA_TRY_GOTO(cudaFuncSetAttribute((const void *)k->gemm, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              (int)max_smem));
    /* Clusters of up to 16 blocks where a family's hook asks for them (8 is the portable limit); a GPU without
     * clusters refuses the attribute, which changes nothing there. */
    if (cudaFuncSetAttribute((const void *)k->gemm, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess)
        (void)cudaGetLastError();
    struct cudaFuncAttributes attr;
    k->regs = cudaFuncGetAttributes(&attr, (const void *)k->gemm) == cudaSuccess ? attr.numRegs : -1;
    *out = k;
    return 0;
fail:
    if (k->lib) cudaLibraryUnload(k->lib);
    free(k);
    return -1;
}

int gt_kernel_argv_make(gt_kernel_argv *v, const gt_args *a, int batched, const unsigned grid[3],
                        const gt_launch_extra *x, char *err, size_t errlen)
{
    *v = (gt_kernel_argv){.m = a->m, .n = a->n, .k = a->k, .lda = a->lda, .ldb = a->ldb, .ldc = a->ldc,
                          .alpha = a->alpha, .beta = a->beta, .A = a->A, .B = a->B, .C = a->C, .ws = a->ws,
                          .sa = a->sa, .sb = a->sb, .sc = a->sc};
    void *own[] = {&v->m, &v->n, &v->k, &v->alpha, &v->A, &v->lda, &v->B, &v->ldb, &v->beta, &v->C, &v->ldc, &v->ws,
                   &v->sa, &v->sb, &v->sc};
    v->count = batched ? GT_GEMM_NARGS_BATCHED : GT_GEMM_NARGS;
    memcpy(v->ptr, own, (size_t)v->count * sizeof own[0]);
    if (!x) return 0;
    if (x->nextra < 0 || x->nextra > GT_LAUNCH_MAX_EXTRA)
        return snprintf(err, errlen, "%d extra kernel parameters (at most %d)", x->nextra, GT_LAUNCH_MAX_EXTRA), -1;
    for (int i = 0; i < x->nextra; ++i) {
        if (!x->size[i] || x->offset[i] > GT_LAUNCH_EXTRA_BYTES || x->size[i] > GT_LAUNCH_EXTRA_BYTES - x->offset[i])
            return snprintf(err, errlen, "extra kernel parameter %d (%u bytes at %u) outside its %d bytes", i,
                            x->size[i], x->offset[i], GT_LAUNCH_EXTRA_BYTES), -1;
        v->ptr[v->count++] = (void *)(x->bytes + x->offset[i]);
    }
    const unsigned *c = x->cluster;
    for (int d = 0; (c[0] | c[1] | c[2]) && d < 3; ++d)
        if (!c[d] || grid[d] % c[d])
            return snprintf(err, errlen, "cluster %ux%ux%u does not divide grid %ux%ux%u", c[0], c[1], c[2], grid[0],
                            grid[1], grid[2]), -1;
    return 0;
}

int gt_kernel_prepare(const gt_family *f, const gt_params *p, const gt_launch *L, const unsigned grid[3],
                      const gt_args *a, int batched, void *stream, gt_launch_extra *x, gt_kernel_argv *v, char *err,
                      size_t errlen)
{
    if (!f || !f->launch_hook) { /* the hot path of every built-in family: nothing to clear but what is read */
        x->nextra = 0;
        memset(x->cluster, 0, sizeof x->cluster);
        return gt_kernel_argv_make(v, a, batched, grid, NULL, err, errlen);
    }
    memset(x, 0, sizeof *x);
    char why[400] = "";
    if (f->launch_hook(p, L, a, stream, x, why, sizeof why))
        return snprintf(err, errlen, "launch hook of %s: %s", f->name, why[0] ? why : "refused"), -1;
    if (gt_kernel_argv_make(v, a, batched, grid, x, why, sizeof why))
        return snprintf(err, errlen, "launch hook of %s: %s", f->name, why), -1;
    return 0;
}

/* One launch of gt_gemm over grid with the arguments a (this launch's matrices of a batch): the host side
 * (gt_kernel_prepare), then on the first launch the workspace zeroing, then the launch, in a cluster where the
 * family's hook asked for one. */
static int launch_gemm(const gt_kernel *k, const gt_launch *L, const unsigned grid[3], cudaStream_t stream,
                       const gt_args *a, int batched, int first, char *err, size_t errlen)
{
    gt_launch_extra x;
    gt_kernel_argv v;
    if (gt_kernel_prepare(k->family, &k->params, L, grid, a, batched, (void *)stream, &x, &v, err, errlen)) return -1;
    if (first && L->ws_zero) GT_CUDA_TRY(cudaMemsetAsync(a->ws, 0, L->ws_zero, stream));
    dim3 g = {grid[0], grid[1], grid[2]}, block = {L->block[0], L->block[1], L->block[2]};
    if (!(x.cluster[0] | x.cluster[1] | x.cluster[2])) {
        GT_CUDA_TRY(cudaLaunchKernel((const void *)k->gemm, g, block, v.ptr, L->smem, stream));
        return 0;
    }
    cudaLaunchAttribute attr = {.id = cudaLaunchAttributeClusterDimension};
    attr.val.clusterDim.x = x.cluster[0], attr.val.clusterDim.y = x.cluster[1], attr.val.clusterDim.z = x.cluster[2];
    cudaLaunchConfig_t cfg = {.gridDim = g, .blockDim = block, .dynamicSmemBytes = L->smem, .stream = stream,
                              .attrs = &attr, .numAttrs = 1};
    GT_CUDA_TRY(cudaLaunchKernelExC(&cfg, (const void *)k->gemm, v.ptr));
    return 0;
}

/* gt_splitk_reduce after gt_gemm on the stream: where it waits for gt_gemm's grid itself (templates/pdl.cuh), as a
 * programmatic dependent launch, whose launch overlaps gt_gemm's end (0.6-1.3 us a call on an H200); else the
 * ordinary way. */
static int launch_reduce(const gt_kernel *k, const gt_launch *L, cudaStream_t stream, void **args, char *err,
                         size_t errlen)
{
    dim3 rgrid = {L->rgrid[0], L->rgrid[1], L->rgrid[2]}, rblock = {L->rblock[0], L->rblock[1], L->rblock[2]};
    if (!k->reduce_waits) {
        GT_CUDA_TRY(cudaLaunchKernel((const void *)k->reduce, rgrid, rblock, args, 0, stream));
        return 0;
    }
    cudaLaunchAttribute attr = {.id = cudaLaunchAttributeProgrammaticStreamSerialization};
    attr.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = {.gridDim = rgrid, .blockDim = rblock, .stream = stream, .attrs = &attr, .numAttrs = 1};
    GT_CUDA_TRY(cudaLaunchKernelExC(&cfg, (const void *)k->reduce, args));
    return 0;
}

int gt_kernel_launch(const gt_kernel *k, const gt_launch *L, cudaStream_t stream, const gt_args *a, char *err,
                     size_t errlen)
{
    const int batch = a->batch > 1 ? a->batch : 1;
    if ((L->splitk > 1 && !k->reduce) || (L->ws_bytes && !a->ws) || (batch > 1 && (L->splitk > 1 || L->ws_bytes))) {
        snprintf(err, errlen, "a launch that needs %s without it",
                 batch > 1 ? "one matrix of a batch" : L->ws_bytes && !a->ws ? "a workspace" : "gt_splitk_reduce");
        return -1;
    }
    gt_args now = *a;
    unsigned grid[3] = {L->grid[0], L->grid[1], L->grid[2]};
    for (int done = 0; done < batch; done += (int)grid[2]) { /* a batch past grid z's limit: several launches */
        if (batch > 1) grid[2] = (unsigned)(batch - done) < L->grid[2] ? (unsigned)(batch - done) : L->grid[2];
        now.A = a->A + a->sa * done, now.B = a->B + a->sb * done, now.C = a->C + a->sc * done;
        now.batch = batch > 1 ? (int)grid[2] : a->batch;
        if (launch_gemm(k, L, grid, stream, &now, batch > 1, done == 0, err, errlen)) return -1;
    }
    if (L->splitk > 1) {
        int m = a->m, n = a->n, ldc = a->ldc;
        float alpha = a->alpha, beta = a->beta, *C = a->C;
        const float *cws = a->ws;
        void *rargs[] = {&m, &n, &alpha, &cws, &beta, &C, &ldc};
        if (launch_reduce(k, L, stream, rargs, err, errlen)) return -1;
    }
    return 0;
}

int gt_kernel_regs(const gt_kernel *k) { return k ? k->regs : -1; }

int gt_kernel_reduce_waits(const gt_kernel *k) { return k && k->reduce && k->reduce_waits; }

void gt_kernel_unload(gt_kernel *k)
{
    if (!k) return;
    cudaLibraryUnload(k->lib);
    free(k);
}
