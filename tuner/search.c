/* Rounds of trials over every GPU, pruning against the reference and the best so far, and the search strategies
 * (exhaustive, random, successive halving with screens on a proxy problem). Tested by tests/test_tune.c. */
#include "sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A screen times the proxy, but for a family that asks to be screened at the full shape (screen_full). */
static int on_proxy(const gt_item *it, gt_round rc) { return rc.screen && !it->f->screen_full; }

static void store(gt_sweep *t, const gt_shape_ctx *sc, int g, const gt_item *it, const gt_pool_job *j,
                  const gt_trial_result *r, gt_round rc)
{
    char err[256], msg[600];
    const gt_shape *ts = on_proxy(it, rc) ? &sc->proxy : &sc->s;
    snprintf(msg, sizeof msg, "%s", r->message);
    char dims[48];
    if (on_proxy(it, rc) && ts->k != sc->s.k)
        snprintf(msg + strlen(msg), sizeof msg - strlen(msg), "%stimed on the proxy %s", msg[0] ? "; " : "",
                 gt_shape_dims(ts, dims, sizeof dims));
    gt_trial tr = {.family = it->f->name, .params = it->params, .source_hash = it->hash,
                   .status = r->status, .message = msg[0] ? msg : NULL, .median_ms = r->median_ms,
                   .min_ms = r->min_ms, .max_ms = r->max_ms, .rel_err = r->rel_err, .regs = j ? j->cb.regs : r->regs,
                   .spill_bytes = j ? j->cb.spill_bytes : -1, .compile_s = j && !j->cached ? j->cb.seconds : 0,
                   .reps = rc.reps, .tflops = r->median_ms > 0 ? gt_tflops(ts, r->median_ms) : -1};
    if (gt_db_add_trial(t->db, t->sweeps[g], &sc->s, &tr, err, sizeof err))
        fprintf(stderr, "\ngemmtune: storing a trial failed: %s\n", err);
}

unsigned long long gt_trial_seed(unsigned long long seed, const gt_item *it, const gt_shape *s)
{
    char key[512], hex[17];
    const int n = snprintf(key, sizeof key, "%s:%s:%dx%dx%dx%d:%d%d", it->f->name, it->params, gt_shape_batch(s), s->m,
                           s->n, s->k, s->ta, s->tb);
    gt_hash_hex(key, n < (int)sizeof key ? (size_t)n : sizeof key - 1, hex);
    return seed * 1000003ull + strtoull(hex, NULL, 16);
}

/* cutoff_ms is in the round's terms (the proxy's in a screen): a screen_full item's own is scaled to its shape. */
static gt_trial_request request(const gt_sweep *t, const gt_shape_ctx *sc, const gt_item *it, gt_round rc,
                                double cutoff_ms)
{
    const gt_shape *ts = on_proxy(it, rc) ? &sc->proxy : &sc->s;
    const double scale = (double)ts->k / sc->s.k;
    if (rc.screen && !on_proxy(it, rc) && cutoff_ms > 0) cutoff_ms *= (double)sc->s.k / sc->proxy.k;
    const double per_launch = fmax(0.02, 200 * sc->cublas_ms * scale / 1000.0); /* from cuBLAS, with a floor */
    const int launches = (rc.warmup + rc.reps) * (1 + rc.paired) + 8; /* a paired round runs cuBLAS as often */
    gt_trial_request req = {.family = it->f, .params = it->p, .shape = sc->s, .launch = it->L, .checks = rc.checks,
                            .warmup = rc.warmup, .reps = rc.reps, .cutoff_ms = cutoff_ms,
                            .paired = rc.paired, .seed = gt_trial_seed(t->o->seed, it, &sc->s),
                            .timeout_s = t->o->timeout_floor_s + per_launch * launches};
    if (on_proxy(it, rc)) {
        req.shape = req.time_shape = sc->proxy;
        gt_family_launch(it->f, &it->p, &sc->proxy, t->lim.sm_count, &req.launch);
    }
    return req;
}

int gt_sweep_stopped(const gt_sweep *t)
{
    const gt_tune_opts *o = t->o;
    return (o->interrupt && *o->interrupt) || (o->budget_s > 0 && gt_now_s() - t->t0 > o->budget_s);
}

