/* JSON export and import of winners through cJSON; the format is documented in docs/EXPORT.md (versioned).
 * Import validates the whole document before it writes anything, then applies it in one transaction.
 * Tested by tests/test_export.c (round trip, truncated and mutated files). */
#include "dbi.h"
#include "validate.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FORMAT_NAME "gemmtune-winners"
/* 2: a shape may carry "batch" (schema 6). A gemmtune that reads version 1 only would take a batched row for a
 * single GEMM, so it must refuse the file; version 1 files (no batch) are still read. */
#define FORMAT_VERSION 2
#define FORMAT_VERSION_OLDEST 1

/* The shortest text that reads back as exactly v: cJSON's own printing accepts an error of one ulp, which would
 * break export -> import -> export identity. */
static void add_exact(cJSON *o, const char *key, double v)
{
    char buf[40];
    for (int prec = 15; prec <= 17; ++prec) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    cJSON_AddRawToObject(o, key, buf);
}

static void add_num_or_null(cJSON *o, const char *key, double v)
{
    if (v >= 0) add_exact(o, key, v);
    else cJSON_AddNullToObject(o, key);
}

/* Columns by name (dbi_col), as db/query.c reads them: a column added to the query moves no other. */
static void add_text_or_null(cJSON *o, const char *key, sqlite3_stmt *st, const char *col)
{
    const int c = dbi_col(st, col);
    const unsigned char *t = c < 0 ? NULL : sqlite3_column_text(st, c);
    if (t) cJSON_AddStringToObject(o, key, (const char *)t);
    else cJSON_AddNullToObject(o, key);
}

static void add_int_or_null(cJSON *o, const char *key, sqlite3_stmt *st, const char *col)
{
    const int c = dbi_col(st, col);
    if (c < 0 || sqlite3_column_type(st, c) == SQLITE_NULL) cJSON_AddNullToObject(o, key);
    else cJSON_AddNumberToObject(o, key, sqlite3_column_int64(st, c));
}

#define EXPORT_SQL                                                                                                  \
    "SELECT " DBI_ROW_SQL ", g.uuid AS uuid, sw.driver_version AS driver_version, sw.cuda_version AS cuda_version, "    \
    "sw.nvrtc_version AS nvrtc_version, sw.sm_clock_mhz AS sm_clock_mhz, w.median_ms AS median_ms, "                  \
    "w.spread_pct AS spread_pct, " DBI_BASELINE_SQL " AS cublas_ms, sw.uid AS uid, sw.started_at AS started_at, "     \
    "sw.host AS host, sw.gemmtune_version AS gemmtune_version, sw.nvidia_driver AS nvidia_driver, w.math AS math "   \
    "FROM winners w "                                                                                                \
    "JOIN gpu_models gm ON gm.id = w.model_id JOIN shapes s ON s.id = w.shape_id "                                  \
    "JOIN candidates c ON c.id = w.candidate_id JOIN sweeps sw ON sw.id = w.sweep_id JOIN gpus g ON g.id = sw.gpu_id " \
    "LEFT JOIN baselines b ON b.model_id = w.model_id AND b.shape_id = w.shape_id" DBI_FILTER_SQL DBI_SERVABLE_SQL   \
    " ORDER BY gm.name, gm.cc_major, gm.cc_minor, gm.sm_count, s.layout, s.m, s.n, s.k, s.batch"

/* One winner as docs/EXPORT.md's object; each key is read from the column of the same name, but the GPU's name
 * (column gpu). */
