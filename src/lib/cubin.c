/* The cubin provider (cubin.h). NVRTC and the database are referenced weakly: a program linking the static library
 * for a compiled-in table pulls in neither; then provide() says what is missing. A cached cubin is used only when its
 * MAC verifies under this user's key (trust.h); tests/test_cache.c. */
#include "cubin.h"
#include "sha256.h"
#include "trust.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#pragma weak gt_nvrtc_compile
#pragma weak gt_nvrtc_version
#pragma weak gt_nvrtc_options
#pragma weak gt_db_cubin_get
#pragma weak gt_db_cubin_put
#pragma weak gt_db_read_only

/* 1 when this user's key verifies mac over the entry; no key trusts nothing. */
static int trusted(const char *hash, const char *arch, const gt_cubin *c, const char *mac)
{
    unsigned char key[GT_TRUST_KEY_BYTES];
    char want[GT_TRUST_MAC_HEX], why[512];
    if (strlen(mac) != GT_TRUST_MAC_HEX - 1 || gt_trust_key(0, key, why, sizeof why) < 0) return 0;
    gt_trust_mac(key, hash, arch, gt_nvrtc_version(), gt_nvrtc_options(), c->regs, c->spill_bytes, c->data, c->size,
                 want);
    memset(key, 0, sizeof key);
    return gt_equal_ct((const unsigned char *)want, (const unsigned char *)mac, GT_TRUST_MAC_HEX - 1);
}

int gt_cubin_cache_get(gt_db *db, const char *hash, const char *arch, gt_cubin *out, int *found, char *err,
                       size_t errlen)
{
    char mac[GT_TRUST_MAC_HEX];
    memset(out, 0, sizeof *out);
    out->regs = out->spill_bytes = -1;
    *found = 0;
    if (!db || !gt_db_cubin_get || !gt_nvrtc_version) return 0;
    if (gt_db_cubin_get(db, hash, arch, gt_nvrtc_version(), gt_nvrtc_options(), &out->data, &out->size, &out->regs,
                        &out->spill_bytes, mac, found, err, errlen) < 0)
        return -1;
    if (*found && !trusted(hash, arch, out, mac)) { /* another user's, merged, tampered or older: a miss */
        free(out->data); /* not gt_cubin_free: a table-only static link has no NVRTC (compile.c) */
        memset(out, 0, sizeof *out);
        out->regs = out->spill_bytes = -1;
        *found = 0;
    }
    return 0;
}

int gt_cubin_cache_put(gt_db *db, const char *hash, const char *arch, const gt_cubin *c, char *err, size_t errlen)
{
    unsigned char key[GT_TRUST_KEY_BYTES];
    char mac[GT_TRUST_MAC_HEX];
    if (!db || !gt_db_cubin_put || !gt_nvrtc_version || gt_db_read_only(db)) return 0;
    if (gt_trust_key(1, key, err, errlen) < 0) return -1;
    gt_trust_mac(key, hash, arch, gt_nvrtc_version(), gt_nvrtc_options(), c->regs, c->spill_bytes, c->data, c->size,
                 mac);
    memset(key, 0, sizeof key);
    return gt_db_cubin_put(db, hash, arch, gt_nvrtc_version(), gt_nvrtc_options(), c->data, c->size, c->regs,
                           c->spill_bytes, mac, err, errlen);
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
