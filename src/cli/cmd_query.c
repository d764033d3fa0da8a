/* gemmtune query: stored winners (or every trial) with their ratio to cuBLAS, as a table, CSV or JSON.
 * Needs no GPU and no CUDA driver; never creates a database. Tested by tests/test_cli_db.c. */
#include "cli.h"
#include "cli_db.h"
#include "db.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    gt_trial_row *v;     /* winners are stored as trial rows with status "winner" */
    int n, cap, top, oom;
    char key[200];       /* GPU model + shape of the previous row, for --top */
    int in_group;
} rows;

static void group_key(const gt_trial_row *t, char *buf, size_t n)
{
    snprintf(buf, n, "%s|%d.%d|%d|%d|%d|%d|%d%d", t->gpu_name, t->cc_major, t->cc_minor, t->sm_count, t->shape.m,
             t->shape.n, t->shape.k, t->shape.ta, t->shape.tb);
}

static int add(rows *r, const gt_trial_row *t)
{
    char key[200];
    group_key(t, key, sizeof key);
    if (strcmp(key, r->key)) snprintf(r->key, sizeof r->key, "%s", key), r->in_group = 0;
    if (r->top && r->in_group >= r->top) return 0; /* the walk comes fastest first within a group */
    r->in_group++;
    if (r->n == r->cap) {
        gt_trial_row *p = realloc(r->v, (r->cap = r->cap ? 2 * r->cap : 64) * sizeof *p);
        if (!p) return r->oom = 1;
        r->v = p;
    }
    r->v[r->n++] = *t;
    return 0;
}

static int add_trial(const gt_trial_row *t, void *ctx) { return add(ctx, t); }

static int add_winner(const gt_winner *w, void *ctx)
{
    gt_trial_row t;
    memset(&t, 0, sizeof t);
    snprintf(t.gpu_name, sizeof t.gpu_name, "%s", w->gpu_name);
    t.cc_major = w->cc_major, t.cc_minor = w->cc_minor, t.sm_count = w->sm_count, t.shape = w->shape;
    snprintf(t.family, sizeof t.family, "%s", w->family);
    snprintf(t.params, sizeof t.params, "%s", w->params);
    snprintf(t.source_hash, sizeof t.source_hash, "%s", w->source_hash);
    snprintf(t.status, sizeof t.status, "ok");
    t.median_ms = w->median_ms, t.tflops = w->tflops, t.cublas_ms = w->cublas_ms, t.ratio = w->ratio;
    t.min_ms = t.max_ms = t.rel_err = -1;
    t.sweep_id = w->sweep_id, t.is_winner = 1;
    return add(ctx, &t);
}

/* Columns: the same in every format; trials add status, error and message. */
enum { C_GPU, C_CC, C_SMS, C_M, C_N, C_K, C_LAYOUT, C_FAMILY, C_PARAMS, C_MS, C_TFLOPS, C_CUBLAS_MS, C_CUBLAS_TFLOPS,
       C_RATIO, C_STATUS, C_WINNER, C_REL_ERR, C_MESSAGE, C_COUNT };
static const char *const names[C_COUNT] = {"gpu", "cc", "sms", "m", "n", "k", "layout", "family", "params", "ms",
                                           "tflops", "cublas_ms", "cublas_tflops", "ratio_vs_cublas", "status",
                                           "winner", "rel_err", "message"};

