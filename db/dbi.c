/* Prepared-statement helpers for the db/ sources (see db/dbi.h): every value reaches SQLite through a bound parameter.
 * Tested through the public API in tests/test_db.c. */
#include "dbi.h"
#include "validate.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int dbi_fail(gt_db *db, const char *where, char *err, size_t errlen)
{
    snprintf(err, errlen, "sqlite: %s (%s)", db && db->h ? sqlite3_errmsg(db->h) : "no database", where);
    return -1;
}

static int bind_all(sqlite3_stmt *st, const char *fmt, va_list ap)
{
    int rc = SQLITE_OK;
    for (int i = 1; fmt && *fmt && rc == SQLITE_OK; ++fmt, ++i) {
        switch (*fmt) {
        case 't': {
            const char *s = va_arg(ap, const char *);
            rc = s ? sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
            break;
        }
        case 'i': rc = sqlite3_bind_int(st, i, va_arg(ap, int)); break;
        case 'I': rc = sqlite3_bind_int64(st, i, va_arg(ap, long long)); break;
        case 'd': rc = sqlite3_bind_double(st, i, va_arg(ap, double)); break;
        case 'D': {
            double v = va_arg(ap, double);
            rc = v < 0 ? sqlite3_bind_null(st, i) : sqlite3_bind_double(st, i, v);
            break;
        }
        case 'k': {
            int v = va_arg(ap, int);
            rc = v < 0 ? sqlite3_bind_null(st, i) : sqlite3_bind_int(st, i, v);
            break;
        }
        case 'b': {
            const void *p = va_arg(ap, const void *);
            size_t n = va_arg(ap, size_t);
            rc = sqlite3_bind_blob64(st, i, p ? p : "", n, SQLITE_TRANSIENT);
            break;
        }
        default: rc = SQLITE_MISUSE;
        }
    }
    return rc;
}

static int prepare_v(gt_db *db, sqlite3_stmt **st, char *err, size_t errlen, const char *sql, const char *fmt,
                     va_list ap)
{
    *st = NULL;
    int rc = sqlite3_prepare_v2(db->h, sql, -1, st, NULL);
    if (rc == SQLITE_OK && fmt && sqlite3_bind_parameter_count(*st) != (int)strlen(fmt))
        rc = SQLITE_MISUSE; /* a format that does not match the statement is a bug: say so, bind nothing */
    if (rc == SQLITE_OK) rc = bind_all(*st, fmt, ap);
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "sqlite: %s (in: %.80s)", rc == SQLITE_MISUSE ? "internal: bind format mismatch"
                                                                            : sqlite3_errmsg(db->h), sql);
        sqlite3_finalize(*st);
        *st = NULL;
        return -1;
    }
    return 0;
}

int dbi_prepare(gt_db *db, sqlite3_stmt **st, char *err, size_t errlen, const char *sql, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = prepare_v(db, st, err, errlen, sql, fmt, ap);
    va_end(ap);
    return rc;
}

