/* The results database: SQLite, schema in db/schema.sql + db/migrate_<v>.sql + db/views.sql (versioned by PRAGMA
 * user_version, migrated forward when a writer opens it), WAL for writers, every statement prepared. One gt_db is
 * used by one thread at a time. Every function returns 0 on success or -1 with a message in err; none prints or
 * exits. db/open.c (open modes), db.c (writes), query.c (walks), json.c, header.c, merge.c, model.c.
 * Tested by tests/test_db.c, test_export.c, test_report.c, test_cli_db.c on databases they create. */
#ifndef GT_DB_H
#define GT_DB_H

#include "family.h"

#include <stddef.h>

typedef struct gt_db gt_db;

/* The schema version this build writes (PRAGMA user_version); older files are migrated forward on open. */
#define GT_DB_SCHEMA_VERSION 6

/* A physical GPU and the sweep-time facts about it. Winners are keyed by the model: name + cc + sm_count. */
typedef struct {
    char name[128];
    int cc_major, cc_minor, sm_count;
    char uuid[64];           /* "GPU-xxxxxxxx-..." */
    long long mem_bytes;
    int l2_bytes;
    int driver_version;      /* CUDA driver API version, cudaDriverGetVersion: 13000 for 13.0 */
    int cuda_version;        /* cudaRuntimeGetVersion */
    int nvrtc_version;       /* major*1000 + minor*10 */
    int sm_clock_mhz;        /* at the start of the sweep */
    char nvidia_driver[32];  /* the NVIDIA driver's version, "580.159.04" (NVML, else /proc/driver/nvidia/version);
                                "" when unknown */
} gt_gpu_info;

/* One measured (or failed) candidate on one shape. Absent numbers are negative. */
typedef struct {
    const char *family, *params, *source_hash;
    gt_status status;        /* what became of it (kernels/gt_types.h); stored by name */
    const char *message;     /* compile log excerpt, CUDA error text, max error; may be NULL */
    double median_ms, min_ms, max_ms, tflops, rel_err;
    int regs, spill_bytes;
    double compile_s;
    int reps;
} gt_trial;

/* A stored winner, with its cuBLAS baseline on the same GPU model and shape. */
typedef struct {
    char gpu_name[128];
    int cc_major, cc_minor, sm_count;
    gt_shape shape;
    char family[32];
    char params[256];
    char source_hash[17];
    gt_math math;            /* its kernel's math class; GT_MATH_COUNT for a stored name this build does not know */
    double median_ms, spread_pct, tflops;
    double cublas_ms, cublas_tflops, ratio; /* ratio = cublas_ms / median_ms; negative when no baseline */
    long long sweep_id;
    int stale;               /* 1: what the kernel compiles from changed since it was timed (gt_kernel_stale), so
                                it is never served, exported with its cubin or taken as measured; re-tune it */
} gt_winner;

/* The GPU model of a sweep's GPU and of a stored winner (compare them with gt_gpu_model_equal). Cannot fail. */
gt_gpu_model gt_gpu_info_model(const gt_gpu_info *g);
gt_gpu_model gt_winner_model(const gt_winner *w);
/* 1 when two winners were tuned on the same GPU model (gt_gpu_model_equal of theirs). Cannot fail. */
int gt_winner_same_model(const gt_winner *a, const gt_winner *b);

/* Filters for gt_db_winners; zero/NULL fields match everything. */
typedef struct {
    const char *gpu_name;    /* substring, case-insensitive */
    const gt_shape *shape;   /* exact m, n, k and layout */
    const char *family;
    const char *layout;      /* "nn", "nt", "tn", "tt": any shape of that layout */
    const gt_gpu_model *model; /* exactly this GPU model (name, cc, SM count) */
    unsigned math;           /* the math classes that match, a set (GT_MATH_BIT(m) each, GT_MATH_ALL every one);
                                0 means FP32 for winners (what an FP32 caller may be served) and every class for
                                trials */
} gt_winner_filter;

typedef int (*gt_winner_fn)(const gt_winner *w, void *ctx); /* non-zero stops the walk */

/* One stored trial with the GPU model it ran on and the cuBLAS baseline of its model and shape (query --trials). */
typedef struct {
    char gpu_name[128];
    int cc_major, cc_minor, sm_count;
    gt_shape shape;
    char family[32], params[256], source_hash[17];
    gt_status status;        /* GT_ST_COUNT for a stored name this build does not know */
    char message[256];       /* truncated */
    double median_ms, min_ms, max_ms, tflops, rel_err; /* negative when absent */
    double cublas_ms, ratio; /* ratio = cublas_ms / median_ms; negative when either is absent */
    long long id, sweep_id;
    int is_winner;           /* this candidate is the stored winner of its model and shape */
} gt_trial_row;

typedef int (*gt_trial_fn)(const gt_trial_row *t, void *ctx); /* non-zero stops the walk */

/* Default path: $GEMMTUNE_DB, else $XDG_DATA_HOME/gemmtune/gemmtune.db, else ~/.local/share/gemmtune/gemmtune.db. */
int gt_db_default_path(char *buf, size_t n, char *err, size_t errlen);

