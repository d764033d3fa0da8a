/* The CUDA side of a trial: device identity, fresh random operands, the cuBLAS FP32 (pedantic) reference,
 * validation with a K-scaled relative tolerance, and timing with CUDA events on a cold L2.
 * Runs inside a worker process (tuner/worker.c) or a GPU test; needs a GPU (make gpu-test). */
#ifndef GT_MEASURE_H
#define GT_MEASURE_H

#include "db.h"
#include "family.h"
#include "kernel.h"

typedef struct gt_measure gt_measure;

/* Launch the GEMM under test on stream with the given arguments (candidate kernel, cuBLAS, loader, ...). */
typedef int (*gt_run_fn)(void *ctx, const gt_args *a, cudaStream_t stream, char *err, size_t errlen);

/* The operands of a check: uniform in [-1, 1), or each value (WIDE) or each stored row (ROWS) also scaled by 2^e,
 * e in [-20, 20]. */
enum { GT_INPUTS_UNIFORM = 0, GT_INPUTS_WIDE = 1, GT_INPUTS_ROWS = 2 };

/* One validation: shape, extra leading-dimension padding (elements) per operand, alpha, beta, a seed for fresh
 * random operands and their kind (GT_INPUTS_*). beta == 0 fills C with NaN first, so an unwritten or leaked
 * element fails. */
typedef struct {
    gt_shape s;
    int pad_a, pad_b, pad_c;
    float alpha, beta;
    unsigned long long seed;
    int inputs;
} gt_check_spec;

/* The number of CUDA devices; 0 when there is none, with the reason in plain words in why (no NVIDIA driver,
 * a driver that found no GPU, a driver older than the runtime). Needs no GPU. */
int gt_measure_device_count(char *why, size_t whylen);

int gt_measure_open(int device, gt_measure **out, char *err, size_t errlen);
void gt_measure_close(gt_measure *m);

/* Identity and limits of the device. */
int gt_measure_gpu_info(gt_measure *m, gt_gpu_info *gpu, gt_limits *lim, char *err, size_t errlen);

/* Validate run() against cuBLAS. *rel_err = max over C of |c - ref| / (|alpha| (|A||B|)_ij + |beta c0_ij|),
 * +inf for NaN/Inf or for a write outside the M x N window (into ld padding). With same non-NULL, run() runs a
 * second time on the same inputs and *same = 1 when C is bitwise the same (every family must be deterministic,
 * split-K and stream-K included). Returns 0 when the check ran, -1 on a CUDA or launch error (err says which; the
 * context may be dead after a fault). */
int gt_measure_check(gt_measure *m, const gt_check_spec *spec, gt_run_fn run, void *ctx, double *rel_err, int *same,
                     char *err, size_t errlen);

/* The FP64 check of a family that claims FP32 accuracy by other means: on the same fresh inputs, *rel_err is run()'s
 * error and *fp32_err cuBLAS SGEMM's (pedantic), each max over C of |c - c64| / (|alpha| (|A||B|)_ij + |beta c0_ij|)
 * against cuBLAS DGEMM on the widened operands (+inf for NaN/Inf). 0 when the check ran, -1 on a CUDA error. */
int gt_measure_check_fp64(gt_measure *m, const gt_check_spec *spec, gt_run_fn run, void *ctx, double *rel_err,
                          double *fp32_err, char *err, size_t errlen);

/* Time run() on shape s (tight leading dimensions, random operands kept while the shape repeats): warmup
 * launches, then reps launches each after an L2 flush, each timed with its own CUDA events. Fills median/min/max
 * in ms and returns 0. With cutoff_ms > 0 the second launch (the first is never judged: it may load the module)
 * is compared with it: slower returns 1 with that time in all three. -1 on a CUDA error. */
int gt_measure_time(gt_measure *m, const gt_shape *s, gt_run_fn run, void *ctx, int warmup, int reps,
                    double cutoff_ms, double *median_ms, double *min_ms, double *max_ms, char *err, size_t errlen);

/* Time n implementations of shape s, as C = AB + beta C, interleaved run by run (each run after its own L2 flush),
 * so that a clock or power transient, which can last tens of milliseconds, touches them all alike: warmup untimed
 * runs of each, then reps rounds; medians[i] in ms, and where mins and maxs are not NULL each one's fastest and
 * slowest run. 0, or -1 on a CUDA error. */
int gt_measure_time_interleaved(gt_measure *m, const gt_shape *s, float beta, int n, const gt_run_fn *run,
                                void *const *ctx, int warmup, int reps, double *medians, double *mins, double *maxs,
                                char *err, size_t errlen);

/* cuBLAS SGEMM, FP32 pedantic, as a gt_run_fn (ctx = the gt_measure). */
int gt_measure_cublas_run(void *ctx, const gt_args *a, cudaStream_t stream, char *err, size_t errlen);

/* A scratch buffer of at least bytes on the device (for split-K workspaces); valid until the next call. */
float *gt_measure_scratch(gt_measure *m, size_t bytes, char *err, size_t errlen);

#endif
