/* Every row of a database being merged, through the row validator (db/validate.h), before merge writes anything:
 * the staged copy of one part (schema "src", db/merge.c) table by table, with the SQLite type of every column, the
 * rows each refers to, and what the part says against what this database holds (a GPU uuid of another model, a
 * sweep uid of another GPU). Tested by tests/test_export.c (a table of corrupted parts). */
#include "dbi.h"
#include "validate.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Read columns 0.. of st by fmt: 'i' long long * (NULL: DBV_ABSENT), 'r' double * (NULL: NAN), 't' const char **
 * (NULL: NULL). 0, or -1 with the column that holds another SQLite type (or text with a NUL byte) named in why. */
static int cols(sqlite3_stmt *st, char *why, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int i = 0, rc = 0;
    for (; fmt[i] && rc == 0; ++i) {
        const int t = sqlite3_column_type(st, i);
        if (fmt[i] == 'i') {
            long long *v = va_arg(ap, long long *);
            *v = t == SQLITE_INTEGER ? sqlite3_column_int64(st, i) : DBV_ABSENT;
            rc = t == SQLITE_INTEGER || t == SQLITE_NULL ? 0 : -1;
        } else if (fmt[i] == 'r') {
            double *v = va_arg(ap, double *);
            *v = t == SQLITE_INTEGER || t == SQLITE_FLOAT ? sqlite3_column_double(st, i) : NAN;
            rc = t == SQLITE_INTEGER || t == SQLITE_FLOAT || t == SQLITE_NULL ? 0 : -1;
        } else {
            const char **v = va_arg(ap, const char **);
            *v = t == SQLITE_TEXT ? (const char *)sqlite3_column_text(st, i) : NULL;
            rc = t == SQLITE_NULL || (t == SQLITE_TEXT && strlen(*v) == (size_t)sqlite3_column_bytes(st, i)) ? 0 : -1;
        }
    }
    va_end(ap);
    if (rc < 0) {
        static const char *const types[] = {"?", "an integer", "a real", "text", "a blob", "null"};
        const int t = sqlite3_column_type(st, i - 1);
        snprintf(why, n, "column %s holds %s%s", sqlite3_column_name(st, i - 1), types[t >= 1 && t <= 5 ? t : 0],
                 t == SQLITE_TEXT ? " with a NUL byte" : ", not what the schema says");
    }
    return rc;
}

/* A walk's flag column by name (a missing one reads 0). */
static int flag(sqlite3_stmt *st, const char *name)
{
    const int c = dbi_col(st, name);
    return c >= 0 && sqlite3_column_int(st, c);
}

typedef int (*row_fn)(sqlite3_stmt *st, char *why, size_t n);

/* Run sql over the staged part; row() checks each row (column 0 is its id). On the first bad row err says
 * "<table> row <id>: <why>", or "<table> row <id> (<gpu>, <shape>): <why>" when why starts with a row's label. */