/* How gt_db_open opens a file. A reader never writes: not the file, not its journal mode, not a -wal or -shm file
 * beside it (a WAL-mode file with no -wal beside it is read as immutable), so it serves a database another user
 * owns in a folder this user may not write. A reader of an older schema reads a migrated private copy in memory;
 * only a writer migrates the file. */
typedef enum {
    GT_DB_READ_CACHE = 0, /* the loader: as GT_DB_READ, but read-write (for the cubin cache) when this user may write
                             the file and its folder and the schema is current; never migrates or changes the
                             journal mode */
    GT_DB_CREATE = 1,     /* writer: create the file and its folders if absent, WAL, migrate in place */
    GT_DB_WRITE = 2,      /* writer: as GT_DB_CREATE, but the file must exist */
    GT_DB_READ = 3        /* reader: read-only (query, export, report, merge's sources) */
} gt_db_mode;

/* Open path in mode (a gt_db_mode). ":memory:" with GT_DB_CREATE gives a private in-memory database (the loader
 * imports JSON into one). Refuses a file that is not SQLite, another program's SQLite file, or one whose schema is
 * newer than this build, leaving it untouched; a writer refuses, in plain words, a file or folder this user may not
 * write. */
int gt_db_open(const char *path, int mode, gt_db **out, char *err, size_t errlen);
void gt_db_close(gt_db *db);
/* Close db after a failed command: when this open created the file (GT_DB_CREATE of a path that did not exist),
 * remove it and its -wal, -shm and -journal, so a refused import or merge leaves no database behind (nor a WAL
 * that keeps a full disk full); otherwise exactly gt_db_close. NULL is ignored. Cannot fail. */
void gt_db_discard(gt_db *db);

/* 0 when this user may write path and create files in its folder, or when path does not exist yet; -1 with the
 * reason in plain words (owner, mode, uid) otherwise. Writes nothing: a writer asks before long work. */
int gt_db_check_writable(const char *path, char *err, size_t errlen);

/* Check, reading only, that path is a gemmtune database this build can open (gt_db_open's refusals: missing, not
 * SQLite, another program's SQLite file, newer schema); *version is its schema version. 0 or -1 with err. */
int gt_db_probe(const char *path, int *version, char *err, size_t errlen);

/* The path the database was opened with. Cannot fail. */
const char *gt_db_path(const gt_db *db);

/* Register the GPU (upsert by uuid) and start a sweep row; returns its id for the trials that follow. */
int gt_db_begin_sweep(gt_db *db, const gt_gpu_info *gpu, const char *command, long long *sweep_id, char *err,
                      size_t errlen);

/* Store one trial, committed before returning (a kill -9 loses at most the trial in flight). */
int gt_db_add_trial(gt_db *db, long long sweep_id, const gt_shape *s, const gt_trial *t, char *err, size_t errlen);

/* Resume: the newest stored trial of this candidate on this GPU model and shape. *found = 0 when none (or when its
 * stored status is none this build knows); otherwise *status and *median_ms are filled. */
int gt_db_find_trial(gt_db *db, const gt_gpu_info *gpu, const gt_shape *s, const char *family, const char *params,
                     const char *source_hash, int *found, gt_status *status, double *median_ms, char *err,
                     size_t errlen);

/* cuBLAS baseline of a shape on the sweep's GPU model (the newest replaces the older). */
int gt_db_set_baseline(gt_db *db, long long sweep_id, const gt_shape *s, double cublas_ms, char *err, size_t errlen);

/* Record the winner of a shape for the sweep's GPU model. Replaces the stored one when it is faster, or when it
 * is the same candidate (fresh timing). */
int gt_db_set_winner(gt_db *db, long long sweep_id, const gt_shape *s, const char *family, const char *params,
                     const char *source_hash, double median_ms, double spread_pct, char *err, size_t errlen);

/* Walk the winners matching filter (NULL: all), ordered by GPU, layout, m, n, k. */
int gt_db_winners(gt_db *db, const gt_winner_filter *filter, gt_winner_fn fn, void *ctx, char *err,
                  size_t errlen);

/* Walk the trials matching filter (NULL: all), ordered by GPU, layout, m, n, k, then ok trials fastest first,
 * then the failed ones. */
int gt_db_trials(gt_db *db, const gt_winner_filter *filter, gt_trial_fn fn, void *ctx, char *err, size_t errlen);

/* The GPUs ("gpus": one row per physical GPU: model, memory, sweeps, and the NVIDIA driver, CUDA and NVRTC versions
 * of its newest sweep) or the sweeps ("sweeps": when, where from, GPU, those versions, trials) whose GPU model
 * matches filter's gpu_name and model (its other fields do not apply), as a cJSON array of objects keyed by column:
 * numbers, text (versions as "13.0"), null. *rows is the caller's (cJSON_Delete). */
