/* Internals shared by the db/ sources: the gt_db body and small prepared-statement helpers.
 * Not part of the public API; tested through it (tests/test_db.c, tests/test_export.c). */
#ifndef GT_DBI_H
#define GT_DBI_H

#include "db.h"

#include <sqlite3.h>

struct gt_db {
    sqlite3 *h;
    char path[4096];
    int created; /* this open created the file (gt_db_discard removes it) */
};

/* Bind formats for dbi_* (one letter per '?', in order):
 *   t text (NULL pointer -> SQL NULL)   i int   I long long   d double
 *   D double, NULL when negative ("absent")   k int, NULL when negative
 *   b blob: two arguments, const void * and size_t
 * The format must name every parameter of the statement; dbi_prepare with fmt NULL leaves binding to the caller. */
int dbi_prepare(gt_db *db, sqlite3_stmt **st, char *err, size_t errlen, const char *sql, const char *fmt, ...);

/* Prepare, bind, step to the end. */
int dbi_run(gt_db *db, char *err, size_t errlen, const char *sql, const char *fmt, ...);

/* Prepare, bind, one step: *found = 1 and *id = column 0 when a row came back. */
int dbi_int64(gt_db *db, long long *id, int *found, char *err, size_t errlen, const char *sql, const char *fmt, ...);

/* Fill err with sqlite's message and where it happened; returns -1. */
int dbi_fail(gt_db *db, const char *where, char *err, size_t errlen);

/* PRAGMA quick_check of the database: 0 when it is whole, else -1 and err says the file is damaged (a writer asks
 * before it changes anything, so a damaged file is named as such, not blamed on what was being added). */
int dbi_check_integrity(gt_db *db, char *err, size_t errlen);

int dbi_begin(gt_db *db, char *err, size_t errlen);
int dbi_commit(gt_db *db, char *err, size_t errlen);
void dbi_rollback(gt_db *db);

/* Get-or-create ids (call inside a transaction). */
int dbi_shape_id(gt_db *db, const gt_shape *s, long long *id, char *err, size_t errlen);
/* The math class name a family promises ("fp32" for a family this build does not know). */
const char *dbi_family_math(const char *family);
int dbi_candidate_id(gt_db *db, const char *family, const char *params, const char *source_hash, long long *id,
                     char *err, size_t errlen);
int dbi_model_id(gt_db *db, const char *name, int cc_major, int cc_minor, int sm_count, long long *id, char *err,
                 size_t errlen);

/* Store (cand, median_ms) as the winner of (model, shape) when none is stored or it is strictly faster; with
 * same_replaces, the stored candidate re-timed also replaces its own row. Staleness comes first: a fresh kernel
 * replaces a stale stored one (gt_kernel_stale: its source changed since it was timed) whatever their times, and a
 * stale one never replaces a fresh one. *replaced = 1 when the row changed.
 * Call inside a transaction. */
/* SQL: 1 when candidate `cand` on shape `shape` (id expressions) is stale (gt_kernel_stale). */
#define DBI_STALE(cand, shape)                                                                                   \
    "(SELECT gt_kernel_stale(c.family, c.params, s.layout, s.batch, c.source_hash) FROM candidates c, shapes s "       \
    "WHERE c.id = "                                                                                             \
    cand " AND s.id = " shape ")"
int dbi_offer_winner(gt_db *db, long long model, long long shape, long long cand, long long sweep_id, double median_ms,
                     double spread_pct, int same_replaces, int *replaced, char *err, size_t errlen);
/* Store a cuBLAS baseline unless the stored one comes from a newer sweep (started_at, then uid, decides). */
int dbi_offer_baseline(gt_db *db, long long model, long long shape, long long sweep_id, double cublas_ms, char *err,
                       size_t errlen);

/* gt_winner_filter as SQL over aliases gm (gpu_models), s (shapes), c (candidates): ?1 gpu substring, ?2..?5 and
 * ?13 shape (its batch), ?6 family, ?7 layout, ?8..?11 model, ?12 the math classes (their names between commas,
 * ",fp32,tf32x3,"); NULL binds match all. */
