/* Replays a sweep on recorded trials, without a GPU: the tuner's own strategy code (tuner/) runs against a runner
 * that answers each trial with the time a real GPU gave the same candidate on the same shape, and a compiler that
 * compiles nothing. What it reports is what the strategy would have compiled and chosen there. Used to tune the
 * guided screen (tuner/guide.c) on an H100's data: docs/BENCHMARKS.md, "compile less".
 *
 *   make build/replay
 *   build/replay TRIALS.csv [--model-stop R] [--jobs N] [--no-vendor] [--compile-ms MS [--spread S]]
 *                [--noise S [--noise-seed N]] [--together LIST]
 *   build/replay <(zcat tests/perf/h100_screens.csv.gz) --jobs 16     (an H100's screens of eight suite shapes)
 *   build/replay <(zcat tests/perf/h100_screens.csv.gz) --jobs 16 --compile-ms 1300 --spread 1 --together \
 *       1024x1024x1024,2048x2048x2048                                 (`make run`'s sweep, compiles timed)
 *
 * TRIALS.csv: `SELECT m,n,k,layout,family,params,status,message,median_ms,cublas_ms FROM v_trials` of a sweep that
 * screened every candidate (--model-stop 0 --family-ceiling 0), with a header line. A screen is answered with the
 * candidate's first recorded time, a full-size trial with its validated time where one was recorded, else with
 * the screen's scaled by K. */
#include "family.h"
#include "tune.h"

#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    gt_shape s;
    char family[32], params[256];
    double screen_ms, ok_ms;
    int screen_k;
    int draws; /* noisy timings drawn for it so far (--noise) */
} rec;

static rec *recs;
static int nrecs;
static int compiles;

/* Split one CSV line into at most max fields (quotes hold commas). Returns the count. */
static int fields(char *line, char **out, int max)
{
    int n = 0;
    for (char *p = line; n < max;) {
        if (*p == '"') {
            out[n++] = ++p;
            while (*p && *p != '"') ++p;
            if (*p) *p++ = 0;
        } else {
            out[n++] = p;
            while (*p && *p != ',' && *p != '\n' && *p != '\r') ++p;
        }
        if (*p != ',') {
            *p = 0;
            break;
        }
        *p++ = 0;
    }
    return n;
}

/* The record of family/params on s, or on the shape s is the screening proxy of (the same M and N, K cut): the one
 * whose screen's K is nearest s's among those at least as deep. */
static rec *find(const gt_shape *s, const char *family, const char *params)
{
    rec *best = NULL;
    for (int i = 0; i < nrecs; ++i) {
        rec *r = &recs[i];
        if (r->s.m != s->m || r->s.n != s->n || r->s.k < s->k || strcmp(r->family, family) || strcmp(r->params, params))
            continue;
        if (r->s.k == s->k) return r;
        if (!best || abs(r->screen_k - s->k) < abs(best->screen_k - s->k)) best = r;
    }
    return best;
}

static rec *find_exact(const gt_shape *s, const char *family, const char *params)
{
    rec *r = find(s, family, params);
    return r && r->s.k == s->k ? r : NULL;
}

static int load(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[4096];
    if (!f || !fgets(line, sizeof line, f)) return -1;
    while (fgets(line, sizeof line, f)) {
        char *v[10];
        if (fields(line, v, 10) < 10) continue;
        gt_shape s = {atoi(v[0]), atoi(v[1]), atoi(v[2]), 0, 0};
        const double ms = atof(v[8]);
        rec *r = find_exact(&s, v[4], v[5]);
        if (!r) {
            recs = realloc(recs, (size_t)(nrecs + 1) * sizeof *recs);
            r = &recs[nrecs++];
            memset(r, 0, sizeof *r);
            r->s = s;
            snprintf(r->family, sizeof r->family, "%s", v[4]);
            snprintf(r->params, sizeof r->params, "%s", v[5]);
            const char *px = strstr(v[7], "proxy ");
            int pm, pn, pk;
            r->screen_k = px && sscanf(px, "proxy %dx%dx%d", &pm, &pn, &pk) == 3 ? pk : s.k;
            r->screen_ms = ms;
        }
        if (!strcmp(v[6], "ok") && ms > 0) r->ok_ms = ms;
    }
    fclose(f);
    return 0;
}

