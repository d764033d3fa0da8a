/* The cubin cache's trust (docs/LOADER.md, "The cubin cache"): a cubin found in a database's cache is loaded,
 * compiled against or exported only when this user put it there on this machine, which an HMAC-SHA-256 under a
 * per-user secret key tells. The key is 32 random bytes in $XDG_CONFIG_HOME/gemmtune/cache.key (an absolute
 * XDG_CONFIG_HOME), else ~/.config/gemmtune/cache.key: a regular file of this user's, mode 0600, made with O_EXCL.
 * Another user's database, or a merged one, carries MACs under other keys: its cubins are misses, never run.
 * Tested by tests/test_cache.c. */
#ifndef GT_TRUST_H
#define GT_TRUST_H

#include <stddef.h>

#define GT_TRUST_KEY_BYTES 32
#define GT_TRUST_MAC_HEX 65 /* 64 hex digits and a NUL */

/* The key file's path into buf. 0, or -1 with err (neither $XDG_CONFIG_HOME nor $HOME, or too long). */
int gt_trust_key_path(char *buf, size_t n, char *err, size_t errlen);

/* This user's key into key: read, or, with create and no file yet, made first (its folders 0700, the file 0600 with
 * O_EXCL, then linked into place so no reader sees it half written). 0, or -1 with why in err: absent and not
 * create; not a regular file; owned by another user; readable or writable by others; not 32 bytes; an I/O error.
 * A caller with no key trusts no cached cubin and caches none. */
int gt_trust_key(int create, unsigned char key[GT_TRUST_KEY_BYTES], char *err, size_t errlen);

/* The MAC of one cache entry, as 64 lowercase hex digits into mac: HMAC-SHA-256 under key of every field of the
 * cache's key (source hash, arch, NVRTC version and options), the resources stored beside it and the bytes, each
 * field delimited so no two entries share an input. Cannot fail. */
void gt_trust_mac(const unsigned char key[GT_TRUST_KEY_BYTES], const char *hash, const char *arch, int nvrtc_version,
                  const char *options, int regs, int spill_bytes, const unsigned char *data, size_t size,
                  char mac[GT_TRUST_MAC_HEX]);

#endif
