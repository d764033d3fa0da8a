/* The sweep (see tune.h): start the GPUs and the compile pool, then per shape and layout: the cuBLAS baseline, the
 * candidates (plan.c), the search (search.c), the winner re-timed at full size, and cross-timing against the tuned
 * neighbours; every trial is committed as it completes. */
#include "backend.h"
#include "sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { CROSS_MAX = 8 }; /* neighbours cross-timed per shape, nearest first */

void gt_tune_defaults(gt_tune_opts *o)
{
    o->layouts[0] = 0;
    o->nlayouts = o->nlayouts ? o->nlayouts : 1;
    o->warmup = 2;
    o->reps = 10;
    o->topk = 5;
    o->final_reps = 30;
    o->seed = 1;
    o->strategy = GT_STRATEGY_HALVING;
    o->shard_n = 1;
    o->timeout_floor_s = 20;
    o->prune_ratio = 20;
    o->prune_best = 4;
    o->family_ceiling = 3;
    o->model_stop = 1.1;
    o->screen_ms = 1;
    o->cross = 1;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    o->jobs = n > 0 ? (int)n : 1;
}

gt_shape gt_tune_proxy(const gt_shape *s, double cublas_ms, double screen_ms)
{
    gt_shape p = *s;
    if (screen_ms <= 0 || cublas_ms <= screen_ms) return p;
    long k = (long)ceil(s->k * screen_ms / cublas_ms / 256.0) * 256;
    if (k < 256) k = 256;
    if (k < s->k) p.k = (int)k;
    return p;
}

void gt_tune_summary_free(gt_tune_summary *s)
{
    free(s->shapes);
    s->shapes = NULL;
    s->nshapes = 0;
}

/* ---- the winner ---- */

/* The reference among items idx[0..k): the vendor's own choice, the OK candidate of the vendor's family listed
 * first (lowest seq: its backend lists its own choice first), or the first listed of those present. -1 when none
 * (another library family, ozaki, is ours: no reference). */
static int reference(const gt_item *items, const int *idx, int k)
{
    int ref = -1;
    for (int i = 0; i < k; ++i) {
        const gt_item *it = &items[idx[i]];
        if (it->status == GT_ST_OK && it->f->vendor && (ref < 0 || it->seq < items[ref].seq)) ref = idx[i];
    }
    return ref;
}

/* 1 when every OK item among idx[0..k) has a paired re-timing's rel, which then ranks them (gt_pick_winner). */
static int all_rel(const gt_item *items, const int *idx, int k)
{
    for (int i = 0; i < k; ++i)
        if (items[idx[i]].status == GT_ST_OK && !(items[idx[i]].rel > 0)) return 0;
    return 1;
}

static double rank_key(const gt_item *it, int rel) { return rel ? it->rel : it->median_ms; }

int gt_pick_winner(const gt_item *items, const int *idx, int k)
{
    const int rel = all_rel(items, idx, k);
    int best = -1;
    for (int i = 0; i < k; ++i)
        if (items[idx[i]].status == GT_ST_OK &&
            (best < 0 || rank_key(&items[idx[i]], rel) < rank_key(&items[best], rel)))
            best = idx[i];
    const int ref = reference(items, idx, k);
    if (best >= 0 && ref >= 0 && best != ref &&
        rank_key(&items[best], rel) * (1.0 + GT_OWN_MARGIN) >= rank_key(&items[ref], rel))
        return ref;
    return best;
}

/* The topk ranked items of class m into order (fastest first), then the library's own choice (reference()) where
 * it is not among them, so the winner is always weighed against it in the same re-timing. Returns the count. */
static int retime_set(const gt_shape_ctx *sc, gt_math m, int topk, int *order)
{
    const int n = gt_ranked(sc->items, sc->n, GT_ST_OK, order);
    int k = 0;
    for (int i = 0; i < n; ++i)
        if (sc->items[order[i]].f->math == m) order[k++] = order[i];
    const int ref = reference(sc->items, order, k);
    if (k > topk) k = topk;
    for (int i = 0; i < k; ++i)
        if (order[i] == ref) return k;
    if (k > 0 && ref >= 0) order[k++] = ref; /* --top-k 0: nothing is re-timed */
    return k;
}

/* One pass of the re-timing over order[0..k), reversed with rev: each item still OK timed with reps runs, each
 * followed by one of cuBLAS (paired, as a program and gemmtune bench interleave them: timed back to back, some
 * kernels run a few percent faster than they do there); ms[i] its median and rel[i] that over cuBLAS's (0 where
 * the runner gave none), ms[i] -1 when it failed, now or in an earlier pass (it stays failed). Returns how many it
 * went through before the sweep was stopped (k: all), or -1 with t->err. Call with t->mu held. */
