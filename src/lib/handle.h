/* The body of a gemmtune handle, shared by src/lib/loader.c (create, destroy), loader_call.c (plans, the call,
 * explain) and record.c (the recorder of untuned calls). Not a public interface. */
#ifndef GT_HANDLE_H
#define GT_HANDLE_H

#include "backend.h"
#include "kernel.h"
#include "loader.h"

#include <pthread.h>
#include <stdatomic.h>

enum { GT_NBUCKET = 256 };

/* A call signature's plan. Immutable once published (but for its call counter), freed only by gemmtune_destroy,
 * so readers need no lock. Exactly one of kernel and bplan is set, unless the rule is none (nothing to run). */
typedef struct gt_plan {
    struct gt_plan *next;
    gt_call call;
    gt_choice choice;
    gt_launch L;
    const gt_kernel *kernel;  /* a built family's loaded kernel */
    gt_backend_plan *bplan;   /* a library family's plan, made by be with the handle's bctx of it */
    const gt_backend *be;
    gt_backend_ctx *bctx;
    size_t ws_bytes;          /* workspace per stream the launch needs */
    char note[512];           /* what the plan changed from the choice (a stored algorithm unavailable here), or
                                 why it has nothing to run (rule none) */
    atomic_long calls;        /* for the recorder */
} gt_plan;

/* One loaded kernel per (family, params, layout, batched or not, dynamic smem); under the handle's lock. */
typedef struct gt_kentry {
    struct gt_kentry *next;
    const gt_family *family;
    gt_params params;
    int ta, tb, batched;
    unsigned smem;
    gt_kernel *k;
} gt_kentry;

/* A workspace of one stream (and, for cudaStreamPerThread, one host thread). Newest first. */
typedef struct gt_wsentry {
    struct gt_wsentry *next;
    void *stream;
    pthread_t thread;
    float *ptr;
    size_t bytes;
} gt_wsentry;

struct gemmtune_context {
    int device, column_major;
    gemmtune_fallback fallback;
    gt_serve_model model;
    gt_device_id dev;
    char arch[32];
    char record_path[4096];   /* "" when untuned calls are not recorded */
    gt_winner_set set;
    gt_obtain_fn obtain;
    void *obtain_ctx;
    void (*ctx_free)(void *);
    pthread_mutex_t lock;     /* plan creation, kernel cache, obtain (db is single-threaded), workspaces, backend */
    gt_backend_ctxs backends; /* the backends of the library families used so far, and their handles */
    gt_kentry *kernels;
    gt_loader_counters count; /* under lock */
    _Atomic(gt_plan *) buckets[GT_NBUCKET];
    _Atomic(gt_wsentry *) ws;
    _Atomic(void *) cu_ctx;   /* a CUDA context of the handle's device seen current at a call (its device's, for
                                 good), so a later call checks the device with the driver's cheap cuCtxGetCurrent
                                 instead of cudaGetDevice; NULL until one is seen */
};

/* Write the handle's untuned calls into its record file, merged with what the file holds. 0, or -1 with err. */
int gt_record_write(struct gemmtune_context *h, char *err, size_t errlen);

#endif
