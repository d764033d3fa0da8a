/* gemmtune bench: per shape, what the loader serves (gemmtune_sgemm, and by which rule), our best own kernel, and
 * cuBLAS FP32 (pedantic), on the same buffers in one process: each validated first, then timed with CUDA events on
 * a cold L2, median over alternating rounds. Shapes need not be tuned. Needs a GPU; run by tests/perf_session.sh. */
#include "cli.h"
#include "gemmtune.h"
#include "loader.h"
#include "measure.h"

#include <cublas_v2.h>

#include <cjson/cJSON.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SUITE "1024,2048,4096,8192,1000,5000,3000x5000x700,4096x4096x256,256x4096x4096,8192x128x8192,127x4099x1025,64x64x65536"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gemmtune bench [--sizes LIST] [--layout nn|nt|tn|tt] [--gpu N] [--db PATH] [--reps N]\n"
            "                      [--warmup N] [--format table|csv|json]\n\n"
            "Per shape, in this process on the same buffers: the kernel the loader serves (gemmtune_sgemm: the\n"
            "stored winner, a tuned neighbour the serving model expects to win, or cuBLAS; `gemmtune explain` says\n"
            "which and why), our own best kernel (the fastest validated trial of our families on this shape, else the\n"
            "neighbour the serving model ranks first), and cuBLAS FP32 (pedantic, no TF32). Each is validated against\n"
            "cuBLAS first (alpha 1.5, beta 0 over a NaN-filled C), then all are timed with CUDA events after warm-up on\n"
            "a cold L2, interleaved run by run (a clock transient touches every side alike; runs x10 under 50 us); the\n"
            "median of the runs is reported. cuBLAS is timed through two handles and the faster counts (one handle\n"
            "has been seen to run a shape 2x slower than another). ratio = cuBLAS time / time\n"
            "(above 1: faster than cuBLAS); the last lines are geometric means. Shapes need not be tuned.\n"
            "  --sizes LIST  N, MxNxK or MxNxK:layout items, or @FILE (default: the public benchmark suite of\n"
            "                docs/BENCHMARKS.md: " SUITE ")\n"
            "  --layout L    row-major layout of items without one (default nn)\n"
            "  --gpu N       CUDA device (default 0)\n"
            "  --db PATH     winners database (default $GEMMTUNE_DB, else ~/.local/share/gemmtune/gemmtune.db)\n"
            "  --reps N      timed runs per side (default 40; x10 up to 400 for shapes under 50 us)\n"
            "  --warmup N    untimed runs first (default 5)\n"
            "  --format F    table (default), csv or json\n");
}

typedef struct {
    double ms, rel_err;
} side;

typedef struct {
    gt_shape s;
    char served[512], own[512];
    side loader, mine, cublas;
    int has_own;
} row;

static int run_handle(void *ctx, const gt_args *a, cudaStream_t stream, char *err, size_t errlen)
{
    gemmtune_status st = gemmtune_sgemm((gemmtune_handle)ctx, stream, a->ta ? GEMMTUNE_OP_T : GEMMTUNE_OP_N,
                                        a->tb ? GEMMTUNE_OP_T : GEMMTUNE_OP_N, a->m, a->n, a->k, a->alpha, a->A,
                                        a->lda, a->B, a->ldb, a->beta, a->C, a->ldc);
    if (st != GEMMTUNE_SUCCESS) {
        snprintf(err, errlen, "%s %s", gemmtune_status_string(st), gemmtune_last_error());
        return -1;
    }
    return 0;
}

/* A second pedantic cuBLAS handle on the measuring stream: cuBLAS has been seen to run one shape 2x slower
 * through one handle than through another in the same process, so the reference is the faster of two. */
static int run_cublas2(void *ctx, const gt_args *a, cudaStream_t stream, char *err, size_t errlen)
{
    cublasHandle_t h = ctx;
    cublasSetStream(h, stream);
    cublasStatus_t st = cublasSgemm(h, a->tb ? CUBLAS_OP_T : CUBLAS_OP_N, a->ta ? CUBLAS_OP_T : CUBLAS_OP_N, a->n,
                                    a->m, a->k, &a->alpha, a->B, a->ldb, a->A, a->lda, &a->beta, a->C, a->ldc);
    return st == CUBLAS_STATUS_SUCCESS ? 0 : (snprintf(err, errlen, "cublasSgemm: status %d", (int)st), -1);
}

