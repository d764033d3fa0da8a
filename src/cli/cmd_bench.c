/* gemmtune bench: the loader's kernel (the stored winner, through gemmtune_sgemm) against cuBLAS FP32 (pedantic) on
 * the same buffers in one process: validated first, then timed with CUDA events on a cold L2, median of --reps
 * runs after warm-up, alternating the two. Needs a GPU; GPU test in tests/test_gpu.c, bad input in test_cli.c. */
#include "cli.h"
#include "gemmtune.h"
#include "measure.h"

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
            "Runs the kernel the loader picks for each shape (the stored winner for this GPU model, else the rule\n"
            "`gemmtune explain` names) against cuBLAS FP32 (pedantic, no TF32) on the same buffers in this process.\n"
            "Each is validated against cuBLAS first (alpha 1.5, beta 0 over NaN C), then both are timed with CUDA\n"
            "events after warm-up on a cold L2, alternating in two rounds; the median of all runs is reported.\n"
            "ratio = cuBLAS time / gemmtune time (above 1: gemmtune is faster); the last line is their geometric mean.\n"
            "  --sizes LIST  N or MxNxK items (default: the issue-7 suite\n"
            "                " SUITE ")\n"
            "  --layout L    row-major layout (default nn)\n"
            "  --gpu N       CUDA device (default 0)\n"
            "  --db PATH     winners database (default $GEMMTUNE_DB, else ~/.local/share/gemmtune/gemmtune.db)\n"
            "  --reps N      timed runs per round and side (default 20; two rounds)\n"
            "  --warmup N    untimed runs first (default 5)\n"
            "  --format F    table (default), csv or json\n");
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

static void print_rows(const row *r, int n, const char *fmt)
{
    double logsum = 0, worst = INFINITY;
    for (int i = 0; i < n; ++i) {
        double ratio = r[i].cublas_ms / r[i].ms;
        logsum += log(ratio);
        worst = fmin(worst, ratio);
    }
    double geo = n ? exp(logsum / n) : 0;
    if (!strcmp(fmt, "csv")) printf("m,n,k,layout,gemmtune_ms,gemmtune_tflops,cublas_ms,cublas_tflops,ratio,rel_err,kernel\n");
    else if (!strcmp(fmt, "json")) printf("{\"rows\": [\n");
    else printf("%-20s %-6s %10s %8s %10s %8s %7s %9s  %s\n", "shape", "layout", "gemmtune", "TFLOPS", "cuBLAS",
                "TFLOPS", "ratio", "rel_err", "kernel (rule: family params)");
    for (int i = 0; i < n; ++i) {
        const gt_shape *s = &r[i].s;
        char shape[64];
        snprintf(shape, sizeof shape, "%dx%dx%d", s->m, s->n, s->k);
        const char *lay = gt_layout_name(s->ta, s->tb);
        double ratio = r[i].cublas_ms / r[i].ms;
        if (!strcmp(fmt, "csv"))
            printf("%d,%d,%d,%s,%.5f,%.3f,%.5f,%.3f,%.4f,%.3g,\"%s\"\n", s->m, s->n, s->k, lay, r[i].ms,
                   tflops(s, r[i].ms), r[i].cublas_ms, tflops(s, r[i].cublas_ms), ratio, r[i].rel_err, r[i].kernel);
        else if (!strcmp(fmt, "json"))
            printf("  {\"m\": %d, \"n\": %d, \"k\": %d, \"layout\": \"%s\", \"gemmtune_ms\": %.5f, \"gemmtune_tflops\": "
                   "%.3f, \"cublas_ms\": %.5f, \"cublas_tflops\": %.3f, \"ratio\": %.4f, \"rel_err\": %.3g, "
                   "\"kernel\": \"%s\"}%s\n", s->m, s->n, s->k, lay, r[i].ms, tflops(s, r[i].ms), r[i].cublas_ms,
                   tflops(s, r[i].cublas_ms), ratio, r[i].rel_err, r[i].kernel, i + 1 < n ? "," : "");
        else
            printf("%-20s %-6s %8.4fms %8.2f %8.4fms %8.2f %6.3fx %9.2g  %s\n", shape, lay, r[i].ms, tflops(s, r[i].ms),
                   r[i].cublas_ms, tflops(s, r[i].cublas_ms), ratio, r[i].rel_err, r[i].kernel);
    }
    if (!strcmp(fmt, "json")) printf("], \"geomean_ratio\": %.4f, \"min_ratio\": %.4f}\n", geo, worst);
    else if (strcmp(fmt, "csv")) printf("geometric mean ratio %.3fx over %d shapes, lowest %.3fx\n", geo, n, worst);
}

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
    *a = (bench_args){SUITE, "nn", NULL, "table", 0, 20, 5};
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

static void clean(char *s)
{
    for (; *s; ++s)
        if (*s == '"' || *s == '\\' || *s == '\n') *s = '\'';
}

int gt_cmd_bench(int argc, char **argv)
{
    bench_args a;
    gt_shape *shapes = NULL;
    char err[1024] = "";
    int ta, tb, rc = parse(argc, argv, &a);
    if (rc) return rc == 1 ? 0 : rc;
    int n = gt_cli_parse_sizes(a.sizes, &shapes, err, sizeof err);
    if (n < 0 || gt_layout_parse(a.layout, &ta, &tb)) {
        fprintf(stderr, "gemmtune bench: %s\n", n < 0 ? err : "bad --layout: want nn, nt, tn or tt");
        free(shapes);
        return 2;
    }
    gt_measure *m = NULL;
    gemmtune_handle h = NULL;
    gemmtune_options opt;
    gemmtune_options_init(&opt);
    opt.db_path = a.db;
    opt.device = (int)a.gpu;
    opt.fallback = GEMMTUNE_FALLBACK_DEFAULT;
    row *rows = calloc((size_t)n, sizeof *rows);
    rc = 1;
    if (gt_measure_open((int)a.gpu, &m, err, sizeof err)) goto fail;
    gemmtune_status st = gemmtune_create(&h, &opt);
    if (st != GEMMTUNE_SUCCESS) {
        snprintf(err, sizeof err, "%s %s", gemmtune_status_string(st), gemmtune_last_error());
        goto fail;
    }
    int bad = 0;
    for (int i = 0; i < n; ++i) {
        row *r = &rows[i];
        r->s = shapes[i];
        r->s.ta = ta, r->s.tb = tb;
        const gt_shape *s = &r->s;
        gemmtune_explain(h, ta, tb, s->m, s->n, s->k, ta ? s->m : s->k, tb ? s->k : s->n, s->n, r->kernel,
                         sizeof r->kernel);
        clean(r->kernel);
        gt_check_spec sp = {.s = *s, .alpha = 1.5f, .beta = 0.0f, .seed = 77 + (unsigned)i};
        if (gt_measure_check(m, &sp, run_gemmtune, h, &r->rel_err, err, sizeof err) ||
            time_pair(m, h, s, (int)a.warmup, (int)a.reps, r, err, sizeof err))
            goto fail;
        if (!(r->rel_err <= gt_tolerance(s->k))) {
            fprintf(stderr, "gemmtune bench: %dx%dx%d: WRONG RESULT, max relative error %.3g > %.3g\n", s->m, s->n,
                    s->k, r->rel_err, gt_tolerance(s->k));
            bad = 1;
        }
    }
    print_rows(rows, n, a.format);
    rc = bad;
    goto out;
fail:
    fprintf(stderr, "gemmtune bench: %s\n", err);
out:
    gemmtune_destroy(h);
    gt_measure_close(m);
    free(rows);
    free(shapes);
    return rc;
}
