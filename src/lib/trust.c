/* The cubin cache's trust (see trust.h): the per-user key file and the MAC of a cache entry.
 * Tested by tests/test_cache.c (key file modes and races, MACs, a foreign or tampered cubin as a miss). */
#include "trust.h"
#include "sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

int gt_trust_key_path(char *buf, size_t n, char *err, size_t errlen)
{
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    int len;
    if (xdg && xdg[0] == '/') len = snprintf(buf, n, "%s/gemmtune/cache.key", xdg); /* XDG: relative is ignored */
    else if (home && home[0] == '/') len = snprintf(buf, n, "%s/.config/gemmtune/cache.key", home);
    else return snprintf(err, errlen, "no key for the cubin cache: neither $XDG_CONFIG_HOME nor $HOME is set"), -1;
    if (len < 0 || (size_t)len >= n) return snprintf(err, errlen, "the cubin cache's key path is too long"), -1;
    return 0;
}

/* Read the key at path, refusing a file another user could have written or read. */
static int read_key(const char *path, unsigned char key[GT_TRUST_KEY_BYTES], char *err, size_t errlen)
{
    struct stat sb;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return snprintf(err, errlen, "%s: %s", path, strerror(errno)), -1;
    const char *bad = fstat(fd, &sb) < 0                     ? strerror(errno)
                      : !S_ISREG(sb.st_mode)                 ? "not a regular file"
                      : sb.st_uid != geteuid()               ? "owned by another user"
                      : sb.st_mode & 077                     ? "readable or writable by others (want mode 0600)"
                      : sb.st_size != GT_TRUST_KEY_BYTES     ? "not 32 bytes (remove it: a new one is made)"
                      : read(fd, key, GT_TRUST_KEY_BYTES) != GT_TRUST_KEY_BYTES ? "short read"
                                                                                 : NULL;
    close(fd);
    if (bad) snprintf(err, errlen, "the cubin cache's key %s: %s, so no cached cubin is trusted", path, bad);
    return bad ? -1 : 0;
}

/* mkdir -p of path's folders, each new one 0700. */
static int make_dirs(const char *path, char *err, size_t errlen)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; (p = strchr(p, '/')); ++p) {
        *p = '\0';
        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
            return snprintf(err, errlen, "cannot create %s: %s", dir, strerror(errno)), -1;
        *p = '/';
    }
    return 0;
}

static int random_bytes(unsigned char *out, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(out + got, n - got, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        got += (size_t)r;
    }
    return 0;
}

/* A new key written to a private temporary file, then linked to path: whoever links first wins, and nobody reads a
 * half-written key. */
static int make_key(const char *path, char *err, size_t errlen)
{
    char tmp[4200];
    unsigned char key[GT_TRUST_KEY_BYTES];
    if (make_dirs(path, err, errlen) < 0) return -1;
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return snprintf(err, errlen, "cannot create %s: %s", tmp, strerror(errno)), -1;
    int ok = random_bytes(key, sizeof key) == 0 && write(fd, key, sizeof key) == (ssize_t)sizeof key && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
    memset(key, 0, sizeof key);
    if (ok && link(tmp, path) < 0 && errno != EEXIST) ok = 0;
    const int saved = errno;
    unlink(tmp);
    if (!ok) return snprintf(err, errlen, "cannot make the cubin cache's key %s: %s", path, strerror(saved)), -1;
    return 0;
}

int gt_trust_key(int create, unsigned char key[GT_TRUST_KEY_BYTES], char *err, size_t errlen)
{
    char path[4096];
    if (gt_trust_key_path(path, sizeof path, err, errlen) < 0) return -1;
    if (create && access(path, F_OK) < 0 && errno == ENOENT && make_key(path, err, errlen) < 0) return -1;
    return read_key(path, key, err, errlen);
}

static void field(gt_hmac *m, const char *text)
{
    gt_hmac_update(m, text ? text : "", strlen(text ? text : "") + 1); /* with its NUL: fields cannot run together */
}

void gt_trust_mac(const unsigned char key[GT_TRUST_KEY_BYTES], const char *hash, const char *arch, int nvrtc_version,
                  const char *options, int regs, int spill_bytes, const unsigned char *data, size_t size,
                  char mac[GT_TRUST_MAC_HEX])
{
    char nums[96];
    unsigned char out[GT_SHA256_BYTES];
    gt_hmac m;
    gt_hmac_init(&m, key, GT_TRUST_KEY_BYTES);
    field(&m, "gemmtune cubin cache 1");
    field(&m, hash);
    field(&m, arch);
    snprintf(nums, sizeof nums, "%d %d %d %zu", nvrtc_version, regs, spill_bytes, size);
    field(&m, options);
    field(&m, nums);
    gt_hmac_update(&m, data, size);
    gt_hmac_final(&m, out);
    for (int i = 0; i < GT_SHA256_BYTES; ++i) snprintf(mac + 2 * i, 3, "%02x", out[i]);
}
