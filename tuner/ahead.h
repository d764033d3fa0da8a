/* A sweep's plan ahead of the GPU: the candidates tuner/plan.c would give each shape and layout (this shard's share,
 * in sweep order), made for an architecture named instead of asked of a GPU, and their sources registered with the
 * compile pool (tuner/pool.c). Listed, for `tune --dry-run`; or compiled and put in the database's cubin cache, for
 * `gemmtune precompile`, so that a later sweep of the same plan on that architecture compiles nothing.
 * Driven by src/cli/cmd_precompile.c and cmd_tune.c; tested on the CPU by tests/test_tune.c
 * (tune_precompile_*, tune_dry_run_*, with a fake GPU and compiler) and tests/test_cli_plan.c (the CLI). */
#ifndef GT_AHEAD_H
#define GT_AHEAD_H

#include "tune.h"

/* One planned candidate. */
typedef struct {
    const gt_shape *shape;   /* the shape and layout it was planned for */
    const gt_family *f;
    const char *params;      /* canonical text */
    const char *hash;        /* its kernel id (gt_kernel_id): the cubin cache's key with the family's arch */
    int cached;              /* 1: its cubin is in the cache for arch; 0: it would be compiled; -1: nothing to build */
} gt_ahead_item;

typedef struct {
    const char *arch;        /* the GPU's architecture, "sm_90" (no suffix: gt_family_arch adds one per family) */
    int sms;                 /* its SM count when known (the sweep order's probes), else 0 */
    int compile;             /* 1: compile every source not cached and cache it; 0: look up only, create nothing */
    int general;             /* 1: also each point as the space lists it, not specialized for the shape (a family's
                                specialize hook): the default space's plan, for shapes of any tiling; its sources
                                count, its points are not listed again */
    void (*on_shape)(const gt_shape *s, int n, void *ctx);  /* a shape and layout, n candidates: before its items */
    void (*on_item)(const gt_ahead_item *it, void *ctx);    /* each candidate, in sweep order; may be NULL */
    void (*on_device)(const gt_shape *s, const gt_family *f, void *ctx); /* a selected family whose candidates the
                                                                            GPU gives at run time; may be NULL */
    void *ctx;
} gt_ahead_opts;

#define GT_AHEAD_ERRORS 4

typedef struct {
    int shapes;              /* shapes x layouts planned */
    int candidates;          /* planned candidates of static spaces, over every shape and layout */
    int device;              /* (shape, family) pairs whose candidates the GPU gives at run time */
    int sources;             /* distinct sources among them: what a sweep compiles at most */
    int cached;              /* sources whose cubin was in the cache already */
    int compiled, failed;    /* with compile: sources compiled and cached; sources that failed (compile or cache) */
    char errors[GT_AHEAD_ERRORS][800]; /* the first failures: "family params (arch): why" */
    double seconds;
} gt_ahead_summary;

/* Plan o's sweep (shapes, layouts, families or math class, shard, strategy, max_trials; o->jobs compile threads,
 * o->compile the compiler, NULL NVRTC) for a->arch, reading the cubin cache of o->db_path: opened read-only and
 * only when it exists for a look-up, created when a->compile. Returns 0 (also when sources failed to compile: they
 * are counted), or -1 with err when the plan cannot be made (an unknown architecture, the database). */
int gt_ahead_run(const gt_tune_opts *o, const gt_ahead_opts *a, gt_ahead_summary *sum, char *err, size_t errlen);

/* The shape a plan of the default space uses when given no sizes: one that every candidate of every family can run
 * (any alignment, a split-K workspace within every cap), so only layout and family decide what is planned; whole
 * tiles of every tiling, so that with general each point a family specializes for whole tiles is planned in both
 * variants. */
gt_shape gt_ahead_any_shape(void);

#endif