int gt_run_item(gt_sweep *t, int g, const gt_shape_ctx *sc, gt_item *it, gt_round rc, double cutoff_ms)
{
    const gt_pool_job *j = it->job >= 0 ? gt_pool_wait(t->pool, it->job, &t->wait_seconds) : NULL;
    gt_trial_result r = {.status = GT_ST_COMPILE_ERROR, .median_ms = -1, .min_ms = -1, .max_ms = -1, .rel_err = -1};
    char err[512];
    if (j && j->rc != 0) {
        snprintf(r.message, sizeof r.message, "%s", j->err);
    } else {
        gt_trial_request req = request(t, sc, it, rc, cutoff_ms);
        if (j) req.cubin = j->cb.data, req.cubin_size = j->cb.size;
        pthread_mutex_unlock(&t->mu);
        double t0 = gt_now_s();
        int rc2 = t->run->trial(t->gpu[g], &req, &r, err, sizeof err);
        pthread_mutex_lock(&t->mu);
        t->gpu_seconds += gt_now_s() - t0;
        if (rc2) return snprintf(t->err, t->errlen, "GPU %d: %s", t->o->gpus[g], err), -1;
        if (rc.screen && r.status == GT_ST_OK) r.status = GT_ST_SCREENED;
        /* whatever the verdict: the next sweep of this source compiles nothing (a refusal costs only a compile) */
        if (j) gt_pool_store(t->pool, it->job, err, sizeof err);
    }
    store(t, sc, g, it, j, &r, rc);
    it->have = 1;
    it->status = r.status;
    /* in the round's terms: a screen_full item's screen counts as if its time scaled with K, like the others' */
    it->median_ms = r.median_ms > 0 && rc.screen && !on_proxy(it, rc) ? r.median_ms * sc->proxy.k / sc->s.k
                                                                      : r.median_ms;
    it->spread_pct = r.median_ms > 0 ? 100.0 * (r.max_ms - r.min_ms) / r.median_ms : 0;
    it->ref_ms = r.ref_ms > 0 ? r.ref_ms : 0;
    if (rc.screen && it->screen_ms <= 0) it->screen_ms = it->median_ms;
    if (rc.kind == GT_KIND_SEARCH) t->sum->trials_run++;
    else if (rc.kind == GT_KIND_RETIME) t->sum->retimed++;
    t->sum->trials_failed += gt_status_failed(r.status);
    return 0;
}

/* ---- a round over every GPU ---- */

enum { MAX_FAM = 64 };

typedef struct {
    gt_sweep *t;
    gt_shape_ctx *sc;
    const int *order;
    int n, next, stop, done, failed;
    gt_round rc;
    double best_ms[GT_MATH_COUNT], static_cut, t_start; /* the round's best per math class: each class keeps its
                                                           own winner, so only its own candidates set its cutoffs */
    /* family ceilings: probes screened and their best, per family index */
    int probes_left[MAX_FAM];
    double fam_best[MAX_FAM];
    int cut[MAX_FAM];
} round_q;

static int fam_slot(const gt_family *f)
{
    for (int i = 0; i < gt_family_count() && i < MAX_FAM; ++i)
        if (gt_family_at(i) == f) return i;
    return 0;
}

/* The round's best of family f's math class so far (0 before one). */
static double class_best(const round_q *q, const gt_family *f) { return q->best_ms[f->math]; }

static double cutoff(const round_q *q, const gt_family *f)
{
    const gt_tune_opts *o = q->t->o;
    const double best = class_best(q, f);
    double c = q->static_cut;
    if (o->prune_best > 0 && best > 0 && (c <= 0 || o->prune_best * best < c)) c = o->prune_best * best;
    return c;
}

static void progress(round_q *q, const gt_item *it)
{
    const gt_tune_opts *o = q->t->o;
    q->done++;
    q->failed += gt_status_failed(it->status);
    double shown = 0;
    gt_note_class_best(q->best_ms, it, it->median_ms);
    if (!o->on_trial) return;
    for (int m = 0; m < GT_MATH_COUNT; ++m)
        if (q->best_ms[m] > 0 && (shown <= 0 || q->best_ms[m] < shown)) shown = q->best_ms[m];
    double el = gt_now_s() - q->t_start;
    gt_trial_event e = {.shape = &q->sc->s, .family = it->f->name, .status = it->status, .done = q->done,
                        .total = q->n, .failed = q->failed, .best_ms = q->rc.screen ? -1 : shown,
                        .cublas_ms = q->sc->cublas_ms, .eta_s = q->done ? el / q->done * (q->n - q->done) : 0};
    o->on_trial(&e, o->ctx);
}

/* A cut family's candidates still to come in this round need no compile. */
static void unwant_family(round_q *q, const gt_family *f)
{
    int *jobs = malloc(((size_t)(q->n - q->next) + 1) * sizeof *jobs), n = 0;
    for (int i = q->next; jobs && i < q->n; ++i) {
        const gt_item *it = &q->sc->items[q->order[i]];
        if (it->f == f && !it->probe) jobs[n++] = it->job;
    }
    if (jobs) gt_pool_unwant(q->t->pool, jobs, n);
    free(jobs);
}

