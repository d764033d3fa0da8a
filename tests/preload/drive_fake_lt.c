/* Calls cublasLtMatmul on the stand-in cuBLASLt (fake_cublaslt.c) with one case per line of the table and prints,
 * per case, the status it got, how many calls reached the fake and whether every argument arrived unchanged.
 * tests/test_preload_lt.c runs it with and without the preload (no GPU: CUDA_VISIBLE_DEVICES="") and compares;
 * the preload's log tells which path each call took.
 *   build/tests/drive_fake_lt        (LD_PRELOAD=build/libgemmtune_cublas.so to interpose)
 *   build/tests/drive_fake_lt memo   one call's descriptors made once and called again and again, then changed: the
 *                                    getters each call made of the stand-in (the drop-in reads what it has not seen) */
#include "fake_cublaslt.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cublasStatus_t fake_cublas_calls_lt(cublasLtHandle_t h, cublasLtMatmulDesc_t desc, const void *alpha, const void *A,
                                    cublasLtMatrixLayout_t Adesc, const void *B, cublasLtMatrixLayout_t Bdesc,
                                    const void *beta, const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                                    cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo, void *workspace,
                                    size_t workspaceSize, cudaStream_t stream);

/* Zero fields mean: FP32, COMPUTE_32F, host pointers, N, DEFAULT epilogue, column-major, one matrix, alpha 1.5,
 * C and D the same matrix, the program's own call. Each case has its own m, so the log has a line for each. */
typedef struct {
    const char *name;
    int m, n, k, ta, tb;
    float beta;
    int caller;               /* 0 the program, 1 from inside cuBLAS, 2 from inside cuBLASLt */
    int compute, scale, pmode, atype, order_a, batch, alpha_zero;
    unsigned epilogue;
    int bias_type, set_bias_type, sm_count, new_desc_attr, batch_mode_b, new_layout_attr;
    int c_apart;              /* 1: C another matrix with ldc = ldd + 3; 2: C == D with that other layout */
    int null_handle, null_desc, bad_shape;
    cublasStatus_t st;
} lcase;

#define T CUBLAS_OP_T
static const lcase cases[] = {
    {.name = "servable_nn", .m = 64, .n = 32, .k = 16, .beta = 0.5f},
    {.name = "servable_bias_tn", .m = 48, .n = 32, .k = 16, .ta = T, .epilogue = CUBLASLT_EPILOGUE_BIAS},
    {.name = "servable_bias_typed", .m = 48, .n = 24, .k = 16, .epilogue = CUBLASLT_EPILOGUE_BIAS,
     .set_bias_type = 1, .bias_type = CUDA_R_32F},
    {.name = "servable_c_apart", .m = 40, .n = 24, .k = 8, .tb = T, .beta = 2.0f, .c_apart = 1},
    {.name = "servable_pedantic", .m = 72, .n = 8, .k = 8, .compute = CUBLAS_COMPUTE_32F_PEDANTIC},
    {.name = "tf32", .m = 60, .n = 32, .k = 16, .compute = CUBLAS_COMPUTE_32F_FAST_TF32},
    {.name = "half_a", .m = 61, .n = 32, .k = 16, .atype = CUDA_R_16F},
    {.name = "scale_64f", .m = 62, .n = 32, .k = 16, .scale = CUDA_R_64F},
    {.name = "relu_bias", .m = 63, .n = 32, .k = 16, .epilogue = CUBLASLT_EPILOGUE_RELU_BIAS},
    {.name = "gelu", .m = 65, .n = 32, .k = 16, .epilogue = CUBLASLT_EPILOGUE_GELU},
    {.name = "bias_beta", .m = 66, .n = 32, .k = 16, .beta = 0.5f, .epilogue = CUBLASLT_EPILOGUE_BIAS},
    {.name = "bias_16f", .m = 67, .n = 32, .k = 16, .epilogue = CUBLASLT_EPILOGUE_BIAS, .set_bias_type = 1,
     .bias_type = CUDA_R_16F},
    {.name = "device_pointers", .m = 68, .n = 32, .k = 16, .pmode = CUBLASLT_POINTER_MODE_DEVICE},
    {.name = "row_order", .m = 69, .n = 32, .k = 16, .order_a = CUBLASLT_ORDER_ROW},
    {.name = "batch_2", .m = 70, .n = 32, .k = 16, .batch = 2},
    {.name = "sm_count", .m = 71, .n = 32, .k = 16, .sm_count = 100},
    {.name = "new_desc_attr", .m = 73, .n = 32, .k = 16, .new_desc_attr = 7},
    {.name = "pointer_array_b", .m = 74, .n = 32, .k = 16, .batch_mode_b = CUBLASLT_BATCH_MODE_POINTER_ARRAY},
    {.name = "new_layout_attr", .m = 75, .n = 32, .k = 16, .new_layout_attr = 3},
    {.name = "alpha_zero", .m = 76, .n = 32, .k = 16, .alpha_zero = 1},
    {.name = "k_zero", .m = 77, .n = 32, .k = 0},
    {.name = "bad_shape", .m = 78, .n = 32, .k = 16, .bad_shape = 1, .st = CUBLAS_STATUS_INVALID_VALUE},
    {.name = "null_desc", .m = 79, .n = 32, .k = 16, .null_desc = 1, .st = CUBLAS_STATUS_INVALID_VALUE},
    {.name = "null_handle", .m = 80, .n = 32, .k = 16, .null_handle = 1},
    {.name = "in_place_two_layouts", .m = 81, .n = 32, .k = 16, .c_apart = 2, .st = CUBLAS_STATUS_NOT_SUPPORTED},
    {.name = "exec_failed", .m = 24, .n = 24, .k = 24, .compute = CUBLAS_COMPUTE_32F_FAST_TF32,
     .st = CUBLAS_STATUS_EXECUTION_FAILED},
    {.name = "inside_cublas", .m = 20, .n = 20, .k = 20, .caller = 1},
    {.name = "inside_cublaslt", .m = 20, .n = 20, .k = 20, .caller = 2},
};
#undef T

