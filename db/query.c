/* Reading the database: the winners walk (loader, query, export, report), the trials walk (query --trials), and the
 * GPU and sweep lists (query --gpus, --sweeps).
 * Tested by tests/test_db.c. */
#include "dbi.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <string.h>

/* The GPU model and shape columns every walk selects (DBI_ROW_SQL). */
static void read_model_shape(sqlite3_stmt *st, char *gpu, size_t gpulen, int *cc_major, int *cc_minor, int *sms,
                             gt_shape *s)
{
    char lay[8];
    dbi_col_text(st, "gpu", gpu, gpulen);
    *cc_major = (int)dbi_col_int(st, "cc_major"), *cc_minor = (int)dbi_col_int(st, "cc_minor");
    *sms = (int)dbi_col_int(st, "sm_count");
    *s = (gt_shape){(int)dbi_col_int(st, "m"), (int)dbi_col_int(st, "n"), (int)dbi_col_int(st, "k"), 0, 0,
                    (int)dbi_col_int(st, "batch")};
    dbi_col_text(st, "layout", lay, sizeof lay);
    if (gt_layout_parse(lay, &s->ta, &s->tb) < 0) s->ta = s->tb = 0;
}

/* The stored names of a math class and a status, as the enums (GT_MATH_COUNT, GT_ST_COUNT: a name this build
 * does not know). */
static gt_math math_of(sqlite3_stmt *st)
{
    char name[16];
    gt_math m;
    dbi_col_text(st, "math", name, sizeof name);
    return gt_math_parse(name, &m) == 0 ? m : GT_MATH_COUNT;
}

static gt_status status_of(sqlite3_stmt *st)
{
    char name[32];
    dbi_col_text(st, "status", name, sizeof name);
    const int s = gt_status_parse(name);
    return s >= 0 ? (gt_status)s : GT_ST_COUNT;
}

static double tflops_of(const gt_shape *s, double ms) { return ms > 0 ? gt_tflops(s, ms) : -1; }

static void read_winner(sqlite3_stmt *st, gt_winner *w)
{
    memset(w, 0, sizeof *w);
    read_model_shape(st, w->gpu_name, sizeof w->gpu_name, &w->cc_major, &w->cc_minor, &w->sm_count, &w->shape);
    dbi_col_text(st, "family", w->family, sizeof w->family);
    dbi_col_text(st, "params", w->params, sizeof w->params);
    dbi_col_text(st, "source_hash", w->source_hash, sizeof w->source_hash);
    w->median_ms = dbi_col_real(st, "median_ms");
    w->spread_pct = dbi_col_real(st, "spread_pct");
    w->cublas_ms = dbi_col_real(st, "cublas_ms");
    w->sweep_id = dbi_col_int(st, "sweep_id");
    w->math = math_of(st);
    w->tflops = tflops_of(&w->shape, w->median_ms);
    w->cublas_tflops = tflops_of(&w->shape, w->cublas_ms);
    w->ratio = w->cublas_ms > 0 && w->median_ms > 0 ? w->cublas_ms / w->median_ms : -1;
    w->stale = gt_kernel_stale(w->family, w->params, w->shape.ta, w->shape.tb, gt_shape_batch(&w->shape) > 1,
                               w->source_hash);
}

