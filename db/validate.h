/* The one check of rows that come from outside this database: every winner of an imported JSON document
 * (db/json.c) and every row of a merged database (db/merge_check.c), before anything is written; and the timing
 * rule the readers apply to rows already stored (db/query.c, db/json.c export, through the SQL function
 * gt_possible_ms). A row is data: it must name a kernel this gemmtune can run, with timings a GPU can take, in
 * clean text of bounded length. Each check returns 0, or -1 with the reason in err naming the field (the caller
 * names the row); a message never repeats text that failed the check. Tested by tests/test_validate.c. */
#ifndef GT_VALIDATE_H
#define GT_VALIDATE_H

#include "db.h"

#include <limits.h>
#include <stddef.h>

/* An integer field that is null or missing (a real one is NAN, a text one NULL). */
#define DBV_ABSENT LLONG_MIN

/* The timing bounds (validate.c says why each is generous). */
#define DBV_MIN_MS 1e-6          /* 1 ns: two clock cycles of a GPU, in which no kernel runs */
#define DBV_MAX_MS 86400000.0    /* one day: the longest watchdog --trial-timeout allows */
#define DBV_MAX_TFLOPS 2000.0    /* 2 PFLOPS: several times any GPU's FP32-accurate rate */
#define DBV_MAX_RATIO 1000.0     /* a kernel 1000x faster than cuBLAS SGEMM on the same GPU and shape */

/* Longest text of each field, in bytes. */
#define DBV_NAME_MAX 127         /* gpu name */
#define DBV_UUID_MAX 63
#define DBV_FAMILY_MAX 31
#define DBV_PARAMS_MAX 255
#define DBV_HOST_MAX 255
#define DBV_COMMAND_MAX 4096
#define DBV_VERSION_MAX 40       /* gemmtune_version */
#define DBV_DRIVER_MAX 31        /* nvidia_driver */
#define DBV_ORIGIN_MAX 4200      /* "merge:" + an absolute path */
#define DBV_MESSAGE_MAX 4096     /* a trial's message */
#define DBV_TIME_MAX 40          /* started_at, created_at */

/* Text of at most max bytes (empty only with may_be_empty), valid UTF-8 with no control character: none of C0,
 * DEL, C1 (U+0080..U+009F) nor the invisible format characters (zero-width ones, line separators, bidirectional
 * overrides and isolates, the byte-order mark: validate.c lists them) that make a terminal show other text than is
 * stored. With log, newline and tab are allowed (a trial's message). */
int dbv_text(const char *what, const char *s, size_t max, int may_be_empty, int log, char *err, size_t errlen);

/* Copy in (NULL: "") into out[n] (n > 0) as text dbv_text accepts (with log, newlines and tabs kept): each
 * control character and each byte that is not UTF-8 becomes '?', cut at a character boundary to fit. For text
 * this gemmtune writes from outside sources (a path in sweeps.origin, the host name, the command line, a compiler
 * log), so that its own rows always pass, and for messages that show what was refused. Cannot fail. */
void dbv_clean_copy(char *out, size_t n, const char *in, int log);

/* A UTC timestamp as gemmtune writes it: "YYYY-MM-DDTHH:MM:SS" with an optional fraction of 1..9 digits and "Z",
 * a real calendar date from 1970 on (a board without a clock starts there), and not later than a day from now
 * (sweeps are never started in the future, and merge orders baselines by this text). */
int dbv_timestamp(const char *what, const char *s, char *err, size_t errlen);

/* A GPU model: name, compute capability of an architecture this gemmtune knows (gt_limits_for_cc), 1..4096 SMs.
 * Fills *lim (sm_count set) when lim is not NULL. */
typedef struct {
    const char *name;
    long long cc_major, cc_minor, sm_count;
} dbv_model;
int dbv_model_check(const dbv_model *m, gt_limits *lim, char *err, size_t errlen);

/* A physical GPU: uuid of 1..63 clean characters; mem_bytes and l2_bytes absent or 0..2^50. */
int dbv_gpu_check(const char *uuid, long long mem_bytes, long long l2_bytes, char *err, size_t errlen);

