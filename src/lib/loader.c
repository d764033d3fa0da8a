/* The gemmtune handle: plans (selection + loaded kernel + launch geometry) cached per call signature, split-K
 * workspaces per stream, the cuBLAS fallback, and gemmtune_sgemm. Design notes in src/gemmtune.h.
 * CPU tests (statuses, no device) and GPU tests (results against cuBLAS, overheads) in tests/test_loader.c. */
#include "kernel.h"
#include "compile.h"
#include "loader.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Weak: a program linking the static library for the table path alone pulls in neither NVRTC nor cuBLAS; then
 * these are NULL and a call that needs them reports so. (The shared library always has them.) */
#pragma weak gt_nvrtc_compile
#pragma weak gt_cubin_free
#pragma weak cublasCreate_v2
#pragma weak cublasDestroy_v2
#pragma weak cublasSetStream_v2
#pragma weak cublasSgemm_v2

enum { NBUCKET = 256 };

/* A call signature's plan. Immutable once published, freed only by gemmtune_destroy, so readers need no lock. */
typedef struct plan {
    struct plan *next;
    gt_call call;
    gt_choice choice;
    const gt_kernel *kernel; /* NULL for cuBLAS */
    gt_launch L;
} plan;

/* One loaded kernel per (family, params, layout, dynamic smem); under the handle's lock. */
typedef struct kentry {
    struct kentry *next;
    const gt_family *family;
    gt_params params;
    int ta, tb;
    unsigned smem;
    gt_kernel *k;
} kentry;

/* A split-K workspace of one stream (and, for cudaStreamPerThread, one host thread). Newest first. */
typedef struct wsentry {
    struct wsentry *next;
    void *stream;
    pthread_t thread;
    float *ptr;
    size_t bytes;
} wsentry;

struct gemmtune_context {
    int device, column_major;
    gemmtune_fallback fallback;
    gt_device_id dev;
    char arch[32];
    gt_winner_set set;
    gt_obtain_fn obtain;
    void *obtain_ctx;
    void (*ctx_free)(void *);
    pthread_mutex_t lock;        /* plan creation, kernel cache, obtain (db is single-threaded), workspaces */
    pthread_mutex_t cublas_lock; /* a cuBLAS handle has one stream at a time */
    cublasHandle_t cublas;
    kentry *kernels;
    gt_loader_counters count;    /* under lock */
    _Atomic(plan *) buckets[NBUCKET];
    _Atomic(wsentry *) ws;
};

static _Thread_local char last_error[1024];

