/* Internals of the runtime loader (src/lib/loader*.c), shared with `gemmtune explain` and tests/test_loader.c.
 * Selection is a pure function over an array of gt_winner, so it is tested without a GPU or a database. */
#ifndef GT_LOADER_H
#define GT_LOADER_H

#include "db.h"
#include "family.h"
#include "gemmtune.h"
#include "serve.h"

#include <stddef.h>

/* The serving rules, in order (src/lib/gemmtune.h describes them for users). */
typedef enum {
    GT_RULE_EXACT,   /* the winner stored for this GPU model, shape and layout (our kernel or the vendor's) */
    GT_RULE_REUSE,   /* the winner of a tuned neighbour, where the serving model predicts it beats cuBLAS here */
    GT_RULE_CUBLAS,  /* cuBLAS's own SGEMM (FP32 pedantic): no tuned kernel is expected to beat it */
    GT_RULE_DEFAULT, /* the built-in kernel: asked for (GEMMTUNE_FALLBACK=default), or cuBLAS is not linked in */
    GT_RULE_NONE     /* GEMMTUNE_FALLBACK=none and no tuned kernel */
} gt_rule;

/* A side of at most this many rows or columns makes a call skinny: its kernels are tuned to that exact side, so a
 * reuse for it takes only a neighbour with the same side (loader_select.c, reuse). */
#define GT_LOADER_SKINNY_SIDE 64

/* The GPU a selection is for: model identity and the limits that decide legality (lim.cc_*, lim.sm_count). */
typedef struct {
    char name[128];
    gt_limits lim;
} gt_device_id;

/* 1 when stored row w was tuned on dev's GPU model (gt_gpu_model_equal). Cannot fail. */
int gt_winner_on_device(const gt_winner *w, const gt_device_id *dev);
/* The device a stored GPU model stands for: its name and SM count, the limits of its compute capability
 * (gt_limits_for_cc). Returns 1, or 0 (out untouched) when this gemmtune knows no such architecture. */
int gt_device_id_of(const gt_gpu_model *m, gt_device_id *out);

/* Outcome of a selection: the rule, the winner row it came from (-1 for cublas/default/none), for reuse the
 * distance and the predicted ratio to cuBLAS (for exact the stored one), the kernel to run (family NULL for none;
 * cuBLAS is the vendor family's default params), and why no tuned kernel was served, or why a row was skipped. */
typedef struct {
    gt_rule rule;
    int row;
    double distance, predicted;
    const gt_family *family;
    gt_params params;
    char why[320];
} gt_choice;

/* Choose the kernel for call on dev among rows[0..n) under the fallback policy (ENV already resolved) and the
 * serving model. Cannot fail: returns GT_RULE_NONE only under GEMMTUNE_FALLBACK_NONE (or if the default were
 * illegal). */
gt_choice gt_loader_select(const gt_winner *rows, int n, const gt_device_id *dev, const gt_call *call,
                           gemmtune_fallback fallback, const gt_serve_model *model);

const char *gt_rule_name(gt_rule r);

/* Resolve GEMMTUNE_FALLBACK_ENV from $GEMMTUNE_FALLBACK. Returns 0, or -1 with a message for a bad value. */
int gt_loader_fallback(gemmtune_fallback opt, gemmtune_fallback *out, char *err, size_t errlen);

/* Row-major call from gemmtune_sgemm's arguments; column_major maps cuBLAS's order (C^T = op(B)^T op(A)^T:
 * operands, m/n and the transposes swap). Pointers only give their alignment. Returns 0, or -1 with a
 * message for bad sizes or leading dimensions. */
int gt_loader_map_call(int column_major, int transa, int transb, int m, int n, int k, const void *A, int lda,
                       const void *B, int ldb, const void *C, int ldc, gt_call *out, int *swap, char *err,
                       size_t errlen);

/* Make the call gt_loader_map_call mapped (with its swap) a strided batch of batch matrices, strides sa, sb, sc
 * in elements of the caller's A, B and C: the shape carries the batch, the call the strides, and each operand's
 * alignment becomes that of every matrix's start. batch <= 1 leaves the call one GEMM. Returns 0, or -1 with a
 * message for a negative batch or stride. */
int gt_loader_map_batch(gt_call *c, int swap, int batch, long long sa, long long sb, long long sc, char *err,
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

/* The math class a handle of math (not GEMMTUNE_MATH_ENV) is served besides FP32: gemmtune_math counts the classes
 * from GEMMTUNE_MATH_FP32 in gt_math's order. Cannot fail. */
gt_math gt_loader_math_class(gemmtune_math math);
/* The same the other way: the gemmtune_math of a handle served class c. Cannot fail. */
gemmtune_math gt_loader_math_of_class(gt_math c);
/* Read the winners of an open database (loader_db.c) that a handle of this math may be served: FP32 only, or for
 * another class the faster of the FP32 winner and that class's winner of each shape. Returns 0 or -1 with a
 * message. */
int gt_loader_set_from_db(gt_db *db, gemmtune_math math, gt_winner_set *out, char *err, size_t errlen);
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

/* One line of a record file (record.c; the format is in docs/LOADER.md): "MxNxK:layout calls", a strided batch
 * "BxMxNxK:layout calls" (the shape's batch), then key=value fields: a field this version does not know is kept
 * verbatim in extra, so a merge carries a later version's lines through. */
typedef struct {
    gt_shape shape;
    long long calls;
    char extra[160];
} gt_record_line;

/* 0 with *out, or -1 for a comment, a blank or a damaged line (bad shape, layout, count or field). Pure. */
int gt_record_parse(const char *line, gt_record_line *out);
/* The line, newline included, into buf (truncated to n - 1). Pure. */
void gt_record_format(const gt_record_line *r, char *buf, size_t n);

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
/* The same for a ready text, copied without formatting (a warm-path failure). */
gemmtune_status gt_loader_fail_text(gemmtune_status st, const char *text);

/* One line describing a choice: "exact: tile2d BM=... (1.04x cuBLAS when tuned)", "reuse: ... from 1024x1024x1024 nn
 * (...; predicted 1.05x here)", "cublas: cublasSgemm ... (why)". */
void gt_loader_describe(const gt_choice *c, const gt_winner *rows, char *buf, size_t n);
/* Why a call of shape s on dev has nothing to run (rule none): "no tuned kernel for MxNxK ly on GPU and fallback
 * none", then the choice's why (an exact row skipped and the reason, no neighbour expected to win). */
void gt_loader_none_note(const gt_choice *c, const gt_shape *s, const gt_device_id *dev, char *buf, size_t n);
/* The kernel of a choice as text: "multistage BM=...", or its backend's description. */
void gt_loader_kernel_text(const gt_family *f, const gt_params *p, char *buf, size_t n);

#endif