/* Medians with the sides interleaved run by run (own only when there is one); more runs for tiny shapes, whose
 * few microseconds are near the events' resolution. */
static int time_all(gt_measure *m, cublasHandle_t second, gemmtune_handle h, gemmtune_handle own, const gt_shape *s,
                    int warmup, int reps, row *r, char *err, size_t errlen)
{
    const gt_run_fn run[4] = {gt_measure_cublas_run, run_cublas2, run_handle, run_handle};
    void *const ctx[4] = {m, second, h, own};
    double med[4] = {0, 0, 0, 0};
    if (gt_measure_time_interleaved(m, s, 2, run, ctx, 1, 3, med, err, errlen)) return -1; /* a first look */
    const double first = fmin(med[0], med[1]);
    if (first < 0.05) reps = reps * 10 < 400 ? reps * 10 : (reps > 400 ? reps : 400);
    if (gt_measure_time_interleaved(m, s, own ? 4 : 3, run, ctx, warmup, reps, med, err, errlen)) return -1;
    r->cublas.ms = fmin(med[0], med[1]);
    r->loader.ms = med[2];
    r->mine.ms = med[3];
    return 0;
}

/* ---- our own best kernel for a shape ---- */

typedef struct {
    gt_gpu_model model;
    gt_trial_row best;
    int found;
} own_ctx;

static int fastest_own(const gt_trial_row *t, void *vctx)
{
    own_ctx *c = vctx;
    const gt_family *f = gt_family_find(t->family);
    gt_gpu_model tm = {.cc_major = t->cc_major, .cc_minor = t->cc_minor, .sm_count = t->sm_count};
    snprintf(tm.name, sizeof tm.name, "%s", t->gpu_name);
    /* validated trials, and screens timed at full size (the bench validates its pick before timing it) */
    const int timed = !strcmp(t->status, "ok") || (!strcmp(t->status, "screened") && !strstr(t->message, "proxy"));
    if (!f || f->build != GT_BUILD_NVRTC || !timed || t->median_ms <= 0 || !gt_gpu_model_equal(&tm, &c->model))
        return 0;
    if (!c->found || t->median_ms < c->best.median_ms) c->best = *t, c->found = 1;
    return 0;
}

/* The kernel of our families to bench against: the fastest validated or full-size screened trial here, else the
 * neighbour the serving model ranks first (whatever its prediction). A one-row table handle serves it as an exact
 * winner. */
static gemmtune_handle own_handle(gt_db *db, const gt_winner_set *set, const gt_device_id *dev, const gt_shape *s,
                                  int device, char *text, size_t n)
{
    own_ctx c = {.found = 0};
    gt_winner_filter fl = {.shape = s};
    char err[256], fam[32] = "", params[256] = "";
    snprintf(c.model.name, sizeof c.model.name, "%s", dev->name);
    c.model.cc_major = dev->lim.cc_major, c.model.cc_minor = dev->lim.cc_minor, c.model.sm_count = dev->lim.sm_count;
    if (db && gt_db_trials(db, &fl, fastest_own, &c, err, sizeof err) == 0 && c.found)
        snprintf(fam, sizeof fam, "%s", c.best.family), snprintf(params, sizeof params, "%s", c.best.params);
    else {
        gt_serve_model any = {.decay = 0.25, .margin = -1, .dmax = 1e9};
        gt_call call = {*s, s->ta ? s->m : s->k, s->tb ? s->k : s->n, s->n, 16, 16, 16};
        gt_serve_model_get(&any, err, sizeof err);
        any.margin = -1, any.dmax = 1e9;
        gt_choice ch = gt_loader_select(set->rows, set->n, dev, &call, GEMMTUNE_FALLBACK_NONE, &any);
        if (ch.row < 0 || !ch.family || ch.family->build != GT_BUILD_NVRTC) return NULL;
        snprintf(fam, sizeof fam, "%s", ch.family->name);
        gt_params_format(ch.family, &ch.params, params, sizeof params);
    }
    gemmtune_winner_row r = {dev->name, dev->lim.cc_major, dev->lim.cc_minor, dev->lim.sm_count, s->m, s->n, s->k,
                             gt_layout_name(s->ta, s->tb), fam, params, 0, 0, NULL, 0, NULL};
    gemmtune_options o;
    gemmtune_options_init(&o);
    o.device = device;
    o.fallback = GEMMTUNE_FALLBACK_NONE;
    gemmtune_handle h = NULL;
    if (gemmtune_create_from_table(&h, &r, 1, &o) != GEMMTUNE_SUCCESS) return NULL;
    snprintf(text, n, "%s %s%s", fam, params, c.found ? "" : " (a neighbour's)");
    return h;
}