static int r_start(int device, void **self, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    *self = (void *)(long)(device + 1);
    return 0;
}
static void r_stop(void *self) { (void)self; }
static void r_info(void *self, gt_gpu_info *gpu, gt_limits *lim)
{
    (void)self;
    memset(gpu, 0, sizeof *gpu);
    snprintf(gpu->name, sizeof gpu->name, "replay");
    gpu->cc_major = 9, gpu->sm_count = 132;
    snprintf(gpu->uuid, sizeof gpu->uuid, "GPU-replay");
    gpu->mem_bytes = 80ull << 30;
    if (lim) gt_limits_for_arch("sm_90", lim), lim->sm_count = 132;
}

static int r_baseline(void *self, const gt_shape *s, int warmup, int reps, double *ms, char *err, size_t errlen)
{
    (void)self, (void)warmup, (void)reps;
    for (int i = 0; i < nrecs; ++i)
        if (recs[i].s.m == s->m && recs[i].s.n == s->n && recs[i].s.k == s->k && !strcmp(recs[i].family, "cublas") &&
            recs[i].ok_ms > 0 && strstr(recs[i].params, "API=0,ALGO=0,"))
            return *ms = recs[i].ok_ms, 0;
    for (int i = 0; i < nrecs; ++i)
        if (recs[i].s.m == s->m && recs[i].s.n == s->n && recs[i].s.k == s->k && !strcmp(recs[i].family, "cublas"))
            return *ms = recs[i].screen_ms * s->k / recs[i].screen_k, 0;
    return snprintf(err, errlen, "no cuBLAS time recorded for %dx%dx%d", s->m, s->n, s->k), -1;
}

static int r_candidates(void *self, const gt_family *f, const gt_shape *s, gt_params *out, int *n, char *err,
                        size_t errlen)
{
    (void)self;
    *n = 0;
    for (int i = 0; i < nrecs && *n < GT_MAX_DEVICE_CANDIDATES; ++i)
        if (recs[i].s.m == s->m && recs[i].s.n == s->n && recs[i].s.k == s->k && !strcmp(recs[i].family, f->name) &&
            gt_params_parse(f, recs[i].params, &out[*n], err, errlen) == 0)
            ++*n;
    return 0;
}

static double noise; /* --noise S: each unchecked trial's time (screens, re-timings) times e^(S N(0, 1)) */
static unsigned long long noise_seed; /* --noise-seed N: which draws */

/* The n-th noise factor of record r: the same for the same record, draw and seed whatever else the sweep timed, so
 * that two strategies replayed with one seed see the same noise on the candidates both time. */
static double noise_factor(const rec *r, int n)
{
    unsigned long long h = 1469598103934665603ull ^ noise_seed;
    for (const char *p = r->params; *p; ++p) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    h = (h ^ (unsigned)(r - recs)) * 1099511628211ull;
    h = (h ^ (unsigned)n) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    double u1 = ((h >> 11) + 0.5) / 9007199254740992.0;
    h = h * 6364136223846793005ull + 1442695040888963407ull;
    double u2 = ((h >> 11) + 0.5) / 9007199254740992.0;
    return exp(noise * sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2));
}

