/* Whole-file reads and writes for every file gemmtune reads as data or writes as output (import's JSON, --sizes
 * @FILE, the loader's JSON, the record file; export -o, report -o): a read takes only a regular file of bounded
 * size, so a FIFO, a device or a directory is refused and never hung on; a write replaces a regular file atomically
 * and never replaces anything else. Tested by tests/test_files.c. */
#ifndef GT_FILES_H
#define GT_FILES_H

#include <stddef.h>

/* Size limits of what is read whole. */
#define GT_FILE_MAX_JSON (256u << 20) /* an exported winners file */
#define GT_FILE_MAX_TEXT (16u << 20)  /* a size list, a record file */

/* Open path with flags (O_RDONLY or O_RDWR, O_CREAT allowed, with mode) without blocking on a FIFO and without
 * making a terminal ours, and keep it only when it is a regular file. The fd (close-on-exec, blocking), or -1 with
 * err naming the path: missing, not a regular file (a directory, a FIFO, a device), not permitted. */
int gt_file_open_regular(const char *path, int flags, int mode, char *err, size_t errlen);

/* Read fd (a regular file, from its current offset) to its end: a malloc'd buffer, NUL-terminated, *n its length
 * (n may be NULL). NULL with err naming name when it holds more than max bytes, on a read error or out of memory. */
char *gt_file_read_fd(int fd, const char *name, size_t max, size_t *n, char *err, size_t errlen);

/* gt_file_open_regular + gt_file_read_fd: the whole regular file at path, at most max bytes. NULL with err. */
char *gt_file_read(const char *path, size_t max, size_t *n, char *err, size_t errlen);

/* Write data[0..n) to path, where asked and nowhere else:
 *   - a regular file (or a symlink to one) is replaced atomically: the bytes go to a fresh temporary file made with
 *     mkstemp (O_EXCL, so no planted name or symlink is followed) in the folder that really holds the target,
 *     fsync'd, given the target's mode (and owner, where permitted), then renamed over the target; the target must
 *     be writable by this user, as for a plain open;
 *   - a new file is made the same way in path's folder, with mode 0666 less the umask;
 *   - a character device or FIFO (/dev/null, a terminal, a pipe; /dev/stdout and other names under /dev or /proc,
 *     whatever they lead to) is written straight through and never replaced;
 *   - anything else (a directory, a block device, a socket, a symlink to nothing) is refused.
 * 0, or -1 with err naming path; on failure no temporary file is left and a regular target is unchanged. */
int gt_file_write(const char *path, const void *data, size_t n, char *err, size_t errlen);

#endif
