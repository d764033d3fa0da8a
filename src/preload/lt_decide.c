/* Whether gemmtune may serve a cublasLtMatmul call: a pure function of its descriptor and layouts as lt.c read
 * them, so every rule is checked on the CPU (build/gt_tests --cpu preload_lt). Served: FP32 throughout, host
 * alpha and beta, column-major single matrices, the DEFAULT or BIAS epilogue; anything else goes to cuBLASLt. */
#include "preload.h"

#include <cublasLt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

/* Attributes that only describe the step from one matrix of a batch to the next mean nothing for one matrix
 * (every batch above 1 is forwarded); any other attribute gemmtune does not read must hold its default. */
int gt_pl_lt_desc_role(int attr)
{
    switch (attr) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE:
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE:
    case CUBLASLT_MATMUL_DESC_POINTER_MODE:
    case CUBLASLT_MATMUL_DESC_TRANSA:
    case CUBLASLT_MATMUL_DESC_TRANSB:
    case CUBLASLT_MATMUL_DESC_EPILOGUE:
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE: return GT_PL_LT_FIELD;
    case CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE:
    case CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE: return GT_PL_LT_IGNORED;
    default: return GT_PL_LT_DEFAULT;
    }
}

int gt_pl_lt_layout_role(int attr)
{
    switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE:
    case CUBLASLT_MATRIX_LAYOUT_ORDER:
    case CUBLASLT_MATRIX_LAYOUT_ROWS:
    case CUBLASLT_MATRIX_LAYOUT_COLS:
    case CUBLASLT_MATRIX_LAYOUT_LD:
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: return GT_PL_LT_FIELD;
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET: return GT_PL_LT_IGNORED;
    default: return GT_PL_LT_DEFAULT;
    }
}

#define NAME(x) [x] = #x
static const char *const desc_names[] = {
    NAME(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE), NAME(CUBLASLT_MATMUL_DESC_SCALE_TYPE),
    NAME(CUBLASLT_MATMUL_DESC_POINTER_MODE), NAME(CUBLASLT_MATMUL_DESC_TRANSA), NAME(CUBLASLT_MATMUL_DESC_TRANSB),
    NAME(CUBLASLT_MATMUL_DESC_TRANSC), NAME(CUBLASLT_MATMUL_DESC_FILL_MODE), NAME(CUBLASLT_MATMUL_DESC_EPILOGUE),
    NAME(CUBLASLT_MATMUL_DESC_BIAS_POINTER), NAME(CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE),
    NAME(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER), NAME(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD),
    NAME(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE), NAME(CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE),
    NAME(CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET), NAME(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER),
    NAME(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER), NAME(CUBLASLT_MATMUL_DESC_C_SCALE_POINTER),
    NAME(CUBLASLT_MATMUL_DESC_D_SCALE_POINTER), NAME(CUBLASLT_MATMUL_DESC_AMAX_D_POINTER),
    NAME(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE), NAME(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_POINTER),
    NAME(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_AMAX_POINTER), NAME(CUBLASLT_MATMUL_DESC_FAST_ACCUM),
    NAME(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE), NAME(CUBLASLT_MATMUL_DESC_A_SCALE_MODE),
    NAME(CUBLASLT_MATMUL_DESC_B_SCALE_MODE), NAME(CUBLASLT_MATMUL_DESC_C_SCALE_MODE),
    NAME(CUBLASLT_MATMUL_DESC_D_SCALE_MODE), NAME(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_SCALE_MODE),
    NAME(CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER), NAME(CUBLASLT_MATMUL_DESC_D_OUT_SCALE_MODE),
    NAME(CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR)};
static const char *const layout_names[] = {
    NAME(CUBLASLT_MATRIX_LAYOUT_TYPE), NAME(CUBLASLT_MATRIX_LAYOUT_ORDER), NAME(CUBLASLT_MATRIX_LAYOUT_ROWS),
    NAME(CUBLASLT_MATRIX_LAYOUT_COLS), NAME(CUBLASLT_MATRIX_LAYOUT_LD), NAME(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT),
    NAME(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET), NAME(CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET),
    NAME(CUBLASLT_MATRIX_LAYOUT_BATCH_MODE)};
#undef NAME

void gt_pl_lt_attr_name(int layout, int attr, char *buf, size_t n)
{
    const char *const *names = layout ? layout_names : desc_names;
    const int count = layout ? (int)(sizeof layout_names / sizeof *layout_names)
                             : (int)(sizeof desc_names / sizeof *desc_names);
    if (attr >= 0 && attr < count && names[attr]) snprintf(buf, n, "%s", names[attr]);
    else snprintf(buf, n, "%s attribute %d", layout ? "layout" : "matmul", attr);
}

