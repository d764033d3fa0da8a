/* gemmtune bench: the loader's kernel (the stored winner, through gemmtune_sgemm) against cuBLAS FP32 (pedantic) on
 * the same buffers in one process: validated first, then timed with CUDA events on a cold L2, median of --reps
 * runs after warm-up, alternating the two. Output through src/cli/table.c (table, CSV, JSON via cJSON).
 * Needs a GPU; GPU test in tests/test_gpu.c, bad input in test_cli.c. */
#include "cli.h"
#include "gemmtune.h"
#include "measure.h"
#include "options.h"
#include "table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: gemmtune bench [options]\n\n"
                 "Runs the kernel the loader picks for each shape (the stored winner for this GPU model, else the rule\n"
                 "`gemmtune explain` names) against cuBLAS FP32 (pedantic, no TF32) on the same buffers in this process.\n"
                 "Each is validated against cuBLAS first (alpha 1.5, beta 0 over NaN C), then both are timed with CUDA\n"
                 "events after warm-up on a cold L2, alternating in two rounds; the median of all runs is reported.\n"
                 "ratio = cuBLAS time / gemmtune time (above 1: gemmtune is faster); the closing line (a member of\n"
                 "the JSON object) is their geometric mean. Needs a GPU.\n\n");
    gt_cli_usage(out, GT_V_BENCH);
}

typedef struct {
    gt_shape s;
    char kernel[512];
    double ms, cublas_ms, rel_err;
} row;

static int run_gemmtune(void *ctx, const gt_args *a, cudaStream_t stream, char *err, size_t errlen)
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

/* Median over two alternating rounds of each side. */
static int time_pair(gt_measure *m, gemmtune_handle h, const gt_shape *s, int warmup, int reps, row *r, char *err,
                     size_t errlen)
{
    double med[2][2], lo, hi;
    for (int round = 0; round < 2; ++round) {
        if (gt_measure_time(m, s, gt_measure_cublas_run, m, warmup, reps, 0, &med[round][0], &lo, &hi, err, errlen) ||
            gt_measure_time(m, s, run_gemmtune, h, warmup, reps, 0, &med[round][1], &lo, &hi, err, errlen))
            return -1;
    }
    r->cublas_ms = 0.5 * (med[0][0] + med[1][0]);
    r->ms = 0.5 * (med[0][1] + med[1][1]);
    return 0;
}

static double tflops(const gt_shape *s, double ms) { return 2.0 * s->m * s->n * (double)s->k / (ms * 1e9); }

static const gt_col cols[] = {{"m", NULL, "%.0f"},           {"n", NULL, "%.0f"},
                              {"k", NULL, "%.0f"},           {"layout", NULL, NULL},
                              {"gemmtune_ms", "gemmtune ms", "%.4f"}, {"gemmtune_tflops", "TFLOPS", "%.2f"},
                              {"cublas_ms", "cuBLAS ms", "%.4f"}, {"cublas_tflops", "TFLOPS", "%.2f"},
                              {"ratio", NULL, "%.3fx"},      {"rel_err", NULL, "%.2g"},
                              {"kernel", "kernel (rule: family params)", NULL}};

static gt_table *table_of(const row *r, int n)
{
    gt_table *t = gt_table_new(cols, (int)(sizeof cols / sizeof cols[0]));
    for (int i = 0; t && i < n; ++i) {
        const gt_shape *s = &r[i].s;
        cJSON *o = gt_table_row(t);
        if (!o) return gt_table_free(t), NULL;
        cJSON_AddNumberToObject(o, "m", s->m), cJSON_AddNumberToObject(o, "n", s->n);
        cJSON_AddNumberToObject(o, "k", s->k), cJSON_AddStringToObject(o, "layout", gt_layout_name(s->ta, s->tb));
        cJSON_AddNumberToObject(o, "gemmtune_ms", r[i].ms), cJSON_AddNumberToObject(o, "gemmtune_tflops", tflops(s, r[i].ms));
        cJSON_AddNumberToObject(o, "cublas_ms", r[i].cublas_ms);
        cJSON_AddNumberToObject(o, "cublas_tflops", tflops(s, r[i].cublas_ms));
        cJSON_AddNumberToObject(o, "ratio", r[i].cublas_ms / r[i].ms);
        cJSON_AddNumberToObject(o, "rel_err", r[i].rel_err);
        cJSON_AddStringToObject(o, "kernel", r[i].kernel);
    }
    return t;
}

