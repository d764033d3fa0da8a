/* The "ozaki" backend: runs the ozaki family (kernels/ozaki.c). Its kernels are templates/ozaki.cu, rendered with
 * the moduli count and compiled with NVRTC for the device's architecture on first use (per device and count, kept
 * loaded for the process, as src/lib/bias.c does); the INT8 products are one strided-batched cuBLASLt call with
 * int32 sums, through the cuBLAS functions the cublas backend found (cublas_fns.h: the real cuBLAS also inside the
 * drop-in), by the algorithm of the candidate's rank (PICK) in cuBLASLt's heuristic list. Row-major C = op(A)
 * op(B): both operands' residues are stored k-contiguous, so the products are cuBLASLt's "TN" int8 GEMM
 * C^T (N x M) = R_B^T R_A, one matrix a modulus. Tests: tests/test_ozaki.c. */
#include "backend.h"
#include "compile.h"
#include "cublas_fns.h"
#include "fixed.h"
#include "ozaki_family.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NVRTC (compile.c) is referenced weakly, as by cubin.c: a program that links the static library for the table
 * path alone pulls in no NVRTC, and then this backend is absent (available()). */
#pragma weak gt_nvrtc_compile

enum { MAX_DEVICES = 64, MAX_GRID_Y = 65535 };
#define LT_WS ((size_t)32 << 20) /* cuBLASLt workspace the heuristic may count on */

/* templates/ozaki.cu's kernels for one device and moduli count. */
typedef struct {
    cudaKernel_t norms, scales, residues, reconstruct;
} oz_kernels;

static oz_kernels loaded[MAX_DEVICES][GT_OZAKI_MAXMOD];
static _Atomic int ready[MAX_DEVICES][GT_OZAKI_MAXMOD]; /* 1 once loaded[][] is set */
static char failed[MAX_DEVICES][GT_OZAKI_MAXMOD][256];  /* why a compile or load failed; "" while not failed */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

struct gt_backend_ctx {
    cublasLtHandle_t lt;
};

struct gt_backend_plan {
    int nmod;
    gt_shape s;
    gt_ozaki_consts c;
    gt_ozaki_layout L;
    const oz_kernels *k;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc; /* cuBLASLt's A (the residues of op(B)), B (of op(A)), C (the products) */
    cublasLtMatmulAlgo_t algo;
    size_t lt_ws;
};

static int available(void) { return gt_nvrtc_compile != NULL && gt_cublas_fns_get() != NULL; }

static int ctx_open(gt_backend_ctx **out, char *err, size_t errlen)
{
    const gt_cublas_fns *cb = gt_cublas_fns_get();
    *out = NULL;
    if (!cb) return snprintf(err, errlen, "cuBLAS is not linked in"), -1;
    gt_backend_ctx *c = calloc(1, sizeof *c);
    if (!c) return snprintf(err, errlen, "out of memory"), -1;
    cublasStatus_t st = cb->cublasLtCreate(&c->lt);
    if (st != CUBLAS_STATUS_SUCCESS) {
        free(c);
        return snprintf(err, errlen, "cublasLtCreate: %s", cb->cublasGetStatusString(st)), -1;
    }
    *out = c;
    return 0;
}

static void ctx_close(gt_backend_ctx *c)
{
    if (!c) return;
    gt_cublas_fns_get()->cublasLtDestroy(c->lt);
    free(c);
}

/* Compile templates/ozaki.cu with NMOD nmod for the device's sm_XY and load its four kernels. 0, or -1 with msg. */
static int compile_and_load(int device, int nmod, oz_kernels *k, char *msg, size_t msglen)
{
    static const char *const names[] = {"gt_oz_norms", "gt_oz_scales", "gt_oz_residues", "gt_oz_reconstruct"};
    char define[32];
    cudaKernel_t v[4];
    snprintf(define, sizeof define, "#define NMOD %d\n", nmod);
    if (gt_fixed_load(device, "ozaki.cu", define, names, 4, v, msg, msglen)) return -1;
    k->norms = v[0], k->scales = v[1], k->residues = v[2], k->reconstruct = v[3];
    return 0; /* kept loaded until the process ends */
}