struct cJSON;
int gt_db_list(gt_db *db, const char *kind, const gt_winner_filter *filter, struct cJSON **rows, char *err,
               size_t errlen);

/* Compiled-kernel cache keyed by (source hash, arch, NVRTC version, options), each with the MAC that says who put
 * it there (src/lib/trust.h; schema 5): the db layer stores it and hands it back, src/lib/cubin.c judges it.
 * *found = 0 on a miss. On a hit *data is malloc'd (caller frees) and mac[65] holds the stored MAC ("" when none:
 * a row from before schema 5). Put replaces the row of the same key. */
int gt_db_cubin_get(gt_db *db, const char *source_hash, const char *arch, int nvrtc_version, const char *options,
                    unsigned char **data, size_t *size, int *regs, int *spill_bytes, char mac[65], int *found,
                    char *err, size_t errlen);
int gt_db_cubin_put(gt_db *db, const char *source_hash, const char *arch, int nvrtc_version, const char *options,
                    const unsigned char *data, size_t size, int regs, int spill_bytes, const char *mac, char *err,
                    size_t errlen);
/* 1 when db was opened read-only (a reader, another user's file, an older schema read in memory is not): nothing
 * may be cached there. Cannot fail. */
int gt_db_read_only(const gt_db *db);

/* Merge other gemmtune databases (parts) into db (see `gemmtune merge`): of each part, its sweeps not yet here
 * (matched by uid) with their trials, GPUs, shapes, candidates and baselines (the newest wins), and for each GPU
 * model and shape the faster verified winner. Provenance: a merged sweep's origin becomes "merge:<absolute path>"
 * unless it already had one. Idempotent. Compiled kernels (cubins) are never taken from a part: they are compiled
 * here when needed. Every part is checked before it is merged: SQLite's integrity_check, then every row through the
 * row validator (db/validate.h), its references, and what it says against what db holds; a part is only read (an
 * older schema is migrated in a temporary copy, with the triggers and views it held dropped). All or nothing: on
 * any failure db is unchanged, stats are zero and err names the part at fault (or the database itself, when it is
 * damaged). stats[i] counts the rows parts[i] added or replaced. */
typedef struct {
    int sweeps, trials, baselines, winners; /* rows added or replaced */
} gt_merge_stats;
int gt_db_merge_all(gt_db *db, const char *const *parts, int n, gt_merge_stats *stats, char *err, size_t errlen);
/* gt_db_merge_all of one part. */
int gt_db_merge(gt_db *db, const char *other_path, gt_merge_stats *stats, char *err, size_t errlen);

/* JSON export/import (documented in docs/EXPORT.md, versioned). Export writes the winners matching filter;
 * import adds them to db (with provenance), refusing malformed or wrong-schema input without changing db. */
int gt_db_export_json(gt_db *db, const gt_winner_filter *filter, char **json, char *err, size_t errlen);
int gt_db_import_json(gt_db *db, const char *json, const char *origin, int *imported, char *err, size_t errlen);
/* Import with the fate of every row: imported (new, or faster than the stored winner), already (the stored winner
 * is this candidate) or slower (a faster winner is stored). Every row must name a kernel this gemmtune can run:
 * a known family, its canonical parameter text, legal under the limits of the row's compute capability
 * (gt_limits_for_arch); one that does not refuses the whole file, naming the row and the reason. */
typedef struct {
    int rows, imported, already, slower;
} gt_import_stats;
int gt_db_import_json_stats(gt_db *db, const char *json, const char *origin, gt_import_stats *st, char *err,
                            size_t errlen);
/* Validate a document as import would, without a database. *rows = its winners. 0 or -1 with err. */
int gt_db_check_json(const char *json, int *rows, char *err, size_t errlen);

/* C header export (`gemmtune export --format header`): a static gemmtune_winner_row table of the winners matching
 * filter and a static inline exact-match lookup gemmtune_winner_find(gpu_name, m, n, k, layout); it compiles alone
 * under -std=c11 -Wall -Wextra -Werror and needs no SQLite. With cubin non-NULL each winner's kernel is embedded
 * for arch "sm_<cc>": cubin returns malloc'd bytes (0) or fails (-1, message in err, and the export fails).
 * Kernels shared by several shapes are embedded once. *out is malloc'd (caller frees). */
typedef int (*gt_cubin_fn)(const gt_winner *w, const char *arch, unsigned char **data, size_t *size, void *ctx,
                           char *err, size_t errlen);
int gt_db_export_header(gt_db *db, const gt_winner_filter *filter, gt_cubin_fn cubin, void *ctx, char **out,
                        char *err, size_t errlen);

/* Text cut from src/lib/gemmtune.h at build time by name: "winner_row.h", the gemmtune_winner_row definition with its
 * include guard, which the header export writes (one definition for the library and every exported header). NULL
 * for another name. */
const char *gt_public_text(const char *name);

/* Embedded SQL text by file name ("schema.sql"), generated from the .sql files in db/ at build time. */
const char *gt_sql_text(const char *name);
const char *gt_sql_text_name(int i);

#endif
