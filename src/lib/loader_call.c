/* gemmtune_sgemm: a plan per call signature (selection, then the loaded kernel or the library plan, its launch and
 * workspace), published lock-free; workspaces per stream; and gemmtune_explain. Design notes in src/lib/gemmtune.h;
 * GPU tests in tests/test_loader_gpu.c. */
#include "bias.h"
#include "handle.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned call_hash(const gt_call *c)
{
    unsigned long long v[] = {(unsigned)c->shape.m, (unsigned)c->shape.n, (unsigned)c->shape.k,
                              (unsigned)(c->shape.ta * 2 + c->shape.tb), (unsigned long long)c->lda,
                              (unsigned long long)c->ldb, (unsigned long long)c->ldc,
                              (unsigned)(c->align_a * 289 + c->align_b * 17 + c->align_c),
                              (unsigned)c->shape.batch, (unsigned long long)c->stride_a,
                              (unsigned long long)c->stride_b, (unsigned long long)c->stride_c};
    unsigned long long h = 14695981039346656037ull;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; ++i) h = (h ^ v[i]) * 1099511628211ull;
    return (unsigned)(h ^ (h >> 32)) % GT_NBUCKET;
}

static int call_equal(const gt_call *a, const gt_call *b)
{
    return gt_shape_equal(&a->shape, &b->shape) && a->lda == b->lda && a->ldb == b->ldb && a->ldc == b->ldc &&
           a->align_a == b->align_a && a->align_b == b->align_b && a->align_c == b->align_c &&
           a->stride_a == b->stride_a && a->stride_b == b->stride_b && a->stride_c == b->stride_c;
}

/* The warm path: acquire loads pair with the release store that published each node. */
static gt_plan *find_plan(struct gemmtune_context *h, const gt_call *c, unsigned b)
{
    for (gt_plan *p = atomic_load_explicit(&h->buckets[b], memory_order_acquire); p; p = p->next)
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
    const int batched = gt_shape_batch(s) > 1;
    const int row_batched = c->row >= 0 && gt_shape_batch(&h->set.rows[c->row].shape) > 1;
    for (gt_kentry *e = h->kernels; e; e = e->next)
        if (e->family == c->family && !memcmp(&e->params, &c->params, sizeof e->params) && e->ta == s->ta &&
            e->tb == s->tb && e->batched == batched && e->smem == smem)
            return *out = e->k, GEMMTUNE_SUCCESS;
    char err[4096];
    unsigned char *data = NULL;
    size_t size = 0;
    const unsigned char *bin = NULL;
    gemmtune_status st = GEMMTUNE_SUCCESS;
    char arch[20];
    gt_family_arch(c->family, h->arch, arch, sizeof arch); /* what this family's source compiles for */
    if (c->row >= 0 && h->set.cubin && h->set.cubin[c->row] && !strcmp(h->set.cubin_arch[c->row], arch) &&
        row_batched == batched) { /* the row's cubin is its own shape's: batched or not, as this call must be */
        bin = h->set.cubin[c->row];
        size = h->set.cubin_size[c->row];
        h->count.embedded++;
    } else {
        int cached = 0;
        char *src = gt_render(c->family, &c->params, s->ta, s->tb, batched, err, sizeof err);
        if (!src) return gt_loader_fail(GEMMTUNE_STATUS_COMPILE_ERROR, "%s", err);
        st = h->obtain(h->obtain_ctx, src, arch, &data, &size, &cached, err, sizeof err);
        free(src);
        if (st) return gt_loader_fail(st, "%s", err);
        bin = data;
        ++*(cached ? &h->count.cache_hits : &h->count.compiled);
    }
    gt_kentry *e = calloc(1, sizeof *e);
    if (!e) st = gt_loader_fail(GEMMTUNE_STATUS_ALLOC_FAILED, "kernel cache entry");
    else if (gt_kernel_load(bin, size, smem, c->family, &c->params, &e->k, err, sizeof err))
        st = gt_loader_fail(GEMMTUNE_STATUS_CUDA_ERROR, "loading %s on %s: %s", c->family->name, h->arch, err);
    free(data);
    if (st) return free(e), st;
    *e = (gt_kentry){h->kernels, c->family, c->params, s->ta, s->tb, batched, smem, e->k};
    h->kernels = e;
    h->count.kernels++;
    *out = e->k;
    return GEMMTUNE_SUCCESS;
}

