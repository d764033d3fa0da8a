/* The "cublas" backend: runs the vendor family (kernels/cublas.c) through cublasSgemm or cuBLASLt with a stored
 * algorithm, in pure FP32 (pedantic cuBLAS math, CUBLAS_COMPUTE_32F), and lists its candidates for a shape.
 * Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, so B is cuBLAS's first operand.
 * cuBLAS is referenced weakly: a program that links the static library for the table path alone does not pull it
 * in, and then this backend is absent (gt_backend_find returns NULL). Inside libgemmtune_cublas.so a resolver
 * finds the program's own cuBLAS instead (backend_resolve.h). Tests: tests/test_vendor.c (GPU, and the resolver
 * on the CPU). */
#include "backend.h"
#include "backend_resolve.h"
#include "cublas_family.h"
#include "cublas_fns.h"
#include "lt_space.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#pragma weak cublasCreate_v2
#pragma weak cublasDestroy_v2
#pragma weak cublasSetStream_v2
#pragma weak cublasSetMathMode
#pragma weak cublasSgemm_v2
#pragma weak cublasSgemmStridedBatched
#pragma weak cublasLtMatrixLayoutSetAttribute
#pragma weak cublasGetStatusString
#pragma weak cublasLtCreate
#pragma weak cublasLtDestroy
#pragma weak cublasLtGetVersion
#pragma weak cublasLtMatmul
#pragma weak cublasLtMatmulDescCreate
#pragma weak cublasLtMatmulDescDestroy
#pragma weak cublasLtMatmulDescSetAttribute
#pragma weak cublasLtMatrixLayoutCreate
#pragma weak cublasLtMatrixLayoutDestroy
#pragma weak cublasLtMatmulPreferenceCreate
#pragma weak cublasLtMatmulPreferenceDestroy
#pragma weak cublasLtMatmulPreferenceSetAttribute
#pragma weak cublasLtMatmulAlgoGetHeuristic
#pragma weak cublasLtMatmulAlgoInit
#pragma weak cublasLtMatmulAlgoCheck
#pragma weak cublasLtMatmulAlgoConfigGetAttribute
#pragma weak cublasLtMatmulAlgoConfigSetAttribute
#pragma weak cublasLtMatmulAlgoGetIds
#pragma weak cublasLtMatmulAlgoCapGetAttribute

static gt_cublas_fns cb; /* the functions found, by the resolver or linked; set before `loaded` */
static gt_symbol_resolver resolver;
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int loaded; /* 1 once every member of cb is set; cb is written only before */

void gt_backend_cublas_resolver(gt_symbol_resolver fn)
{
    pthread_mutex_lock(&load_lock);
    resolver = fn;
    atomic_store(&loaded, 0);
    pthread_mutex_unlock(&load_lock);
}

/* Fill cb from the resolver, else from the linked (weak) symbols. Until every function is found the backend is
 * absent, and the next caller looks again (a cuBLAS the program loads later is found then). The lookups run
 * outside the lock (a resolver may take the dynamic loader's own); the lock only publishes their result. */
static int load(void)
{
    if (atomic_load_explicit(&loaded, memory_order_acquire)) return 1;
    gt_cublas_fns got;
    int all = 1;
    pthread_mutex_lock(&load_lock);
    gt_symbol_resolver fn = resolver;
    pthread_mutex_unlock(&load_lock);
#define GT_FIND(name) got.name = fn ? (__typeof__(got.name))fn(#name) : name;
#define GT_LOAD(name) GT_FIND(name) all &= got.name != NULL;
    GT_CUBLAS_FUNCS(GT_LOAD)
    GT_CUBLAS_OPTIONAL(GT_FIND)
#undef GT_LOAD
#undef GT_FIND
    if (!all) return 0;
    pthread_mutex_lock(&load_lock);
    if (fn == resolver && !atomic_load_explicit(&loaded, memory_order_relaxed)) {
        cb = got;
        atomic_store_explicit(&loaded, 1, memory_order_release);
    }
    pthread_mutex_unlock(&load_lock);
    return atomic_load_explicit(&loaded, memory_order_acquire);
}