static int retime_pass(gt_sweep *t, gt_shape_ctx *sc, const int *order, int k, int rev, int reps, double *ms,
                       double *rel)
{
    for (int j = 0; j < k; ++j) {
        const int i = rev ? k - 1 - j : j;
        gt_item *it = &sc->items[order[i]];
        if (gt_sweep_stopped(t)) return j;
        ms[i] = -1, rel[i] = 0;
        if (it->status != GT_ST_OK) continue;
        if (gt_run_item(t, 0, sc, it, (gt_round){0, 2, reps, 0, GT_KIND_RETIME, 1}, 0)) return -1;
        if (it->status != GT_ST_OK) continue;
        ms[i] = it->median_ms;
        rel[i] = it->ref_ms > 0 ? it->median_ms / it->ref_ms : 0;
    }
    return k;
}

/* Re-time items order[0..k) at full size on a cold L2 in two passes of half the final runs each, the second in the
 * reverse order, and give each the mean of its two medians and of its two times over cuBLAS's (rel): a GPU that
 * slows as it heats over seconds of back-to-back runs (8192^3: 21 ms a run, 5 candidates x 30 runs, and cuBLAS's
 * between) then weighs on every item alike, where one pass would favour the first timed over the last (the
 * library's own choice, appended last). An item that fails in either pass is out; a sweep stopped in the second
 * pass keeps every item's first median. Returns how many items have a time (all k unless stopped in the first
 * pass), or -1 with t->err. Call with t->mu held. */
static int retime(gt_sweep *t, gt_shape_ctx *sc, const int *order, int k)
{
    double *ms = malloc(4 * ((size_t)k + 1) * sizeof *ms), *second = ms + k + 1, *rel = second + k + 1,
           *rel2 = rel + k + 1;
    const int reps = (t->o->final_reps + 1) / 2;
    if (!ms) return snprintf(t->err, t->errlen, "out of memory"), -1;
    int done = retime_pass(t, sc, order, k, 0, reps, ms, rel);
    const int counted = t->sum->retimed; /* an item re-timed counts once */
    const int again = done == k ? retime_pass(t, sc, order, k, 1, reps, second, rel2) : 0;
    t->sum->retimed = counted;
    if (done < 0 || again < 0) return free(ms), -1;
    for (int i = 0; i < done; ++i) {
        gt_item *it = &sc->items[order[i]];
        if (it->status != GT_ST_OK) continue;
        const int both = again == k;
        it->median_ms = both ? 0.5 * (ms[i] + second[i]) : ms[i];
        it->rel = both ? (rel[i] > 0 && rel2[i] > 0 ? 0.5 * (rel[i] + rel2[i]) : 0) : rel[i];
    }
    free(ms);
    return done;
}

/* Re-time the topk validated candidates of math class m (and the library's own choice) with final_reps (retime())
 * and store gt_pick_winner's choice as that class's winner: each class keeps its own, so a class a caller must ask
 * for never displaces the FP32 winner. res reports the first class that has one (FP32 before the others) and lists
 * the others' in also. */
static int finalize_class(gt_sweep *t, gt_shape_ctx *sc, gt_math m, gt_shape_result *res)
{
    int *order = malloc(((size_t)sc->n + 1) * sizeof *order);
    char err[512];
    if (!order) return snprintf(t->err, t->errlen, "out of memory"), -1;
    const int k = retime_set(sc, m, t->o->topk, order);
    pthread_mutex_lock(&t->mu);
    const int done = retime(t, sc, order, k);
    pthread_mutex_unlock(&t->mu);
    if (done < 0) return free(order), -1;
    const int best = gt_pick_winner(sc->items, order, done);
    free(order);
    if (best < 0) return 0;
    const gt_item *w = &sc->items[best];
    const double best_med = w->median_ms, spread = w->spread_pct;
    if (gt_db_set_winner(t->db, t->sweeps[0], &sc->s, w->f->name, w->params, w->hash, best_med, spread, err, sizeof err))
        fprintf(stderr, "gemmtune: storing the winner failed: %s\n", err);
    if (res->family[0]) {
        gt_class_result *c = &res->also[res->nalso++];
        c->math = m, c->median_ms = best_med;
        snprintf(c->family, sizeof c->family, "%s", w->f->name);
        snprintf(c->params, sizeof c->params, "%s", w->params);
        return 0;
    }
    snprintf(res->family, sizeof res->family, "%s", w->f->name);
    snprintf(res->params, sizeof res->params, "%s", w->params);
    res->median_ms = best_med;
    res->spread_pct = spread;
    return 0;
}

