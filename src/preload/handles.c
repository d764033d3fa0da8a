/* One gemmtune handle per (device, thread) for the preload library, made lazily (without winners when their
 * source cannot be read, so calls are still recorded) and released at thread exit (a pthread key destructor) and
 * at process exit (atexit). The warm path takes no lock: the thread's state is found through a thread-local
 * pointer, and only a registry used at birth, death and exit is locked. GPU checks: tests/preload/run_check.sh
 * (two threads, two streams), preload_gpu_records_from_nothing. */
#include "preload.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gt_pl_thread {
    struct gt_pl_thread *next, *prev;          /* registry, under reg_lock */
    _Atomic int busy;                          /* 1 while inside gemmtune; -1 once its handles are released */
    gemmtune_handle h[GT_PL_MAX_DEVICES];
    gemmtune_status failed[GT_PL_MAX_DEVICES]; /* gemmtune_create's status when it failed: not retried */
    char why[256];                             /* the message of that failure */
    int dev;                                   /* the device of its last call, -1 before */
    _Atomic unsigned long long n[GT_PL_NAPI][GT_PL_NREASONS]; /* calls by entry point and outcome */
    gt_pl_lt_memo memo;                        /* cuBLASLt descriptors read (lt.c) */
};

_Thread_local int gt_pl_depth __attribute__((tls_model("initial-exec")));
static _Thread_local gt_pl_thread *self __attribute__((tls_model("initial-exec")));

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static gt_pl_thread *reg_head;                       /* living threads with a state */
static gt_pl_counts gone; /* counts of threads that exited, under reg_lock */
static pthread_key_t thread_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT, exit_once = PTHREAD_ONCE_INIT;
static _Atomic int exiting;

/* Work queued through a handle may still run when its owner goes: a device-wide synchronisation before the
 * destroy keeps its kernels loaded and workspaces allocated until that work is done. */
static void release_handles(gt_pl_thread *t)
{
    int cur = -1;
    ++gt_pl_depth;
    if (cudaGetDevice(&cur) != cudaSuccess) cur = -1;
    for (int d = 0; d < GT_PL_MAX_DEVICES; ++d) {
        if (!t->h[d]) continue;
        if (cudaSetDevice(d) == cudaSuccess) (void)cudaDeviceSynchronize();
        gemmtune_destroy(t->h[d]);
        t->h[d] = NULL;
    }
    if (cur >= 0) (void)cudaSetDevice(cur);
    (void)cudaGetLastError();
    --gt_pl_depth;
}

/* to += t's counts: its calls by entry point and outcome, and how its cuBLASLt descriptors were read. */
static void add_counts(gt_pl_counts *to, gt_pl_thread *t)
{
    for (int a = 0; a < GT_PL_NAPI; ++a)
        for (int r = 0; r < GT_PL_NREASONS; ++r) to->n[a][r] += atomic_load_explicit(&t->n[a][r], memory_order_relaxed);
    for (int i = 0; i < GT_PL_LT_NREADS; ++i)
        to->lt_reads[i] += atomic_load_explicit(&t->memo.reads[i], memory_order_relaxed);
}

static void unlink_locked(gt_pl_thread *t)
{
    if (t->prev) t->prev->next = t->next;
    else reg_head = t->next;
    if (t->next) t->next->prev = t->prev;
    t->next = t->prev = NULL;
    add_counts(&gone, t);
}

/* pthread key destructor. If the process-exit handler got to this state first, its handles are gone already
 * (busy is -1) and only the memory remains to free. */
static void thread_exit(void *p)
{
    gt_pl_thread *t = p;
    pthread_mutex_lock(&reg_lock);
    unlink_locked(t);
    pthread_mutex_unlock(&reg_lock);
    int idle = 0;
    if (atomic_compare_exchange_strong(&t->busy, &idle, -1)) release_handles(t);
    if (self == t) self = NULL;
    free(t);
}

/* atexit handler, registered after the first handle was made, so after the CUDA runtime that handle uses was
 * initialised: it runs before that runtime's own teardown. A thread caught inside gemmtune keeps its handles
 * (the process is ending anyway); every later call of any thread is forwarded. */
static void process_exit(void)
{
    atomic_store(&exiting, 1);
    pthread_mutex_lock(&reg_lock);
    for (gt_pl_thread *t = reg_head; t; t = t->next) {
        int idle = 0;
        if (atomic_compare_exchange_strong(&t->busy, &idle, -1)) release_handles(t);
    }
    pthread_mutex_unlock(&reg_lock);
}

static void make_key(void) { (void)pthread_key_create(&thread_key, thread_exit); }
static void register_exit(void) { (void)atexit(process_exit); }

