/* Internals of libgemmtune_cublas.so, the preloadable drop-in that serves a program's cuBLAS SGEMMs through
 * gemmtune (docs/PRELOAD.md). config.c (the environment), decide.c and lt_decide.c (may a call be served?) and
 * log.c (one line per new call) need no CUDA, so the CPU tests link them (tests/test_preload*.c); handles.c (a
 * gemmtune handle per device and thread), interpose.c (the exported cuBLAS entry points) and lt.c
 * (cublasLtMatmul) are only in the preload library. */
#ifndef GT_PRELOAD_H
#define GT_PRELOAD_H

#include "gemmtune.h"

#include <cublas_api.h> /* types only (cublasStatus_t, cudaStream_t): the pure files link no CUDA */

#include <stddef.h>
#include <stdint.h>

/* ---- config.c: the environment, read once when the library is loaded ---- */

typedef enum { GT_PL_LOG_NONE, GT_PL_LOG_STDERR, GT_PL_LOG_FILE } gt_pl_log_kind;

/* The largest strided batch served (GEMMTUNE_PRELOAD_BATCH; 0 forwards every batched call): a batch is served in
 * one launch over its matrices, so by default every size is. */
enum { GT_PL_DEFAULT_MAX_BATCH = 2147483647 };

typedef struct {
    int enabled;            /* 0: GEMMTUNE_PRELOAD=off, every call goes to cuBLAS untouched */
    gt_pl_log_kind log;     /* GEMMTUNE_PRELOAD_LOG: unset/0/off, 1/on/stderr, or a file path */
    char log_path[1024];
    char summary_path[1024]; /* GEMMTUNE_PRELOAD_SUMMARY: at exit, the calls by entry point and outcome ("" none) */
    char json_path[1024];   /* GEMMTUNE_JSON: winners from this exported JSON file instead of the database */
    int fallback_from_env;  /* GEMMTUNE_FALLBACK is set: the loader's fallback applies; else none (cuBLAS) */
    int max_batch;          /* GEMMTUNE_PRELOAD_BATCH */
    const char *numerics;   /* name of a set variable that changes cuBLAS's FP32 numerics (TF32, emulation) */
    char warning[512];      /* what was wrong with a value; "" when nothing */
} gt_pl_config;

typedef const char *(*gt_pl_getenv_fn)(const char *name);

/* Fill cfg from the environment as read by get (getenv in the library, a table in tests). Cannot fail: a bad
 * value leaves a safe setting (a bad GEMMTUNE_PRELOAD means pass-through) and a message in cfg->warning. */
void gt_pl_config_parse(gt_pl_getenv_fn get, gt_pl_config *cfg);

/* What the check of the winners' source at load found. */
typedef enum {
    GT_PL_SOURCE_READ, /* the loader reads it (or the default database, when there is one) */
    GT_PL_SOURCE_NONE  /* no winners: GEMMTUNE_DB names no file yet, or the source is not a regular file */
} gt_pl_source_state;

/* Check the winners' source (GEMMTUNE_JSON, else db_env = GEMMTUNE_DB; the default database is the loader's)
 * with stat alone, so that nothing is ever opened that could block (a FIFO) or never end (/dev/zero). For
 * GT_PL_SOURCE_NONE, note says why, as a line for stderr ("no database at X yet: ..."). */
gt_pl_source_state gt_pl_source_check(const gt_pl_config *cfg, const char *db_env, char *note, size_t n);

/* Whether the record file (GEMMTUNE_RECORD) may be written: 0 when it is a regular file or does not exist yet (the
 * recorder makes it); -1, with a line in note, when it is something else (a FIFO would block the program at exit,
 * in the recorder's read). stat only. */
int gt_pl_record_check(const char *path, char *note, size_t n);

/* ---- decide.c: whether gemmtune may serve a call, from its arguments and the handle's modes alone ---- */

typedef enum { GT_PL_SGEMM, GT_PL_GEMMEX, GT_PL_STRIDED, GT_PL_LT, GT_PL_NAPI } gt_pl_api;

/* "cublasSgemm_v2", ... : the entry point's name. Never NULL. */
const char *gt_pl_api_name(gt_pl_api api);