static cJSON *winner_json(sqlite3_stmt *st)
{
    cJSON *o = cJSON_CreateObject(), *gpu = cJSON_AddObjectToObject(o, "gpu");
    cJSON *shape = cJSON_AddObjectToObject(o, "shape"), *sweep;
    static const char *const gpu_ints[] = {"cc_major", "cc_minor", "sm_count"};
    static const char *const gpu_opt[] = {"driver_version", "cuda_version", "nvrtc_version", "sm_clock_mhz"};
    static const char *const sweep_text[] = {"uid", "started_at", "host", "gemmtune_version"};
    add_text_or_null(gpu, "name", st, "gpu");
    for (int i = 0; i < 3; ++i) cJSON_AddNumberToObject(gpu, gpu_ints[i], (double)dbi_col_int(st, gpu_ints[i]));
    add_text_or_null(gpu, "uuid", st, "uuid");
    add_text_or_null(gpu, "nvidia_driver", st, "nvidia_driver");
    for (int i = 0; i < 4; ++i) add_int_or_null(gpu, gpu_opt[i], st, gpu_opt[i]);
    double mnk[3], ms = dbi_col_real(st, "median_ms"), cublas = dbi_col_real(st, "cublas_ms");
    static const char *const dims[] = {"m", "n", "k"};
    for (int i = 0; i < 3; ++i) cJSON_AddNumberToObject(shape, dims[i], mnk[i] = (double)dbi_col_int(st, dims[i]));
    add_text_or_null(shape, "layout", st, "layout");
    const int batch = (int)dbi_col_int(st, "batch");
    if (batch > 1) cJSON_AddNumberToObject(shape, "batch", batch); /* one GEMM: left out, as in version 1 */
    static const char *const kernel[] = {"family", "params", "source_hash", "math"};
    for (int i = 0; i < 4; ++i) add_text_or_null(o, kernel[i], st, kernel[i]);
    double flop = 2.0 * (batch > 1 ? batch : 1) * mnk[0] * mnk[1] * mnk[2];
    add_exact(o, "median_ms", ms);
    add_num_or_null(o, "spread_pct", dbi_col_real(st, "spread_pct"));
    add_exact(o, "tflops", flop / (ms * 1e9));
    add_num_or_null(o, "cublas_ms", cublas);
    add_num_or_null(o, "cublas_tflops", cublas > 0 ? flop / (cublas * 1e9) : -1);
    add_num_or_null(o, "ratio_vs_cublas", cublas > 0 ? cublas / ms : -1);
    int ta = 0, tb = 0;
    const char *layout = dbi_col_str(st, "layout");
    if (layout && gt_layout_parse(layout, &ta, &tb) == 0)
        cJSON_AddBoolToObject(o, "stale", gt_kernel_stale(dbi_col_str(st, "family"), dbi_col_str(st, "params"), ta, tb,
                                                          batch > 1, dbi_col_str(st, "source_hash")));
    sweep = cJSON_AddObjectToObject(o, "sweep");
    for (int i = 0; i < 4; ++i) add_text_or_null(sweep, sweep_text[i], st, sweep_text[i]);
    return o;
}

int gt_db_export_json(gt_db *db, const gt_winner_filter *filter, char **json, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    *json = NULL;
    if (dbi_prepare(db, &st, err, errlen, EXPORT_SQL, NULL) < 0) return -1;
    if (dbi_bind_filter(st, filter) != SQLITE_OK) {
        sqlite3_finalize(st);
        return dbi_fail(db, DBI_WHERE, err, errlen);
    }
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "format", FORMAT_NAME);
    cJSON_AddNumberToObject(root, "format_version", FORMAT_VERSION);
    cJSON_AddStringToObject(root, "gemmtune_version", GT_VERSION);
    cJSON *arr = cJSON_AddArrayToObject(root, "winners");
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) cJSON_AddItemToArray(arr, winner_json(st));
    if (rc != SQLITE_DONE) dbi_fail(db, DBI_WHERE, err, errlen);
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE) *json = cJSON_Print(root);
    cJSON_Delete(root);
    if (rc == SQLITE_DONE && !*json) snprintf(err, errlen, "out of memory printing JSON");
    return *json ? 0 : -1;
}

/* ---- import: validate everything into rows (db/validate.h), then write ---- */

typedef struct {
    gt_gpu_info gpu;
    long dims[3], batch;
    const char *layout, *family, *params, *source_hash, *math;
    double median_ms, spread_pct, cublas_ms; /* spread_pct, cublas_ms: NAN when null */
    const char *uid, *started_at, *host, *version;
    gt_shape shape; /* filled by check_row */
} jrow;

typedef struct {
    char *err;
    size_t errlen;
    char where[64];
} jctx;

static int bad(jctx *c, const char *key, const char *want)
{
    snprintf(c->err, c->errlen, "%s.%s: want %s", c->where, key, want);
    return -1;
}

/* Integer in [lo, hi]; with nullable, a missing or null value gives def. */
static int j_int(jctx *c, const cJSON *o, const char *key, long lo, long hi, int nullable, long def, long *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    char want[96];
    snprintf(want, sizeof want, "an integer %ld..%ld%s", lo, hi, nullable ? " or null" : "");
    if (nullable && (!v || cJSON_IsNull(v))) return *out = def, 0;
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < lo || v->valuedouble > hi)
        return bad(c, key, want);
    *out = (long)v->valuedouble;
    return 0;
}