gemmtune_status gt_loader_fail(gemmtune_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
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

void gemmtune_options_init(gemmtune_options *opt)
{
    if (!opt) return;
    memset(opt, 0, sizeof *opt);
    opt->device = -1;
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
    snprintf(h->dev.name, sizeof h->dev.name, "%.127s", p.name);
    h->dev.lim = (gt_limits){.cc_major = p.major, .cc_minor = p.minor, .max_threads_per_block = p.maxThreadsPerBlock,
                             .max_smem_per_block = (int)p.sharedMemPerBlock,
                             .max_smem_optin = (int)p.sharedMemPerBlockOptin, .max_regs_per_block = p.regsPerBlock,
                             .max_regs_per_thread = 255, .sm_count = p.multiProcessorCount};
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
    h->column_major = opt && opt->column_major;
    h->set = *set;
    memset(set, 0, sizeof *set);
    h->obtain = obtain;
    h->obtain_ctx = ctx;
    h->ctx_free = ctx_free;
    pthread_mutex_init(&h->lock, NULL);
    pthread_mutex_init(&h->cublas_lock, NULL);
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
    (void)ctx;
    *cached = 0;
    char msg[512];
    if (!gt_nvrtc_compile) {
        snprintf(err, errlen, "kernel not embedded for %s and NVRTC is not linked in", arch);
        return GEMMTUNE_STATUS_COMPILE_ERROR;
    }
    gt_cubin cb;
    int rc = gt_nvrtc_compile(src, arch, &cb, msg, sizeof msg);
    if (rc) snprintf(err, errlen, "NVRTC for %s: %s", arch, rc > 0 && cb.log ? cb.log : msg);
    *data = cb.data;
    *size = cb.size;
    cb.data = NULL;
    gt_cubin_free(&cb);
    return rc ? GEMMTUNE_STATUS_COMPILE_ERROR : GEMMTUNE_SUCCESS;
}

gemmtune_status gemmtune_create_from_table(gemmtune_handle *handle, const gemmtune_winner_row *rows, int nrows,
                                           const gemmtune_options *opt)
{
    char err[512];
    gt_winner_set set;
    if (!handle) return gt_loader_fail(GEMMTUNE_STATUS_INVALID_VALUE, "gemmtune_create_from_table: handle is NULL");
    *handle = NULL;
    if (gt_loader_set_from_table(rows, nrows, &set, err, sizeof err))
        return gt_loader_fail(GEMMTUNE_STATUS_TABLE_ERROR, "%s", err);
    return gt_loader_create(handle, &set, nvrtc_obtain, NULL, NULL, opt);
}

void gemmtune_destroy(gemmtune_handle h)
{
    if (!h) return;
    int cur = -1;
    cudaGetDevice(&cur);
    if (cur != h->device) cudaSetDevice(h->device);
    for (int b = 0; b < NBUCKET; ++b)
        for (plan *p = atomic_load(&h->buckets[b]), *next; p; p = next) next = p->next, free(p);
    for (kentry *e = h->kernels, *next; e; e = next) {
        next = e->next;
        gt_kernel_unload(e->k);
        free(e);
    }
    for (wsentry *w = atomic_load(&h->ws), *next; w; w = next) next = w->next, cudaFree(w->ptr), free(w);
    if (h->cublas) cublasDestroy(h->cublas);
    if (cur >= 0 && cur != h->device) cudaSetDevice(cur);
    if (h->ctx_free) h->ctx_free(h->obtain_ctx);
    gt_loader_set_free(&h->set);
    pthread_mutex_destroy(&h->lock);
    pthread_mutex_destroy(&h->cublas_lock);
    free(h);
}

static unsigned call_hash(const gt_call *c)
{
    unsigned long long v[] = {(unsigned)c->shape.m, (unsigned)c->shape.n, (unsigned)c->shape.k,
                              (unsigned)(c->shape.ta * 2 + c->shape.tb), (unsigned long long)c->lda,
                              (unsigned long long)c->ldb, (unsigned long long)c->ldc,
                              (unsigned)(c->align_a * 289 + c->align_b * 17 + c->align_c)};
    unsigned long long h = 14695981039346656037ull;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; ++i) h = (h ^ v[i]) * 1099511628211ull;
    return (unsigned)(h ^ (h >> 32)) % NBUCKET;
}

static int call_equal(const gt_call *a, const gt_call *b)
{
    return a->shape.m == b->shape.m && a->shape.n == b->shape.n && a->shape.k == b->shape.k &&
           a->shape.ta == b->shape.ta && a->shape.tb == b->shape.tb && a->lda == b->lda && a->ldb == b->ldb &&
           a->ldc == b->ldc && a->align_a == b->align_a && a->align_b == b->align_b && a->align_c == b->align_c;
}

/* The warm path: acquire loads pair with the release store that published each node. */
static const plan *find_plan(struct gemmtune_context *h, const gt_call *c, unsigned b)
{
    for (const plan *p = atomic_load_explicit(&h->buckets[b], memory_order_acquire); p; p = p->next)
        if (call_equal(&p->call, c)) return p;
    return NULL;
}

static int capturing(void *stream)
{
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    return cudaStreamIsCapturing((cudaStream_t)stream, &cs) == cudaSuccess && cs != cudaStreamCaptureStatusNone;
}

