/* `gemmtune exec [options] -- CMD ARGS...`: run an unmodified program with the cuBLAS drop-in preloaded
 * (libgemmtune_cublas.so beside this binary, or in ../lib when installed) and the environment the options say,
 * then tell what it served, what it forwarded and why, and what it recorded. The convention is `nsys profile CMD`.
 * Tested by tests/test_exec.c (a stand-in cuBLAS, no GPU). */
#include "cli.h"
#include "files.h"
#include "options.h"
#include "term.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: gemmtune exec [options] [--] CMD [ARGS...]\n\n"
                 "Runs CMD with libgemmtune_cublas.so preloaded, so its cuBLAS SGEMM calls (cublasSgemm_v2, FP32\n"
                 "cublasGemmEx, cublasSgemmStridedBatched, FP32 cublasLtMatmul) run the kernels tuned for this GPU,\n"
                 "and every other call goes to cuBLAS untouched. At the end it says how many calls were served,\n"
                 "forwarded and why, and what was recorded. The loop, from nothing:\n\n"
                 "  gemmtune exec --record calls.txt -- python3 train.py     # record the shapes it calls\n"
                 "  gemmtune tune --sizes @calls.txt --math all             # tune exactly those\n"
                 "  gemmtune exec --math tf32x3 -- python3 train.py         # run with the winners\n\n"
                 "The options come before CMD (or before --); CMD's own options follow it. Exit status: CMD's (128 + N\n"
                 "when signal N ended it), or 2 for bad arguments, 1 when CMD could not be run.\n\n");
    gt_cli_usage(out, GT_V_EXEC);
}

/* The index of CMD in argv: after "--", else the first word that is neither an option nor an option's value
 * (every exec option takes one). argc when there is none. */
static int command_index(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--")) return i + 1;
        if (argv[i][0] != '-' || !argv[i][1]) return i;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help") || strchr(argv[i], '=')) continue;
        if (i + 1 < argc && !strcmp(argv[i + 1], "--")) return i + 2; /* an option missing its value: the parse says */
        ++i; /* its value */
    }
    return argc;
}

/* libgemmtune_cublas.so beside this program (the build folder) or in ../lib (an install). 0, or -1 with err. */
static int find_preload(char *out, size_t n, char *err, size_t errlen)
{
    char self[PATH_MAX - 64];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) return snprintf(err, errlen, "cannot find this program's own path (/proc/self/exe)"), -1;
    self[len] = '\0';
    char *slash = strrchr(self, '/');
    *slash = '\0';
    static const char *const where[] = {"%s/libgemmtune_cublas.so", "%s/../lib/libgemmtune_cublas.so"};
    for (size_t i = 0; i < sizeof where / sizeof where[0]; ++i) {
        struct stat st;
        snprintf(out, n, where[i], self);
        if (stat(out, &st) == 0 && S_ISREG(st.st_mode)) return 0;
    }
    return snprintf(err, errlen, "libgemmtune_cublas.so is neither beside %.900s/gemmtune nor in its ../lib: build it "
                    "(make) or install it (make install)", self), -1;
}

/* name=value in the environment, value made absolute when it names a file (CMD may change directory). */
static int set_path(const char *name, const char *value, char *err, size_t errlen)
{
    char abs[PATH_MAX + 1];
    if (value[0] == '/' || !getcwd(abs, sizeof abs - 1)) snprintf(abs, sizeof abs, "%s", value);
    else snprintf(abs + strlen(abs), sizeof abs - strlen(abs), "/%s", value);
    if (setenv(name, abs, 1)) return snprintf(err, errlen, "setting %s: %s", name, strerror(errno)), -1;
    return 0;
}

/* The environment CMD runs in: the drop-in in LD_PRELOAD (after what is there already, which the user put first on
 * purpose: a preload comes before every library a program needs anyway), what the options say, the summary file. */
