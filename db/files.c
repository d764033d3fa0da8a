/* Bounded reads of regular files and writes that replace only what they may (see db/files.h).
 * Tested by tests/test_files.c (FIFOs, /dev/zero, directories, symlinks, modes, failures that leave nothing). */
#include "files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind_of(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
         : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "of an unknown kind";
}

int gt_file_open_regular(const char *path, int flags, int mode, char *err, size_t errlen)
{
    struct stat sb;
    /* stat first, so a device is never even opened (opening some has effects); fstat after, for a swap between */
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
        return snprintf(err, errlen, "%s is %s, not a regular file", path, kind_of(sb.st_mode)), -1;
    int fd = open(path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, mode);
    if (fd < 0)
        return snprintf(err, errlen, "cannot %s %s: %s", flags & O_ACCMODE ? "open" : "read", path, strerror(errno)), -1;
    if (fstat(fd, &sb) < 0) sb.st_mode = 0;
    if (!S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "%s is %s, not a regular file", path, kind_of(sb.st_mode));
        close(fd);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

/* Grow buf to hold want + 1 bytes; NULL (buf freed) when out of memory. */
static char *grow(char *buf, size_t want)
{
    char *p = realloc(buf, want + 1);
    if (!p) free(buf);
    return p;
}

char *gt_file_read_fd(int fd, const char *name, size_t max, size_t *n, char *err, size_t errlen)
{
    struct stat sb;
    size_t cap = 4096, len = 0;
    if (fstat(fd, &sb) == 0 && sb.st_size > 0) {
        if ((unsigned long long)sb.st_size > max) goto too_big;
        cap = (size_t)sb.st_size + 1; /* room for the end-of-file read without growing */
    }
    if (cap > max + 1) cap = max + 1; /* reading max + 1 bytes means too big */
    char *buf = grow(NULL, cap);
    while (buf) {
        if (len == cap && cap > max) {
            free(buf);
            goto too_big;
        }
        if (len == cap && !(buf = grow(buf, cap = cap > max / 2 ? max + 1 : 2 * cap))) break;
        ssize_t got = read(fd, buf + len, cap - len);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            snprintf(err, errlen, "cannot read %s: %s", name, strerror(errno));
            free(buf);
            return NULL;
        }
        if (got == 0) {
            buf[len] = '\0';
            if (n) *n = len;
            return buf;
        }
        len += (size_t)got;
    }
    snprintf(err, errlen, "out of memory reading %s", name);
    return NULL;
too_big:
    snprintf(err, errlen, "%s is larger than %zu bytes: not read", name, max);
    return NULL;
}

char *gt_file_read(const char *path, size_t max, size_t *n, char *err, size_t errlen)
{
    int fd = gt_file_open_regular(path, O_RDONLY, 0, err, errlen);
    if (fd < 0) return NULL;
    char *text = gt_file_read_fd(fd, path, max, n, err, errlen);
    close(fd);
    return text;
}

static int write_all(int fd, const void *data, size_t n)
{
    for (const char *p = data; n;) {
        ssize_t put = write(fd, p, n);
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) return -1;
        p += put, n -= (size_t)put;
    }
    return 0;
}

/* The descriptor a name of this process's own open files stands for (/dev/stdout, /dev/fd/N, /proc/self/fd/N),
 * or -1: such a name is written through that descriptor, keeping its offset and append mode. */
static int alias_fd(const char *path)
{
    static const char *const dirs[] = {"/dev/fd/", "/proc/self/fd/"};
    if (!strcmp(path, "/dev/stdout")) return 1;
    if (!strcmp(path, "/dev/stderr")) return 2;
    for (int i = 0; i < 2; ++i) {
        size_t len = strlen(dirs[i]);
        const char *num = path + len;
        if (strncmp(path, dirs[i], len) || !*num || strspn(num, "0123456789") != strlen(num) || strlen(num) > 6)
            continue;
        return atoi(num);
    }
    return -1;
}

/* A character device or FIFO (or what an alias names), written through and never replaced. 1 when what path
 * names turned out to be a regular file after all (the caller replaces it), 0, or -1 with err. */
static int write_through(const char *path, const void *data, size_t n, char *err, size_t errlen)
{
    struct stat sb;
    int alias = alias_fd(path), fd = alias >= 0 ? alias : open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &sb) < 0) return snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno)), -1;
    int rc = 0;
    if (alias < 0 && S_ISREG(sb.st_mode)) rc = 1;
    else if (alias < 0 && !S_ISCHR(sb.st_mode) && !S_ISFIFO(sb.st_mode))
        rc = -1, snprintf(err, errlen, "%s is %s: not written", path, kind_of(sb.st_mode));
    else if (write_all(fd, data, n) < 0) rc = -1, snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
    if (alias < 0) close(fd);
    return rc;
}