int dbi_run(gt_db *db, char *err, size_t errlen, const char *sql, const char *fmt, ...)
{
    sqlite3_stmt *st;
    va_list ap;
    va_start(ap, fmt);
    int rc = prepare_v(db, &st, err, errlen, sql, fmt, ap);
    va_end(ap);
    if (rc < 0) return -1;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {}
    if (rc != SQLITE_DONE) snprintf(err, errlen, "sqlite: %s (in: %.80s)", sqlite3_errmsg(db->h), sql);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

int dbi_int64(gt_db *db, long long *id, int *found, char *err, size_t errlen, const char *sql, const char *fmt, ...)
{
    sqlite3_stmt *st;
    va_list ap;
    va_start(ap, fmt);
    int rc = prepare_v(db, &st, err, errlen, sql, fmt, ap);
    va_end(ap);
    if (rc < 0) return -1;
    rc = sqlite3_step(st);
    *found = rc == SQLITE_ROW;
    if (*found) *id = sqlite3_column_int64(st, 0);
    else if (rc != SQLITE_DONE) snprintf(err, errlen, "sqlite: %s (in: %.80s)", sqlite3_errmsg(db->h), sql);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

int dbi_check_integrity(gt_db *db, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    char first[200] = "";
    int rc = sqlite3_prepare_v2(db->h, "PRAGMA main.quick_check(1)", -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
        dbv_clean_copy(first, sizeof first, (const char *)sqlite3_column_text(st, 0), 0);
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW && !strcmp(first, "ok")) return 0;
    if (!first[0]) dbv_clean_copy(first, sizeof first, sqlite3_errmsg(db->h), 0);
    snprintf(err, errlen, "database %s is damaged (SQLite's quick_check: %s): nothing was changed; restore it from a "
             "copy", db->path, first);
    return -1;
}

int dbi_begin(gt_db *db, char *err, size_t errlen) { return dbi_run(db, err, errlen, "BEGIN IMMEDIATE", ""); }

int dbi_commit(gt_db *db, char *err, size_t errlen) { return dbi_run(db, err, errlen, "COMMIT", ""); }

void dbi_rollback(gt_db *db)
{
    if (!sqlite3_get_autocommit(db->h)) sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
}

int dbi_shape_id(gt_db *db, const gt_shape *s, long long *id, char *err, size_t errlen)
{
    const char *lay = gt_layout_name(s->ta, s->tb);
    const int batch = gt_shape_batch(s);
    int found = 0;
    if (dbi_run(db, err, errlen, "INSERT INTO shapes (m, n, k, batch, layout) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                "iiiit", s->m, s->n, s->k, batch, lay) < 0 ||
        dbi_int64(db, id, &found, err, errlen,
                  "SELECT id FROM shapes WHERE m = ? AND n = ? AND k = ? AND batch = ? AND layout = ?", "iiiit", s->m,
                  s->n, s->k, batch, lay) < 0)
        return -1;
    if (!found) snprintf(err, errlen, "internal: shape row vanished after insert");
    return found ? 0 : -1;
}

/* The math class a family promises; a family this build does not know is taken as FP32 (it is never served). */
const char *dbi_family_math(const char *family)
{
    const gt_family *f = gt_family_find(family);
    return gt_math_name(f ? f->math : GT_MATH_FP32);
}

int dbi_candidate_id(gt_db *db, const char *family, const char *params, const char *source_hash, long long *id,
                     char *err, size_t errlen)
{
    int found = 0;
    if (dbi_run(db, err, errlen,
                "INSERT INTO candidates (family, params, source_hash, math) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                "tttt", family, params, source_hash, dbi_family_math(family)) < 0 ||
        dbi_int64(db, id, &found, err, errlen,
                  "SELECT id FROM candidates WHERE family = ? AND params = ? AND source_hash = ?", "ttt", family, params,
                  source_hash) < 0)
        return -1;
    if (!found) snprintf(err, errlen, "internal: candidate vanished after insert");
    return found ? 0 : -1;
}

int dbi_model_id(gt_db *db, const char *name, int cc_major, int cc_minor, int sm_count, long long *id, char *err,
                 size_t errlen)
{
    int found = 0;
    if (dbi_run(db, err, errlen,
                "INSERT INTO gpu_models (name, cc_major, cc_minor, sm_count) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                "tiii", name, cc_major, cc_minor, sm_count) < 0 ||
        dbi_int64(db, id, &found, err, errlen,
                  "SELECT id FROM gpu_models WHERE name = ? AND cc_major = ? AND cc_minor = ? AND sm_count = ?", "tiii",
                  name, cc_major, cc_minor, sm_count) < 0)
        return -1;
    if (!found) snprintf(err, errlen, "internal: gpu model vanished after insert");
    return found ? 0 : -1;
}

int dbi_col(sqlite3_stmt *st, const char *name)
{
    for (int i = 0, n = sqlite3_column_count(st); i < n; ++i)
        if (!strcmp(sqlite3_column_name(st, i), name)) return i;
    return -1;
}

long long dbi_col_int(sqlite3_stmt *st, const char *name)
{
    const int c = dbi_col(st, name);
    return c < 0 ? 0 : sqlite3_column_int64(st, c);
}

double dbi_col_real(sqlite3_stmt *st, const char *name)
{
    const int c = dbi_col(st, name);
    return c < 0 ? -1 : dbi_real(st, c);
}

void dbi_col_text(sqlite3_stmt *st, const char *name, char *buf, size_t n)
{
    const int c = dbi_col(st, name);
    if (c < 0) buf[0] = '\0';
    else dbi_text(st, c, buf, n);
}

const char *dbi_col_str(sqlite3_stmt *st, const char *name)
{
    const int c = dbi_col(st, name);
    return c < 0 ? NULL : (const char *)sqlite3_column_text(st, c);
}

void dbi_text(sqlite3_stmt *st, int col, char *buf, size_t n)
{
    const unsigned char *t = sqlite3_column_text(st, col);
    snprintf(buf, n, "%s", t ? (const char *)t : "");
}

double dbi_real(sqlite3_stmt *st, int col)
{
    return sqlite3_column_type(st, col) == SQLITE_NULL ? -1.0 : sqlite3_column_double(st, col);
}

int dbi_bind_filter(sqlite3_stmt *st, const gt_winner_filter *f)
{
    int rc = SQLITE_OK;
    if (f && f->gpu_name && *f->gpu_name) rc |= sqlite3_bind_text(st, 1, f->gpu_name, -1, SQLITE_TRANSIENT);
    if (f && f->shape) {
        rc |= sqlite3_bind_int(st, 2, f->shape->m);
        rc |= sqlite3_bind_int(st, 3, f->shape->n);
        rc |= sqlite3_bind_int(st, 4, f->shape->k);
        rc |= sqlite3_bind_text(st, 5, gt_layout_name(f->shape->ta, f->shape->tb), -1, SQLITE_STATIC);
        rc |= sqlite3_bind_int(st, 13, gt_shape_batch(f->shape));
    }
    if (f && f->family && *f->family) rc |= sqlite3_bind_text(st, 6, f->family, -1, SQLITE_TRANSIENT);
    if (f && f->layout && *f->layout) rc |= sqlite3_bind_text(st, 7, f->layout, -1, SQLITE_TRANSIENT);
    if (f && f->model) {
        rc |= sqlite3_bind_text(st, 8, f->model->name, -1, SQLITE_TRANSIENT);
        rc |= sqlite3_bind_int(st, 9, f->model->cc_major);
        rc |= sqlite3_bind_int(st, 10, f->model->cc_minor);
        rc |= sqlite3_bind_int(st, 11, f->model->sm_count);
    }
    if (f && f->math && (f->math & GT_MATH_ALL) != GT_MATH_ALL) { /* the set's names as ",fp32,": see DBI_FILTER_SQL */
        char set[128] = ",";
        for (int m = 0; m < GT_MATH_COUNT; ++m)
            if (f->math & GT_MATH_BIT(m))
                snprintf(set + strlen(set), sizeof set - strlen(set), "%s,", gt_math_name((gt_math)m));
        rc |= sqlite3_bind_text(st, 12, set, -1, SQLITE_TRANSIENT);
    }
    return rc;
}