static int environment(const gt_cli_args *a, const char *lib, const char *summary, char *err, size_t errlen)
{
    const char *old = getenv("LD_PRELOAD");
    char *pre = malloc(strlen(lib) + (old ? strlen(old) : 0) + 2);
    if (!pre) return snprintf(err, errlen, "out of memory"), -1;
    sprintf(pre, "%s%s%s", old && *old ? old : "", old && *old ? ":" : "", lib);
    int rc = setenv("LD_PRELOAD", pre, 1) || setenv("GEMMTUNE_PRELOAD_SUMMARY", summary, 1) ? -1 : 0;
    free(pre);
    if (rc) return snprintf(err, errlen, "setting the environment: %s", strerror(errno)), -1;
    if (a->math && setenv("GEMMTUNE_MATH", a->math, 1)) return snprintf(err, errlen, "%s", strerror(errno)), -1;
    if (a->record && set_path("GEMMTUNE_RECORD", a->record, err, errlen)) return -1;
    if (a->db && set_path("GEMMTUNE_DB", a->db, err, errlen)) return -1;
    if (a->json && set_path("GEMMTUNE_JSON", a->json, err, errlen)) return -1;
    if (a->log && strcmp(a->log, "stderr") && set_path("GEMMTUNE_PRELOAD_LOG", a->log, err, errlen)) return -1;
    if (a->log && !strcmp(a->log, "stderr") && setenv("GEMMTUNE_PRELOAD_LOG", "stderr", 1))
        return snprintf(err, errlen, "%s", strerror(errno)), -1;
    return 0;
}

/* Run argv as a child and wait; the parent ignores the terminal's SIGINT and SIGQUIT meanwhile, as system() does,
 * so Ctrl-C reaches CMD and the summary is still printed. The exit status as a shell gives it, or -1. */
static int run_child(char **argv, char *err, size_t errlen)
{
    struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_quit;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGQUIT, &old_quit, NULL);
        execvp(argv[0], argv);
        gt_term_printf(stderr, "gemmtune exec: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int status = 0, rc = -1;
    if (pid < 0) snprintf(err, errlen, "fork: %s", strerror(errno));
    else if (waitpid(pid, &status, 0) < 0) snprintf(err, errlen, "waiting for %s: %s", argv[0], strerror(errno));
    else rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    return rc;
}

/* The summary's lines summed over processes: per entry point, the served calls, and the forwarded ones by reason. */
typedef struct {
    char api[40], reason[160];
    int served;
    unsigned long long calls;
} tally;

static int add_tally(tally *t, int *n, int cap, const char *api, int served, const char *reason,
                     unsigned long long calls)
{
    for (int i = 0; i < *n; ++i)
        if (t[i].served == served && !strcmp(t[i].api, api) && !strcmp(t[i].reason, reason))
            return t[i].calls += calls, 0;
    if (*n == cap) return -1;
    snprintf(t[*n].api, sizeof t[*n].api, "%s", api);
    snprintf(t[*n].reason, sizeof t[*n].reason, "%s", reason);
    t[*n].served = served, t[*n].calls = calls;
    return ++*n, 0;
}

/* Read the summary file's lines into t (at most cap); the count of entries. */
static int read_summary(const char *path, tally *t, int cap)
{
    char msg[256], *text = gt_file_read(path, GT_FILE_MAX_TEXT, NULL, msg, sizeof msg);
    int n = 0;
    for (char *line = text, *next; line && *line; line = next) {
        next = line + strcspn(line, "\n");
        if (*next) *next++ = '\0';
        char *f[6], *save = NULL;
        int k = 0;
        for (char *tok = strtok_r(line, "\t", &save); tok && k < 6; tok = strtok_r(NULL, "\t", &save)) f[k++] = tok;
        if (k == 5 && !strcmp(f[3], "served")) f[5] = f[4], f[4] = "", k = 6; /* an empty reason */
        if (k == 6 && !strcmp(f[0], "gemmtune-summary"))
            add_tally(t, &n, cap, f[2], !strcmp(f[3], "served"), f[4], strtoull(f[5], NULL, 10));
    }
    free(text);
    return n;
}