const gt_cublas_fns *gt_cublas_fns_get(void) { return load() ? &cb : NULL; }

enum { MAX_HEURISTIC = 16 };
#define LT_PREF_WS ((size_t)32 << 20) /* workspace the heuristic may count on (NVIDIA's advice for Hopper) */

/* A cublasHandle_t per stream (per thread for the per-thread default stream): cuBLAS keeps a workspace per handle,
 * so two streams must never share one. Published lock-free, like the loader's workspaces. */
typedef struct slot {
    struct slot *next;
    void *stream;
    pthread_t thread;
    cublasHandle_t h;
} slot;

struct gt_backend_ctx {
    cublasLtHandle_t lt;
    _Atomic(slot *) slots;
    pthread_mutex_t lock;
};

struct gt_backend_plan {
    int api;
    int m, n, k, lda, ldb, ldc; /* row-major call it was made for */
    int batch;                  /* matrices of a strided batch (1: one GEMM) */
    long long sa, sb, sc;       /* and their strides, in elements */
    cublasOperation_t opa, opb;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc; /* cuBLASLt's A (our B), B (our A), C */
    cublasLtMatmulAlgo_t algo;
    size_t ws;
};

/* The configuration attributes a stored algorithm is made of, in the order of params GT_CUBLAS_P_TILE.. */
static const cublasLtMatmulAlgoConfigAttributes_t config_attr[] = {
    CUBLASLT_ALGO_CONFIG_TILE_ID,        CUBLASLT_ALGO_CONFIG_SPLITK_NUM,       CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME,
    CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING,  CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION,    CUBLASLT_ALGO_CONFIG_STAGES_ID,
    CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID};
enum { NCONFIG = (int)(sizeof config_attr / sizeof config_attr[0]) };

static int version(void) { return load() ? (int)cb.cublasLtGetVersion() : 0; }

static int ctx_open(gt_backend_ctx **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!load()) return snprintf(err, errlen, "cuBLAS is not linked in"), -1;
    gt_backend_ctx *c = calloc(1, sizeof *c);
    if (!c) return snprintf(err, errlen, "out of memory"), -1;
    cublasStatus_t st = cb.cublasLtCreate(&c->lt);
    if (st != CUBLAS_STATUS_SUCCESS) {
        free(c);
        return snprintf(err, errlen, "cublasLtCreate: %s", cb.cublasGetStatusString(st)), -1;
    }
    pthread_mutex_init(&c->lock, NULL);
    *out = c;
    return 0;
}

