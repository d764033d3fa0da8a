/* db/files.c: reads take only regular files of bounded size (a FIFO, /dev/zero, a directory are refused at once);
 * writes replace a regular file atomically with its mode kept, write a FIFO or device through without replacing it,
 * follow no planted name, and leave nothing behind when they fail. */
#include "files.h"
#include "fixture.h"
#include "harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char err[1024];

/* How many entries dir holds (. and .. not counted). */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d) closedir(d);
    return n;
}

GT_TEST(files_read_takes_only_bounded_regular_files, GT_NEEDS_NONE)
{
    char *dir = gt_tmp_path("_r"), path[600], fifo[600];
    size_t n = 0;
    CHECK(mkdir(dir, 0700) == 0);
    snprintf(path, sizeof path, "%s/a.txt", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    CHECK(gt_fixture_write(path, "hello\n", 6) == 0 && mkfifo(fifo, 0600) == 0);
    char *text = gt_file_read(path, 100, &n, err, sizeof err);
    CHECK(text && n == 6 && !strcmp(text, "hello\n"));
    free(text);
    /* a FIFO with no writer: refused at once, never waited on */
    CHECK(!gt_file_read(fifo, 100, &n, err, sizeof err) && strstr(err, "a FIFO") && strstr(err, fifo));
    CHECK(!gt_file_read("/dev/zero", 100, &n, err, sizeof err) && strstr(err, "a character device"));
    CHECK(!gt_file_read(dir, 100, &n, err, sizeof err) && strstr(err, "a directory"));
    CHECK(!gt_file_read(path, 5, &n, err, sizeof err) && strstr(err, "larger than 5 bytes"));
    text = gt_file_read(path, 6, &n, err, sizeof err); /* exactly the limit is fine */
    CHECK(text && n == 6);
    free(text);
    CHECK(!gt_file_read("/nonexistent/x", 100, &n, err, sizeof err) && strstr(err, "cannot read /nonexistent/x"));
    /* a file that reports no size (as /proc files do) is still read only up to the limit */
    text = gt_file_read("/proc/self/status", 1 << 20, &n, err, sizeof err);
    CHECK(text && n > 10 && strstr(text, "Name:"));
    free(text);
    CHECK(!gt_file_read("/proc/self/status", 8, &n, err, sizeof err) && strstr(err, "larger than 8 bytes"));
    unlink(path), unlink(fifo), rmdir(dir);
    free(dir);
}

GT_TEST(files_write_replaces_regular_files_keeping_the_mode, GT_NEEDS_NONE)
{
    char *dir = gt_tmp_path("_w"), path[600], link[600], sub[600], target[600];
    struct stat sb;
    size_t n;
    CHECK(mkdir(dir, 0700) == 0);
    snprintf(path, sizeof path, "%s/new.json", dir);
    mode_t mask = umask(022);
    CHECK_MSG(gt_file_write(path, "one", 3, err, sizeof err) == 0, "%s", err);
    CHECK(stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && (sb.st_mode & 0777) == 0644 && sb.st_size == 3);
    CHECK(chmod(path, 0640) == 0);
    CHECK(gt_file_write(path, "second", 6, err, sizeof err) == 0);
    unsigned char *text = gt_fixture_slurp(path, &n);
    CHECK(text && n == 6 && !memcmp(text, "second", 6));
    free(text);
    CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0640);
    CHECK(entries(dir) == 1); /* no temporary file left */
    /* a symlink to a regular file in another folder: the file there is replaced, the link stays a link */
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(target, sizeof target, "%s/sub/real.json", dir);
    snprintf(link, sizeof link, "%s/link.json", dir);
    CHECK(mkdir(sub, 0700) == 0 && gt_fixture_write(target, "x", 1) == 0 && symlink("sub/real.json", link) == 0);
    CHECK_MSG(gt_file_write(link, "through", 7, err, sizeof err) == 0, "%s", err);
    CHECK(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode));
    text = gt_fixture_slurp(target, &n);
    CHECK(text && n == 7 && !memcmp(text, "through", 7));
    free(text);
    CHECK(entries(dir) == 3 && entries(sub) == 1);
    umask(mask);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    free(dir);
}

