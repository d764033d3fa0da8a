/* The sweep's logic on the CPU: strategies, resume, sharding, pruning, family ceilings, device-space candidates
 * and interruption, driven through gt_tune_run with a fake runner (synthetic times, no GPU) and a fake compiler;
 * and the plan ahead of the GPU (tuner/ahead.c: precompile, tune --dry-run) against what such a sweep does.
 * Run: build/gt_tests --cpu tune */
#include "ahead.h"
#include "cublas_family.h"
#include "fixture.h"
#include "harness.h"
#include "model.h"
#include "sweep.h"
#include "tune.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What the fake GPU was asked to run. */
typedef struct {
    char family[32], params[256];
    gt_shape shape; /* the timed shape */
    int checks, warmup, reps, paired;
    unsigned long long seed;
} call;

static struct {
    call *log;
    int n, cap;
    double slow_family; /* the times of slow_name's candidates (naive unless set) are multiplied by this */
    const char *slow_name;
    double gpu_ms;      /* total synthetic time spent */
    int modelled;       /* 1: a built candidate takes the cost model's time within +-3%, the library 10 x base */
    double fixed_ms;    /* > 0: family ozaki takes this long whatever K (its passes over the operands and C) */
    double drift;       /* != 0: each re-timing (2 warm-up runs, no check) this much slower (or faster) than the
                           one before, a GPU whose clocks move as it heats; with own_q > 0 every candidate of the
                           built families takes that quality */
    double own_q;
    int retimes;
    int fail_retimes;   /* > 0: that many re-timings from the first fault */
    const char *odd_name; /* != NULL: this family's candidates but odd_first take odd_factor x their time */
    char odd_first[256];
    char *odd_src;        /* odd_first's source as the sweep renders it (nn, one matrix): it compiles slowly */
    double odd_factor;
    const char *paired_name; /* != NULL: this family's runs take paired_q x their time when paired with cuBLAS's */
    double paired_q;
} fake;

static int f_start(int device, void **self, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    *self = (void *)(long)(device + 1);
    return 0;
}
static void f_stop(void *self) { (void)self; }
static void f_info(void *self, gt_gpu_info *gpu, gt_limits *lim)
{
    (void)self;
    *gpu = gt_fixture_gpu(0, 0);
    if (lim) gt_limits_for_arch("sm_90", lim), lim->sm_count = 132;
}

static double base_ms(const gt_shape *s) { return 2.0 * s->m * s->n * (double)s->k / 4e9; } /* 4 TFLOPS */

static int f_baseline(void *self, const gt_shape *s, int warmup, int reps, double *ms, char *err, size_t errlen)
{
    (void)self, (void)warmup, (void)reps, (void)err, (void)errlen;
    *ms = base_ms(s);
    return 0;
}

/* Three vendor candidates per shape: cublasSgemm and two cuBLASLt algorithms. */
static int f_candidates(void *self, const gt_family *f, const gt_shape *s, gt_params *out, int *n, char *err,
                        size_t errlen)
{
    (void)self, (void)f, (void)s, (void)err, (void)errlen;
    for (int i = 0; i < 3; ++i) {
        memset(&out[i], 0, sizeof out[i]);
        out[i].v[GT_CUBLAS_P_API] = i > 0;
        out[i].v[GT_CUBLAS_P_ALGO] = i ? 10 + i : 0;
        out[i].v[GT_CUBLAS_P_SPLITK] = i > 0;
        out[i].v[GT_CUBLAS_P_VER] = 130000;
    }
    *n = 3;
    return 0;
}

/* A made-up speed per candidate in [1, 3) x base (the vendor's default at 1.05 x base), slow_name's slow_family x
 * more. */
static double quality(const char *family, const gt_params *p)
{
    unsigned h = 2166136261u;
    for (int i = 0; i < GT_MAX_PARAMS; ++i) h = (h ^ (unsigned)p->v[i]) * 16777619u;
    for (const char *c = family; *c; ++c) h = (h ^ (unsigned char)*c) * 16777619u;
    if (!strcmp(family, "cublas")) return p->v[GT_CUBLAS_P_API] ? 1.2 : 1.05;
    if (fake.own_q > 0) return fake.own_q;
    double q = 1.0 + 2.0 * (h % 1000) / 1000.0;
    return !strcmp(family, fake.slow_name ? fake.slow_name : "naive") ? q * fake.slow_family : q;
}

/* With fake.modelled: what the cost model predicts, off by up to 3% either way (a made-up, fixed error per
 * candidate), so that the model's order is right only roughly, as on a GPU. */
static double modelled_ms(const gt_family *f, const gt_params *p, const gt_shape *s)
{
    gt_limits l;
    gt_limits_for_arch("sm_90", &l);
    l.sm_count = 132;
    const double t = gt_model_time(f, p, s, &l);
    if (t <= 0) return 10 * base_ms(s);
    double slow = fake.slow_name && !strcmp(f->name, fake.slow_name) ? fake.slow_family : 1;
    if (fake.odd_name && !strcmp(f->name, fake.odd_name)) {
        char text[256];
        gt_params_format(f, p, text, sizeof text);
        if (strcmp(text, fake.odd_first)) slow *= fake.odd_factor;
    }
    return t * 1e3 * slow * (1 + 0.06 * ((quality(f->name, p) - 1) / 2 - 0.5));
}

static int f_trial(void *self, const gt_trial_request *req, gt_trial_result *out, char *err, size_t errlen)
{
    (void)self, (void)err, (void)errlen;
    const gt_shape *ts = req->time_shape.k > 0 ? &req->time_shape : &req->shape;
    double ms = fake.fixed_ms > 0 && !strcmp(req->family->name, "ozaki") ? fake.fixed_ms
                : fake.modelled ? modelled_ms(req->family, &req->params, ts)
                                : base_ms(ts) * quality(req->family->name, &req->params);
    const int retiming = !req->checks && req->warmup == 2;
    const double clock = retiming && fake.drift != 0 ? 1 + fake.drift * fake.retimes : 1;
    ms *= clock;
    if (req->paired && fake.paired_name && !strcmp(req->family->name, fake.paired_name)) ms *= fake.paired_q;
    fake.retimes += retiming;
    if (fake.n == fake.cap) fake.log = realloc(fake.log, (size_t)(fake.cap = fake.cap ? 2 * fake.cap : 1024) * sizeof *fake.log);
    call *c = &fake.log[fake.n++];
    snprintf(c->family, sizeof c->family, "%s", req->family->name);
    gt_params_format(req->family, &req->params, c->params, sizeof c->params);
    c->shape = *ts;
    c->checks = req->checks, c->warmup = req->warmup, c->reps = req->reps, c->paired = req->paired;
    c->seed = req->seed;
    memset(out, 0, sizeof *out);
    out->rel_err = req->checks ? 1e-7 : -1;
    out->median_ms = out->min_ms = out->max_ms = ms;
    out->ref_ms = req->paired ? base_ms(ts) * clock : -1; /* cuBLAS, under the same clock */
    if (retiming && fake.fail_retimes > 0) {
        fake.fail_retimes--;
        out->status = GT_ST_FAULTED;
        return 0;
    }
    if (req->cutoff_ms > 0 && ms > req->cutoff_ms) {
        fake.gpu_ms += ms;
        out->status = GT_ST_PRUNED;
        return 0;
    }
    fake.gpu_ms += ms * (req->warmup + (req->reps > 0 ? req->reps : 1));
    out->status = GT_ST_OK;
    return 0;
}

static int f_restarts(void *self) { (void)self; return 0; }

static const gt_runner fake_runner = {f_start, f_stop, f_info, f_baseline, f_candidates, f_trial, f_restarts};

static int fake_compile(const char *src, const char *arch, gt_cubin *out, char *err, size_t errlen)
{
    (void)src, (void)arch, (void)err, (void)errlen;
    memset(out, 0, sizeof *out);
    out->data = malloc(8);
    memcpy(out->data, "\177ELFfake", 8);
    out->size = 8;
    out->regs = 32;
    return 0;
}

static const char *const two_families[] = {"naive", "smem", "cublas"};
static const gt_shape shape_a = {512, 256, 384, 0, 0}, shape_b = {1024, 1024, 8192, 0, 0};

static void setup(gt_tune_opts *o, const char *db, const gt_shape *shapes, int nshapes)
{
    static int gpus[1] = {0};
    memset(o, 0, sizeof *o);
    gt_tune_defaults(o);
    o->db_path = db, o->gpus = gpus, o->ngpus = 1, o->shapes = shapes, o->nshapes = nshapes;
    o->families = two_families, o->nfamilies = 3, o->command = "test_tune", o->jobs = 2;
    o->runner = &fake_runner, o->compile = fake_compile;
    fake.n = 0, fake.gpu_ms = 0, fake.slow_family = 1, fake.slow_name = NULL, fake.modelled = 0, fake.fixed_ms = 0;
    fake.drift = 0, fake.own_q = 0, fake.retimes = 0, fake.fail_retimes = 0;
    fake.odd_name = NULL, fake.odd_first[0] = '\0', fake.odd_src = NULL, fake.odd_factor = 1;
    fake.paired_name = NULL, fake.paired_q = 1;
}