/* Finite number > 0 (positive = 1) or >= 0; nullable: missing/null gives NAN. */
static int j_num(jctx *c, const cJSON *o, const char *key, int positive, int nullable, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (nullable && (!v || cJSON_IsNull(v))) return *out = NAN, 0;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 || (positive && v->valuedouble == 0))
        return bad(c, key, positive ? "a number > 0" : "a number >= 0");
    *out = v->valuedouble;
    return 0;
}

/* String of 1..maxlen bytes; hex: only [0-9a-f], exactly maxlen of them. nullable: missing/null gives NULL. Its
 * content is checked by the row validator. */
static int j_str(jctx *c, const cJSON *o, const char *key, size_t maxlen, int hex, int nullable, const char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    char want[96];
    *out = NULL;
    if (nullable && (!v || cJSON_IsNull(v))) return 0;
    snprintf(want, sizeof want, hex ? "%zu lowercase hex digits" : "a string of 1..%zu bytes", maxlen);
    if (!cJSON_IsString(v) || !v->valuestring[0] || strlen(v->valuestring) > maxlen) return bad(c, key, want);
    if (hex && (strlen(v->valuestring) != maxlen || strspn(v->valuestring, "0123456789abcdef") != maxlen))
        return bad(c, key, want);
    *out = v->valuestring;
    return 0;
}

static const cJSON *j_obj(jctx *c, const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsObject(v)) bad(c, key, "an object");
    return cJSON_IsObject(v) ? v : NULL;
}

static int parse_gpu(jctx *c, const cJSON *g, gt_gpu_info *out)
{
    const char *name, *uuid, *driver;
    long v[7];
    static const char *const keys[] = {"cc_major", "cc_minor", "sm_count", "driver_version", "cuda_version",
                                       "nvrtc_version", "sm_clock_mhz"};
    static const long hi[] = {99, 99, 100000, 1000000, 1000000, 1000000, 100000};
    memset(out, 0, sizeof *out);
    if (j_str(c, g, "name", sizeof out->name - 1, 0, 0, &name) < 0 || j_str(c, g, "uuid", sizeof out->uuid - 1, 0, 0, &uuid) < 0 ||
        j_str(c, g, "nvidia_driver", sizeof out->nvidia_driver - 1, 0, 1, &driver) < 0)
        return -1;
    for (int i = 0; i < 7; ++i)
        if (j_int(c, g, keys[i], i == 2 ? 1 : 0, hi[i], i >= 3, -1, &v[i]) < 0) return -1;
    snprintf(out->name, sizeof out->name, "%s", name);
    snprintf(out->uuid, sizeof out->uuid, "%s", uuid);
    snprintf(out->nvidia_driver, sizeof out->nvidia_driver, "%s", driver ? driver : "");
    out->cc_major = v[0], out->cc_minor = v[1], out->sm_count = v[2];
    out->driver_version = v[3], out->cuda_version = v[4], out->nvrtc_version = v[5], out->sm_clock_mhz = v[6];
    out->mem_bytes = out->l2_bytes = -1;
    return 0;
}

static int parse_shape(jctx *c, const cJSON *s, jrow *r)
{
    static const char *const dims[] = {"m", "n", "k"};
    for (int i = 0; i < 3; ++i)
        if (j_int(c, s, dims[i], 1, INT_MAX, 0, 0, &r->dims[i]) < 0) return -1;
    if (j_str(c, s, "layout", 2, 0, 0, &r->layout) < 0) return -1;
    return j_int(c, s, "batch", 1, INT_MAX, 1, 1, &r->batch) < 0 ? -1 : 0; /* absent: one GEMM */
}

static long long absent_if_negative(int v) { return v < 0 ? DBV_ABSENT : v; }

/* The row through the one row validator (db/validate.h), as merge checks every row of a database. */
static int check_row(jctx *c, jrow *r)
{
    char why[700], label[200];
    const dbv_winner w = {{r->gpu.name, r->gpu.cc_major, r->gpu.cc_minor, r->gpu.sm_count}, r->dims[0], r->dims[1],
                          r->dims[2], r->layout, {r->family, r->params, r->source_hash, r->math}, r->median_ms,
                          r->spread_pct, r->cublas_ms, r->batch};
    const dbv_sweep sw = {r->uid, r->started_at, r->host, NULL, r->version,
                          r->gpu.nvidia_driver[0] ? r->gpu.nvidia_driver : NULL, "import:",
                          absent_if_negative(r->gpu.driver_version), absent_if_negative(r->gpu.cuda_version),
                          absent_if_negative(r->gpu.nvrtc_version), absent_if_negative(r->gpu.sm_clock_mhz)};
    if (dbv_winner_check(&w, &r->shape, why, sizeof why) < 0 ||
        dbv_gpu_check(r->gpu.uuid, DBV_ABSENT, DBV_ABSENT, why, sizeof why) < 0 || dbv_sweep_check(&sw, why, sizeof why) < 0) {
        dbv_winner_label(&w, label, sizeof label);
        return snprintf(c->err, c->errlen, "%s %s: %s", c->where, label, why), -1;
    }
    return 0;
}

