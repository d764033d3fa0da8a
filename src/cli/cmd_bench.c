/* gemmtune bench: per shape, what the loader serves (gemmtune_sgemm, and by which rule), our best own kernel, and
 * cuBLAS FP32 (pedantic), on the same buffers in one process: each validated first, then timed with CUDA events on
 * a cold L2, interleaved run by run. Shapes need not be tuned. Output through src/cli/table.c (table, CSV, JSON via
 * cJSON). Needs a GPU; run by tests/serve_session.sh, bad input in tests/test_cli.c. */
#include "cli.h"
#include "gemmtune.h"
#include "loader.h"
#include "measure.h"
#include "options.h"
#include "own.h"
#include "table.h"
#include "term.h"

#include <cublas_v2.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: gemmtune bench [options]\n\n"
                 "Per shape, in this process on the same buffers: the kernel the loader serves (gemmtune_sgemm:\n"
                 "the stored winner, a tuned neighbour the serving model expects to win, or cuBLAS; `gemmtune\n"
                 "explain` says which and why), our own best kernel (the fastest timed trial on this shape of\n"
                 "every family but the vendor's, in the classes the handle is served: FP32, and $GEMMTUNE_MATH's,\n"
                 "of a kernel no validation refused here; else the neighbour the serving model ranks first), and\n"
                 "cuBLAS FP32 (pedantic, no TF32; a strided\n"
                 "batch as cublasSgemmStridedBatched). Each is validated against cuBLAS first (alpha 1.5, beta 0\n"
                 "over a NaN-filled C, or --beta over a random C), then all are timed (alpha 1, --beta) with CUDA\n"
                 "events after warm-up on a cold L2,\n"
                 "interleaved run by run (a clock transient touches every side alike); the median is reported.\n"
                 "cuBLAS is timed through the faster of two handles after a first look (one has been seen to run a\n"
                 "shape 2x slower than another). ratio = cuBLAS time / time (above 1: faster than cuBLAS); the\n"
                 "closing line (members of the JSON object) gives geometric means. Shapes need not be tuned. Needs\n"
                 "a GPU.\n\n");
    gt_cli_usage(out, GT_V_BENCH);
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
    const gemmtune_op ta = a->ta ? GEMMTUNE_OP_T : GEMMTUNE_OP_N, tb = a->tb ? GEMMTUNE_OP_T : GEMMTUNE_OP_N;
    gemmtune_status st =
        a->batch > 1 ? gemmtune_sgemm_strided_batched((gemmtune_handle)ctx, stream, ta, tb, a->m, a->n, a->k, a->alpha,
                                                      a->A, a->lda, a->sa, a->B, a->ldb, a->sb, a->beta, a->C, a->ldc,
                                                      a->sc, a->batch)
                     : gemmtune_sgemm((gemmtune_handle)ctx, stream, ta, tb, a->m, a->n, a->k, a->alpha, a->A, a->lda,
                                      a->B, a->ldb, a->beta, a->C, a->ldc);
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
    const cublasOperation_t ob = a->tb ? CUBLAS_OP_T : CUBLAS_OP_N, oa = a->ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasSetStream(h, stream);
    cublasStatus_t st =
        a->batch > 1 ? cublasSgemmStridedBatched(h, ob, oa, a->n, a->m, a->k, &a->alpha, a->B, a->ldb, a->sb, a->A,
                                                 a->lda, a->sa, &a->beta, a->C, a->ldc, a->sc, a->batch)
                     : cublasSgemm(h, ob, oa, a->n, a->m, a->k, &a->alpha, a->B, a->ldb, a->A, a->lda, &a->beta, a->C,
                                   a->ldc);
    return st == CUBLAS_STATUS_SUCCESS ? 0 : (snprintf(err, errlen, "cublasSgemm: status %d", (int)st), -1);
}