static int each_row(gt_db *db, const char *table, const char *sql, row_fn row, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    char why[900];
    int rc;
    if (dbi_prepare(db, &st, err, errlen, sql, NULL) < 0) return -1;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (row(st, why, sizeof why) < 0) {
            snprintf(err, errlen, "%s row %lld%s%s", table, sqlite3_column_int64(st, 0), why[0] == '(' ? " " : ": ", why);
            sqlite3_finalize(st);
            return -1;
        }
    if (rc != SQLITE_DONE) dbi_fail(db, DBI_WHERE, err, errlen);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

static int model_row(sqlite3_stmt *st, char *why, size_t n)
{
    long long id;
    dbv_model m;
    if (cols(st, why, n, "itiii", &id, &m.name, &m.cc_major, &m.cc_minor, &m.sm_count) < 0) return -1;
    return dbv_model_check(&m, NULL, why, n);
}

static int gpu_row(sqlite3_stmt *st, char *why, size_t n)
{
    long long id, mem, l2;
    const char *uuid;
    if (cols(st, why, n, "itii", &id, &uuid, &mem, &l2) < 0 || dbv_gpu_check(uuid, mem, l2, why, n) < 0) return -1;
    if (!flag(st, "has_model")) return snprintf(why, n, "GPU %s refers to no GPU model", uuid), -1;
    if (flag(st, "clash"))
        return snprintf(why, n, "GPU %s is stored here as another GPU model than the part says", uuid), -1;
    return 0;
}

static int sweep_row(sqlite3_stmt *st, char *why, size_t n)
{
    long long id;
    dbv_sweep s;
    if (cols(st, why, n, "itttttttiiii", &id, &s.uid, &s.started_at, &s.host, &s.command, &s.version,
             &s.nvidia_driver, &s.origin, &s.driver_version, &s.cuda_version, &s.nvrtc_version, &s.sm_clock_mhz) < 0 ||
        dbv_sweep_check(&s, why, n) < 0)
        return -1;
    if (!flag(st, "has_gpu")) return snprintf(why, n, "sweep %s refers to no GPU", s.uid), -1;
    if (flag(st, "clash"))
        return snprintf(why, n, "sweep %s is stored here as a sweep of another GPU than the part says", s.uid), -1;
    return 0;
}

static int shape_row(sqlite3_stmt *st, char *why, size_t n)
{
    long long id, d[3], batch;
    const char *layout;
    gt_shape s;
    if (cols(st, why, n, "iiiiti", &id, &d[0], &d[1], &d[2], &layout, &batch) < 0) return -1;
    return dbv_shape_check(d[0], d[1], d[2], batch, layout, &s, why, n);
}

static int candidate_row(sqlite3_stmt *st, char *why, size_t n)
{
    long long id;
    dbv_kernel k;
    if (cols(st, why, n, "itttt", &id, &k.family, &k.params, &k.source_hash, &k.math) < 0) return -1;
    if (!k.math) return snprintf(why, n, "math: missing"), -1;
    return dbv_kernel_check(&k, NULL, why, n);
}

/* A shape's batch, column batch of a walk that joins shapes s (NULL, a missing shape, reads 0: refused). */
static long long batch_col(sqlite3_stmt *st)
{
    const int c = dbi_col(st, "batch");
    return c >= 0 && sqlite3_column_type(st, c) == SQLITE_INTEGER ? sqlite3_column_int64(st, c) : 0;
}

/* Columns 1..: the trial, its shape, kernel and GPU model; by name, lacks (it refers to a row the part lacks) and
 * the shape's batch. */
static int trial_row(sqlite3_stmt *st, char *why, size_t n)
{
    long long id, d[3];
    const char *layout;
    dbv_trial t;
    dbv_kernel k;
    dbv_model m;
    gt_shape s;
    gt_limits lim;
    if (cols(st, why, n, "itttrrrrrriiiiiittttttiii", &id, &t.status, &t.message, &t.created_at, &t.median_ms,
             &t.min_ms, &t.max_ms, &t.tflops, &t.rel_err, &t.compile_s, &t.regs, &t.spill_bytes, &t.reps, &d[0], &d[1],
             &d[2], &layout, &k.family, &k.params, &k.source_hash, &k.math, &m.name, &m.cc_major, &m.cc_minor,
             &m.sm_count) < 0)
        return -1;
    if (flag(st, "lacks")) return snprintf(why, n, "refers to a shape, kernel, sweep or GPU the part lacks"), -1;
    if (dbv_model_check(&m, &lim, why, n) < 0 || dbv_shape_check(d[0], d[1], d[2], batch_col(st), layout, &s, why, n) < 0)
        return -1;
    return dbv_trial_check(&t, &s, &k, &lim, why, n);
}

/* Columns 1..: the baseline's time and shape; by name, lacks (it refers to a row the part lacks), other_model (its
 * GPU model is not its sweep's) and the shape's batch. */
static int baseline_row(sqlite3_stmt *st, char *why, size_t n)
{
    long long id, d[3];
    const char *layout;
    double ms;
    gt_shape s;
    if (cols(st, why, n, "iriiit", &id, &ms, &d[0], &d[1], &d[2], &layout) < 0) return -1;
    if (flag(st, "lacks")) return snprintf(why, n, "refers to a GPU model, shape or sweep the part lacks"), -1;
    if (flag(st, "other_model")) return snprintf(why, n, "its GPU model is not the one of its sweep's GPU"), -1;
    if (dbv_shape_check(d[0], d[1], d[2], batch_col(st), layout, &s, why, n) < 0) return -1;
    return dbv_ms_check("cublas_ms", ms, &s, why, n);
}

/* Columns 1..: the winner's model, shape, kernel, times and its part's baseline; by name, the same two flags and
 * the shape's batch. */
static int winner_row(sqlite3_stmt *st, char *why, size_t n)
{
    long long id;
    dbv_winner w;
    gt_shape s;
    char label[200], reason[700];
    if (cols(st, why, n, "itiiiiiitttttrrr", &id, &w.model.name, &w.model.cc_major, &w.model.cc_minor,
             &w.model.sm_count, &w.m, &w.n, &w.k, &w.layout, &w.kernel.family, &w.kernel.params,
             &w.kernel.source_hash, &w.kernel.math, &w.median_ms, &w.spread_pct, &w.cublas_ms) < 0)
        return -1;
    if (flag(st, "lacks")) return snprintf(why, n, "refers to a GPU model, shape, kernel or sweep the part lacks"), -1;
    if (flag(st, "other_model")) return snprintf(why, n, "its GPU model is not the one of its sweep's GPU"), -1;
    if (!w.kernel.math) return snprintf(why, n, "math: missing"), -1;
    if (!(w.batch = batch_col(st))) return snprintf(why, n, "shape.batch: missing"), -1;
    if (dbv_winner_check(&w, &s, reason, sizeof reason) == 0) return 0;
    dbv_winner_label(&w, label, sizeof label);
    return snprintf(why, n, "%s: %s", label, reason), -1;
}

/* A column that identifies rows (ids, uuids, uids) must hold each value once, and an id must be an integer: the
 * merge's steps join by them. */
static int unique(gt_db *db, const char *table, const char *col, int id, char *err, size_t errlen)
{
    char sql[400], cond[120];
    long long bad = 0;
    int found;
    snprintf(cond, sizeof cond, id ? "typeof(%s) <> 'integer'" : "%s IS NULL", col);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM src.%s WHERE %s OR %s IN (SELECT %s FROM src.%s GROUP BY %s "
             "HAVING count(*) > 1)", table, cond, col, col, table, col);
    if (dbi_int64(db, &bad, &found, err, errlen, sql, "") < 0) return -1;
    if (bad) return snprintf(err, errlen, "%s.%s: %lld rows hold a value another row holds too, or %s", table, col, bad,
                             id ? "no integer" : "none"), -1;
    return 0;
}

static const struct {
    const char *table, *sql;
    row_fn row;
} walks[] = {
    {"gpu_models", "SELECT id, name, cc_major, cc_minor, sm_count FROM src.gpu_models", model_row},
    {"gpus",
     "SELECT g.id, g.uuid, g.mem_bytes, g.l2_bytes, EXISTS (SELECT 1 FROM src.gpu_models m WHERE m.id = g.model_id) AS has_model, "
     "EXISTS (SELECT 1 FROM main.gpus mg JOIN main.gpu_models mm ON mm.id = mg.model_id JOIN src.gpu_models sm ON "
     "sm.id = g.model_id WHERE mg.uuid = g.uuid AND (mm.name IS NOT sm.name OR mm.cc_major IS NOT sm.cc_major OR "
     "mm.cc_minor IS NOT sm.cc_minor OR mm.sm_count IS NOT sm.sm_count)) AS clash FROM src.gpus g",
     gpu_row},
    {"sweeps",
     "SELECT s.id, s.uid, s.started_at, s.host, s.command, s.gemmtune_version, s.nvidia_driver, s.origin, "
     "s.driver_version, s.cuda_version, s.nvrtc_version, s.sm_clock_mhz, EXISTS (SELECT 1 FROM src.gpus g WHERE g.id = "
     "s.gpu_id) AS has_gpu, EXISTS (SELECT 1 FROM main.sweeps ms JOIN main.gpus mg ON mg.id = ms.gpu_id JOIN src.gpus sg ON "
     "sg.id = s.gpu_id WHERE ms.uid = s.uid AND mg.uuid IS NOT sg.uuid) AS clash FROM src.sweeps s",
     sweep_row},
    {"shapes", "SELECT id, m, n, k, layout, batch FROM src.shapes", shape_row},
    {"candidates", "SELECT id, family, params, source_hash, math FROM src.candidates", candidate_row},
    {"trials",
     "SELECT t.id, t.status, t.message, t.created_at, t.median_ms, t.min_ms, t.max_ms, t.tflops, t.rel_err, "
     "t.compile_s, t.regs, t.spill_bytes, t.reps, s.m, s.n, s.k, s.layout, c.family, c.params, c.source_hash, c.math, "
     "m.name, m.cc_major, m.cc_minor, m.sm_count, s.id IS NULL OR c.id IS NULL OR m.id IS NULL AS lacks, s.batch AS batch FROM src.trials t "
     "LEFT JOIN src.shapes s ON s.id = t.shape_id LEFT JOIN src.candidates c ON c.id = t.candidate_id LEFT JOIN "
     "src.sweeps w ON w.id = t.sweep_id LEFT JOIN src.gpus g ON g.id = w.gpu_id LEFT JOIN src.gpu_models m ON "
     "m.id = g.model_id",
     trial_row},
    {"baselines",
     "SELECT b.rowid, b.cublas_ms, s.m, s.n, s.k, s.layout, s.id IS NULL OR m.id IS NULL OR w.id IS NULL AS lacks, b.model_id "
     "IS NOT (SELECT g.model_id FROM src.gpus g WHERE g.id = w.gpu_id) AS other_model, s.batch AS batch FROM src.baselines b LEFT JOIN src.shapes s ON "
     "s.id = b.shape_id LEFT JOIN src.gpu_models m ON m.id = b.model_id LEFT JOIN src.sweeps w ON w.id = b.sweep_id",
     baseline_row},
    {"winners",
     "SELECT w.rowid, m.name, m.cc_major, m.cc_minor, m.sm_count, s.m, s.n, s.k, s.layout, c.family, c.params, "
     "c.source_hash, w.math, w.median_ms, w.spread_pct, b.cublas_ms, m.id IS NULL OR s.id IS NULL OR c.id IS NULL OR "
     "sw.id IS NULL AS lacks, w.model_id IS NOT (SELECT g.model_id FROM src.gpus g WHERE g.id = sw.gpu_id) AS other_model, s.batch AS batch FROM src.winners w "
     "LEFT JOIN src.gpu_models m ON m.id = w.model_id LEFT JOIN src.shapes s ON s.id = w.shape_id LEFT JOIN "
     "src.candidates c ON c.id = w.candidate_id LEFT JOIN src.sweeps sw ON sw.id = w.sweep_id LEFT JOIN src.baselines "
     "b ON b.model_id = w.model_id AND b.shape_id = w.shape_id",
     winner_row},
};

int dbi_merge_check(gt_db *db, char *err, size_t errlen)
{
    static const struct {
        const char *table, *col;
        int id;
    } keys[] = {{"gpu_models", "id", 1}, {"gpus", "id", 1},   {"gpus", "uuid", 0},      {"sweeps", "id", 1},
                {"sweeps", "uid", 0},    {"shapes", "id", 1}, {"candidates", "id", 1}, {"trials", "id", 1}};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; ++i)
        if (unique(db, keys[i].table, keys[i].col, keys[i].id, err, errlen) < 0) return -1;
    for (size_t i = 0; i < sizeof walks / sizeof walks[0]; ++i)
        if (each_row(db, walks[i].table, walks[i].sql, walks[i].row, err, errlen) < 0) return -1;
    return 0;
}