static int parse_row(jctx *c, const cJSON *item, jrow *r)
{
    const cJSON *g, *s, *sw;
    double derived;
    if (!cJSON_IsObject(item)) return snprintf(c->err, c->errlen, "%s: want an object", c->where), -1;
    size_t base = strlen(c->where);
    if (!(g = j_obj(c, item, "gpu"))) return -1;
    snprintf(c->where + base, sizeof c->where - base, ".gpu");
    if (parse_gpu(c, g, &r->gpu) < 0) return -1;
    c->where[base] = 0;
    if (!(s = j_obj(c, item, "shape"))) return -1;
    snprintf(c->where + base, sizeof c->where - base, ".shape");
    if (parse_shape(c, s, r) < 0) return -1;
    c->where[base] = 0;
    if (j_str(c, item, "family", 31, 0, 0, &r->family) < 0 || j_str(c, item, "params", 255, 0, 0, &r->params) < 0 ||
        j_str(c, item, "source_hash", 16, 1, 0, &r->source_hash) < 0 || j_str(c, item, "math", 15, 0, 1, &r->math) < 0 ||
        j_num(c, item, "median_ms", 1, 0, &r->median_ms) < 0 || j_num(c, item, "spread_pct", 0, 1, &r->spread_pct) < 0 ||
        j_num(c, item, "cublas_ms", 1, 1, &r->cublas_ms) < 0 || j_num(c, item, "tflops", 1, 0, &derived) < 0 ||
        j_num(c, item, "ratio_vs_cublas", 1, 1, &derived) < 0)
        return -1;
    if (!(sw = j_obj(c, item, "sweep"))) return -1;
    snprintf(c->where + base, sizeof c->where - base, ".sweep");
    if (j_str(c, sw, "uid", 32, 1, 0, &r->uid) < 0 || j_str(c, sw, "started_at", 40, 0, 0, &r->started_at) < 0 ||
        j_str(c, sw, "host", 255, 0, 1, &r->host) < 0 || j_str(c, sw, "gemmtune_version", 40, 0, 1, &r->version) < 0)
        return -1;
    c->where[base] = 0;
    return check_row(c, r);
}

static int parse_doc(const cJSON *root, jrow **rows, int *n, char *err, size_t errlen)
{
    jctx c = {err, errlen, "document"};
    const cJSON *arr;
    const char *fmt, *version;
    char shown[80];
    long ver;
    if (!cJSON_IsObject(root)) return snprintf(err, errlen, "not a JSON object"), -1;
    if (j_str(&c, root, "format", 64, 0, 0, &fmt) < 0) return -1;
    dbv_clean_copy(shown, sizeof shown, fmt, 0);
    if (strcmp(fmt, FORMAT_NAME)) return snprintf(err, errlen, "format '%s' is not %s", shown, FORMAT_NAME), -1;
    if (j_int(&c, root, "format_version", 1, 1000000, 0, 0, &ver) < 0) return -1;
    if (ver < FORMAT_VERSION_OLDEST || ver > FORMAT_VERSION)
        return snprintf(err, errlen, "format_version %ld: this gemmtune reads versions %d to %d", ver,
                        FORMAT_VERSION_OLDEST, FORMAT_VERSION), -1;
    if (j_str(&c, root, "gemmtune_version", DBV_VERSION_MAX, 0, 0, &version) < 0 ||
        dbv_text("document.gemmtune_version", version, DBV_VERSION_MAX, 0, 0, err, errlen) < 0)
        return -1;
    if (!cJSON_IsArray(arr = cJSON_GetObjectItemCaseSensitive(root, "winners"))) return bad(&c, "winners", "an array");
    *n = cJSON_GetArraySize(arr);
    *rows = calloc(*n ? *n : 1, sizeof **rows);
    if (!*rows) return snprintf(err, errlen, "out of memory"), -1;
    int i = 0;
    for (const cJSON *it = arr->child; it; it = it->next, ++i) {
        snprintf(c.where, sizeof c.where, "winners[%d]", i);
        if (parse_row(&c, it, &(*rows)[i]) < 0) return -1;
    }
    return 0;
}

