/* The cuBLAS entry points libgemmtune_cublas.so exports (src/preload/exports.map): cublasSgemm_v2, cublasGemmEx
 * and cublasSgemmStridedBatched. A call that gemmtune can serve with cuBLAS's exact semantics (decide.c) runs
 * through the thread's gemmtune handle on the cuBLAS handle's stream; every other call, and every call
 * gemmtune fails, goes untouched to the real cuBLAS (dlsym RTLD_NEXT), whose status comes back unchanged.
 * Usage and environment: docs/PRELOAD.md. Tests: tests/test_preload.c (CPU), tests/preload/run_check.sh (GPU). */
#include "backend_resolve.h"
#include "preload.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GT_EXPORT __attribute__((visibility("default")))
#define GT_STR_(x) #x
#define GT_STR(x) GT_STR_(x)

/* The real cuBLAS's functions, each looked up on its own: an entry point forwards whenever its own real symbol
 * exists, whatever else this cuBLAS lacks (one without cublasGemmEx still gets every SGEMM). Typed after
 * cublas_api.h's own prototypes (REAL below), so a signature change cannot go unnoticed. */
enum { R_SGEMM, R_GEMM_EX, R_STRIDED, R_GET_STREAM, R_GET_POINTER_MODE, R_GET_MATH_MODE, R_STATUS_NAME, R_N };
static const char *const real_name[R_N] = {"cublasSgemm_v2",          "cublasGemmEx",
                                           "cublasSgemmStridedBatched", "cublasGetStream_v2",
                                           "cublasGetPointerMode_v2", "cublasGetMathMode",
                                           "cublasGetStatusName"};
static void *_Atomic real_fn[R_N];
static _Atomic int have_getters; /* 1 once the three getters serving needs are found */

static gt_pl_config cfg;
static gt_pl_maker maker; /* column-major handles (cuBLAS's argument order), the source and fallback from cfg */
static int log_fd = -1;
static gt_pl_seen seen;

static void log_text(const char *s, size_t n)
{
    if (log_fd >= 0 && n) (void)!write(log_fd, s, n); /* one write per line: lines of threads never interleave */
}

/* RTLD_NEXT finds the definition after this library: the program's cuBLAS. A cuBLAS loaded outside the global
 * scope (dlopen'ed with RTLD_LOCAL as a dependency of a Python extension, say) is found by its soname instead;
 * the entry points used here have the same signature in cuBLAS 11, 12 and 13. */
static void *find_real(const char *name)
{
    void *p = dlsym(RTLD_NEXT, name);
    static const char *const sonames[] = {"libcublas.so." GT_STR(CUBLAS_VER_MAJOR), "libcublas.so.12",
                                          "libcublas.so.11"};
    for (size_t i = 0; !p && i < sizeof sonames / sizeof sonames[0]; ++i) {
        void *lib = dlopen(sonames[i], RTLD_NOW | RTLD_NOLOAD);
        if (lib) p = dlsym(lib, name), dlclose(lib); /* NOLOAD took a reference; the library stays loaded */
    }
    return p;
}

/* The real function i: found once, then one atomic load. A missing one is looked up again on the next call, so a
 * cuBLAS the program dlopen()s later is still found (threads racing here store the same address). */
static void *real_slot(int i)
{
    void *p = atomic_load_explicit(&real_fn[i], memory_order_acquire);
    if (p) return p;
    if ((p = find_real(real_name[i]))) atomic_store_explicit(&real_fn[i], p, memory_order_release);
    return p;
}

#define REAL(i, fn) ((__typeof__(fn) *)real_slot(i))

/* The handle's getters, without which no call is judged (it is then forwarded). */
static int getters_found(void)
{
    if (atomic_load_explicit(&have_getters, memory_order_acquire)) return 1;
    if (!real_slot(R_GET_STREAM) || !real_slot(R_GET_POINTER_MODE) || !real_slot(R_GET_MATH_MODE)) return 0;
    atomic_store_explicit(&have_getters, 1, memory_order_release);
    return 1;
}

static const char *env(const char *name) { return getenv(name); }

