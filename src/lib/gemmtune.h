/* gemmtune runtime loader: FP32 GEMM through the kernel gemmtune tuned for this GPU and shape.
 * Plain C (C99/C++), no CUDA headers needed: streams are passed as void * (a cudaStream_t).
 * Implementation: src/lib/ (loader*.c, options.c); CPU tests in tests/test_loader.c and tests/test_abi.c, GPU tests
 * in tests/test_loader_gpu.c.
 *
 * Where winners come from (gemmtune_create): the SQLite database that `gemmtune tune` writes (options.db_path,
 * else $GEMMTUNE_DB, else $XDG_DATA_HOME/gemmtune/gemmtune.db, else ~/.local/share/gemmtune/gemmtune.db; an
 * absent default database is not an error: every call then takes the fallback), or an exported JSON file
 * (options.json_path), or a table compiled into the program (`gemmtune export --header`, then
 * gemmtune_create_from_table; with --with-cubin the embedded cubins are loaded directly, and neither NVRTC nor
 * SQLite is called).
 *
 * Selection, per call (the first rule that yields a kernel legal on this device and applicable to this call's
 * pointer alignment and leading dimensions wins; `gemmtune explain` prints it without running anything):
 *   1. exact    the winner stored for this GPU model (name + compute capability + SM count), shape and layout:
 *               our own kernel, or the vendor's (cublasSgemm or a cuBLASLt algorithm, replayed exactly; one this
 *               cuBLAS or GPU refuses falls back to cuBLAS's own choice, and explain says so). A sweep times cuBLAS's
 *               algorithms as candidates, so an exact winner is never slower than cuBLAS but by noise;
 *   2. reuse    the winner of a tuned shape of the same model and layout, only where the serving model
 *               (src/lib/serve.c) predicts it beats cuBLAS here by the margin: its measured ratio to cuBLAS there,
 *               corrected for wave and tile quantization on this GPU's SMs, decaying with the log distance
 *                   d = |log2(m/m')| + |log2(n/n')| + |log2(k/k')|;
 *   3. cublas   cuBLAS's own SGEMM, FP32 pedantic (never TF32) - the default fallback (GEMMTUNE_FALLBACK_ENV with
 *               $GEMMTUNE_FALLBACK unset), so an untuned shape runs as fast as cuBLAS;
 *   4. default  the built-in kernel, correct for every call (tile2d BM=64,BN=64,BK=8,TM=8,TN=8): with
 *               GEMMTUNE_FALLBACK_DEFAULT, or when cuBLAS is not linked in; GEMMTUNE_FALLBACK_NONE makes the call
 *               fail with GEMMTUNE_STATUS_NO_KERNEL instead.
 * k = 0 computes C = beta * C (through cuBLAS); m = 0 or n = 0 does nothing.
 *
 * Recording: with options.record_path or $GEMMTUNE_RECORD set, gemmtune_destroy adds every distinct call shape that
 * had no exact winner, with its call count, to that file (merged under a lock with what it holds): then
 * `gemmtune tune --sizes @FILE` tunes what the program actually called.
 *
 * Cost: the first call of a (shape, layout, leading dimensions, alignment) selects, then loads the kernel once
 * per handle (embedded cubin, else the database's cubin cache shared with the tuner, else NVRTC, whose cubin then
 * goes into that cache). Later calls are a lock-free lookup plus the launch: no allocation, no synchronisation,
 * so they may be captured in a CUDA graph. The first call of a shape must not be inside stream capture
 * (it returns GEMMTUNE_STATUS_NOT_PREPARED there); make one ordinary call first.
 *
 * Threads and streams: one handle may be used from several host threads and streams at once. Split-K kernels
 * need a workspace: each (handle, stream) pair gets its own, allocated on that stream's first split-K call
 * (never inside capture) and kept until gemmtune_destroy, so concurrent streams never share one. The
 * per-thread default stream (cudaStreamPerThread) gets one per host thread.
 *
 * ABI: libgemmtune.so.0 exports gemmtune_* alone, with symbol versions (src/lib/libgemmtune.map). gemmtune_options
 * begins with its size, so it can grow: members past the size a caller was built with take their defaults. A
 * program built against a header before 0.3 (whose options had no size) binds to the GEMMTUNE_0.2 versions of
 * gemmtune_options_init, gemmtune_create and gemmtune_create_from_table, which read that older layout and serve it
 * FP32 only; one built against this header binds to GEMMTUNE_0.3's, and refuses to start on an older library. */