/* A sweep the database holds already, by uid: it must be of the row's GPU, or the row would be filed under
 * another GPU (and model) than it says. */
static int same_gpu(gt_db *db, const jrow *r, int i, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    char uuid[64];
    gt_gpu_model stored;
    const gt_gpu_model row = gt_gpu_info_model(&r->gpu);
    if (dbi_prepare(db, &st, err, errlen,
                    "SELECT g.uuid AS uuid, gm.name AS gpu, gm.cc_major AS cc_major, gm.cc_minor AS cc_minor, "
                    "gm.sm_count AS sm_count FROM sweeps sw JOIN gpus g ON g.id = sw.gpu_id JOIN gpu_models gm ON "
                    "gm.id = g.model_id WHERE sw.uid = ?", "t", r->uid) < 0)
        return -1;
    int rc = sqlite3_step(st), same = 1;
    if (rc == SQLITE_ROW) {
        dbi_text(st, dbi_col(st, "uuid"), uuid, sizeof uuid);
        dbi_text(st, dbi_col(st, "gpu"), stored.name, sizeof stored.name);
        stored.cc_major = (int)dbi_col_int(st, "cc_major"), stored.cc_minor = (int)dbi_col_int(st, "cc_minor");
        stored.sm_count = (int)dbi_col_int(st, "sm_count");
        same = !strcmp(uuid, r->gpu.uuid) && gt_gpu_model_equal(&stored, &row);
        if (!same) {
            char shown[200];
            dbv_clean_copy(shown, sizeof shown, uuid, 0);
            snprintf(err, errlen, "winners[%d]: sweep %s is stored here as a sweep of GPU %s, not of the row's %s (%s)", i,
                     r->uid, shown, r->gpu.uuid, r->gpu.name);
        }
    } else if (rc != SQLITE_DONE) dbi_fail(db, DBI_WHERE, err, errlen);
    sqlite3_finalize(st);
    return rc != SQLITE_ROW && rc != SQLITE_DONE ? -1 : same ? 0 : -1;
}

/* The sweep a row came from: found by uid (of the row's GPU), else created with the row's GPU and provenance. */
static int row_sweep(gt_db *db, const jrow *r, int i, const char *origin, long long *sweep, char *err, size_t errlen)
{
    long long model, gpu;
    int found;
    char org[300], raw[300];
    if (same_gpu(db, r, i, err, errlen) < 0 ||
        dbi_int64(db, sweep, &found, err, errlen, "SELECT id FROM sweeps WHERE uid = ?", "t", r->uid) < 0)
        return -1;
    if (found) return 0;
    snprintf(raw, sizeof raw, "import:%s", origin ? origin : "?");
    dbv_clean_copy(org, sizeof org, raw, 0); /* a file name may hold what a stored text may not */
    if (dbi_model_id(db, r->gpu.name, r->gpu.cc_major, r->gpu.cc_minor, r->gpu.sm_count, &model, err, errlen) < 0 ||
        dbi_run(db, err, errlen, "INSERT INTO gpus (model_id, uuid) VALUES (?, ?) ON CONFLICT DO NOTHING", "It", model,
                r->gpu.uuid) < 0 ||
        dbi_int64(db, &gpu, &found, err, errlen, "SELECT id FROM gpus WHERE uuid = ? AND model_id = ?", "tI",
                  r->gpu.uuid, model) < 0)
        return -1;
    if (!found)
        return snprintf(err, errlen, "winners[%d]: GPU %s is stored here as another model than '%s' %d.%d x%d", i,
                        r->gpu.uuid, r->gpu.name, r->gpu.cc_major, r->gpu.cc_minor, r->gpu.sm_count), -1;
    if (dbi_run(db, err, errlen,
                "INSERT INTO sweeps (gpu_id, started_at, host, command, gemmtune_version, driver_version, cuda_version, "
                "nvrtc_version, sm_clock_mhz, nvidia_driver, origin, uid) VALUES (?, ?, ?, 'import', ?, ?, ?, ?, ?, ?, ?, ?)",
                "Itttkkkkttt", gpu, r->started_at, r->host, r->version, r->gpu.driver_version, r->gpu.cuda_version,
                r->gpu.nvrtc_version, r->gpu.sm_clock_mhz, r->gpu.nvidia_driver[0] ? r->gpu.nvidia_driver : NULL, org,
                r->uid) < 0)
        return -1;
    *sweep = sqlite3_last_insert_rowid(db->h);
    return 0;
}