/* Under h->lock: the handle's context of the backend that runs family f, opened on first use. 0 with *be and
 * *ctx, or a status (gt_loader_fail's). */
static gemmtune_status backend_of(struct gemmtune_context *h, const gt_family *f, const gt_backend **be,
                                  gt_backend_ctx **ctx)
{
    char err[512];
    if (!(*be = gt_backend_find(f->backend)))
        return gt_loader_fail(GEMMTUNE_STATUS_CUBLAS_ERROR, "backend '%s' is not linked in", f->backend);
    if (!(*ctx = gt_backend_ctx_of(&h->backends, *be, err, sizeof err)))
        return gt_loader_fail(GEMMTUNE_STATUS_CUBLAS_ERROR, "%s", err);
    return GEMMTUNE_SUCCESS;
}

/* Under h->lock: a library family's plan. A stored candidate this library or GPU refuses falls back to the
 * vendor's default call, and the plan's note says so (explain prints it). */
static gemmtune_status library_plan(struct gemmtune_context *h, gt_plan *p)
{
    char err[512] = "";
    gemmtune_status rc = backend_of(h, p->choice.family, &p->be, &p->bctx);
    if (rc) return rc;
    gt_status st = p->be->plan(p->bctx, p->choice.family, &p->choice.params, &p->call, &p->bplan, err, sizeof err);
    if (st == GT_ST_UNAVAILABLE) {
        snprintf(p->note, sizeof p->note, "the stored algorithm is not usable here (%.180s): cuBLAS's own choice instead",
                 err);
        gt_backend_default_params(&p->choice.family, &p->choice.params);
        if ((rc = backend_of(h, p->choice.family, &p->be, &p->bctx))) return rc;
        st = p->be->plan(p->bctx, p->choice.family, &p->choice.params, &p->call, &p->bplan, err, sizeof err);
    }
    if (st != GT_ST_OK) return gt_loader_fail(GEMMTUNE_STATUS_CUBLAS_ERROR, "%s", err);
    p->ws_bytes = p->be->workspace(p->bplan);
    return GEMMTUNE_SUCCESS;
}

/* Under fallback none, a call with no tuned kernel gets a plan too, with nothing to run: later calls fail fast
 * without selecting again, and the recorder counts them (the preload forwards them to cuBLAS). */
static gemmtune_status bind_kernel(struct gemmtune_context *h, gt_plan *p)
{
    const gt_choice *c = &p->choice;
    if (c->rule == GT_RULE_NONE) {
        gt_loader_none_note(c, &p->call.shape, &h->dev, p->note, sizeof p->note);
        return GEMMTUNE_SUCCESS;
    }
    if (c->family->build != GT_BUILD_NVRTC) return library_plan(h, p);
    gt_family_launch(c->family, &c->params, &p->call.shape, h->dev.lim.sm_count, &p->L); /* selection checked it */
    p->ws_bytes = p->L.ws_bytes;
    return load_kernel(h, c, &p->call.shape, p->L.smem, &p->kernel);
}

/* Cold path, under h->lock: select, bind, publish. Another thread may have published the plan meanwhile. k = 0
 * (C = beta C) is cuBLAS's: no kernel of ours is built for an empty K. */
static gemmtune_status make_plan(struct gemmtune_context *h, const gt_call *c, unsigned b, void *stream,
                                 gt_plan **out)
{
    if ((*out = find_plan(h, c, b))) return GEMMTUNE_SUCCESS;
    char dims[48];
    if (capturing(stream))
        return gt_loader_fail(GEMMTUNE_STATUS_NOT_PREPARED, "%s %s: first call inside stream capture; call once "
                              "before capturing", gt_shape_dims(&c->shape, dims, sizeof dims),
                              gt_layout_name(c->shape.ta, c->shape.tb));
    gt_plan *p = calloc(1, sizeof *p);
    if (!p) return gt_loader_fail(GEMMTUNE_STATUS_ALLOC_FAILED, "plan");
    p->call = *c;
    if (c->shape.k > 0) p->choice = gt_loader_select(h->set.rows, h->set.n, &h->dev, c, h->fallback, &h->model);
    else {
        p->choice = (gt_choice){.rule = GT_RULE_CUBLAS, .row = -1};
        gt_backend_default_params(&p->choice.family, &p->choice.params);
    }
    gemmtune_status st = bind_kernel(h, p);
    if (st) return free(p), st;
    h->count.plans++;
    p->next = atomic_load_explicit(&h->buckets[b], memory_order_relaxed);
    atomic_store_explicit(&h->buckets[b], p, memory_order_release);
    *out = p;
    return GEMMTUNE_SUCCESS;
}

