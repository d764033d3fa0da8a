/* The sweep pipeline (see tune.h): plan the candidates, compile ahead in a thread pool, run each in a worker
 * process, commit each trial as it completes, and choose a re-timed winner per shape and layout. */
#include "tune.h"
#include "compile.h"
#include "db.h"
#include "worker.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* One distinct rendered source (a candidate in one layout), compiled once for every shape. */
typedef struct {
    char *src;
    char hash[17];
    int state; /* 0 queued, 1 compiling, 2 done */
    long wanted; /* 0, or the order in which trials asked for it: only wanted jobs compile, first asked first */
    int rc;    /* 0 compiled, 1 compile error, -1 NVRTC failure */
    int cached; /* came from the database's cubin cache: NVRTC did not run */
    int stored; /* in the cubin cache (taken from it, or put there after a successful trial) */
    gt_cubin cb;
    char err[512];
} cjob;

/* One candidate on the current shape and layout. */
typedef struct {
    const gt_family *f;
    gt_params p;
    char params[256];
    int job;
    gt_launch L;
    int have;             /* a verdict exists (run now or stored) */
    char status[32];
    double median_ms;
} item;

typedef struct {
    const gt_tune_opts *o;
    gt_db *db;
    char arch[16];
    gt_worker **workers;
    long long *sweeps;
    gt_gpu_info gpu;
    gt_limits lim;
    cjob *jobs;
    int njobs, stop;
    long want_seq;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t *threads;
    int nthreads;
    double t0, gpu_seconds;
    gt_tune_summary *sum;
    char *err;
    size_t errlen;
} tune;