/* Why a call went to cuBLAS, or GT_PL_SERVE. */
typedef enum {
    GT_PL_SERVE = 0,
    GT_PL_OFF,             /* GEMMTUNE_PRELOAD=off */
    GT_PL_INVALID,         /* an argument cuBLAS rejects: it reports its own status */
    GT_PL_EMPTY,           /* m, n or batchCount is 0: nothing to launch */
    GT_PL_K_ZERO,          /* k == 0: C = beta C, cuBLAS's business */
    GT_PL_ENV_NUMERICS,    /* NVIDIA_TF32_OVERRIDE or CUBLAS_EMULATE_SINGLE_PRECISION is set */
    GT_PL_TYPES,           /* cublasGemmEx on other than FP32 A, B and C */
    GT_PL_COMPUTE,         /* cublasGemmEx compute type other than 32F, 32F_PEDANTIC or legacy CUDA_R_32F */
    GT_PL_ALGO,            /* cublasGemmEx naming an algorithm cuBLAS honours (see decide.c) */
    GT_PL_DEVICE_POINTERS, /* CUBLAS_POINTER_MODE_DEVICE: alpha and beta live on the GPU */
    GT_PL_MATH_MODE,       /* the handle allows TF32, half or emulated math */
    GT_PL_ALPHA_ZERO,      /* alpha == 0: BLAS reads neither A nor B */
    GT_PL_BATCH,           /* more than max_batch matrices (GEMMTUNE_PRELOAD_BATCH) */
    GT_PL_HANDLE,          /* the handle's getters failed: cuBLAS judges the handle */
    GT_PL_NO_DEVICE,       /* no current CUDA device, or an ordinal past GT_PL_MAX_DEVICES */
    GT_PL_CREATE,          /* gemmtune_create failed for this device and thread */
    GT_PL_CAPTURE,         /* first call of the thread inside stream capture: no handle is made there */
    GT_PL_UNTUNED,         /* no tuned kernel applies (and the fallback is none): the shape stays cuBLAS's */
    GT_PL_GEMMTUNE,        /* gemmtune_sgemm returned another error (a launch failed, out of memory, ...) */
    GT_PL_EXITING,         /* the process is exiting and the handles are gone */
    GT_PL_LT_TYPES,        /* cublasLtMatmul: a matrix, scale or bias type other than CUDA_R_32F */
    GT_PL_LT_COMPUTE,      /* cublasLtMatmul compute type other than CUBLAS_COMPUTE_32F or _32F_PEDANTIC */
    GT_PL_LT_EPILOGUE,     /* an epilogue other than DEFAULT or BIAS (activation, aux output, bias gradient) */
    GT_PL_LT_BIAS_BETA,    /* BIAS epilogue with beta != 0: gemmtune adds the bias through D, so C must be unread */
    GT_PL_LT_ORDER,        /* a matrix layout other than CUBLASLT_ORDER_COL */
    GT_PL_LT_BATCH,        /* a batch count above 1: batched cuBLASLt calls are not served yet */
    GT_PL_LT_ATTRIBUTE,    /* a descriptor or layout attribute is set that gemmtune does not serve (detail: which) */
    GT_PL_LT_RANGE,        /* a size or leading dimension beyond int (gemmtune_sgemm's arguments) */
    GT_PL_LT_PREPARE,      /* writing the bias or C into D failed (compile, load or launch) */
    GT_PL_LT_FUSED,        /* gemmtune would run cuBLAS for it: cuBLASLt's own call, bias or C fused, is cheaper */
    GT_PL_LT_PASS,         /* gemmtune's kernel plus the pass over D for the bias or C would not beat cuBLASLt's
                              fused call, by the times stored for the shape */
    GT_PL_DEVICE_CHANGED,  /* internal: the thread's current device is not its last one (asked again, retried) */
    GT_PL_NREASONS
} gt_pl_reason;

