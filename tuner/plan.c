/* The candidates of one shape and layout (see sweep.h): every selected family's legal points (a static space
 * enumerated here, a device space asked of the GPU), this shard's share, in sweep order, stored verdicts taken over
 * so a rerun resumes. With no GPU (tuner/ahead.c) the static spaces alone. Tested by tests/test_tune.c (the plan
 * without a GPU by its tune_precompile and tune_dry_run tests). */
#include "serve.h"
#include "sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    gt_sweep *t;
    const gt_shape *s;
    gt_item *v;
    int n, cap, index; /* index: position in the full candidate list, which decides the shard */
    int failed;
} collect_ctx;

int gt_plan_selected(const gt_tune_opts *o, const gt_family *f)
{
    if (!o->families) return !f->test_only && (o->math < 0 || f->math == (gt_math)o->math);
    for (int i = 0; i < o->nfamilies; ++i)
        if (!strcmp(o->families[i], f->name)) return 1;
    return 0;
}

int gt_plan_item(gt_sweep *t, const gt_family *f, const gt_params *p, const gt_shape *s, gt_item *it)
{
    char err[256];
    int hit = 0;
    memset(it, 0, sizeof *it);
    it->f = f;
    it->p = *p;
    it->job = -1;
    gt_params_format(f, p, it->params, sizeof it->params);
    gt_family_launch(f, p, s, t->lim.sm_count, &it->L); /* collect_one kept only points that can run s */
    if (f->build == GT_BUILD_NVRTC) {
        if ((it->job = gt_pool_add(t->pool, f, p, gt_variant(s), it->hash, &hit, err, sizeof err)) < 0)
            return snprintf(t->err, t->errlen, "%s %s: %s", f->name, it->params, err), -1;
        t->sum->cache_hits += hit;
    } else if (gt_kernel_id(f, p, s->ta, s->tb, gt_shape_batch(s) > 1, it->hash, NULL, err, sizeof err)) {
        return snprintf(t->err, t->errlen, "%s %s: %s", f->name, it->params, err), -1;
    }
    return 0;
}

/* Keep this shard's share of the candidates that can run the shape's tight call. */
static int collect_one(const gt_family *f, const gt_params *point, void *vctx)
{
    collect_ctx *c = vctx;
    const gt_tune_opts *o = c->t->o;
    const gt_shape *s = c->s;
    gt_call call = gt_call_tight(s);
    if (c->index++ % o->shard_n != o->shard_i) return 0;
    gt_params spec = *point, *p = &spec; /* the variant of the point that this shape's call takes */
    if (f->specialize && !c->t->general && !f->specialize(p, &call)) return 0; /* another point's variant */
    gt_launch L;
    if (f->applicable && !f->applicable(p, &call)) return 0;
    if (!gt_family_launch(f, p, s, c->t->lim.sm_count, &L)) return 0; /* a batch it cannot run in one launch */
    if (c->n == c->cap) {
        gt_item *grown = realloc(c->v, (size_t)(c->cap = c->cap ? 2 * c->cap : 256) * sizeof *grown);
        if (!grown) return c->failed = snprintf(c->t->err, c->t->errlen, "out of memory"), 1;
        c->v = grown;
    }
    if (gt_plan_item(c->t, f, p, s, &c->v[c->n])) return c->failed = 1;
    c->v[c->n].seq = c->n;
    c->n++;
    return 0;
}

/* A device space: the backend's candidates for this shape, asked of the first GPU; none without one (a plan ahead
 * of the GPU lists the family as asked at run time). */
static int collect_device(collect_ctx *c, const gt_family *f)
{
    gt_params cand[GT_MAX_DEVICE_CANDIDATES];
    char err[512];
    int n = 0;
    if (!c->t->gpu) return 0;
    if (c->t->run->candidates(c->t->gpu[0], f, c->s, cand, &n, err, sizeof err))
        return snprintf(c->t->err, c->t->errlen, "%s", err), -1;
    char why[128];
    for (int i = 0; i < n; ++i)
        if (f->legal(&cand[i], &c->t->lim, why, sizeof why) && collect_one(f, &cand[i], c)) return -1;
    return 0;
}

/* Sweep order: the families not built first (the vendor: it sets the yardstick that prunes the rest), then every
 * family's spread probes, then the other points; families from the last of the optimisation path to the first. */
static int group(const gt_item *it) { return it->f->build != GT_BUILD_NVRTC ? 0 : it->probe ? 1 : 2; }

