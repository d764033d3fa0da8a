/* The halving strategy's first screen, led by the cost model (see sweep.h, gt_guided_screen): a sweep compiles the
 * candidates that can win, not every candidate. Each family is a lane of its modelled candidates in screening
 * order. The compile pool works on every running lane's next candidates at once, and the GPU screens whatever of
 * them has compiled, a round at a time, never waiting for one compile while others are done. Tested by
 * tests/test_tune.c (tune_model_*, tune_pool_wait_any_*). */
#include "model.h"
#include "sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Chosen on an H100's recorded screens of twenty shapes (tests/perf/replay.c, docs/BENCHMARKS.md): the fewest
 * compiles that still chose every shape's winner as screening every candidate did, with the screens' noise. */
enum {
    WAVE = 4,     /* compiled candidates a lane screens per round (at most; more when few lanes run: waves()) */
    AHEAD = 4,    /* and compiles at least this many ahead meanwhile (two rounds' share), once its first screens
                     have kept it going */
    PATIENCE = 24, /* screens without a 0.5% gain before a lane stops */
    MIN_SCREENS = 12, /* screens before the model may stop a lane that is within 1.3x of the best */
    NEAR = 2,     /* a neighbour differs from the family's best in at most this many params */
    REFINE = 4,   /* rounds of neighbours at most */
    JUDGES = 2,   /* a lane's first items, screened before the model may stop it (second_opinion()) */
};
#define CONTENDER 1.25 /* a lane's second judge is predicted within this of its first */
#define NEIGHBOURS_NEAR 1.02 /* a family's best searches its neighbours when within this of its class's best (or
                                 --model-stop, where smaller) */

typedef struct {
    const gt_family *f;
    int *idx, n;      /* the family's modelled items in screening order */
    double calib;     /* smallest measured over predicted time of its screens; 0 before one */
    int best;         /* its fastest screened item, -1 before one */
    int stopped;
    int stale;        /* screens since its best last improved by 0.5% */
    int counted;      /* its screens when the last round was planned */
    int screened;     /* its items with a time */
} lane;

typedef struct {
    gt_sweep *t;
    gt_shape_ctx *sc;
    gt_round rc;
    lane *lanes;
    int nlanes;
    int *batch, nb;
    int *ahead, na;
    double best_ms[GT_MATH_COUNT]; /* the best screen so far of each math class: a class keeps its own winner, so
                                      its families race each other, never another class's */
} guide;

/* ---- the order of a lane ---- */

typedef struct {
    int item, rank;
    double pred;
} slot;

static int by_pred(const void *a, const void *b)
{
    const slot *x = a, *y = b;
    return x->pred < y->pred ? -1 : x->pred > y->pred ? 1 : x->item - y->item;
}

static int by_rank(const void *a, const void *b)
{
    const slot *x = a, *y = b;
    return x->rank != y->rank ? x->rank - y->rank : by_pred(a, b);
}

/* Predicted order, spread over the candidates the model cannot tell apart: among predictions within 2% of each other
 * (params it does not see: pipeline depth, rasterization, ...) the first of each such group comes before any second,
 * so early screens span the tiles and the neighbour search settles the rest. */
static void order_lane(const gt_item *items, int *idx, int n)
{
    slot *s = malloc(((size_t)n + 1) * sizeof *s);
    if (!s) return; /* enumeration order then: slower, still complete */
    for (int i = 0; i < n; ++i) s[i] = (slot){idx[i], 0, items[idx[i]].pred};
    qsort(s, (size_t)n, sizeof *s, by_pred);
    for (int i = 0, start = 0; i < n; ++i) {
        if (floor(log(s[i].pred) / log(1.02)) != floor(log(s[start].pred) / log(1.02))) start = i;
        s[i].rank = i - start;
    }
    qsort(s, (size_t)n, sizeof *s, by_rank);
    for (int i = 0; i < n; ++i) idx[i] = s[i].item;
    free(s);
}

static int param_distance(const gt_family *f, const gt_params *a, const gt_params *b)
{
    int d = 0;
    for (int i = 0; i < f->nparams; ++i) d += a->v[i] != b->v[i];
    return d;
}