/* One call as the program made it (cuBLAS's column-major argument order). */
typedef struct {
    gt_pl_api api;
    int transa, transb;          /* cublasOperation_t values */
    int m, n, k, lda, ldb, ldc;
    const void *alpha, *beta;    /* host or device pointers, as passed */
    int atype, btype, ctype;     /* cublasGemmEx data types (cudaDataType); else CUDA_R_32F */
    int compute, algo;           /* cublasGemmEx compute type and algorithm; else CUBLAS_COMPUTE_32F, default;
                                  * cublasLtMatmul: its compute type and epilogue (cublasLtEpilogue_t) */
    int batch;                   /* cublasSgemmStridedBatched batchCount; else 1 */
} gt_pl_call;

/* The handle's state that decides the semantics, read through the real cuBLAS's getters, and the GPU's. */
typedef struct {
    int pointer_mode; /* cublasPointerMode_t */
    int math_mode;    /* cublasMath_t */
    int algo_ignored; /* 1: the current GPU is sm_80 or newer, where cuBLAS ignores cublasGemmAlgo_t */
} gt_pl_modes;

/* GT_PL_SERVE when gemmtune computes exactly what cuBLAS would (FP32, host scalars, valid arguments), else the
 * first reason to forward. Reads *alpha only in host pointer mode, after the arguments proved valid. Pure. */
gt_pl_reason gt_pl_classify(const gt_pl_call *c, const gt_pl_modes *modes, const gt_pl_config *cfg);

/* Static text of a reason ("device pointer mode (alpha and beta on the GPU)"). Never NULL. */
const char *gt_pl_reason_text(gt_pl_reason r);

/* cuBLAS operation to gemmtune's: N stays N; T and C (conjugate-transpose of real data) are T. */
gemmtune_op gt_pl_op(int cublas_op);

/* ---- log.c: which calls were served, one line per new call signature and outcome ---- */

enum { GT_PL_SEEN_SLOTS = 4096 };

/* A lock-free set of 64-bit keys (0 is never stored). Zero-initialised is empty. */
typedef struct {
    _Atomic uint64_t slot[GT_PL_SEEN_SLOTS];
    _Atomic int full;
} gt_pl_seen;

/* Open the log file at path for appending, never blocking: a FIFO, socket, directory or block device is refused.
 * The descriptor, or -1 with why ("is not a regular file or a terminal", "cannot be opened (<errno text>)"). */
int gt_pl_log_open(const char *path, char *why, size_t n);

/* The key of a call signature with its outcome (any 64-bit hash, never 0). */
uint64_t gt_pl_key(const gt_pl_call *c, int outcome);

/* 1 when key was not in the set and is now, 0 when it was (or the set is full: then once -1). Lock-free. */
int gt_pl_seen_insert(gt_pl_seen *s, uint64_t key);

/* "gemmtune: 1000x1000x1000 nn served by exact: ... [cublasSgemm_v2 lda=1000 ldb=1000 ldc=1000]\n" into buf;
 * verdict is "served by <explain>" or "forwarded to cuBLAS: <reason>". Returns the length (truncated to n-1). */
size_t gt_pl_format(char *buf, size_t n, const gt_pl_call *c, const char *verdict);

/* ---- handles.c: one gemmtune handle per (device, thread); CUDA, only in the preload library ---- */

enum { GT_PL_MAX_DEVICES = 64 }; /* device ordinals at or past this are forwarded */

typedef struct gt_pl_thread gt_pl_thread;

/* The calling thread's state, made on its first call (NULL when out of memory or the process is exiting). Its
 * handles are released when the thread exits (pthread key destructor) or at process exit, whichever is first. */
gt_pl_thread *gt_pl_thread_get(void);

/* Bracket the use of the thread's handles. gt_pl_enter returns 0 when they were released (process exit): the
 * call is then forwarded. Lock-free: an uncontended compare-and-swap on the thread's own state. */
int gt_pl_enter(gt_pl_thread *t);
void gt_pl_leave(gt_pl_thread *t);

/* How the process's handles are made: with opt (column-major, the winners' source, the fallback), or, when
 * no_winners (the source checked unreadable at load), from an empty winner table with the same options, so that
 * untuned calls still reach the loader, which forwards them (fallback none) and records them. say writes one
 * line where the user looks (stderr, and the log). */
typedef struct {
    gemmtune_options opt;
    int no_winners;
    void (*say)(const char *line);
} gt_pl_maker;

