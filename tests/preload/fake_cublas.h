/* A stand-in for libcublas (tests/preload/fake_cublas.c): the getters and the three GEMMs the preload library
 * intercepts, recording every call that reaches it. tests/test_preload.c runs tests/preload/drive_fake.c against
 * it under the preload to see, without a GPU, what the interposer forwards and with which arguments. */
#ifndef GT_FAKE_CUBLAS_H
#define GT_FAKE_CUBLAS_H

#include <cublas_v2.h>

typedef struct {
    int calls;                        /* GEMM calls that reached the fake, nested ones included */
    int api;                          /* last call: 0 cublasSgemm_v2, 1 cublasGemmEx, 2 cublasSgemmStridedBatched */
    int transa, transb, m, n, k, lda, ldb, ldc, batch, atype, btype, ctype, compute, algo;
    const void *handle, *alpha, *beta, *A, *B, *C;
    long long sa, sb, sc;
    int deepest;                      /* deepest re-entry seen (0: none) */
} fake_record;

/* The modes the getters report (every getter fails for a NULL handle, as cuBLAS's do). */
void fake_set_modes(cublasPointerMode_t pointer_mode, cublasMath_t math_mode);
/* The status every GEMM returns (cuBLAS's statuses pass through the interposer unchanged). */
void fake_set_status(cublasStatus_t st);
/* The next cublasSgemm_v2 calls cublasSgemm_v2 again, depth levels deep, as a library calling its own exported
 * entry point would: the interposer must hand those straight to the real (here: fake) library. */
void fake_set_reenter(int depth);
const fake_record *fake_last(void);
void fake_reset(void);

#endif
