/* The low-level types every layer shares: a GEMM shape, call and device arguments, a GPU model and its one
 * comparison, device limits, the trial-status vocabulary (documented here and nowhere else), the TFLOPS formula and
 * the validation tolerance.
 * Plain C, nothing CUDA. Tested by tests/test_kernels.c. */
#ifndef GT_TYPES_H
#define GT_TYPES_H

#include <stddef.h>

/* One GEMM problem: row-major C[m x n] = alpha * op(A)[m x k] * op(B)[k x n] + beta * C.
 * ta = 1: A is stored k x m (transposed); tb = 1: B is stored n x k.
 * batch: that many independent products of this shape in one call (strided batched GEMM); 0 and 1 both mean one,
 * so a shape written without it is a single GEMM (gt_shape_batch reads it). */
typedef struct {
    int m, n, k;
    int ta, tb;
    int batch;
} gt_shape;

/* The number of products of s: its batch, at least 1. Cannot fail. */
static inline int gt_shape_batch(const gt_shape *s) { return s->batch > 1 ? s->batch : 1; }

/* A concrete call: the shape plus leading dimensions, the batch's strides (elements from one matrix to the next;
 * 0 when the shape is not batched) and pointer alignment (bytes, power of two, <= 16; for a batch, of every
 * matrix's start). */
typedef struct {
    gt_shape shape;
    long long lda, ldb, ldc;
    int align_a, align_b, align_c;
    long long stride_a, stride_b, stride_c;
} gt_call;

/* Device-side arguments of one GEMM call (row-major, see templates/common.cuh): what gt_kernel_launch
 * (src/lib/kernel.h) passes to gt_gemm, what a backend runs, and what a family's launch hook sees (family.h). The
 * pointers are device addresses. */
typedef struct {
    int m, n, k;
    int ta, tb;         /* layout (baked into a candidate's cubin; read by cuBLAS runs) */
    float alpha, beta;
    const float *A, *B;
    float *C;
    int lda, ldb, ldc;
    float *ws;          /* split-K workspace of at least gt_launch.ws_bytes, NULL when splitk == 1 */
    int batch;          /* matrices in a strided batch; 0 and 1 both mean one GEMM */
    long long sa, sb, sc; /* elements from one matrix of A, B, C to the next (batch > 1) */
} gt_args;

/* s's sizes as `--sizes` writes them: "512x512x128", or batch first, "64x512x512x128", for a batch. Returns buf
 * (n >= 48 always suffices). Cannot fail. */
const char *gt_shape_dims(const gt_shape *s, char *buf, size_t n);

/* Parse gt_shape_dims' text at the start of text: "N" (N x N x N), "MxNxK" or "BxMxNxK" (B products of MxNxK), each
 * size 1..max (and the batch 1..65535 * 65535); the layout is left nn. *end points past the sizes. 0, or -1 for text
 * that does not start with such sizes. */
int gt_shape_parse_dims(const char *text, long max, gt_shape *s, const char **end);

/* 1 when a and b are the same problem (a batch of 0 and one of 1 are the same). Cannot fail. */
int gt_shape_equal(const gt_shape *a, const gt_shape *b);

/* The call a sweep times for s: tight leading dimensions, a batch's matrices back to back, every pointer 16-byte
 * aligned. Cannot fail. */
gt_call gt_call_tight(const gt_shape *s);

/* Winners are stored per GPU model: the marketing name, compute capability and SM count together. Two GPUs of one
 * model run the same kernels at the same speed; anything else is another model. */
typedef struct {
    char name[128];            /* "NVIDIA H200" */
    int cc_major, cc_minor, sm_count;
} gt_gpu_model;

/* 1 when a and b are the same GPU model (the only test of it in the code base). Cannot fail. */
int gt_gpu_model_equal(const gt_gpu_model *a, const gt_gpu_model *b);

/* Device limits that decide legality. Inputs to enumeration, so CPU tests can use a table (gt_limits_for_arch). */
typedef struct {
    int cc_major, cc_minor;
    int max_threads_per_block;  /* 1024 */
    int max_smem_per_block;     /* static + dynamic without opt-in: 48 KiB */
    int max_smem_optin;         /* dynamic shared memory after cudaFuncSetAttribute (227 KiB on sm_90) */
    int max_regs_per_block;     /* 65536 */
    int max_regs_per_thread;    /* 255 */
    int sm_count;               /* 0 when unknown (CPU enumeration) */
} gt_limits;

/* What became of one trial. Stored as its name (the database's trials.status column, `query --trials`).
 * A verdict that is not GT_ST_OK is data about the candidate, never an error of the sweep. */
typedef enum {
    GT_ST_OK,             /* validated and timed */
    GT_ST_SCREENED,       /* timed in a screening round only, not validated: cannot win until validated */
    GT_ST_PRUNED,         /* a first run was already far slower than the reference or the best so far: not validated */
    GT_ST_WRONG,          /* failed validation (message: the error and the check) */
    GT_ST_COMPILE_ERROR,  /* NVRTC refused the rendered source (message: the log) */
    GT_ST_RESOURCES,      /* too many registers, threads or shared memory to launch */
    GT_ST_LAUNCH_ERROR,   /* the launch or the library call failed without breaking the context */
    GT_ST_FAULTED,        /* illegal address or another error that killed the context; the worker was replaced */
    GT_ST_TIMEOUT,        /* no result before the watchdog; the worker was killed and replaced */
    GT_ST_UNAVAILABLE,    /* a library algorithm this GPU or library version refuses (cuBLASLt's check failed) */
    GT_ST_COUNT
} gt_status;

/* "ok", "screened", ... ; "?" for a value out of range. Never NULL. */
const char *gt_status_name(gt_status s);
/* The status of a stored name, or -1 for text that is none of them. */
int gt_status_parse(const char *name);
/* 1 when a trial with this status has a time that can rank it (ok, screened). */
int gt_status_timed(gt_status s);
/* 1 when the status means the candidate itself is broken (not ok, screened or pruned). */
int gt_status_failed(gt_status s);

/* Seconds on the monotonic clock (CLOCK_MONOTONIC), for durations and deadlines: the one clock of the code base.
 * Cannot fail. */
double gt_now_s(void);

/* 2 batch m n k / t: TFLOPS of a GEMM of shape s taking ms milliseconds (0 when ms <= 0). */
double gt_tflops(const gt_shape *s, double ms);

/* The pass/fail threshold of validation, 16 sqrt(k) FLT_EPSILON: the largest per-element error
 * |c - ref| / (|alpha| (|A||B|)_ij + |beta c0_ij|) a result of depth k may have; it grows with K as FP32 rounding
 * does. tuner/measure.c validates candidates with it, and the tests' validator (tests/toolkit.c) too. */
double gt_tolerance(int k);

#endif
