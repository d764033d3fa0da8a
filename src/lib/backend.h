/* Library backends: how a family that is not built (gt_family.build == GT_BUILD_NONE) is run. The family names
 * its backend (gt_family.backend); the runtime finds it by that name in the table of backends (src/lib/backend.c),
 * and the tuner's worker and the loader call it through the table's entries, never by a family's name. Running needs a GPU (make gpu-test); gt_backend_find and
 * the parameter checks run anywhere (tests/test_vendor.c). */
#ifndef GT_BACKEND_H
#define GT_BACKEND_H

#include "family.h"
#include "kernel.h"

#include <cuda_runtime_api.h>
#include <stddef.h>

typedef struct gt_backend_ctx gt_backend_ctx;   /* library handles of one device, safe for concurrent use */
typedef struct gt_backend_plan gt_backend_plan; /* one candidate bound to one call; immutable once made */

typedef struct {
    const char *name;
    /* 1 when the library can run here (linked in, or found by a resolver); NULL means always. Without a GPU. */
    int (*available)(void);
    /* Library handles for the current device. 0, or -1 with err (no library, no device). */
    int (*open)(gt_backend_ctx **out, char *err, size_t errlen);
    void (*close)(gt_backend_ctx *ctx);
    /* Candidates for shape s on this device, in the library's order of preference, at most max. *n is the count.
     * 0, or -1 with err. */
    int (*candidates)(gt_backend_ctx *ctx, const gt_family *f, const gt_shape *s, gt_params *out, int max, int *n,
                      char *err, size_t errlen);
    /* Bind candidate p to call on this device: GT_ST_OK with *out, GT_ST_UNAVAILABLE when this library or GPU
     * refuses it (another version, an algorithm that does not support the call; err says which), or
     * GT_ST_LAUNCH_ERROR for any other failure. */
    gt_status (*plan)(gt_backend_ctx *ctx, const gt_family *f, const gt_params *p, const gt_call *call,
                      gt_backend_plan **out, char *err, size_t errlen);
    /* Bytes of workspace run() needs (the caller owns it; one per stream). */
    size_t (*workspace)(const gt_backend_plan *plan);
    /* Enqueue the GEMM of a (its shape and leading dimensions must be plan's call's) on stream, with ws of at least
     * workspace() bytes. Never synchronises. 0, or -1 with the library's status in err. */
    int (*run)(gt_backend_ctx *ctx, const gt_backend_plan *plan, const gt_args *a, void *ws, cudaStream_t stream,
               char *err, size_t errlen);
    void (*release)(gt_backend_plan *plan);
    /* Without a GPU: 1 when p can be replayed by this build's library, else 0 with why (another version). */
    int (*replayable)(const gt_family *f, const gt_params *p, char *why, size_t n);
    /* One line on what p is, for explain: "cuBLASLt algorithm 6, tile 20, ...". */
    void (*describe)(const gt_family *f, const gt_params *p, char *buf, size_t n);
} gt_backend;

/* The backend called name among this build's (the table in src/lib/backend.c, one line per backend file), or
 * NULL when none has that name or its library is not available here. */
const gt_backend *gt_backend_find(const char *name);

/* The contexts one user of the backends keeps (a handle, a worker process): one per backend, opened on first use
 * and kept until closed. Zero-initialized is empty. */
enum { GT_BACKEND_MAX = 4 };
typedef struct {
    struct {
        const gt_backend *be;
        gt_backend_ctx *ctx;
    } slot[GT_BACKEND_MAX];
} gt_backend_ctxs;

/* be's context in c, opened on first use (a failed open is tried again next time). NULL with err when it cannot be
 * opened, or c is full. */
gt_backend_ctx *gt_backend_ctx_of(gt_backend_ctxs *c, const gt_backend *be, char *err, size_t errlen);

/* Close every context c holds; c is then empty. */
void gt_backend_ctxs_close(gt_backend_ctxs *c);

/* The params of the vendor's default call (cublasSgemm as cuBLAS chooses) for this build's cuBLAS: what the loader
 * serves when no tuned kernel is expected to beat it. */
void gt_backend_default_params(const gt_family **f, gt_params *p);

#endif