static void ctx_close(gt_backend_ctx *c)
{
    if (!c) return;
    for (slot *s = atomic_load(&c->slots), *next; s; s = next) {
        next = s->next;
        cb.cublasDestroy_v2(s->h);
        free(s);
    }
    cb.cublasLtDestroy(c->lt);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static int slot_match(const slot *s, void *stream)
{
    return s->stream == stream && (stream != (void *)cudaStreamPerThread || pthread_equal(s->thread, pthread_self()));
}

/* The stream's cuBLAS handle, made on first use with pedantic math (never TF32) and bound to the stream. */
static cublasHandle_t stream_handle(gt_backend_ctx *c, void *stream, char *err, size_t errlen)
{
    for (slot *s = atomic_load_explicit(&c->slots, memory_order_acquire); s; s = s->next)
        if (slot_match(s, stream)) return s->h;
    pthread_mutex_lock(&c->lock);
    slot *s = calloc(1, sizeof *s);
    cublasStatus_t st = s ? cb.cublasCreate_v2(&s->h) : CUBLAS_STATUS_ALLOC_FAILED;
    if (st == CUBLAS_STATUS_SUCCESS) st = cb.cublasSetMathMode(s->h, CUBLAS_PEDANTIC_MATH);
    if (st == CUBLAS_STATUS_SUCCESS) st = cb.cublasSetStream_v2(s->h, (cudaStream_t)stream);
    if (st != CUBLAS_STATUS_SUCCESS) {
        if (s && s->h) cb.cublasDestroy_v2(s->h);
        free(s);
        pthread_mutex_unlock(&c->lock);
        snprintf(err, errlen, "cuBLAS handle for a stream: %s", cb.cublasGetStatusString(st));
        return NULL;
    }
    s->stream = stream;
    s->thread = pthread_self();
    s->next = atomic_load_explicit(&c->slots, memory_order_relaxed);
    atomic_store_explicit(&c->slots, s, memory_order_release);
    pthread_mutex_unlock(&c->lock);
    return s->h;
}

static void plan_free(gt_backend_plan *p)
{
    if (!p) return;
    if (p->desc) cb.cublasLtMatmulDescDestroy(p->desc);
    if (p->la) cb.cublasLtMatrixLayoutDestroy(p->la);
    if (p->lb) cb.cublasLtMatrixLayoutDestroy(p->lb);
    if (p->lc) cb.cublasLtMatrixLayoutDestroy(p->lc);
    free(p);
}

/* The cuBLASLt descriptors of a row-major call. */
static cublasStatus_t lt_describe(gt_backend_plan *p)
{
    const cublasComputeType_t compute = CUBLAS_COMPUTE_32F; /* pure FP32: never FAST_TF32 */
    cublasStatus_t st = cb.cublasLtMatmulDescCreate(&p->desc, compute, CUDA_R_32F);
    if (!st) st = cb.cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &p->opb, sizeof p->opb);
    if (!st) st = cb.cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &p->opa, sizeof p->opa);
    /* column-major views: B^T is n x k (or k x n stored), A^T is k x m (or m x k stored), C^T is n x m */
    if (!st) st = cb.cublasLtMatrixLayoutCreate(&p->la, CUDA_R_32F, p->opb == CUBLAS_OP_N ? p->n : p->k,
                                             p->opb == CUBLAS_OP_N ? p->k : p->n, p->ldb);
    if (!st) st = cb.cublasLtMatrixLayoutCreate(&p->lb, CUDA_R_32F, p->opa == CUBLAS_OP_N ? p->k : p->m,
                                             p->opa == CUBLAS_OP_N ? p->m : p->k, p->lda);
    if (!st) st = cb.cublasLtMatrixLayoutCreate(&p->lc, CUDA_R_32F, p->n, p->m, p->ldc);
    if (p->batch > 1) {
        cublasLtMatrixLayout_t l[] = {p->la, p->lb, p->lc};
        const long long stride[] = {p->sb, p->sa, p->sc};
        for (int i = 0; !st && i < 3; ++i) {
            st = cb.cublasLtMatrixLayoutSetAttribute(l[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &p->batch, sizeof p->batch);
            if (!st)
                st = cb.cublasLtMatrixLayoutSetAttribute(l[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride[i],
                                                      sizeof stride[i]);
        }
    }
    return st;
}

static gt_backend_plan *plan_for(const gt_call *c, int api)
{
    gt_backend_plan *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    *p = (gt_backend_plan){.api = api, .m = c->shape.m, .n = c->shape.n, .k = c->shape.k, .lda = (int)c->lda,
                           .ldb = (int)c->ldb, .ldc = (int)c->ldc, .opa = c->shape.ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                           .opb = c->shape.tb ? CUBLAS_OP_T : CUBLAS_OP_N, .batch = gt_shape_batch(&c->shape),
                           .sa = c->stride_a, .sb = c->stride_b, .sc = c->stride_c};
    return p;
}

/* A stored algorithm: initialised from its id, then every configuration attribute set from params. */
static cublasStatus_t lt_algo(cublasLtHandle_t lt, const gt_params *par, cublasLtMatmulAlgo_t *algo)
{
    cublasStatus_t st = cb.cublasLtMatmulAlgoInit(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                                               CUDA_R_32F, par->v[GT_CUBLAS_P_ALGO], algo);
    for (int i = 0; !st && i < NCONFIG; ++i) {
        size_t size = 0;
        unsigned long long v = (unsigned long long)par->v[GT_CUBLAS_P_TILE + i];
        st = cb.cublasLtMatmulAlgoConfigGetAttribute(algo, config_attr[i], NULL, 0, &size);
        if (!st && size > sizeof v) st = CUBLAS_STATUS_NOT_SUPPORTED;
        if (!st) st = cb.cublasLtMatmulAlgoConfigSetAttribute(algo, config_attr[i], &v, size); /* little-endian */
    }
    return st;
}

static int replayable(const gt_family *f, const gt_params *p, char *why, size_t n)
{
    (void)f;
    if (p->v[GT_CUBLAS_P_API] != GT_CUBLAS_API_LT || p->v[GT_CUBLAS_P_VER] == version()) return 1;
    snprintf(why, n, "the cuBLASLt algorithm was found with cuBLAS %d, this is %d", p->v[GT_CUBLAS_P_VER], version());
    return 0;
}

static gt_status plan(gt_backend_ctx *ctx, const gt_family *f, const gt_params *par, const gt_call *call,
                      gt_backend_plan **out, char *err, size_t errlen)
{
    const int api = par->v[GT_CUBLAS_P_API];
    *out = NULL;
    if (!replayable(f, par, err, errlen)) return GT_ST_UNAVAILABLE;
    gt_backend_plan *p = plan_for(call, api);
    if (!p) return snprintf(err, errlen, "out of memory"), GT_ST_LAUNCH_ERROR;
    if (api == GT_CUBLAS_API_LT) {
        cublasLtMatmulHeuristicResult_t check;
        cublasStatus_t st = lt_describe(p);
        if (st) {
            snprintf(err, errlen, "cuBLASLt descriptors: %s", cb.cublasGetStatusString(st));
            plan_free(p);
            return GT_ST_LAUNCH_ERROR;
        }
        st = lt_algo(ctx->lt, par, &p->algo);
        if (!st) st = cb.cublasLtMatmulAlgoCheck(ctx->lt, p->desc, p->la, p->lb, p->lc, p->lc, &p->algo, &check);
        if (st) {
            snprintf(err, errlen, "cuBLASLt refuses the stored algorithm here: %s", cb.cublasGetStatusString(st));
            plan_free(p);
            return GT_ST_UNAVAILABLE;
        }
        p->ws = (size_t)par->v[GT_CUBLAS_P_WSKB] * 1024;
        if (check.workspaceSize > p->ws) p->ws = check.workspaceSize;
    }
    *out = p;
    return GT_ST_OK;
}

static size_t workspace(const gt_backend_plan *p) { return p->ws; }

static int run(gt_backend_ctx *ctx, const gt_backend_plan *p, const gt_args *a, void *ws, cudaStream_t stream,
               char *err, size_t errlen)
{
    cublasStatus_t st;
    if (p->api == GT_CUBLAS_API_SGEMM) {
        cublasHandle_t h = stream_handle(ctx, stream, err, errlen);
        if (!h) return -1;
        if (p->batch > 1)
            st = cb.cublasSgemmStridedBatched(h, p->opb, p->opa, a->n, a->m, a->k, &a->alpha, a->B, a->ldb, a->sb, a->A,
                                           a->lda, a->sa, &a->beta, a->C, a->ldc, a->sc, p->batch);
        else
            st = cb.cublasSgemm_v2(h, p->opb, p->opa, a->n, a->m, a->k, &a->alpha, a->B, a->ldb, a->A, a->lda, &a->beta,
                             a->C, a->ldc);
    } else {
        st = cb.cublasLtMatmul(ctx->lt, p->desc, &a->alpha, a->B, p->la, a->A, p->lb, &a->beta, a->C, p->lc, a->C, p->lc,
                            &p->algo, ws, p->ws, stream);
    }
    if (st != CUBLAS_STATUS_SUCCESS)
        return snprintf(err, errlen, "%s: %s", p->api ? "cublasLtMatmul" : "cublasSgemm", cb.cublasGetStatusString(st)), -1;
    return 0;
}

/* A cuBLASLt algorithm needing ws bytes of workspace as params (the inverse of lt_algo). 0, or -1 when an attribute
 * does not fit an int. */
static int algo_params(const cublasLtMatmulAlgo_t *a, size_t ws, gt_params *out)
{
    memset(out, 0, sizeof *out);
    int id = 0;
    size_t got = 0;
    if (cb.cublasLtMatmulAlgoConfigGetAttribute(a, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &got)) return -1;
    out->v[GT_CUBLAS_P_API] = GT_CUBLAS_API_LT;
    out->v[GT_CUBLAS_P_ALGO] = id;
    for (int i = 0; i < NCONFIG; ++i) {
        unsigned long long v = 0;
        size_t size = 0;
        if (cb.cublasLtMatmulAlgoConfigGetAttribute(a, config_attr[i], NULL, 0, &size) || size > sizeof v ||
            cb.cublasLtMatmulAlgoConfigGetAttribute(a, config_attr[i], &v, size, &got) || v > 1000000)
            return -1;
        out->v[GT_CUBLAS_P_TILE + i] = (int)v;
    }
    out->v[GT_CUBLAS_P_WSKB] = (int)((ws + 1023) / 1024);
    out->v[GT_CUBLAS_P_VER] = version();
    return 0;
}

/* Ask cuBLASLt's heuristic for up to max algorithms of the call p describes, operands on 16-byte boundaries. */
static cublasStatus_t heuristic(gt_backend_ctx *ctx, const gt_backend_plan *p, cublasLtMatmulHeuristicResult_t *res,
                                int max, int *n)
{
    cublasLtMatmulPreference_t pref = NULL;
    const uint32_t align = 16;
    const size_t wsmax = LT_PREF_WS;
    cublasStatus_t st = cb.cublasLtMatmulPreferenceCreate(&pref);
    if (!st) st = cb.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsmax, sizeof wsmax);
    const cublasLtMatmulPreferenceAttributes_t al[] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; !st && i < 4; ++i) st = cb.cublasLtMatmulPreferenceSetAttribute(pref, al[i], &align, sizeof align);
    if (!st) st = cb.cublasLtMatmulAlgoGetHeuristic(ctx->lt, p->desc, p->la, p->lb, p->lc, p->lc, pref, max, res, n);
    if (pref) cb.cublasLtMatmulPreferenceDestroy(pref);
    return st;
}