static int ws_match(const gt_wsentry *w, void *stream, size_t bytes)
{
    return w->stream == stream && w->bytes >= bytes &&
           (stream != (void *)cudaStreamPerThread || pthread_equal(w->thread, pthread_self()));
}

/* The workspace of this stream, at least bytes. Grows geometrically; outgrown buffers stay allocated until destroy
 * because work already queued (or captured in a graph) may still use them. */
static gemmtune_status workspace(struct gemmtune_context *h, void *stream, size_t bytes, float **out)
{
    for (gt_wsentry *w = atomic_load_explicit(&h->ws, memory_order_acquire); w; w = w->next)
        if (ws_match(w, stream, bytes)) return *out = w->ptr, GEMMTUNE_SUCCESS;
    if (capturing(stream))
        return gt_loader_fail(GEMMTUNE_STATUS_NOT_PREPARED, "workspace of this stream: first use inside stream "
                              "capture; call once before capturing");
    pthread_mutex_lock(&h->lock);
    size_t want = bytes;
    for (gt_wsentry *w = atomic_load_explicit(&h->ws, memory_order_relaxed); w; w = w->next) {
        if (ws_match(w, stream, bytes)) { /* another thread of a per-thread stream can't; a racing caller can */
            pthread_mutex_unlock(&h->lock);
            return *out = w->ptr, GEMMTUNE_SUCCESS;
        }
        if (ws_match(w, stream, 0) && w->bytes * 2 > want) want = w->bytes * 2;
    }
    gt_wsentry *w = calloc(1, sizeof *w);
    cudaError_t e = w ? cudaMalloc((void **)&w->ptr, want) : cudaErrorMemoryAllocation;
    if (e != cudaSuccess) {
        free(w);
        pthread_mutex_unlock(&h->lock);
        return gt_loader_fail(GEMMTUNE_STATUS_CUDA_ERROR, "workspace of %zu bytes: %s", want, cudaGetErrorString(e));
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

static gemmtune_status launch(struct gemmtune_context *h, const gt_plan *p, void *stream, gt_args *a)
{
    char err[512];
    if (p->ws_bytes) {
        gemmtune_status st = workspace(h, stream, p->ws_bytes, &a->ws);
        if (st) return st;
    }
    if (p->bplan) {
        if (p->be->run(p->bctx, p->bplan, a, a->ws, (cudaStream_t)stream, err, sizeof err))
            return gt_loader_fail(GEMMTUNE_STATUS_CUBLAS_ERROR, "%s", err);
        return GEMMTUNE_SUCCESS;
    }
    if (gt_kernel_launch(p->kernel, &p->L, (cudaStream_t)stream, a, err, sizeof err))
        return gt_loader_fail(GEMMTUNE_STATUS_CUDA_ERROR, "launching %s: %s", p->choice.family->name, err);
    return GEMMTUNE_SUCCESS;
}

/* The call's plan: the lock-free lookup, else made under the handle's lock. */
static gemmtune_status plan_of(struct gemmtune_context *h, const gt_call *c, void *stream, gt_plan **out)
{
    const unsigned b = call_hash(c);
    if ((*out = find_plan(h, c, b))) return GEMMTUNE_SUCCESS;
    pthread_mutex_lock(&h->lock);
    gemmtune_status st = make_plan(h, c, b, stream, out);
    pthread_mutex_unlock(&h->lock);
    return st;
}

/* The driver's cuCtxGetCurrent, found once through the runtime; NULL where the driver has none. */
typedef int (*ctx_get_fn)(void **ctx);
static ctx_get_fn ctx_get;
static pthread_once_t ctx_get_once = PTHREAD_ONCE_INIT;

static void find_ctx_get(void)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess)
        ctx_get = (ctx_get_fn)fn;
    else (void)cudaGetLastError();
}