static int r_trial(void *self, const gt_trial_request *req, gt_trial_result *out, char *err, size_t errlen)
{
    (void)self, (void)err, (void)errlen;
    char params[256];
    gt_params_format(req->family, &req->params, params, sizeof params);
    char *even = strstr(params, ",EVEN=1"); /* recorded before the variant: its twin with edge code, timed alike */
    if (even) memmove(even, even + 7, strlen(even + 7) + 1);
    rec *r = find(&req->shape, req->family->name, params);
    memset(out, 0, sizeof *out);
    out->rel_err = req->checks ? 1e-7 : -1;
    const gt_shape *ts = req->time_shape.k > 0 ? &req->time_shape : &req->shape;
    if (!r) { /* the recording has none (stored as a failure there): a verdict, not a time */
        out->status = GT_ST_COMPILE_ERROR, out->median_ms = out->min_ms = out->max_ms = -1;
        snprintf(out->message, sizeof out->message, "not in the recording");
        return 0;
    }
    double ms = r->screen_ms * ts->k / r->screen_k;
    if (noise > 0 && !req->checks) /* screens' and re-timings' spread */
        ms *= noise_factor(r, __atomic_fetch_add(&r->draws, 1, __ATOMIC_RELAXED));
    if (req->checks && r->ok_ms > 0 && ts->k == r->s.k) ms = r->ok_ms;
    out->median_ms = out->min_ms = out->max_ms = ms;
    out->status = req->cutoff_ms > 0 && ms > req->cutoff_ms ? GT_ST_PRUNED : GT_ST_OK;
    return 0;
}

static int r_restarts(void *self) { (void)self; return 0; }
static const gt_runner replay = {r_start, r_stop, r_info, r_baseline, r_candidates, r_trial, r_restarts};

/* --compile-ms MS: each compile sleeps that long (scaled per family: what NVRTC took for a family's kernels on an
 * H100 machine's 16 threads, multistage's 1.3 s as 1), so the wall time shows how well the sweep keeps the compile
 * threads busy. 0: compiles take no time. */
static double compile_ms;
static double compile_spread; /* --spread S: each kernel's time a fixed factor e^-S .. e^S of its family's */
static double compile_busy_s; /* the compiles' sleeps, summed */
static pthread_mutex_t busy_mu = PTHREAD_MUTEX_INITIALIZER;

static double family_weight(const char *src)
{
    static const struct { const char *family; double w; } w[] = {
        {"multistage", 1.0}, {"tf32x3wg", 1.6}, {"tf32x3", 1.0}, {"skinny", 0.5}, {"warptile", 0.35}, {"gemv", 0.1},
    };
    for (size_t i = 0; i < sizeof w / sizeof w[0]; ++i) {
        char tag[64];
        snprintf(tag, sizeof tag, "// gemmtune family %s\n", w[i].family);
        if (!strncmp(src, tag, strlen(tag))) return w[i].w;
    }
    return 0.25; /* the small teaching families */
}

static int no_compile(const char *src, const char *arch, gt_cubin *out, char *err, size_t errlen)
{
    (void)arch, (void)err, (void)errlen;
    if (compile_ms > 0) {
        unsigned long long h = 1469598103934665603ull;
        for (const char *c = src; *c; ++c) h = (h ^ (unsigned char)*c) * 1099511628211ull;
        const double u = (double)(h >> 11) / (double)(1ull << 53); /* per kernel, fixed: a spread of 0.4x to 2.8x */
        const double spread = exp(compile_spread * (u - 0.5) * 2);
        const double even = strstr(src, "\n#define EVEN 1\n") ? 0.5 : 1; /* multistage without edge code: 0.36-0.9 */
        const double s = compile_ms * family_weight(src) * even * spread / 1e3;
        struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&busy_mu);
        compile_busy_s += s;
        pthread_mutex_unlock(&busy_mu);
    }
    memset(out, 0, sizeof *out);
    out->data = malloc(8);
    memcpy(out->data, "\177ELFfake", 8);
    out->size = 8, out->regs = 32;
    __atomic_add_fetch(&compiles, 1, __ATOMIC_RELAXED);
    return 0;
}

/* A record's time at full size: validated where it was, else its screen's scaled by K. */
static double full_ms(const rec *r) { return r->ok_ms > 0 ? r->ok_ms : r->screen_ms * r->s.k / r->screen_k; }

