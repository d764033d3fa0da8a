/* The vendor family's parameters (kernels/cublas.c), shared with the runtime backend that runs them
 * (src/lib/backend_cublas.c). Plain C. */
#ifndef GT_CUBLAS_FAMILY_H
#define GT_CUBLAS_FAMILY_H

#include "family.h"

enum { GT_CUBLAS_API_SGEMM = 0, GT_CUBLAS_API_LT = 1 };

/* Indices into gt_params.v, in the order of gt_family_cublas.params. */
enum {
    GT_CUBLAS_P_API, GT_CUBLAS_P_ALGO, GT_CUBLAS_P_TILE, GT_CUBLAS_P_SPLITK, GT_CUBLAS_P_RED, GT_CUBLAS_P_SWIZZLE,
    GT_CUBLAS_P_CUSTOM, GT_CUBLAS_P_STAGES, GT_CUBLAS_P_INNER, GT_CUBLAS_P_CLUSTER, GT_CUBLAS_P_WSKB, GT_CUBLAS_P_VER,
    GT_CUBLAS_NP
};

extern const gt_family gt_family_cublas;

#endif