/* Whether the calling thread is on h's device (*cur: the device it is on, when asked of the runtime). A context
 * belongs to one device, so the context current now being one already seen on h's device settles it for the price
 * of a thread-local read; cudaGetDevice, several times dearer, only answers the first call and a changed context. */
static int on_device(struct gemmtune_context *h, int *cur)
{
    void *now = NULL, *seen = atomic_load_explicit(&h->cu_ctx, memory_order_relaxed);
    pthread_once(&ctx_get_once, find_ctx_get);
    if (seen && ctx_get && ctx_get(&now) == 0 && now == seen) return 1;
    if (cudaGetDevice(cur) != cudaSuccess || *cur != h->device) return 0;
    if (!seen && ctx_get && ctx_get(&now) == 0 && now) atomic_store_explicit(&h->cu_ctx, now, memory_order_relaxed);
    return 1;
}

/* A plan that runs one of gemmtune's kernels (a kernel: no library plan, the rule not none) of a family with a bias
 * epilogue, unsplit and with no workspace (kernels/family.h: bias_epilogue). */
static int fuses_bias(const gt_plan *p)
{
    return p->kernel && p->choice.family->bias_epilogue && p->ws_bytes == 0 && p->L.splitk <= 1;
}

/* gemmtune_sgemm, gemmtune_sgemm_strided_batched (batch <= 1: one GEMM, strides unused) and, with bias non-NULL
 * (one GEMM, beta 0), gt_loader_sgemm_bias; fn names the entry. */
static gemmtune_status sgemm(gemmtune_handle h, void *stream, const char *fn, gemmtune_op transa, gemmtune_op transb,
                             int m, int n, int k, float alpha, const float *A, int lda, long long sa, const float *B,
                             int ldb, long long sb, float beta, float *C, int ldc, long long sc, int batch,
                             const float *bias)
{
    char err[512];
    gt_call c;
    int swap, cur = -1;
    if (!h) return gt_loader_fail(GEMMTUNE_STATUS_INVALID_VALUE, "%s: handle is NULL", fn);
    if (gt_loader_map_call(h->column_major, transa, transb, m, n, k, A, lda, B, ldb, C, ldc, &c, &swap, err,
                           sizeof err) ||
        gt_loader_map_batch(&c, swap, batch, sa, sb, sc, err, sizeof err))
        return gt_loader_fail(GEMMTUNE_STATUS_INVALID_VALUE, "%s: %s", fn, err);
    if (m == 0 || n == 0 || batch == 0 || (k == 0 && beta == 1.0f)) return GEMMTUNE_SUCCESS; /* as in BLAS */
    if ((k && (!A || !B)) || !C) return gt_loader_fail(GEMMTUNE_STATUS_INVALID_VALUE, "%s: NULL matrix", fn);
    if (!on_device(h, &cur))
        return gt_loader_fail(GEMMTUNE_STATUS_WRONG_DEVICE, "current device %d, handle's %d", cur, h->device);
    gt_plan *p;
    gemmtune_status st = plan_of(h, &c, stream, &p);
    if (st) return st;
    if (h->record_path[0]) atomic_fetch_add_explicit(&p->calls, 1, memory_order_relaxed);
    if (p->choice.rule == GT_RULE_NONE) return gt_loader_fail_text(GEMMTUNE_STATUS_NO_KERNEL, p->note);
    if (bias && !fuses_bias(p))
        return gt_loader_fail(GEMMTUNE_STATUS_INVALID_VALUE, "%s: this call's kernel has no bias epilogue", fn);
    gt_args a = {.m = c.shape.m, .n = c.shape.n, .k = k, .ta = c.shape.ta, .tb = c.shape.tb, .alpha = alpha,
                 .beta = beta, .A = swap ? B : A, .B = swap ? A : B, .C = C, .lda = (int)c.lda, .ldb = (int)c.ldb,
                 .ldc = ldc, .batch = gt_shape_batch(&c.shape), .sa = c.stride_a, .sb = c.stride_b,
                 .sc = c.stride_c, .ws = (float *)bias}; /* the kernel reads it, never writes (family.h) */
    return launch(h, p, stream, &a);
}