static int valid_op(int op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C; }

static int clamp(int64_t v) { return v > INT_MAX ? INT_MAX : v < INT_MIN ? INT_MIN : (int)v; }

/* m, n, k of the call and the operands' leading dimensions, from D and op(A), as far as the layouts were read. */
static void describe(const gt_pl_lt_call *lt, gt_pl_call *c)
{
    const int ta = lt->desc.transa, tb = lt->desc.transb;
    memset(c, 0, sizeof *c);
    c->api = GT_PL_LT, c->transa = ta, c->transb = tb, c->alpha = lt->alpha, c->beta = lt->beta, c->batch = 1;
    c->m = clamp((int64_t)lt->d.rows), c->n = clamp((int64_t)lt->d.cols);
    c->k = clamp((int64_t)(ta == CUBLAS_OP_N ? lt->a.cols : lt->a.rows));
    c->lda = clamp(lt->a.ld), c->ldb = clamp(lt->b.ld), c->ldc = clamp(lt->d.ld);
    c->atype = lt->a.type, c->btype = lt->b.type, c->ctype = lt->d.type;
    c->compute = lt->desc.compute, c->algo = (int)lt->desc.epilogue, c->batch = lt->d.batch;
}

/* cuBLASLt's shape rules: op(A) is m x k, op(B) k x n, C and D m x n. */
static int shapes_agree(const gt_pl_lt_call *lt)
{
    const int ta = lt->desc.transa, tb = lt->desc.transb;
    const uint64_t m = lt->d.rows, n = lt->d.cols, k = ta == CUBLAS_OP_N ? lt->a.cols : lt->a.rows;
    const uint64_t am = ta == CUBLAS_OP_N ? lt->a.rows : lt->a.cols;
    const uint64_t bk = tb == CUBLAS_OP_N ? lt->b.rows : lt->b.cols, bn = tb == CUBLAS_OP_N ? lt->b.cols : lt->b.rows;
    return am == m && bk == k && bn == n && lt->c.rows == m && lt->c.cols == n;
}

static int ld_ok(const gt_pl_lt_layout *l) { return l->ld >= 1 && (uint64_t)l->ld >= l->rows; }

static const char *const which[] = {"A", "B", "C", "D"};

/* The arguments cuBLASLt itself rejects or that need its own path (another order, a batch): forwarded, so that
 * it answers with its own status. GT_PL_SERVE when none applies. */
static gt_pl_reason structure(const gt_pl_lt_call *lt, gt_pl_lt_plan *p)
{
    const gt_pl_lt_layout *l[] = {&lt->a, &lt->b, &lt->c, &lt->d};
    if (!lt->handle || !lt->desc.ok || !lt->a.ok || !lt->b.ok || !lt->c.ok || !lt->d.ok || !lt->alpha || !lt->beta)
        return GT_PL_INVALID;
    if (!valid_op(lt->desc.transa) || !valid_op(lt->desc.transb) || !shapes_agree(lt)) return GT_PL_INVALID;
    for (int i = 0; i < 4; ++i)
        if (l[i]->order != CUBLASLT_ORDER_COL)
            return snprintf(p->detail, sizeof p->detail, "%s: cublasLtOrder_t %d", which[i], l[i]->order), GT_PL_LT_ORDER;
    for (int i = 0; i < 4; ++i)
        if (!ld_ok(l[i])) return GT_PL_INVALID;
    if (lt->C == lt->D && lt->c.ld != lt->d.ld) return GT_PL_INVALID; /* in place needs one layout */
    for (int i = 0; i < 4; ++i)
        if (l[i]->batch != 1)
            return snprintf(p->detail, sizeof p->detail, "%s: batch count %d", which[i], l[i]->batch), GT_PL_LT_BATCH;
    return GT_PL_SERVE;
}