/* The thread's handle for device dev (current), made by mk on first use. A source whose winners cannot be read
 * (GEMMTUNE_STATUS_DB_ERROR or _JSON_ERROR) is said once per process, and every handle is then made without
 * winners. NULL when no handle can be had: *why is GT_PL_CREATE (detail in msg; said once too) or GT_PL_CAPTURE
 * (stream is capturing: nothing is created there). Between gt_pl_enter and gt_pl_leave. */
gemmtune_handle gt_pl_handle(gt_pl_thread *t, int dev, void *stream, const gt_pl_maker *mk, gt_pl_reason *why,
                             char *msg, size_t msglen);

/* The device of the thread's last call through its handles (-1 before the first): the interposer tries its handle
 * first, and asks CUDA only when the loader says the current device is another. */
int gt_pl_device(const gt_pl_thread *t);
void gt_pl_set_device(gt_pl_thread *t, int dev);

/* How cublasLtMatmul's descriptors were read (lt.c): GT_PL_LT_REPEAT calls were the thread's last call again; of
 * the other calls' descriptors and layouts, GT_PL_LT_TABLE were found in the thread's table, GT_PL_LT_GETTERS read
 * through cuBLASLt's getters. */
enum { GT_PL_LT_REPEAT, GT_PL_LT_TABLE, GT_PL_LT_GETTERS, GT_PL_LT_NREADS };

/* The calls by entry point and outcome (GT_PL_SERVE: served; any other reason: forwarded for it), and how
 * cublasLtMatmul's descriptors were read. */
typedef struct {
    unsigned long long n[GT_PL_NAPI][GT_PL_NREASONS];
    unsigned long long lt_reads[GT_PL_LT_NREADS];
} gt_pl_counts;

/* Count one call of the thread; gt_pl_totals sums every thread, living or gone. */
void gt_pl_count(gt_pl_thread *t, gt_pl_api api, gt_pl_reason r);
void gt_pl_totals(gt_pl_counts *out);

/* The summary file's lines (`gemmtune exec` reads them): per entry point and outcome with calls, one line
 * "gemmtune-summary<TAB>pid<TAB>api<TAB>served|forwarded<TAB>reason text<TAB>calls\n", into buf. Returns the length
 * (truncated to n - 1). Pure. */
size_t gt_pl_summary_format(const gt_pl_counts *c, int pid, char *buf, size_t n);

/* The re-entrancy depth of the calling thread: above 0 while it runs gemmtune or the real cuBLAS on behalf of an
 * intercepted call, so that a cuBLAS call made from in there reaches the real cuBLAS, never gemmtune again. */
/* initial-exec: a preloaded or linked library has static TLS, and this is read on every call. */
extern _Thread_local int gt_pl_depth __attribute__((tls_model("initial-exec")));

/* ---- lt_decide.c: whether gemmtune may serve a cublasLtMatmul call; no CUDA, like decide.c ---- */

/* A matrix layout as lt.c reads it through the real cuBLASLt's getters. `attr`: the first attribute outside the
 * fields (and outside those gt_pl_lt_layout_role ignores) whose value differs from a fresh layout's, else -1. */
typedef struct {
    int ok;                 /* every field's getter answered (0 for a NULL or broken layout) */
    int type, order, batch; /* cudaDataType, cublasLtOrder_t, batch count */
    uint64_t rows, cols;
    int64_t ld;
    int attr;
} gt_pl_lt_layout;

/* The matmul descriptor, likewise (attr against a fresh descriptor of the same compute type). */
typedef struct {
    int ok;
    int compute, scale_type, pointer_mode, transa, transb;
    uint32_t epilogue;      /* cublasLtEpilogue_t */
    const void *bias;       /* read only for a BIAS epilogue */
    int bias_type;          /* -1 (D's type) by default, or absent from an older cuBLASLt */
    int attr;
} gt_pl_lt_desc;

/* What a thread read of descriptors before, by their bytes (lt.c): a set-associative table of each kind, four
 * ways a set, the victim of a full set in turn. A key is the bytes of a cublasLtMatmulDescOpaque_t (32 words) or
 * of a cublasLtMatrixLayoutOpaque_t (the first 8). 128 descriptors: a model's Linear layers each have their own
 * (their bias pointers differ), and a set of four rarely overflows below a hundred. */