/* ---- output ---- */

static double tflops(const gt_shape *s, double ms) { return ms > 0 ? 2.0 * s->m * s->n * (double)s->k / (ms * 1e9) : 0; }

static void geomeans(const row *r, int n, double *served, double *own, double *lowest)
{
    double ls = 0, lo = 0;
    int no = 0;
    *lowest = INFINITY;
    for (int i = 0; i < n; ++i) {
        ls += log(r[i].cublas.ms / r[i].loader.ms);
        *lowest = fmin(*lowest, r[i].cublas.ms / r[i].loader.ms);
        if (r[i].has_own) lo += log(r[i].cublas.ms / r[i].mine.ms), no++;
    }
    *served = n ? exp(ls / n) : 0;
    *own = no ? exp(lo / no) : 0;
}

static cJSON *json_row(const row *r)
{
    cJSON *o = cJSON_CreateObject();
    const gt_shape *s = &r->s;
    cJSON_AddNumberToObject(o, "m", s->m);
    cJSON_AddNumberToObject(o, "n", s->n);
    cJSON_AddNumberToObject(o, "k", s->k);
    cJSON_AddStringToObject(o, "layout", gt_layout_name(s->ta, s->tb));
    cJSON_AddNumberToObject(o, "served_ms", r->loader.ms);
    cJSON_AddNumberToObject(o, "served_ratio", r->cublas.ms / r->loader.ms);
    cJSON_AddStringToObject(o, "served", r->served);
    cJSON_AddNumberToObject(o, "cublas_ms", r->cublas.ms);
    cJSON_AddNumberToObject(o, "cublas_tflops", tflops(s, r->cublas.ms));
    if (r->has_own) {
        cJSON_AddNumberToObject(o, "own_ms", r->mine.ms);
        cJSON_AddNumberToObject(o, "own_ratio", r->cublas.ms / r->mine.ms);
        cJSON_AddStringToObject(o, "own", r->own);
    }
    cJSON_AddNumberToObject(o, "rel_err", r->loader.rel_err);
    return o;
}

static void print_json(const row *r, int n)
{
    double served, own, lowest;
    geomeans(r, n, &served, &own, &lowest);
    cJSON *root = cJSON_CreateObject(), *rows = cJSON_AddArrayToObject(root, "rows");
    for (int i = 0; i < n; ++i) cJSON_AddItemToArray(rows, json_row(&r[i]));
    cJSON_AddNumberToObject(root, "geomean_served_ratio", served);
    cJSON_AddNumberToObject(root, "min_served_ratio", lowest);
    cJSON_AddNumberToObject(root, "geomean_own_ratio", own);
    char *text = cJSON_Print(root);
    printf("%s\n", text);
    free(text);
    cJSON_Delete(root);
}