static float A[4096], B[4096], C[4096], D[4096], bias[64], workspace[16];
static const int algo_storage[16];

static void set_desc(const lcase *c, cublasLtMatmulDesc_t d)
{
    int32_t ta = c->ta, tb = c->tb, pm = c->pmode, sm = c->sm_count, nd = c->new_desc_attr, bt = c->bias_type;
    uint32_t epi = c->epilogue ? c->epilogue : CUBLASLT_EPILOGUE_DEFAULT;
    const void *bp = bias;
    cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_POINTER_MODE, &pm, sizeof pm);
    cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
    if (epi & CUBLASLT_EPILOGUE_BIAS) cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bp, sizeof bp);
    if (c->set_bias_type) cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt);
    if (sm) cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &sm, sizeof sm);
    if (nd) cublasLtMatmulDescSetAttribute(d, (cublasLtMatmulDescAttributes_t)FAKE_LT_NEW_DESC_ATTR, &nd, sizeof nd);
}

static cublasLtMatrixLayout_t layout(cudaDataType type, int rows, int cols, int ld, int batch)
{
    cublasLtMatrixLayout_t l = NULL;
    int32_t b = batch ? batch : 1;
    cublasLtMatrixLayoutCreate(&l, type, (uint64_t)rows, (uint64_t)cols, ld);
    cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b, sizeof b);
    return l;
}

static void set_int(cublasLtMatrixLayout_t l, int attr, int32_t v)
{
    cublasLtMatrixLayoutSetAttribute(l, (cublasLtMatrixLayoutAttribute_t)attr, &v, sizeof v);
}

/* One case through cublasLtMatmul; prints its status and whether the fake saw exactly the program's arguments. */
static void run(const lcase *c, cublasLtHandle_t h)
{
    const int ra = c->ta ? c->k : c->m, ca = c->ta ? c->m : c->k, rb = c->tb ? c->n : c->k, cb = c->tb ? c->k : c->n;
    float alpha = c->alpha_zero ? 0.0f : 1.5f, beta = c->beta;
    cublasLtMatmulDesc_t desc = NULL;
    cublasLtMatmulDescCreate(&desc, c->compute ? (cublasComputeType_t)c->compute : CUBLAS_COMPUTE_32F,
                             (cudaDataType_t)c->scale);
    set_desc(c, desc);
    cublasLtMatrixLayout_t la = layout((cudaDataType)c->atype, ra, ca, ra + 1, c->batch);
    cublasLtMatrixLayout_t lb = layout(CUDA_R_32F, rb + c->bad_shape, cb, rb + 2, c->batch);
    cublasLtMatrixLayout_t ld = layout(CUDA_R_32F, c->m, c->n, c->m, c->batch);
    cublasLtMatrixLayout_t lc = c->c_apart ? layout(CUDA_R_32F, c->m, c->n, c->m + 3, c->batch) : ld;
    if (c->order_a) set_int(la, CUBLASLT_MATRIX_LAYOUT_ORDER, c->order_a);
    if (c->batch_mode_b) set_int(lb, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, c->batch_mode_b);
    if (c->new_layout_attr) set_int(ld, FAKE_LT_NEW_LAYOUT_ATTR, c->new_layout_attr);
    const float *cm = c->c_apart == 1 ? C : D;
    cublasLtHandle_t handle = c->null_handle ? NULL : h;
    cublasLtMatmulDesc_t dsc = c->null_desc ? NULL : desc;
    const cublasLtMatmulAlgo_t *algo = (const cublasLtMatmulAlgo_t *)algo_storage;
    cudaStream_t stream = (cudaStream_t)(uintptr_t)0x5150;
    fake_lt_reset();
    fake_lt_set_status(c->st);
    cublasStatus_t st =
        c->caller == 1 ? fake_cublas_calls_lt(handle, dsc, &alpha, A, la, B, lb, &beta, cm, lc, D, ld, algo, workspace,
                                              sizeof workspace, stream)
        : c->caller == 2 ? fake_lt_calls_itself(handle, dsc, &alpha, A, la, B, lb, &beta, cm, lc, D, ld, algo,
                                                workspace, sizeof workspace, stream)
                         : cublasLtMatmul(handle, dsc, &alpha, A, la, B, lb, &beta, cm, lc, D, ld, algo, workspace,
                                          sizeof workspace, stream);
    const fake_lt_record *r = fake_lt_last();
    const int same = r->handle == handle && r->desc == dsc && r->alpha == &alpha && r->A == A && r->Adesc == la &&
                     r->B == B && r->Bdesc == lb && r->beta == &beta && r->C == cm && r->Cdesc == lc && r->D == D &&
                     r->Ddesc == ld && r->algo == algo && r->workspace == workspace &&
                     r->workspace_size == sizeof workspace && r->stream == stream;
    printf("%s: status=%d reached=%d same=%d\n", c->name, (int)st, r->calls, same);
    cublasLtMatmulDescDestroy(desc);
    cublasLtMatrixLayoutDestroy(la), cublasLtMatrixLayoutDestroy(lb), cublasLtMatrixLayoutDestroy(ld);
    if (lc != ld) cublasLtMatrixLayoutDestroy(lc);
}