static long long count(const char *db, const char *sql)
{
    sqlite3 *h;
    sqlite3_stmt *st;
    long long n = -1;
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(h);
    return n;
}

static int keep_best(const gt_family *f, const gt_params *p, void *ctx)
{
    double q = quality(f->name, p);
    if (q < *(double *)ctx) *(double *)ctx = q;
    return 0;
}

/* The candidate the synthetic model makes fastest, over every selected family's candidates. */
static double best_quality(void)
{
    gt_limits l;
    double best = 1.05; /* cublasSgemm's */
    gt_limits_for_arch("sm_90", &l);
    for (int i = 0; i < 2; ++i) gt_enumerate(gt_family_find(two_families[i]), &l, keep_best, &best);
    return best;
}

GT_TEST(tune_exhaustive_runs_each_candidate_once_and_resumes, GT_NEEDS_NONE)
{
    char *db = gt_tmp_path(".db"), err[512];
    gt_tune_opts o;
    gt_tune_summary s1, s2;
    setup(&o, db, &shape_a, 1);
    o.strategy = GT_STRATEGY_EXHAUSTIVE, o.prune_best = 0, o.cross = 0;
    CHECK_MSG(gt_tune_run(&o, &s1, err, sizeof err) == 0, "%s", err);
    gt_limits l;
    gt_limits_for_arch("sm_90", &l);
    const int want = gt_enumerate(gt_family_find("naive"), &l, NULL, NULL) +
                     gt_enumerate(gt_family_find("smem"), &l, NULL, NULL) + 3;
    CHECK_MSG(s1.trials_run == want, "%d search trials, want %d", s1.trials_run, want);
    CHECK(s1.retimed == o.topk && s1.nshapes == 1);
    const double q = s1.shapes[0].median_ms / base_ms(&shape_a), fastest = best_quality();
    const double want_q = fastest * (1 + GT_OWN_MARGIN) >= 1.05 ? 1.05 : fastest; /* cuBLAS keeps a near tie */
    CHECK_MSG(fabs(q - want_q) < 1e-9, "winner at %.4f x base, the fastest is %.4f, cuBLAS 1.05", q, fastest);
    CHECK(count(db, "SELECT count(*) FROM v_winners") == 1);
    CHECK(count(db, "SELECT count(*) FROM v_trials WHERE family = 'cublas'") >= 3);
    setup(&o, db, &shape_a, 1);
    o.strategy = GT_STRATEGY_EXHAUSTIVE, o.prune_best = 0, o.cross = 0;
    CHECK_MSG(gt_tune_run(&o, &s2, err, sizeof err) == 0, "%s", err);
    CHECK_MSG(s2.trials_run == 0 && s2.trials_skipped == want, "rerun: %d run, %d skipped", s2.trials_run,
              s2.trials_skipped);
    CHECK(s2.compiled == 0);
    gt_tune_summary_free(&s1);
    gt_tune_summary_free(&s2);
    gt_fixture_rm(db);
    free(db);
}

static int count_stale(const gt_winner *w, void *ctx)
{
    *(int *)ctx += w->stale;
    return 0;
}

/* The seed of a candidate's checks (its inputs) depends on the candidate and the shape, not on what else the sweep
 * holds: smem's candidates, swept after naive's and then alone, are checked on the same inputs both times, and two
 * candidates on different ones. */
GT_TEST(tune_checks_a_candidate_on_the_same_inputs_whatever_is_swept_beside_it, GT_NEEDS_NONE)
{
    static const char *const smem_only[] = {"smem"};
    call *log[2] = {NULL, NULL};
    int n[2] = {0, 0};
    for (int r = 0; r < 2; ++r) {
        char *db = gt_tmp_path(".db"), err[512];
        gt_tune_opts o;
        gt_tune_summary sum;
        setup(&o, db, &shape_a, 1);
        o.strategy = GT_STRATEGY_EXHAUSTIVE, o.cross = 0;
        if (r) o.families = smem_only, o.nfamilies = 1;
        CHECK_MSG(gt_tune_run(&o, &sum, err, sizeof err) == 0, "%s", err);
        log[r] = malloc(sizeof(call) * (size_t)(fake.n + 1));
        if (log[r]) memcpy(log[r], fake.log, sizeof(call) * (size_t)fake.n), n[r] = fake.n;
        gt_tune_summary_free(&sum);
        gt_fixture_rm(db);
        free(db);
    }
    int same = 0, differ = 0;
    for (int i = 0; i < n[1]; ++i)
        for (int j = 0; j < n[0]; ++j) {
            if (!log[1][i].checks || !log[0][j].checks || strcmp(log[0][j].family, "smem") ||
                strcmp(log[1][i].family, "smem"))
                continue;
            if (!strcmp(log[0][j].params, log[1][i].params)) same += log[0][j].seed == log[1][i].seed ? 1 : -1000;
            else differ += log[0][j].seed != log[1][i].seed;
        }
    CHECK_MSG(same > 0 && differ > 0, "%d candidates checked on the same seed, %d pairs on different ones", same, differ);
    free(log[0]), free(log[1]);
}

/* Issue 25 item 6 / 27 item 1: when a kernel's id changes (its template or a header it includes was edited, or ids
 * came to cover headers), a rerun measures it again instead of taking the stored verdict (the resume lookup keys on
 * the id), and the fresh winner replaces the stale one even when the stale one timed faster; the vendor's ids stand. */
