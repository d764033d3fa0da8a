/* Internals of the runtime loader (src/loader*.c), shared with `gemmtune explain` and tests/test_loader.c.
 * Selection is a pure function over an array of gt_winner, so it is tested without a GPU or a database. */
#ifndef GT_LOADER_H
#define GT_LOADER_H

#include "db.h"
#include "family.h"
#include "gemmtune.h"

#include <stddef.h>

typedef enum { GT_RULE_EXACT, GT_RULE_NEAREST, GT_RULE_SAME_CC, GT_RULE_DEFAULT, GT_RULE_CUBLAS, GT_RULE_NONE } gt_rule;

/* The built-in kernel, correct for every call: scalar loads, edge guards, no split-K. */
#define GT_DEFAULT_FAMILY "tile2d"
#define GT_DEFAULT_PARAMS "BM=64,BN=64,BK=8,TM=8,TN=8"

/* The GPU a selection is for: model identity and the limits that decide legality (lim.cc_*, lim.sm_count). */
typedef struct {
    char name[128];
    gt_limits lim;
} gt_device_id;

/* Outcome of a selection: the rule that fired, the winner row it came from (-1 for default/cuBLAS/none), the
 * distance for nearest/same_cc, and the kernel to run (family NULL for cuBLAS and none). */
typedef struct {
    gt_rule rule;
    int row;
    double distance;
    const gt_family *family;
    gt_params params;
} gt_choice;

/* Choose the kernel for call on dev among rows[0..n) under the fallback policy (ENV already resolved).
 * Cannot fail: returns GT_RULE_NONE only under GEMMTUNE_FALLBACK_NONE (or if the default were illegal). */
gt_choice gt_loader_select(const gt_winner *rows, int n, const gt_device_id *dev, const gt_call *call,
                           gemmtune_fallback fallback);

const char *gt_rule_name(gt_rule r);

/* Resolve GEMMTUNE_FALLBACK_ENV from $GEMMTUNE_FALLBACK. Returns 0, or -1 with a message for a bad value. */
int gt_loader_fallback(gemmtune_fallback opt, gemmtune_fallback *out, char *err, size_t errlen);

/* Row-major call from gemmtune_sgemm's arguments; column_major maps cuBLAS's order (C^T = op(B)^T op(A)^T:
 * operands, m/n and the transposes swap). Pointers only give their alignment. Returns 0, or -1 with a
 * message for bad sizes or leading dimensions. */
int gt_loader_map_call(int column_major, int transa, int transb, int m, int n, int k, const void *A, int lda,
                       const void *B, int ldb, const void *C, int ldc, gt_call *out, int *swap, char *err,
                       size_t errlen);

/* Largest power of two <= 16 dividing the address (16 for NULL). */
int gt_loader_align(const void *p);

/* A set of winners with, per row, an optional embedded cubin (table path). */
typedef struct {
    gt_winner *rows;
    int n;
    const unsigned char **cubin; /* NULL when no row has one */
    size_t *cubin_size;
    const char **cubin_arch;
} gt_winner_set;

/* Read every winner of an open database (loader_db.c). Returns 0 or -1 with a message. */
int gt_loader_set_from_db(gt_db *db, gt_winner_set *out, char *err, size_t errlen);
/* Convert a compiled-in table (loader_table.c, which needs neither SQLite nor NVRTC); refuses rows with an unknown family, bad layout/params or sizes. */
int gt_loader_set_from_table(const gemmtune_winner_row *rows, int nrows, gt_winner_set *out, char *err,
                             size_t errlen);
void gt_loader_set_free(gt_winner_set *s);

/* Open the winners' source named by opt (database: explicit, $GEMMTUNE_DB or default path; or JSON into an
 * in-memory db). *db is NULL when the default database does not exist (no winners). Returns a status with a
 * message in err. */
gemmtune_status gt_loader_open_source(const gemmtune_options *opt, gt_db **db, char *err, size_t errlen);

/* Open the source (as above) and read all its winners into set; keep (may be NULL) receives the open database
 * (NULL when none), for the cubin cache. Returns a status with a message in err. */
gemmtune_status gt_loader_winners(const gemmtune_options *opt, gt_winner_set *set, gt_db **keep, char *err,
                                  size_t errlen);

/* Produces a cubin for rendered source on arch: malloc'd into *data. Returns GEMMTUNE_SUCCESS or a status with
 * a message. The database path caches in the db's cubins table; the table path compiles with NVRTC if linked. */
typedef gemmtune_status (*gt_obtain_fn)(void *ctx, const char *src, const char *arch, unsigned char **data,
                                        size_t *size, int *cached, char *err, size_t errlen);

/* What a handle has done so far, for tests: plans made, kernels loaded, and where their cubins came from. */
typedef struct {
    int plans, kernels, embedded, cache_hits, compiled, workspaces;
} gt_loader_counters;
void gt_loader_counters_get(gemmtune_handle h, gt_loader_counters *out);

/* The common tail of gemmtune_create*: binds to the device, takes over set (freed on failure too) and ctx
 * (released with ctx_free). Records the message for gemmtune_last_error on failure. */
gemmtune_status gt_loader_create(gemmtune_handle *out, gt_winner_set *set, gt_obtain_fn obtain, void *ctx,
                                 void (*ctx_free)(void *), const gemmtune_options *opt);

/* Record a failure for gemmtune_last_error() (thread-local) and return st. */
gemmtune_status gt_loader_fail(gemmtune_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One line describing a choice: "exact: tile2d BM=..." / "nearest (d=0.10 from 1024x1024x1024 nn): ...". */
void gt_loader_describe(const gt_choice *c, const gt_winner *rows, char *buf, size_t n);

#endif