static volatile sig_atomic_t interrupted;
/* First Ctrl-C: finish the trial in flight, commit, stop. A second one ends the process at once. */
static void on_sigint(int sig)
{
    interrupted = 1;
    signal(sig, SIG_DFL);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

void gt_tune_defaults(gt_tune_opts *o)
{
    o->layouts[0] = 0;
    o->nlayouts = o->nlayouts ? o->nlayouts : 1;
    o->warmup = 2;
    o->reps = 10;
    o->topk = 5;
    o->final_reps = 30;
    o->seed = 1;
    o->strategy = GT_STRATEGY_EXHAUSTIVE;
    o->shard_n = 1;
    o->timeout_floor_s = 20;
    o->prune_ratio = 20;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    o->jobs = n > 0 ? (int)n : 1;
}

/* ---- compile pool ---- */

static void *compile_thread(void *arg)
{
    tune *t = arg;
    pthread_mutex_lock(&t->mu);
    for (;;) {
        int i = -1;
        for (int k = 0; k < t->njobs; ++k)
            if (t->jobs[k].state == 0 && t->jobs[k].wanted && (i < 0 || t->jobs[k].wanted < t->jobs[i].wanted)) i = k;
        if (t->stop) break;
        if (i < 0) {
            pthread_cond_wait(&t->cv, &t->mu);
            continue;
        }
        cjob *j = &t->jobs[i];
        j->state = 1;
        pthread_mutex_unlock(&t->mu);
        j->rc = gt_nvrtc_compile(j->src, t->arch, &j->cb, j->err, sizeof j->err);
        pthread_mutex_lock(&t->mu);
        j->state = 2;
        pthread_cond_broadcast(&t->cv);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

/* Ask the pool for jobs (in this order of need); they compile ahead while the GPU works. */
static void want(tune *t, const int *jobs, int n)
{
    pthread_mutex_lock(&t->mu);
    for (int i = 0; i < n; ++i)
        if (!t->jobs[jobs[i]].wanted) t->jobs[jobs[i]].wanted = ++t->want_seq;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
}

static cjob *wait_compiled(tune *t, int idx)
{
    want(t, &idx, 1);
    pthread_mutex_lock(&t->mu);
    if (t->nthreads == 0 && t->jobs[idx].state == 0) { /* no pool could be started: compile here */
        cjob *j = &t->jobs[idx];
        j->rc = gt_nvrtc_compile(j->src, t->arch, &j->cb, j->err, sizeof j->err);
        j->state = 2;
    }
    while (t->jobs[idx].state != 2) pthread_cond_wait(&t->cv, &t->mu);
    pthread_mutex_unlock(&t->mu);
    return &t->jobs[idx];
}

static int find_job(const tune *t, const char *hash)
{
    for (int i = 0; i < t->njobs; ++i)
        if (!strcmp(t->jobs[i].hash, hash)) return i;
    return -1;
}

/* Render a candidate in a layout and register its source once; returns the job index or -1. */
static int add_job(tune *t, const gt_family *f, const gt_params *p, int layout, int *cap)
{
    char err[256], hash[17];
    char *src = gt_render(f, p, layout >> 1, layout & 1, err, sizeof err);
    if (!src) return -1;
    gt_hash_hex(src, strlen(src), hash);
    int idx = find_job(t, hash);
    if (idx >= 0) {
        free(src);
        return idx;
    }
    if (t->njobs == *cap) {
        cjob *grown = realloc(t->jobs, (size_t)(*cap = *cap ? *cap * 2 : 256) * sizeof *grown);
        if (!grown) return free(src), -1;
        t->jobs = grown;
    }
    cjob *j = &t->jobs[t->njobs];
    memset(j, 0, sizeof *j);
    j->src = src;
    memcpy(j->hash, hash, sizeof hash);
    size_t size = 0;
    int found = 0;
    if (gt_db_cubin_get(t->db, hash, t->arch, gt_nvrtc_version(), gt_nvrtc_options(), &j->cb.data, &size,
                        &j->cb.regs, &j->cb.spill_bytes, &found, err, sizeof err) == 0 && found) {
        j->cb.size = size;
        j->cached = j->stored = 1;
        j->state = 2;
        t->sum->cache_hits++;
    }
    return t->njobs++;
}

/* ---- planning ---- */

typedef struct {
    const gt_family *f;
    gt_params p;
    int job;
} cand;

typedef struct {
    tune *t;
    int layout;
    cand *v;
    int n, cap;
    int *jobcap;
} plan_ctx;

static int plan_one(const gt_family *f, const gt_params *p, void *vctx)
{
    plan_ctx *c = vctx;
    int job = add_job(c->t, f, p, c->layout, c->jobcap);
    if (job < 0) return 1;
    if (c->n == c->cap) {
        cand *grown = realloc(c->v, (size_t)(c->cap = c->cap ? c->cap * 2 : 128) * sizeof *grown);
        if (!grown) return 1;
        c->v = grown;
    }
    c->v[c->n++] = (cand){f, *p, job};
    return 0;
}

static int family_selected(const gt_tune_opts *o, const gt_family *f)
{
    if (!o->families) return !f->test_only;
    for (int i = 0; i < o->nfamilies; ++i)
        if (!strcmp(o->families[i], f->name)) return 1;
    return 0;
}

/* Every selected family's legal candidates in one layout, their sources registered for compilation. */
static int plan_layout(tune *t, int layout, cand **out, int *jobcap)
{
    plan_ctx c = {t, layout, NULL, 0, 0, jobcap};
    for (int i = 0; i < gt_family_count(); ++i) {
        const gt_family *f = gt_family_at(i);
        if (family_selected(t->o, f)) gt_enumerate(f, &t->lim, plan_one, &c);
    }
    *out = c.v;
    return c.n;
}

/* ---- running ---- */

typedef struct {
    int checks, warmup, reps;
} round_cfg;

typedef struct {
    tune *t;
    const gt_shape *s;
    item *items;
    const int *order; /* indices into items for this round */
    int n, next;
    round_cfg rc;
    double cublas_ms;
    int stop;
    int done, failed;
    double best_ms, t_start;
    pthread_mutex_t mu; /* guards next, the database and the summary */
} runq;

/* Statuses that can never win: failures, and 'pruned' (too slow to be worth validating). */
static int is_failure(const char *status)
{
    return strcmp(status, "ok") && strcmp(status, "screened");
}

static int is_error(const char *status)
{
    return is_failure(status) && strcmp(status, "pruned");
}

/* One live line: done/total, failures, best so far against cuBLAS, ETA, the trial just finished. */
static void progress(runq *q, const item *it, const char *status, double median_ms)
{
    const gt_shape *s = q->s;
    double flop = 2.0 * s->m * s->n * (double)s->k;
    q->done++;
    if (is_error(status)) q->failed++;
    if (!is_failure(status) && median_ms > 0 && (q->best_ms <= 0 || median_ms < q->best_ms)) q->best_ms = median_ms;
    if (!q->t->o->progress) return;
    double el = now_s() - q->t_start, eta = q->done ? el / q->done * (q->n - q->done) : 0;
    fprintf(stderr, "\r\033[K[%d/%d] %dx%dx%d %s  fail %d", q->done, q->n, s->m, s->n, s->k,
            gt_layout_name(s->ta, s->tb), q->failed);
    if (q->best_ms > 0)
        fprintf(stderr, "  best %.1f TFLOPS (%.2fx cuBLAS)", flop / (q->best_ms * 1e9), q->cublas_ms / q->best_ms);
    fprintf(stderr, "  ETA %d:%02d  %s %s", (int)eta / 60, (int)eta % 60, it->f->name, status);
    fflush(stderr);
}

static void store(tune *t, const gt_shape *s, int g, const item *it, const cjob *j, const gt_trial_result *r,
                  int reps)
{
    char err[256];
    gt_trial tr = {.family = it->f->name, .params = it->params, .source_hash = j->hash, .status = r->status,
                   .message = r->message[0] ? r->message : NULL, .median_ms = r->median_ms, .min_ms = r->min_ms,
                   .max_ms = r->max_ms, .rel_err = r->rel_err, .regs = j->cb.regs, .spill_bytes = j->cb.spill_bytes,
                   .compile_s = j->cached ? 0 : j->cb.seconds, .reps = reps};
    tr.tflops = r->median_ms > 0 ? 2.0 * s->m * s->n * (double)s->k / (r->median_ms * 1e9) : -1;
    if (gt_db_add_trial(t->db, t->sweeps[g], s, &tr, err, sizeof err))
        fprintf(stderr, "\ngemmtune: storing a trial failed: %s\n", err);
}

/* Run one item on worker g and store the verdict. Called with q->mu held; releases it while the GPU works. */
static int run_item(runq *q, int g, item *it)
{
    tune *t = q->t;
    cjob *j = wait_compiled(t, it->job);
    gt_trial_result r = {.median_ms = -1, .min_ms = -1, .max_ms = -1, .rel_err = -1};
    char err[512];
    if (j->rc != 0) {
        snprintf(r.status, sizeof r.status, "compile_error");
        snprintf(r.message, sizeof r.message, "%s", j->err);
    } else {
        double per_launch = fmax(0.02, 200 * q->cublas_ms / 1000.0); /* derived from cuBLAS, with a floor */
        gt_trial_request req = {.cubin = j->cb.data, .cubin_size = j->cb.size, .shape = *q->s, .launch = it->L,
                                .checks = q->rc.checks, .warmup = q->rc.warmup, .reps = q->rc.reps,
                                .seed = t->o->seed * 1000003ull + (unsigned long long)q->next,
                                .timeout_s = t->o->timeout_floor_s + per_launch * (q->rc.warmup + q->rc.reps + 8),
                                .cutoff_ms = t->o->prune_ratio > 0 ? t->o->prune_ratio * q->cublas_ms : 0};
        pthread_mutex_unlock(&q->mu);
        double t0 = now_s();
        int rc = gt_worker_trial(t->workers[g], &req, &r, err, sizeof err);
        pthread_mutex_lock(&q->mu);
        t->gpu_seconds += now_s() - t0;
        if (rc) {
            snprintf(t->err, t->errlen, "GPU %d: %s", t->o->gpus[g], err);
            return -1;
        }
        if (!q->rc.checks && !strcmp(r.status, "ok")) snprintf(r.status, sizeof r.status, "screened");
        if (!j->stored && !strcmp(r.status, "ok") &&
            gt_db_cubin_put(t->db, j->hash, t->arch, gt_nvrtc_version(), gt_nvrtc_options(), j->cb.data, j->cb.size,
                            j->cb.regs, j->cb.spill_bytes, err, sizeof err) == 0)
            j->stored = 1;
    }
    store(t, q->s, g, it, j, &r, q->rc.reps);
    it->have = 1;
    snprintf(it->status, sizeof it->status, "%s", r.status);
    it->median_ms = r.median_ms;
    t->sum->trials_run++;
    if (is_error(r.status)) t->sum->trials_failed++;
    progress(q, it, r.status, r.median_ms);
    return 0;
}

static int out_of_time(const runq *q)
{
    const gt_tune_opts *o = q->t->o;
    return interrupted || (o->budget_s > 0 && now_s() - q->t->t0 > o->budget_s);
}

typedef struct {
    runq *q;
    int g;
} gpu_arg;

static void *gpu_loop(void *arg)
{
    gpu_arg *a = arg;
    runq *q = a->q;
    pthread_mutex_lock(&q->mu);
    while (!q->stop && q->next < q->n) {
        if (out_of_time(q)) {
            q->stop = 1;
            break;
        }
        item *it = &q->items[q->order[q->next++]];
        if (run_item(q, a->g, it)) q->stop = -1;
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

/* Run a round over order[0..n) on every GPU at once. Returns -1 when a worker could not be restarted. */
static int run_round(tune *t, const gt_shape *s, item *items, const int *order, int n, round_cfg rc, double cublas_ms)
{
    runq q = {.t = t, .s = s, .items = items, .order = order, .n = n, .rc = rc, .cublas_ms = cublas_ms,
              .t_start = now_s()};
    int ng = t->o->ngpus;
    pthread_t th[64];
    gpu_arg args[64];
    int *jobs = malloc(((size_t)n + 1) * sizeof *jobs);
    for (int i = 0; jobs && i < n; ++i) jobs[i] = items[order[i]].job;
    if (jobs) want(t, jobs, n);
    free(jobs);
    pthread_mutex_init(&q.mu, NULL);
    for (int g = 0; g < ng; ++g) {
        args[g] = (gpu_arg){&q, g};
        if (g > 0) pthread_create(&th[g], NULL, gpu_loop, &args[g]);
    }
    gpu_loop(&args[0]);
    for (int g = 1; g < ng; ++g) pthread_join(th[g], NULL);
    pthread_mutex_destroy(&q.mu);
    if (t->o->progress) fprintf(stderr, "\r\033[K");
    return q.stop < 0 ? -1 : 0;
}

/* ---- one shape in one layout ---- */

static int cmp_median(const void *a, const void *b, void *ctx)
{
    const item *v = ctx;
    double x = v[*(const int *)a].median_ms, y = v[*(const int *)b].median_ms;
    return x < y ? -1 : x > y;
}

/* Indices of items with a usable time (status in want, or any non-failure when want is NULL), fastest first. */
static int ranked(item *items, int n, const char *want, int *order)
{
    int k = 0;
    for (int i = 0; i < n; ++i)
        if (items[i].have && items[i].median_ms > 0 && (want ? !strcmp(items[i].status, want) : !is_failure(items[i].status)))
            order[k++] = i;
    qsort_r(order, (size_t)k, sizeof *order, cmp_median, items);
    return k;
}

/* Items of this shape: the applicable candidates of the layout (tight leading dimensions, aligned buffers),
 * this shard's share, in strategy order, capped by --max-trials. Stored verdicts are taken over (resume). */
static int build_items(tune *t, const cand *cands, int ncand, const gt_shape *s, item **out)
{
    const gt_tune_opts *o = t->o;
    gt_call call = {*s, s->ta ? s->m : s->k, s->tb ? s->k : s->n, s->n, 16, 16, 16};
    item *v = calloc((size_t)ncand + 1, sizeof *v);
    int n = 0;
    for (int i = 0; v && i < ncand; ++i) {
        const cand *c = &cands[i];
        if (i % o->shard_n != o->shard_i) continue;
        if (c->f->applicable && !c->f->applicable(&c->p, &call)) continue;
        item *it = &v[n++];
        it->f = c->f;
        it->p = c->p;
        it->job = c->job;
        gt_params_format(c->f, &c->p, it->params, sizeof it->params);
        c->f->launch(&c->p, s, &it->L);
    }
    if (o->strategy == GT_STRATEGY_RANDOM) { /* seeded Fisher-Yates: the same seed picks the same sample */
        unsigned long long x = o->seed * 0x9E3779B97F4A7C15ull + 1;
        for (int i = n - 1; i > 0; --i) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            int j = (int)(x % (unsigned long long)(i + 1));
            item tmp = v[i];
            v[i] = v[j], v[j] = tmp;
        }
    }
    if (o->max_trials > 0 && n > o->max_trials) n = (int)o->max_trials;
    *out = v;
    return v ? n : -1;
}

/* Resume: take over stored verdicts. Failures stay failures unless --retry-failed; 'screened' needs a rerun
 * wherever validation is required. */
static void take_stored(tune *t, const gt_shape *s, item *items, int n)
{
    char err[256], status[32];
    for (int i = 0; i < n; ++i) {
        int found = 0;
        double med = -1;
        const cjob *j = &t->jobs[items[i].job];
        if (gt_db_find_trial(t->db, &t->gpu, s, items[i].f->name, items[i].params, j->hash, &found, status, &med, err,
                             sizeof err) || !found)
            continue;
        if (is_error(status) && t->o->retry_failed) continue;
        items[i].have = 1;
        items[i].median_ms = med;
        snprintf(items[i].status, sizeof items[i].status, "%s", status);
        t->sum->trials_skipped++;
    }
}

static int pending(const item *items, int n, int *order)
{
    int k = 0;
    for (int i = 0; i < n; ++i)
        if (!items[i].have) order[k++] = i;
    return k;
}

/* Successive halving: screen every candidate cheaply (timed, not validated), keep the fastest eighth and
 * screen it again with twice the runs, then quarters, until at most 4 * topk remain; validate and time those
 * properly. Only validated candidates can win. */
static int search_halving(tune *t, const gt_shape *s, item *items, int n, int *order, double cublas_ms)
{
    const gt_tune_opts *o = t->o;
    /* One warm run ranks well enough to keep only the fastest eighth; later rounds keep a quarter. */
    int reps = 1, eta = 8, k = pending(items, n, order), rc = -1;
    int *alive = malloc(((size_t)n + 1) * sizeof *alive);
    if (!alive || run_round(t, s, items, order, k, (round_cfg){0, 1, reps}, cublas_ms)) goto out;
    int na = ranked(items, n, NULL, alive);
    for (;;) {
        /* rank the survivors by their latest time; failures and pruned ones drop out */
        int live = 0;
        for (int i = 0; i < na; ++i)
            if (items[alive[i]].have && items[alive[i]].median_ms > 0 && !is_failure(items[alive[i]].status))
                alive[live++] = alive[i];
        qsort_r(alive, (size_t)live, sizeof *alive, cmp_median, items);
        int floor = 4 * o->topk;
        na = live / eta > floor ? live / eta : (live < floor ? live : floor);
        eta = 4;
        int m = 0; /* validated survivors already have their proper timing */
        for (int i = 0; i < na; ++i)
            if (strcmp(items[alive[i]].status, "ok")) order[m++] = alive[i];
        for (int i = 0; i < m; ++i) items[order[i]].have = 0;
        if (na <= floor || interrupted) { /* few enough: validate and time them */
            rc = run_round(t, s, items, order, m, (round_cfg){1, o->warmup, o->reps}, cublas_ms);
            break;
        }
        reps = reps * 2 < o->reps ? reps * 2 : o->reps;
        if (run_round(t, s, items, order, m, (round_cfg){0, 1, reps}, cublas_ms)) break;
    }
out:
    free(alive);
    return rc;
}

static int search(tune *t, const gt_shape *s, item *items, int n, double cublas_ms)
{
    int *order = malloc(((size_t)n + 1) * sizeof *order), rc;
    if (!order) return snprintf(t->err, t->errlen, "out of memory"), -1;
    if (t->o->strategy == GT_STRATEGY_HALVING) {
        rc = search_halving(t, s, items, n, order, cublas_ms);
    } else {
        int k = pending(items, n, order);
        rc = run_round(t, s, items, order, k, (round_cfg){1, t->o->warmup, t->o->reps}, cublas_ms);
    }
    free(order);
    return rc;
}

/* Re-time the topk validated candidates with final_reps on a cold L2 and store the fastest as the winner. */
static int finalize(tune *t, const gt_shape *s, item *items, int n, gt_shape_result *res)
{
    int *order = malloc(((size_t)n + 1) * sizeof *order), best = -1;
    double best_med = INFINITY, spread = 0;
    char err[512];
    if (!order) return -1;
    int k = ranked(items, n, "ok", order);
    if (k > t->o->topk) k = t->o->topk;
    for (int i = 0; i < k && !interrupted; ++i) {
        item *it = &items[order[i]];
        cjob *j = wait_compiled(t, it->job);
        gt_trial_request req = {.cubin = j->cb.data, .cubin_size = j->cb.size, .shape = *s, .launch = it->L,
                                .warmup = 2, .reps = t->o->final_reps,
                                .timeout_s = t->o->timeout_floor_s + 400 * res->cublas_ms * t->o->final_reps / 1000};
        gt_trial_result r;
        double t0 = now_s();
        if (gt_worker_trial(t->workers[0], &req, &r, err, sizeof err)) {
            snprintf(t->err, t->errlen, "GPU %d: %s", t->o->gpus[0], err);
            free(order);
            return -1;
        }
        t->gpu_seconds += now_s() - t0;
        store(t, s, 0, it, j, &r, t->o->final_reps);
        if (!strcmp(r.status, "ok") && r.median_ms < best_med) {
            best = order[i];
            best_med = r.median_ms;
            spread = 100.0 * (r.max_ms - r.min_ms) / r.median_ms;
        }
    }
    free(order);
    if (best < 0) return 0;
    const item *w = &items[best];
    if (gt_db_set_winner(t->db, t->sweeps[0], s, w->f->name, w->params, t->jobs[w->job].hash, best_med, spread, err,
                         sizeof err))
        fprintf(stderr, "gemmtune: storing the winner failed: %s\n", err);
    snprintf(res->family, sizeof res->family, "%s", w->f->name);
    snprintf(res->params, sizeof res->params, "%s", w->params);
    res->median_ms = best_med;
    res->spread_pct = spread;
    return 0;
}

static void tally(const item *items, int n, gt_shape_result *res)
{
    for (int i = 0; i < n; ++i)
        if (items[i].have) {
            res->trials++;
            res->failed += is_error(items[i].status);
        }
}

static int record(tune *t, const gt_shape_result *res)
{
    gt_tune_summary *sum = t->sum;
    gt_shape_result *grown = realloc(sum->shapes, ((size_t)sum->nshapes + 1) * sizeof *grown);
    if (!grown) return snprintf(t->err, t->errlen, "out of memory"), -1;
    sum->shapes = grown;
    sum->shapes[sum->nshapes++] = *res;
    if (t->o->on_shape) t->o->on_shape(res, t->o->ctx);
    return 0;
}

static int tune_shape(tune *t, const cand *cands, int ncand, const gt_shape *s)
{
    gt_shape_result res = {.shape = *s};
    char err[512];
    if (gt_worker_baseline(t->workers[0], s, 3, 20, &res.cublas_ms, err, sizeof err))
        return snprintf(t->err, t->errlen, "%s", err), -1;
    if (gt_db_set_baseline(t->db, t->sweeps[0], s, res.cublas_ms, err, sizeof err))
        return snprintf(t->err, t->errlen, "%s", err), -1;
    item *items;
    int n = build_items(t, cands, ncand, s, &items), skipped0 = t->sum->trials_skipped;
    if (n < 0) return snprintf(t->err, t->errlen, "out of memory"), -1;
    take_stored(t, s, items, n);
    res.skipped = t->sum->trials_skipped - skipped0;
    int rc = search(t, s, items, n, res.cublas_ms);
    if (rc == 0 && !interrupted) rc = finalize(t, s, items, n, &res);
    tally(items, n, &res);
    free(items);
    return rc == 0 && !interrupted ? record(t, &res) : rc;
}

void gt_tune_summary_free(gt_tune_summary *s)
{
    free(s->shapes);
    s->shapes = NULL;
    s->nshapes = 0;
}

/* ---- setup and teardown ---- */

static int same_model(const gt_gpu_info *a, const gt_gpu_info *b)
{
    return !strcmp(a->name, b->name) && a->cc_major == b->cc_major && a->cc_minor == b->cc_minor &&
           a->sm_count == b->sm_count;
}

static int start_gpus(tune *t)
{
    const gt_tune_opts *o = t->o;
    t->workers = calloc((size_t)o->ngpus, sizeof *t->workers);
    t->sweeps = calloc((size_t)o->ngpus, sizeof *t->sweeps);
    if (!t->workers || !t->sweeps) return snprintf(t->err, t->errlen, "out of memory"), -1;
    for (int g = 0; g < o->ngpus; ++g) {
        gt_gpu_info gi;
        if (gt_worker_start(o->gpus[g], &t->workers[g], t->err, t->errlen)) return -1;
        gt_worker_info(t->workers[g], &gi, g ? NULL : &t->lim);
        if (g == 0) t->gpu = gi;
        else if (!same_model(&gi, &t->gpu))
            return snprintf(t->err, t->errlen, "GPU %d is a %s but GPU %d is a %s: one sweep tunes one GPU model",
                             o->gpus[g], gi.name, o->gpus[0], t->gpu.name), -1;
    }
    snprintf(t->arch, sizeof t->arch, "sm_%d%d", t->gpu.cc_major, t->gpu.cc_minor);
    return 0;
}

/* After the GPUs answered, so a machine without one gets no database file. */
static int begin_sweeps(tune *t)
{
    if (gt_db_open(t->o->db_path, 1, &t->db, t->err, t->errlen)) return -1;
    for (int g = 0; g < t->o->ngpus; ++g) {
        gt_gpu_info gi;
        gt_worker_info(t->workers[g], &gi, NULL);
        if (gt_db_begin_sweep(t->db, &gi, t->o->command, &t->sweeps[g], t->err, t->errlen)) return -1;
    }
    return 0;
}

static void start_pool(tune *t)
{
    t->nthreads = t->o->jobs > 0 ? t->o->jobs : 1;
    t->threads = calloc((size_t)t->nthreads, sizeof *t->threads);
    if (!t->threads) t->nthreads = 0;
    for (int i = 0; i < t->nthreads; ++i)
        if (pthread_create(&t->threads[i], NULL, compile_thread, t)) t->nthreads = i;
}

static void teardown(tune *t)
{
    pthread_mutex_lock(&t->mu);
    t->stop = 1;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    for (int i = 0; t->threads && i < t->nthreads; ++i) pthread_join(t->threads[i], NULL);
    free(t->threads);
    for (int i = 0; i < t->njobs; ++i) {
        t->sum->compiled += !t->jobs[i].cached && t->jobs[i].state == 2;
        free(t->jobs[i].src);
        gt_cubin_free(&t->jobs[i].cb);
    }
    free(t->jobs);
    for (int g = 0; t->workers && g < t->o->ngpus; ++g)
        if (t->workers[g]) {
            t->sum->restarts += gt_worker_restarts(t->workers[g]);
            gt_worker_stop(t->workers[g]);
        }
    free(t->workers);
    free(t->sweeps);
    gt_db_close(t->db);
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->cv);
}

int gt_tune_run(const gt_tune_opts *o, gt_tune_summary *sum, char *err, size_t errlen)
{
    tune t = {.o = o, .sum = sum, .err = err, .errlen = errlen, .t0 = now_s()};
    cand *cands[4] = {0};
    int ncand[4] = {0}, jobcap = 0, rc = -1;
    memset(sum, 0, sizeof *sum);
    pthread_mutex_init(&t.mu, NULL);
    pthread_cond_init(&t.cv, NULL);
    interrupted = 0;
    struct sigaction sa = {.sa_handler = on_sigint}, old;
    sigaction(SIGINT, &sa, &old);
    if (start_gpus(&t) || (o->on_gpu && o->on_gpu(&t.gpu, o->ctx, err, errlen)) || begin_sweeps(&t)) goto out;
    for (int l = 0; l < o->nlayouts; ++l) ncand[l] = plan_layout(&t, o->layouts[l], &cands[l], &jobcap);
    start_pool(&t);
    rc = 0;
    for (int i = 0; rc == 0 && i < o->nshapes && !interrupted; ++i)
        for (int l = 0; rc == 0 && l < o->nlayouts && !interrupted; ++l) {
            gt_shape s = o->shapes[i];
            s.ta = o->layouts[l] >> 1;
            s.tb = o->layouts[l] & 1;
            rc = tune_shape(&t, cands[l], ncand[l], &s);
        }
    if (rc == 0 && interrupted) rc = 130;
    sum->interrupted = interrupted;
    sum->gpu_seconds = t.gpu_seconds;
out:
    sigaction(SIGINT, &old, NULL);
    teardown(&t);
    for (int l = 0; l < 4; ++l) free(cands[l]);
    return rc;
}