/* 1 when out[0..n) lists p's cuBLAS call or cuBLASLt configuration already, whatever workspace each asked for. */
static int listed(const gt_params *out, int n, const gt_params *p)
{
    for (int j = 0; j < n; ++j) {
        int same = out[j].v[GT_CUBLAS_P_API] == p->v[GT_CUBLAS_P_API] &&
                   out[j].v[GT_CUBLAS_P_ALGO] == p->v[GT_CUBLAS_P_ALGO];
        for (int i = 0; same && i < NCONFIG; ++i)
            same = out[j].v[GT_CUBLAS_P_TILE + i] == p->v[GT_CUBLAS_P_TILE + i];
        if (same) return 1;
    }
    return 0;
}

enum { SPACE_CAP = 2048 };    /* configurations of cuBLASLt's space listed for a shape, at most */
#define SPACE_SCREEN_US 300e3 /* GPU time a shape's warm screen of them may take */
#define SPACE_SWEEP_US 500e3  /* sweep time the ones added to the heuristic's may cost, at about 30 calls each */

/* 1 when one of out[0..n) (the heuristic's picks) has configuration c's algorithm and tile. */
static int near_heuristic(const gt_lt_config *c, const gt_params *out, int n)
{
    gt_params p;
    if (algo_params(&c->algo, c->ws, &p)) return 0;
    for (int j = 0; j < n; ++j)
        if (out[j].v[GT_CUBLAS_P_ALGO] == p.v[GT_CUBLAS_P_ALGO] && out[j].v[GT_CUBLAS_P_TILE] == p.v[GT_CUBLAS_P_TILE])
            return 1;
    return 0;
}