gt_pl_thread *gt_pl_thread_get(void)
{
    if (self) return self;
    if (atomic_load(&exiting)) return NULL;
    pthread_once(&key_once, make_key);
    gt_pl_thread *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->dev = -1;
    if (pthread_setspecific(thread_key, t) != 0) {
        free(t);
        return NULL;
    }
    pthread_mutex_lock(&reg_lock);
    t->next = reg_head;
    if (reg_head) reg_head->prev = t;
    reg_head = t;
    pthread_mutex_unlock(&reg_lock);
    return self = t;
}

gt_pl_lt_memo *gt_pl_thread_memo(gt_pl_thread *t) { return t ? &t->memo : NULL; }

int gt_pl_enter(gt_pl_thread *t)
{
    int idle = 0;
    return atomic_compare_exchange_strong_explicit(&t->busy, &idle, 1, memory_order_acquire, memory_order_relaxed);
}

void gt_pl_leave(gt_pl_thread *t) { atomic_store_explicit(&t->busy, 0, memory_order_release); }

/* A handle is not made while the stream is capturing: reading the winners and binding the device are not
 * capture-safe calls under the global capture mode. The call is forwarded; the next one outside capture makes
 * it. Any error of the query counts as capturing. */
static int capturing(void *stream)
{
    enum cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    cudaError_t e = cudaStreamIsCapturing((cudaStream_t)stream, &cs);
    if (e != cudaSuccess) (void)cudaGetLastError();
    return e != cudaSuccess || cs != cudaStreamCaptureStatusNone;
}

static _Atomic int unreadable, said_create; /* the source failed to read (every handle is then made without
                                              winners); a failure of gemmtune_create was said */

/* The winners' source, else, when it is (or just proved) unreadable, no winners: the handle still serves the
 * program (untuned calls forwarded to cuBLAS) and records what it calls. */
static gemmtune_status create(gemmtune_handle *h, const gemmtune_options *o, const gt_pl_maker *mk)
{
    if (!mk->no_winners && !atomic_load(&unreadable)) {
        gemmtune_status st = gemmtune_create(h, o);
        if (st != GEMMTUNE_STATUS_DB_ERROR && st != GEMMTUNE_STATUS_JSON_ERROR) return st;
        if (!atomic_exchange(&unreadable, 1)) {
            char line[1400];
            snprintf(line, sizeof line, "gemmtune: the winners cannot be read (%s): every GEMM goes to cuBLAS "
                     "(GEMMTUNE_RECORD still records the shapes)\n", gemmtune_last_error());
            mk->say(line);
        }
    }
    return gemmtune_create_from_table(h, NULL, 0, o);
}

gemmtune_handle gt_pl_handle(gt_pl_thread *t, int dev, void *stream, const gt_pl_maker *mk, gt_pl_reason *why,
                             char *msg, size_t msglen)
{
    if (t->h[dev]) return t->h[dev];
    *why = GT_PL_CREATE;
    if (t->failed[dev]) return snprintf(msg, msglen, "%s", t->why), NULL;
    if (capturing(stream)) return *why = GT_PL_CAPTURE, NULL;
    gemmtune_options o = mk->opt;
    o.device = dev;
    ++gt_pl_depth;
    gemmtune_status st = create(&t->h[dev], &o, mk);
    --gt_pl_depth;
    if (st != GEMMTUNE_SUCCESS) {
        (void)cudaGetLastError(); /* the call goes on to cuBLAS: our failure is not the program's error */
        t->h[dev] = NULL;
        t->failed[dev] = st;
        snprintf(t->why, sizeof t->why, "%s (%s)", gemmtune_status_string(st), gemmtune_last_error());
        snprintf(msg, msglen, "%s", t->why);
        if (!atomic_exchange(&said_create, 1)) { /* e.g. a bad GEMMTUNE_FALLBACK: the preload does nothing */
            char line[400];
            snprintf(line, sizeof line, "gemmtune: gemmtune_create failed: %s: every GEMM goes to cuBLAS\n", t->why);
            mk->say(line);
        }
        return NULL;
    }
    pthread_once(&exit_once, register_exit);
    return t->h[dev];
}

int gt_pl_device(const gt_pl_thread *t) { return t->dev; }

void gt_pl_set_device(gt_pl_thread *t, int dev) { t->dev = dev; }

/* Only the owning thread writes its counters; relaxed load+store is a plain add, read racily by gt_pl_totals. */
void gt_pl_count(gt_pl_thread *t, gt_pl_api api, gt_pl_reason r)
{
    if ((unsigned)api >= GT_PL_NAPI || (unsigned)r >= GT_PL_NREASONS) return;
    _Atomic unsigned long long *c = &t->n[api][r];
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

void gt_pl_totals(gt_pl_counts *out)
{
    pthread_mutex_lock(&reg_lock);
    *out = gone;
    for (gt_pl_thread *t = reg_head; t; t = t->next) add_counts(out, t);
    pthread_mutex_unlock(&reg_lock);
}
