/* A tuning sweep: plan the candidates -> compile ahead (tuner/pool.c) -> run each in a worker (validate, time)
 * -> store, per shape and layout; search strategies and pruning in tuner/search.c; the best few re-timed at full
 * size, each run paired with one of cuBLAS, and the fastest stored as the winner; then each tuned neighbour's
 * winner timed here and this winner there (cross-timing, the data of the loader's serving model). Resumable:
 * trials already in the database are skipped. Driven by src/cli/cmd_tune.c; the strategies, resume, sharding and
 * pruning are tested on the CPU with a fake runner by tests/test_tune.c, the real thing by tests/test_gpu.c. */
#ifndef GT_TUNE_H
#define GT_TUNE_H

#include "compile.h"
#include "db.h"
#include "family.h"
#include "worker.h"

#include <signal.h>
#include <stddef.h>

enum { GT_STRATEGY_EXHAUSTIVE, GT_STRATEGY_RANDOM, GT_STRATEGY_HALVING };

/* The GPU side of a sweep, one instance per GPU: worker processes (gt_worker_runner) in a real sweep, a fake in the
 * CPU tests. Every function returns 0, or -1 with err when the GPU side itself broke (not a candidate's verdict). */
typedef struct {
    int (*start)(int device, void **self, char *err, size_t errlen);
    void (*stop)(void *self);
    void (*info)(void *self, gt_gpu_info *gpu, gt_limits *lim);
    int (*baseline)(void *self, const gt_shape *s, int warmup, int reps, double *median_ms, char *err, size_t errlen);
    int (*candidates)(void *self, const gt_family *f, const gt_shape *s, gt_params *out, int *n, char *err,
                      size_t errlen);
    int (*trial)(void *self, const gt_trial_request *req, gt_trial_result *out, char *err, size_t errlen);
    int (*restarts)(void *self);
} gt_runner;

extern const gt_runner gt_worker_runner;

/* The winner of one more math class of a shape (the sweep raced several: --math all). */
typedef struct {
    gt_math math;
    char family[32], params[256];
    double median_ms;
} gt_class_result;

/* The outcome of one shape and layout; family is empty when no candidate passed validation. family is the first
 * class's winner (FP32 before the others); also, the other classes' that have one. */
typedef struct {
    gt_shape shape;
    char family[32], params[256];
    gt_class_result also[GT_MATH_COUNT];
    int nalso;
    double median_ms, spread_pct, cublas_ms;
    int trials, failed, skipped, cross;
    double wall_s, gpu_s; /* this shape's share of the sweep */
} gt_shape_result;

/* A trial just finished (for a progress line). */
typedef struct {
    const gt_shape *shape;
    const char *family;
    gt_status status;
    int done, total, failed;
    double best_ms, cublas_ms, eta_s;
} gt_trial_event;

typedef struct {
    const char *db_path;
    const int *gpus;
    int ngpus;
    const gt_shape *shapes;  /* ta/tb ignored unless shape_layouts is set */
    int nshapes;
    int shape_layouts;       /* 1: tune each shape in its own ta/tb only (a recorded call list) */
    int layouts[4];          /* ta * 2 + tb: the layouts every shape is tuned in, when shape_layouts is 0 */
    int nlayouts;
    const char *const *families; /* NULL: every family of math class `math` that is not test-only */
    int nfamilies;
    int math;                /* gt_math: the class swept when families is NULL (default GT_MATH_FP32); -1: all */
    int warmup, reps;        /* per candidate in the search */
    int topk, final_reps;    /* the best topk are re-timed with final_reps before a winner is chosen */
    double budget_s;         /* per sweep; 0 = none */
    long max_trials;         /* per shape and layout; 0 = none */
    unsigned long long seed;
    int strategy;
    int retry_failed;
    int shard_i, shard_n;    /* this process runs the candidates whose index % shard_n == shard_i */
    int jobs;                /* compile threads */
    double timeout_floor_s;  /* per-trial watchdog floor; the limit grows with cuBLAS's time on the shape */
    double prune_ratio;      /* > 0: a candidate whose first run is this many times slower than cuBLAS is stored
                                as 'pruned' without validation or timing (default 20) */
    double prune_best;       /* > 0: ... or this many times slower than the best so far in its round (default 4) */
    double family_ceiling;   /* > 0: a family whose spread probes are all this many times slower than the best so
                                far skips its other candidates in a screen, stored 'pruned' (default 3) */
    double model_stop;       /* > 0, with halving: screen each family's candidates in the cost model's order
                                (tuner/model.h) and stop compiling a family once its prediction, calibrated on its
                                screens, is this many times the best screen so far; then its best's neighbours
                                (default 1.1); 0 screens every candidate */
    double screen_ms;        /* > 0: screening rounds time a proxy with K cut so cuBLAS would take about this long
                                (default 1); 0 screens at full size */
    int cross;               /* time the tuned neighbours' winners here and this winner there (default 1) */
    const char *command;     /* stored with the sweep for provenance */
    const gt_runner *runner; /* NULL: worker processes */
    gt_compile_fn compile;   /* NULL: NVRTC */
    volatile sig_atomic_t *interrupt; /* non-zero stops the sweep after the trial in flight (Ctrl-C); may be NULL */
    void (*on_trial)(const gt_trial_event *e, void *ctx); /* may be NULL */
    void (*on_shape)(const gt_shape_result *r, void *ctx); /* called as each shape finishes; may be NULL */
    /* called once the GPUs answered, before the database is opened; non-zero stops the sweep as a setup error with
       its message in err (the CLI refuses shapes that cannot fit in gpu->mem_bytes); may be NULL */
    int (*on_gpu)(const gt_gpu_info *gpu, void *ctx, char *err, size_t errlen);
    void *ctx;
} gt_tune_opts;

typedef struct {
    int trials_run;      /* search trials (screens, validations, timings) */
    int retimed;         /* the best few re-timed at full size before the winner is chosen */
    int cross_trials;    /* neighbours' winners timed here and this winner there */
    int trials_skipped, trials_failed, compiled, cache_hits, restarts, interrupted;
    int unscreened;      /* candidates the cost model left uncompiled (stored as 'pruned' with its reason) */
    double gpu_seconds;  /* wall time spent inside worker trials: the sweep's GPU cost */
    double wall_seconds; /* the whole sweep */
    double wait_seconds; /* time a GPU sat waiting for a compile */
    gt_shape_result *shapes; /* one per finished shape and layout, malloc'd: gt_tune_summary_free */
    int nshapes;
} gt_tune_summary;

void gt_tune_summary_free(gt_tune_summary *s);

/* Defaults for every field not set by the caller (sizes, GPUs and db_path excepted). */
void gt_tune_defaults(gt_tune_opts *o);

/* Run the sweep. Returns 0 when it completed (also when some candidates failed: those are stored trials),
 * 130 when interrupted after committing, -1 on a setup error (no GPU, bad database; err says why). */
int gt_tune_run(const gt_tune_opts *o, gt_tune_summary *sum, char *err, size_t errlen);

/* The proxy shape a screening round times instead of s: K cut (to a multiple of 256, at least 256) so that
 * cuBLAS, which took cublas_ms on s, would take about screen_ms. s itself when no cut is needed. */
gt_shape gt_tune_proxy(const gt_shape *s, double cublas_ms, double screen_ms);

#endif