/* Cell text; *num = the value for JSON (NAN-free: has_num 0 means a string or null). */
static void cell(const gt_trial_row *t, int c, char *buf, size_t n, double *num, int *kind)
{
    double v = -1;
    *kind = 1; /* 0 string, 1 number, 2 null */
    switch (c) {
    case C_GPU: snprintf(buf, n, "%s", t->gpu_name), *kind = 0; return;
    case C_CC: snprintf(buf, n, "%d.%d", t->cc_major, t->cc_minor), *kind = 0; return;
    case C_SMS: v = t->sm_count; break;
    case C_M: v = t->shape.m; break;
    case C_N: v = t->shape.n; break;
    case C_K: v = t->shape.k; break;
    case C_LAYOUT: snprintf(buf, n, "%s", gt_layout_name(t->shape.ta, t->shape.tb)), *kind = 0; return;
    case C_FAMILY: snprintf(buf, n, "%s", t->family), *kind = 0; return;
    case C_PARAMS: snprintf(buf, n, "%s", t->params), *kind = 0; return;
    case C_STATUS: snprintf(buf, n, "%s", t->status), *kind = 0; return;
    case C_MESSAGE: snprintf(buf, n, "%s", t->message), *kind = t->message[0] ? 0 : 2; return;
    case C_WINNER: snprintf(buf, n, "%s", t->is_winner ? "yes" : ""), *num = t->is_winner, *kind = 3; return;
    case C_MS: v = t->median_ms; break;
    case C_TFLOPS: v = t->tflops; break;
    case C_CUBLAS_MS: v = t->cublas_ms; break;
    case C_CUBLAS_TFLOPS: v = t->cublas_ms > 0 ? 2.0 * t->shape.m * t->shape.n * t->shape.k / (t->cublas_ms * 1e9) : -1; break;
    case C_RATIO: v = t->ratio; break;
    case C_REL_ERR: v = t->rel_err; break;
    }
    *num = v;
    if (v < 0) *kind = 2, snprintf(buf, n, "n/a");
    else if (c == C_RATIO) snprintf(buf, n, "%.3f", v);
    else if (c == C_REL_ERR) snprintf(buf, n, "%.2e", v);
    else if (c == C_MS || c == C_CUBLAS_MS) snprintf(buf, n, "%.4f", v);
    else if (c == C_TFLOPS || c == C_CUBLAS_TFLOPS) snprintf(buf, n, "%.2f", v);
    else snprintf(buf, n, "%.0f", v);
}

static int ncols(int trials) { return trials ? C_COUNT : C_STATUS; }

static void print_table(const rows *r, int trials)
{
    int w[C_COUNT];
    char buf[300];
    double num;
    int kind;
    for (int c = 0; c < ncols(trials); ++c) w[c] = (int)strlen(names[c]);
    for (int i = 0; i < r->n; ++i)
        for (int c = 0; c < ncols(trials); ++c) {
            cell(&r->v[i], c, buf, sizeof buf, &num, &kind);
            if ((int)strlen(buf) > w[c]) w[c] = (int)strlen(buf);
        }
    for (int c = 0; c < ncols(trials); ++c) printf("%-*s%s", w[c], names[c], c + 1 < ncols(trials) ? "  " : "\n");
    for (int i = 0; i < r->n; ++i)
        for (int c = 0; c < ncols(trials); ++c) {
            cell(&r->v[i], c, buf, sizeof buf, &num, &kind);
            printf(kind == 1 || kind == 2 ? "%*s%s" : "%-*s%s", w[c], buf, c + 1 < ncols(trials) ? "  " : "\n");
        }
}

static void print_csv_field(const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, stdout);
        return;
    }
    putchar('"');
    for (; *s; ++s) {
        if (*s == '"') putchar('"');
        putchar(*s);
    }
    putchar('"');
}

static void print_csv(const rows *r, int trials)
{
    char buf[300];
    double num;
    int kind;
    for (int c = 0; c < ncols(trials); ++c) printf("%s%s", names[c], c + 1 < ncols(trials) ? "," : "\n");
    for (int i = 0; i < r->n; ++i)
        for (int c = 0; c < ncols(trials); ++c) {
            cell(&r->v[i], c, buf, sizeof buf, &num, &kind);
            if (kind == 1) printf("%.17g", num); /* full precision for spreadsheets */
            else if (kind != 2) print_csv_field(buf);
            printf("%s", c + 1 < ncols(trials) ? "," : "\n");
        }
}