/* The current device's kernels for nmod moduli, compiled on first use. NULL with err when that failed (and it is
 * not tried again). */
static const oz_kernels *kernels_for(int nmod, char *err, size_t errlen)
{
    int d = -1;
    if (cudaGetDevice(&d) != cudaSuccess || d < 0 || d >= MAX_DEVICES) {
        (void)cudaGetLastError();
        return snprintf(err, errlen, "no current device this backend serves"), NULL;
    }
    if (atomic_load_explicit(&ready[d][nmod], memory_order_acquire)) return &loaded[d][nmod];
    pthread_mutex_lock(&lock);
    if (!atomic_load_explicit(&ready[d][nmod], memory_order_relaxed) && !failed[d][nmod][0] &&
        compile_and_load(d, nmod, &loaded[d][nmod], failed[d][nmod], sizeof failed[d][nmod]) == 0)
        atomic_store_explicit(&ready[d][nmod], 1, memory_order_release);
    pthread_mutex_unlock(&lock);
    if (atomic_load_explicit(&ready[d][nmod], memory_order_acquire)) return &loaded[d][nmod];
    snprintf(err, errlen, "%s", failed[d][nmod]);
    return NULL;
}

static void plan_free(gt_backend_plan *p)
{
    if (!p) return;
    const gt_cublas_fns *cb = gt_cublas_fns_get();
    if (p->desc) cb->cublasLtMatmulDescDestroy(p->desc);
    if (p->la) cb->cublasLtMatrixLayoutDestroy(p->la);
    if (p->lb) cb->cublasLtMatrixLayoutDestroy(p->lb);
    if (p->lc) cb->cublasLtMatrixLayoutDestroy(p->lc);
    free(p);
}

/* The int8 products' descriptors: nmod matrices C_l^T (Np x Mp, int32) = R_B,l^T (Np x Kp) R_A,l (Kp x Mp), both
 * residue matrices stored Kp deep a column, their padding rows zero. */
static cublasStatus_t lt_describe(const gt_cublas_fns *cb, gt_backend_plan *p)
{
    const cublasOperation_t t = CUBLAS_OP_T, nop = CUBLAS_OP_N;
    const int m = p->L.mp, n = p->L.np, kp = p->L.kp, np = p->L.np, batch = p->nmod;
    cublasStatus_t st = cb->cublasLtMatmulDescCreate(&p->desc, CUBLAS_COMPUTE_32I, CUDA_R_32I);
    if (!st) st = cb->cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t);
    if (!st) st = cb->cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &nop, sizeof nop);
    if (!st) st = cb->cublasLtMatrixLayoutCreate(&p->la, CUDA_R_8I, kp, n, kp);
    if (!st) st = cb->cublasLtMatrixLayoutCreate(&p->lb, CUDA_R_8I, kp, m, kp);
    if (!st) st = cb->cublasLtMatrixLayoutCreate(&p->lc, CUDA_R_32I, n, m, np);
    cublasLtMatrixLayout_t l[] = {p->la, p->lb, p->lc};
    const long long stride[] = {(long long)n * kp, (long long)m * kp, (long long)m * np};
    for (int i = 0; !st && i < 3; ++i) {
        st = cb->cublasLtMatrixLayoutSetAttribute(l[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch);
        if (!st)
            st = cb->cublasLtMatrixLayoutSetAttribute(l[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride[i],
                                                      sizeof stride[i]);
    }
    return st;
}

/* The algorithm of rank pick in cuBLASLt's heuristic list for the products (our buffers: 256-byte aligned), and its
 * workspace. CUBLAS_STATUS_NOT_SUPPORTED where the list is shorter. */
static cublasStatus_t lt_choose(const gt_cublas_fns *cb, gt_backend_ctx *ctx, int pick, gt_backend_plan *p)
{
    cublasLtMatmulPreference_t pref = NULL;
    cublasLtMatmulHeuristicResult_t res[GT_OZAKI_MAX_PICK + 1];
    const size_t wsmax = LT_WS;
    int got = 0;
    if (pick < 0 || pick > GT_OZAKI_MAX_PICK) return CUBLAS_STATUS_INVALID_VALUE; /* legal() says so too */
    cublasStatus_t st = cb->cublasLtMatmulPreferenceCreate(&pref);
    if (!st) st = cb->cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsmax,
                                                           sizeof wsmax);
    if (!st)
        st = cb->cublasLtMatmulAlgoGetHeuristic(ctx->lt, p->desc, p->la, p->lb, p->lc, p->lc, pref, pick + 1, res, &got);
    if (pref) cb->cublasLtMatmulPreferenceDestroy(pref);
    if (!st && (got <= pick || res[pick].state != CUBLAS_STATUS_SUCCESS)) st = CUBLAS_STATUS_NOT_SUPPORTED;
    if (!st) p->algo = res[pick].algo, p->lt_ws = res[pick].workspaceSize;
    return st;
}

