/* A sweep's plan without a GPU (see ahead.h): tuner/plan.c's candidates for an architecture's limits, their
 * sources in the sweep's compile pool, then listed, or compiled and cached by that pool. */
#include "ahead.h"
#include "sweep.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    const gt_family *f;
    char params[256];
} origin; /* the first candidate of a compile job, to name it in a failure */

typedef struct {
    gt_sweep t;
    gt_tune_summary tsum;
    const gt_ahead_opts *a;
    gt_ahead_summary *sum;
    origin *jobs;
    int njobs;
} ahead;

/* 768 is a whole number of every tile side the families specialize for (16, 32, 64, 96, 128, 256). */
gt_shape gt_ahead_any_shape(void) { return (gt_shape){768, 768, 768, 0, 0}; }

/* A look-up opens the database read-only, and only when it exists: a dry run creates nothing. */
static int open_db(ahead *h, const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (!h->a->compile && stat(path, &st) != 0 && errno == ENOENT) return 0;
    return gt_db_open(path, h->a->compile ? GT_DB_CREATE : GT_DB_READ, &h->t.db, err, errlen);
}

static int setup(ahead *h, const gt_tune_opts *o, char *err, size_t errlen)
{
    char sfx;
    int major, minor;
    h->t.o = o, h->t.sum = &h->tsum, h->t.err = err, h->t.errlen = errlen;
    if (gt_arch_parse(h->a->arch, &major, &minor, &sfx) || sfx || !gt_limits_for_arch(h->a->arch, &h->t.lim))
        return snprintf(err, errlen, "unknown architecture '%s': want a GPU's sm_XY", h->a->arch), -1;
    h->t.lim.sm_count = h->a->sms;
    snprintf(h->t.arch, sizeof h->t.arch, "%s", h->a->arch);
    if (o->db_path && open_db(h, o->db_path, err, errlen)) return -1;
    h->t.pool = gt_pool_new(h->t.db, h->t.arch, o->compile, h->a->compile ? o->jobs : 0);
    return h->t.pool ? 0 : (snprintf(err, errlen, "out of memory"), -1);
}

/* Name each new job after the first candidate that registered it. */
static int note_origins(ahead *h, const gt_shape_ctx *sc)
{
    const int n = gt_pool_count(h->t.pool);
    if (n <= h->njobs) return 0;
    origin *grown = realloc(h->jobs, (size_t)n * sizeof *grown);
    if (!grown) return -1;
    memset(grown + h->njobs, 0, (size_t)(n - h->njobs) * sizeof *grown);
    h->jobs = grown;
    for (int i = 0; i < sc->n; ++i) {
        const gt_item *it = &sc->items[i];
        if (it->job >= h->njobs && !grown[it->job].f)
            grown[it->job].f = it->f, snprintf(grown[it->job].params, sizeof grown[it->job].params, "%s", it->params);
    }
    h->njobs = n;
    return 0;
}

static void list_items(ahead *h, const gt_shape_ctx *sc)
{
    if (h->a->on_shape) h->a->on_shape(&sc->s, sc->n, h->a->ctx);
    for (int i = 0; i < sc->n && h->a->on_item; ++i) {
        const gt_item *it = &sc->items[i];
        gt_ahead_item e = {&sc->s, it->f, it->params, it->hash, it->job >= 0 ? gt_pool_cached(h->t.pool, it->job) : -1};
        h->a->on_item(&e, h->a->ctx);
    }
    for (int i = 0; i < gt_family_count(); ++i) {
        const gt_family *f = gt_family_at(i);
        if (f->space != GT_SPACE_DEVICE || !gt_plan_selected(h->t.o, f)) continue;
        h->sum->device++;
        if (h->a->on_device) h->a->on_device(&sc->s, f, h->a->ctx);
    }
}

/* The plan of shape s, listed and counted; general: its points unspecialized (tuner/plan.c), sources only. */
static int plan_one(ahead *h, const gt_shape *s, int general)
{
    gt_shape_ctx sc = {.s = *s, .proxy = *s};
    h->t.general = general;
    if (gt_plan_shape(&h->t, &sc)) return -1;
    int rc = note_origins(h, &sc);
    if (rc) snprintf(h->t.err, h->t.errlen, "out of memory");
    else if (!general) list_items(h, &sc), h->sum->shapes++, h->sum->candidates += sc.n;
    free(sc.items);
    return rc;
}

static int plan_shape(ahead *h, const gt_shape *s)
{
    if (plan_one(h, s, 0)) return -1;
    return h->a->general ? plan_one(h, s, 1) : 0;
}

static void fail(ahead *h, int job, const char *why)
{
    char arch[20];
    const int k = h->sum->failed++;
    if (k >= GT_AHEAD_ERRORS) return;
    gt_family_arch(h->jobs[job].f, h->t.arch, arch, sizeof arch);
    snprintf(h->sum->errors[k], sizeof h->sum->errors[k], "%.32s %.255s (%.19s): %.400s", h->jobs[job].f->name,
             h->jobs[job].params, arch, why);
}

/* Every source wanted at once, in the order the plan registered them; each compiled one cached as it completes. */
static int compile_all(ahead *h)
{
    char err[512];
    const int n = gt_pool_count(h->t.pool);
    int *all = malloc((size_t)(n ? n : 1) * sizeof *all);
    if (!all) return snprintf(h->t.err, h->t.errlen, "out of memory"), -1;
    for (int i = 0; i < n; ++i) all[i] = i;
    gt_pool_want(h->t.pool, all, n);
    free(all);
    for (int i = 0; i < n; ++i) {
        const gt_pool_job *j = gt_pool_wait(h->t.pool, i, NULL);
        if (j->cached) continue;
        if (j->rc != 0) fail(h, i, j->err[0] ? j->err : "the compiler failed");
        else if (gt_pool_store(h->t.pool, i, err, sizeof err)) fail(h, i, err);
        else h->sum->compiled++;
    }
    return 0;
}

int gt_ahead_run(const gt_tune_opts *o, const gt_ahead_opts *a, gt_ahead_summary *sum, char *err, size_t errlen)
{
    ahead h = {.a = a, .sum = sum};
    const double t0 = gt_now_s();
    gt_shape s;
    memset(sum, 0, sizeof *sum);
    int rc = setup(&h, o, err, errlen);
    for (int i = 0; rc == 0 && gt_sweep_shape(o, i, &s); ++i) rc = plan_shape(&h, &s);
    if (rc == 0) /* the plan counted each new source it found in the cache (tuner/plan.c) */
        sum->sources = gt_pool_count(h.t.pool), sum->cached = h.tsum.cache_hits;
    if (rc == 0 && a->compile) rc = compile_all(&h);
    gt_pool_free(h.t.pool, NULL);
    gt_db_close(h.t.db);
    free(h.jobs);
    sum->seconds = gt_now_s() - t0;
    return rc;
}