/* Under h->lock. The cubin: embedded in the table row when it is for this arch, else obtain (cache/NVRTC). */
static gemmtune_status load_kernel(struct gemmtune_context *h, const gt_choice *c, const gt_shape *s,
                                   unsigned smem, const gt_kernel **out)
{
    for (kentry *e = h->kernels; e; e = e->next)
        if (e->family == c->family && !memcmp(&e->params, &c->params, sizeof e->params) && e->ta == s->ta &&
            e->tb == s->tb && e->smem == smem)
            return *out = e->k, GEMMTUNE_SUCCESS;
    char err[4096];
    unsigned char *data = NULL;
    size_t size = 0;
    const unsigned char *bin = NULL;
    gemmtune_status st = GEMMTUNE_SUCCESS;
    if (c->row >= 0 && h->set.cubin && h->set.cubin[c->row] && !strcmp(h->set.cubin_arch[c->row], h->arch)) {
        bin = h->set.cubin[c->row];
        size = h->set.cubin_size[c->row];
        h->count.embedded++;
    } else {
        int cached = 0;
        char *src = gt_render(c->family, &c->params, s->ta, s->tb, err, sizeof err);
        if (!src) return gt_loader_fail(GEMMTUNE_STATUS_COMPILE_ERROR, "%s", err);
        st = h->obtain(h->obtain_ctx, src, h->arch, &data, &size, &cached, err, sizeof err);
        free(src);
        if (st) return gt_loader_fail(st, "%s", err);
        bin = data;
        ++*(cached ? &h->count.cache_hits : &h->count.compiled);
    }
    kentry *e = calloc(1, sizeof *e);
    if (!e) st = gt_loader_fail(GEMMTUNE_STATUS_ALLOC_FAILED, "kernel cache entry");
    else if (gt_kernel_load(bin, size, smem, &e->k, err, sizeof err))
        st = gt_loader_fail(GEMMTUNE_STATUS_CUDA_ERROR, "loading %s on %s: %s", c->family->name, h->arch, err);
    free(data);
    if (st) return free(e), st;
    *e = (kentry){h->kernels, c->family, c->params, s->ta, s->tb, smem, e->k};
    h->kernels = e;
    h->count.kernels++;
    *out = e->k;
    return GEMMTUNE_SUCCESS;
}

static gemmtune_status ensure_cublas(struct gemmtune_context *h)
{
    if (h->cublas) return GEMMTUNE_SUCCESS;
    if (!cublasCreate_v2) return gt_loader_fail(GEMMTUNE_STATUS_CUBLAS_ERROR, "cuBLAS is not linked in");
    cublasStatus_t cs = cublasCreate(&h->cublas);
    if (cs != CUBLAS_STATUS_SUCCESS) {
        h->cublas = NULL;
        return gt_loader_fail(GEMMTUNE_STATUS_CUBLAS_ERROR, "cublasCreate: status %d", (int)cs);
    }
    return GEMMTUNE_SUCCESS;
}

/* Cold path, under h->lock: select, load, publish. Another thread may have published the plan meanwhile. */
static gemmtune_status make_plan(struct gemmtune_context *h, const gt_call *c, unsigned b, void *stream,
                                 const plan **out)
{
    if ((*out = find_plan(h, c, b))) return GEMMTUNE_SUCCESS;
    if (capturing(stream))
        return gt_loader_fail(GEMMTUNE_STATUS_NOT_PREPARED, "%dx%dx%d %s: first call inside stream capture; call "
                              "once before capturing", c->shape.m, c->shape.n, c->shape.k,
                              gt_layout_name(c->shape.ta, c->shape.tb));
    plan *p = calloc(1, sizeof *p);
    if (!p) return gt_loader_fail(GEMMTUNE_STATUS_ALLOC_FAILED, "plan");
    p->call = *c;
    p->choice = gt_loader_select(h->set.rows, h->set.n, &h->dev, c, h->fallback);
    gemmtune_status st = GEMMTUNE_SUCCESS;
    if (p->choice.rule == GT_RULE_NONE)
        st = gt_loader_fail(GEMMTUNE_STATUS_NO_KERNEL, "no tuned kernel for %dx%dx%d %s on %s and fallback none",
                            c->shape.m, c->shape.n, c->shape.k, gt_layout_name(c->shape.ta, c->shape.tb), h->dev.name);
    else if (p->choice.rule == GT_RULE_CUBLAS) st = ensure_cublas(h);
    else {
        p->choice.family->launch(&p->choice.params, &c->shape, &p->L);
        st = load_kernel(h, &p->choice, &c->shape, p->L.smem, &p->kernel);
    }
    if (st) return free(p), st;
    h->count.plans++;
    p->next = atomic_load_explicit(&h->buckets[b], memory_order_relaxed);
    atomic_store_explicit(&h->buckets[b], p, memory_order_release);
    *out = p;
    return GEMMTUNE_SUCCESS;
}