GT_TEST(tune_remeasures_stale_candidates, GT_NEEDS_NONE)
{
    char *db = gt_tmp_path(".db"), err[512];
    gt_tune_opts o;
    gt_tune_summary s1, s2;
    setup(&o, db, &shape_a, 1);
    o.strategy = GT_STRATEGY_EXHAUSTIVE, o.prune_best = 0, o.cross = 0;
    fake.slow_name = "smem", fake.slow_family = 0.2; /* a built family wins */
    CHECK_MSG(gt_tune_run(&o, &s1, err, sizeof err) == 0, "%s", err);
    /* the database as an older gemmtune left it: every built kernel under another id, timed faster than now */
    sqlite3 *h;
    CHECK(sqlite3_open(db, &h) == SQLITE_OK &&
          sqlite3_exec(h, "UPDATE candidates SET source_hash = substr('ffff' || source_hash, 1, 16) WHERE family != "
                          "'cublas'; UPDATE winners SET median_ms = median_ms / 2", NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(h);
    gt_db *d = NULL;
    int stale = 0;
    CHECK(gt_db_open(db, GT_DB_READ, &d, err, sizeof err) == 0 && gt_db_winners(d, NULL, count_stale, &stale, err,
                                                                                sizeof err) == 0 && stale == 1);
    gt_db_close(d);
    setup(&o, db, &shape_a, 1);
    o.strategy = GT_STRATEGY_EXHAUSTIVE, o.prune_best = 0, o.cross = 0;
    fake.slow_name = "smem", fake.slow_family = 0.2;
    CHECK_MSG(gt_tune_run(&o, &s2, err, sizeof err) == 0, "%s", err);
    CHECK_MSG(s2.trials_run == s1.trials_run - 3 && s2.trials_skipped == 3, "rerun: %d run, %d skipped (first: %d)",
              s2.trials_run, s2.trials_skipped, s1.trials_run);
    stale = 0;
    CHECK(gt_db_open(db, GT_DB_READ, &d, err, sizeof err) == 0 &&
          gt_db_winners(d, NULL, count_stale, &stale, err, sizeof err) == 0 && stale == 0);
    gt_db_close(d);
    CHECK(count(db, "SELECT count(*) FROM v_winners WHERE family = 'smem'") == 1);
    gt_tune_summary_free(&s1);
    gt_tune_summary_free(&s2);
    gt_fixture_rm(db);
    free(db);
}

/* Issue 25 item 4: the compile pool takes a cached cubin only when this user's key verifies it; a cubin another
 * user put there (or anyone, around the cache) is compiled again, and the fresh one replaces it. */
GT_TEST(tune_compiles_again_what_it_did_not_cache_itself, GT_NEEDS_NONE)
{
    char *db = gt_tmp_path(".db"), err[512];
    gt_tune_opts o;
    gt_tune_summary s[4];
    const gt_shape shapes[4] = {shape_a, {256, 512, 384, 0, 0}, {384, 512, 256, 0, 0}, {512, 512, 256, 0, 0}};
    for (int i = 0; i < 4; ++i) {
        if (i == 2) { /* someone else's cubins: the MACs of another key */
            sqlite3 *h;
            CHECK(sqlite3_open(db, &h) == SQLITE_OK &&
                  sqlite3_exec(h, "UPDATE cubins SET mac = printf('%064d', 0)", NULL, NULL, NULL) == SQLITE_OK);
            sqlite3_close(h);
        }
        setup(&o, db, &shapes[i], 1);
        o.strategy = GT_STRATEGY_EXHAUSTIVE, o.prune_best = 0, o.cross = 0;
        CHECK_MSG(gt_tune_run(&o, &s[i], err, sizeof err) == 0, "%s", err);
    }
    CHECK_MSG(s[0].compiled > 0 && s[1].compiled == 0 && s[1].cache_hits > 0, "own cubins: %d compiled, %d hits",
              s[1].compiled, s[1].cache_hits);
    CHECK_MSG(s[2].cache_hits == 0 && s[2].compiled > 0, "foreign cubins: %d compiled, %d hits", s[2].compiled,
              s[2].cache_hits);
    CHECK_MSG(s[3].compiled == 0 && s[3].cache_hits > 0, "replaced: %d compiled, %d hits", s[3].compiled,
              s[3].cache_hits);
    for (int i = 0; i < 4; ++i) gt_tune_summary_free(&s[i]);
    gt_fixture_rm(db);
    free(db);
}

GT_TEST(tune_halving_finds_the_exhaustive_winner_for_less, GT_NEEDS_NONE)
{
    char *db = gt_tmp_path(".db"), err[512];
    gt_tune_opts o;
    gt_tune_summary s1, s2;
    setup(&o, db, &shape_b, 1);
    o.strategy = GT_STRATEGY_EXHAUSTIVE, o.prune_best = 0, o.cross = 0;
    CHECK_MSG(gt_tune_run(&o, &s1, err, sizeof err) == 0, "%s", err);
    const double exhaustive_ms = fake.gpu_ms;
    gt_fixture_rm(db);
    setup(&o, db, &shape_b, 1);
    o.cross = 0, o.model_stop = 0; /* halving alone: every candidate screened (the model's part: tune_model_*) */
    CHECK_MSG(gt_tune_run(&o, &s2, err, sizeof err) == 0, "%s", err);
    printf("    exhaustive %.1f ms of synthetic GPU time, halving %.1f ms (%.1f%%)\n", exhaustive_ms, fake.gpu_ms,
           100 * fake.gpu_ms / exhaustive_ms);
    CHECK(s1.nshapes == 1 && s2.nshapes == 1 && !strcmp(s1.shapes[0].params, s2.shapes[0].params));
    CHECK(fake.gpu_ms < 0.5 * exhaustive_ms); /* 87 candidates; the re-timing of the best 5 is most of it */
    int proxied = 0; /* 1024x1024x8192 takes 4.3 ms at the reference: screens time K = 2048 */
    for (int i = 0; i < fake.n; ++i) proxied += !fake.log[i].checks && fake.log[i].shape.k == 2048;
    CHECK_MSG(proxied > 50, "%d screens on the proxy", proxied);
    gt_tune_summary_free(&s1);
    gt_tune_summary_free(&s2);
    gt_fixture_rm(db);
    free(db);
}

static int cmp_call(const void *a, const void *b)
{
    const call *x = a, *y = b;
    int c = strcmp(x->family, y->family);
    return c ? c : strcmp(x->params, y->params);
}

/* The search trials' candidates as a sorted list: one sharded sweep each, merged, must equal the unsharded one. */
GT_TEST(tune_shards_cover_every_candidate_exactly_once, GT_NEEDS_NONE)
{
    char err[512];
    gt_tune_opts o;
    gt_tune_summary s;
    char *db = gt_tmp_path(".db");
    setup(&o, db, &shape_a, 1);
    o.strategy = GT_STRATEGY_EXHAUSTIVE, o.prune_best = o.prune_ratio = 0, o.topk = 0, o.cross = 0;
    CHECK_MSG(gt_tune_run(&o, &s, err, sizeof err) == 0, "%s", err);
    gt_tune_summary_free(&s);
    gt_fixture_rm(db);
    const int n = fake.n;
    call *all = malloc((size_t)n * sizeof *all);
    memcpy(all, fake.log, (size_t)n * sizeof *all);
    qsort(all, (size_t)n, sizeof *all, cmp_call);
    const int shards[] = {2, 3, 7};
    for (int k = 0; k < 3; ++k) {
        call *merged = malloc((size_t)n * 2 * sizeof *merged);
        int m = 0;
        for (int i = 0; i < shards[k]; ++i) {
            setup(&o, db, &shape_a, 1);
            o.strategy = GT_STRATEGY_EXHAUSTIVE, o.prune_best = o.prune_ratio = 0, o.topk = 0, o.cross = 0;
            o.shard_i = i, o.shard_n = shards[k];
            CHECK_MSG(gt_tune_run(&o, &s, err, sizeof err) == 0, "%s", err);
            gt_tune_summary_free(&s);
            gt_fixture_rm(db);
            for (int j = 0; j < fake.n && m < 2 * n; ++j) merged[m++] = fake.log[j];
        }
        qsort(merged, (size_t)m, sizeof *merged, cmp_call);
        int same = m == n;
        for (int j = 0; same && j < n; ++j) same = !cmp_call(&all[j], &merged[j]);
        CHECK_MSG(same, "%d shards: %d trials merged, %d unsharded, or another set", shards[k], m, n);
        free(merged);
    }
    free(all);
    free(db);
}

GT_TEST(tune_prunes_against_the_best_and_cuts_hopeless_families, GT_NEEDS_NONE)
{
    char *db = gt_tmp_path(".db"), err[512];
    gt_tune_opts o;
    gt_tune_summary s;
    setup(&o, db, &shape_b, 1);
    o.cross = 0, o.model_stop = 0; /* the family ceiling of a sweep that screens every candidate */
    fake.slow_family = 12; /* every naive candidate is over 3x the best: its probes decide for the family */
    CHECK_MSG(gt_tune_run(&o, &s, err, sizeof err) == 0, "%s", err);
    int naive_runs = 0;
    for (int i = 0; i < fake.n; ++i) naive_runs += !strcmp(fake.log[i].family, "naive");
    CHECK_MSG(naive_runs == 6, "naive ran %d times, want its 4 spread and 2 best-fit probes", naive_runs);
    CHECK(count(db, "SELECT count(*) FROM v_trials WHERE family = 'naive' AND status = 'pruned' AND "
                    "message LIKE 'family ceiling%'") == 42);
    CHECK(count(db, "SELECT count(*) FROM v_winners WHERE family = 'naive'") == 0);
    gt_tune_summary_free(&s);
    gt_fixture_rm(db);
    free(db);
}

/* A deep, skinny shape: the probes that decide for multistage include points that fill the GPU (split-K or
 * stream-K), not only the four spread over its space, which are one 64x64 tile on 132 SMs. */
GT_TEST(tune_probes_include_the_points_that_fill_the_gpu, GT_NEEDS_NONE)
{
    static const char *const fams[] = {"multistage", "cublas"};
    static const gt_shape deep = {64, 64, 65536, 0, 0};
    char *db = gt_tmp_path(".db"), err[512];
    gt_tune_opts o;
    gt_tune_summary s;
    setup(&o, db, &deep, 1);
    o.cross = 0, o.families = fams, o.nfamilies = 2, o.model_stop = 0;
    fake.slow_family = 12, fake.slow_name = "multistage";
    CHECK_MSG(gt_tune_run(&o, &s, err, sizeof err) == 0, "%s", err);
    const gt_family *ms = gt_family_find("multistage");
    int runs = 0, filling = 0;
    for (int i = 0; i < fake.n; ++i) {
        gt_params p;
        if (strcmp(fake.log[i].family, "multistage") || gt_params_parse(ms, fake.log[i].params, &p, err, sizeof err))
            continue;
        runs++;
        filling += gt_param_get(ms, &p, "SPLITK", 1) > 1 || gt_param_get(ms, &p, "SK", 0) > 0;
    }
    CHECK_MSG(runs == 6 && filling >= 2, "multistage ran %d probes, %d of them split-K or stream-K", runs, filling);
    gt_tune_summary_free(&s);
    gt_fixture_rm(db);
    free(db);
}

/* Cross-timing: the second shape's sweep times the first shape's winner there and its own winner on the first. */
GT_TEST(tune_cross_times_the_neighbours_winners, GT_NEEDS_NONE)
{
    char *db = gt_tmp_path(".db"), err[512];
    gt_tune_opts o;
    gt_tune_summary s;
    const gt_shape two[2] = {shape_a, shape_b};
    setup(&o, db, two, 2);
    CHECK_MSG(gt_tune_run(&o, &s, err, sizeof err) == 0, "%s", err);
    CHECK(s.nshapes == 2 && s.shapes[0].cross == 0);
    const int differ = strcmp(s.shapes[0].params, s.shapes[1].params) || strcmp(s.shapes[0].family, s.shapes[1].family);
    CHECK_MSG(s.shapes[1].cross == (differ ? 2 : 0), "%d cross trials", s.shapes[1].cross);
    CHECK(s.cross_trials == s.shapes[1].cross);
    gt_tune_summary_free(&s);
    gt_fixture_rm(db);
    free(db);
}

/* Raises the interrupt flag at the 20th trial event of the sweep (rounds may be shorter than 20). */
static void stop_after_20(const gt_trial_event *e, void *ctx)
{
    static volatile sig_atomic_t *flag;
    static int seen;
    if (!e) flag = ctx, seen = 0; /* the test's own call, before the sweep */
    else if (++seen >= 20 && flag) *flag = 1;
}

GT_TEST(tune_interrupt_keeps_finished_trials, GT_NEEDS_NONE)
{
    char *db = gt_tmp_path(".db"), err[512];
    gt_tune_opts o;
    gt_tune_summary s;
    static volatile sig_atomic_t flag;
    setup(&o, db, &shape_a, 1);
    flag = 0;
    o.interrupt = &flag, o.on_trial = stop_after_20, o.ctx = (void *)&flag;
    o.model_stop = 0; /* one round of every candidate, so the 20th trial is inside it */
    stop_after_20(NULL, (void *)&flag);
    CHECK(gt_tune_run(&o, &s, err, sizeof err) == 130);
    CHECK(s.interrupted && s.trials_run == 20 && s.nshapes == 0);
    CHECK(count(db, "SELECT count(*) FROM trials") == 20);
    gt_tune_summary_free(&s);
    gt_fixture_rm(db);
    free(db);
}

GT_TEST(tune_proxy_cuts_k_for_slow_shapes_only, GT_NEEDS_NONE)
{
    const gt_shape big = {8192, 8192, 8192, 0, 0}, small = {64, 64, 65536, 0, 0};
    CHECK(gt_tune_proxy(&big, 21.5, 1).k == 512);
    CHECK(gt_tune_proxy(&big, 21.5, 0).k == 8192);
    CHECK(gt_tune_proxy(&small, 0.034, 1).k == 65536);
    CHECK(gt_tune_proxy(&big, 1000, 1).k == 256);
    const gt_shape p = gt_tune_proxy(&big, 21.5, 1);
    CHECK(p.m == 8192 && p.n == 8192);
}

/* ---- the plan ahead of the GPU (tuner/ahead.c) ---- */

/* A planned candidate, as the fake GPU's log names a trial: the shape it ran on, family and params. */
static void log_item(const gt_ahead_item *e, void *ctx)
{
    (void)ctx;
    if (fake.n == fake.cap) fake.log = realloc(fake.log, (size_t)(fake.cap = fake.cap ? 2 * fake.cap : 1024) * sizeof *fake.log);
    call *c = &fake.log[fake.n++];
    snprintf(c->family, sizeof c->family, "%s", e->f->name);
    snprintf(c->params, sizeof c->params, "%s", e->params);
    c->shape = *e->shape;
    c->checks = e->cached;
}

static int cmp_trial(const void *a, const void *b)
{
    const call *x = a, *y = b;
    int c = memcmp(&x->shape, &y->shape, sizeof x->shape);
    return c ? c : cmp_call(a, b);
}

/* The log's trials of built families (the vendor's are asked of the GPU), sorted, into *out; their count. */
static int built_trials(call **out)
{
    int n = 0;
    *out = malloc(((size_t)fake.n + 1) * sizeof **out);
    for (int i = 0; i < fake.n; ++i)
        if (gt_family_find(fake.log[i].family)->build == GT_BUILD_NVRTC) (*out)[n++] = fake.log[i];
    qsort(*out, (size_t)n, sizeof **out, cmp_trial);
    return n;
}

/* Issue 30: precompile fills a fresh database's cache with exactly what a sweep of the same plan looks up (its
 * ids, and sm_90a for the arch-specific family), so the sweep compiles nothing; a second precompile neither. */
GT_TEST(tune_precompile_caches_what_the_sweep_looks_up, GT_NEEDS_NONE)
{
    static const char *const fams[] = {"naive", "tf32x3wg", "cublas"};
    const gt_shape two[2] = {shape_a, {64, 96, 32, 0, 0, 3}}; /* a batch has kernels of its own */
    char *db = gt_tmp_path(".db"), err[512];
    gt_tune_opts o;
    gt_tune_summary s;
    gt_ahead_summary a1, a2;
    gt_ahead_opts ao = {.arch = "sm_90", .compile = 1};
    setup(&o, db, two, 2);
    o.families = fams, o.nfamilies = 3, o.nlayouts = 2, o.layouts[1] = 3; /* nn and tt */
    CHECK_MSG(gt_ahead_run(&o, &ao, &a1, err, sizeof err) == 0, "%s", err);
    CHECK_MSG(a1.compiled == a1.sources && a1.sources > 0 && a1.cached == 0 && a1.failed == 0 && a1.device == 4,
              "%d sources: %d compiled, %d cached, %d failed, %d device", a1.sources, a1.compiled, a1.cached,
              a1.failed, a1.device);
    CHECK(count(db, "SELECT count(*) FROM cubins WHERE arch = 'sm_90a'") ==
          count(db, "SELECT count(DISTINCT source_hash) FROM cubins WHERE arch = 'sm_90a'"));
    CHECK(count(db, "SELECT count(*) FROM cubins WHERE arch = 'sm_90a'") > 0);
    CHECK(count(db, "SELECT count(*) FROM cubins") == a1.sources);
    CHECK_MSG(gt_ahead_run(&o, &ao, &a2, err, sizeof err) == 0, "%s", err);
    CHECK_MSG(a2.compiled == 0 && a2.cached == a1.sources, "again: %d compiled, %d cached", a2.compiled, a2.cached);
    setup(&o, db, two, 2);
    o.families = fams, o.nfamilies = 3, o.nlayouts = 2, o.layouts[1] = 3;
    o.strategy = GT_STRATEGY_EXHAUSTIVE, o.prune_best = o.prune_ratio = 0, o.topk = 0, o.cross = 0;
    CHECK_MSG(gt_tune_run(&o, &s, err, sizeof err) == 0, "%s", err);
    CHECK_MSG(s.compiled == 0 && s.cache_hits == a1.sources, "the sweep: %d compiled, %d of %d from the cache",
              s.compiled, s.cache_hits, a1.sources);
    gt_tune_summary_free(&s);
    gt_fixture_rm(db);
    free(db);
}

/* Issue 30: the dry run of each shard lists exactly the candidates that shard's sweep runs (the vendor's aside:
 * asked of the GPU), with a device family before the built one in the registry, and the shards partition the
 * whole. */
GT_TEST(tune_dry_run_lists_each_shards_trials, GT_NEEDS_NONE)
{
    static const char *const fams[] = {"tf32x3wg", "cublas", "coalesced"};
    const gt_shape two[2] = {shape_a, {256, 512, 384, 0, 0}};
    char *db = gt_tmp_path(".db"), err[512];
    gt_tune_opts o;
    gt_tune_summary s;
    gt_ahead_summary a;
    gt_ahead_opts ao = {.arch = "sm_90", .on_item = log_item};
    call *whole = NULL, *planned = NULL, *ran = NULL;
    int nwhole = 0, total = 0;
    for (int i = -1; i < 4; ++i) { /* -1: unsharded; 4 shards, as the vendor's 3 candidates would shift a share */
        setup(&o, db, two, 2);
        o.families = fams, o.nfamilies = 3, o.nlayouts = 2, o.layouts[1] = 2; /* nn and tn */
        o.strategy = GT_STRATEGY_EXHAUSTIVE, o.prune_best = o.prune_ratio = 0, o.topk = 0, o.cross = 0;
        o.shard_i = i < 0 ? 0 : i, o.shard_n = i < 0 ? 1 : 4;
        CHECK_MSG(gt_ahead_run(&o, &ao, &a, err, sizeof err) == 0, "%s", err);
        const int np = built_trials(&planned);
        CHECK_MSG(np == a.candidates && a.shapes == 4 && a.device == 4, "%d listed, %d counted", np, a.candidates);
        fake.n = 0;
        CHECK_MSG(gt_tune_run(&o, &s, err, sizeof err) == 0, "%s", err);
        gt_tune_summary_free(&s);
        gt_fixture_rm(db);
        const int nr = built_trials(&ran);
        int same = np == nr;
        for (int j = 0; same && j < np; ++j) same = !cmp_trial(&planned[j], &ran[j]);
        CHECK_MSG(same, "shard %d: %d listed, %d run, or another set", i, np, nr);
        if (i < 0) whole = planned, nwhole = np, planned = NULL;
        else total += np;
        for (int j = 0; i >= 0 && j < np; ++j)
            CHECK(bsearch(&planned[j], whole, (size_t)nwhole, sizeof *whole, cmp_trial));
        free(planned), free(ran);
    }
    CHECK_MSG(total == nwhole && nwhole > 0, "the shards list %d, the whole %d", total, nwhole);
    free(whole);
    free(db);
}

/* Each math class keeps its own winner, so its candidates race each other only: with a class ten times faster in
 * the same sweep (tf32x3wg here), halving's screens, the guided screen's stops, the prune cutoffs and the family
 * ceilings still leave the FP32 families their own survivors, and the FP32 winner is stored beside the tf32x3 one
 * (screening everything: the faster FP32 candidate over the vendor's). Before, the fast class's survivors crowded every FP32 candidate out
 * and the shape had no FP32 winner (a program then ran it on cuBLAS, untuned). */
GT_TEST(tune_each_math_class_races_only_itself, GT_NEEDS_NONE)
{
    static const char *const fams[] = {"multistage", "tf32x3wg", "cublas"};
    char *db = gt_tmp_path(".db"), err[512];
    gt_tune_opts o;
    gt_tune_summary s;
    const gt_shape big = {2048, 2048, 2048, 0, 0};
    for (int guided = 0; guided < 2; ++guided) {
        setup(&o, db, &big, 1);
        o.families = fams, o.nfamilies = 3, o.cross = 0;
        o.model_stop = guided ? 1.1 : 0;
        fake.slow_name = "tf32x3wg", fake.slow_family = 0.1; /* ten times faster than any FP32 candidate */
        CHECK_MSG(gt_tune_run(&o, &s, err, sizeof err) == 0, "%s", err);
        /* the shape's result names both: FP32's winner first, tf32x3's in also (tune's table prints it) */
        CHECK(s.nshapes == 1 && s.shapes[0].family[0] && strcmp(s.shapes[0].family, "tf32x3wg") &&
              s.shapes[0].nalso == 1 && s.shapes[0].also[0].math == GT_MATH_TF32X3 &&
              !strcmp(s.shapes[0].also[0].family, "tf32x3wg") && s.shapes[0].also[0].median_ms > 0);
        gt_tune_summary_free(&s);
        CHECK_MSG(count(db, "SELECT count(*) FROM v_winners WHERE math = 'tf32x3' AND family = 'tf32x3wg'") == 1,
                  "guided %d: no tf32x3 winner", guided);
        CHECK_MSG(count(db, "SELECT count(*) FROM v_winners WHERE math = 'fp32'") == 1, "guided %d: no FP32 winner",
                  guided);
        if (!guided) /* every candidate screened: the best multistage point (about 1.0 x base) beats the vendor's 1.05 */
            CHECK(count(db, "SELECT count(*) FROM v_winners WHERE math = 'fp32' AND family = 'multistage'") == 1);
        gt_fixture_rm(db);
    }
    free(db);
}

/* A family whose time does not shrink with K (ozaki: screen_full) is screened at the full shape, not on halving's
 * proxy, and ranked there at the proxy's scale: faster than every other candidate of its class at full size, it
 * wins, though on the proxy it would look three times slower than they. */
GT_TEST(tune_screens_a_fixed_cost_family_at_the_full_shape, GT_NEEDS_NONE)
{
    static const char *const fams[] = {"tf32x3wg", "ozaki", "cublas"};
    char *db = gt_tmp_path(".db"), err[512];
    gt_tune_opts o;
    gt_tune_summary s;
    const gt_shape big = {8192, 8192, 8192, 0, 0};
    setup(&o, db, &big, 1);
    o.families = fams, o.nfamilies = 3, o.cross = 0, o.model_stop = 0;
    fake.fixed_ms = 0.3 * base_ms(&big);
    CHECK_MSG(gt_tune_run(&o, &s, err, sizeof err) == 0, "%s", err);
    gt_tune_summary_free(&s);
    int ozaki = 0, proxied = 0;
    for (int i = 0; i < fake.n; ++i) {
        if (!strcmp(fake.log[i].family, "ozaki")) {
            ozaki++;
            CHECK(fake.log[i].shape.k == big.k);
        } else {
            proxied += fake.log[i].shape.k < big.k;
        }
    }
    CHECK_MSG(ozaki >= 4 && proxied > 5, "%d ozaki trials, %d on the proxy", ozaki, proxied);
    CHECK(count(db, "SELECT count(*) FROM v_winners WHERE math = 'tf32x3' AND family = 'ozaki'") == 1);
    gt_fixture_rm(db);
    free(db);
}

/* Counts the points whose family finds them applicable to the call in ctx. */
typedef struct {
    gt_call call;
    int n, general, variants; /* points the call admits, as planned (one per variant) and as listed; the
                                 variants that differ from their point */
} applicable_count;

static int count_applicable(const gt_family *f, const gt_params *p, void *ctx)
{
    applicable_count *c = ctx;
    gt_params v = *p;
    const int own = !f->specialize || f->specialize(&v, &c->call); /* else another point's variant */
    const int ok = !f->applicable || f->applicable(p, &c->call);
    c->n += ok && own;
    c->general += ok;
    c->variants += ok && own && memcmp(&v, p, sizeof v) != 0;
    return 0;
}

/* Without sizes, precompile plans the default space: every legal point of every family that the layout admits
 * (multistage's KT wants B stored with k contiguous, so nn plans fewer than all), whatever the size rules (its
 * split-K and stream-K caps); each as a shape of whole tiles takes it (multistage's EVEN variant) and, with
 * general, as the space lists it too, for shapes of partial tiles. */
GT_TEST(tune_precompile_default_shape_admits_the_whole_space, GT_NEEDS_NONE)
{
    static const char *const fams[] = {"multistage"};
    const gt_shape any = gt_ahead_any_shape();
    gt_tune_opts o;
    gt_ahead_summary a;
    gt_ahead_opts ao = {.arch = "sm_90"};
    char err[512];
    gt_limits l;
    gt_limits_for_arch("sm_90", &l);
    setup(&o, NULL, &any, 1);
    o.families = fams, o.nfamilies = 1;
    CHECK_MSG(gt_ahead_run(&o, &ao, &a, err, sizeof err) == 0, "%s", err);
    applicable_count nn = {gt_call_tight(&any), 0, 0, 0};
    const int all = gt_enumerate(gt_family_find("multistage"), &l, count_applicable, &nn);
    CHECK_MSG(a.candidates == nn.n && a.sources == nn.n && nn.n < nn.general && nn.general < all,
              "%d planned, %d of %d listed, %d in all for nn", a.candidates, nn.n, nn.general, all);
    CHECK_MSG(nn.variants == nn.n, "%d of %d with a whole-tile variant (768 is whole tiles of all)", nn.variants, nn.n);
    ao.general = 1;
    CHECK_MSG(gt_ahead_run(&o, &ao, &a, err, sizeof err) == 0, "%s", err);
    CHECK_MSG(a.candidates == nn.n && a.sources == nn.general + nn.variants, "general: %d planned, %d sources, want %d",
              a.candidates, a.sources, nn.general + nn.variants);
    ao.arch = "sm_90a";
    CHECK(gt_ahead_run(&o, &ao, &a, err, sizeof err) == -1 && strstr(err, "sm_90a"));
}

/* The winner of a re-timing: the fastest, but anything displaces the library's own choice (its family's first
 * candidate) only by a lead of more than GT_OWN_MARGIN (a smaller one is noise that could serve a program slower
 * than cuBLAS); with the library's own choice not re-timed, its first-listed candidate there is the reference. */
GT_TEST(tune_own_kernel_wins_only_by_a_margin, GT_NEEDS_NONE)
{
    const gt_family *own = gt_family_find("multistage"), *vendor = gt_family_find("cublas");
    CHECK(own && vendor && !own->backend && vendor->backend);
    gt_item it[5] = {{.f = own, .seq = 5, .status = GT_ST_OK, .median_ms = 1.000},
                     {.f = vendor, .seq = 1, .status = GT_ST_OK, .median_ms = 1.005}, /* cuBLAS's own choice */
                     {.f = own, .seq = 6, .status = GT_ST_OK, .median_ms = 0.990},
                     {.f = own, .seq = 7, .status = GT_ST_WRONG, .median_ms = 0.5},
                     {.f = vendor, .seq = 2, .status = GT_ST_OK, .median_ms = 0.995}}; /* a cuBLASLt algorithm */
    int idx[] = {3, 2, 0, 1, 4};
    CHECK(gt_pick_winner(it, idx, 5) == 1);   /* 0.990 leads 1.005 by 1.5%, the algorithm by 1%: cuBLAS's own */
    it[1].median_ms = 1.030;                  /* a lead of 4%: ours */
    CHECK(gt_pick_winner(it, idx, 5) == 2);
    it[4].median_ms = 0.950;                  /* the algorithm leads by 8%: it wins */
    CHECK(gt_pick_winner(it, idx, 5) == 4);
    it[4].median_ms = 0.995, it[1].median_ms = 0.980; /* cuBLAS's own is fastest outright */
    CHECK(gt_pick_winner(it, idx, 5) == 1);
    int no_own_choice[] = {2, 0, 4};          /* its own choice not re-timed: the algorithm is the reference */
    CHECK(gt_pick_winner(it, no_own_choice, 3) == 4);
    CHECK(gt_pick_winner(it, idx, 3) == 2);   /* no library candidate re-timed: the fastest */
    CHECK(gt_pick_winner(it, idx, 1) == -1);  /* nothing OK */
    /* paired re-timings: each one's time over cuBLAS's ranks them where every OK item has one, else median_ms */
    it[0].rel = 0.97, it[1].rel = 1.000, it[2].rel = 1.01, it[4].rel = 0.99;
    CHECK(gt_pick_winner(it, idx, 5) == 0);   /* 0.97 leads cuBLAS's own by 3% */
    it[0].rel = 0.99, it[1].median_ms = 1.030; /* by 1%: cuBLAS's own, whose median is now the slowest */
    CHECK(gt_pick_winner(it, idx, 5) == 1);
    it[2].rel = 0;                            /* one without: medians rank them all (0.990 leads 1.030 by 4%) */
    CHECK(gt_pick_winner(it, idx, 5) == 2);
    it[2].rel = 1.01, it[3].rel = 0.5;        /* a failed item wins nothing, whatever its rel */
    CHECK(gt_pick_winner(it, idx, 5) == 1);
    /* a library family of ours (ozaki) is no reference: in its class's race the fastest wins by any lead */
    const gt_family *oz = gt_family_find("ozaki"), *wg = gt_family_find("tf32x3wg");
    CHECK(oz && wg && oz->backend && !oz->vendor);
    gt_item cls[2] = {{.f = oz, .seq = 1, .status = GT_ST_OK, .median_ms = 1.005},
                      {.f = wg, .seq = 2, .status = GT_ST_OK, .median_ms = 1.000}};
    int both[] = {0, 1};
    CHECK(gt_pick_winner(cls, both, 2) == 1);
    cls[1].f = oz;                            /* two ozaki points: the faster, not the first listed */
    CHECK(gt_pick_winner(cls, both, 2) == 1);
}

/* Halving's first screen of a candidate is the median of three runs (one run's spread kept lanes screening on noise),
 * never fewer. */
GT_TEST(tune_first_screens_take_three_runs, GT_NEEDS_NONE)
{
    char *db = gt_tmp_path(".db"), err[512];
    gt_tune_opts o;
    gt_tune_summary s;
    setup(&o, db, &shape_a, 1);
    o.cross = 0;
    CHECK_MSG(gt_tune_run(&o, &s, err, sizeof err) == 0, "%s", err);
    int first = 0, later = 0, other = 0;
    for (int i = 0; i < fake.n; ++i) {
        const call *c = &fake.log[i];
        if (c->checks || c->warmup != 1) continue; /* validations and re-timings */
        first += c->reps == 3, later += c->reps == 6 || c->reps == o.reps, other += c->reps < 3;
    }
    CHECK_MSG(first > 10 && other == 0, "screens of 3 runs %d, of 6 or %d %d, of fewer %d", first, o.reps, later,
              other);
    gt_tune_summary_free(&s);
    gt_fixture_rm(db);
    free(db);
}

/* A sweep of shape_a over naive and cuBLAS only, no cross-timing, into db (setup()'s fake GPU, to be adjusted). */
static void setup_naive(gt_tune_opts *o, const char *db)
{
    static const char *const fams[] = {"naive", "cublas"};
    setup(o, db, &shape_a, 1);
    o->families = fams, o->nfamilies = 2, o->cross = 0;
}

/* A GPU whose speed drifts over the re-timing (each 1% faster than the one before, as clocks settle) weighs on every
 * re-timed candidate alike: the set is timed twice, the second time in reverse, and each keeps the mean. Our
 * kernels 1% slower than cuBLAS's own choice then leave it the winner; timed once in rank order, cuBLAS's first,
 * ours would have looked 2-3% faster and won. */
GT_TEST(tune_retiming_weighs_a_drifting_gpu_on_every_candidate, GT_NEEDS_NONE)
{
    char *db = gt_tmp_path(".db"), err[512];
    gt_tune_opts o;
    gt_tune_summary s;
    setup_naive(&o, db);
    fake.own_q = 1.06, fake.drift = -0.01;
    CHECK_MSG(gt_tune_run(&o, &s, err, sizeof err) == 0, "%s", err);
    CHECK_MSG(s.nshapes == 1 && !strcmp(s.shapes[0].family, "cublas"), "winner %s", s.shapes[0].family);
    CHECK_MSG(s.retimed == o.topk && fake.retimes == 2 * s.retimed, "%d re-timed, %d re-timings", s.retimed,
              fake.retimes);
    int first = -1, last = -1, n = 0; /* the re-timings in the log: the set, then the set reversed */
    for (int i = 0; i < fake.n; ++i)
        if (!fake.log[i].checks && fake.log[i].shape.k == shape_a.k && (first < 0 || i > last)) {
            if (first < 0) first = i;
            last = i, n++;
        }
    CHECK_MSG(n >= 2 * s.retimed && !strcmp(fake.log[last].family, fake.log[last - 2 * s.retimed + 1].family) &&
                  !strcmp(fake.log[last].params, fake.log[last - 2 * s.retimed + 1].params),
              "%d full-size timings", n);
    gt_tune_summary_free(&s);
    gt_fixture_rm(db);
    free(db);
}

/* The re-timing pairs each run with one of cuBLAS, as a program and gemmtune bench interleave them, and ranks the
 * finalists by their time over cuBLAS's there: our kernels 5% faster than cuBLAS's own choice back to back but 4%
 * slower once paired (as some split-K kernels run) lose to it; unpaired they would have won. Nothing else is
 * paired. */
GT_TEST(tune_retiming_pairs_each_run_with_cublas, GT_NEEDS_NONE)
{
    char *db = gt_tmp_path(".db"), err[512];
    gt_tune_opts o;
    gt_tune_summary s;
    for (int pass = 0; pass < 2; ++pass) {
        setup_naive(&o, db);
        o.strategy = GT_STRATEGY_EXHAUSTIVE; /* every candidate validated: cuBLAS's own choice reaches the end */
        fake.own_q = 1.0, fake.paired_name = "naive", fake.paired_q = pass ? 1.04 : 1.0;
        CHECK_MSG(gt_tune_run(&o, &s, err, sizeof err) == 0, "%s", err);
        CHECK_MSG(s.nshapes == 1 && !strcmp(s.shapes[0].family, pass ? "cublas" : "naive"), "paired x %.2f: winner %s",
                  fake.paired_q, s.shapes[0].family);
        int paired = 0, wrong = 0;
        for (int i = 0; i < fake.n; ++i) {
            const int retiming = !fake.log[i].checks && fake.log[i].warmup == 2;
            paired += fake.log[i].paired, wrong += fake.log[i].paired != retiming;
        }
        CHECK_MSG(paired == 2 * s.retimed && paired > 0 && !wrong, "%d paired runs, %d requests paired or not wrongly",
                  paired, wrong);
        gt_tune_summary_free(&s);
        gt_fixture_rm(db);
    }
    free(db);
}

/* A finalist that faults in the re-timing's first pass is out: it is not timed again in the second, and cannot
 * win however fast it ran before. */
GT_TEST(tune_retiming_keeps_a_fault_out, GT_NEEDS_NONE)
{
    char *db = gt_tmp_path(".db"), err[512];
    gt_tune_opts o;
    gt_tune_summary s;
    setup_naive(&o, db);
    CHECK_MSG(gt_tune_run(&o, &s, err, sizeof err) == 0, "%s", err);
    char first[256] = ""; /* the fastest finalist: re-timed first */
    for (int i = 0; i < fake.n && !first[0]; ++i)
        if (!fake.log[i].checks && fake.log[i].warmup == 2) snprintf(first, sizeof first, "%s", fake.log[i].params);
    const int k = s.retimed;
    CHECK_MSG(first[0] && !strcmp(s.shapes[0].params, first), "winner %s, first re-timed %s", s.shapes[0].params,
              first);
    gt_tune_summary_free(&s);
    gt_fixture_rm(db);
    setup_naive(&o, db);
    fake.fail_retimes = 1;
    CHECK_MSG(gt_tune_run(&o, &s, err, sizeof err) == 0, "%s", err);
    CHECK_MSG(strcmp(s.shapes[0].params, first) && s.retimed == k && fake.retimes == 2 * k - 1,
              "winner %s, %d re-timed, %d re-timings", s.shapes[0].params, s.retimed, fake.retimes);
    gt_tune_summary_free(&s);
    gt_fixture_rm(db);
    free(db);
}

/* The fastest built candidate's time among the stored trials, and the winner's, at full size. */
static double best_ok_ms(const char *db)
{
    sqlite3 *h;
    sqlite3_stmt *st;
    double ms = -1;
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h, "SELECT min(median_ms) FROM v_winners", -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) ms = sqlite3_column_double(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(h);
    return ms;
}

static const gt_shape s2048 = {2048, 2048, 2048, 0, 0};

/* The guided screen's tests: multistage, warptile and cublas on shape s (one layout), no cross-timings, every built
 * candidate at the cost model's time (within 3%), warptile's times that times `warptile`. */
static void model_setup(gt_tune_opts *o, const char *db, const gt_shape *s, double warptile)
{
    static const char *const fams[] = {"multistage", "warptile", "cublas"};
    setup(o, db, s, 1);
    o->cross = 0, o->families = fams, o->nfamilies = 3;
    fake.modelled = 1, fake.slow_name = "warptile", fake.slow_family = warptile;
}

/* Where times follow the cost model to within 3% either way, at random, the guided screen finds the winner of a
 * sweep that screens every candidate, to within that error, for a fraction of the compiles (on recorded H100 times,
 * tests/perf/replay.c, it finds the same winners: docs/BENCHMARKS.md); what it left is stored as 'pruned' with the model's numbers, and a
 * rerun resumes with nothing to do. */
GT_TEST(tune_model_guided_screen_finds_the_winner_for_fewer_compiles, GT_NEEDS_NONE)
{
    static const gt_shape shapes[] = {{2048, 2048, 2048, 0, 0}, {777, 1531, 2049, 0, 0}};
    for (int i = 0; i < 2; ++i) {
        char *db = gt_tmp_path(".db"), err[512];
        gt_tune_opts o;
        gt_tune_summary all, guided, again;
        model_setup(&o, db, &shapes[i], 1.3); /* as on an H100 */
        o.model_stop = 0;
        CHECK_MSG(gt_tune_run(&o, &all, err, sizeof err) == 0, "%s", err);
        const double all_ms = best_ok_ms(db);
        gt_fixture_rm(db);
        model_setup(&o, db, &shapes[i], 1.3);
        CHECK_MSG(gt_tune_run(&o, &guided, err, sizeof err) == 0, "%s", err);
        const double guided_ms = best_ok_ms(db);
        printf("    %dx%dx%d: every candidate screened: %d compiled, winner %.4f ms; guided: %d compiled, %d left "
               "unscreened, winner %.4f ms\n", shapes[i].m, shapes[i].n, shapes[i].k, all.compiled, all_ms,
               guided.compiled, guided.unscreened, guided_ms);
        CHECK(all_ms > 0 && guided_ms > 0 && guided_ms <= 1.035 * all_ms); /* the made-up error's reach */
        CHECK(guided.compiled > 0 && guided.compiled < all.compiled / 4);
        CHECK(guided.compiled + guided.unscreened >= all.compiled); /* some compiled ahead, then left */
        CHECK(count(db, "SELECT count(*) FROM v_trials WHERE status = 'pruned' AND message LIKE "
                        "'not screened: the cost model%'") == guided.unscreened);
        CHECK_MSG(count(db, "SELECT count(*) FROM cubins") == guided.compiled, "%lld cubins cached of %d compiled",
                  count(db, "SELECT count(*) FROM cubins"), guided.compiled); /* also those compiled ahead, unused */
        model_setup(&o, db, &shapes[i], 1.3);
        CHECK_MSG(gt_tune_run(&o, &again, err, sizeof err) == 0, "%s", err);
        CHECK_MSG(again.compiled == 0 && again.unscreened == 0, "rerun: %d compiled, %d left unscreened",
                  again.compiled, again.unscreened);
        gt_tune_summary_free(&all);
        gt_tune_summary_free(&guided);
        gt_tune_summary_free(&again);
        gt_fixture_rm(db);
        free(db);
    }
}

/* The naive kernel with KU=4 compiles slowly here (a quarter second), any other at once. */
static int slow_ku4_compile(const char *src, const char *arch, gt_cubin *out, char *err, size_t errlen)
{
    if (strstr(src, "#define KU 4")) nanosleep(&(struct timespec){0, 250 * 1000 * 1000}, NULL);
    return fake_compile(src, arch, out, err, errlen);
}

/* What a guided screen waits on when nothing it planned has compiled: the first of its compiles to finish, not the
 * first it asked for; and nothing when none of them is wanted any more. */
GT_TEST(tune_pool_wait_any_returns_the_first_compile_done, GT_NEEDS_NONE)
{
    const gt_family *f = gt_family_find("naive");
    gt_params slow, fast;
    char hash[17], err[256];
    int hit = 0;
    CHECK(gt_params_parse(f, "BX=32,BY=8,KU=4", &slow, err, sizeof err) == 0);
    CHECK(gt_params_parse(f, "BX=32,BY=8,KU=1", &fast, err, sizeof err) == 0);
    gt_pool *p = gt_pool_new(NULL, "sm_90", slow_ku4_compile, 2);
    int jobs[2] = {gt_pool_add(p, f, &slow, 0, hash, &hit, err, sizeof err),
                   gt_pool_add(p, f, &fast, 0, hash, &hit, err, sizeof err)};
    CHECK(jobs[0] >= 0 && jobs[1] >= 0 && jobs[0] != jobs[1]);
    CHECK_MSG(gt_pool_wait_any(p, jobs, 2, NULL) == -1, "nothing wanted: no wait");
    gt_pool_want(p, jobs, 2); /* the slow one first */
    double waited = 0;
    const int first = gt_pool_wait_any(p, jobs, 2, &waited);
    CHECK_MSG(first == 1 && !gt_pool_ready(p, jobs[0]) && waited < 0.2, "first done: %d after %.3f s", first, waited);
    CHECK(gt_pool_wait(p, jobs[0], NULL) && gt_pool_wait_any(p, jobs, 1, NULL) == 0);
    gt_pool_free(p, NULL);
}

/* A family whose first screens were all cut as too slow (pruned: no time of its own to be its best) stops there;
 * only a family near the best is screened on to MIN_SCREENS (guide.c). At 8192^3 the naive kernels' screens took
 * 4 s of GPU time so. */
GT_TEST(tune_model_stops_a_family_whose_screens_were_all_cut, GT_NEEDS_NONE)
{
    char *db = gt_tmp_path(".db"), err[512];
    gt_tune_opts o;
    gt_tune_summary sum;
    model_setup(&o, db, &s2048, 20);
    CHECK_MSG(gt_tune_run(&o, &sum, err, sizeof err) == 0, "%s", err);
    const long long cut = count(db, "SELECT count(*) FROM v_trials WHERE family = 'warptile' AND status = 'pruned' "
                                    "AND median_ms > 0"),
                    ran = count(db, "SELECT count(*) FROM v_trials WHERE family = 'multistage' AND median_ms > 0");
    CHECK_MSG(cut > 0 && cut <= 4 && ran > 12, "warptile screens cut as too slow: %lld; multistage screens %lld", cut,
              ran);
    CHECK(count(db, "SELECT count(*) FROM v_winners WHERE family = 'warptile'") == 0);
    gt_tune_summary_free(&sum);
    gt_fixture_rm(db);
    free(db);
}

struct pick {
    const gt_shape *s;
    const gt_limits *l;
    double best;
    gt_params p;
};

static int pick_fastest(const gt_family *f, const gt_params *p, void *ctx)
{
    struct pick *c = ctx;
    const double t = gt_model_time(f, p, c->s, c->l);
    if (t > 0 && (c->best <= 0 || t < c->best)) c->best = t, c->p = *p;
    return 0;
}

/* The candidate of family f that the cost model predicts fastest at s (the first of its lane, guide.c); 0, or -1
 * when none has a prediction. */
static int best_predicted(const gt_family *f, const gt_shape *s, gt_params *out)
{
    gt_limits l;
    gt_limits_for_arch("sm_90", &l);
    l.sm_count = 132;
    struct pick ctx = {s, &l, 0, {{0}}};
    gt_enumerate(f, &l, pick_fastest, &ctx);
    *out = ctx.p;
    return ctx.best > 0 ? 0 : -1;
}

/* A guided sweep of 2048^3 by multistage, warptile and cublas, compiled by compile on four threads, where
 * warptile's best-predicted kernel (its params in fake.odd_first, its source fake.odd_src) runs at `warptile` times
 * its prediction and every other warptile kernel at odd_factor times that. Checks the sweep ran; the caller checks
 * its winner, then frees sum. */
static void odd_warptile_sweep(double warptile, double odd_factor, gt_compile_fn compile, gt_tune_summary *sum)
{
    char *db = gt_tmp_path(".db"), err[512];
    gt_tune_opts o;
    model_setup(&o, db, &s2048, warptile);
    o.compile = compile, o.jobs = 4;
    fake.odd_name = "warptile", fake.odd_factor = odd_factor;
    const gt_family *wt = gt_family_find("warptile");
    gt_params first;
    CHECK(best_predicted(wt, &s2048, &first) == 0);
    gt_params_format(wt, &first, fake.odd_first, sizeof fake.odd_first);
    CHECK_MSG((fake.odd_src = gt_render(wt, &first, 0, 0, 0, err, sizeof err)) != NULL, "%s", err);
    CHECK_MSG(gt_tune_run(&o, sum, err, sizeof err) == 0, "%s", err);
    free(fake.odd_src);
    fake.odd_src = NULL;
    gt_fixture_rm(db);
    free(db);
}

/* fake.odd_src compiles in 100 ms here, any other source at once. */
static int odd_first_slow_compile(const char *src, const char *arch, gt_cubin *out, char *err, size_t errlen)
{
    if (fake.odd_src && !strcmp(src, fake.odd_src)) nanosleep(&(struct timespec){0, 100 * 1000 * 1000}, NULL);
    return fake_compile(src, arch, out, err, errlen);
}

/* A lane is not judged before its best-predicted candidate has a screen: the calibration is the lane's smallest
 * measured-over-predicted ratio, and the screens that come first (the compiles done first) may be of the candidates
 * the model predicts worst. Here warptile's best-predicted kernel is the fastest of all and compiles last, every
 * other warptile kernel runs at three times its prediction: judged on those, the lane stopped with multistage the
 * winner (tf32x3wg's 128 x 16 tiles, screened first at 3.5 times its 128 x 128's, so once lost 8192 x 3072 x 768). */
GT_TEST(tune_model_judges_a_family_only_once_its_best_prediction_is_screened, GT_NEEDS_NONE)
{
    gt_tune_summary sum = {0};
    odd_warptile_sweep(0.7, 3, odd_first_slow_compile, &sum);
    CHECK_MSG(sum.nshapes == 1 && !strcmp(sum.shapes[0].family, "warptile") &&
                  !strcmp(sum.shapes[0].params, fake.odd_first),
              "winner %s %s, not warptile %s", sum.nshapes ? sum.shapes[0].family : "-",
              sum.nshapes ? sum.shapes[0].params : "-", fake.odd_first);
    gt_tune_summary_free(&sum);
}

/* A warptile kernel compiles in 60 ms here but fake.odd_src, at once; any other family's at once. */
static int odd_first_fast_compile(const char *src, const char *arch, gt_cubin *out, char *err, size_t errlen)
{
    if (strstr(src, "warptile") && !(fake.odd_src && !strcmp(src, fake.odd_src)))
        nanosleep(&(struct timespec){0, 60 * 1000 * 1000}, NULL);
    return fake_compile(src, arch, out, err, errlen);
}

/* A lane is judged on two screens, its best prediction's and the most unlike it of its contenders (guide.c,
 * second_opinion()): here warptile's best-predicted kernel, compiled first, runs at three times its prediction,
 * every other warptile kernel at its own, the fastest of all. Judged on that one screen, the lane stopped while the
 * rest compiled, and multistage won (skinny's cluster variant so stopped its family at 24 x 4096 x 11008). */
GT_TEST(tune_model_judges_a_family_on_a_second_opinion, GT_NEEDS_NONE)
{
    gt_tune_summary sum = {0};
    odd_warptile_sweep(2.1, 1 / 3.0, odd_first_fast_compile, &sum); /* the rest at 0.7 x the model, it at 2.1 x */
    CHECK_MSG(sum.nshapes == 1 && !strcmp(sum.shapes[0].family, "warptile") &&
                  strcmp(sum.shapes[0].params, fake.odd_first),
              "winner %s %s (warptile's best prediction: %s)", sum.nshapes ? sum.shapes[0].family : "-",
              sum.nshapes ? sum.shapes[0].params : "-", fake.odd_first);
    gt_tune_summary_free(&sum);
}

/* Every kernel compiles in 20 ms here: a guided screen waits for compiles. */
static int slow_compile(const char *src, const char *arch, gt_cubin *out, char *err, size_t errlen)
{
    nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    return fake_compile(src, arch, out, err, errlen);
}

/* While a guided screen waits for compiles, the GPU validates and times at full size the fastest screened
 * candidates (validate_early, guide.c): validated trials come before the screen's last, the winner is the same as
 * without the wait, and the validated ones are not screened again. */
GT_TEST(tune_model_validates_the_leaders_while_compiles_run, GT_NEEDS_NONE)
{
    char *db = gt_tmp_path(".db"), *db2 = gt_tmp_path(".db"), err[512];
    gt_tune_opts o;
    gt_tune_summary waited, quick;
    model_setup(&o, db, &s2048, 1.3);
    o.compile = slow_compile, o.jobs = 4;
    CHECK_MSG(gt_tune_run(&o, &waited, err, sizeof err) == 0, "%s", err);
    const long long early = count(db, "SELECT count(*) FROM trials WHERE status = 'ok' AND id < (SELECT max(id) FROM "
                                      "trials WHERE status = 'screened')"),
                    twice = count(db, "SELECT count(*) FROM trials a JOIN trials b ON a.candidate_id = b.candidate_id "
                                      "AND b.id > a.id WHERE a.status = 'ok' AND b.status = 'screened'");
    CHECK_MSG(early > 0 && early <= 4 * o.topk && twice == 0, "%lld validated before the last screen, %lld screened "
              "after validation", early, twice);
    model_setup(&o, db2, &s2048, 1.3);
    CHECK_MSG(gt_tune_run(&o, &quick, err, sizeof err) == 0, "%s", err);
    CHECK_MSG(waited.nshapes == 1 && quick.nshapes == 1 && !strcmp(waited.shapes[0].params, quick.shapes[0].params),
              "winners %s / %s", waited.nshapes ? waited.shapes[0].params : "-",
              quick.nshapes ? quick.shapes[0].params : "-");
    gt_tune_summary_free(&waited);
    gt_tune_summary_free(&quick);
    gt_fixture_rm(db);
    gt_fixture_rm(db2);
    free(db);
    free(db2);
}

/* A guided screen cut short (Ctrl-C) stores no 'not screened' verdict for what it had not reached: the rerun
 * resumes the screen where it stopped and finishes with a winner. */
GT_TEST(tune_model_guided_screen_resumes_after_an_interrupt, GT_NEEDS_NONE)
{
    static volatile sig_atomic_t flag;
    char *db = gt_tmp_path(".db"), err[512];
    gt_tune_opts o;
    gt_tune_summary cut, rest;
    model_setup(&o, db, &s2048, 1.3);
    flag = 0;
    o.interrupt = &flag, o.on_trial = stop_after_20, o.ctx = (void *)&flag;
    stop_after_20(NULL, (void *)&flag);
    CHECK(gt_tune_run(&o, &cut, err, sizeof err) == 130);
    printf("    interrupted after %d trials; ", cut.trials_run);
    CHECK_MSG(cut.unscreened == 0 && count(db, "SELECT count(*) FROM v_trials WHERE message LIKE 'not screened%'") == 0,
              "%d left unscreened by an interrupted screen", cut.unscreened);
    model_setup(&o, db, &s2048, 1.3);
    CHECK_MSG(gt_tune_run(&o, &rest, err, sizeof err) == 0, "%s", err);
    printf("the rerun skipped %d, ran %d, left %d unscreened\n", rest.trials_skipped, rest.trials_run, rest.unscreened);
    CHECK(rest.nshapes == 1 && rest.shapes[0].family[0] && rest.trials_skipped > 0 && rest.unscreened > 0);
    CHECK(count(db, "SELECT count(*) FROM v_winners") == 1);
    gt_tune_summary_free(&cut);
    gt_tune_summary_free(&rest);
    gt_fixture_rm(db);
    free(db);
}