/* The lane's second item becomes the one most unlike its first (the most params apart; the earliest in the lane's
 * order among those), of the items predicted within CONTENDER of the first. A lane is judged on its first two
 * screens (judged()): the calibration is their smaller measured-over-predicted ratio, and a first item the model
 * mispredicts for a reason it cannot see takes every item like it along. skinny's best prediction at 24 x 4096 x
 * 11008 was a thread-block cluster variant (no reduce launch), which ran 1.8 times that: calibrated on it alone, its
 * family stopped after one screen, and a point 1.6 times faster than that screen, within 1% of its prediction, was
 * never compiled (docs/BENCHMARKS.md, 2026-11-29, twenty-eighth session). */
static void second_opinion(const gt_item *items, const gt_family *f, int *idx, int n)
{
    int pick = -1, far = 0;
    if (n < JUDGES) return;
    for (int k = 1; k < n; ++k) {
        const gt_item *it = &items[idx[k]];
        const int d = param_distance(f, &it->p, &items[idx[0]].p);
        if (it->pred <= CONTENDER * items[idx[0]].pred && d > far) pick = k, far = d;
    }
    if (pick < 0) return;
    const int item = idx[pick];
    memmove(idx + 2, idx + 1, (size_t)(pick - 1) * sizeof *idx);
    idx[1] = item;
}

/* One lane per built family with modelled items; items[].pred filled for the screened shape. */
static int make_lanes(guide *g)
{
    gt_shape_ctx *sc = g->sc;
    g->lanes = calloc((size_t)sc->n + 1, sizeof *g->lanes);
    g->batch = malloc(((size_t)sc->n + 1) * sizeof *g->batch);
    g->ahead = malloc(((size_t)sc->n + 1) * sizeof *g->ahead);
    if (!g->lanes || !g->batch || !g->ahead) return -1;
    for (int i = 0; i < sc->n; ++i) {
        gt_item *it = &sc->items[i];
        it->pred = gt_model_time(it->f, &it->p, &sc->proxy, &g->t->lim);
        if (it->pred <= 0) continue;
        int l = 0;
        while (l < g->nlanes && g->lanes[l].f != it->f) ++l;
        if (l == g->nlanes) {
            g->lanes[g->nlanes++] = (lane){.f = it->f, .best = -1};
            if (!(g->lanes[l].idx = malloc(((size_t)sc->n + 1) * sizeof(int)))) return -1;
        }
        g->lanes[l].idx[g->lanes[l].n++] = i;
    }
    for (int l = 0; l < g->nlanes; ++l) {
        order_lane(sc->items, g->lanes[l].idx, g->lanes[l].n);
        second_opinion(sc->items, g->lanes[l].f, g->lanes[l].idx, g->lanes[l].n);
    }
    return 0;
}

/* ---- what the screens say ---- */

/* The prediction of item i in ms. */
static double predicted_ms(const guide *g, int i) { return g->sc->items[i].pred * 1e3; }

/* The best screen so far of the class of family f (0 before one). */
static double best_of(const guide *g, const gt_family *f) { return g->best_ms[f->math]; }


/* An item's time in the screen's terms: its first screen's, also once validated at full size (validate_early()). */
static double screen_of(const gt_item *it) { return it->screen_ms > 0 ? it->screen_ms : it->median_ms; }

static void absorb(guide *g, lane *ln, int i)
{
    const gt_item *it = &g->sc->items[i];
    if (!it->have || screen_of(it) <= 0) return;
    ln->screened++;
    const double ratio = screen_of(it) / predicted_ms(g, i);
    if (ln->calib <= 0 || ratio < ln->calib) ln->calib = ratio;
    if (!gt_status_timed(it->status)) return;
    if (ln->best < 0 || screen_of(it) < screen_of(&g->sc->items[ln->best])) ln->best = i;
    gt_note_class_best(g->best_ms, it, screen_of(it));
}

/* What every lane's screens say now: its calibration, count and best, and the best of all. */
static void absorb_all(guide *g)
{
    for (int l = 0; l < g->nlanes; ++l) {
        lane *ln = &g->lanes[l];
        ln->calib = 0, ln->screened = 0;
        for (int k = 0; k < ln->n; ++k) absorb(g, ln, ln->idx[k]);
    }
}

/* Whether the lane's first JUDGES items, the one the model predicts fastest and its second opinion
 * (second_opinion()), have screens. Until they have, they are never out of reach and the lane never stops: the
 * calibration is the smallest measured-over-predicted ratio of the lane's screens, and the screens that come first
 * (whose compiles finished first) may be of the candidates the model predicts worst (tf32x3wg's 128 x 16 tiles ran
 * 3.5 times its 128 x 128's at 8192 x 3072 x 768, which then went unscreened, its family stopped, in one workload
 * tune of five). */