static int ws_match(const wsentry *w, void *stream, size_t bytes)
{
    return w->stream == stream && w->bytes >= bytes &&
           (stream != (void *)cudaStreamPerThread || pthread_equal(w->thread, pthread_self()));
}

/* Split-K workspace of this stream, at least bytes. Grows geometrically; outgrown buffers stay allocated until
 * destroy because work already queued (or captured in a graph) may still use them. */
static gemmtune_status workspace(struct gemmtune_context *h, void *stream, size_t bytes, float **out)
{
    for (wsentry *w = atomic_load_explicit(&h->ws, memory_order_acquire); w; w = w->next)
        if (ws_match(w, stream, bytes)) return *out = w->ptr, GEMMTUNE_SUCCESS;
    if (capturing(stream))
        return gt_loader_fail(GEMMTUNE_STATUS_NOT_PREPARED, "split-K workspace of this stream: first use inside "
                              "stream capture; call once before capturing");
    pthread_mutex_lock(&h->lock);
    size_t want = bytes;
    for (wsentry *w = atomic_load_explicit(&h->ws, memory_order_relaxed); w; w = w->next) {
        if (ws_match(w, stream, bytes)) { /* another thread of a per-thread stream can't; a racing caller can */
            pthread_mutex_unlock(&h->lock);
            return *out = w->ptr, GEMMTUNE_SUCCESS;
        }
        if (ws_match(w, stream, 0) && w->bytes * 2 > want) want = w->bytes * 2;
    }
    wsentry *w = calloc(1, sizeof *w);
    cudaError_t e = w ? cudaMalloc((void **)&w->ptr, want) : cudaErrorMemoryAllocation;
    if (e != cudaSuccess) {
        free(w);
        pthread_mutex_unlock(&h->lock);
        return gt_loader_fail(GEMMTUNE_STATUS_CUDA_ERROR, "split-K workspace of %zu bytes: %s", want,
                              cudaGetErrorString(e));
    }
    w->stream = stream;
    w->thread = pthread_self();
    w->bytes = want;
    h->count.workspaces++;
    w->next = atomic_load_explicit(&h->ws, memory_order_relaxed);
    atomic_store_explicit(&h->ws, w, memory_order_release);
    pthread_mutex_unlock(&h->lock);
    *out = w->ptr;
    return GEMMTUNE_SUCCESS;
}

/* Row-major call through column-major cuBLAS: C^T = op(B)^T op(A)^T. */
static gemmtune_status run_cublas(struct gemmtune_context *h, void *stream, const gt_call *c, const gt_args *a)
{
    pthread_mutex_lock(&h->cublas_lock);
    cublasStatus_t cs = cublasSetStream(h->cublas, (cudaStream_t)stream);
    if (cs == CUBLAS_STATUS_SUCCESS)
        cs = cublasSgemm(h->cublas, c->shape.tb ? CUBLAS_OP_T : CUBLAS_OP_N, c->shape.ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                         a->n, a->m, a->k, &a->alpha, a->B, a->ldb, a->A, a->lda, &a->beta, a->C, a->ldc);
    pthread_mutex_unlock(&h->cublas_lock);
    return cs == CUBLAS_STATUS_SUCCESS ? GEMMTUNE_SUCCESS
                                       : gt_loader_fail(GEMMTUNE_STATUS_CUBLAS_ERROR, "cublasSgemm: status %d", (int)cs);
}

