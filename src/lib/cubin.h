/* Cubins: the database's cache (keyed by source hash, arch, NVRTC version and options) in front of NVRTC. The one
 * place that says "from the cache, else compiled, then cached", for the tuner's compile pool (get and put), the
 * loader and `gemmtune export --with-cubin` (provide). Tested by tests/test_nvrtc.c and the GPU tests. */
#ifndef GT_CUBIN_H
#define GT_CUBIN_H

#include "compile.h"
#include "db.h"

/* The cached cubin of source hash for arch (out->data malloc'd). 0 with *found, or -1 with err. */
int gt_cubin_cache_get(gt_db *db, const char *hash, const char *arch, gt_cubin *out, int *found, char *err,
                       size_t errlen);
/* Cache c as the cubin of hash for arch. 0, or -1 with err (a read-only database: callers go on without). */
int gt_cubin_cache_put(gt_db *db, const char *hash, const char *arch, const gt_cubin *c, char *err, size_t errlen);

/* src for arch: from the cache when db has it (db may be NULL), else compiled with NVRTC and cached, best effort.
 * 0 with out filled (*cached says which), 1 when the source does not compile (err has the log), -1 otherwise
 * (NVRTC failed or is not linked in). out is always safe to gt_cubin_free. */
int gt_cubin_provide(gt_db *db, const char *src, const char *arch, gt_cubin *out, int *cached, char *err,
                     size_t errlen);

#endif