static int apply_row(gt_db *db, const jrow *r, int i, const char *origin, gt_import_stats *st, char *err,
                     size_t errlen)
{
    long long sweep, model, shape, cand, stored;
    int found, replaced = 0;
    if (row_sweep(db, r, i, origin, &sweep, err, errlen) < 0 ||
        dbi_int64(db, &model, &found, err, errlen,
                  "SELECT g.model_id FROM sweeps sw JOIN gpus g ON g.id = sw.gpu_id WHERE sw.id = ?", "I", sweep) < 0 ||
        dbi_shape_id(db, &r->shape, &shape, err, errlen) < 0 ||
        dbi_candidate_id(db, r->family, r->params, r->source_hash, &cand, err, errlen) < 0 ||
        dbi_offer_winner(db, model, shape, cand, sweep, r->median_ms, isnan(r->spread_pct) ? -1 : r->spread_pct, 0,
                         &replaced, err, errlen) < 0)
        return -1;
    if (replaced) st->imported++;
    else if (dbi_int64(db, &stored, &found, err, errlen,
                       "SELECT candidate_id FROM winners WHERE model_id = ? AND shape_id = ? AND math = ?", "IIt",
                       model, shape, dbi_family_math(r->family)) < 0)
        return -1;
    else if (found && stored == cand) st->already++;
    else st->slower++;
    if (!isnan(r->cublas_ms) && dbi_offer_baseline(db, model, shape, sweep, r->cublas_ms, err, errlen) < 0) return -1;
    return 0;
}

/* Parse and check the whole document into rows (malloc'd, pointing into root). 0 or -1 with err. */
static int parse_text(const char *json, cJSON **root, jrow **rows, int *n, char *err, size_t errlen)
{
    *rows = NULL;
    *n = 0;
    if (!(*root = cJSON_Parse(json))) {
        const char *at = cJSON_GetErrorPtr();
        snprintf(err, errlen, "malformed JSON near byte %ld", at && at >= json ? (long)(at - json) : -1L);
        return -1;
    }
    return parse_doc(*root, rows, n, err, errlen);
}

int gt_db_check_json(const char *json, int *rows, char *err, size_t errlen)
{
    cJSON *root;
    jrow *r;
    int rc = parse_text(json, &root, &r, rows, err, errlen);
    free(r);
    cJSON_Delete(root);
    return rc;
}

/* Write the checked rows in one transaction. A failure here is the database's (or a clash of the file with what
 * it holds, which names the row): it says which. */
static int apply_rows(gt_db *db, const jrow *rows, int n, const char *origin, gt_import_stats *st, char *err,
                      size_t errlen)
{
    char why[900];
    if (dbi_check_integrity(db, err, errlen) < 0) return -1;
    if (dbi_begin(db, why, sizeof why) < 0) goto fail;
    for (int i = 0; i < n; ++i)
        if (apply_row(db, &rows[i], i, origin, st, why, sizeof why) < 0) {
            dbi_rollback(db);
            goto fail;
        }
    if (dbi_commit(db, why, sizeof why) < 0) goto fail;
    return 0;
fail:
    if (!strncmp(why, "winners[", 8)) snprintf(err, errlen, "%s", why);
    else snprintf(err, errlen, "database %s: %s (nothing imported)", db->path, why);
    return -1;
}

int gt_db_import_json_stats(gt_db *db, const char *json, const char *origin, gt_import_stats *st, char *err,
                            size_t errlen)
{
    cJSON *root;
    jrow *rows;
    int n, rc = -1;
    memset(st, 0, sizeof *st);
    if (parse_text(json, &root, &rows, &n, err, errlen) == 0 && (rc = apply_rows(db, rows, n, origin, st, err, errlen)) == 0)
        st->rows = n;
    if (rc < 0) memset(st, 0, sizeof *st);
    free(rows);
    cJSON_Delete(root);
    return rc;
}

int gt_db_import_json(gt_db *db, const char *json, const char *origin, int *imported, char *err, size_t errlen)
{
    gt_import_stats st;
    int rc = gt_db_import_json_stats(db, json, origin, &st, err, errlen);
    *imported = st.imported;
    return rc;
}
