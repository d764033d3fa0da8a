/* A tuning sweep: enumerate -> render -> compile (thread pool, cubin cache) -> run in a worker (validate, time)
 * -> store, per shape and layout, then re-time the best few and store the winner. Resumable: trials already in
 * the database are skipped. Driven by src/cmd_tune.c; tested by tests/test_tune.c. */
#ifndef GT_TUNE_H
#define GT_TUNE_H

#include "db.h"
#include "family.h"

#include <stddef.h>

enum { GT_STRATEGY_EXHAUSTIVE, GT_STRATEGY_RANDOM, GT_STRATEGY_HALVING };

/* The outcome of one shape and layout; family is empty when no candidate passed validation. */
typedef struct {
    gt_shape shape;
    char family[32], params[256];
    double median_ms, spread_pct, cublas_ms;
    int trials, failed, skipped;
} gt_shape_result;

typedef struct {
    const char *db_path;
    const int *gpus;
    int ngpus;
    const gt_shape *shapes;  /* ta/tb ignored: layouts[] says which layouts each shape is tuned in */
    int nshapes;
    int layouts[4];          /* ta * 2 + tb */
    int nlayouts;
    const char *const *families; /* NULL: every family that is not test-only */
    int nfamilies;
    int warmup, reps;        /* per candidate in the search */
    int topk, final_reps;    /* the best topk are re-timed with final_reps before a winner is chosen */
    double budget_s;         /* per sweep; 0 = none */
    long max_trials;         /* per shape and layout; 0 = none */
    unsigned long long seed;
    int strategy;
    int retry_failed;
    int progress;            /* 1 live line on stderr, 0 none */
    int shard_i, shard_n;    /* this process runs items whose index % shard_n == shard_i */
    int jobs;                /* compile threads */
    double timeout_floor_s;  /* per-trial watchdog floor; the limit grows with cuBLAS's time on the shape */
    double prune_ratio;      /* > 0: a candidate whose first run is this many times slower than cuBLAS is stored
                                as 'pruned' without validation or timing (default 20) */
    const char *command;     /* stored with the sweep for provenance */
    void (*on_shape)(const gt_shape_result *r, void *ctx); /* called as each shape finishes; may be NULL */
    /* called once the GPUs answered, before the database is opened; non-zero stops the sweep as a setup error with
       its message in err (the CLI refuses shapes that cannot fit in gpu->mem_bytes); may be NULL */
    int (*on_gpu)(const gt_gpu_info *gpu, void *ctx, char *err, size_t errlen);
    void *ctx;
} gt_tune_opts;

typedef struct {
    int trials_run, trials_skipped, trials_failed, compiled, cache_hits, restarts, interrupted;
    double gpu_seconds; /* wall time spent inside worker trials: the sweep's GPU cost */
    gt_shape_result *shapes; /* one per finished shape and layout, malloc'd: gt_tune_summary_free */
    int nshapes;
} gt_tune_summary;

void gt_tune_summary_free(gt_tune_summary *s);

/* Defaults for every field not set by the caller (sizes, GPUs and db_path excepted). */
void gt_tune_defaults(gt_tune_opts *o);

/* Run the sweep. Returns 0 when it completed (also when some candidates failed: those are stored trials),
 * 130 when interrupted by SIGINT after committing, -1 on a setup error (no GPU, bad database; err says why). */
int gt_tune_run(const gt_tune_opts *o, gt_tune_summary *sum, char *err, size_t errlen);

#endif