static int replayable(const gt_family *f, const gt_params *p, char *why, size_t n)
{
    (void)f;
    if (p->v[GT_OZAKI_P_REV] == GT_OZAKI_REV) return 1;
    snprintf(why, n, "timed with revision %d of templates/ozaki.cu, this build runs revision %d", p->v[GT_OZAKI_P_REV],
             GT_OZAKI_REV);
    return 0;
}

static gt_status plan(gt_backend_ctx *ctx, const gt_family *f, const gt_params *par, const gt_call *call,
                      gt_backend_plan **out, char *err, size_t errlen)
{
    const gt_cublas_fns *cb = gt_cublas_fns_get();
    *out = NULL;
    if (!replayable(f, par, err, errlen)) return GT_ST_UNAVAILABLE;
    if (gt_shape_batch(&call->shape) > 1 || (f->applicable && !f->applicable(par, call)))
        return snprintf(err, errlen, "ozaki: not for this call (a batch, or K, M, N or workspace past the limits)"),
               GT_ST_UNAVAILABLE;
    gt_backend_plan *p = calloc(1, sizeof *p);
    if (!p) return snprintf(err, errlen, "out of memory"), GT_ST_LAUNCH_ERROR;
    p->nmod = par->v[GT_OZAKI_P_NMOD];
    p->s = call->shape;
    if (gt_ozaki_consts_make(p->nmod, &p->c)) {
        snprintf(err, errlen, "ozaki: NMOD=%d is not 2 to 9 moduli", p->nmod);
        plan_free(p);
        return GT_ST_UNAVAILABLE;
    }
    if (!(p->k = kernels_for(p->nmod, err, errlen))) { /* err says why */
        plan_free(p);
        return GT_ST_LAUNCH_ERROR;
    }
    gt_ozaki_layout_make(p->nmod, &p->s, 0, &p->L);
    const int pick = par->v[GT_OZAKI_P_PICK];
    cublasStatus_t st = lt_describe(cb, p);
    if (!st) st = lt_choose(cb, ctx, pick, p);
    if (st) {
        snprintf(err, errlen, "cuBLASLt int8 products, algorithm of rank %d: %s", pick, cb->cublasGetStatusString(st));
        plan_free(p);
        return GT_ST_UNAVAILABLE;
    }
    gt_ozaki_layout_make(p->nmod, &p->s, p->lt_ws, &p->L);
    *out = p;
    return GT_ST_OK;
}

static size_t workspace(const gt_backend_plan *p) { return p->L.total; }

static int launch(cudaKernel_t k, unsigned gx, unsigned gy, unsigned bx, unsigned by, void **args, cudaStream_t s,
                  const char *what, char *err, size_t errlen)
{
    const dim3 grid = {gx, gy, 1}, block = {bx, by, 1};
    cudaError_t e = cudaLaunchKernel((const void *)k, grid, block, args, 0, s);
    if (e == cudaSuccess) return 0;
    (void)cudaGetLastError();
    return snprintf(err, errlen, "ozaki %s: %s", what, cudaGetErrorString(e)), -1;
}

