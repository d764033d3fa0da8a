/* Internals shared by the db/ sources: the gt_db body and small prepared-statement helpers.
 * Not part of the public API; tested through it (tests/test_db.c, tests/test_export.c). */
#ifndef GT_DBI_H
#define GT_DBI_H

#include "db.h"

#include <sqlite3.h>

struct gt_db {
    sqlite3 *h;
    char path[4096];
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

int dbi_begin(gt_db *db, char *err, size_t errlen);
int dbi_commit(gt_db *db, char *err, size_t errlen);
void dbi_rollback(gt_db *db);

/* Get-or-create ids (call inside a transaction). */
int dbi_shape_id(gt_db *db, const gt_shape *s, long long *id, char *err, size_t errlen);
int dbi_candidate_id(gt_db *db, const char *family, const char *params, const char *source_hash, long long *id,
                     char *err, size_t errlen);
int dbi_model_id(gt_db *db, const char *name, int cc_major, int cc_minor, int sm_count, long long *id, char *err,
                 size_t errlen);

/* Store (cand, median_ms) as the winner of (model, shape) unless a faster, different candidate is stored; the same
 * candidate always takes the fresh timing. *replaced = 1 when the row changed. Call inside a transaction. */
int dbi_offer_winner(gt_db *db, long long model, long long shape, long long cand, long long sweep_id, double median_ms,
                     double spread_pct, int *replaced, char *err, size_t errlen);

/* Copy a column's text into buf (empty when NULL). */
void dbi_text(sqlite3_stmt *st, int col, char *buf, size_t n);
/* A column as double, or -1 when NULL. */
double dbi_real(sqlite3_stmt *st, int col);

#define DBI_WHERE __FILE__ ":" DBI_STR(__LINE__)
#define DBI_STR(x) DBI_STR2(x)
#define DBI_STR2(x) #x

#endif