/* A screen has probed every probe of this item's family: is the family's best out of reach? */
static void judge_family(round_q *q, const gt_item *it)
{
    const int f = fam_slot(it->f);
    if (!it->probe || !q->rc.screen || q->t->o->family_ceiling <= 0) return;
    if (gt_status_timed(it->status) || it->status == GT_ST_PRUNED)
        if (it->median_ms > 0 && (q->fam_best[f] <= 0 || it->median_ms < q->fam_best[f])) q->fam_best[f] = it->median_ms;
    const double best = class_best(q, it->f);
    if (--q->probes_left[f] == 0 && best > 0 && q->fam_best[f] > q->t->o->family_ceiling * best) {
        q->cut[f] = 1;
        unwant_family(q, it->f);
    }
}

void gt_skip_item(gt_sweep *t, int g, const gt_shape_ctx *sc, gt_item *it, gt_round rc, const char *why)
{
    gt_trial_result r = {.status = GT_ST_PRUNED, .median_ms = -1, .min_ms = -1, .max_ms = -1, .rel_err = -1};
    snprintf(r.message, sizeof r.message, "%s", why);
    store(t, sc, g, it, NULL, &r, rc);
    it->have = 1;
    it->status = GT_ST_PRUNED;
    it->median_ms = -1;
}

/* The family was cut: stored as pruned without running. */
static void skip_cut(round_q *q, int g, gt_item *it)
{
    char why[256];
    snprintf(why, sizeof why, "family ceiling: the best of its probes took %.4g ms, over %.3g x the best of its math "
             "class so far (%.4g ms)", q->fam_best[fam_slot(it->f)], q->t->o->family_ceiling, class_best(q, it->f));
    gt_skip_item(q->t, g, q->sc, it, q->rc, why);
    q->t->sum->trials_run++;
}