static void print_rows(const row *r, int n, const char *fmt)
{
    if (!strcmp(fmt, "json")) return print_json(r, n);
    const int csv = !strcmp(fmt, "csv");
    if (csv) printf("m,n,k,layout,served_ms,served_ratio,own_ms,own_ratio,cublas_ms,cublas_tflops,rel_err,served,own\n");
    else printf("%-17s %-3s %9s %6s %9s %6s %9s %7s  %s\n", "shape", "lay", "served ms", "ratio", "own ms", "ratio",
                "cuBLAS ms", "TFLOPS", "served (rule: kernel) | own");
    for (int i = 0; i < n; ++i) {
        const gt_shape *s = &r[i].s;
        char shape[64];
        snprintf(shape, sizeof shape, "%dx%dx%d", s->m, s->n, s->k);
        const double sr = r[i].cublas.ms / r[i].loader.ms, orat = r[i].has_own ? r[i].cublas.ms / r[i].mine.ms : 0;
        if (csv)
            printf("%d,%d,%d,%s,%.5f,%.4f,%.5f,%.4f,%.5f,%.3f,%.3g,\"%s\",\"%s\"\n", s->m, s->n, s->k,
                   gt_layout_name(s->ta, s->tb), r[i].loader.ms, sr, r[i].mine.ms, orat, r[i].cublas.ms,
                   tflops(s, r[i].cublas.ms), r[i].loader.rel_err, r[i].served, r[i].own);
        else if (r[i].has_own)
            printf("%-17s %-3s %9.4f %5.3fx %9.4f %5.3fx %9.4f %7.2f  %s | %s\n", shape, gt_layout_name(s->ta, s->tb),
                   r[i].loader.ms, sr, r[i].mine.ms, orat, r[i].cublas.ms, tflops(s, r[i].cublas.ms), r[i].served,
                   r[i].own);
        else
            printf("%-17s %-3s %9.4f %5.3fx %9s %6s %9.4f %7.2f  %s | -\n", shape, gt_layout_name(s->ta, s->tb),
                   r[i].loader.ms, sr, "-", "-", r[i].cublas.ms, tflops(s, r[i].cublas.ms), r[i].served);
    }
    double served, own, lowest;
    geomeans(r, n, &served, &own, &lowest);
    if (!csv)
        printf("served: geometric mean %.3fx cuBLAS over %d shapes, lowest %.3fx; own kernels: geometric mean %.3fx\n",
               served, n, lowest, own);
}

/* ---- arguments ---- */

typedef struct {
    const char *sizes, *layout, *db, *format;
    long gpu, reps, warmup;
} bench_args;