/* The configurations near the heuristic's picks (near_heuristic) first, the rest after, each part in the library's
 * order: the screen's budget goes to the heuristic's neighbours first. */
static void heuristic_first(gt_lt_config *v, int nv, const gt_params *out, int n)
{
    gt_lt_config *near = malloc((size_t)nv * sizeof *near);
    int k = 0, m = 0;
    if (!near) return;
    for (int i = 0; i < nv; ++i) { /* the near ones aside, the rest closed up in place (m <= i) */
        if (near_heuristic(&v[i], out, n)) near[k++] = v[i];
        else v[m++] = v[i];
    }
    memmove(v + k, v, (size_t)m * sizeof *v);
    memcpy(v, near, (size_t)k * sizeof *v);
    free(near);
}

static int by_time(const void *a, const void *b)
{
    const float x = ((const gt_lt_config *)a)->us, y = ((const gt_lt_config *)b)->us;
    return x < 0 || y < 0 ? (x < 0) - (y < 0) : (x > y) - (x < y);
}

/* How many configurations whose calls take us each fit SPACE_SWEEP_US of the sweep's time. */
static int room_for(float us) { return us > 0 ? (int)(SPACE_SWEEP_US / (30.0 * us)) : 0; }

/* The screened configurations, fastest first, appended to out[*n..max) while they are new and their sweep time
 * fits SPACE_SWEEP_US. */