static int finalize(gt_sweep *t, gt_shape_ctx *sc, gt_shape_result *res)
{
    for (int m = 0; m < GT_MATH_COUNT; ++m)
        if (finalize_class(t, sc, (gt_math)m, res)) return -1;
    return 0;
}

/* ---- cross-timing: the data of the loader's serving model ---- */

typedef struct {
    const gt_sweep *t;
    const gt_shape *self;
    gt_winner v[CROSS_MAX];
    double d[CROSS_MAX];
    int n;
} near_ctx;

static double distance(const gt_shape *a, const gt_shape *b)
{
    return fabs(log2((double)a->m / b->m)) + fabs(log2((double)a->n / b->n)) + fabs(log2((double)a->k / b->k));
}

/* Keep the CROSS_MAX nearest other shapes of this GPU model and layout, nearest first. */
static int keep_near(const gt_winner *w, void *vctx)
{
    near_ctx *c = vctx;
    gt_gpu_model mine = gt_gpu_info_model(&c->t->info), theirs = gt_winner_model(w);
    const gt_shape *s = &w->shape;
    if (!gt_gpu_model_equal(&mine, &theirs) || (s->m == c->self->m && s->n == c->self->n && s->k == c->self->k))
        return 0;
    double d = distance(s, c->self);
    int i = c->n < CROSS_MAX ? c->n++ : CROSS_MAX;
    while (i > 0 && c->d[i - 1] > d) {
        if (i < CROSS_MAX) c->v[i] = c->v[i - 1], c->d[i] = c->d[i - 1];
        --i;
    }
    if (i < CROSS_MAX) c->v[i] = *w, c->d[i] = d;
    return 0;
}

/* Time kernel family/params on shape sc (one validated trial) unless an ok trial of it is stored. 1 when run. */
static int cross_one(gt_sweep *t, gt_shape_ctx *sc, const char *family, const char *params)
{
    char err[256];
    gt_status status;
    const gt_family *f = gt_family_find(family);
    gt_params p;
    gt_item it;
    gt_call call = gt_call_tight(&sc->s);
    /* the kernel the loader would serve here: as stored, or its variant for the call (gt_family_params_for_call) */
    if (!f || gt_params_parse(f, params, &p, err, sizeof err) || !f->legal(&p, &t->lim, err, sizeof err) ||
        !gt_family_params_for_call(f, &p, &call, &t->lim, &p) || gt_plan_item(t, f, &p, &sc->s, &it))
        return 0;
    int found = 0;
    double ms;
    if (gt_db_find_trial(t->db, &t->info, &sc->s, f->name, it.params, it.hash, &found, &status, &ms, err, sizeof err) ||
        (found && status == GT_ST_OK))
        return 0;
    pthread_mutex_lock(&t->mu);
    int rc = gt_run_item(t, 0, sc, &it, (gt_round){1, t->o->warmup, t->o->reps, 0, GT_KIND_CROSS}, 0);
    pthread_mutex_unlock(&t->mu);
    return rc ? -1 : 1;
}

static int cross_time(gt_sweep *t, gt_shape_ctx *sc, gt_shape_result *res)
{
    char err[512];
    near_ctx c = {.t = t, .self = &sc->s};
    gt_winner_filter fl = {.layout = gt_layout_name(sc->s.ta, sc->s.tb)};
    if (!t->o->cross || !res->family[0] || gt_db_winners(t->db, &fl, keep_near, &c, err, sizeof err)) return 0;
    for (int i = 0; i < c.n && !gt_sweep_stopped(t); ++i) {
        gt_shape_ctx there = {.s = c.v[i].shape, .proxy = c.v[i].shape, .cublas_ms = c.v[i].cublas_ms};
        int a = cross_one(t, sc, c.v[i].family, c.v[i].params); /* the neighbour's winner here */
        int b = there.cublas_ms > 0 ? cross_one(t, &there, res->family, res->params) : 0; /* ours there */
        if (a < 0 || b < 0) return -1;
        res->cross += a + b;
    }
    t->sum->cross_trials += res->cross;
    return 0;
}

/* ---- one shape in one layout ---- */

