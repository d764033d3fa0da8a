/* gemmtune query: stored winners (or every trial, the GPUs, the sweeps) with their ratio to cuBLAS, as a table, CSV
 * or JSON (src/cli/table.c). Needs no GPU and no CUDA driver; only reads, and never creates a database.
 * Tested by tests/test_cli_db.c. */
#include "cli.h"
#include "cli_db.h"
#include "db.h"
#include "options.h"
#include "table.h"
#include "term.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Columns: the same in every format; trials add status, winner, error and message. stale: the kernel's source
 * changed since it was timed (gt_kernel_stale), so the library never serves it: re-tune. */
static const gt_col cols[] = {
    {"gpu", NULL, NULL},          {"cc", NULL, NULL},          {"sms", NULL, "%.0f"},
    {"batch", NULL, "%.0f"},      {"m", NULL, "%.0f"},         {"n", NULL, "%.0f"},         {"k", NULL, "%.0f"},
    {"layout", NULL, NULL},       {"family", NULL, NULL},      {"params", NULL, NULL},
    {"ms", NULL, "%.4f"},         {"tflops", NULL, "%.2f"},    {"cublas_ms", NULL, "%.4f"},
    {"cublas_tflops", NULL, "%.2f"}, {"ratio_vs_cublas", NULL, "%.3f"}, {"stale", NULL, NULL},
    {"status", NULL, NULL},       {"winner", NULL, NULL},      {"rel_err", NULL, "%.2e"},
    {"message", NULL, NULL},
};
#define WINNER_COLS 16
#define TRIAL_COLS 20

typedef struct {
    gt_table *t;
    long top;
    char key[200]; /* GPU model + shape of the previous row, for --top */
    int in_group, oom;
} rows;

static void add_num(cJSON *o, const char *key, double v)
{
    if (v >= 0) cJSON_AddNumberToObject(o, key, v);
    else cJSON_AddNullToObject(o, key);
}

static void add_str(cJSON *o, const char *key, const char *v)
{
    if (v && *v) cJSON_AddStringToObject(o, key, v);
    else cJSON_AddNullToObject(o, key);
}

/* One row with the winner columns; NULL when --top already has enough of this group (or out of memory). */
static cJSON *add(rows *r, const char *gpu, int ccM, int ccm, int sms, const gt_shape *s, const char *family,
                  const char *params, double ms, double cublas_ms, int stale)
{
    char key[200], cc[16];
    snprintf(key, sizeof key, "%s|%d.%d|%d|%d|%d|%d|%d%d", gpu, ccM, ccm, sms, s->m, s->n, s->k, s->ta, s->tb);
    if (strcmp(key, r->key)) snprintf(r->key, sizeof r->key, "%s", key), r->in_group = 0;
    if (r->top && r->in_group >= r->top) return NULL; /* the walk comes fastest first within a group */
    r->in_group++;
    cJSON *o = gt_table_row(r->t);
    if (!o) return r->oom = 1, NULL;
    snprintf(cc, sizeof cc, "%d.%d", ccM, ccm);
    add_str(o, "gpu", gpu), add_str(o, "cc", cc), add_num(o, "sms", sms);
    add_num(o, "batch", gt_shape_batch(s)), add_num(o, "m", s->m), add_num(o, "n", s->n), add_num(o, "k", s->k);
    add_str(o, "layout", gt_layout_name(s->ta, s->tb)), add_str(o, "family", family), add_str(o, "params", params);
    add_num(o, "ms", ms), add_num(o, "tflops", ms > 0 ? gt_tflops(s, ms) : -1);
    add_num(o, "cublas_ms", cublas_ms), add_num(o, "cublas_tflops", cublas_ms > 0 ? gt_tflops(s, cublas_ms) : -1);
    add_num(o, "ratio_vs_cublas", ms > 0 && cublas_ms > 0 ? cublas_ms / ms : -1);
    cJSON_AddBoolToObject(o, "stale", stale);
    return o;
}

static int add_winner(const gt_winner *w, void *ctx)
{
    add(ctx, w->gpu_name, w->cc_major, w->cc_minor, w->sm_count, &w->shape, w->family, w->params, w->median_ms,
        w->cublas_ms, w->stale);
    return ((rows *)ctx)->oom;
}

static int add_trial(const gt_trial_row *t, void *ctx)
{
    cJSON *o = add(ctx, t->gpu_name, t->cc_major, t->cc_minor, t->sm_count, &t->shape, t->family, t->params,
                   t->median_ms, t->cublas_ms,
                   gt_kernel_stale(t->family, t->params, t->shape.ta, t->shape.tb,
                                   gt_shape_batch(&t->shape) > 1, t->source_hash));
    if (o) {
        add_str(o, "status", gt_status_name(t->status));
        cJSON_AddBoolToObject(o, "winner", t->is_winner);
        add_num(o, "rel_err", t->rel_err);
        add_str(o, "message", t->message);
    }
    return ((rows *)ctx)->oom;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: gemmtune query [options]\n\n"
                 "Prints the stored winner of each GPU model and shape (or, with --trials, every stored trial, failed\n"
                 "ones included) with its time, TFLOPS and ratio to cuBLAS (cuBLAS time / kernel time: > 1 beats\n"
                 "cuBLAS); with --gpus the GPUs that ran sweeps, with --sweeps the sweeps. Needs no GPU. It only reads\n"
                 "the database (which may belong to another user) and never creates one.\n\n");
    gt_cli_usage(out, GT_V_QUERY);
}

