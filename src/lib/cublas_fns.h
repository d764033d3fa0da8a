/* The cuBLAS and cuBLASLt functions the library backends call (backend_cublas.c, backend_ozaki.c), found once by
 * backend_cublas.c: through the resolver the drop-in sets (backend_resolve.h), else the program's linked (weak)
 * symbols. So every backend calls the real cuBLAS, never the drop-in's exported entry points. Not a public
 * interface. */
#ifndef GT_CUBLAS_FNS_H
#define GT_CUBLAS_FNS_H

#include <cublasLt.h>
#include <cublas_v2.h>

#define GT_CUBLAS_FUNCS(X)                                                                                     \
    X(cublasCreate_v2) X(cublasDestroy_v2) X(cublasSetStream_v2) X(cublasSetMathMode) X(cublasSgemm_v2)        \
    X(cublasSgemmStridedBatched) X(cublasLtMatrixLayoutSetAttribute)                                          \
    X(cublasGetStatusString) X(cublasLtCreate) X(cublasLtDestroy) X(cublasLtGetVersion) X(cublasLtMatmul)     \
    X(cublasLtMatmulDescCreate) X(cublasLtMatmulDescDestroy) X(cublasLtMatmulDescSetAttribute)                \
    X(cublasLtMatrixLayoutCreate) X(cublasLtMatrixLayoutDestroy) X(cublasLtMatmulPreferenceCreate)            \
    X(cublasLtMatmulPreferenceDestroy) X(cublasLtMatmulPreferenceSetAttribute)                                \
    X(cublasLtMatmulAlgoGetHeuristic) X(cublasLtMatmulAlgoInit) X(cublasLtMatmulAlgoCheck)                    \
    X(cublasLtMatmulAlgoConfigGetAttribute) X(cublasLtMatmulAlgoConfigSetAttribute)

/* Functions the backends use where they are found, and do without where not (NULL): cuBLASLt's configuration
 * space beyond its heuristic (lt_space.c). */
#define GT_CUBLAS_OPTIONAL(X) X(cublasLtMatmulAlgoGetIds) X(cublasLtMatmulAlgoCapGetAttribute)

/* Each function, typed by the headers' prototypes. */
typedef struct {
#define GT_CUBLAS_MEMBER(name) __typeof__(name) *name;
    GT_CUBLAS_FUNCS(GT_CUBLAS_MEMBER)
    GT_CUBLAS_OPTIONAL(GT_CUBLAS_MEMBER)
#undef GT_CUBLAS_MEMBER
} gt_cublas_fns;

/* Every function of GT_CUBLAS_FUNCS (those of GT_CUBLAS_OPTIONAL where found), or NULL while one is not found (cuBLAS not linked in, or not loaded yet: the next call
 * looks again). Thread-safe. */
const gt_cublas_fns *gt_cublas_fns_get(void);

#endif
