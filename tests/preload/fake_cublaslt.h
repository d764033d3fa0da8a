/* A stand-in for libcublasLt (tests/preload/fake_cublaslt.c): descriptors and layouts that keep their attributes
 * as cuBLASLt 13's do (plus one attribute of each that no cuBLASLt has, as a newer version's would be), and a
 * cublasLtMatmul that records what reaches it. tests/test_preload_lt.c runs tests/preload/drive_fake_lt.c against
 * it under the preload to see, without a GPU, which calls the interposer forwards and with which arguments. */
#ifndef GT_FAKE_CUBLASLT_H
#define GT_FAKE_CUBLASLT_H

#include <cublasLt.h>

/* Attribute numbers only this stand-in knows (int32_t, default 0). */
enum { FAKE_LT_NEW_DESC_ATTR = 50, FAKE_LT_NEW_LAYOUT_ATTR = 20 };

typedef struct {
    int calls; /* cublasLtMatmul calls that reached the fake */
    const void *handle, *desc, *alpha, *A, *Adesc, *B, *Bdesc, *beta, *C, *Cdesc, *D, *Ddesc, *algo, *workspace;
    size_t workspace_size;
    cudaStream_t stream;
} fake_lt_record;

/* The status cublasLtMatmul returns (statuses pass through the interposer unchanged). */
void fake_lt_set_status(cublasStatus_t st);
const fake_lt_record *fake_lt_last(void);
void fake_lt_reset(void);
/* The getter calls made of this stand-in so far (descriptors and layouts together). */
unsigned long long fake_lt_getter_calls(void);
/* Free the state of a descriptor made in storage under 256 bytes (cublasLtMatmulDescInit_internal keeps it on the
 * heap, as only a whole descriptor holds its state); nothing for a whole one. */
void fake_lt_small_free(cublasLtMatmulDesc_t desc);
/* cublasLtMatmul called from inside this library through the PLT, as cuBLASLt's own code might. */
cublasStatus_t fake_lt_calls_itself(cublasLtHandle_t h, cublasLtMatmulDesc_t desc, const void *alpha, const void *A,
                                    cublasLtMatrixLayout_t Adesc, const void *B, cublasLtMatrixLayout_t Bdesc,
                                    const void *beta, const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                                    cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo, void *workspace,
                                    size_t workspaceSize, cudaStream_t stream);

#endif