/* Both operands' norms, scales and residues, one launch each (op(A)'s blocks first; args[2] is their count). */
static int norms_to_residues(const gt_backend_plan *p, gt_ozaki_operand *oa, gt_ozaki_operand *ob, cudaStream_t s,
                             char *err, size_t errlen)
{
    const gt_ozaki_layout *L = &p->L;
    int K = p->s.k, kp = L->kp, bits = p->c.bits, na = L->norms.a, sa = L->scales.a, ra = L->residues.a;
    gt_ozaki_consts c = p->c;
    void *nargs[] = {oa, ob, &na, &K}, *sargs[] = {oa, ob, &sa, &bits}, *rargs[] = {oa, ob, &ra, &K, &kp, &c};
    if (launch(p->k->norms, (unsigned)(L->norms.a + L->norms.b), 1, 32, 8, nargs, s, "norms", err, errlen) ||
        launch(p->k->scales, (unsigned)(L->scales.a + L->scales.b), 1, 256, 1, sargs, s, "scales", err, errlen))
        return -1;
    return launch(p->k->residues, (unsigned)(L->residues.a + L->residues.b), 1, 32, 8, rargs, s, "residues", err,
                  errlen);
}

static int run(gt_backend_ctx *ctx, const gt_backend_plan *p, const gt_args *a, void *ws, cudaStream_t stream,
               char *err, size_t errlen)
{
    const gt_cublas_fns *cb = gt_cublas_fns_get();
    char *w = ws;
    int *prod = (int *)(w + p->L.prod), *es = (int *)(w + p->L.scale), *et = es + a->m;
    double *part = (double *)(w + p->L.part);
    signed char *ra = (signed char *)(w + p->L.res_a), *rb = (signed char *)(w + p->L.res_b);
    int M = a->m, N = a->n, K = a->k, mp = p->L.mp, np = p->L.np, ta = a->ta, tb = a->tb, ntb = !a->tb,
        lda = a->lda, ldb = a->ldb, ldc = a->ldc;
    float alpha = a->alpha, beta = a->beta;
    const float *A = a->A, *B = a->B;
    float *C = a->C;
    gt_ozaki_operand oa = {A, part, es, ra, lda, ta, M, mp, p->L.slices_a, p->L.kslice_a};
    gt_ozaki_operand ob = {B, part + (size_t)p->L.slices_a * M, et, rb, ldb, ntb, N, np, p->L.slices_b, p->L.kslice_b};
    if (norms_to_residues(p, &oa, &ob, stream, err, errlen)) return -1;
    const int one = 1, zero = 0;
    cublasStatus_t st = cb->cublasLtMatmul(ctx->lt, p->desc, &one, rb, p->la, ra, p->lb, &zero, prod, p->lc, prod,
                                           p->lc, &p->algo, w + p->L.lt, p->lt_ws, stream);
    if (st != CUBLAS_STATUS_SUCCESS)
        return snprintf(err, errlen, "ozaki int8 products (cublasLtMatmul): %s", cb->cublasGetStatusString(st)), -1;
    gt_ozaki_consts c = p->c;
    void *args[] = {&prod, &np, &mp, &M, &N, &K, &c, &es, &et, &alpha, &A, &lda, &ta, &B, &ldb, &tb, &beta, &C, &ldc};
    return launch(p->k->reconstruct, (unsigned)(N + 256 * GT_OZAKI_RC - 1) / (256 * GT_OZAKI_RC),
                  (unsigned)(M < MAX_GRID_Y ? M : MAX_GRID_Y), 256, 1, args, stream, "reconstruct", err, errlen);
}

/* A static space: the tuner enumerates the family's params; the library has no list of its own. */
static int candidates(gt_backend_ctx *ctx, const gt_family *f, const gt_shape *s, gt_params *out, int max, int *n,
                      char *err, size_t errlen)
{
    (void)ctx, (void)f, (void)s, (void)out, (void)max, (void)err, (void)errlen;
    *n = 0;
    return 0;
}

static void describe(const gt_family *f, const gt_params *p, char *buf, size_t n)
{
    (void)f;
    snprintf(buf, n, "Ozaki scheme II: %d INT8 products of residues (cuBLASLt's algorithm of rank %d, int32 sums), "
                     "rebuilt in FP64 (templates/ozaki.cu revision %d)",
             p->v[GT_OZAKI_P_NMOD], p->v[GT_OZAKI_P_PICK], p->v[GT_OZAKI_P_REV]);
}

const gt_backend gt_backend_ozaki = {
    .name = "ozaki",
    .available = available,
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