/* Calls on the same objects, each changing one thing of the call before (repeat 0 servable, C another matrix of
 * another ld): 1 nothing; 2 C given as D (in place with two layouts: invalid); 3 back; 4 a NULL handle (invalid);
 * 5 back; 6 C's layout row-major, in place; 7 back; 8 the descriptor's SM_COUNT_TARGET, in place; 9 back; then with
 * a BIAS epilogue, C and D one matrix, 10 beta 0, 11 beta 1 at the same address (forwarded), 12 beta 0. The drop-in
 * must decide each again where its one change matters (its summary counts the reasons). */
static void repeats(cublasLtHandle_t h, cublasLtMatrixLayout_t la, cublasLtMatrixLayout_t lb, cublasLtMatrixLayout_t ld)
{
    const lcase c = {.name = "repeat", .m = 90, .n = 32, .k = 16},
                bc = {.name = "repeat_bias", .m = 90, .n = 32, .k = 16, .epilogue = CUBLASLT_EPILOGUE_BIAS};
    float alpha = 1.5f, beta = 0.5f;
    cublasLtMatmulDesc_t d = NULL, bd = NULL;
    cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    cublasLtMatmulDescCreate(&bd, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    set_desc(&c, d), set_desc(&bc, bd);
    cublasLtMatrixLayout_t lc = layout(CUDA_R_32F, 90, 32, 93, 1);
    const int32_t sm = 100, none = 0;
    for (int i = 0; i < 13; ++i) {
        if (i == 6 || i == 7) set_int(lc, CUBLASLT_MATRIX_LAYOUT_ORDER, i == 6 ? CUBLASLT_ORDER_ROW : CUBLASLT_ORDER_COL);
        if (i == 8 || i == 9)
            cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, i == 8 ? &sm : &none, sizeof sm);
        cublasStatus_t st;
        if (i < 10)
            st = cublasLtMatmul(i == 4 ? NULL : h, d, &alpha, A, la, B, lb, &beta, i == 2 ? D : C, lc, D, ld, NULL, NULL,
                                0, NULL);
        else
            beta = i == 11 ? 1.0f : 0.0f,
            st = cublasLtMatmul(h, bd, &alpha, A, la, B, lb, &beta, D, ld, D, ld, NULL, NULL, 0, NULL);
        printf("repeat %d: status=%d\n", i, (int)st);
    }
    cublasLtMatmulDescDestroy(d), cublasLtMatmulDescDestroy(bd);
    cublasLtMatrixLayoutDestroy(lc);
}

/* The servable 90x32x16 call on the same descriptors (after a first call of another shape, which has the drop-in
 * probe cuBLASLt's defaults): calls 0-2 on them, 3 on copies made elsewhere (same bytes), 4 with an attribute of
 * the descriptor changed, 5 with it changed back and one of D's layout changed instead, 6 and 7 on a descriptor
 * in 56 bytes (as an older header's cublasLtMatmulDescInit makes: its state elsewhere), 8-10 on the
 * copy again with alpha 1.5, 0 (forwarded: "alpha == 0"), 1.5: the getter calls each made. Then a model's Linear
 * layers. */