/* The plan gemmtune_sgemm would make for these arguments (no alpha, beta: they do not choose), for the questions
 * asked about a call before it is made. 0, or -1 for arguments gemmtune_sgemm refuses, k == 0, or a plan that cannot
 * be made (a first call inside stream capture). */
static int plan_for(gemmtune_handle h, void *stream, gemmtune_op transa, gemmtune_op transb, int m, int n, int k,
                    const float *A, int lda, const float *B, int ldb, const float *C, int ldc, gt_plan **p)
{
    char err[512];
    gt_call c;
    int swap;
    if (!h || k < 1 || gt_loader_map_call(h->column_major, transa, transb, m, n, k, A, lda, B, ldb, C, ldc, &c, &swap,
                                          err, sizeof err))
        return -1;
    return plan_of(h, &c, stream, p) ? -1 : 0;
}

/* The stored times of p's winner and of cuBLAS: 1 with them, 0 where p is not the stored winner or lacks them. */
static int stored_times(gemmtune_handle h, const gt_plan *p, double *kernel_ms, double *cublas_ms)
{
    if (p->choice.rule != GT_RULE_EXACT || p->choice.row < 0 || p->note[0]) return 0; /* note: not the stored one */
    const gt_winner *w = &h->set.rows[p->choice.row];
    double ms = w->median_ms, base = w->cublas_ms;
    if (!(ms > 0) && w->tflops > 0) ms = gt_tflops(&w->shape, 1.0) / w->tflops; /* a table row: TFLOPS and ratio */
    if (!(base > 0) && w->ratio > 0) base = ms * w->ratio;
    if (!(ms > 0) || !(base > 0)) return 0;
    *kernel_ms = ms, *cublas_ms = base;
    return 1;
}

static int own_kernel(const gt_plan *p)
{
    return p->choice.rule != GT_RULE_NONE && p->choice.family && !p->choice.family->vendor;
}

int gt_loader_facts_of(gemmtune_handle h, void *stream, gemmtune_op transa, gemmtune_op transb, int m, int n, int k,
                       const float *A, int lda, const float *B, int ldb, const float *C, int ldc, gt_loader_facts *f)
{
    gt_plan *p;
    int cur = -1;
    memset(f, 0, sizeof *f);
    if (h && !on_device(h, &cur)) return -2;
    if (plan_for(h, stream, transa, transb, m, n, k, A, lda, B, ldb, C, ldc, &p)) return -1;
    f->own = own_kernel(p), f->fuses_bias = fuses_bias(p);
    f->times = stored_times(h, p, &f->kernel_ms, &f->cublas_ms);
    if (!f->own && h->record_path[0]) atomic_fetch_add_explicit(&p->calls, 1, memory_order_relaxed); /* run elsewhere */
    return 0;
}

int gemmtune_runs_own_kernel(gemmtune_handle h, void *stream, gemmtune_op transa, gemmtune_op transb, int m, int n,
                             int k, const float *A, int lda, const float *B, int ldb, const float *C, int ldc)
{
    gt_plan *p;
    if (plan_for(h, stream, transa, transb, m, n, k, A, lda, B, ldb, C, ldc, &p)) return -1;
    const int own = own_kernel(p);
    if (!own && h->record_path[0]) atomic_fetch_add_explicit(&p->calls, 1, memory_order_relaxed); /* run elsewhere */
    return own;
}

int gemmtune_kernel_times(gemmtune_handle h, void *stream, gemmtune_op transa, gemmtune_op transb, int m, int n,
                          int k, const float *A, int lda, const float *B, int ldb, const float *C, int ldc,
                          double *kernel_ms, double *cublas_ms)
{
    gt_plan *p;
    if (!kernel_ms || !cublas_ms || plan_for(h, stream, transa, transb, m, n, k, A, lda, B, ldb, C, ldc, &p)) return -1;
    return stored_times(h, p, kernel_ms, cublas_ms);
}

gemmtune_status gt_loader_sgemm_bias(gemmtune_handle h, void *stream, gemmtune_op transa, gemmtune_op transb, int m,
                                     int n, int k, float alpha, const float *A, int lda, const float *B, int ldb,
                                     const float *bias, float *C, int ldc)
{
    if (!bias || k < 1) return gt_loader_fail(GEMMTUNE_STATUS_INVALID_VALUE, "gt_loader_sgemm_bias: %s",
                                              bias ? "k < 1" : "bias is NULL");
    return sgemm(h, stream, "gt_loader_sgemm_bias", transa, transb, m, n, k, alpha, A, lda, 0, B, ldb, 0, 0.0f, C,
                 ldc, 0, 1, bias);
}