/* The rows as a table or CSV with the geometric mean below, or as one JSON object {rows, geomean_ratio, min_ratio}. */
static int print_rows(const row *r, int n, const char *fmt)
{
    double logsum = 0, worst = INFINITY;
    for (int i = 0; i < n; ++i) {
        logsum += log(r[i].cublas_ms / r[i].ms);
        worst = fmin(worst, r[i].cublas_ms / r[i].ms);
    }
    double geo = n ? exp(logsum / n) : 0;
    gt_table *t = table_of(r, n);
    int rc = t ? 0 : -1;
    if (t && !strcmp(fmt, "json")) {
        cJSON *root = cJSON_CreateObject();
        cJSON_AddItemToObject(root, "rows", t->rows);
        t->rows = NULL;
        cJSON_AddNumberToObject(root, "geomean_ratio", geo);
        cJSON_AddNumberToObject(root, "min_ratio", n ? worst : 0);
        char *text = cJSON_Print(root);
        rc = text && printf("%s\n", text) > 0 ? 0 : -1;
        free(text);
        cJSON_Delete(root);
    } else if (t) {
        rc = gt_table_print(t, fmt, stdout);
        if (rc == 0 && !strcmp(fmt, "table"))
            printf("geometric mean ratio %.3fx over %d shapes, lowest %.3fx\n", geo, n, worst);
    }
    gt_table_free(t);
    return rc;
}

/* 0, -1 after --help, or an exit status after a message. */
static int parse(int argc, char **argv, gt_cli_args *a, gt_shape **shapes, int *n)
{
    char err[1024];
    int rc = gt_cli_parse(GT_V_BENCH, argc, argv, a, err, sizeof err);
    if (rc == 1) return usage(stdout), -1;
    if (rc == 0 && a->npos) rc = -1, snprintf(err, sizeof err, "unexpected argument '%s'", a->pos[0]);
    if (rc == 0 && !a->sizes.n) a->sizes.n = gt_cli_parse_sizes(GT_BENCH_SUITE, &a->sizes.v, err, sizeof err);
    if (rc < 0) return fprintf(stderr, "gemmtune bench: %s\n", err), 2;
    if (!a->format) a->format = "table";
    *shapes = a->sizes.v, *n = a->sizes.n;
    for (int i = 0; i < *n; ++i)
        (*shapes)[i].ta = a->layout.n ? a->layout.v[0] >> 1 : 0, (*shapes)[i].tb = a->layout.n ? a->layout.v[0] & 1 : 0;
    return 0;
}

/* Validate, then time, one shape; *bad = 1 when its result is wrong. 0, or -1 with err. */
static int bench_one(gt_measure *m, gemmtune_handle h, row *r, int warmup, int reps, unsigned seed, int *bad,
                     char *err, size_t errlen)
{
    const gt_shape *s = &r->s;
    gemmtune_explain(h, s->ta, s->tb, s->m, s->n, s->k, s->ta ? s->m : s->k, s->tb ? s->k : s->n, s->n, r->kernel,
                     sizeof r->kernel);
    gt_check_spec sp = {.s = *s, .alpha = 1.5f, .beta = 0.0f, .seed = seed};
    if (gt_measure_check(m, &sp, run_gemmtune, h, &r->rel_err, err, errlen) ||
        time_pair(m, h, s, warmup, reps, r, err, errlen))
        return -1;
    if (!(r->rel_err <= gt_tolerance(s->k))) {
        fprintf(stderr, "gemmtune bench: %dx%dx%d: WRONG RESULT, max relative error %.3g > %.3g\n", s->m, s->n, s->k,
                r->rel_err, gt_tolerance(s->k));
        *bad = 1;
    }
    return 0;
}

int gt_cmd_bench(int argc, char **argv)
{
    gt_cli_args a;
    gt_shape *shapes;
    int n;
    char err[1024] = "";
    gt_cli_args_init(&a);
    int rc = parse(argc, argv, &a, &shapes, &n);
    if (rc) return gt_cli_args_free(&a), rc < 0 ? 0 : rc;
    gt_measure *m = NULL;
    gemmtune_handle h = NULL;
    gemmtune_options opt;
    gemmtune_options_init(&opt);
    opt.db_path = a.db;
    opt.device = a.gpu.n ? a.gpu.v[0] : 0;
    opt.fallback = GEMMTUNE_FALLBACK_DEFAULT;
    row *rows = calloc((size_t)n, sizeof *rows);
    rc = 1;
    if (gt_measure_open(opt.device, &m, err, sizeof err)) goto fail;
    gemmtune_status st = gemmtune_create(&h, &opt);
    if (st != GEMMTUNE_SUCCESS) {
        snprintf(err, sizeof err, "%s %s", gemmtune_status_string(st), gemmtune_last_error());
        goto fail;
    }
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        row *r = &rows[i];
        r->s = shapes[i];
        if (bench_one(m, h, r, (int)(a.warmup ? a.warmup : 5), (int)(a.reps ? a.reps : 20), 77 + (unsigned)i, &bad,
                      err, sizeof err))
            goto fail;
    }
    rc = print_rows(rows, n, a.format) < 0 ? 1 : bad;
    goto out;
fail:
    fprintf(stderr, "gemmtune bench: %s\n", err);
out:
    gemmtune_destroy(h);
    gt_measure_close(m);
    free(rows);
    gt_cli_args_free(&a);
    return rc;
}