/* Types, compute, pointer mode, attributes and epilogue: what gemmtune computes is FP32 GEMM with host scalars. */
static gt_pl_reason semantics(const gt_pl_lt_call *lt, gt_pl_lt_plan *p)
{
    const gt_pl_lt_layout *l[] = {&lt->a, &lt->b, &lt->c, &lt->d};
    const gt_pl_lt_desc *d = &lt->desc;
    for (int i = 0; i < 4; ++i)
        if (l[i]->type != CUDA_R_32F)
            return snprintf(p->detail, sizeof p->detail, "%s: cudaDataType %d", which[i], l[i]->type), GT_PL_LT_TYPES;
    if (d->scale_type != CUDA_R_32F)
        return snprintf(p->detail, sizeof p->detail, "scale cudaDataType %d", d->scale_type), GT_PL_LT_TYPES;
    if (d->compute != CUBLAS_COMPUTE_32F && d->compute != CUBLAS_COMPUTE_32F_PEDANTIC)
        return snprintf(p->detail, sizeof p->detail, "cublasComputeType_t %d", d->compute), GT_PL_LT_COMPUTE;
    if (d->pointer_mode != CUBLASLT_POINTER_MODE_HOST)
        return snprintf(p->detail, sizeof p->detail, "cublasLtPointerMode_t %d", d->pointer_mode), GT_PL_DEVICE_POINTERS;
    if (d->attr >= 0) return gt_pl_lt_attr_name(0, d->attr, p->detail, sizeof p->detail), GT_PL_LT_ATTRIBUTE;
    for (int i = 0; i < 4; ++i)
        if (l[i]->attr >= 0) {
            char name[96];
            gt_pl_lt_attr_name(1, l[i]->attr, name, sizeof name);
            return snprintf(p->detail, sizeof p->detail, "%s: %s", which[i], name), GT_PL_LT_ATTRIBUTE;
        }
    if (d->epilogue != CUBLASLT_EPILOGUE_DEFAULT && d->epilogue != CUBLASLT_EPILOGUE_BIAS)
        return snprintf(p->detail, sizeof p->detail, "cublasLtEpilogue_t %u", d->epilogue), GT_PL_LT_EPILOGUE;
    if (d->epilogue == CUBLASLT_EPILOGUE_BIAS) {
        if (d->bias_type != -1 && d->bias_type != CUDA_R_32F)
            return snprintf(p->detail, sizeof p->detail, "bias cudaDataType %d", d->bias_type), GT_PL_LT_TYPES;
        if (!d->bias) return GT_PL_INVALID;
    }
    return GT_PL_SERVE;
}

static int fits(const gt_pl_lt_layout *l) { return l->rows <= INT_MAX && l->cols <= INT_MAX && l->ld <= INT_MAX; }

gt_pl_reason gt_pl_lt_classify(const gt_pl_lt_call *lt, const gt_pl_config *cfg, gt_pl_lt_plan *p)
{
    memset(p, 0, sizeof *p);
    describe(lt, &p->call);
    if (!cfg->enabled) return GT_PL_OFF;
    gt_pl_reason r = structure(lt, p);
    if (r != GT_PL_SERVE) return r;
    if (lt->d.rows == 0 || lt->d.cols == 0) return GT_PL_EMPTY;
    if ((lt->desc.transa == CUBLAS_OP_N ? lt->a.cols : lt->a.rows) == 0) return GT_PL_K_ZERO;
    if (cfg->numerics) return snprintf(p->detail, sizeof p->detail, "%s", cfg->numerics), GT_PL_ENV_NUMERICS;
    if ((r = semantics(lt, p)) != GT_PL_SERVE) return r;
    if (!fits(&lt->a) || !fits(&lt->b) || !fits(&lt->c) || !fits(&lt->d)) return GT_PL_LT_RANGE;
    const float alpha = *(const float *)lt->alpha, beta = *(const float *)lt->beta;
    p->scalars = 1, memcpy(&p->alpha_bits, &alpha, sizeof alpha), memcpy(&p->beta_bits, &beta, sizeof beta);
    if (alpha == 0.0f) return GT_PL_ALPHA_ZERO;
    p->bias = lt->desc.epilogue == CUBLASLT_EPILOGUE_BIAS;
    if (p->bias && beta != 0.0f) return GT_PL_LT_BIAS_BETA;
    p->alpha = alpha, p->beta = p->bias ? 1.0f : beta;
    p->copy_c = !p->bias && beta != 0.0f && lt->C != lt->D;
    p->ldc_src = (int)lt->c.ld;
    return GT_PL_SERVE;
}

double gt_pl_lt_pass_ms(int m, int n, int copy_c)
{
    const double bytes = (copy_c ? 12.0 : 8.0) * (m > 0 ? m : 0) * (n > 0 ? n : 0); /* the pass's, then the read */
    return GT_PL_PASS_LAUNCH_MS + bytes / GT_PL_PASS_BYTES_PER_MS;
}

int gt_pl_lt_pass_pays(double kernel_ms, double cublas_ms, double pass_ms)
{
    return kernel_ms > 0 && cublas_ms > 0 && pass_ms >= 0 && (kernel_ms + pass_ms) * 1.02 < cublas_ms;
}
