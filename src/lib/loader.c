/* The gemmtune handle's life: statuses and errors, options, binding to a device, create and destroy. The call
 * itself is in loader_call.c. Design notes in src/lib/gemmtune.h. CPU tests (statuses, no device) in
 * tests/test_loader.c, GPU tests (results against cuBLAS, overheads) in tests/test_loader_gpu.c. */
#include "abi.h"
#include "cubin.h"
#include "device.h"
#include "handle.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Weak: a program linking the static library for the table path alone pulls in no NVRTC (src/lib/cubin.c); then
 * a call that needs a compile reports so. (The shared library always has it.) */
#pragma weak gt_cubin_free

static _Thread_local char last_error[1024];

gemmtune_status gt_loader_fail(gemmtune_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return st;
}

/* For the calls that fail on the warm path (a plan with nothing to run, under fallback none): a copy, no formatting. */
gemmtune_status gt_loader_fail_text(gemmtune_status st, const char *text)
{
    size_t n = strnlen(text, sizeof last_error - 1);
    memcpy(last_error, text, n);
    last_error[n] = '\0';
    return st;
}

const char *gemmtune_last_error(void) { return last_error; }

const char *gemmtune_status_string(gemmtune_status s)
{
    switch (s) {
    case GEMMTUNE_SUCCESS: return "GEMMTUNE_SUCCESS: no error";
    case GEMMTUNE_STATUS_INVALID_VALUE: return "GEMMTUNE_STATUS_INVALID_VALUE: invalid argument (NULL, size or leading dimension)";
    case GEMMTUNE_STATUS_DB_ERROR: return "GEMMTUNE_STATUS_DB_ERROR: database missing, unreadable or not a gemmtune database";
    case GEMMTUNE_STATUS_JSON_ERROR: return "GEMMTUNE_STATUS_JSON_ERROR: exported JSON missing, malformed or of another schema";
    case GEMMTUNE_STATUS_TABLE_ERROR: return "GEMMTUNE_STATUS_TABLE_ERROR: compiled-in winner table has a bad row";
    case GEMMTUNE_STATUS_NO_DEVICE: return "GEMMTUNE_STATUS_NO_DEVICE: no CUDA device or driver";
    case GEMMTUNE_STATUS_WRONG_DEVICE: return "GEMMTUNE_STATUS_WRONG_DEVICE: current device is not the handle's";
    case GEMMTUNE_STATUS_NO_KERNEL: return "GEMMTUNE_STATUS_NO_KERNEL: no tuned kernel applies and the fallback is none";
    case GEMMTUNE_STATUS_COMPILE_ERROR: return "GEMMTUNE_STATUS_COMPILE_ERROR: NVRTC failed or is not linked in";
    case GEMMTUNE_STATUS_CUDA_ERROR: return "GEMMTUNE_STATUS_CUDA_ERROR: CUDA load, allocation or launch failed";
    case GEMMTUNE_STATUS_CUBLAS_ERROR: return "GEMMTUNE_STATUS_CUBLAS_ERROR: cuBLAS fallback failed or is not linked in";
    case GEMMTUNE_STATUS_NOT_PREPARED: return "GEMMTUNE_STATUS_NOT_PREPARED: first call of a shape inside stream capture";
    case GEMMTUNE_STATUS_ALLOC_FAILED: return "GEMMTUNE_STATUS_ALLOC_FAILED: out of host memory";
    }
    return "GEMMTUNE_STATUS_?: unknown status";
}

/* Device identity and the limits legality is judged under. */
static gemmtune_status bind_device(struct gemmtune_context *h, const gemmtune_options *opt)
{
    int count = 0, dev = opt ? opt->device : -1;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0)
        return gt_loader_fail(GEMMTUNE_STATUS_NO_DEVICE, "no CUDA device: %s", e ? cudaGetErrorString(e) : "0 devices");
    if (dev < 0 && cudaGetDevice(&dev) != cudaSuccess) dev = 0;
    if (dev >= count) return gt_loader_fail(GEMMTUNE_STATUS_NO_DEVICE, "device %d of %d", dev, count);
    struct cudaDeviceProp p;
    if ((e = cudaGetDeviceProperties(&p, dev)) != cudaSuccess)
        return gt_loader_fail(GEMMTUNE_STATUS_NO_DEVICE, "device %d: %s", dev, cudaGetErrorString(e));
    h->device = dev;
    const gt_gpu_model model = gt_device_model(&p);
    snprintf(h->dev.name, sizeof h->dev.name, "%s", model.name);
    h->dev.lim = gt_device_limits(&p);
    if (opt && opt->arch) snprintf(h->arch, sizeof h->arch, "%s", opt->arch);
    else snprintf(h->arch, sizeof h->arch, "sm_%d%d", p.major, p.minor);
    return GEMMTUNE_SUCCESS;
}