static void memo(cublasLtHandle_t h)
{
    const lcase c = {.name = "memo", .m = 90, .n = 32, .k = 16}, w = {.name = "warm", .m = 91, .n = 8, .k = 8};
    float alpha = 1.5f, beta = 0.0f;
    cublasLtMatmulDesc_t desc = NULL, copy = NULL, warm = NULL;
    cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    cublasLtMatmulDescCreate(&copy, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    cublasLtMatmulDescCreate(&warm, CUBLAS_COMPUTE_32F_PEDANTIC, CUDA_R_32F);
    set_desc(&c, desc), set_desc(&c, copy), set_desc(&w, warm);
    cublasLtMatrixLayout_t la = layout(CUDA_R_32F, 90, 16, 91, 1), lb = layout(CUDA_R_32F, 16, 32, 18, 1),
                           ld = layout(CUDA_R_32F, 90, 32, 90, 1), wa = layout(CUDA_R_32F, 91, 8, 91, 1),
                           wb = layout(CUDA_R_32F, 8, 8, 8, 1), wd = layout(CUDA_R_32F, 91, 8, 91, 1);
    cublasLtMatmul(h, warm, &alpha, A, wa, B, wb, &beta, D, wd, D, wd, NULL, NULL, 0, NULL);
    void *small = malloc(56); /* an older header's descriptor: on the heap, so that a read past it is ASan's */
    if (!small || cublasLtMatmulDescInit_internal(small, 56, CUBLAS_COMPUTE_32F, CUDA_R_32F)) return;
    set_desc(&c, small);
    int32_t sm = 100, zero = 0;
    for (int i = 0; i < 11; ++i) {
        alpha = i == 9 ? 0.0f : 1.5f; /* at the same address: the verdict must follow its value */
        if (i == 4) cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &sm, sizeof sm);
        if (i == 5) cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &zero, sizeof zero),
                    set_int(ld, FAKE_LT_NEW_LAYOUT_ATTR, 3);
        if (i == 6) set_int(ld, FAKE_LT_NEW_LAYOUT_ATTR, 0);
        const unsigned long long before = fake_lt_getter_calls();
        cublasStatus_t st = cublasLtMatmul(h, i == 3 || i >= 8 ? copy : i >= 6 ? small : desc, &alpha, A, la, B, lb,
                                           &beta, D, ld, D, ld, NULL, NULL, 0, NULL);
        printf("memo call %d: status=%d getters=%llu\n", i, (int)st, fake_lt_getter_calls() - before);
    }
    cublasLtMatmulDescDestroy(warm);
    fake_lt_small_free(small), free(small);
    cublasLtMatrixLayoutDestroy(wa), cublasLtMatrixLayoutDestroy(wb), cublasLtMatrixLayoutDestroy(wd);
    /* a model's 48 Linear layers: one descriptor each, alike but for the bias pointer; the second pass reads none */
    enum { LAYERS = 48 };
    cublasLtMatmulDesc_t layer[LAYERS];
    const lcase bc = {.name = "layer", .m = 90, .n = 32, .k = 16, .epilogue = CUBLASLT_EPILOGUE_BIAS};
    for (int i = 0; i < LAYERS; ++i) {
        const void *bp = (const void *)(uintptr_t)(0x7f0000100000ull + 0x3000ull * (unsigned)i); /* never read */
        cublasLtMatmulDescCreate(&layer[i], CUBLAS_COMPUTE_32F, CUDA_R_32F);
        set_desc(&bc, layer[i]);
        cublasLtMatmulDescSetAttribute(layer[i], CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bp, sizeof bp);
    }
    for (int pass = 0; pass < 2; ++pass) {
        const unsigned long long before = fake_lt_getter_calls();
        for (int i = 0; i < LAYERS; ++i)
            cublasLtMatmul(h, layer[i], &alpha, A, la, B, lb, &beta, D, ld, D, ld, NULL, NULL, 0, NULL);
        printf("memo layers pass %d: getters=%llu\n", pass, fake_lt_getter_calls() - before);
    }
    for (int i = 0; i < LAYERS; ++i) cublasLtMatmulDescDestroy(layer[i]);
    cublasLtMatmulDescDestroy(desc), cublasLtMatmulDescDestroy(copy);
    repeats(h, la, lb, ld);
    cublasLtMatrixLayoutDestroy(la), cublasLtMatrixLayoutDestroy(lb), cublasLtMatrixLayoutDestroy(ld);
}

int main(int argc, char **argv)
{
    static int dummy;
    if (argc > 1 && !strcmp(argv[1], "memo")) return memo((cublasLtHandle_t)&dummy), 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) run(&cases[i], (cublasLtHandle_t)&dummy);
    return 0;
}