static int judged(const guide *g, const lane *ln)
{
    for (int k = 0; k < JUDGES && k < ln->n; ++k)
        if (!g->sc->items[ln->idx[k]].have) return 0;
    return 1;
}

/* Whether item i is one of the lane's judges. */
static int a_judge(const lane *ln, int i)
{
    for (int k = 0; k < JUDGES && k < ln->n; ++k)
        if (ln->idx[k] == i) return 1;
    return 0;
}

/* The calibrated prediction of item i puts it out of reach of the best so far of its class (never a judge before
 * judged()). A lane whose timed screens were all cut as too slow (pruned, so no best of its own) is judged at
 * once. */
static int out_of_reach(const guide *g, const lane *ln, int i)
{
    if (!judged(g, ln) && a_judge(ln, i)) return 0;
    const double best = best_of(g, ln->f);
    if (ln->screened < MIN_SCREENS && ln->best >= 0 && screen_of(&g->sc->items[ln->best]) < 1.3 * best) return 0;
    return ln->calib > 0 && best > 0 && ln->calib * predicted_ms(g, i) > g->t->o->model_stop * best;
}

/* Take back the compiles asked for earlier that have not started (a stopped lane's, the ahead of a lane that now
 * looks elsewhere), so the pool works on the round's. */
static void unwant_unscreened(guide *g)
{
    int *jobs = malloc(((size_t)g->sc->n + 1) * sizeof *jobs), n = 0;
    for (int l = 0; jobs && l < g->nlanes; ++l)
        for (int k = 0; k < g->lanes[l].n; ++k)
            if (!g->sc->items[g->lanes[l].idx[k]].have) jobs[n++] = g->sc->items[g->lanes[l].idx[k]].job;
    if (jobs) gt_pool_unwant(g->t->pool, jobs, n);
    free(jobs);
}

/* The planned round's compiles first, then the ones ahead of it (the others asked for earlier taken back). */
static void want_planned(guide *g)
{
    int *jobs = malloc(((size_t)g->nb + g->na + 1) * sizeof *jobs), n = 0;
    for (int i = 0; jobs && i < g->nb; ++i) jobs[n++] = g->sc->items[g->batch[i]].job;
    for (int i = 0; jobs && i < g->na; ++i) jobs[n++] = g->sc->items[g->ahead[i]].job;
    unwant_unscreened(g);
    if (jobs) gt_pool_want(g->t->pool, jobs, n);
    free(jobs);
    g->na = 0;
}

/* The planned round, its compiles asked for first; the round then waits only for its own. */
static int run_batch(guide *g)
{
    want_planned(g);
    return g->nb ? gt_run_round(g->t, g->sc, g->batch, g->nb, g->rc) : 0;
}

/* ---- the phases ---- */

/* The first `wave` unscreened items of a lane that are within reach, and the next `ahead` to compile meanwhile (a
 * later screen may bring one skipped here back: the calibration only falls). The lane stops when none is. */
static void fill_wave(guide *g, lane *ln, int wave, int ahead)
{
    int *next = g->ahead + g->na, taken = 0, ready = 0; /* the lane's next items, in the free end of ahead[] */
    ahead = ln->calib > 0 ? ahead : 0; /* none before a lane's first screens say it can win */
    for (int k = 0; k < ln->n && taken < wave + ahead && !ln->stopped; ++k) {
        const int i = ln->idx[k];
        if (g->sc->items[i].have || out_of_reach(g, ln, i)) continue;
        next[taken++] = i;
    }
    if (!taken) ln->stopped = 1;
    /* The round takes compiled ones only, so that no round waits on a compile (a straggler is screened by the
     * round that finds it done); the others compile meanwhile, in order. */
    for (int k = 0; k < taken && ready < wave; ++k)
        if (gt_pool_ready(g->t->pool, g->sc->items[next[k]].job)) g->batch[g->nb++] = next[k], next[k] = -1, ready++;
    for (int k = 0; k < taken; ++k) /* ahead[] written at or before where next[] is read */
        if (next[k] >= 0) g->ahead[g->na++] = next[k];
}

