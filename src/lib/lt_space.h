/* cuBLASLt's FP32 configuration space for one call, beyond the first algorithms of its heuristic (the vendor
 * family's candidates, backend_cublas.c): every algorithm id, and every tile and stages pair of it that runs the
 * call as it is, with each split-K count, reduction scheme, CTA swizzle and custom option the algorithm lists; and a
 * warm screen of them on the GPU, in the order given, within a budget of GPU time. Measured by the study
 * tests/perf/lt_space.cu (docs/BENCHMARKS.md, 2026-11-29). Tested without a GPU against a stand-in cuBLASLt by
 * tests/test_lt_space.c, and with the real one by tests/test_gpu.c (gpu_vendor_candidates_reach_past_the_heuristic). */
#ifndef GT_LT_SPACE_H
#define GT_LT_SPACE_H

#include "cublas_fns.h"

#include <stddef.h>

/* The call: cuBLASLt's handle and descriptors (C in place of D). */
typedef struct {
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc;
} gt_lt_call;

typedef struct {
    cublasLtMatmulAlgo_t algo;
    size_t ws; /* bytes of workspace it needs */
    float us;  /* its warm time (the mean of three calls after one), or -1: not screened, or it failed */
} gt_lt_config;

/* Up to cap configurations that cublasLtMatmulAlgoCheck accepts for c within ws_max bytes of workspace, from
 * algorithms that need at most 16-byte alignment of any operand: the count (0 where the library cannot list them:
 * cb lacks cublasLtMatmulAlgoGetIds or cublasLtMatmulAlgoCapGetAttribute). */
int gt_lt_space(const gt_cublas_fns *cb, const gt_lt_call *c, size_t ws_max, gt_lt_config *out, int cap);

/* Times v[0..n) in turn on the call's operands A, B and C (sized for it) and ws (at least each one's ws bytes), on
 * the legacy default stream, until budget_us of GPU time is spent; sets each one's us. The count screened. */
int gt_lt_screen(const gt_cublas_fns *cb, const gt_lt_call *c, const float *A, const float *B, float *C, void *ws,
                 gt_lt_config *v, int n, double budget_us);

#endif
