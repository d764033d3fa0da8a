/* cuBLASLt's FP32 configuration space for one call, and its warm screen: lt_space.h. */
#include "lt_space.h"

#include <cuda_runtime_api.h>
#include <string.h>

enum { MAX_IDS = 256, MAX_LIST = 256 };
enum { MAX_OPTION = 7 }; /* the highest custom option tried (the study's best configurations took 0 to 2) */

/* The split-K counts tried where an algorithm splits K at all. */
static const int splits[] = {1, 2, 3, 4, 6, 8, 12, 16};

/* What one algorithm lists: its tiles and stages (UNDEFINED alone where it lists none), whether it splits K, its
 * reduction schemes, CTA swizzle and custom options. */
typedef struct {
    unsigned tiles[MAX_LIST], stages[MAX_LIST];
    int ntiles, nstages, splitk, swizzle, options;
    unsigned reductions;
} caps;

static int cap_int(const gt_cublas_fns *cb, const cublasLtMatmulAlgo_t *a, cublasLtMatmulAlgoCapAttributes_t at)
{
    int v = 0; /* every scalar capability is a 32-bit int or unsigned */
    size_t got = 0;
    return cb->cublasLtMatmulAlgoCapGetAttribute(a, at, &v, sizeof v, &got) == CUBLAS_STATUS_SUCCESS ? v : 0;
}

/* A list capability into out (at most MAX_LIST), or fallback alone where the algorithm lists none. */
static int cap_list(const gt_cublas_fns *cb, const cublasLtMatmulAlgo_t *a, cublasLtMatmulAlgoCapAttributes_t at,
                    unsigned *out, unsigned fallback)
{
    size_t bytes = 0;
    if (cb->cublasLtMatmulAlgoCapGetAttribute(a, at, NULL, 0, &bytes) != CUBLAS_STATUS_SUCCESS || bytes == 0 ||
        bytes > MAX_LIST * sizeof *out || cb->cublasLtMatmulAlgoCapGetAttribute(a, at, out, bytes, &bytes))
        return out[0] = fallback, 1;
    return (int)(bytes / sizeof *out);
}

/* 1 when the algorithm takes operands on 16-byte boundaries (the vendor family's applicable() asks for 16). */
static int takes_16(const gt_cublas_fns *cb, const cublasLtMatmulAlgo_t *a)
{
    const cublasLtMatmulAlgoCapAttributes_t at[] = {
        CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_A_BYTES, CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_C_BYTES, CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; i < 4; ++i)
        if (cap_int(cb, a, at[i]) > 16) return 0;
    return 1;
}

static void caps_of(const gt_cublas_fns *cb, const cublasLtMatmulAlgo_t *a, caps *c)
{
    c->ntiles = cap_list(cb, a, CUBLASLT_ALGO_CAP_TILE_IDS, c->tiles, CUBLASLT_MATMUL_TILE_UNDEFINED);
    c->nstages = cap_list(cb, a, CUBLASLT_ALGO_CAP_STAGES_IDS, c->stages, CUBLASLT_MATMUL_STAGES_UNDEFINED);
    c->splitk = cap_int(cb, a, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT);
    c->reductions = (unsigned)cap_int(cb, a, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK);
    c->swizzle = cap_int(cb, a, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT) > 0;
    c->options = cap_int(cb, a, CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX);
    if (c->options < 0) c->options = 0;
    if (c->options > MAX_OPTION) c->options = MAX_OPTION;
}

/* The attributes of one configuration of an algorithm. */
typedef struct {
    unsigned tile, stages, reduction, swizzle, option;
    int splitk;
} choice;

/* 1 when cuBLASLt runs the call with configuration ch of base within ws_max bytes of workspace: it into *out. */
static int check(const gt_cublas_fns *cb, const gt_lt_call *c, const cublasLtMatmulAlgo_t *base, const choice *ch,
                 size_t ws_max, gt_lt_config *out)
{
    cublasLtMatmulAlgo_t a = *base;
    const struct {
        cublasLtMatmulAlgoConfigAttributes_t at;
        const void *v;
    } set[] = {{CUBLASLT_ALGO_CONFIG_TILE_ID, &ch->tile},
               {CUBLASLT_ALGO_CONFIG_STAGES_ID, &ch->stages},
               {CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &ch->splitk},
               {CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &ch->reduction},
               {CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &ch->swizzle},
               {CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &ch->option}};
    for (size_t i = 0; i < sizeof set / sizeof set[0]; ++i)
        if (cb->cublasLtMatmulAlgoConfigSetAttribute(&a, set[i].at, set[i].v, 4)) return 0; /* all 32-bit */
    cublasLtMatmulHeuristicResult_t r;
    if (cb->cublasLtMatmulAlgoCheck(c->lt, c->desc, c->la, c->lb, c->lc, c->lc, &a, &r) != CUBLAS_STATUS_SUCCESS ||
        r.workspaceSize > ws_max)
        return 0;
    *out = (gt_lt_config){.algo = a, .ws = r.workspaceSize, .us = -1.0f};
    return 1;
}