GT_TEST(files_write_never_replaces_a_device_or_fifo, GT_NEEDS_NONE)
{
    char *dir = gt_tmp_path("_d"), fifo[600], link[600], devlink[600], got[600];
    struct stat sb;
    CHECK(mkdir(dir, 0700) == 0);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(link, sizeof link, "%s/to-fifo", dir);
    snprintf(devlink, sizeof devlink, "%s/to-null", dir);
    snprintf(got, sizeof got, "%s/got", dir);
    CHECK(mkfifo(fifo, 0600) == 0 && symlink(fifo, link) == 0 && symlink("/dev/null", devlink) == 0);
    /* a reader on the FIFO (through the symlink to it): the bytes go through, the FIFO stays one */
    pid_t pid = fork();
    if (pid == 0) {
        char buf[64] = "";
        int fd = open(fifo, O_RDONLY);
        ssize_t r = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        _exit(r == 5 && !memcmp(buf, "piped", 5) ? 0 : 1);
    }
    CHECK_MSG(gt_file_write(link, "piped", 5, err, sizeof err) == 0, "%s", err);
    int st = -1;
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    CHECK(lstat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode) && lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode));
    CHECK_MSG(gt_file_write(devlink, "gone", 4, err, sizeof err) == 0, "%s", err);
    CHECK(lstat(devlink, &sb) == 0 && S_ISLNK(sb.st_mode) && stat("/dev/null", &sb) == 0 && S_ISCHR(sb.st_mode));
    /* refused: a directory, a symlink to nothing (it is not followed, nothing is created) */
    CHECK(gt_file_write(dir, "x", 1, err, sizeof err) < 0 && strstr(err, "a directory"));
    char dangling[600], where[600];
    snprintf(dangling, sizeof dangling, "%s/dangling", dir);
    snprintf(where, sizeof where, "%s/created-through-link", dir);
    CHECK(symlink(where, dangling) == 0);
    CHECK(gt_file_write(dangling, "x", 1, err, sizeof err) < 0 && strstr(err, "symbolic link to nothing"));
    CHECK(access(where, F_OK) != 0);
    CHECK(entries(dir) == 4);
    /* /dev/stdout is this process's descriptor 1: written through it (here into a file, at its offset) */
    int saved = dup(1), fd = open(got, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    fflush(stdout);
    dup2(fd, 1);
    CHECK(write(1, "before ", 7) == 7);
    int rc = gt_file_write("/dev/stdout", "after", 5, err, sizeof err);
    dup2(saved, 1), close(saved), close(fd);
    size_t n;
    unsigned char *text = gt_fixture_slurp(got, &n);
    CHECK_MSG(rc == 0 && text && n == 12 && !memcmp(text, "before after", 12), "%d %s", rc, err);
    free(text);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    free(dir);
}

/* The old writer used "<file>.tmp<pid>": a symlink planted under that name made the write land elsewhere. */
GT_TEST(files_write_follows_no_planted_name_and_leaves_nothing_on_failure, GT_NEEDS_NONE)
{
    char *dir = gt_tmp_path("_p"), path[600], plant[700], victim[600];
    size_t n;
    CHECK(mkdir(dir, 0700) == 0);
    snprintf(path, sizeof path, "%s/out.json", dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    CHECK(gt_fixture_write(victim, "precious", 8) == 0);
    snprintf(plant, sizeof plant, "%s.tmp%d", path, (int)getpid());
    CHECK(symlink(victim, plant) == 0);
    for (int i = 0; i < 8; ++i) { /* and the names mkstemp might pick are not guessable; plant a few anyway */
        snprintf(plant, sizeof plant, "%s/.out.json.%06d", dir, i);
        CHECK(symlink(victim, plant) == 0);
    }
    CHECK_MSG(gt_file_write(path, "mine", 4, err, sizeof err) == 0, "%s", err);
    unsigned char *text = gt_fixture_slurp(victim, &n);
    CHECK(text && n == 8 && !memcmp(text, "precious", 8));
    free(text);
    CHECK(entries(dir) == 11);
    /* a folder that is not there: an error naming the path, nothing made */
    snprintf(path, sizeof path, "%s/no-such-folder/x.json", dir);
    CHECK(gt_file_write(path, "x", 1, err, sizeof err) < 0 && strstr(err, "cannot write") && strstr(err, path));
    snprintf(path, sizeof path, "%s/", dir);
    CHECK(gt_file_write(path, "x", 1, err, sizeof err) < 0);
    CHECK(entries(dir) == 11);
    /* a read-only target is not replaced by a user who may not write it (root may) */
    snprintf(path, sizeof path, "%s/ro.json", dir);
    CHECK(gt_fixture_write(path, "ro", 2) == 0 && chmod(path, 0444) == 0);
    int rc = gt_file_write(path, "rw", 2, err, sizeof err);
    text = gt_fixture_slurp(path, &n);
    CHECK(geteuid() == 0 ? rc == 0 && n == 2 && !memcmp(text, "rw", 2)
                         : rc < 0 && strstr(err, "Permission denied") && n == 2 && !memcmp(text, "ro", 2));
    free(text);
    CHECK(entries(dir) == 12);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    free(dir);
}