/* The next round: lanes PATIENCE screens without a gain stop (once judged()); the others each take a share that,
 * with the compiles ahead, keeps every compile thread busy however few lanes still run. before[] gets each lane's
 * best so far. */
static void plan_round(guide *g, int *before)
{
    int live = 0;
    for (int l = 0; l < g->nlanes; ++l) {
        if (g->lanes[l].stale >= PATIENCE && judged(g, &g->lanes[l])) g->lanes[l].stopped = 1;
        live += !g->lanes[l].stopped;
        g->lanes[l].counted = g->lanes[l].screened;
    }
    const int share = live ? (g->t->o->jobs + live - 1) / live : 0;
    g->nb = 0;
    for (int l = 0; l < g->nlanes; ++l) {
        before[l] = g->lanes[l].best;
        fill_wave(g, &g->lanes[l], share > WAVE ? share : WAVE, 2 * share > AHEAD ? 2 * share : AHEAD);
    }
}

/* The library's candidates (the model has no grid for them): the yardstick every lane is cut against. The first
 * round is planned and its compiles (and the ones ahead of it) asked for before the library's screens, so the pool
 * works while the GPU times the library (a second of each shape of make run, every compile thread idle); the
 * round itself is planned again once they are done. */
static int screen_unmodelled(guide *g)
{
    int before[g->nlanes > 0 ? g->nlanes : 1];
    plan_round(g, before);
    want_planned(g);
    g->nb = 0;
    for (int i = 0; i < g->sc->n; ++i)
        if (!g->sc->items[i].have && g->sc->items[i].pred <= 0) g->batch[g->nb++] = i;
    /* not run_batch, which would take the lanes' compiles back */
    int rc = g->nb ? gt_run_round(g->t, g->sc, g->batch, g->nb, g->rc) : 0;
    for (int i = 0; i < g->sc->n; ++i) {
        const gt_item *it = &g->sc->items[i];
        if (it->pred <= 0) gt_note_class_best(g->best_ms, it, screen_of(it));
    }
    return rc;
}

/* After a round: a lane whose best gained 0.5% starts counting again, the others count the round's screens. */
static void count_gains(guide *g, const int *before)
{
    for (int l = 0; l < g->nlanes; ++l) {
        lane *ln = &g->lanes[l];
        const gt_item *now = ln->best >= 0 ? &g->sc->items[ln->best] : NULL;
        const int gained = now && (before[l] < 0 || screen_of(now) < 0.995 * screen_of(&g->sc->items[before[l]]));
        ln->stale = gained ? 0 : ln->stale + ln->screened - ln->counted;
    }
}

/* Nothing planned has compiled yet: wait until the first of it has (0), or, where no compile thread runs, make
 * the first of it the round, compiled by the round itself (1). */
static int await_compile(guide *g)
{
    int *jobs = malloc(((size_t)g->na + 1) * sizeof *jobs), n = g->na;
    for (int i = 0; jobs && i < n; ++i) jobs[i] = g->sc->items[g->ahead[i]].job;
    const int first = g->ahead[0];
    want_planned(g);
    const int found = jobs ? gt_pool_wait_any(g->t->pool, jobs, n, &g->t->wait_seconds) : -1;
    free(jobs);
    if (found >= 0) return 0;
    g->batch[g->nb++] = first;
    return 1;
}

/* The fastest screened, not yet validated candidate of a math class with fewer than --top-k of its class faster:
 * the one halving would validate at the end anyway; -1 when there is none. */
static int early_pick(const guide *g)
{
    const gt_item *v = g->sc->items;
    for (int m = 0; m < GT_MATH_COUNT; ++m) {
        int best = -1, ahead = 0;
        for (int i = 0; i < g->sc->n; ++i)
            if (v[i].have && v[i].f->math == (gt_math)m && v[i].status == GT_ST_SCREENED && screen_of(&v[i]) > 0 &&
                (best < 0 || screen_of(&v[i]) < screen_of(&v[best])))
                best = i;
        for (int i = 0; best >= 0 && i < g->sc->n; ++i)
            ahead += v[i].have && v[i].f->math == (gt_math)m && gt_status_timed(v[i].status) &&
                     screen_of(&v[i]) > 0 && screen_of(&v[i]) < screen_of(&v[best]);
        if (best >= 0 && ahead < g->t->o->topk) return best;
    }
    return -1;
}