/* Medians with the sides interleaved run by run (own only when there is one); more runs for tiny shapes, whose
 * few microseconds are near the events' resolution. A first look picks the faster of the two cuBLAS handles, and
 * only that one is timed after: the smaller of two medians would sit below the one handle's (the served call's,
 * when it is cuBLAS's own choice), and cuBLAS's run beside itself would read under 1.00x. */
static int time_all(gt_measure *m, cublasHandle_t second, gemmtune_handle h, gemmtune_handle own, const gt_shape *s,
                    float beta, int warmup, int reps, row *r, char *err, size_t errlen)
{
    gt_run_fn run[4] = {gt_measure_cublas_run, run_cublas2, run_handle, run_handle};
    void *ctx[4] = {m, second, h, own};
    double med[4] = {0, 0, 0, 0};
    if (gt_measure_time_interleaved(m, s, beta, 2, run, ctx, 1, 3, med, NULL, NULL, err, errlen))
        return -1; /* a first look */
    if (med[1] < med[0]) run[0] = run[1], ctx[0] = ctx[1];
    run[1] = run[2], ctx[1] = ctx[2], run[2] = run[3], ctx[2] = ctx[3];
    if (fmin(med[0], med[1]) < 0.05) reps = reps * 10 < 400 ? reps * 10 : (reps > 400 ? reps : 400);
    if (gt_measure_time_interleaved(m, s, beta, own ? 3 : 2, run, ctx, warmup, reps, med, NULL, NULL, err, errlen))
        return -1;
    r->cublas.ms = med[0];
    r->loader.ms = med[1];
    r->mine.ms = med[2];
    return 0;
}

/* ---- our own best kernel for a shape ---- */

/* The kernel of our families to bench against: the fastest validated or full-size screened trial here, else the
 * neighbour the serving model ranks first (whatever its prediction). A one-row table handle serves it as an exact
 * winner. */
static gemmtune_handle own_handle(gt_db *db, const gt_winner_set *set, const gt_device_id *dev, const gt_shape *s,
                                  int device, char *text, size_t n)
{
    gt_math asked = GT_MATH_FP32;
    const char *math = getenv("GEMMTUNE_MATH"); /* as the handle reads it (it refused a bad one already) */
    if (math && *math) gt_math_parse(math, &asked);
    char err[256], fam[32] = "", params[256] = "";
    gt_gpu_model model = {.cc_major = dev->lim.cc_major, .cc_minor = dev->lim.cc_minor, .sm_count = dev->lim.sm_count};
    snprintf(model.name, sizeof model.name, "%s", dev->name);
    const int found = db && gt_own_best(db, &model, s, asked, fam, sizeof fam, params, sizeof params, err, sizeof err) == 1;
    if (!found) {
        gt_serve_model any = {.decay = 0.25, .margin = -1, .dmax = 1e9};
        gt_call call = gt_call_tight(s);
        gt_serve_model_get(&any, err, sizeof err);
        any.margin = -1, any.dmax = 1e9;
        gt_choice ch = gt_loader_select(set->rows, set->n, dev, &call, GEMMTUNE_FALLBACK_NONE, &any);
        if (ch.row < 0 || !ch.family || ch.family->vendor) return NULL;
        snprintf(fam, sizeof fam, "%s", ch.family->name);
        gt_params_format(ch.family, &ch.params, params, sizeof params);
    }
    gemmtune_winner_row r = {dev->name, dev->lim.cc_major, dev->lim.cc_minor, dev->lim.sm_count, s->m, s->n, s->k,
                             gt_layout_name(s->ta, s->tb), fam, params, 0, 0, NULL, 0, NULL, gt_shape_batch(s)};
    gemmtune_options o;
    gemmtune_options_init(&o);
    o.device = device;
    o.fallback = GEMMTUNE_FALLBACK_NONE;
    gemmtune_handle h = NULL;
    if (gemmtune_create_from_table(&h, &r, 1, &o) != GEMMTUNE_SUCCESS) return NULL;
    /* a library that cannot run the stored algorithm here serves cuBLAS's own choice: then there is none of ours
     * (asked of one GEMM, whose call reads the operands' alignment only; a batch's families are all built) */
    float *any = NULL;
    const int own = gt_shape_batch(s) > 1 ||
                    (cudaMalloc((void **)&any, 256) == cudaSuccess &&
                     gemmtune_runs_own_kernel(h, NULL, (gemmtune_op)s->ta, (gemmtune_op)s->tb, s->m, s->n, s->k, any,
                                              s->ta ? s->m : s->k, any, s->tb ? s->k : s->n, any, s->n) == 1);
    cudaFree(any);
    if (!own) {
        gemmtune_destroy(h);
        return NULL;
    }
    snprintf(text, n, "%s %s%s", fam, params, found ? "" : " (a neighbour's)");
    return h;
}

