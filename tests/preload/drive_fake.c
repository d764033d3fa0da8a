/* Calls the three intercepted cuBLAS GEMMs on the stand-in cuBLAS (fake_cublas.c) with one case per line of the
 * table and prints, per case, the status it got, how many calls reached the fake and whether the arguments
 * arrived unchanged. tests/test_preload.c runs it with and without the preload (no GPU: CUDA_VISIBLE_DEVICES=""),
 * and compares.   build/tests/drive_fake            (LD_PRELOAD=build/libgemmtune_cublas.so to interpose) */
#include "fake_cublas.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    const char *name;
    int api; /* 0 sgemm, 1 GemmEx, 2 strided */
    cublasPointerMode_t pm;
    cublasMath_t mm;
    cublasStatus_t st;
    int reenter, null_handle;
    int ta, tb, m, n, k, lda, ldb, ldc;
    float alpha;
    int atype, compute, algo, batch;
} fcase;

#define H CUBLAS_POINTER_MODE_HOST
#define D CUBLAS_POINTER_MODE_DEVICE
#define DM CUBLAS_DEFAULT_MATH
#define OK CUBLAS_STATUS_SUCCESS
#define NT CUBLAS_OP_N, CUBLAS_OP_T
#define R32 CUDA_R_32F
#define C32 CUBLAS_COMPUTE_32F
#define DEF CUBLAS_GEMM_DEFAULT

static const fcase cases[] = {
    {"sgemm_servable", 0, H, DM, OK, 0, 0, NT, 64, 32, 16, 64, 32, 64, 1.5f, R32, C32, DEF, 1},
    {"sgemm_op_c", 0, H, DM, OK, 0, 0, CUBLAS_OP_C, CUBLAS_OP_C, 8, 8, 8, 8, 8, 8, 1, R32, C32, DEF, 1},
    {"sgemm_device_pointers", 0, D, DM, OK, 0, 0, NT, 64, 32, 16, 64, 32, 64, 1, R32, C32, DEF, 1},
    {"sgemm_tf32", 0, H, CUBLAS_TF32_TENSOR_OP_MATH, OK, 0, 0, NT, 64, 32, 16, 64, 32, 64, 1, R32, C32, DEF, 1},
    {"sgemm_pedantic", 0, H, CUBLAS_PEDANTIC_MATH, OK, 0, 0, NT, 48, 32, 16, 48, 32, 48, 1, R32, C32, DEF, 1},
    {"sgemm_bad_lda", 0, H, DM, CUBLAS_STATUS_INVALID_VALUE, 0, 0, NT, 64, 32, 16, 63, 32, 64, 1, R32, C32, DEF, 1},
    {"sgemm_bad_op", 0, H, DM, CUBLAS_STATUS_INVALID_VALUE, 0, 0, 7, 0, 4, 4, 4, 4, 4, 4, 1, R32, C32, DEF, 1},
    {"sgemm_null_handle", 0, H, DM, CUBLAS_STATUS_NOT_INITIALIZED, 0, 1, NT, 4, 4, 4, 4, 4, 4, 1, R32, C32, DEF, 1},
    {"sgemm_k0", 0, H, DM, OK, 0, 0, NT, 4, 4, 0, 4, 4, 4, 1, R32, C32, DEF, 1},
    {"sgemm_m0", 0, H, DM, OK, 0, 0, NT, 0, 4, 4, 1, 4, 1, 1, R32, C32, DEF, 1},
    {"sgemm_alpha0", 0, H, DM, OK, 0, 0, NT, 4, 4, 4, 4, 4, 4, 0, R32, C32, DEF, 1},
    {"sgemm_reentry", 0, H, DM, OK, 2, 0, NT, 24, 24, 24, 24, 24, 24, 1, R32, C32, DEF, 1},
    {"sgemm_exec_failed", 0, H, DM, CUBLAS_STATUS_EXECUTION_FAILED, 0, 0, NT, 40, 4, 4, 40, 4, 40, 1, R32, C32, DEF, 1},
    {"gemmex_32f", 1, H, DM, OK, 0, 0, NT, 32, 32, 32, 32, 32, 32, 1, R32, C32, DEF, 1},
    {"gemmex_legacy_r32f", 1, H, DM, OK, 0, 0, NT, 32, 32, 32, 32, 32, 32, 1, R32, (int)CUDA_R_32F, DEF, 1},
    {"gemmex_fast_tf32", 1, H, DM, OK, 0, 0, NT, 32, 32, 32, 32, 32, 32, 1, R32, CUBLAS_COMPUTE_32F_FAST_TF32, DEF, 1},
    {"gemmex_half", 1, H, DM, OK, 0, 0, NT, 32, 32, 32, 32, 32, 32, 1, CUDA_R_16F, C32, DEF, 1},
    {"gemmex_tensor_algo", 1, H, DM, OK, 0, 0, NT, 32, 32, 32, 32, 32, 32, 1, R32, C32, CUBLAS_GEMM_DEFAULT_TENSOR_OP, 1},
    {"strided_3", 2, H, DM, OK, 0, 0, NT, 16, 16, 16, 16, 16, 16, 1, R32, C32, DEF, 3},
    {"strided_1000", 2, H, DM, OK, 0, 0, NT, 16, 16, 16, 16, 16, 16, 1, R32, C32, DEF, 1000},
};

static float A[4096], B[4096], C[4096];

static int same(const fcase *c, const void *handle, const float *alpha, const float *beta)
{
    const fake_record *r = fake_last();
    int ok = r->api == c->api && r->handle == handle && r->transa == c->ta && r->transb == c->tb && r->m == c->m &&
             r->n == c->n && r->k == c->k && r->lda == c->lda && r->ldb == c->ldb && r->ldc == c->ldc &&
             r->alpha == alpha && r->beta == beta && r->A == A && r->B == B && r->C == C;
    if (c->api == 1)
        ok = ok && r->atype == c->atype && r->btype == c->atype && r->ctype == c->atype && r->compute == c->compute &&
             r->algo == c->algo;
    if (c->api == 2) ok = ok && r->batch == c->batch && r->sa == 100 && r->sb == 200 && r->sc == 300;
    return ok;
}

static cublasStatus_t call(const fcase *c, cublasHandle_t h, const float *alpha, const float *beta)
{
    if (c->api == 1)
        return cublasGemmEx(h, c->ta, c->tb, c->m, c->n, c->k, alpha, A, c->atype, c->lda, B, c->atype, c->ldb, beta,
                            C, c->atype, c->ldc, c->compute, c->algo);
    if (c->api == 2)
        return cublasSgemmStridedBatched(h, c->ta, c->tb, c->m, c->n, c->k, alpha, A, c->lda, 100, B, c->ldb, 200,
                                         beta, C, c->ldc, 300, c->batch);
    return cublasSgemm(h, c->ta, c->tb, c->m, c->n, c->k, alpha, A, c->lda, B, c->ldb, beta, C, c->ldc);
}

int main(void)
{
    static int dummy;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const fcase *c = &cases[i];
        cublasHandle_t h = c->null_handle ? NULL : (cublasHandle_t)&dummy;
        float alpha = c->alpha, beta = 0.5f;
        fake_reset();
        fake_set_modes(c->pm, c->mm);
        fake_set_status(c->st);
        fake_set_reenter(c->reenter);
        cublasStatus_t st = call(c, h, &alpha, &beta);
        printf("%s: status=%d reached=%d same=%d deepest=%d\n", c->name, (int)st, fake_last()->calls,
               same(c, h, &alpha, &beta), fake_last()->deepest);
    }
    return 0;
}