/* Nothing planned has compiled: the GPU validates and times at full size the candidate early_pick() names while
 * the compiles run (1), where there is one; a validated candidate is not screened again (halving()). */
static int validate_early(guide *g)
{
    int i = early_pick(g);
    if (i < 0) return 0;
    want_planned(g);
    const gt_tune_opts *o = g->t->o;
    return gt_run_round(g->t, g->sc, &i, 1, (gt_round){1, o->warmup, o->reps, 0, GT_KIND_SEARCH}) ? -1 : 1;
}

static int waves(guide *g)
{
    int before[g->nlanes > 0 ? g->nlanes : 1];
    for (;;) {
        plan_round(g, before);
        if (!g->nb && g->na) {
            const int early = validate_early(g);
            if (early < 0) return -1;
            if (early || !await_compile(g)) {
                absorb_all(g);
                if (gt_sweep_stopped(g->t)) return 0;
                continue;
            }
        }
        if (!g->nb) return 0;
        if (run_batch(g)) return -1;
        absorb_all(g);
        count_gains(g, before);
        if (gt_sweep_stopped(g->t)) return 0;
    }
}

/* Rounds of the unscreened neighbours of each family's best that is within NEIGHBOURS_NEAR of its class's best (a
 * neighbour gains a few percent at most), while some family improves. */
static int neighbours(guide *g)
{
    const double near = fmin(NEIGHBOURS_NEAR, g->t->o->model_stop);
    for (int round = 0; round < REFINE && !gt_sweep_stopped(g->t); ++round) {
        int before[g->nlanes > 0 ? g->nlanes : 1];
        g->nb = 0;
        for (int l = 0; l < g->nlanes; ++l) {
            const lane *ln = &g->lanes[l];
            before[l] = ln->best;
            if (ln->best < 0 || screen_of(&g->sc->items[ln->best]) > near * best_of(g, ln->f)) continue;
            const gt_item *b = &g->sc->items[ln->best];
            for (int k = 0; k < ln->n; ++k) {
                const gt_item *it = &g->sc->items[ln->idx[k]];
                if (!it->have && param_distance(ln->f, &it->p, &b->p) <= NEAR) g->batch[g->nb++] = ln->idx[k];
            }
        }
        if (!g->nb) return 0;
        if (run_batch(g)) return -1;
        absorb_all(g);
        int improved = 0;
        for (int l = 0; l < g->nlanes; ++l) improved |= g->lanes[l].best != before[l];
        if (!improved) return 0;
    }
    return 0;
}

/* What no phase screened: stored 'pruned', uncompiled, with the model's numbers. */
static void leave_rest(guide *g)
{
    char why[300];
    for (int l = 0; l < g->nlanes; ++l) {
        const lane *ln = &g->lanes[l];
        for (int k = 0; k < ln->n; ++k) {
            gt_item *it = &g->sc->items[ln->idx[k]];
            if (it->have) continue;
            snprintf(why, sizeof why, "not screened: the cost model, calibrated on its family's screens, predicts "
                     "%.4g ms, over %.3g x the best screen of its math class so far (%.4g ms)",
                     ln->calib * predicted_ms(g, ln->idx[k]), g->t->o->model_stop, best_of(g, ln->f));
            gt_skip_item(g->t, 0, g->sc, it, g->rc, why);
            g->t->sum->unscreened++;
        }
    }
}

int gt_guided_screen(gt_sweep *t, gt_shape_ctx *sc, gt_round rc)
{
    guide g = {.t = t, .sc = sc, .rc = rc};
    int ret = -1;
    if (make_lanes(&g)) {
        snprintf(t->err, t->errlen, "out of memory");
        goto out;
    }
    absorb_all(&g); /* a resumed sweep's stored screens calibrate too */
    if (screen_unmodelled(&g) || waves(&g) || neighbours(&g)) goto out;
    unwant_unscreened(&g); /* the next shape's compiles come first */
    if (!gt_sweep_stopped(t)) { /* an interrupted sweep leaves them for the rerun */
        pthread_mutex_lock(&t->mu);
        leave_rest(&g);
        pthread_mutex_unlock(&t->mu);
    }
    ret = 0;
out:
    for (int l = 0; l < g.nlanes; ++l) free(g.lanes[l].idx);
    free(g.lanes);
    free(g.batch);
    free(g.ahead);
    return ret;
}