enum { GT_PL_LT_WAYS = 4, GT_PL_LT_DESC_SETS = 32, GT_PL_LT_LAYOUT_SETS = 16 };

/* What was read of one object: a descriptor's fields or a layout's. */
typedef union {
    gt_pl_lt_desc desc;
    gt_pl_lt_layout layout;
} gt_pl_lt_read;

typedef struct {
    int used;
    uint64_t key[32];
    gt_pl_lt_read v;
} gt_pl_lt_memo_entry;

/* One cublasLtMatmul call: D = alpha op(A) op(B) + beta C (+ bias broadcast across columns), column-major. */
typedef struct {
    int handle;             /* the cuBLASLt handle is not NULL */
    gt_pl_lt_desc desc;
    gt_pl_lt_layout a, b, c, d;
    const void *alpha, *beta, *C, *D;
} gt_pl_lt_call;

/* How a servable call runs on D: first D = C (C another matrix and beta != 0) or D = the bias in every column
 * (BIAS epilogue, beta == 0), then gemmtune_sgemm(alpha, beta) into D. */
typedef struct {
    gt_pl_call call;        /* api GT_PL_LT: m, n, k, transposes, lda, ldb, ldc = D's, for serving and the log */
    float alpha, beta;      /* what gemmtune_sgemm gets (beta 1 after the bias) */
    int copy_c, ldc_src;    /* copy C, of leading dimension ldc_src, into D first */
    int bias;               /* broadcast the bias into D first */
    int scalars;            /* 1 once *alpha and *beta were read (their bits below): the verdict depends on them */
    uint32_t alpha_bits, beta_bits;
    char detail[160];       /* for the log: the type, attribute or layout that sent the call to cuBLASLt */
} gt_pl_lt_plan;

/* The thread's last call: its descriptor and four layouts (A, B, C, D) by address, their state words (masked, as
 * the table keys them), what was read of them, and its verdict (lt.c). A call on the same objects with the same
 * state takes what was read from here for a compare of those words, without the table's hashing; and with the
 * same handle's presence, alpha and beta pointers, C and D, and the same scalar values where the verdict read them
 * (plan.scalars), the verdict too: a program that keeps its descriptors and calls one GEMM in a loop. */
typedef struct {
    int valid, classified;
    const void *obj[5];
    uint64_t desc_words[32], layout_words[4][8];
    gt_pl_lt_desc desc;
    gt_pl_lt_layout layout[4];
    int handle;
    const void *alpha, *beta, *C, *D;
    gt_pl_reason reason;
    gt_pl_lt_plan plan;
} gt_pl_lt_last;

typedef struct {
    gt_pl_lt_memo_entry desc[GT_PL_LT_DESC_SETS][GT_PL_LT_WAYS], layout[GT_PL_LT_LAYOUT_SETS][GT_PL_LT_WAYS];
    unsigned char victim_desc[GT_PL_LT_DESC_SETS], victim_layout[GT_PL_LT_LAYOUT_SETS];
    gt_pl_lt_last last;
    _Atomic unsigned long long reads[GT_PL_LT_NREADS]; /* written by the owning thread only, summed at exit */
} gt_pl_lt_memo;

/* The calling thread's table (handles.c keeps it with the thread's state); NULL for t NULL. */
gt_pl_lt_memo *gt_pl_thread_memo(gt_pl_thread *t);

/* GT_PL_SERVE, with plan filled, when gemmtune computes exactly what cuBLASLt would; else the first reason to
 * forward (plan->call and plan->detail still filled as far as known, for the log). Reads *alpha and *beta only
 * once the descriptor proved them host FP32. Pure. */
gt_pl_reason gt_pl_lt_classify(const gt_pl_lt_call *lt, const gt_pl_config *cfg, gt_pl_lt_plan *plan);