gemmtune_status gt_loader_create(gemmtune_handle *out, gt_winner_set *set, gt_obtain_fn obtain, void *ctx,
                                 void (*ctx_free)(void *), const gemmtune_options *opt)
{
    char err[256];
    gemmtune_status st;
    struct gemmtune_context *h = calloc(1, sizeof *h);
    *out = NULL;
    if (!h) {
        st = gt_loader_fail(GEMMTUNE_STATUS_ALLOC_FAILED, "handle");
        goto fail;
    }
    if (gt_loader_fallback(opt ? opt->fallback : GEMMTUNE_FALLBACK_ENV, &h->fallback, err, sizeof err)) {
        st = gt_loader_fail(GEMMTUNE_STATUS_INVALID_VALUE, "%s", err);
        goto fail;
    }
    if ((st = bind_device(h, opt))) goto fail;
    if (gt_serve_model_get(&h->model, err, sizeof err)) {
        st = gt_loader_fail(GEMMTUNE_STATUS_INVALID_VALUE, "%s", err);
        goto fail;
    }
    h->column_major = opt && opt->column_major;
    const char *rec = opt && opt->record_path ? opt->record_path : getenv("GEMMTUNE_RECORD");
    if (rec && *rec) snprintf(h->record_path, sizeof h->record_path, "%s", rec);
    h->set = *set;
    memset(set, 0, sizeof *set);
    h->obtain = obtain;
    h->obtain_ctx = ctx;
    h->ctx_free = ctx_free;
    pthread_mutex_init(&h->lock, NULL);
    *out = h;
    return GEMMTUNE_SUCCESS;
fail:
    free(h);
    gt_loader_set_free(set);
    if (ctx_free) ctx_free(ctx);
    return st;
}

/* Table path: embedded cubins are used before this is asked; otherwise NVRTC when it is linked in. */
static gemmtune_status nvrtc_obtain(void *ctx, const char *src, const char *arch, unsigned char **data,
                                    size_t *size, int *cached, char *err, size_t errlen)
{
    gt_cubin cb;
    (void)ctx;
    int rc = gt_cubin_provide(NULL, src, arch, &cb, cached, err, errlen);
    *data = cb.data, *size = cb.size;
    cb.data = NULL;
    if (cb.log || cb.size || rc == 0) gt_cubin_free(&cb);
    return rc ? GEMMTUNE_STATUS_COMPILE_ERROR : GEMMTUNE_SUCCESS;
}

/* gemmtune_create_from_table of either options layout, once they are the full struct. */
static gemmtune_status create_from_table(gemmtune_handle *handle, const gemmtune_winner_row *rows, int nrows,
                                         const gemmtune_options *opt)
{
    char err[512];
    gt_winner_set set;
    if (gt_loader_set_from_table(rows, nrows, &set, err, sizeof err))
        return gt_loader_fail(GEMMTUNE_STATUS_TABLE_ERROR, "%s", err);
    return gt_loader_create(handle, &set, nvrtc_obtain, NULL, NULL, opt);
}

gemmtune_status GT_ABI_SIZED(gemmtune_create_from_table)(gemmtune_handle *handle, const gemmtune_winner_row *rows,
                                                         int nrows, const gemmtune_options *opt)
{
    char err[512];
    gemmtune_options full;
    if (!handle) return gt_loader_fail(GEMMTUNE_STATUS_INVALID_VALUE, "gemmtune_create_from_table: handle is NULL");
    *handle = NULL;
    gemmtune_status st = gt_options_resolve(opt, &full, err, sizeof err);
    return st ? gt_loader_fail(st, "gemmtune_create_from_table: %s", err) : create_from_table(handle, rows, nrows, &full);
}

gemmtune_status gt_legacy_create_from_table(gemmtune_handle *handle, const gt_winner_row_v02 *rows, int nrows,
                                            const gt_options_v02 *opt)
{
    gemmtune_options full;
    if (!handle) return gt_loader_fail(GEMMTUNE_STATUS_INVALID_VALUE, "gemmtune_create_from_table: handle is NULL");
    *handle = NULL;
    gt_options_from_v02(opt, &full);
    if (nrows < 0 || (nrows > 0 && !rows)) return create_from_table(handle, NULL, nrows, &full); /* refused there */
    gemmtune_winner_row *now = calloc(nrows > 0 ? (size_t)nrows : 1, sizeof *now);
    if (!now) return gt_loader_fail(GEMMTUNE_STATUS_ALLOC_FAILED, "gemmtune_create_from_table: %d rows", nrows);
    for (int i = 0; i < nrows; ++i) { /* the old layout, member by member; each row one GEMM */
        const gt_winner_row_v02 *r = &rows[i];
        now[i] = (gemmtune_winner_row){r->gpu_name, r->cc_major, r->cc_minor, r->sm_count, r->m, r->n, r->k,
                                       r->layout, r->family, r->params, r->tflops, r->ratio_vs_cublas, r->cubin,
                                       r->cubin_size, r->cubin_arch, 1};
    }
    gemmtune_status st = create_from_table(handle, now, nrows, &full); /* rows are copied; cubins referenced */
    free(now);
    return st;
}

GT_ABI_VERSIONS(gemmtune_create_from_table, gt_legacy_create_from_table)

void gemmtune_destroy(gemmtune_handle h)
{
    char err[512];
    if (!h) return;
    if (h->record_path[0] && gt_record_write(h, err, sizeof err))
        fprintf(stderr, "gemmtune: recording untuned calls: %s\n", err);
    int cur = -1;
    cudaGetDevice(&cur);
    if (cur != h->device) cudaSetDevice(h->device);
    for (int b = 0; b < GT_NBUCKET; ++b)
        for (gt_plan *p = atomic_load(&h->buckets[b]), *next; p; p = next) {
            next = p->next;
            if (p->bplan) p->be->release(p->bplan);
            free(p);
        }
    for (gt_kentry *e = h->kernels, *next; e; e = next) {
        next = e->next;
        gt_kernel_unload(e->k);
        free(e);
    }
    for (gt_wsentry *w = atomic_load(&h->ws), *next; w; w = next) next = w->next, cudaFree(w->ptr), free(w);
    gt_backend_ctxs_close(&h->backends);
    if (cur >= 0 && cur != h->device) cudaSetDevice(cur);
    if (h->ctx_free) h->ctx_free(h->obtain_ctx);
    gt_loader_set_free(&h->set);
    pthread_mutex_destroy(&h->lock);
    free(h);
}