static void open_log(void)
{
    char line[1400], why[200] = "";
    if (cfg.log == GT_PL_LOG_STDERR) log_fd = STDERR_FILENO;
    else if (cfg.log == GT_PL_LOG_FILE) log_fd = gt_pl_log_open(cfg.log_path, why, sizeof why);
    int n = 0;
    if (cfg.log == GT_PL_LOG_FILE && log_fd < 0) /* say so where the user will look */
        n = snprintf(line, sizeof line, "gemmtune: GEMMTUNE_PRELOAD_LOG=%s %s; not logging\n", cfg.log_path, why);
    if (cfg.warning[0]) n += snprintf(line + n, sizeof line - (size_t)n, "gemmtune: %s\n", cfg.warning);
    if (n > 0) (void)!write(STDERR_FILENO, line, (size_t)n);
}

static const char *source(void)
{
    if (maker.no_winners) return "nowhere (see above)";
    if (cfg.json_path[0]) return cfg.json_path;
    const char *db = getenv("GEMMTUNE_DB");
    return db && *db ? db : "the default database";
}

/* A line the user must see whether or not the log is on: stderr, and the log file too. */
static void say(const char *line)
{
    const size_t n = strlen(line);
    (void)!write(STDERR_FILENO, line, n);
    if (log_fd != STDERR_FILENO) log_text(line, n);
}

/* The winners' source and the record file, checked at load without opening them (config.c). */
static void check_files(void)
{
    char note[1200], line[1300];
    if (!cfg.enabled) return;
    if (gt_pl_source_check(&cfg, getenv("GEMMTUNE_DB"), note, sizeof note) != GT_PL_SOURCE_READ) {
        maker.no_winners = 1;
        snprintf(line, sizeof line, "gemmtune: %s\n", note);
        say(line);
    }
    if (gt_pl_record_check(getenv("GEMMTUNE_RECORD"), note, sizeof note)) {
        maker.opt.record_path = ""; /* not $GEMMTUNE_RECORD: nothing is recorded */
        snprintf(line, sizeof line, "gemmtune: %s\n", note);
        say(line);
    }
}