/* The GPU milliseconds a served cuBLASLt call costs beyond its kernel's stored time (which ran with beta 0): the pass
 * over D (the bias written into the m x n of D, or with copy_c C read and copied into D) and the kernel's read of D
 * back as beta C, at a bandwidth below any Hopper's (GT_PL_PASS_BYTES_PER_MS), plus the pass's launch
 * (GT_PL_PASS_LAUNCH_MS). Measured: a BERT step's bias passes ran at 1.5 TB/s on an H100, launches included, and
 * tf32x3wg's read of an 8192 x 3072 C at 3.2 TB/s on an H200 (docs/BENCHMARKS.md). Pure. */
#define GT_PL_PASS_BYTES_PER_MS 2.0e9 /* 2 TB/s */
#define GT_PL_PASS_LAUNCH_MS 0.003
double gt_pl_lt_pass_ms(int m, int n, int copy_c);
/* 1 when gemmtune's kernel, stored at kernel_ms where cuBLAS took cublas_ms on the shape, with pass_ms added still
 * beats cuBLASLt's fused call (which costs what cuBLAS does: the bias or C rides on its stores) by more than the
 * tuner's 2% margin; 0 otherwise, or when a time is not positive. Pure. */
int gt_pl_lt_pass_pays(double kernel_ms, double cublas_ms, double pass_ms);

/* What lt.c does with an attribute number: GT_PL_LT_FIELD (read into the structs above), GT_PL_LT_IGNORED (a
 * stride from one matrix of a batch to the next: every batch is forwarded anyway), GT_PL_LT_DEFAULT (any other,
 * known to this build or not: a served call must carry a fresh object's value). */
enum { GT_PL_LT_DEFAULT, GT_PL_LT_FIELD, GT_PL_LT_IGNORED };
int gt_pl_lt_desc_role(int attr);
int gt_pl_lt_layout_role(int attr);

/* "CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET", or "matmul attribute 40" for one this build does not know. */
void gt_pl_lt_attr_name(int layout, int attr, char *buf, size_t n);

/* ---- interpose.c, for lt.c: the library's state and the serving path every entry point shares ---- */

/* The environment as read when the library was loaded. */
const gt_pl_config *gt_pl_cfg(void);

/* One line (with its newline) into the log, when GEMMTUNE_PRELOAD_LOG is on; nothing otherwise. */
void gt_pl_log_line(const char *line);

/* What became of one intercepted call. */
typedef struct {
    gt_pl_reason reason;
    gt_pl_thread *t;           /* the calling thread's state (gt_pl_thread_get), NULL when none could be had */
    int fresh;                 /* the log's verdict on this (call, outcome): 1 new, 0 seen, -1 set full, 2 not asked */
    char detail[700];
    char explain[512];         /* what served it (gemmtune_explain), when fresh: taken while the handle is held */
} gt_pl_outcome;

/* Launch one intercepted call through handle h (made for device dev) on stream: GT_PL_SERVE, or why not, with
 * out->detail; GT_PL_DEVICE_CHANGED when nothing was launched because dev is not the current device. */
typedef gt_pl_reason (*gt_pl_launch_fn)(gemmtune_handle h, cudaStream_t stream, int dev, const void *ctx,
                                        gt_pl_outcome *out);

/* Serve c through the calling thread's handle with fn(ctx): the handle of the thread's last device first, the
 * current device's when that one's has moved; the log's explanation taken while the handle is held. out->t must
 * be set (gt_pl_thread_get). Returns GT_PL_SERVE or why the call must be forwarded. */
gt_pl_reason gt_pl_serve(const gt_pl_call *c, cudaStream_t stream, gt_pl_launch_fn fn, const void *ctx,
                         gt_pl_outcome *out);

/* The reason for a failed gemmtune call (detail in out when the log is on); clears a failed launch's CUDA error. */
gt_pl_reason gt_pl_failed(gemmtune_status st, gt_pl_outcome *out);

/* The end of every intercepted call that reached a decision: count it, log it when it is new ("forwarded to
 * cuBLASLt" for GT_PL_LT). status_name (optional) names a forwarded call's failing status. Returns st. */
typedef const char *(*gt_pl_status_name_fn)(cublasStatus_t);
cublasStatus_t gt_pl_finish(const gt_pl_call *c, const gt_pl_outcome *out, cublasStatus_t st,
                            gt_pl_status_name_fn status_name);

#endif
