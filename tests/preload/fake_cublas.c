/* A stand-in cuBLAS for the CPU tests of the preload library (see fake_cublas.h). Linked by
 * tests/preload/drive_fake.c as libfakecublas.so (and, without cublasGemmEx, as tests/nogemmex/libfakecublas.so);
 * never runs anything on a GPU. */
#include "fake_cublas.h"

#include <string.h>

static fake_record rec;
static cublasPointerMode_t pmode = CUBLAS_POINTER_MODE_HOST;
static cublasMath_t mmode = CUBLAS_DEFAULT_MATH;
static cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
static int reenter, level;

void fake_set_modes(cublasPointerMode_t pointer_mode, cublasMath_t math_mode) { pmode = pointer_mode, mmode = math_mode; }
void fake_set_status(cublasStatus_t st) { status = st; }
void fake_set_reenter(int depth) { reenter = depth; }
const fake_record *fake_last(void) { return &rec; }
void fake_reset(void) { memset(&rec, 0, sizeof rec), reenter = level = 0; }

cublasStatus_t cublasGetStream_v2(cublasHandle_t h, cudaStream_t *s)
{
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    *s = (cudaStream_t)0;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t h, cublasPointerMode_t *m)
{
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    *m = pmode;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetMathMode(cublasHandle_t h, cublasMath_t *m)
{
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    *m = mmode;
    return CUBLAS_STATUS_SUCCESS;
}

static void note(int api, cublasHandle_t h, int ta, int tb, int m, int n, int k, const void *alpha, const void *A,
                 int lda, const void *B, int ldb, const void *beta, const void *C, int ldc)
{
    rec.calls++;
    rec.api = api, rec.handle = h, rec.transa = ta, rec.transb = tb, rec.m = m, rec.n = n, rec.k = k;
    rec.alpha = alpha, rec.A = A, rec.lda = lda, rec.B = B, rec.ldb = ldb, rec.beta = beta, rec.C = C, rec.ldc = ldc;
    rec.batch = 1, rec.sa = rec.sb = rec.sc = 0;
    rec.atype = rec.btype = rec.ctype = CUDA_R_32F, rec.compute = CUBLAS_COMPUTE_32F, rec.algo = CUBLAS_GEMM_DEFAULT;
    if (level > rec.deepest) rec.deepest = level;
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                              const float *alpha, const float *A, int lda, const float *B, int ldb, const float *beta,
                              float *C, int ldc)
{
    note(0, h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    if (level < reenter) { /* through the PLT, so through the interposer, like any caller */
        ++level;
        cublasSgemm_v2(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
        --level;
    }
    return status;
}

#ifndef FAKE_NO_GEMMEX /* the build of tests/nogemmex/: a cuBLAS without it */
cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const void *alpha, const void *A, cudaDataType at, int lda, const void *B, cudaDataType bt,
                            int ldb, const void *beta, void *C, cudaDataType ct, int ldc, cublasComputeType_t compute,
                            cublasGemmAlgo_t algo)
{
    note(1, h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    rec.atype = at, rec.btype = bt, rec.ctype = ct, rec.compute = compute, rec.algo = algo;
    return status;
}
#endif

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                         int k, const float *alpha, const float *A, int lda, long long sa,
                                         const float *B, int ldb, long long sb, const float *beta, float *C, int ldc,
                                         long long sc, int batch)
{
    note(2, h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    rec.batch = batch, rec.sa = sa, rec.sb = sb, rec.sc = sc;
    return status;
}