static void *gpu_loop(void *arg)
{
    round_q *q = ((void **)arg)[0];
    const int g = (int)(long)((void **)arg)[1];
    gt_sweep *t = q->t;
    pthread_mutex_lock(&t->mu);
    while (!q->stop && q->next < q->n) {
        if (gt_sweep_stopped(t)) {
            q->stop = 1;
            break;
        }
        gt_item *it = &q->sc->items[q->order[q->next++]];
        if (!it->probe && q->cut[fam_slot(it->f)]) skip_cut(q, g, it);
        else if (gt_run_item(t, g, q->sc, it, q->rc, cutoff(q, it->f))) q->stop = -1;
        else judge_family(q, it);
        if (q->stop >= 0) progress(q, it);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

int gt_run_round(gt_sweep *t, gt_shape_ctx *sc, const int *order, int n, gt_round rc)
{
    round_q q = {.t = t, .sc = sc, .order = order, .n = n, .rc = rc, .t_start = gt_now_s()};
    const double scale = rc.screen ? (double)sc->proxy.k / sc->s.k : 1.0;
    q.static_cut = t->o->prune_ratio > 0 ? t->o->prune_ratio * sc->cublas_ms * scale : 0;
    int *jobs = malloc(((size_t)n + 1) * sizeof *jobs);
    for (int i = 0; jobs && i < n; ++i) {
        const gt_item *it = &sc->items[order[i]];
        jobs[i] = it->job;
        if (it->probe) q.probes_left[fam_slot(it->f)]++;
    }
    if (jobs) gt_pool_want(t->pool, jobs, n);
    free(jobs);
    const int ng = t->o->ngpus < 64 ? t->o->ngpus : 64;
    pthread_t th[64];
    void *args[64][2];
    for (int g = 0; g < ng; ++g) {
        args[g][0] = &q, args[g][1] = (void *)(long)g;
        if (g > 0 && pthread_create(&th[g], NULL, gpu_loop, args[g])) th[g] = 0;
    }
    gpu_loop(args[0]);
    for (int g = 1; g < ng; ++g)
        if (th[g]) pthread_join(th[g], NULL);
    return q.stop < 0 ? -1 : 0;
}

/* ---- strategies ---- */

static int cmp_median(const void *a, const void *b, void *ctx)
{
    const gt_item *v = ctx;
    double x = v[*(const int *)a].median_ms, y = v[*(const int *)b].median_ms;
    return x < y ? -1 : x > y;
}

int gt_ranked(const gt_item *items, int n, int want, int *order)
{
    int k = 0;
    for (int i = 0; i < n; ++i)
        if (items[i].have && items[i].median_ms > 0 &&
            (want >= 0 ? items[i].status == (gt_status)want : gt_status_timed(items[i].status)))
            order[k++] = i;
    qsort_r(order, (size_t)k, sizeof *order, cmp_median, (void *)items);
    return k;
}

void gt_note_class_best(double best[GT_MATH_COUNT], const gt_item *it, double ms)
{
    double *b = &best[it->f->math];
    if (it->have && gt_status_timed(it->status) && ms > 0 && (*b <= 0 || ms < *b)) *b = ms;
}

static int pending(const gt_item *items, int n, int *order)
{
    int k = 0;
    for (int i = 0; i < n; ++i)
        if (!items[i].have) order[k++] = i;
    return k;
}

/* The survivors of a halving step, into alive fastest first: of each math class's live items (timed, not pruned),
 * its fastest 1 / eta, but never fewer than floor (all where it has fewer), since each class keeps its own winner:
 * a class far slower than another still sends its best to the validation. *last: every class is down to its floor
 * (the last step). Returns their count. */
static int survivors(gt_item *items, int *alive, int na, int eta, int floor, int *last)
{
    int live = 0, count[GT_MATH_COUNT] = {0}, keep[GT_MATH_COUNT], taken[GT_MATH_COUNT] = {0};
    for (int i = 0; i < na; ++i)
        if (items[alive[i]].have && items[alive[i]].median_ms > 0 && gt_status_timed(items[alive[i]].status))
            count[items[alive[i]].f->math]++, alive[live++] = alive[i];
    qsort_r(alive, (size_t)live, sizeof *alive, cmp_median, items);
    *last = 1;
    for (int m = 0; m < GT_MATH_COUNT; ++m) {
        keep[m] = count[m] / eta > floor ? count[m] / eta : count[m] < floor ? count[m] : floor;
        if (keep[m] > floor) *last = 0;
    }
    int k = 0;
    for (int i = 0; i < live; ++i) {
        const int m = items[alive[i]].f->math;
        if (taken[m] < keep[m]) taken[m]++, alive[k++] = alive[i];
    }
    return k;
}

/* Runs of a first screen, the median kept. One run's spread (2-4% at 1024^3) let a lane's best move by the 0.5% that
 * keeps it screening more often than it improved: make run's sweep compiled 300-330 kernels, 284-292 with three
 * runs, whose GPU time is a tenth of a second (docs/BENCHMARKS.md, 2026-11-27, twelfth session). */
enum { SCREEN_REPS = 3 }; /* at most --reps */

/* Successive halving: screen every candidate on the proxy with SCREEN_REPS runs (not validated; with a model stop,
 * the ones the cost model leads to: tuner/guide.c), keep the fastest eighth
 * and screen it again with twice the runs, then quarters, until at most 4 * topk remain; validate and time those
 * at full size; each math class so, apart (survivors()). Only validated candidates can win. */
static int halving(gt_sweep *t, gt_shape_ctx *sc, int *order)
{
    const gt_tune_opts *o = t->o;
    int reps = SCREEN_REPS < o->reps ? SCREEN_REPS : o->reps, eta = 8, rc = -1, k = pending(sc->items, sc->n, order);
    int *alive = malloc(((size_t)sc->n + 1) * sizeof *alive);
    const gt_round first = {0, 1, reps, 1, GT_KIND_SEARCH};
    /* a space the compile pool gets through in a few rounds anyway is screened whole: guiding it would only wait */
    const int guide = o->model_stop > 0 && k > 4 * (o->jobs > 0 ? o->jobs : 1);
    if (!alive || (guide ? gt_guided_screen(t, sc, first) : gt_run_round(t, sc, order, k, first))) goto out;
    int na = gt_ranked(sc->items, sc->n, -1, alive);
    for (;;) {
        int last;
        na = survivors(sc->items, alive, na, eta, 4 * o->topk, &last);
        eta = 4;
        int m = 0; /* validated survivors already have their proper timing */
        for (int i = 0; i < na; ++i)
            if (sc->items[alive[i]].status != GT_ST_OK) order[m++] = alive[i];
        for (int i = 0; i < m; ++i) sc->items[order[i]].have = 0;
        if (last || gt_sweep_stopped(t)) {
            rc = gt_run_round(t, sc, order, m, (gt_round){1, o->warmup, o->reps, 0, GT_KIND_SEARCH});
            break;
        }
        reps = reps * 2 < o->reps ? reps * 2 : o->reps;
        if (gt_run_round(t, sc, order, m, (gt_round){0, 1, reps, 1, GT_KIND_SEARCH})) break;
    }
out:
    free(alive);
    return rc;
}

int gt_search(gt_sweep *t, gt_shape_ctx *sc)
{
    int *order = malloc(((size_t)sc->n + 1) * sizeof *order), rc;
    if (!order) return snprintf(t->err, t->errlen, "out of memory"), -1;
    if (t->o->strategy == GT_STRATEGY_HALVING) rc = halving(t, sc, order);
    else rc = gt_run_round(t, sc, order, pending(sc->items, sc->n, order), (gt_round){1, t->o->warmup, t->o->reps, 0, GT_KIND_SEARCH});
    free(order);
    return rc;
}