/* Where a regular target is replaced: *dir the folder that really holds it, final its real path. old: the target's
 * stat (it exists), else NULL (a new file named by path). 0, or -1 with err. */
static int real_place(const char *path, const struct stat *old, char *dir, char *final, char *err, size_t errlen)
{
    char real[PATH_MAX], copy[PATH_MAX];
    struct stat sb;
    if (old) {
        /* may this user write it, as a plain open would judge (the file's mode, the kernel's symlink rules)? */
        int probe = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
        if (probe < 0) return snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno)), -1;
        int same = fstat(probe, &sb) == 0 && sb.st_dev == old->st_dev && sb.st_ino == old->st_ino;
        close(probe);
        if (!same || !realpath(path, real) || stat(real, &sb) < 0 || sb.st_dev != old->st_dev || sb.st_ino != old->st_ino)
            return snprintf(err, errlen, "cannot write %s: it changed while being written", path), -1;
        snprintf(final, PATH_MAX, "%s", real);
        *strrchr(real, '/') = '\0';
        snprintf(dir, PATH_MAX, "%s", real[0] ? real : "/");
        return 0;
    }
    if (strlen(path) >= sizeof copy) return snprintf(err, errlen, "cannot write %s: name too long", path), -1;
    snprintf(copy, sizeof copy, "%s", path);
    char *slash = strrchr(copy, '/'), *base = slash ? slash + 1 : copy;
    if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
        return snprintf(err, errlen, "cannot write %s: it names a folder, not a file", path), -1;
    if (slash) *slash = '\0';
    if (!realpath(slash ? (copy[0] ? copy : "/") : ".", real))
        return snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno)), -1;
    if (snprintf(final, PATH_MAX, "%s/%s", strcmp(real, "/") ? real : "", base) >= PATH_MAX)
        return snprintf(err, errlen, "cannot write %s: name too long", path), -1;
    snprintf(dir, PATH_MAX, "%s", real);
    return 0;
}

/* The mode a new file gets: 0666 less the umask. */
static mode_t new_mode(void)
{
    mode_t mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

/* Write a temporary file beside final and rename it over final. */
static int replace(const char *path, const struct stat *old, const void *data, size_t n, char *err, size_t errlen)
{
    char dir[PATH_MAX], final[PATH_MAX], tmp[PATH_MAX + 32];
    if (real_place(path, old, dir, final, err, errlen) < 0) return -1;
    const char *base = strrchr(final, '/') + 1;
    int len = snprintf(tmp, sizeof tmp, "%s/.%.40s.XXXXXX", strcmp(dir, "/") ? dir : "", base);
    int fd = len > 0 && (size_t)len < sizeof tmp ? mkostemp(tmp, O_CLOEXEC) : (errno = ENAMETOOLONG, -1);
    if (fd < 0) return snprintf(err, errlen, "cannot write %s: cannot create a file in %s: %s", path, dir, strerror(errno)), -1;
    int bad = write_all(fd, data, n) < 0 || fchmod(fd, old ? old->st_mode & 0777 : new_mode()) < 0;
    if (!bad && old && (old->st_uid != geteuid() || old->st_gid != getegid()) && fchown(fd, old->st_uid, old->st_gid))
        (void)!fchown(fd, (uid_t)-1, old->st_gid); /* keep what the rules allow of the owner; the bytes matter */
    bad = bad || fsync(fd) < 0;
    int e = errno;
    if (close(fd) < 0 && !bad) bad = 1, e = errno;
    if (!bad && rename(tmp, final) < 0) bad = 1, e = errno;
    if (bad) {
        unlink(tmp);
        return snprintf(err, errlen, "cannot write %s: %s", path, strerror(e)), -1;
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* the rename itself on disk, where the folder allows */
    if (dfd >= 0) (void)!fsync(dfd), close(dfd);
    return 0;
}

int gt_file_write(const char *path, const void *data, size_t n, char *err, size_t errlen)
{
    struct stat sb;
    if (!path || !*path) return snprintf(err, errlen, "no file name to write"), -1;
    if (alias_fd(path) >= 0) return write_through(path, data, n, err, errlen) ? -1 : 0;
    if (stat(path, &sb) < 0) {
        if (errno != ENOENT) return snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno)), -1;
        if (lstat(path, &sb) == 0) return snprintf(err, errlen, "%s is a symbolic link to nothing: not followed", path), -1;
        return replace(path, NULL, data, n, err, errlen);
    }
    if (S_ISCHR(sb.st_mode) || S_ISFIFO(sb.st_mode)) {
        int rc = write_through(path, data, n, err, errlen);
        if (rc <= 0) return rc;
        if (stat(path, &sb) < 0) return snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno)), -1;
    }
    if (!S_ISREG(sb.st_mode)) return snprintf(err, errlen, "%s is %s: not written", path, kind_of(sb.st_mode)), -1;
    return replace(path, &sb, data, n, err, errlen);
}
