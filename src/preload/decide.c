/* Whether gemmtune may serve a cuBLAS call: a pure function of the call and the handle's modes, so every rule is
 * checked on the CPU (build/gt_tests --cpu preload_classify). The rule: serve only what gemmtune computes with
 * cuBLAS's own semantics (FP32 math, host alpha/beta, valid arguments); anything else goes to cuBLAS. */
#include "preload.h"

#include <cublas_api.h>

static int valid_op(int op) { return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C; }

static int max1(int v) { return v > 1 ? v : 1; }

/* cuBLAS's own argument checks (column-major: op(A) is m x k, so A is m x k for N and k x m otherwise). A call
 * failing one of them is forwarded so that cuBLAS returns its status, whatever it is. */
static int valid_args(const gt_pl_call *c)
{
    if (!valid_op(c->transa) || !valid_op(c->transb)) return 0;
    if (c->m < 0 || c->n < 0 || c->k < 0 || c->batch < 0) return 0;
    if (c->lda < max1(c->transa == CUBLAS_OP_N ? c->m : c->k)) return 0;
    if (c->ldb < max1(c->transb == CUBLAS_OP_N ? c->k : c->n)) return 0;
    if (c->ldc < max1(c->m)) return 0;
    return c->alpha && c->beta;
}

/* Only cuBLAS's own choice is gemmtune's to make. cuBLAS 13's documentation (cublasGemmAlgo_t, section 2.2.9):
 * "an enumerant to specify the algorithm for matrix-matrix multiplication on GPU architectures up to sm_75. On
 * sm_80 and newer GPU architectures, this enumerant has no effect"; and CUBLAS_GEMM_DEFAULT_TENSOR_OP (99,
 * deprecated): "Apply Heuristics to select the GEMM algorithm, while allowing use of reduced precision
 * CUBLAS_COMPUTE_32F_FAST_16F kernels (for backward compatibility)". So on sm_80 and newer, DEFAULT_TENSOR_OP
 * with an FP32 compute type is CUBLAS_GEMM_DEFAULT (the handle's math mode still decides TF32, checked apart),
 * and is served there; before sm_80 it may take FP16 paths and stays cuBLAS's. An explicit CUBLAS_GEMM_ALGOn
 * (or ALGOn_TENSOR_OP) is a request to cuBLAS, and AUTOTUNE cuBLAS's own search: those stay cuBLAS's. */
static int fp32_algo(int algo, const gt_pl_modes *modes)
{
    return algo == CUBLAS_GEMM_DEFAULT || (algo == CUBLAS_GEMM_DEFAULT_TENSOR_OP && modes->algo_ignored);
}

/* The legacy cudaDataType value CUDA_R_32F is what cublas_api.h's C++ overload maps to COMPUTE_32F (or
 * _PEDANTIC under pedantic math): a C program passing it means the same. */
static int fp32_compute(int ct)
{
    return ct == CUBLAS_COMPUTE_32F || ct == CUBLAS_COMPUTE_32F_PEDANTIC || ct == (int)CUDA_R_32F;
}

static gt_pl_reason gemmex_reason(const gt_pl_call *c, const gt_pl_modes *modes)
{
    if (c->atype != CUDA_R_32F || c->btype != CUDA_R_32F || c->ctype != CUDA_R_32F) return GT_PL_TYPES;
    if (!fp32_compute(c->compute)) return GT_PL_COMPUTE;
    if (!fp32_algo(c->algo, modes)) return GT_PL_ALGO;
    return GT_PL_SERVE;
}

/* Reduced-precision modes (TF32, the deprecated tensor-op/half mode, BF16x9 emulation) are cuBLAS's; the flag
 * bits above the low nibble (e.g. DISALLOW_REDUCED_PRECISION_REDUCTION) only restrict further. */
static int fp32_math(int mode)
{
    int base = mode & 0xf;
    return base == CUBLAS_DEFAULT_MATH || base == CUBLAS_PEDANTIC_MATH;
}