/* The fastest built candidate (not the library's) that the replayed sweep screened on s, by its recorded full-size
 * time, and the fastest recorded at all. */
static void own_best(const char *db, const gt_shape *s, double *found, double *best)
{
    sqlite3 *h;
    sqlite3_stmt *st;
    *found = *best = 0;
    for (int i = 0; i < nrecs; ++i)
        if (recs[i].s.m == s->m && recs[i].s.n == s->n && recs[i].s.k == s->k && strcmp(recs[i].family, "cublas") &&
            recs[i].screen_ms > 0 && (*best <= 0 || full_ms(&recs[i]) < *best))
            *best = full_ms(&recs[i]);
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) return;
    if (sqlite3_prepare_v2(h, "SELECT DISTINCT family, params FROM v_trials WHERE status IN ('ok', 'screened') AND "
                              "family != 'cublas'", -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW) {
            const rec *r = find(s, (const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1));
            if (r && r->screen_ms > 0 && (*found <= 0 || full_ms(r) < *found)) *found = full_ms(r);
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(h);
}

/* The sweep's database and the WAL files a read-only connection (own_best) leaves beside it. */
static void remove_db(const char *db)
{
    char side[4200];
    remove(db);
    snprintf(side, sizeof side, "%s-wal", db), remove(side);
    snprintf(side, sizeof side, "%s-shm", db), remove(side);
}

/* The fastest validated time recorded on s (the all-screen sweep's choice, up to its re-timing). */
static const rec *recorded_best(const gt_shape *s)
{
    const rec *b = NULL;
    for (int i = 0; i < nrecs; ++i)
        if (recs[i].s.m == s->m && recs[i].s.n == s->n && recs[i].s.k == s->k && recs[i].ok_ms > 0 &&
            (!b || recs[i].ok_ms < b->ok_ms))
            b = &recs[i];
    return b;
}

/* A fresh path for a sweep's database in $TMPDIR (else /tmp), no file there yet. */
static void temp_db(char *db, size_t n)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(db, n, "%s/replay-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    close(mkstemp(db));
    remove(db);
}

/* --together LIST: the recorded shapes among LIST (MxNxK, comma-separated) in one sweep, as `gemmtune --sizes LIST`
 * runs them; prints its wall time, compiles, and how busy the compile threads were (with --compile-ms). */
static int run_together(gt_tune_opts *o, const gt_shape *all, int nall, const char *list)
{
    gt_shape shapes[64];
    int n = 0;
    for (int i = 0; i < nall; ++i) {
        char name[64];
        snprintf(name, sizeof name, "%dx%dx%d", all[i].m, all[i].n, all[i].k);
        for (const char *p = strstr(list, name); p; p = strstr(p + 1, name))
            if ((p == list || p[-1] == ',') && (p[strlen(name)] == 0 || p[strlen(name)] == ',')) {
                shapes[n++] = all[i];
                break;
            }
    }
    if (!n) return fprintf(stderr, "replay: none of %s is recorded\n", list), 2;
    char db[4096], err[512];
    temp_db(db, sizeof db);
    gt_tune_summary sum;
    o->db_path = db, o->shapes = shapes, o->nshapes = n;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (gt_tune_run(o, &sum, err, sizeof err)) return fprintf(stderr, "replay: %s\n", err), 1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const double wall = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    const int jobs = o->jobs > 0 ? o->jobs : 1;
    printf("%d shapes together: %d compiled, %.2f s wall, compile threads busy %.0f%% (%d threads)\n", n, compiles,
           wall, 100.0 * compile_busy_s / (wall * jobs), jobs);
    for (int i = 0; i < sum.nshapes; ++i)
        printf("  %dx%dx%d %s %.60s\n", shapes[i].m, shapes[i].n, shapes[i].k, sum.shapes[i].family,
               sum.shapes[i].params);
    gt_tune_summary_free(&sum);
    remove_db(db);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || load(argv[1]) || !nrecs) return fprintf(stderr, "usage: replay TRIALS.csv [--model-stop R]\n"), 2;
    gt_shape shapes[64];
    int nshapes = 0, gpus[1] = {0};
    for (int i = 0; i < nrecs && nshapes < 64; ++i) {
        int seen = 0;
        for (int j = 0; j < nshapes; ++j) seen |= shapes[j].m == recs[i].s.m && shapes[j].n == recs[i].s.n && shapes[j].k == recs[i].s.k;
        if (!seen) shapes[nshapes++] = recs[i].s;
    }
    const char *together = NULL;
    gt_tune_opts o;
    memset(&o, 0, sizeof o);
    gt_tune_defaults(&o);
    const char *built[64];
    int nbuilt = 0;
    for (int i = 0; i < gt_family_count(); ++i)
        if (gt_family_at(i)->build == GT_BUILD_NVRTC && !gt_family_at(i)->test_only && gt_family_at(i)->math == GT_MATH_FP32)
            built[nbuilt++] = gt_family_at(i)->name;
    for (int i = 2; i < argc; ++i)
        if (!strcmp(argv[i], "--model-stop") && i + 1 < argc) o.model_stop = atof(argv[++i]);
        else if (!strcmp(argv[i], "--jobs") && i + 1 < argc) o.jobs = atoi(argv[++i]); /* sizes the lookahead */
        else if (!strcmp(argv[i], "--no-vendor")) o.families = built, o.nfamilies = nbuilt; /* as a class without one */
        else if (!strcmp(argv[i], "--compile-ms") && i + 1 < argc) compile_ms = atof(argv[++i]);
        else if (!strcmp(argv[i], "--spread") && i + 1 < argc) compile_spread = atof(argv[++i]);
        else if (!strcmp(argv[i], "--together") && i + 1 < argc) together = argv[++i];
        else if (!strcmp(argv[i], "--noise") && i + 1 < argc) noise = atof(argv[++i]);
        else if (!strcmp(argv[i], "--noise-seed") && i + 1 < argc) noise_seed = strtoull(argv[++i], NULL, 10);
    o.cross = 0, o.gpus = gpus, o.ngpus = 1, o.command = "replay", o.runner = &replay, o.compile = no_compile;
    if (together) return run_together(&o, shapes, nshapes, together);
    printf("%-16s %9s %9s %8s %10s %10s %8s  %s\n", "shape", "compiled", "unscreen", "ratio", "chosen ms", "best ms",
           "own", "chosen");
    int total = 0;
    for (int i = 0; i < nshapes; ++i) {
        char db[4096], err[512];
        temp_db(db, sizeof db);
        gt_tune_summary sum;
        o.db_path = db, o.shapes = &shapes[i], o.nshapes = 1;
        compiles = 0;
        if (gt_tune_run(&o, &sum, err, sizeof err)) return fprintf(stderr, "replay: %s\n", err), 1;
        const rec *b = recorded_best(&shapes[i]);
        const rec *w = find(&shapes[i], sum.shapes[0].family, sum.shapes[0].params);
        const double wms = w && w->ok_ms > 0 ? w->ok_ms : sum.shapes[0].median_ms;
        double found, best;
        own_best(db, &shapes[i], &found, &best);
        printf("%5dx%5dx%5d %9d %9d %8.3f %10.4f %10.4f %8.3f  %s %.50s\n", shapes[i].m, shapes[i].n, shapes[i].k,
               compiles, sum.unscreened, b ? wms / b->ok_ms : 0, wms, b ? b->ok_ms : 0, best > 0 ? found / best : 0,
               sum.shapes[0].family, sum.shapes[0].params);
        total += compiles;
        gt_tune_summary_free(&sum);
        remove_db(db);
    }
    printf("total compiled %d\n", total);
    return 0;
}