static int parse(int argc, char **argv, bench_args *a)
{
    static const struct option opts[] = {{"sizes", required_argument, 0, 's'}, {"layout", required_argument, 0, 'l'},
                                         {"gpu", required_argument, 0, 'g'},   {"db", required_argument, 0, 'd'},
                                         {"reps", required_argument, 0, 'r'},  {"warmup", required_argument, 0, 'w'},
                                         {"format", required_argument, 0, 'f'}, {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    char err[256] = "";
    int c;
    *a = (bench_args){SUITE, "nn", NULL, "table", 0, 40, 5};
    optind = 0;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (c == 'h') return usage(stdout), 1;
        if (c == '?') return fprintf(stderr, "see: gemmtune bench --help\n"), 2;
        int id;
        if ((c == 'g' && gt_cli_parse_gpus(optarg, &id, 1, err, sizeof err) != 1) ||
            (c == 'r' && gt_cli_parse_int("--reps", optarg, 100000, &a->reps, err, sizeof err)) ||
            (c == 'w' && gt_cli_parse_int("--warmup", optarg, 100000, &a->warmup, err, sizeof err)))
            return fprintf(stderr, "gemmtune bench: %s\n", err), 2;
        if (c == 'g') a->gpu = id;
        if (c == 's') a->sizes = optarg;
        if (c == 'l') a->layout = optarg;
        if (c == 'd') a->db = optarg;
        if (c == 'f') a->format = optarg;
    }
    if (optind < argc) return fprintf(stderr, "gemmtune bench: unexpected argument '%s'\n", argv[optind]), 2;
    if (strcmp(a->format, "table") && strcmp(a->format, "csv") && strcmp(a->format, "json"))
        return fprintf(stderr, "gemmtune bench: unknown --format '%s' (table, csv or json)\n", a->format), 2;
    return 0;
}

/* ---- the run ---- */

typedef struct {
    gt_measure *m;
    cublasHandle_t second;
    gemmtune_handle h;
    gt_db *db;
    gt_winner_set set;
    gt_device_id dev;
    bench_args a;
} bench;

static int check(bench *b, gemmtune_handle h, const gt_shape *s, int seed, double *rel_err, const char *what,
                 char *err, size_t errlen)
{
    gt_check_spec sp = {.s = *s, .alpha = 1.5f, .beta = 0.0f, .seed = (unsigned long long)seed};
    if (gt_measure_check(b->m, &sp, run_handle, h, rel_err, err, errlen)) return -1;
    if (*rel_err <= gt_tolerance(s->k)) return 0;
    fprintf(stderr, "gemmtune bench: %dx%dx%d %s: WRONG RESULT from %s, max relative error %.3g > %.3g\n", s->m, s->n,
            s->k, gt_layout_name(s->ta, s->tb), what, *rel_err, gt_tolerance(s->k));
    return 1;
}

static int bench_shape(bench *b, row *r, int i, char *err, size_t errlen)
{
    const gt_shape *s = &r->s;
    gemmtune_explain(b->h, s->ta, s->tb, s->m, s->n, s->k, s->ta ? s->m : s->k, s->tb ? s->k : s->n, s->n, r->served,
                     sizeof r->served);
    gemmtune_handle own = own_handle(b->db, &b->set, &b->dev, s, (int)b->a.gpu, r->own, sizeof r->own);
    int bad = check(b, b->h, s, 77 + i, &r->loader.rel_err, "the served kernel", err, errlen);
    if (bad >= 0 && own) {
        int ob = check(b, own, s, 177 + i, &r->mine.rel_err, r->own, err, errlen);
        if (ob) snprintf(r->own + strlen(r->own), sizeof r->own - strlen(r->own), " [WRONG: not timed]");
        if (ob) gemmtune_destroy(own), own = NULL;
        if (ob < 0) bad = -1;
    }
    r->has_own = own != NULL;
    if (bad >= 0 && time_all(b->m, b->second, b->h, own, s, (int)b->a.warmup, (int)b->a.reps, r, err, errlen)) bad = -1;
    gemmtune_destroy(own);
    return bad;
}

static int open_all(bench *b, char *err, size_t errlen)
{
    gemmtune_options opt;
    gemmtune_options_init(&opt);
    opt.db_path = b->a.db;
    opt.device = (int)b->a.gpu;
    gt_limits lim;
    gt_gpu_info gi;
    if (gt_measure_open((int)b->a.gpu, &b->m, err, errlen) || gt_measure_gpu_info(b->m, &gi, &lim, err, errlen))
        return -1;
    snprintf(b->dev.name, sizeof b->dev.name, "%s", gi.name);
    if (cublasCreate(&b->second) != CUBLAS_STATUS_SUCCESS ||
        cublasSetMathMode(b->second, CUBLAS_PEDANTIC_MATH) != CUBLAS_STATUS_SUCCESS)
        return snprintf(err, errlen, "a second cuBLAS handle could not be made"), -1;
    b->dev.lim = lim;
    gemmtune_status st = gemmtune_create(&b->h, &opt);
    if (st == GEMMTUNE_SUCCESS) st = gt_loader_winners(&opt, &b->set, &b->db, err, errlen);
    else snprintf(err, errlen, "%s %s", gemmtune_status_string(st), gemmtune_last_error());
    return st == GEMMTUNE_SUCCESS ? 0 : -1;
}

int gt_cmd_bench(int argc, char **argv)
{
    bench b = {0};
    gt_shape *shapes = NULL;
    char err[1024] = "";
    int ta, tb, with_layout, rc = parse(argc, argv, &b.a);
    if (rc) return rc == 1 ? 0 : rc;
    int n = gt_cli_parse_size_list(b.a.sizes, &shapes, &with_layout, err, sizeof err);
    if (n < 0 || gt_layout_parse(b.a.layout, &ta, &tb)) {
        fprintf(stderr, "gemmtune bench: %s\n", n < 0 ? err : "bad --layout: want nn, nt, tn or tt");
        free(shapes);
        return 2;
    }
    row *rows = calloc((size_t)n, sizeof *rows);
    int bad = 0;
    rc = 1;
    if (!rows || open_all(&b, err, sizeof err)) goto fail;
    for (int i = 0; i < n; ++i) {
        rows[i].s = shapes[i];
        if (!with_layout) rows[i].s.ta = ta, rows[i].s.tb = tb;
        int r = bench_shape(&b, &rows[i], i, err, sizeof err);
        if (r < 0) goto fail;
        bad |= r;
    }
    print_rows(rows, n, b.a.format);
    rc = bad;
    goto out;
fail:
    fprintf(stderr, "gemmtune bench: %s\n", err);
out:
    gemmtune_destroy(b.h);
    gt_loader_set_free(&b.set);
    gt_db_close(b.db);
    if (b.second) cublasDestroy(b.second);
    gt_measure_close(b.m);
    free(rows);
    free(shapes);
    return rc;
}
