/* The compile pool of a sweep: each distinct rendered source (a candidate in one layout) is registered once,
 * taken from the database's cubin cache when it is there, otherwise compiled by a thread pool in the order the
 * GPUs will ask for it, so compiles run ahead of the GPU. Used by tuner/tune.c and, with no GPU, by tuner/ahead.c
 * (precompile, tune --dry-run); tested through tests/test_tune.c. */
#ifndef GT_POOL_H
#define GT_POOL_H

#include "compile.h"
#include "db.h"
#include "family.h"

typedef struct gt_pool gt_pool;

/* A compiled (or failed) source. */
typedef struct {
    char hash[17];
    int rc;      /* 0 compiled, 1 compile error, -1 compiler failure */
    int cached;  /* came from the cubin cache: the compiler did not run */
    int stored;  /* in the cubin cache */
    gt_cubin cb;
    char err[512];
} gt_pool_job;

/* threads 0: compile on the caller's thread when a job is waited for. NULL on out of memory. */
gt_pool *gt_pool_new(gt_db *db, const char *arch, gt_compile_fn compile, int threads);
/* Stops the threads, frees every job. *compiled: sources the compiler ran for. */
void gt_pool_free(gt_pool *p, int *compiled);

/* Render f/p in variant (gt_variant: the layout and whether it runs a batch) and register it (once per distinct source; a cache hit is done at once).
 * Returns the job index with the source's hash, or -1 with err. *cache_hit is set when this call found it in the
 * cache. */
int gt_pool_add(gt_pool *p, const gt_family *f, const gt_params *par, int variant, char hash[17], int *cache_hit,
                char *err, size_t errlen);
/* Ask for jobs in this order of need; they compile ahead while the GPU works. */
void gt_pool_want(gt_pool *p, const int *jobs, int n);
/* Take back jobs not yet started (a family cut in a screen): they compile only if asked for again. */
void gt_pool_unwant(gt_pool *p, const int *jobs, int n);
/* The job, compiled; blocks until it is. *waited_s (may be NULL) adds the time spent waiting. The pointer stays
 * valid until the next gt_pool_add. */
const gt_pool_job *gt_pool_wait(gt_pool *p, int job, double *waited_s);
/* Blocks until one of jobs[0..n) is compiled (or failed to); returns its position in jobs, or -1 when none is
 * and none of them is wanted (nothing would come), or the pool has no threads. *waited_s as gt_pool_wait's. */
int gt_pool_wait_any(gt_pool *p, const int *jobs, int n, double *waited_s);
/* After a trial, or a compile ahead of the GPU: put the job's cubin into the cache (once). Caller holds the
 * database. 0 when it is there now (or did not compile: nothing to store), -1 with err when the cache refused it. */
int gt_pool_store(gt_pool *p, int job, char *err, size_t errlen);
/* Put every job that finished compiling into the cache, also those no trial ran (compiled ahead of a family the
 * sweep then stopped): a later sweep needs them compiled no more. Caller holds the database. A refusal is not an
 * error: that cubin is compiled again when needed. */
void gt_pool_store_compiled(gt_pool *p);
/* The jobs registered so far (indices 0 .. count-1, in the order gt_pool_add first saw them). Cannot fail. */
int gt_pool_count(gt_pool *p);
/* 1 when job is compiled (or failed to) or came from the cache: waiting for it would not wait; never waits. */
int gt_pool_ready(gt_pool *p, int job);
/* 1 when job's cubin came from the cache (the compiler will not run for it), else 0; never waits. Cannot fail. */
int gt_pool_cached(gt_pool *p, int job);

#endif