static int family_index(const gt_family *f)
{
    for (int i = 0; i < gt_family_count(); ++i)
        if (gt_family_at(i) == f) return i;
    return -1;
}

static int sweep_cmp(const void *a, const void *b)
{
    const gt_item *x = a, *y = b;
    if (group(x) != group(y)) return group(x) - group(y);
    if (x->f != y->f) return family_index(y->f) - family_index(x->f);
    return x->seq - y->seq;
}

/* The index in [i, j) of the point with the best predicted occupancy of the GPU on shape s (wave and tile
 * quantization, gt_serve_occupancy) that is not a probe yet; -1 when every point is one. */
static int best_fit(const gt_item *v, int i, int j, const gt_shape *s, int sms)
{
    int best = -1;
    double q_best = -1;
    for (int k = i; k < j; ++k) {
        const double q = v[k].probe ? -1 : gt_serve_occupancy(v[k].f, &v[k].p, s, sms);
        if (q > q_best) best = k, q_best = q;
    }
    return best;
}

/* A family's probes decide whether its other points are screened at all (the family ceiling): four spread over its
 * space, and the two that fill this GPU best on this shape, so that a skinny or deep shape probes the split-K or
 * stream-K points it needs, not only the spread's. */
static void mark_probes(gt_item *v, int n, const gt_shape *s, int sms)
{
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && v[j].f == v[i].f) ++j;
        const int c = j - i, probes = c < 4 ? c : 4;
        for (int k = 0; k < probes; ++k) v[i + k * c / probes].probe = 1;
        for (int k = 0, b; k < 2 && (b = best_fit(v, i, j, s, sms)) >= 0; ++k) v[b].probe = 1;
        i = j;
    }
}

static void shuffle(gt_item *v, int n, unsigned long long seed)
{
    unsigned long long x = seed * 0x9E3779B97F4A7C15ull + 1; /* seeded Fisher-Yates: the same seed, the same sample */
    for (int i = n - 1; i > 0; --i) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int j = (int)(x % (unsigned long long)(i + 1));
        gt_item tmp = v[i];
        v[i] = v[j], v[j] = tmp;
    }
}

/* Resume: take over stored verdicts. Failures stay failures unless --retry-failed; 'screened' ones are re-run
 * wherever validation is required. */
static void take_stored(gt_sweep *t, gt_shape_ctx *sc)
{
    char err[256];
    if (!t->gpu) return; /* no GPU model to look its trials up by */
    for (int i = 0; i < sc->n; ++i) {
        gt_item *it = &sc->items[i];
        int found = 0;
        double med = -1;
        gt_status status;
        if (gt_db_find_trial(t->db, &t->info, &sc->s, it->f->name, it->params, it->hash, &found, &status, &med, err,
                             sizeof err) || !found)
            continue;
        it->status = status;
        if (gt_status_failed(it->status) && t->o->retry_failed) continue;
        it->have = 1;
        it->median_ms = med;
        if (status == GT_ST_SCREENED) it->screen_ms = med;
        t->sum->trials_skipped++;
    }
}

int gt_plan_shape(gt_sweep *t, gt_shape_ctx *sc)
{
    collect_ctx c = {.t = t, .s = &sc->s};
    /* The static spaces first, so that which shard runs a point of theirs does not depend on how many candidates
     * a GPU's library offers (tune --dry-run and precompile know it without a GPU); the device spaces after them. */
    for (int dev = 0; dev < 2; ++dev)
        for (int i = 0; i < gt_family_count() && !c.failed; ++i) {
            const gt_family *f = gt_family_at(i);
            if (!gt_plan_selected(t->o, f) || (f->space == GT_SPACE_DEVICE) != dev) continue;
            if (!dev) gt_enumerate(f, &t->lim, collect_one, &c);
            else if (collect_device(&c, f)) c.failed = 1;
        }
    if (c.failed) return free(c.v), -1;
    mark_probes(c.v, c.n, &sc->s, t->lim.sm_count);
    if (t->o->strategy == GT_STRATEGY_RANDOM) shuffle(c.v, c.n, t->o->seed);
    else qsort(c.v, (size_t)c.n, sizeof *c.v, sweep_cmp);
    if (t->o->max_trials > 0 && c.n > t->o->max_trials) c.n = (int)t->o->max_trials;
    sc->items = c.v;
    sc->n = c.n;
    take_stored(t, sc);
    return 0;
}
