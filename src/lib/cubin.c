/* The cubin provider (cubin.h). NVRTC and the database are referenced weakly: a program linking the static library
 * for a compiled-in table pulls in neither; then provide() says what is missing. */
#include "cubin.h"

#include <stdio.h>
#include <string.h>

#pragma weak gt_nvrtc_compile
#pragma weak gt_nvrtc_version
#pragma weak gt_nvrtc_options
#pragma weak gt_db_cubin_get
#pragma weak gt_db_cubin_put

int gt_cubin_cache_get(gt_db *db, const char *hash, const char *arch, gt_cubin *out, int *found, char *err,
                       size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->regs = out->spill_bytes = -1;
    *found = 0;
    if (!db || !gt_db_cubin_get || !gt_nvrtc_version) return 0;
    return gt_db_cubin_get(db, hash, arch, gt_nvrtc_version(), gt_nvrtc_options(), &out->data, &out->size,
                           &out->regs, &out->spill_bytes, found, err, errlen);
}

int gt_cubin_cache_put(gt_db *db, const char *hash, const char *arch, const gt_cubin *c, char *err, size_t errlen)
{
    if (!db || !gt_db_cubin_put || !gt_nvrtc_version) return 0;
    return gt_db_cubin_put(db, hash, arch, gt_nvrtc_version(), gt_nvrtc_options(), c->data, c->size, c->regs,
                           c->spill_bytes, err, errlen);
}

int gt_cubin_provide(gt_db *db, const char *src, const char *arch, gt_cubin *out, int *cached, char *err,
                     size_t errlen)
{
    char hash[17], msg[512];
    int found = 0;
    gt_source_id(src, hash);
    *cached = 0;
    if (gt_cubin_cache_get(db, hash, arch, out, &found, msg, sizeof msg) == 0 && found) return *cached = 1, 0;
    if (!gt_nvrtc_compile) {
        memset(out, 0, sizeof *out);
        return snprintf(err, errlen, "kernel not cached or embedded for %s, and NVRTC is not linked in", arch), -1;
    }
    int rc = gt_nvrtc_compile(src, arch, out, msg, sizeof msg);
    if (rc) snprintf(err, errlen, "NVRTC for %s: %.400s", arch, rc > 0 && out->log ? out->log : msg);
    else gt_cubin_cache_put(db, hash, arch, out, msg, sizeof msg); /* a read-only database still serves */
    return rc;
}