/* The library's start: the environment, the real cuBLAS, the log. No CUDA call is made here. */
__attribute__((constructor)) static void preload_init(void)
{
    gt_pl_config_parse(env, &cfg);
    for (int i = 0; i < R_N; ++i) (void)real_slot(i);
    (void)getters_found();
    gt_backend_cublas_resolver(find_real); /* vendor winners and the cuBLAS fallback call the real cuBLAS */
    gemmtune_options_init(&maker.opt);
    maker.opt.column_major = 1;
    maker.opt.json_path = cfg.json_path[0] ? cfg.json_path : NULL;
    maker.opt.fallback = cfg.fallback_from_env ? GEMMTUNE_FALLBACK_ENV : GEMMTUNE_FALLBACK_NONE;
    maker.say = say;
    open_log();
    check_files();
    char line[1400];
    int n;
    if (!cfg.enabled) n = snprintf(line, sizeof line, "gemmtune: pid %d: pass-through (GEMMTUNE_PRELOAD=off)\n",
                                   (int)getpid());
    else n = snprintf(line, sizeof line, "gemmtune: pid %d: serving FP32 GEMM, winners from %s%s\n", (int)getpid(),
                      source(), cfg.numerics ? "; FP32 numerics overridden by the environment, every call forwarded" : "");
    if (n > 0) log_text(line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* The summary file (GEMMTUNE_PRELOAD_SUMMARY, `gemmtune exec`): this process's lines appended in one write, so
 * processes sharing the file never interleave a line. Opened as the log is: never blocking, never a FIFO. */
static void write_summary(const gt_pl_counts *c)
{
    char why[200], buf[16384];
    if (!cfg.summary_path[0]) return;
    const int fd = gt_pl_log_open(cfg.summary_path, why, sizeof why);
    const size_t n = gt_pl_summary_format(c, (int)getpid(), buf, sizeof buf);
    if (fd >= 0 && n) (void)!write(fd, buf, n);
    if (fd >= 0) close(fd);
}

__attribute__((destructor)) static void preload_fini(void)
{
    if (log_fd < 0 && !cfg.summary_path[0]) return;
    gt_pl_counts c;
    unsigned long long s = 0, f = 0;
    gt_pl_totals(&c);
    write_summary(&c);
    for (int a = 0; a < GT_PL_NAPI; ++a)
        for (int r = 0; r < GT_PL_NREASONS; ++r) *(r == GT_PL_SERVE ? &s : &f) += c.n[a][r];
    char line[400];
    int n = snprintf(line, sizeof line, "gemmtune: pid %d: %llu calls served by gemmtune, %llu forwarded to cuBLAS\n",
                     (int)getpid(), s, f);
    if (n > 0) log_text(line, (size_t)n);
    const unsigned long long *r = c.lt_reads;
    if (!r[GT_PL_LT_REPEAT] && !r[GT_PL_LT_TABLE] && !r[GT_PL_LT_GETTERS]) return;
    n = snprintf(line, sizeof line, "gemmtune: pid %d: cublasLtMatmul: %llu calls repeated their thread's last call; "
                 "the others' descriptors and layouts: %llu found read before, %llu read through cuBLASLt's "
                 "getters\n", (int)getpid(), r[GT_PL_LT_REPEAT], r[GT_PL_LT_TABLE], r[GT_PL_LT_GETTERS]);
    if (n > 0) log_text(line, (size_t)n);
}

typedef gt_pl_outcome outcome;

/* The call and its operands, with the strides of a strided batch (0 for a single matrix). */
typedef struct {
    const gt_pl_call *c;
    cublasHandle_t handle;
    const float *A, *B;
    float *C;
    long long sa, sb, sc;
} operands;

/* Launch the call through gemmtune on the handle's stream, a strided batch as one call. A call with no tuned kernel
 * costs the loader's lock-free lookup of its plan, which says so (and counts the call for the recorder).
 * GT_PL_DEVICE_CHANGED: the handle is not the current device's (nothing was launched). */
static gt_pl_reason launch(gemmtune_handle h, cudaStream_t stream, int dev, const void *ctx, outcome *out)
{
    const operands *o = ctx;
    const gt_pl_call *c = o->c;
    gemmtune_status st = GEMMTUNE_SUCCESS;
    (void)dev; /* the loader checks the current device itself */
    const float alpha = *(const float *)c->alpha, beta = *(const float *)c->beta;
    const gemmtune_op ta = gt_pl_op(c->transa), tb = gt_pl_op(c->transb);
    ++gt_pl_depth;
    if (c->batch > 1) /* one launch over the batch (the winner tuned for this batch, or cuBLAS's batched call) */
        st = gemmtune_sgemm_strided_batched(h, (void *)stream, ta, tb, c->m, c->n, c->k, alpha, o->A, c->lda, o->sa,
                                            o->B, c->ldb, o->sb, beta, o->C, c->ldc, o->sc, c->batch);
    else st = gemmtune_sgemm(h, (void *)stream, ta, tb, c->m, c->n, c->k, alpha, o->A, c->lda, o->B, c->ldb, beta, o->C,
                             c->ldc);
    --gt_pl_depth;
    return st == GEMMTUNE_SUCCESS ? GT_PL_SERVE : gt_pl_failed(st, out);
}

gt_pl_reason gt_pl_failed(gemmtune_status st, gt_pl_outcome *out)
{
    if (st == GEMMTUNE_STATUS_WRONG_DEVICE) return GT_PL_DEVICE_CHANGED;
    if (st == GEMMTUNE_STATUS_NO_KERNEL) { /* the loader's note says why: all the log needs */
        if (log_fd >= 0) snprintf(out->detail, sizeof out->detail, "%s", gemmtune_last_error());
        return GT_PL_UNTUNED;
    }
    if (log_fd >= 0)
        snprintf(out->detail, sizeof out->detail, "%s (%s)", gemmtune_status_string(st), gemmtune_last_error());
    (void)cudaGetLastError(); /* a failed launch of ours must not surface in the program's next check */
    return st == GEMMTUNE_STATUS_NOT_PREPARED ? GT_PL_CAPTURE : GT_PL_GEMMTUNE;
}

/* For the log, while the thread holds its handle (after gt_pl_leave, the process's exit may destroy it): whether
 * this served call's line is new, and then what served it. Once per line, never on a warm call. */
static void explain(gemmtune_handle h, const gt_pl_call *c, gt_pl_reason r, outcome *out)
{
    out->fresh = gt_pl_seen_insert(&seen, gt_pl_key(c, r));
    if (out->fresh != 1) return;
    snprintf(out->explain, sizeof out->explain, "?");
    (void)gemmtune_explain_strided_batched(h, gt_pl_op(c->transa), gt_pl_op(c->transb), c->m, c->n, c->k, c->lda,
                                           c->ldb, c->ldc, c->batch, out->explain, sizeof out->explain);
}

/* The current device, asked of CUDA: for a thread's first call, and after the loader found that the thread's
 * device changed. -1 (with the detail) when there is none usable. */
static int current_device(outcome *out)
{
    int dev = -1;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess && dev >= 0 && dev < GT_PL_MAX_DEVICES) return dev;
    (void)cudaGetLastError();
    snprintf(out->detail, sizeof out->detail, "cudaGetDevice: %s, device %d",
             e != cudaSuccess ? cudaGetErrorString(e) : "ok", dev);
    return -1;
}

/* The call on device dev's handle of this thread (made on first use). */
static gt_pl_reason serve_on(int dev, cudaStream_t stream, const gt_pl_call *c, gt_pl_launch_fn fn, const void *ctx,
                             outcome *out)
{
    gt_pl_reason r = GT_PL_SERVE;
    gemmtune_handle h = gt_pl_handle(out->t, dev, (void *)stream, &maker, &r, out->detail, sizeof out->detail);
    if (!h || (r = fn(h, stream, dev, ctx, out)) == GT_PL_DEVICE_CHANGED) return r;
    gt_pl_set_device(out->t, dev);
    /* served: what served it; cuBLASLt's fused call kept because the loader would run cuBLAS: the loader's why */
    if (log_fd >= 0 && (r == GT_PL_SERVE || r == GT_PL_LT_FUSED)) explain(h, c, r, out);
    return r;
}

/* The thread's last device is tried first and CUDA is asked only when it changed: one cudaGetDevice per call, the
 * loader's. */
gt_pl_reason gt_pl_serve(const gt_pl_call *c, cudaStream_t stream, gt_pl_launch_fn fn, const void *ctx, outcome *out)
{
    if (!out->t || !gt_pl_enter(out->t)) return GT_PL_EXITING;
    int dev = gt_pl_device(out->t);
    gt_pl_reason r = dev >= 0 ? serve_on(dev, stream, c, fn, ctx, out) : GT_PL_DEVICE_CHANGED;
    if (r == GT_PL_DEVICE_CHANGED)
        r = (dev = current_device(out)) < 0 ? GT_PL_NO_DEVICE : serve_on(dev, stream, c, fn, ctx, out);
    if (r == GT_PL_DEVICE_CHANGED) r = GT_PL_GEMMTUNE; /* the current device's own handle refused it: not expected */
    gt_pl_leave(out->t); /* from here the handle may be released by the process's exit */
    return r;
}

/* A cuBLAS call that may be served: on the cuBLAS handle's stream. */
static gt_pl_reason serve(const operands *o, outcome *out)
{
    cudaStream_t stream = NULL;
    if (REAL(R_GET_STREAM, cublasGetStream_v2)(o->handle, &stream) != CUBLAS_STATUS_SUCCESS) return GT_PL_HANDLE;
    return gt_pl_serve(o->c, stream, launch, o, out);
}

/* Whether the current GPU ignores cublasGemmAlgo_t (sm_80 and newer: decide.c). Asked only of a call naming
 * CUBLAS_GEMM_DEFAULT_TENSOR_OP; each device's answer is kept. No device: 0 (the call stays cuBLAS's). */
static int algo_ignored(void)
{
    static _Atomic int major[GT_PL_MAX_DEVICES]; /* 0 until asked */
    int dev = -1, v = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= GT_PL_MAX_DEVICES) return (void)cudaGetLastError(), 0;
    if (!(v = atomic_load_explicit(&major[dev], memory_order_relaxed))) {
        if (cudaDeviceGetAttribute(&v, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess)
            return (void)cudaGetLastError(), 0;
        atomic_store_explicit(&major[dev], v, memory_order_relaxed);
    }
    return v >= 8;
}

/* Decide, and serve when allowed. The caller forwards whatever was not served. */
static void attempt(const operands *o, outcome *out)
{
    const gt_pl_call *c = o->c;
    gt_pl_modes modes = {0, 0, 0};
    cublasPointerMode_t pm = CUBLAS_POINTER_MODE_HOST;
    cublasMath_t mm = CUBLAS_DEFAULT_MATH;
    out->fresh = 2, out->detail[0] = out->explain[0] = '\0';
    out->t = gt_pl_thread_get();
    if (REAL(R_GET_POINTER_MODE, cublasGetPointerMode_v2)(o->handle, &pm) != CUBLAS_STATUS_SUCCESS ||
        REAL(R_GET_MATH_MODE, cublasGetMathMode)(o->handle, &mm) != CUBLAS_STATUS_SUCCESS) {
        out->reason = GT_PL_HANDLE;
        return;
    }
    modes.pointer_mode = (int)pm, modes.math_mode = (int)mm;
    modes.algo_ignored = c->api == GT_PL_GEMMEX && c->algo == CUBLAS_GEMM_DEFAULT_TENSOR_OP && algo_ignored();
    out->reason = gt_pl_classify(c, &modes, &cfg);
    if (out->reason == GT_PL_SERVE) out->reason = serve(o, out);
    else if (log_fd >= 0 && out->reason == GT_PL_ENV_NUMERICS) snprintf(out->detail, sizeof out->detail, "%s", cfg.numerics);
    else if (log_fd >= 0 && out->reason == GT_PL_MATH_MODE)
        snprintf(out->detail, sizeof out->detail, "cublasMath_t %d", modes.math_mode);
}

static void log_outcome(const gt_pl_call *c, const outcome *out, cublasStatus_t st, gt_pl_status_name_fn status_name)
{
    const char *real = c->api == GT_PL_LT ? "cuBLASLt" : "cuBLAS";
    int fresh = out->fresh != 2 ? out->fresh : gt_pl_seen_insert(&seen, gt_pl_key(c, out->reason));
    static const char full[] = "gemmtune: more distinct calls than the log tracks; no further lines\n";
    if (fresh < 0) log_text(full, sizeof full - 1);
    if (fresh != 1) return;
    char verdict[1400], line[1700];
    const char *name = status_name ? status_name(st) : NULL; /* optional */
    if (out->reason == GT_PL_SERVE) snprintf(verdict, sizeof verdict, "served by %s", out->explain);
    else
        snprintf(verdict, sizeof verdict, "forwarded to %s: %s%s%.700s", real, gt_pl_reason_text(out->reason),
                 out->detail[0] ? ": " : "", out->detail);
    if (out->reason == GT_PL_LT_FUSED && out->explain[0] && strcmp(out->explain, "?")) {
        size_t l = strlen(verdict);
        snprintf(verdict + l, sizeof verdict - l, " (the loader: %.500s)", out->explain);
    }
    if (out->reason != GT_PL_SERVE && st != CUBLAS_STATUS_SUCCESS) {
        size_t l = strlen(verdict);
        snprintf(verdict + l, sizeof verdict - l, " -> %s%s", name ? name : real, name ? "" : " error");
    }
    log_text(line, gt_pl_format(line, sizeof line, c, verdict));
}

cublasStatus_t gt_pl_finish(const gt_pl_call *c, const outcome *out, cublasStatus_t st,
                             gt_pl_status_name_fn status_name)
{
    if (out->t) gt_pl_count(out->t, c->api, out->reason);
    if (log_fd >= 0) log_outcome(c, out, st, status_name);
    return st;
}

/* The end of every intercepted cuBLAS call that reached a decision. The status's name is the log's only: looked up
 * only while logging, as a cuBLAS without cublasGetStatusName would have it looked for again on every call. */
static cublasStatus_t finish(const gt_pl_call *c, const outcome *out, cublasStatus_t st)
{
    return gt_pl_finish(c, out, st, log_fd >= 0 ? REAL(R_STATUS_NAME, cublasGetStatusName) : NULL);
}

/* Only a program that calls an entry point its cuBLAS lacks (or with no cuBLAS loaded at all) gets here. Said once
 * per entry point. */
static cublasStatus_t no_real(int i)
{
    static _Atomic int said[R_N];
    char m[300];
    int n = snprintf(m, sizeof m, "gemmtune: libgemmtune_cublas.so: no %s in this process's cuBLAS to forward to; "
                     "returning CUBLAS_STATUS_NOT_INITIALIZED\n", real_name[i]);
    if (!atomic_exchange(&said[i], 1) && n > 0) (void)!write(STDERR_FILENO, m, (size_t)n);
    return CUBLAS_STATUS_NOT_INITIALIZED;
}

/* The real entry point i called as fn: its status, or NOT_INITIALIZED when this cuBLAS has no such symbol. */
#define GT_FORWARD(i, fn, ...)                                                  \
    do {                                                                        \
        __typeof__(fn) *real_ = REAL(i, fn);                                    \
        if (!real_) return no_real(i);                                          \
        ++gt_pl_depth;                                                          \
        cublasStatus_t fwd_st_ = real_(__VA_ARGS__);                            \
        --gt_pl_depth;                                                          \
        return fwd_st_;                                                         \
    } while (0)

static cublasStatus_t real_sgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                 const float *alpha, const float *A, int lda, const float *B, int ldb,
                                 const float *beta, float *C, int ldc)
{
    GT_FORWARD(R_SGEMM, cublasSgemm_v2, h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* Straight to cuBLAS, before any getter: re-entry from gemmtune or cuBLAS, the pass-through switch, or a cuBLAS
 * whose getters were not found (the forward itself then needs only the entry point's own symbol). */
static int bypass(void)
{
    return gt_pl_depth > 0 || !cfg.enabled || !getters_found();
}

GT_EXPORT cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                        int m, int n, int k, const float *alpha, const float *A, int lda,
                                        const float *B, int ldb, const float *beta, float *C, int ldc)
{
    if (bypass()) return real_sgemm(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    const gt_pl_call c = {GT_PL_SGEMM, transa, transb, m, n, k, lda, ldb, ldc, alpha, beta, CUDA_R_32F, CUDA_R_32F,
                          CUDA_R_32F, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT, 1};
    const operands o = {&c, handle, A, B, C, 0, 0, 0};
    outcome out;
    attempt(&o, &out);
    if (out.reason == GT_PL_SERVE) return finish(&c, &out, CUBLAS_STATUS_SUCCESS);
    return finish(&c, &out, real_sgemm(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc));
}

static cublasStatus_t real_gemm_ex(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                   const void *alpha, const void *A, cudaDataType at, int lda, const void *B,
                                   cudaDataType bt, int ldb, const void *beta, void *C, cudaDataType ct, int ldc,
                                   cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
    GT_FORWARD(R_GEMM_EX, cublasGemmEx, h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc, compute, algo);
}

GT_EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                                      int n, int k, const void *alpha, const void *A, cudaDataType Atype, int lda,
                                      const void *B, cudaDataType Btype, int ldb, const void *beta, void *C,
                                      cudaDataType Ctype, int ldc, cublasComputeType_t computeType,
                                      cublasGemmAlgo_t algo)
{
    if (bypass())
        return real_gemm_ex(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc,
                            computeType, algo);
    const gt_pl_call c = {GT_PL_GEMMEX, transa, transb, m, n, k, lda, ldb, ldc, alpha, beta, Atype, Btype, Ctype,
                          (int)computeType, (int)algo, 1};
    const operands o = {&c, handle, A, B, C, 0, 0, 0};
    outcome out;
    attempt(&o, &out);
    if (out.reason == GT_PL_SERVE) return finish(&c, &out, CUBLAS_STATUS_SUCCESS);
    return finish(&c, &out, real_gemm_ex(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta,
                                         C, Ctype, ldc, computeType, algo));
}

static cublasStatus_t real_strided(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                   const float *alpha, const float *A, int lda, long long sa, const float *B, int ldb,
                                   long long sb, const float *beta, float *C, int ldc, long long sc, int batch)
{
    GT_FORWARD(R_STRIDED, cublasSgemmStridedBatched, h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch);
}

/* A batch is served in one launch over its matrices (gemmtune_sgemm_strided_batched), or forwarded whole. */
GT_EXPORT cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                                   cublasOperation_t transb, int m, int n, int k, const float *alpha,
                                                   const float *A, int lda, long long int strideA, const float *B,
                                                   int ldb, long long int strideB, const float *beta, float *C,
                                                   int ldc, long long int strideC, int batchCount)
{
    if (bypass())
        return real_strided(handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc,
                            strideC, batchCount);
    const gt_pl_call c = {GT_PL_STRIDED, transa, transb, m, n, k, lda, ldb, ldc, alpha, beta, CUDA_R_32F, CUDA_R_32F,
                          CUDA_R_32F, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT, batchCount};
    const operands o = {&c, handle, A, B, C, strideA, strideB, strideC};
    outcome out;
    attempt(&o, &out);
    if (out.reason == GT_PL_SERVE) return finish(&c, &out, CUBLAS_STATUS_SUCCESS);
    return finish(&c, &out, real_strided(handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta,
                                         C, ldc, strideC, batchCount));
}

/* ---- for lt.c (cublasLtMatmul): the state above, shared ---- */

const gt_pl_config *gt_pl_cfg(void) { return &cfg; }

void gt_pl_log_line(const char *line) { log_text(line, strlen(line)); }