static void append_fastest(gt_lt_config *v, int screened, gt_params *out, int max, int *n)
{
    qsort(v, (size_t)screened, sizeof *v, by_time);
    const int room = screened ? room_for(v[0].us) : 0;
    for (int i = 0, added = 0; i < screened && v[i].us > 0 && added < room && *n < max; ++i) {
        gt_params p;
        if (!algo_params(&v[i].algo, v[i].ws, &p) && !listed(out, *n, &p)) out[(*n)++] = p, added++;
    }
}

/* Zeroed operands for the tight call of s and the workspace on this GPU: 0, or -1 with none left allocated. */
static int screen_buffers(const gt_shape *s, void *buf[4])
{
    const size_t floats[3] = {(size_t)s->m * s->k, (size_t)s->k * s->n, (size_t)s->m * s->n};
    memset(buf, 0, 4 * sizeof *buf);
    int bad = cudaMalloc(&buf[3], LT_PREF_WS) != cudaSuccess;
    for (int i = 0; i < 3 && !bad; ++i)
        bad = cudaMalloc(&buf[i], floats[i] * 4) != cudaSuccess || cudaMemset(buf[i], 0, floats[i] * 4) != cudaSuccess;
    if (!bad) return 0;
    for (int i = 0; i < 4; ++i) cudaFree(buf[i]);
    cudaGetLastError(); /* an allocation that failed is not an error of anything after it */
    return -1;
}

/* cuBLASLt's configurations beyond its heuristic's list for the tight call of s (p describes it), screened warm on
 * this GPU and the fastest appended (a single GEMM: a batch keeps the heuristic's list). Best effort: nothing is added
 * where the library cannot list its space or the GPU has no room for the screen's buffers. Measured:
 * tests/perf/lt_space.cu. */