static void tally(const gt_shape_ctx *sc, gt_shape_result *res)
{
    for (int i = 0; i < sc->n; ++i)
        if (sc->items[i].have) {
            res->trials++;
            res->failed += gt_status_failed(sc->items[i].status);
        }
}

static int record(gt_sweep *t, const gt_shape_result *res)
{
    gt_tune_summary *sum = t->sum;
    gt_shape_result *grown = realloc(sum->shapes, ((size_t)sum->nshapes + 1) * sizeof *grown);
    if (!grown) return snprintf(t->err, t->errlen, "out of memory"), -1;
    sum->shapes = grown;
    sum->shapes[sum->nshapes++] = *res;
    if (t->o->on_shape) t->o->on_shape(res, t->o->ctx);
    return 0;
}

/* The reference time is cuBLAS's best showing: the baseline timed again after the search, and cuBLAS's own choice
 * as the vendor family ran it at full size, when faster (a first baseline has been seen 1.7x slow). */
static int settle_baseline(gt_sweep *t, const gt_shape_ctx *sc, gt_shape_result *res)
{
    char err[512];
    double again = -1;
    if (t->run->baseline(t->gpu[0], &sc->s, 3, 20, &again, err, sizeof err))
        return snprintf(t->err, t->errlen, "%s", err), -1;
    double best = again > 0 && again < res->cublas_ms ? again : res->cublas_ms;
    const gt_family *df;
    gt_params dp;
    gt_backend_default_params(&df, &dp);
    for (int i = 0; i < sc->n; ++i) {
        const gt_item *it = &sc->items[i];
        if (it->f == df && !memcmp(&it->p, &dp, sizeof dp) && it->status == GT_ST_OK && it->median_ms > 0 &&
            it->median_ms < best)
            best = it->median_ms;
    }
    if (best < res->cublas_ms && gt_db_set_baseline(t->db, t->sweeps[0], &sc->s, best, err, sizeof err))
        return snprintf(t->err, t->errlen, "%s", err), -1;
    res->cublas_ms = best;
    return 0;
}

static int tune_shape(gt_sweep *t, const gt_shape *s)
{
    gt_shape_result res = {.shape = *s, .wall_s = gt_now_s(), .gpu_s = t->gpu_seconds};
    gt_shape_ctx sc = {.s = *s};
    char err[512];
    if (t->run->baseline(t->gpu[0], s, 3, 20, &res.cublas_ms, err, sizeof err) ||
        gt_db_set_baseline(t->db, t->sweeps[0], s, res.cublas_ms, err, sizeof err))
        return snprintf(t->err, t->errlen, "%s", err), -1;
    sc.cublas_ms = res.cublas_ms;
    sc.proxy = gt_tune_proxy(s, res.cublas_ms, t->o->screen_ms);
    const int skipped0 = t->sum->trials_skipped;
    if (gt_plan_shape(t, &sc)) return -1;
    res.skipped = t->sum->trials_skipped - skipped0;
    int rc = gt_search(t, &sc);
    if (rc == 0 && !gt_sweep_stopped(t)) rc = finalize(t, &sc, &res);
    if (rc == 0 && !gt_sweep_stopped(t)) rc = settle_baseline(t, &sc, &res);
    tally(&sc, &res);
    free(sc.items);
    if (rc == 0 && !gt_sweep_stopped(t)) rc = cross_time(t, &sc, &res);
    res.wall_s = gt_now_s() - res.wall_s;
    res.gpu_s = t->gpu_seconds - res.gpu_s;
    return rc == 0 && !gt_sweep_stopped(t) ? record(t, &res) : rc;
}

/* ---- setup and teardown ---- */

static int start_gpus(gt_sweep *t)
{
    const gt_tune_opts *o = t->o;
    t->gpu = calloc((size_t)o->ngpus, sizeof *t->gpu);
    t->sweeps = calloc((size_t)o->ngpus, sizeof *t->sweeps);
    if (!t->gpu || !t->sweeps) return snprintf(t->err, t->errlen, "out of memory"), -1;
    for (int g = 0; g < o->ngpus; ++g) {
        gt_gpu_info gi;
        if (t->run->start(o->gpus[g], &t->gpu[g], t->err, t->errlen)) return -1;
        t->run->info(t->gpu[g], &gi, g ? NULL : &t->lim);
        gt_gpu_model a = gt_gpu_info_model(&gi), b = gt_gpu_info_model(&t->info);
        if (g == 0) t->info = gi;
        else if (!gt_gpu_model_equal(&a, &b))
            return snprintf(t->err, t->errlen, "GPU %d is a %s but GPU %d is a %s: one sweep tunes one GPU model",
                             o->gpus[g], gi.name, o->gpus[0], t->info.name), -1;
    }
    snprintf(t->arch, sizeof t->arch, "sm_%d%d", t->info.cc_major, t->info.cc_minor);
    return 0;
}

