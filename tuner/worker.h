/* Isolation: every CUDA action of a sweep runs in a worker process (this binary re-executed as `__worker`), so a
 * candidate that faults or hangs becomes a stored status, the worker is replaced with a fresh CUDA context and
 * the sweep goes on. The parent never initialises CUDA. Tested by tests/test_gpu.c (GPU). */
#ifndef GT_WORKER_H
#define GT_WORKER_H

#include "db.h"
#include "family.h"

#include <stddef.h>

typedef struct gt_worker gt_worker;

typedef struct {
    gt_status status;   /* ok, wrong, pruned, resources, launch_error, faulted, timeout, unavailable */
    char message[512];
    double median_ms, min_ms, max_ms, rel_err;
    double ref_ms;      /* a paired timing's: cuBLAS FP32's median over the runs between the candidate's; else -1 */
    int regs;
} gt_trial_result;

enum { GT_MAX_DEVICE_CANDIDATES = 32 }; /* per family, shape and layout, from a backend */

/* What to run: a candidate (family and params; for a built family also its cubin), its launch geometry for shape,
 * and the validation/timing effort. */
typedef struct {
    const gt_family *family;
    gt_params params;
    const void *cubin;   /* GT_BUILD_NVRTC families */
    size_t cubin_size;
    gt_shape shape;      /* validated at this shape; timed at time_shape when its k is set, else here */
    gt_shape time_shape;
    gt_launch launch;
    int checks;          /* 1: validate (alpha 1.5 with beta 0 over NaN C, then beta 0.5) before timing */
    int pad_a, pad_b, pad_c; /* extra leading-dimension elements in the checks (timing uses tight ones) */
    int warmup, reps;    /* reps 0: validate only */
    unsigned long long seed;
    double timeout_s;    /* whole trial, after which the worker is killed and replaced */
    double cutoff_ms;    /* > 0: one timed run first; slower than this -> status 'pruned', nothing else run */
    int paired;          /* 1 (with no cutoff): each timed run alternates with one of cuBLAS FP32 (pedantic), as in
                            a program and in gemmtune bench, where back-to-back runs of one kernel can favour it by a
                            few percent; the result's ref_ms is cuBLAS's median */
} gt_trial_request;

/* Start a worker on CUDA device `device`. Fails (err says why) when there is no such device or no driver. */
int gt_worker_start(int device, gt_worker **out, char *err, size_t errlen);
void gt_worker_stop(gt_worker *w);

/* Identity and limits read by the worker at start. */
void gt_worker_info(const gt_worker *w, gt_gpu_info *gpu, gt_limits *lim);

/* Time cuBLAS FP32 (pedantic) on shape: median of reps after warmup, cold L2. */
int gt_worker_baseline(gt_worker *w, const gt_shape *s, int warmup, int reps, double *median_ms, char *err,
                       size_t errlen);

/* The candidates a GT_SPACE_DEVICE family's backend offers for shape s on this GPU (at most
 * GT_MAX_DEVICE_CANDIDATES). 0 with *n set, or -1 (err says why). */
int gt_worker_candidates(gt_worker *w, const gt_family *f, const gt_shape *s, gt_params *out, int *n, char *err,
                         size_t errlen);

/* Run one trial. Returns 0 when *out holds a verdict (also faulted/timeout, after which the worker was
 * replaced), -1 when the worker could not be (re)started (err says why). */
int gt_worker_trial(gt_worker *w, const gt_trial_request *req, gt_trial_result *out, char *err, size_t errlen);

/* Restarts so far (faults and timeouts). */
int gt_worker_restarts(const gt_worker *w);

/* Entry point of the worker process: call from main() when argv[1] is "__worker". */
int gt_worker_main(int argc, char **argv);

#endif