gemmtune_status gemmtune_sgemm(gemmtune_handle h, void *stream, gemmtune_op transa, gemmtune_op transb, int m,
                               int n, int k, float alpha, const float *A, int lda, const float *B, int ldb,
                               float beta, float *C, int ldc)
{
    return sgemm(h, stream, "gemmtune_sgemm", transa, transb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1,
                 NULL);
}

gemmtune_status gemmtune_sgemm_strided_batched(gemmtune_handle h, void *stream, gemmtune_op transa,
                                               gemmtune_op transb, int m, int n, int k, float alpha, const float *A,
                                               int lda, long stride_a, const float *B, int ldb, long stride_b,
                                               float beta, float *C, int ldc, long stride_c, int batch)
{
    return sgemm(h, stream, "gemmtune_sgemm_strided_batched", transa, transb, m, n, k, alpha, A, lda, stride_a, B,
                 ldb, stride_b, beta, C, ldc, stride_c, batch, NULL);
}

void gt_loader_counters_get(gemmtune_handle h, gt_loader_counters *out)
{
    pthread_mutex_lock(&h->lock);
    *out = h->count;
    pthread_mutex_unlock(&h->lock);
}

/* gemmtune_explain and gemmtune_explain_strided_batched (batch <= 1: one GEMM; tight strides, 16-byte aligned). */
static gemmtune_status explain(gemmtune_handle h, const char *fn, gemmtune_op transa, gemmtune_op transb, int m,
                               int n, int k, int lda, int ldb, int ldc, int batch, char *buf, unsigned long buflen)
{
    char err[512];
    gt_call c;
    int swap;
    if (!h || !buf) return gt_loader_fail(GEMMTUNE_STATUS_INVALID_VALUE, "%s: NULL argument", fn);
    /* each matrix's footprint (its stored columns or rows times its leading dimension) as the stride */
    const int cm = h->column_major, a_lines = cm == !!transa ? m : k, b_lines = cm == !!transb ? k : n;
    const long long sa = (long long)lda * a_lines, sb = (long long)ldb * b_lines, sc = (long long)ldc * (cm ? n : m);
    if (gt_loader_map_call(h->column_major, transa, transb, m, n, k, NULL, lda, NULL, ldb, NULL, ldc, &c, &swap,
                           err, sizeof err) ||
        gt_loader_map_batch(&c, swap, batch, sa, sb, sc, err, sizeof err))
        return gt_loader_fail(GEMMTUNE_STATUS_INVALID_VALUE, "%s: %s", fn, err);
    gt_choice ch = gt_loader_select(h->set.rows, h->set.n, &h->dev, &c, h->fallback, &h->model);
    gt_loader_describe(&ch, h->set.rows, buf, buflen);
    /* A plan already made knows more: a stored algorithm this machine refused. */
    gt_plan *p = find_plan(h, &c, call_hash(&c));
    if (p && p->note[0] && p->choice.rule != GT_RULE_NONE && strlen(buf) + 3 < buflen)
        snprintf(buf + strlen(buf), buflen - strlen(buf), "; %s", p->note);
    return ch.rule == GT_RULE_NONE ? GEMMTUNE_STATUS_NO_KERNEL : GEMMTUNE_SUCCESS;
}

gemmtune_status gemmtune_explain(gemmtune_handle h, gemmtune_op transa, gemmtune_op transb, int m, int n, int k,
                                 int lda, int ldb, int ldc, char *buf, unsigned long buflen)
{
    return explain(h, "gemmtune_explain", transa, transb, m, n, k, lda, ldb, ldc, 1, buf, buflen);
}

gemmtune_status gemmtune_explain_strided_batched(gemmtune_handle h, gemmtune_op transa, gemmtune_op transb, int m,
                                                 int n, int k, int lda, int ldb, int ldc, int batch, char *buf,
                                                 unsigned long buflen)
{
    return explain(h, "gemmtune_explain_strided_batched", transa, transb, m, n, k, lda, ldb, ldc, batch, buf, buflen);
}