/* ---- output ---- */


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

static const gt_col cols[] = {{"batch", NULL, "%.0f"},
                              {"m", NULL, "%.0f"},
                              {"n", NULL, "%.0f"},
                              {"k", NULL, "%.0f"},
                              {"layout", NULL, NULL},
                              {"served_ms", "served ms", "%.4f"},
                              {"served_ratio", "ratio", "%.3fx"},
                              {"own_ms", "own ms", "%.4f"},
                              {"own_ratio", "ratio", "%.3fx"},
                              {"cublas_ms", "cuBLAS ms", "%.4f"},
                              {"cublas_tflops", "TFLOPS", "%.2f"},
                              {"rel_err", NULL, "%.2g"},
                              {"served", "served (rule: kernel)", NULL},
                              {"own", "own kernel", NULL}};

static gt_table *table_of(const row *r, int n)
{
    gt_table *t = gt_table_new(cols, (int)(sizeof cols / sizeof cols[0]));
    for (int i = 0; t && i < n; ++i) {
        const gt_shape *s = &r[i].s;
        cJSON *o = gt_table_row(t);
        if (!o) return gt_table_free(t), NULL;
        cJSON_AddNumberToObject(o, "batch", gt_shape_batch(s));
        cJSON_AddNumberToObject(o, "m", s->m), cJSON_AddNumberToObject(o, "n", s->n);
        cJSON_AddNumberToObject(o, "k", s->k), cJSON_AddStringToObject(o, "layout", gt_layout_name(s->ta, s->tb));
        cJSON_AddNumberToObject(o, "served_ms", r[i].loader.ms);
        cJSON_AddNumberToObject(o, "served_ratio", r[i].cublas.ms / r[i].loader.ms);
        if (r[i].has_own) {
            cJSON_AddNumberToObject(o, "own_ms", r[i].mine.ms);
            cJSON_AddNumberToObject(o, "own_ratio", r[i].cublas.ms / r[i].mine.ms);
        }
        cJSON_AddNumberToObject(o, "cublas_ms", r[i].cublas.ms);
        cJSON_AddNumberToObject(o, "cublas_tflops", gt_tflops(s, r[i].cublas.ms));
        cJSON_AddNumberToObject(o, "rel_err", r[i].loader.rel_err);
        cJSON_AddStringToObject(o, "served", r[i].served);
        cJSON_AddStringToObject(o, "own", r[i].has_own ? r[i].own : "-");
    }
    return t;
}

/* The rows as a table or CSV with the geometric means below, or one JSON object {rows, geomeans, lowest}. */
static int print_rows(const row *r, int n, const char *fmt)
{
    double served, own, lowest;
    geomeans(r, n, &served, &own, &lowest);
    gt_table *t = table_of(r, n);
    int rc = t ? 0 : -1;
    if (t && !strcmp(fmt, "json")) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddItemToObject(root, "rows", t->rows);
        t->rows = NULL;
        cJSON_AddNumberToObject(root, "geomean_served_ratio", served);
        cJSON_AddNumberToObject(root, "min_served_ratio", n ? lowest : 0);
        cJSON_AddNumberToObject(root, "geomean_own_ratio", own);
        char *text = cJSON_Print(root);
        rc = text && gt_term_json(stdout, text) == 0 && putchar('\n') != EOF ? 0 : -1;
        free(text);
        cJSON_Delete(root);
    } else if (t) {
        rc = gt_table_print(t, fmt, stdout);
        if (rc == 0 && !strcmp(fmt, "table"))
            printf("served: geometric mean %.3fx cuBLAS over %d shapes, lowest %.3fx; own kernels: geometric mean "
                   "%.3fx\n", served, n, lowest, own);
    }
    gt_table_free(t);
    return rc;
}