/* Winners or trials into a table, printed. 0, or -1 with err. */
static int print_results(gt_db *db, const gt_cli_args *a, const gt_cli_filter *cf, const char *path, char *err,
                         size_t errlen)
{
    rows r = {.t = gt_table_new(cols, a->trials ? TRIAL_COLS : WINNER_COLS), .top = a->top};
    if (!r.t) return snprintf(err, errlen, "out of memory"), -1;
    int rc = a->trials ? gt_db_trials(db, &cf->f, add_trial, &r, err, errlen)
                       : gt_db_winners(db, &cf->f, add_winner, &r, err, errlen);
    if (rc == 0 && r.oom) rc = -1, snprintf(err, errlen, "out of memory");
    if (rc == 0 && gt_table_print(r.t, a->format, stdout) < 0) rc = -1, snprintf(err, errlen, "cannot write the output");
    if (rc == 0 && !strcmp(a->format, "table") && !cJSON_GetArraySize(r.t->rows))
        gt_term_printf(stderr, "gemmtune query: no %s match in %s\n", a->trials ? "trials" : "winners", path);
    gt_table_free(r.t);
    return rc;
}

static const gt_col gpu_cols[] = {
    {"gpu", NULL, NULL},          {"cc", NULL, NULL},           {"sms", NULL, "%.0f"},
    {"mem_gib", NULL, "%.1f"},    {"l2_mib", NULL, "%.1f"},     {"sweeps", NULL, "%.0f"},
    {"nvidia_driver", NULL, NULL}, {"cuda_driver", NULL, NULL}, {"cuda_runtime", NULL, NULL},
    {"nvrtc", NULL, NULL},        {"last_sweep", NULL, NULL},   {"uuid", NULL, NULL}};
static const gt_col sweep_cols[] = {
    {"id", NULL, "%.0f"},          {"started_at", NULL, NULL},    {"gpu", NULL, NULL},
    {"cc", NULL, NULL},            {"sms", NULL, "%.0f"},         {"nvidia_driver", NULL, NULL},
    {"cuda_driver", NULL, NULL},   {"cuda_runtime", NULL, NULL},  {"nvrtc", NULL, NULL},
    {"sm_clock_mhz", NULL, "%.0f"}, {"trials", NULL, "%.0f"},     {"trials_ok", NULL, "%.0f"},
    {"host", NULL, NULL},          {"origin", NULL, NULL},        {"gemmtune_version", NULL, NULL},
    {"uuid", NULL, NULL},          {"command", NULL, NULL}};

/* --gpus and --sweeps: printed, 0; -1 with err; 1 when neither was asked. */
static int print_lists(gt_db *db, const gt_cli_args *a, const gt_cli_filter *cf, char *err, size_t errlen)
{
    if (!a->gpus && !a->sweeps) return 1;
    gt_table t = {a->gpus ? gpu_cols : sweep_cols, a->gpus ? 12 : 17, NULL};
    if (gt_db_list(db, a->gpus ? "gpus" : "sweeps", &cf->f, &t.rows, err, errlen) < 0) return -1;
    int rc = gt_table_print(&t, a->format, stdout);
    if (rc < 0) snprintf(err, errlen, "cannot write the output");
    cJSON_Delete(t.rows);
    return rc;
}

int gt_cmd_query(int argc, char **argv)
{
    char err[1024], path[4096];
    gt_cli_args a;
    gt_cli_filter cf;
    gt_db *db = NULL;
    gt_cli_args_init(&a);
    int rc = gt_cli_parse(GT_V_QUERY, argc, argv, &a, err, sizeof err);
    if (rc == 1) return gt_cli_args_free(&a), usage(stdout), 0;
    if (rc == 0 && a.npos) rc = -1, snprintf(err, sizeof err, "unexpected argument '%s'", a.pos[0]);
    if (rc == 0 && a.trials + a.gpus + a.sweeps > 1) rc = -1, snprintf(err, sizeof err, "--trials, --gpus, --sweeps: one at a time");
    if (rc == 0 && (a.gpus || a.sweeps) && (a.shape.n || a.layout.n || a.family || a.top))
        rc = -1, snprintf(err, sizeof err, "--gpus and --sweeps list GPUs and sweeps: only --gpu and --gpu-model narrow them");
    if (!a.format) a.format = "table";
    if (rc < 0) {
        gt_term_printf(stderr, "gemmtune query: %s\n", err);
        return gt_cli_args_free(&a), 2;
    }
    rc = gt_cli_open_reader(&a, &cf, path, sizeof path, &db, err, sizeof err);
    if (rc == 0 && (rc = print_lists(db, &a, &cf, err, sizeof err)) == 1)
        rc = print_results(db, &a, &cf, path, err, sizeof err);
    if (rc < 0) rc = 1;
    gt_db_close(db);
    gt_cli_args_free(&a);
    if (rc) gt_term_printf(stderr, "gemmtune query: %s\n", err);
    return rc;
}