/* Bind the filter, step every row through row(), finalize. row() returning non-zero stops the walk. */
static int walk(gt_db *db, sqlite3_stmt *st, const gt_winner_filter *filter, int (*row)(sqlite3_stmt *, void *),
                void *ctx, char *err, size_t errlen)
{
    if (dbi_bind_filter(st, filter) != SQLITE_OK) {
        sqlite3_finalize(st);
        return dbi_fail(db, DBI_WHERE, err, errlen);
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (row(st, ctx)) {
            rc = SQLITE_DONE;
            break;
        }
    if (rc != SQLITE_DONE) dbi_fail(db, DBI_WHERE, err, errlen);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

struct winner_walk {
    gt_winner_fn fn;
    void *ctx;
};

static int winner_row(sqlite3_stmt *st, void *vctx)
{
    struct winner_walk *c = vctx;
    gt_winner w;
    read_winner(st, &w);
    return c->fn(&w, c->ctx);
}

int gt_db_winners(gt_db *db, const gt_winner_filter *filter, gt_winner_fn fn, void *ctx, char *err,
                  size_t errlen)
{
    sqlite3_stmt *st;
    if (dbi_prepare(db, &st, err, errlen,
                    "SELECT " DBI_ROW_SQL ", w.median_ms, w.spread_pct, " DBI_BASELINE_SQL " AS cublas_ms, w.sweep_id, "
                    "w.math FROM winners w "
                    "JOIN gpu_models gm ON gm.id = w.model_id JOIN shapes s ON s.id = w.shape_id "
                    "JOIN candidates c ON c.id = w.candidate_id "
                    "LEFT JOIN baselines b ON b.model_id = w.model_id AND b.shape_id = w.shape_id" DBI_FILTER_SQL
                    DBI_SERVABLE_SQL
                    " ORDER BY gm.name, gm.cc_major, gm.cc_minor, gm.sm_count, s.layout, s.m, s.n, s.k, s.batch",
                    NULL) < 0)
        return -1;
    struct winner_walk c = {fn, ctx};
    gt_winner_filter f = filter ? *filter : (gt_winner_filter){0};
    if (!f.math) f.math = GT_MATH_BIT(GT_MATH_FP32);
    return walk(db, st, &f, winner_row, &c, err, errlen);
}

static void read_trial(sqlite3_stmt *st, gt_trial_row *t)
{
    memset(t, 0, sizeof *t);
    read_model_shape(st, t->gpu_name, sizeof t->gpu_name, &t->cc_major, &t->cc_minor, &t->sm_count, &t->shape);
    dbi_col_text(st, "family", t->family, sizeof t->family);
    dbi_col_text(st, "params", t->params, sizeof t->params);
    dbi_col_text(st, "source_hash", t->source_hash, sizeof t->source_hash);
    t->status = status_of(st);
    dbi_col_text(st, "message", t->message, sizeof t->message);
    t->median_ms = dbi_col_real(st, "median_ms");
    t->min_ms = dbi_col_real(st, "min_ms");
    t->max_ms = dbi_col_real(st, "max_ms");
    t->tflops = dbi_col_real(st, "tflops");
    t->rel_err = dbi_col_real(st, "rel_err");
    t->cublas_ms = dbi_col_real(st, "cublas_ms");
    t->id = dbi_col_int(st, "id");
    t->sweep_id = dbi_col_int(st, "sweep_id");
    t->is_winner = (int)dbi_col_int(st, "is_winner");
    t->ratio = t->cublas_ms > 0 && t->median_ms > 0 ? t->cublas_ms / t->median_ms : -1;
}

struct trial_walk {
    gt_trial_fn fn;
    void *ctx;
};

static int trial_row(sqlite3_stmt *st, void *vctx)
{
    struct trial_walk *c = vctx;
    gt_trial_row t;
    read_trial(st, &t);
    return c->fn(&t, c->ctx);
}

int gt_db_trials(gt_db *db, const gt_winner_filter *filter, gt_trial_fn fn, void *ctx, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (dbi_prepare(db, &st, err, errlen,
                    "SELECT " DBI_ROW_SQL ", t.status, t.message, t.median_ms, t.min_ms, t.max_ms, t.tflops, "
                    "t.rel_err, b.cublas_ms, t.id, t.sweep_id, "
                    "EXISTS (SELECT 1 FROM winners w WHERE w.model_id = gm.id AND w.shape_id = s.id "
                    "AND w.candidate_id = c.id) AS is_winner FROM trials t "
                    "JOIN sweeps sw ON sw.id = t.sweep_id JOIN gpus g ON g.id = sw.gpu_id "
                    "JOIN gpu_models gm ON gm.id = g.model_id JOIN shapes s ON s.id = t.shape_id "
                    "JOIN candidates c ON c.id = t.candidate_id "
                    "LEFT JOIN baselines b ON b.model_id = gm.id AND b.shape_id = s.id" DBI_FILTER_SQL
                    " ORDER BY gm.name, gm.cc_major, gm.cc_minor, gm.sm_count, s.layout, s.m, s.n, s.k, s.batch, "
                    "t.status <> 'ok', t.median_ms IS NULL, t.median_ms, t.id",
                    NULL) < 0)
        return -1;
    struct trial_walk c = {fn, ctx};
    return walk(db, st, filter, trial_row, &c, err, errlen);
}

/* Versions stored as major*1000 + minor*10, shown as "13.0". */
#define DBI_VERSION(col) "CASE WHEN " col " IS NULL THEN NULL ELSE (" col " / 1000) || '.' || (" col " % 1000 / 10) END"
#define DBI_GPU_FILTER                                                                                          \
    " WHERE (?1 IS NULL OR instr(lower(gm.name), lower(?1)) > 0) AND (?2 IS NULL OR (gm.name = ?2 AND "          \
    "gm.cc_major = ?3 AND gm.cc_minor = ?4 AND gm.sm_count = ?5))"

static const char gpus_sql[] =
    "SELECT gm.name AS gpu, gm.cc_major || '.' || gm.cc_minor AS cc, gm.sm_count AS sms, g.uuid, "
    "round(g.mem_bytes / 1073741824.0, 1) AS mem_gib, round(g.l2_bytes / 1048576.0, 1) AS l2_mib, "
    "(SELECT count(*) FROM sweeps x WHERE x.gpu_id = g.id) AS sweeps, sw.nvidia_driver, "
    DBI_VERSION("sw.driver_version") " AS cuda_driver, " DBI_VERSION("sw.cuda_version") " AS cuda_runtime, "
    DBI_VERSION("sw.nvrtc_version") " AS nvrtc, sw.started_at AS last_sweep FROM gpus g "
    "JOIN gpu_models gm ON gm.id = g.model_id LEFT JOIN sweeps sw ON sw.id = (SELECT x.id FROM sweeps x "
    "WHERE x.gpu_id = g.id ORDER BY x.started_at DESC, x.id DESC LIMIT 1)" DBI_GPU_FILTER " ORDER BY gm.name, g.uuid";

static const char sweeps_sql[] =
    "SELECT sw.id, sw.started_at, sw.origin, sw.host, gm.name AS gpu, gm.cc_major || '.' || gm.cc_minor AS cc, "
    "gm.sm_count AS sms, g.uuid, sw.nvidia_driver, " DBI_VERSION("sw.driver_version") " AS cuda_driver, "
    DBI_VERSION("sw.cuda_version") " AS cuda_runtime, " DBI_VERSION("sw.nvrtc_version") " AS nvrtc, "
    "sw.sm_clock_mhz, (SELECT count(*) FROM trials t WHERE t.sweep_id = sw.id) AS trials, "
    "(SELECT count(*) FROM trials t WHERE t.sweep_id = sw.id AND t.status = 'ok') AS trials_ok, sw.gemmtune_version, "
    "sw.command FROM sweeps sw JOIN gpus g ON g.id = sw.gpu_id JOIN gpu_models gm ON gm.id = g.model_id"
    DBI_GPU_FILTER " ORDER BY sw.started_at, sw.id";

/* One result row as an object keyed by column name. */
static cJSON *row_object(sqlite3_stmt *st)
{
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; o && i < sqlite3_column_count(st); ++i) {
        const char *name = sqlite3_column_name(st, i);
        switch (sqlite3_column_type(st, i)) {
        case SQLITE_INTEGER:
        case SQLITE_FLOAT: cJSON_AddNumberToObject(o, name, sqlite3_column_double(st, i)); break;
        case SQLITE_TEXT: cJSON_AddStringToObject(o, name, (const char *)sqlite3_column_text(st, i)); break;
        default: cJSON_AddNullToObject(o, name);
        }
    }
    return o;
}

int gt_db_list(gt_db *db, const char *kind, const gt_winner_filter *filter, cJSON **rows, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    int rc = SQLITE_OK;
    *rows = NULL;
    if (strcmp(kind, "gpus") && strcmp(kind, "sweeps")) return snprintf(err, errlen, "internal: list '%s'", kind), -1;
    if (dbi_prepare(db, &st, err, errlen, !strcmp(kind, "gpus") ? gpus_sql : sweeps_sql, NULL) < 0) return -1;
    if (filter && filter->gpu_name && *filter->gpu_name) rc |= sqlite3_bind_text(st, 1, filter->gpu_name, -1, SQLITE_TRANSIENT);
    if (filter && filter->model) {
        rc |= sqlite3_bind_text(st, 2, filter->model->name, -1, SQLITE_TRANSIENT);
        rc |= sqlite3_bind_int(st, 3, filter->model->cc_major);
        rc |= sqlite3_bind_int(st, 4, filter->model->cc_minor);
        rc |= sqlite3_bind_int(st, 5, filter->model->sm_count);
    }
    cJSON *arr = rc == SQLITE_OK ? cJSON_CreateArray() : NULL;
    while (arr && (rc = sqlite3_step(st)) == SQLITE_ROW) cJSON_AddItemToArray(arr, row_object(st));
    if (rc != SQLITE_DONE) dbi_fail(db, DBI_WHERE, err, errlen), cJSON_Delete(arr), arr = NULL;
    sqlite3_finalize(st);
    return (*rows = arr) ? 0 : -1;
}