/* Items without a layout of their own are benched in each of --layouts' (nn when none), item by item. */
static int each_layout(gt_cli_args *a)
{
    const int nl = a->layout.n ? a->layout.n : 1, n = a->sizes.n;
    gt_shape *all = malloc((size_t)n * nl * sizeof *all);
    if (!all) return -1;
    for (int i = 0; i < n; ++i)
        for (int l = 0; l < nl; ++l) {
            const int lay = a->layout.n ? a->layout.v[l] : 0;
            all[i * nl + l] = a->sizes.v[i], all[i * nl + l].ta = lay >> 1, all[i * nl + l].tb = lay & 1;
        }
    free(a->sizes.v), a->sizes.v = all, a->sizes.n = n * nl;
    return 0;
}

/* 0, -1 after --help, or an exit status after a message. */
static int parse(int argc, char **argv, gt_cli_args *a, gt_shape **shapes, int *n)
{
    char err[1024];
    int rc = gt_cli_parse(GT_V_BENCH, argc, argv, a, err, sizeof err);
    if (rc == 1) return usage(stdout), -1;
    if (rc == 0 && a->npos) rc = -1, snprintf(err, sizeof err, "unexpected argument '%s'", a->pos[0]);
    if (rc == 0 && !a->sizes.n) a->sizes.n = gt_cli_parse_sizes(GT_BENCH_SUITE, &a->sizes.v, err, sizeof err);
    if (rc < 0) return gt_term_printf(stderr, "gemmtune bench: %s\n", err), 2;
    if (!a->format) a->format = "table";
    if (!a->sizes_with_layout && each_layout(a)) return gt_term_printf(stderr, "gemmtune bench: out of memory\n"), 1;
    *shapes = a->sizes.v, *n = a->sizes.n;
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
    int device, warmup, reps;
    float beta; /* --beta: of every check and timed run */
} bench;

static int check(bench *b, gemmtune_handle h, const gt_shape *s, int seed, double *rel_err, const char *what,
                 char *err, size_t errlen)
{
    gt_check_spec sp = {.s = *s, .alpha = 1.5f, .beta = b->beta, .seed = (unsigned long long)seed};
    int same = 1;
    if (gt_measure_check(b->m, &sp, run_handle, h, rel_err, &same, err, errlen)) return -1;
    char dims[48];
    gt_shape_dims(s, dims, sizeof dims);
    if (!same) {
        gt_term_printf(stderr, "gemmtune bench: %s %s: %s is NOT DETERMINISTIC: a second run changed C\n", dims,
                       gt_layout_name(s->ta, s->tb), what);
        return 1;
    }
    if (*rel_err <= gt_tolerance(s->k)) return 0;
    gt_term_printf(stderr, "gemmtune bench: %s %s: WRONG RESULT from %s, max relative error %.3g > %.3g\n", dims,
                   gt_layout_name(s->ta, s->tb), what, *rel_err, gt_tolerance(s->k));
    return 1;
}