static void append_space(gt_backend_ctx *ctx, const gt_backend_plan *p, const gt_shape *s, gt_params *out, int max,
                         int *n)
{
    gt_lt_config *v = malloc(SPACE_CAP * sizeof *v);
    void *buf[4];
    if (v) {
        const gt_lt_call c = {.lt = ctx->lt, .desc = p->desc, .la = p->la, .lb = p->lb, .lc = p->lc};
        const int nv = gt_lt_space(&cb, &c, LT_PREF_WS, v, SPACE_CAP);
        heuristic_first(v, nv, out, *n);
        if (nv && !screen_buffers(s, buf)) { /* cuBLASLt's A is our B */
            /* the first alone: where even it would not fit the sweep's time (8192^3: 22 ms a call), none is added */
            int screened = gt_lt_screen(&cb, &c, buf[1], buf[0], buf[2], buf[3], v, 1, SPACE_SCREEN_US);
            if (room_for(v[0].us) > 0)
                screened += gt_lt_screen(&cb, &c, buf[1], buf[0], buf[2], buf[3], v + 1, nv - 1, SPACE_SCREEN_US);
            append_fastest(v, screened, out, max, n);
            for (int i = 0; i < 4; ++i) cudaFree(buf[i]);
        }
    }
    free(v);
}

static int candidates(gt_backend_ctx *ctx, const gt_family *f, const gt_shape *s, gt_params *out, int max, int *n,
                      char *err, size_t errlen)
{
    cublasLtMatmulHeuristicResult_t res[MAX_HEURISTIC];
    int got = 0;
    *n = 0;
    if (max < 1) return 0;
    gt_backend_default_params(&f, &out[(*n)++]); /* cuBLAS's own choice comes first: the yardstick */
    gt_call call = gt_call_tight(s);
    gt_backend_plan *p = plan_for(&call, GT_CUBLAS_API_LT); /* the tight call, for the heuristic and the space */
    cublasStatus_t st = p ? lt_describe(p) : CUBLAS_STATUS_ALLOC_FAILED;
    if (!st) st = heuristic(ctx, p, res, max - 1 < MAX_HEURISTIC ? max - 1 : MAX_HEURISTIC, &got);
    if (st) {
        plan_free(p);
        return snprintf(err, errlen, "cuBLASLt heuristic: %s", cb.cublasGetStatusString(st)), -1;
    }
    for (int i = 0; i < got && *n < max; ++i) {
        gt_params q;
        if (res[i].state == CUBLAS_STATUS_SUCCESS && !algo_params(&res[i].algo, res[i].workspaceSize, &q) &&
            !listed(out, *n, &q))
            out[(*n)++] = q;
    }
    if (*n < max && gt_shape_batch(s) <= 1) append_space(ctx, p, s, out, max, n);
    plan_free(p);
    return 0;
}

static void describe(const gt_family *f, const gt_params *p, char *buf, size_t n)
{
    (void)f;
    const int *v = p->v;
    if (v[GT_CUBLAS_P_API] == GT_CUBLAS_API_SGEMM) snprintf(buf, n, "cublasSgemm (cuBLAS's own choice, FP32 pedantic)");
    else
        snprintf(buf, n, "cuBLASLt algorithm %d (tile %d, stages %d, split-K %d, swizzle %d) of cuBLAS %d",
                 v[GT_CUBLAS_P_ALGO], v[GT_CUBLAS_P_TILE], v[GT_CUBLAS_P_STAGES], v[GT_CUBLAS_P_SPLITK],
                 v[GT_CUBLAS_P_SWIZZLE], v[GT_CUBLAS_P_VER]);
}

const gt_backend gt_backend_cublas = {
    .name = "cublas",
    .available = load,
    .open = ctx_open,
    .close = ctx_close,
    .candidates = candidates,
    .plan = plan,
    .workspace = workspace,
    .run = run,
    .release = plan_free,
    .replayable = replayable,
    .describe = describe,
};

void gt_backend_default_params(const gt_family **f, gt_params *p)
{
    *f = &gt_family_cublas;
    memset(p, 0, sizeof *p);
    p->v[GT_CUBLAS_P_API] = GT_CUBLAS_API_SGEMM;
    p->v[GT_CUBLAS_P_VER] = version() > 0 ? version() : 1;
}