gt_pl_reason gt_pl_classify(const gt_pl_call *c, const gt_pl_modes *modes, const gt_pl_config *cfg)
{
    if (!cfg->enabled) return GT_PL_OFF;
    if (!valid_args(c)) return GT_PL_INVALID;
    if (c->m == 0 || c->n == 0 || c->batch == 0) return GT_PL_EMPTY;
    if (c->k == 0) return GT_PL_K_ZERO;
    if (cfg->numerics) return GT_PL_ENV_NUMERICS;
    if (c->api == GT_PL_GEMMEX) {
        gt_pl_reason r = gemmex_reason(c, modes);
        if (r != GT_PL_SERVE) return r;
    }
    if (modes->pointer_mode != CUBLAS_POINTER_MODE_HOST) return GT_PL_DEVICE_POINTERS;
    if (!fp32_math(modes->math_mode)) return GT_PL_MATH_MODE;
    if (*(const float *)c->alpha == 0.0f) return GT_PL_ALPHA_ZERO;
    if (c->batch > cfg->max_batch) return GT_PL_BATCH;
    return GT_PL_SERVE;
}

const char *gt_pl_reason_text(gt_pl_reason r)
{
    switch (r) {
    case GT_PL_SERVE: return "served";
    case GT_PL_OFF: return "pass-through (GEMMTUNE_PRELOAD=off)";
    case GT_PL_INVALID: return "invalid arguments (cuBLAS reports them)";
    case GT_PL_EMPTY: return "empty (m, n or batchCount is 0)";
    case GT_PL_K_ZERO: return "k == 0 (C = beta C)";
    case GT_PL_ENV_NUMERICS: return "FP32 numerics overridden by the environment";
    case GT_PL_TYPES: return "cublasGemmEx data types are not all CUDA_R_32F";
    case GT_PL_COMPUTE: return "cublasGemmEx compute type is not pure FP32";
    case GT_PL_ALGO: return "cublasGemmEx names an algorithm (not CUBLAS_GEMM_DEFAULT, or DEFAULT_TENSOR_OP on sm_80+)";
    case GT_PL_DEVICE_POINTERS: return "device pointer mode (alpha and beta on the GPU)";
    case GT_PL_MATH_MODE: return "math mode allows TF32, half or emulated FP32";
    case GT_PL_ALPHA_ZERO: return "alpha == 0 (A and B are not read)";
    case GT_PL_BATCH: return "batch larger than GEMMTUNE_PRELOAD_BATCH";
    case GT_PL_HANDLE: return "the handle's getters failed";
    case GT_PL_NO_DEVICE: return "no usable current CUDA device";
    case GT_PL_CREATE: return "gemmtune_create failed";
    case GT_PL_CAPTURE: return "first call inside stream capture";
    case GT_PL_UNTUNED: return "no tuned kernel for this call";
    case GT_PL_GEMMTUNE: return "gemmtune_sgemm failed";
    case GT_PL_EXITING: return "process exiting";
    case GT_PL_LT_TYPES: return "cuBLASLt matrix, scale or bias type is not CUDA_R_32F";
    case GT_PL_LT_COMPUTE: return "cuBLASLt compute type is not pure FP32";
    case GT_PL_LT_EPILOGUE: return "cuBLASLt epilogue other than DEFAULT or BIAS";
    case GT_PL_LT_BIAS_BETA: return "BIAS epilogue with beta != 0";
    case GT_PL_LT_ORDER: return "matrix layout not column-major (CUBLASLT_ORDER_COL)";
    case GT_PL_LT_BATCH: return "batched cuBLASLt call (not served yet)";
    case GT_PL_LT_ATTRIBUTE: return "cuBLASLt attribute that gemmtune does not serve";
    case GT_PL_LT_RANGE: return "size or leading dimension beyond int";
    case GT_PL_LT_PREPARE: return "writing the bias or C into D failed";
    case GT_PL_LT_FUSED: return "no kernel of gemmtune's own for it: cuBLASLt's call, bias or C fused in, is cheaper";
    case GT_PL_LT_PASS: return "gemmtune's kernel plus its pass for the bias or C would not beat cuBLASLt's fused call";
    case GT_PL_DEVICE_CHANGED: return "the thread's device changed";
    case GT_PL_NREASONS: break;
    }
    return "unknown reason";
}

gemmtune_op gt_pl_op(int cublas_op) { return cublas_op == CUBLAS_OP_N ? GEMMTUNE_OP_N : GEMMTUNE_OP_T; }