/* Validate, then time, one shape: 0, 1 when a result is wrong, -1 with err. */
static int bench_shape(bench *b, row *r, int i, char *err, size_t errlen)
{
    const gt_shape *s = &r->s;
    const int lda = s->ta ? s->m : s->k, ldb = s->tb ? s->k : s->n, batch = gt_shape_batch(s);
    if (batch > 1)
        gemmtune_explain_strided_batched(b->h, s->ta, s->tb, s->m, s->n, s->k, lda, ldb, s->n, batch, r->served,
                                         sizeof r->served);
    else
        gemmtune_explain(b->h, s->ta, s->tb, s->m, s->n, s->k, lda, ldb, s->n, r->served, sizeof r->served);
    gemmtune_handle own = own_handle(b->db, &b->set, &b->dev, s, b->device, r->own, sizeof r->own);
    int bad = check(b, b->h, s, 77 + i, &r->loader.rel_err, "the served kernel", err, errlen);
    if (bad >= 0 && own) {
        int ob = check(b, own, s, 177 + i, &r->mine.rel_err, r->own, err, errlen);
        if (ob) snprintf(r->own + strlen(r->own), sizeof r->own - strlen(r->own), " [WRONG: not timed]");
        if (ob) gemmtune_destroy(own), own = NULL;
        if (ob < 0) bad = -1;
    }
    r->has_own = own != NULL;
    if (bad >= 0 && time_all(b->m, b->second, b->h, own, s, b->beta, b->warmup, b->reps, r, err, errlen)) bad = -1;
    gemmtune_destroy(own);
    return bad;
}

static int open_all(bench *b, const char *db, char *err, size_t errlen)
{
    gemmtune_options opt;
    gemmtune_options_init(&opt);
    opt.db_path = db;
    opt.device = b->device;
    gt_limits lim;
    gt_gpu_info gi;
    if (gt_measure_open(b->device, &b->m, err, errlen) || gt_measure_gpu_info(b->m, &gi, &lim, err, errlen)) return -1;
    snprintf(b->dev.name, sizeof b->dev.name, "%s", gi.name);
    b->dev.lim = lim;
    if (cublasCreate(&b->second) != CUBLAS_STATUS_SUCCESS ||
        cublasSetMathMode(b->second, CUBLAS_PEDANTIC_MATH) != CUBLAS_STATUS_SUCCESS)
        return snprintf(err, errlen, "a second cuBLAS handle could not be made"), -1;
    gemmtune_status st = gemmtune_create(&b->h, &opt);
    if (st == GEMMTUNE_SUCCESS) st = gt_loader_winners(&opt, &b->set, &b->db, err, errlen);
    else snprintf(err, errlen, "%s %s", gemmtune_status_string(st), gemmtune_last_error());
    return st == GEMMTUNE_SUCCESS ? 0 : -1;
}

int gt_cmd_bench(int argc, char **argv)
{
    gt_cli_args a;
    gt_shape *shapes;
    int n, bad = 0;
    char err[1024] = "";
    gt_cli_args_init(&a);
    int rc = parse(argc, argv, &a, &shapes, &n);
    if (rc) return gt_cli_args_free(&a), rc < 0 ? 0 : rc;
    bench b = {.device = a.gpu.n ? a.gpu.v[0] : 0, .warmup = (int)(a.warmup ? a.warmup : 5),
               .reps = (int)(a.reps ? a.reps : 40), .beta = a.beta > 0 ? (float)a.beta : 0.0f};
    row *rows = calloc((size_t)n, sizeof *rows);
    rc = 1;
    if (!rows || open_all(&b, a.db, err, sizeof err)) goto fail;
    for (int i = 0; i < n; ++i) {
        rows[i].s = shapes[i];
        int r = bench_shape(&b, &rows[i], i, err, sizeof err);
        if (r < 0) goto fail;
        bad |= r;
    }
    rc = print_rows(rows, n, a.format) < 0 ? 1 : bad;
    goto out;
fail:
    gt_term_printf(stderr, "gemmtune bench: %s\n", err);
out:
    gemmtune_destroy(b.h);
    gt_loader_set_free(&b.set);
    gt_db_close(b.db);
    if (b.second) cublasDestroy(b.second);
    gt_measure_close(b.m);
    free(rows);
    gt_cli_args_free(&a);
    return rc;
}
