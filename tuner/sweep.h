/* Internals of a sweep shared by tuner/tune.c (setup, shapes, winner, cross-timing), tuner/plan.c (the candidates
 * of a shape, their order, resume) and tuner/search.c (rounds, pruning, strategies). Calls go one way: tune.c calls
 * plan.c and search.c, which call neither it nor each other. Not a public interface. */
#ifndef GT_SWEEP_H
#define GT_SWEEP_H

#include "pool.h"
#include "tune.h"

#include <pthread.h>

/* One candidate on the current shape and layout. */
typedef struct {
    const gt_family *f;
    gt_params p;
    char params[256];
    char hash[17];  /* the rendered source's, or of "family:params" for a family that is not built */
    int job;        /* compile job, -1 when the family is not built */
    int probe;      /* one of its family's spread probes: screened first, decides the family's ceiling */
    int seq;        /* position in the enumeration, for a stable sweep order */
    double pred;    /* the cost model's seconds on the screened shape (tuner/model.h); 0: not modelled */
    gt_launch L;    /* at the full shape */
    int have;       /* a verdict exists (run now or stored) */
    gt_status status;
    double median_ms, spread_pct; /* of the latest run */
    double ref_ms;  /* the latest run's cuBLAS median where it was paired with cuBLAS (gt_round.paired), else 0 */
    double rel;     /* the re-timing's: its time over cuBLAS's in the same paired runs (0: none) */
    double screen_ms; /* its first screen's median, in the screen's terms, kept when it is validated; 0: none */
} gt_item;

typedef struct {
    gt_shape s, proxy;  /* proxy: what screening rounds time (s when no cut is needed) */
    double cublas_ms;
    gt_item *items;
    int n;
} gt_shape_ctx;

enum { GT_KIND_SEARCH, GT_KIND_RETIME, GT_KIND_CROSS }; /* what a trial is for: counted apart in the summary */

typedef struct {
    int checks, warmup, reps, screen; /* screen: timed at the proxy shape, not validated */
    int kind;
    int paired; /* each timed run alternates with one of cuBLAS (gt_trial_request.paired) */
} gt_round;

typedef struct {
    const gt_tune_opts *o;
    const gt_runner *run;
    gt_db *db;
    gt_pool *pool;
    char arch[16];
    void **gpu;          /* one runner instance per GPU */
    long long *sweeps;   /* one sweep row per GPU */
    gt_gpu_info info;
    gt_limits lim;
    double t0, gpu_seconds, wait_seconds;
    gt_tune_summary *sum;
    char *err;
    size_t errlen;
    pthread_mutex_t mu;  /* guards the database, the summary and the pool's stores while GPUs run a round */
    int general;         /* 1: plan each point as the space lists it, not specialized for the shape (the default
                            space's precompile plans both: tuner/ahead.c) */
} gt_sweep;

/* plan.c: the shape's candidates, this shard's share in sweep order, stored verdicts taken over. With t->gpu NULL
 * (a plan ahead of the GPU: tuner/ahead.c) the static spaces only, nothing taken over. 0 or -1. */
int gt_plan_shape(gt_sweep *t, gt_shape_ctx *sc);
/* 1 when the sweep's options select family f (--family, else its math class; test-only families only by name). */
int gt_plan_selected(const gt_tune_opts *o, const gt_family *f);
/* An item for f/p on shape s (for cross-timing): its job registered. 0 or -1 with t->err. */
int gt_plan_item(gt_sweep *t, const gt_family *f, const gt_params *p, const gt_shape *s, gt_item *it);

/* tune.c: the i-th shape and layout of the sweep into *s (each shape in every layout, or in its own). 1, or 0 past
 * the last. */
int gt_sweep_shape(const gt_tune_opts *o, int i, gt_shape *s);

/* search.c: run order[0..n) (indices into sc->items) on every GPU at once. 0, or -1 when a worker could not be
 * restarted. */
int gt_run_round(gt_sweep *t, gt_shape_ctx *sc, const int *order, int n, gt_round rc);
/* Store item it as 'pruned' without running it, with why as the trial's message (call with t->mu held, or while no
 * round runs). */
void gt_skip_item(gt_sweep *t, int g, const gt_shape_ctx *sc, gt_item *it, gt_round rc, const char *why);
/* guide.c: the first screen of the halving strategy led by the cost model (tuner/model.h). Library candidates
 * first; then each family's candidates in waves, in the order of their predicted time (spread over the candidates
 * the model cannot tell apart), each family stopping once its prediction, times the smallest measured/predicted
 * ratio of its screens, exceeds o->model_stop x the best screen so far of its math class, or once its screens stop
 * improving it (guide.c says after how many), never before its best-predicted candidate has a screen; a round
 * screens only what has compiled, and while nothing has, the GPU validates the leaders at full size; then the
 * neighbours (at most two params changed) of each family's best that is within 2% of its class's best (or
 * o->model_stop, where smaller), while they improve it. What is left is stored 'pruned', uncompiled, with the
 * model's numbers (t->sum->unscreened). 0, or -1 when a GPU side broke. */
int gt_guided_screen(gt_sweep *t, gt_shape_ctx *sc, gt_round rc);
/* search.c: 1 when the sweep was interrupted or its budget is spent. */
int gt_sweep_stopped(const gt_sweep *t);
/* Run one item on GPU g and store its verdict (call with t->mu held; released while the GPU works).
 * shape is what it runs on (sc's s or proxy per rc), cutoff_ms > 0 prunes. 0, or -1 when the GPU side broke. */
int gt_run_item(gt_sweep *t, int g, const gt_shape_ctx *sc, gt_item *it, gt_round rc, double cutoff_ms);

/* search.c: the seed of a trial's checks, from the sweep's --seed, the candidate (family and params) and the shape
 * s, never from the candidate's place in the enumeration: a candidate is checked on the same inputs in every sweep,
 * whatever is swept beside it, so a verdict near the bound (an FP64 check against SGEMM's error) is the same from
 * sweep to sweep. */
unsigned long long gt_trial_seed(unsigned long long seed, const gt_item *it, const gt_shape *s);
/* The strategy's search over sc's items. 0, or -1 when a GPU side broke (t->err). */
int gt_search(gt_sweep *t, gt_shape_ctx *sc);
/* Any candidate displaces the library's own choice (cuBLAS's, the first candidate its family lists) only when it
 * is faster by more than this share: a smaller lead is within the noise of a later timing (gemmtune bench), so
 * serving it could run a program slower. */
#define GT_OWN_MARGIN 0.02
/* The winner among the re-timed items idx[0..k) (status GT_ST_OK): the fastest, unless it is within GT_OWN_MARGIN
 * of the library's own choice (of the library candidates among them, the one its family lists first). Fastest by
 * rel, each one's time over cuBLAS's in the same paired runs, where every OK item has one (the re-timing pairs its
 * runs: tune.c), else by median_ms. Returns its index into items, or -1 when none is OK. Pure: tests/test_tune.c. */
int gt_pick_winner(const gt_item *items, const int *idx, int k);
/* Indices of items with a time that can rank them (status want, or any timed status when want < 0), fastest
 * first. Returns the count. */
int gt_ranked(const gt_item *items, int n, int want, int *order);
/* best[m]: the best time so far of math class m (0 before one); ms, its time in the caller's terms (a round's
 * it->median_ms, the guided screen's first screen), becomes its class's best when it is a timed run faster than
 * that. The sweep's rounds and the guided screen judge a candidate against its own class's best alone, since each
 * class keeps its own winner. Cannot fail. */
void gt_note_class_best(double best[GT_MATH_COUNT], const gt_item *it, double ms);

#endif