/* The recorded file's shapes, as `tune --sizes @FILE` will read them. */
static void report_record(FILE *out, const char *record)
{
    char msg[256], *text = gt_file_read(record, GT_FILE_MAX_TEXT, NULL, msg, sizeof msg);
    int shapes = 0, batched = 0;
    for (char *line = text; line && *line; line += strcspn(line, "\n"), line += *line == '\n') {
        gt_shape s;
        const char *end;
        if (gt_shape_parse_dims(line, INT_MAX, &s, &end) < 0 || *end != ':') continue; /* a comment */
        shapes++, batched += gt_shape_batch(&s) > 1;
    }
    if (!text) gt_term_printf(out, "  recorded: nothing in %s (%s)\n", record, msg);
    else gt_term_printf(out, "  recorded: %d shape%s (%d of them batched) in %s; tune them: gemmtune tune --sizes @%s "
                        "--math all\n", shapes, shapes == 1 ? "" : "s", batched, record, record);
    free(text);
}

void gt_exec_report(FILE *out, const char *cmd, const char *summary, const char *record)
{
    tally t[256];
    const int n = read_summary(summary, t, 256);
    unsigned long long served = 0, forwarded = 0;
    for (int i = 0; i < n; ++i) *(t[i].served ? &served : &forwarded) += t[i].calls;
    gt_term_printf(out, "gemmtune exec: %s: %llu cuBLAS GEMM calls served by gemmtune, %llu forwarded to cuBLAS\n",
                   cmd, served, forwarded);
    if (!n)
        gt_term_printf(out, "  no call reached the drop-in: the command made no cuBLAS SGEMM call, or loads cuBLAS "
                       "statically, or its children do not inherit LD_PRELOAD\n");
    for (int pass = 1; pass >= 0; --pass)
        for (int i = 0; i < n; ++i)
            if (t[i].served == pass)
                gt_term_printf(out, "  %-9s %10llu  %-26s%s%s\n", pass ? "served" : "forwarded", t[i].calls,
                               t[i].api, pass ? "" : "  ", t[i].reason);
    if (record) report_record(out, record);
}

int gt_cmd_exec(int argc, char **argv)
{
    char err[PATH_MAX + 1024], lib[PATH_MAX + 64], summary[256] = "/tmp/gemmtune-exec-XXXXXX";
    gt_cli_args a;
    gt_cli_args_init(&a);
    const int cmd = command_index(argc, argv);
    int rc = gt_cli_parse(GT_V_EXEC, cmd > 1 && !strcmp(argv[cmd - 1], "--") ? cmd - 1 : cmd, argv, &a, err, sizeof err);
    if (rc == 1) return gt_cli_args_free(&a), usage(stdout), 0;
    if (rc == 0 && a.npos) rc = -1, snprintf(err, sizeof err, "unexpected argument '%s' before the command", a.pos[0]);
    if (rc == 0 && cmd >= argc) rc = -1, snprintf(err, sizeof err, "no command to run: gemmtune exec [options] -- CMD [ARGS...]");
    if (rc == 0 && a.log && strcmp(a.log, "stderr")) rc = gt_cli_check_path("--log", a.log, err, sizeof err);
    if (rc < 0) {
        gt_term_printf(stderr, "gemmtune exec: %s\n", err);
        return gt_cli_args_free(&a), 2;
    }
    const char *tmp = getenv("TMPDIR");
    if (tmp && *tmp && strlen(tmp) < sizeof summary - 32)
        snprintf(summary, sizeof summary, "%.200s/gemmtune-exec-XXXXXX", tmp);
    int fd = find_preload(lib, sizeof lib, err, sizeof err) ? -1 : mkstemp(summary);
    if (fd < 0 && !err[0]) snprintf(err, sizeof err, "a temporary file for the summary: %s", strerror(errno));
    if (fd >= 0) close(fd);
    int status = fd < 0 || environment(&a, lib, summary, err, sizeof err) ? -1 : run_child(argv + cmd, err, sizeof err);
    if (status >= 0) gt_exec_report(stderr, argv[cmd], summary, a.record);
    if (fd >= 0) unlink(summary);
    if (status < 0) gt_term_printf(stderr, "gemmtune exec: %s\n", err);
    gt_cli_args_free(&a);
    return status < 0 ? 1 : status;
}