static int print_json(const rows *r, int trials)
{
    char buf[300];
    double num;
    int kind;
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; i < r->n; ++i) {
        cJSON *o = cJSON_CreateObject();
        for (int c = 0; c < ncols(trials); ++c) {
            cell(&r->v[i], c, buf, sizeof buf, &num, &kind);
            if (kind == 0) cJSON_AddStringToObject(o, names[c], buf);
            else if (kind == 1) cJSON_AddNumberToObject(o, names[c], num);
            else if (kind == 3) cJSON_AddBoolToObject(o, names[c], num > 0);
            else cJSON_AddNullToObject(o, names[c]);
        }
        cJSON_AddItemToArray(arr, o);
    }
    char *text = cJSON_Print(arr);
    cJSON_Delete(arr);
    if (!text) return -1;
    printf("%s\n", text);
    free(text);
    return 0;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gemmtune query [--trials] [--gpu NAME] [--shape MxNxK|N] [--layout nn|nt|tn|tt] [--family F]\n"
            "                      [--top N] [--format table|csv|json] [--db PATH]\n\n"
            "Prints the stored winner of each GPU model and shape (or, with --trials, every stored trial, failed ones\n"
            "included) with its time, TFLOPS and ratio to cuBLAS (cuBLAS time / kernel time: > 1 beats cuBLAS).\n"
            "  --gpu NAME    GPU models whose name contains NAME (case-insensitive)\n"
            "  --shape S     one shape, MxNxK or N (N x N x N), of layout --layout (default nn)\n"
            "  --layout L    only this layout\n"
            "  --family F    only this kernel family\n"
            "  --top N       at most N rows per GPU model and shape, fastest first (with --trials)\n"
            "  --format F    table (default), csv or json\n"
            "  --db PATH     database (default: $GEMMTUNE_DB, else $XDG_DATA_HOME/gemmtune/gemmtune.db)\n"
            "Needs no GPU. A missing database is an error; query never creates one.\n");
}

typedef struct {
    gt_cli_filter cf;
    const char *db, *format;
    long top;
    int trials;
} qopts;

static int parse(int argc, char **argv, qopts *o, char *err, size_t errlen)
{
    const char *v;
    int r;
    memset(o, 0, sizeof *o);
    o->format = "table";
    for (int i = 1; i < argc; ++i) {
        if ((r = gt_cli_filter_opt(&o->cf, argc, argv, &i, err, errlen)) != 0) {
            if (r < 0) return -1;
        } else if ((r = gt_cli_opt(argc, argv, &i, "--db", &v, err, errlen)) != 0) {
            if (r < 0) return -1;
            o->db = v;
        } else if ((r = gt_cli_opt(argc, argv, &i, "--format", &v, err, errlen)) != 0) {
            if (r < 0) return -1;
            o->format = v;
        } else if ((r = gt_cli_opt(argc, argv, &i, "--top", &v, err, errlen)) != 0) {
            if (r < 0 || gt_cli_parse_int("--top", v, 1000000, &o->top, err, errlen) < 0) return -1;
        } else if (!strcmp(argv[i], "--trials")) o->trials = 1;
        else return snprintf(err, errlen, "unknown option '%s'", argv[i]), -1;
    }
    if (strcmp(o->format, "table") && strcmp(o->format, "csv") && strcmp(o->format, "json"))
        return snprintf(err, errlen, "unknown --format '%s': want table, csv or json", o->format), -1;
    return gt_cli_filter_done(&o->cf, err, errlen);
}

int gt_cmd_query(int argc, char **argv)
{
    char err[1024], path[4096];
    qopts o;
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) return usage(stdout), 0;
    if (parse(argc, argv, &o, err, sizeof err) < 0) {
        fprintf(stderr, "gemmtune query: %s\n", err);
        return 2;
    }
    gt_db *db;
    if (gt_cli_db_path(o.db, path, sizeof path, err, sizeof err) < 0 || gt_db_open(path, GT_DB_READ, &db, err, sizeof err) < 0) {
        fprintf(stderr, "gemmtune query: %s\n", err);
        return 1;
    }
    rows r = {.top = (int)o.top};
    int rc = o.trials ? gt_db_trials(db, &o.cf.f, add_trial, &r, err, sizeof err)
                      : gt_db_winners(db, &o.cf.f, add_winner, &r, err, sizeof err);
    gt_db_close(db);
    if (rc < 0 || r.oom) {
        fprintf(stderr, "gemmtune query: %s\n", r.oom ? "out of memory" : err);
        free(r.v);
        return 1;
    }
    if (!strcmp(o.format, "json")) rc = print_json(&r, o.trials);
    else if (!strcmp(o.format, "csv")) print_csv(&r, o.trials);
    else {
        print_table(&r, o.trials);
        if (!r.n) fprintf(stderr, "gemmtune query: no %s match in %s\n", o.trials ? "trials" : "winners", path);
    }
    free(r.v);
    return rc < 0 ? 1 : 0;
}