#define DBI_FILTER_SQL                                                                                          \
    " WHERE (?1 IS NULL OR instr(lower(gm.name), lower(?1)) > 0)"                                             \
    " AND (?2 IS NULL OR (s.m = ?2 AND s.n = ?3 AND s.k = ?4 AND s.layout = ?5 AND s.batch = ?13))"            \
    " AND (?6 IS NULL OR c.family = ?6)"                                                                       \
    " AND (?7 IS NULL OR s.layout = ?7)"                                                                       \
    " AND (?8 IS NULL OR (gm.name = ?8 AND gm.cc_major = ?9 AND gm.cc_minor = ?10 AND gm.sm_count = ?11))" \
    " AND (?12 IS NULL OR instr(?12, ',' || c.math || ',') > 0)"

int dbi_bind_filter(sqlite3_stmt *st, const gt_winner_filter *f);

/* The columns of a GPU model, a shape and a kernel, named as the readers take them (db/query.c, db/json.c's export),
 * over the aliases gm, s and c. */
#define DBI_ROW_SQL                                                                                             \
    "gm.name AS gpu, gm.cc_major AS cc_major, gm.cc_minor AS cc_minor, gm.sm_count AS sm_count, s.m AS m, "         \
    "s.n AS n, s.k AS k, s.batch AS batch, s.layout AS layout, c.family AS family, c.params AS params, "            \
    "c.source_hash AS source_hash"

/* What a reader serves of a winner row (aliases w, s, b as above): only a winner whose time is possible on its shape
 * (db/validate.h; the SQL functions are registered by gt_db_open), and its baseline only when it is possible too and
 * not absurdly slower (else NULL: no baseline). Rows stored before these checks, or by a damaged file, are never
 * served, and a writer replaces them. */
#define DBI_SERVABLE_SQL " AND gt_possible_ms(s.m, s.n, s.k, s.batch, w.median_ms)"
/* Whether a stored time of the shape with id shape_col is possible (an SQL expression): offers replace rows where
 * it is not, whatever they are offered, so an impossible row cannot hold its place. */
#define DBI_STORED_POSSIBLE(shape_col, ms_col)                                                                  \
    "(SELECT gt_possible_ms(m, n, k, batch, " ms_col ") FROM shapes WHERE id = " shape_col ")"
#define DBI_BASELINE_SQL "gt_possible_baseline(s.m, s.n, s.k, s.batch, w.median_ms, b.cublas_ms)"

/* Before SQLite opens path: it exists (or create, then its directories are made and *is_new = 1), is a regular
 * file, and starts with the SQLite header (or is empty and create). */
int dbi_check_file(const char *path, int create, int *is_new, char *err, size_t errlen);
/* A read-only SQLite URI for path ("file:...?mode=ro"), with immutable=1 when the file is in WAL mode and no -wal
 * lies beside it, so that reading it creates no -wal or -shm file (db/open.c). */
void dbi_ro_uri(const char *path, char *out, size_t n);
/* Read the schema version of an open file, refusing a newer one and a non-gemmtune SQLite file. */
int dbi_check_version(sqlite3 *h, const char *path, int *version, char *err, size_t errlen);

/* Every row of the part a merge has staged in schema "src" through the row validator (db/merge_check.c), with the
 * types, references and clashes with main that the steps of the merge would otherwise carry. 0, or -1 with err
 * "<table> row <id>: <reason>". */
int dbi_merge_check(gt_db *db, char *err, size_t errlen);

/* Copy a column's text into buf (empty when NULL). */
void dbi_text(sqlite3_stmt *st, int col, char *buf, size_t n);
/* The index of the result column named name (its AS alias), -1 when there is none: readers take columns by name,
 * so a column added to a query moves no other. */
int dbi_col(sqlite3_stmt *st, const char *name);
/* A column by name: a missing one reads as 0, -1 (a time: also when NULL), "" (copied text) or NULL (dbi_col_str,
 * also when NULL). */
long long dbi_col_int(sqlite3_stmt *st, const char *name);
double dbi_col_real(sqlite3_stmt *st, const char *name);
void dbi_col_text(sqlite3_stmt *st, const char *name, char *buf, size_t n);
const char *dbi_col_str(sqlite3_stmt *st, const char *name);
/* A column as double, or -1 when NULL. */
double dbi_real(sqlite3_stmt *st, int col);

#define DBI_WHERE __FILE__ ":" DBI_STR(__LINE__)
#define DBI_STR(x) DBI_STR2(x)
#define DBI_STR2(x) #x

#endif