/* A sweep: uid of 32 lowercase hex digits, started_at a timestamp, origin "local", "merge:..." or "import:...",
 * the optional texts clean and bounded, the versions absent or 0..1000000, the clock absent or 0..100000 MHz. */
typedef struct {
    const char *uid, *started_at, *host, *command, *version, *nvidia_driver, *origin; /* NULL: absent */
    long long driver_version, cuda_version, nvrtc_version, sm_clock_mhz;             /* DBV_ABSENT: absent */
} dbv_sweep;
int dbv_sweep_check(const dbv_sweep *s, char *err, size_t errlen);

/* A shape: m, n, k and batch (the products of one call) in 1..INT_MAX and layout exactly "nn", "nt", "tn" or
 * "tt"; fills *out. */
int dbv_shape_check(long long m, long long n, long long k, long long batch, const char *layout, gt_shape *out,
                    char *err, size_t errlen);

/* A kernel: a family this gemmtune knows (not a test-only one), its parameters in the family's canonical text,
 * source_hash of 16 lowercase hex digits, math absent or the family's class; with lim not NULL, legal() under it. */
typedef struct {
    const char *family, *params, *source_hash, *math;
} dbv_kernel;
int dbv_kernel_check(const dbv_kernel *k, const gt_limits *lim, char *err, size_t errlen);

/* A time a GEMM of shape s can take: finite, in [DBV_MIN_MS, DBV_MAX_MS], and no more than DBV_MAX_TFLOPS. */
int dbv_ms_check(const char *what, double ms, const gt_shape *s, char *err, size_t errlen);
/* The same as a predicate (1: possible), for readers that skip what is not. */
int dbv_ms_possible(const gt_shape *s, double ms);
/* The same for an untyped value read from SQLite (gt_possible_ms in SQL): dims and batch integers in 1..INT_MAX,
 * ms a number. */
int dbv_row_possible(long long m, long long n, long long k, long long batch, double ms);

/* A winner: its GPU model, shape, kernel (legal on the model's architecture), median_ms possible, spread_pct
 * absent or 0..1e9 percent, cublas_ms absent or possible, and the two no more than DBV_MAX_RATIO apart. Fills
 * *shape. The one row check of import and merge. */
typedef struct {
    dbv_model model;
    long long m, n, k;
    const char *layout;
    dbv_kernel kernel;
    double median_ms, spread_pct, cublas_ms; /* spread_pct, cublas_ms: NAN when absent */
    long long batch;                         /* the products of one call; 0 (left out) reads as 1 */
} dbv_winner;
int dbv_winner_check(const dbv_winner *w, gt_shape *shape, char *err, size_t errlen);
/* "(NVIDIA H200, 4096x4096x4096 nn)": w's GPU name (cleaned as by dbv_clean_copy) and shape, for the message
 * that names a row whatever its fields hold. Cannot fail. */
void dbv_winner_label(const dbv_winner *w, char *out, size_t n);

/* A stored trial of kernel k on shape s, on a GPU of limits lim: a known status, message absent or clean (newlines
 * allowed), created_at a timestamp, times absent or in [DBV_MIN_MS, DBV_MAX_MS] with min <= median <= max, an ok
 * trial's median present and possible on s and its kernel legal under lim, tflops absent or 0..DBV_MAX_TFLOPS,
 * rel_err absent or >= 0, regs 0..255, spill_bytes 0..2^31, compile_s 0..86400, reps 0..1e9 (each or absent). */
typedef struct {
    const char *status, *message, *created_at;
    double median_ms, min_ms, max_ms, tflops, rel_err, compile_s; /* NAN when absent */
    long long regs, spill_bytes, reps;                            /* DBV_ABSENT when absent */
} dbv_trial;
int dbv_trial_check(const dbv_trial *t, const gt_shape *s, const dbv_kernel *k, const gt_limits *lim, char *err,
                    size_t errlen);

#endif