/* After the GPUs answered, so a machine without one gets no database file. */
static int begin_sweeps(gt_sweep *t)
{
    if (gt_db_open(t->o->db_path, 1, &t->db, t->err, t->errlen)) return -1;
    for (int g = 0; g < t->o->ngpus; ++g) {
        gt_gpu_info gi;
        t->run->info(t->gpu[g], &gi, NULL);
        if (gt_db_begin_sweep(t->db, &gi, t->o->command, &t->sweeps[g], t->err, t->errlen)) return -1;
    }
    t->pool = gt_pool_new(t->db, t->arch, t->o->compile, t->o->jobs);
    return t->pool ? 0 : (snprintf(t->err, t->errlen, "out of memory"), -1);
}

static void teardown(gt_sweep *t)
{
    if (t->pool && t->db) gt_pool_store_compiled(t->pool);
    gt_pool_free(t->pool, &t->sum->compiled);
    for (int g = 0; t->gpu && g < t->o->ngpus; ++g)
        if (t->gpu[g]) {
            t->sum->restarts += t->run->restarts(t->gpu[g]);
            t->run->stop(t->gpu[g]);
        }
    free(t->gpu);
    free(t->sweeps);
    gt_db_close(t->db);
    pthread_mutex_destroy(&t->mu);
}

int gt_sweep_shape(const gt_tune_opts *o, int i, gt_shape *s)
{
    const int per = o->shape_layouts ? 1 : (o->nlayouts ? o->nlayouts : 1);
    if (i >= o->nshapes * per) return 0;
    *s = o->shapes[i / per];
    if (!o->shape_layouts) s->ta = o->layouts[i % per] >> 1, s->tb = o->layouts[i % per] & 1;
    return 1;
}

int gt_tune_run(const gt_tune_opts *o, gt_tune_summary *sum, char *err, size_t errlen)
{
    gt_sweep t = {.o = o, .run = o->runner ? o->runner : &gt_worker_runner, .sum = sum, .err = err, .errlen = errlen,
                  .t0 = gt_now_s()};
    int rc = -1;
    gt_shape s;
    memset(sum, 0, sizeof *sum);
    pthread_mutex_init(&t.mu, NULL);
    if (start_gpus(&t) || (o->on_gpu && o->on_gpu(&t.info, o->ctx, err, errlen)) || begin_sweeps(&t)) goto out;
    rc = 0;
    for (int i = 0; rc == 0 && !gt_sweep_stopped(&t) && gt_sweep_shape(o, i, &s); ++i) rc = tune_shape(&t, &s);
    sum->interrupted = o->interrupt && *o->interrupt;
    if (rc == 0 && sum->interrupted) rc = 130;
out:
    sum->gpu_seconds = t.gpu_seconds;
    sum->wait_seconds = t.wait_seconds;
    teardown(&t);
    sum->wall_seconds = gt_now_s() - t.t0;
    return rc;
}

/* ---- worker processes as the sweep's runner ---- */

static int w_start(int device, void **self, char *err, size_t errlen)
{
    return gt_worker_start(device, (gt_worker **)self, err, errlen);
}
static void w_stop(void *self) { gt_worker_stop(self); }
static void w_info(void *self, gt_gpu_info *gpu, gt_limits *lim) { gt_worker_info(self, gpu, lim); }
static int w_baseline(void *self, const gt_shape *s, int warmup, int reps, double *ms, char *err, size_t errlen)
{
    return gt_worker_baseline(self, s, warmup, reps, ms, err, errlen);
}
static int w_candidates(void *self, const gt_family *f, const gt_shape *s, gt_params *out, int *n, char *err,
                        size_t errlen)
{
    return gt_worker_candidates(self, f, s, out, n, err, errlen);
}
static int w_trial(void *self, const gt_trial_request *req, gt_trial_result *out, char *err, size_t errlen)
{
    return gt_worker_trial(self, req, out, err, errlen);
}
static int w_restarts(void *self) { return gt_worker_restarts(self); }

const gt_runner gt_worker_runner = {w_start, w_stop, w_info, w_baseline, w_candidates, w_trial, w_restarts};