gemmtune_status gemmtune_sgemm(gemmtune_handle h, void *stream, gemmtune_op transa, gemmtune_op transb, int m,
                               int n, int k, float alpha, const float *A, int lda, const float *B, int ldb,
                               float beta, float *C, int ldc)
{
    char err[512];
    gt_call c;
    int swap, cur = -1;
    if (!h) return gt_loader_fail(GEMMTUNE_STATUS_INVALID_VALUE, "gemmtune_sgemm: handle is NULL");
    if (gt_loader_map_call(h->column_major, transa, transb, m, n, k, A, lda, B, ldb, C, ldc, &c, &swap, err,
                           sizeof err))
        return gt_loader_fail(GEMMTUNE_STATUS_INVALID_VALUE, "gemmtune_sgemm: %s", err);
    if (m == 0 || n == 0) return GEMMTUNE_SUCCESS;
    if (!A || !B || !C) return gt_loader_fail(GEMMTUNE_STATUS_INVALID_VALUE, "gemmtune_sgemm: NULL matrix");
    if (cudaGetDevice(&cur) != cudaSuccess || cur != h->device)
        return gt_loader_fail(GEMMTUNE_STATUS_WRONG_DEVICE, "current device %d, handle's %d", cur, h->device);
    const unsigned b = call_hash(&c);
    const plan *p = find_plan(h, &c, b);
    if (!p) {
        pthread_mutex_lock(&h->lock);
        gemmtune_status st = make_plan(h, &c, b, stream, &p);
        pthread_mutex_unlock(&h->lock);
        if (st) return st;
    }
    gt_args a = {.m = c.shape.m, .n = c.shape.n, .k = k, .ta = c.shape.ta, .tb = c.shape.tb, .alpha = alpha,
                 .beta = beta, .A = swap ? B : A, .B = swap ? A : B, .C = C, .lda = (int)c.lda, .ldb = (int)c.ldb,
                 .ldc = ldc};
    if (!p->kernel) return run_cublas(h, stream, &c, &a);
    if (p->L.splitk > 1) {
        gemmtune_status st = workspace(h, stream, p->L.ws_bytes, &a.ws);
        if (st) return st;
    }
    if (gt_kernel_launch(p->kernel, &p->L, (cudaStream_t)stream, &a, err, sizeof err))
        return gt_loader_fail(GEMMTUNE_STATUS_CUDA_ERROR, "launching %s: %s", p->choice.family->name, err);
    return GEMMTUNE_SUCCESS;
}

void gt_loader_counters_get(gemmtune_handle h, gt_loader_counters *out)
{
    pthread_mutex_lock(&h->lock);
    *out = h->count;
    pthread_mutex_unlock(&h->lock);
}

gemmtune_status gemmtune_explain(gemmtune_handle h, gemmtune_op transa, gemmtune_op transb, int m, int n, int k,
                                 int lda, int ldb, int ldc, char *buf, unsigned long buflen)
{
    char err[512];
    gt_call c;
    int swap;
    if (!h || !buf) return gt_loader_fail(GEMMTUNE_STATUS_INVALID_VALUE, "gemmtune_explain: NULL argument");
    if (gt_loader_map_call(h->column_major, transa, transb, m, n, k, NULL, lda, NULL, ldb, NULL, ldc, &c, &swap,
                           err, sizeof err))
        return gt_loader_fail(GEMMTUNE_STATUS_INVALID_VALUE, "gemmtune_explain: %s", err);
    gt_choice ch = gt_loader_select(h->set.rows, h->set.n, &h->dev, &c, h->fallback);
    gt_loader_describe(&ch, h->set.rows, buf, buflen);
    return ch.rule == GT_RULE_NONE ? GEMMTUNE_STATUS_NO_KERNEL : GEMMTUNE_SUCCESS;
}