/* The split, reduction, swizzle and option variants of one tile and stages pair, appended to out[*n..cap). */
static void variants(const gt_cublas_fns *cb, const gt_lt_call *c, const cublasLtMatmulAlgo_t *base, const caps *k,
                     choice ch, size_t ws_max, gt_lt_config *out, int *n, int cap)
{
    for (size_t s = 0; s < sizeof splits / sizeof splits[0] && (s == 0 || k->splitk); ++s)
        for (unsigned red = s ? 1 : 0; red <= (s ? 4u : 0u); red = red ? red * 2 : 1) {
            if (red && !(k->reductions & red)) continue;
            for (unsigned sw = 0; sw <= (unsigned)k->swizzle; ++sw)
                for (unsigned opt = 0; opt <= (unsigned)k->options; ++opt) {
                    ch.splitk = splits[s], ch.reduction = red, ch.swizzle = sw, ch.option = opt;
                    if (*n < cap && check(cb, c, base, &ch, ws_max, &out[*n])) ++*n;
                }
        }
}

/* Algorithm id's configurations: every tile and stages pair whose plain form (no split, swizzle or option) runs
 * the call, with its variants (a pair that fails plain is not tried further: the study lost 2% of the valid
 * configurations to that, none of them a best, and took 924 checks where every combination took 57 million). */
static void algorithm(const gt_cublas_fns *cb, const gt_lt_call *c, int id, size_t ws_max, gt_lt_config *out, int *n,
                      int cap)
{
    cublasLtMatmulAlgo_t base;
    caps k;
    if (cb->cublasLtMatmulAlgoInit(c->lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                                   CUDA_R_32F, id, &base) != CUBLAS_STATUS_SUCCESS ||
        !takes_16(cb, &base))
        return;
    caps_of(cb, &base, &k);
    for (int t = 0; t < k.ntiles; ++t)
        for (int s = 0; s < k.nstages; ++s) {
            const choice plain = {.tile = k.tiles[t], .stages = k.stages[s], .splitk = 1};
            gt_lt_config probe;
            if (check(cb, c, &base, &plain, ws_max, &probe)) variants(cb, c, &base, &k, plain, ws_max, out, n, cap);
        }
}

int gt_lt_space(const gt_cublas_fns *cb, const gt_lt_call *c, size_t ws_max, gt_lt_config *out, int cap)
{
    int ids[MAX_IDS], nids = 0, n = 0;
    if (!cb->cublasLtMatmulAlgoGetIds || !cb->cublasLtMatmulAlgoCapGetAttribute) return 0;
    if (cb->cublasLtMatmulAlgoGetIds(c->lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                                     CUDA_R_32F, MAX_IDS, ids, &nids) != CUBLAS_STATUS_SUCCESS)
        return 0;
    for (int i = 0; i < nids && n < cap; ++i) algorithm(cb, c, ids[i], ws_max, out, &n, cap);
    return n;
}

/* One call of v; 0 when cuBLASLt ran it. */
static int call(const gt_cublas_fns *cb, const gt_lt_call *c, const float *A, const float *B, float *C, void *ws,
                const gt_lt_config *v)
{
    const float one = 1.0f, zero = 0.0f;
    return cb->cublasLtMatmul(c->lt, c->desc, &one, A, c->la, B, c->lb, &zero, C, c->lc, C, c->lc, &v->algo, ws, v->ws,
                              0) != CUBLAS_STATUS_SUCCESS;
}

int gt_lt_screen(const gt_cublas_fns *cb, const gt_lt_call *c, const float *A, const float *B, float *C, void *ws,
                 gt_lt_config *v, int n, double budget_us)
{
    cudaEvent_t e0, e1;
    int i = 0;
    if (cudaEventCreate(&e0) != cudaSuccess) return 0;
    if (cudaEventCreate(&e1) != cudaSuccess) return cudaEventDestroy(e0), 0;
    for (double spent = 0; i < n && spent < budget_us; ++i) {
        float ms = -1.0f;
        int bad = call(cb, c, A, B, C, ws, &v[i]) || cudaEventRecord(e0, 0) != cudaSuccess;
        for (int r = 0; !bad && r < 3; ++r) bad = call(cb, c, A, B, C, ws, &v[i]);
        bad = bad || cudaEventRecord(e1, 0) != cudaSuccess || cudaEventSynchronize(e1) != cudaSuccess ||
              cudaEventElapsedTime(&ms, e0, e1) != cudaSuccess;
        v[i].us = bad ? -1.0f : ms * 1000.0f / 3;
        spent += bad ? 0 : 4 * v[i].us;
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return i;
}