#ifndef GEMMTUNE_H
#define GEMMTUNE_H

#ifdef __cplusplus
extern "C" {
#endif

/* The version, here alone: the Makefile reads it (libgemmtune.so.MAJOR.MINOR.PATCH, gemmtune --version). */
#define GEMMTUNE_VERSION_MAJOR 0
#define GEMMTUNE_VERSION_MINOR 3
#define GEMMTUNE_VERSION_PATCH 0

typedef enum {
    GEMMTUNE_SUCCESS = 0,
    GEMMTUNE_STATUS_INVALID_VALUE = 1,  /* NULL handle/pointer, negative size, leading dimension too small */
    GEMMTUNE_STATUS_DB_ERROR = 2,       /* database missing (when named), unreadable, or not a gemmtune db */
    GEMMTUNE_STATUS_JSON_ERROR = 3,     /* exported JSON missing, malformed or of another schema */
    GEMMTUNE_STATUS_TABLE_ERROR = 4,    /* a compiled-in table row names an unknown family, layout or params */
    GEMMTUNE_STATUS_NO_DEVICE = 5,      /* no CUDA driver/device, or the device ordinal does not exist */
    GEMMTUNE_STATUS_WRONG_DEVICE = 6,   /* the calling thread's current device is not the handle's */
    GEMMTUNE_STATUS_NO_KERNEL = 7,      /* no tuned kernel applies and the fallback is GEMMTUNE_FALLBACK_NONE */
    GEMMTUNE_STATUS_COMPILE_ERROR = 8,  /* NVRTC failed, or is not linked in (static table-only build) */
    GEMMTUNE_STATUS_CUDA_ERROR = 9,     /* module load, workspace allocation or kernel launch failed */
    GEMMTUNE_STATUS_CUBLAS_ERROR = 10,  /* the cuBLAS fallback failed */
    GEMMTUNE_STATUS_NOT_PREPARED = 11,  /* first call of this shape inside stream capture: call once before */
    GEMMTUNE_STATUS_ALLOC_FAILED = 12   /* host memory */
} gemmtune_status;

typedef enum {
    GEMMTUNE_OP_N = 0, /* operand as stored */
    GEMMTUNE_OP_T = 1  /* operand transposed */
} gemmtune_op;

typedef enum {
    GEMMTUNE_FALLBACK_ENV = 0,     /* $GEMMTUNE_FALLBACK ("cublas", "default", "none"), else CUBLAS */
    GEMMTUNE_FALLBACK_DEFAULT = 1, /* the built-in kernel, correct for every call */
    GEMMTUNE_FALLBACK_CUBLAS = 2,  /* cuBLAS's own SGEMM (FP32 pedantic, no TF32); the built-in kernel without cuBLAS */
    GEMMTUNE_FALLBACK_NONE = 3     /* GEMMTUNE_STATUS_NO_KERNEL */
} gemmtune_fallback;

/* The arithmetic a handle may be served. FP32 is the default; TF32X3 adds the tuned winners of the FP32-accurate
 * families (each operand split into two TF32 parts, three tensor-core products summed in FP32; or, family ozaki,
 * exact INT8 tensor-core products of residues: each validated against FP64 to be no less accurate than cuBLAS FP32
 * on the same inputs) wherever they beat the FP32 winner. A class newer than
 * this header is asked for by name: GEMMTUNE_MATH_ENV with $GEMMTUNE_MATH (`gemmtune tune --help` lists them). */
typedef enum {
    GEMMTUNE_MATH_ENV = 0,   /* $GEMMTUNE_MATH (a class's name: "fp32", "tf32x3"), else FP32 */
    GEMMTUNE_MATH_FP32 = 1,  /* IEEE FP32 products and sums only, as cuBLAS SGEMM pedantic */
    GEMMTUNE_MATH_TF32X3 = 2 /* FP32 or tf32x3 winners, whichever is faster on the shape */
} gemmtune_math;

/* Fill with gemmtune_options_init, then set what differs. */
typedef struct gemmtune_options {
    unsigned long size;         /* sizeof(gemmtune_options) where the caller was built, set by gemmtune_options_init;
                                   stays first. 0 (a struct not initialised) fails gemmtune_create */
    const char *db_path;        /* NULL: $GEMMTUNE_DB or the default path (see above) */
    const char *json_path;      /* non-NULL: winners from this exported JSON, not from the database */
    int column_major;           /* 1: gemmtune_sgemm takes cuBLAS's column-major arguments */
    gemmtune_fallback fallback;
    int device;                 /* CUDA device ordinal; -1: the current device (gemmtune_options_init) */
    const char *arch;           /* NVRTC target and embedded-cubin match, e.g. "sm_90"; NULL: the device's */
    const char *record_path;    /* non-NULL: record untuned call shapes here at gemmtune_destroy; NULL: $GEMMTUNE_RECORD */
    gemmtune_math math;         /* which math classes may be served (0.3) */
    /* New members go here, last, each with its default 0 or set by gemmtune_options_init. */
} gemmtune_options;

#ifndef GEMMTUNE_WINNER_ROW_DEFINED_0_3 /* 0.3 added batch: a table exported before cannot meet this header */
#define GEMMTUNE_WINNER_ROW_DEFINED_0_3
typedef struct gemmtune_winner_row {
    const char *gpu_name; int cc_major, cc_minor, sm_count;
    int m, n, k; const char *layout;          /* "nn", "nt", "tn", "tt" */
    const char *family, *params;              /* "tile2d", "BM=128,BN=128,..." */
    double tflops, ratio_vs_cublas;
    const unsigned char *cubin; unsigned long cubin_size; const char *cubin_arch; /* NULL, 0, NULL unless --with-cubin */
    int batch;                                /* products per call (a strided batch); 0 or 1: one GEMM */
} gemmtune_winner_row;
#endif

typedef struct gemmtune_context *gemmtune_handle;

/* Defaults: size = sizeof(gemmtune_options), everything else NULL/0 except device = -1 (the current device). Cannot
 * fail. */
void gemmtune_options_init(gemmtune_options *opt);

/* Read the winners (database or JSON, see above) and bind the handle to the device. opt NULL: defaults; opt->size
 * 0 (not initialised) or from a newer header with members set that this library does not know:
 * GEMMTUNE_STATUS_INVALID_VALUE. On failure *handle is NULL and gemmtune_last_error() says why. */
gemmtune_status gemmtune_create(gemmtune_handle *handle, const gemmtune_options *opt);

/* As gemmtune_create, with winners from a table compiled into the program (copied: rows may be freed after;
 * embedded cubins are referenced, not copied, so they must outlive the handle - static data does). Never opens
 * a database; opt->db_path and opt->json_path are ignored. */
gemmtune_status gemmtune_create_from_table(gemmtune_handle *handle, const gemmtune_winner_row *rows, int nrows,
                                           const gemmtune_options *opt);

/* Frees everything of the handle (kernels, workspaces). Waits for nothing: the caller makes sure no work using
 * the handle's workspaces is still in flight. NULL is fine. */
void gemmtune_destroy(gemmtune_handle handle);

/* C = alpha * op(A) * op(B) + beta * C, op(A) m x k, op(B) k x n, C m x n.
 * Row-major (default): lda >= (transa ? m : k), ldb >= (transb ? k : n), ldc >= n.
 * Column-major handle (options.column_major): exactly cublasSgemm's arguments, lda >= (transa ? k : m),
 * ldb >= (transb ? n : k), ldc >= m. stream is a cudaStream_t (NULL: the legacy default stream).
 * m == 0 or n == 0 does nothing; k == 0 sets C = beta * C. beta == 0 never reads C. Asynchronous like cuBLAS: launch
 * errors are reported, faults show up at the next synchronisation. */
gemmtune_status gemmtune_sgemm(gemmtune_handle handle, void *stream, gemmtune_op transa, gemmtune_op transb, int m,
                               int n, int k, float alpha, const float *A, int lda, const float *B, int ldb,
                               float beta, float *C, int ldc);

/* batch independent products C_i = alpha * op(A_i) * op(B_i) + beta * C_i in one call, as cublasSgemmStridedBatched:
 * A_i starts stride_a floats after A_{i-1} (likewise B and C; strides >= 0, 0 shares one matrix), and every other
 * argument means what it means for gemmtune_sgemm (row-major or column-major as the handle says). A batch is served
 * by the winner tuned for its shape and batch count, in one launch over the batch (`gemmtune tune --sizes
 * 64x512x512x128` tunes 64 products of 512x512x128), else by cuBLAS's strided-batched SGEMM. batch == 0 does
 * nothing; batch == 1 is gemmtune_sgemm. Strides are long (64 bits on the Linux targets this library builds for)
 * so the header stays C89. */
gemmtune_status gemmtune_sgemm_strided_batched(gemmtune_handle handle, void *stream, gemmtune_op transa,
                                               gemmtune_op transb, int m, int n, int k, float alpha, const float *A,
                                               int lda, long stride_a, const float *B, int ldb, long stride_b,
                                               float beta, float *C, int ldc, long stride_c, int batch);

/* 1 when gemmtune_sgemm with these arguments (no alpha, beta: they do not choose) runs one of gemmtune's own kernels
 * (of its own families, also one that runs a step in a library: ozaki's INT8 products in cuBLASLt), 0 when it runs
 * cuBLAS (cuBLAS's own choice, or a cuBLAS or cuBLASLt algorithm stored as the winner) or nothing (fallback none),
 * -1 for arguments gemmtune_sgemm refuses, k == 0, or a first call inside stream capture. It makes the call's plan
 * as gemmtune_sgemm would, so it costs what a call's lookup does after the first; a 0 counts the call for the
 * recorder as gemmtune_sgemm would (the caller then runs it itself: do not call gemmtune_sgemm for it too). For a
 * caller that can run cuBLAS more cheaply itself: the drop-in keeps a cuBLASLt call that fuses a bias
 * with cuBLASLt when gemmtune would only run cuBLAS plus a pass of its own for the bias. */
int gemmtune_runs_own_kernel(gemmtune_handle handle, void *stream, gemmtune_op transa, gemmtune_op transb, int m,
                             int n, int k, const float *A, int lda, const float *B, int ldb, const float *C, int ldc);

/* The stored times a call with these arguments stands on, in milliseconds on this GPU model: *kernel_ms, the median
 * of the winner stored for its shape and layout, and *cublas_ms, cuBLAS's on that shape in the same sweep (both on a
 * cold L2, as the tuner times; a table's row gives them by its TFLOPS and ratio). Returns 1 with both set when
 * gemmtune_sgemm would run exactly that winner (one of gemmtune's kernels or a stored cuBLAS algorithm); 0, both
 * untouched, when no stored time is this call's (it runs a tuned neighbour's winner, cuBLAS's own choice, or
 * nothing); -1 as gemmtune_runs_own_kernel. Makes the call's plan as gemmtune_sgemm would; counts nothing for the
 * recorder. For a caller that adds work of its own around the call and must know whether the kernel still pays for
 * it: the drop-in's pass over D for a cuBLASLt bias. */
int gemmtune_kernel_times(gemmtune_handle handle, void *stream, gemmtune_op transa, gemmtune_op transb, int m, int n,
                          int k, const float *A, int lda, const float *B, int ldb, const float *C, int ldc,
                          double *kernel_ms, double *cublas_ms);

/* Which rule and kernel a call with these arguments would use, as one line into buf (no kernel is loaded).
 * Pointer alignment is taken as 16 bytes. Returns GEMMTUNE_SUCCESS or the status the call would fail with. */
gemmtune_status gemmtune_explain(gemmtune_handle handle, gemmtune_op transa, gemmtune_op transb, int m, int n, int k,
                                 int lda, int ldb, int ldc, char *buf, unsigned long buflen);

/* gemmtune_explain for a strided batch of batch products (gemmtune_sgemm_strided_batched's call; strides taken as
 * the matrices' footprints, every pointer 16-byte aligned). */
gemmtune_status gemmtune_explain_strided_batched(gemmtune_handle handle, gemmtune_op transa, gemmtune_op transb,
                                                 int m, int n, int k, int lda, int ldb, int ldc, int batch, char *buf,
                                                 unsigned long buflen);

/* Static text of a status ("GEMMTUNE_STATUS_DB_ERROR: database missing or unreadable"). Never NULL. */
const char *gemmtune_status_string(gemmtune_status status);

/* Detail of the last failure in the calling thread (file names, CUDA/NVRTC messages); "" when none. */
const char *gemmtune_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
