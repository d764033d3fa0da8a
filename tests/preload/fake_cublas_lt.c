/* Part of the stand-in cuBLAS (libfakecublas.so, with fake_cublas.c): a call of cublasLtMatmul from inside the
 * cuBLAS library, as the real one makes behind entry points the preload does not serve (cublasSgemmBatched, the
 * _64 ones). Looked up at run time like a PLT call, so this library links no cuBLASLt. tests/test_preload_lt.c. */
#include "fake_cublaslt.h"

#include <dlfcn.h>

cublasStatus_t fake_cublas_calls_lt(cublasLtHandle_t h, cublasLtMatmulDesc_t desc, const void *alpha, const void *A,
                                    cublasLtMatrixLayout_t Adesc, const void *B, cublasLtMatrixLayout_t Bdesc,
                                    const void *beta, const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                                    cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo, void *workspace,
                                    size_t workspaceSize, cudaStream_t stream)
{
    __typeof__(cublasLtMatmul) *lt = (__typeof__(lt))dlsym(RTLD_DEFAULT, "cublasLtMatmul");
    if (!lt) return CUBLAS_STATUS_NOT_INITIALIZED;
    cublasStatus_t st = lt(h, desc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo, workspace,
                           workspaceSize, stream);
    __asm__ volatile("" ::: "memory"); /* no tail call: the return address must lie in this library */
    return st;
}
