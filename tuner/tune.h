/* A tuning sweep: enumerate -> render -> compile (thread pool, cubin cache) -> run in a worker (validate, time)
 * -> store, per shape and layout, then re-time the best few and store the winner. Resumable: trials already in
 * the database are skipped. Driven by src/cmd_tune.c; tested by tests/test_tune.c. */
#ifndef GT_TUNE_H
#define GT_TUNE_H

#include "family.h"

#include <stddef.h>

enum { GT_STRATEGY_EXHAUSTIVE, GT_STRATEGY_RANDOM, GT_STRATEGY_HALVING };

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
    const char *command;     /* stored with the sweep for provenance */
} gt_tune_opts;

typedef struct {
    int trials_run, trials_skipped, trials_failed, compiled, cache_hits, restarts, interrupted;
    double gpu_seconds; /* wall time spent inside worker trials: the sweep's GPU cost */
} gt_tune_summary;

/* Defaults for every field not set by the caller (sizes, GPUs and db_path excepted). */
void gt_tune_defaults(gt_tune_opts *o);

/* Run the sweep. Returns 0 when it completed (also when some candidates failed: those are stored trials),
 * 130 when interrupted by SIGINT after committing, -1 on a setup error (no GPU, bad database; err says why). */
int gt_tune_run(const gt_tune_opts *o, gt_tune_summary *sum, char *err, size_t errlen);

#endif
