/* Test runner: runs the registered tests whose needs this machine meets and prints `N passed, N failed, N skipped`.
 *   gt_tests --cpu      tests needing nothing or only NVRTC (make test)
 *   gt_tests --gpu      tests needing a GPU; each skips with a line when there is none (make gpu-test)
 *   gt_tests --all      both;  trailing words keep only tests whose name contains one of them
 * It finds the CLI and the source tree from its own path, so it runs from any directory, and gives the run one
 * temporary folder that it removes on exit (also on SIGINT, SIGTERM, SIGHUP). */
#include "harness.h"
#include "worker.h"

#include <cuda_runtime_api.h>
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static gt_test *head;
static int cur_failed, cur_skipped;
static double test_t0, progress_last, progress_every = 10; /* $GT_PROGRESS_S overrides the 10 s */
static pthread_mutex_t progress_mu = PTHREAD_MUTEX_INITIALIZER;
static char build_dir[4096], src_root[4096], tmp_dir[4096];
static pid_t tmp_owner;

void gt_test_register(gt_test *t)
{
    gt_test **p = &head; /* keep sorted by file then name so runs are stable */
    while (*p && (strcmp((*p)->file, t->file) < 0 || (!strcmp((*p)->file, t->file) && strcmp((*p)->name, t->name) < 0)))
        p = &(*p)->next;
    t->next = *p;
    *p = t;
}

void gt_check_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("    check failed at %s:%d: ", file, line);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    cur_failed++;
}

void gt_skip(const char *why)
{
    printf("    skipped: %s\n", why);
    cur_skipped = 1;
}

int gt_test_gpu_count(void)
{
    static int n = -1;
    if (n < 0 && cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
    return n;
}

const char *gt_build_dir(void) { return build_dir; }
const char *gt_src_root(void) { return src_root; }
const char *gt_tmp_dir(void) { return tmp_dir; }

char *gt_tmp_path(const char *suffix)
{
    static atomic_int serial;
    char *out = malloc(strlen(tmp_dir) + strlen(suffix) + 16);
    sprintf(out, "%s/%d%s", tmp_dir, atomic_fetch_add(&serial, 1), suffix);
    return out;
}

int gt_runf(char **out, const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    free(*out);
    *out = NULL;
    int rc = gt_run(cmd, out);
    if (!*out) *out = strdup("");
    return rc;
}

int gt_run(const char *cmd, char **output)
{
    char *full = malloc(strlen(cmd) + 16);
    sprintf(full, "(%s) 2>&1", cmd);
    FILE *p = popen(full, "r");
    free(full);
    if (!p) return -1;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + len, 1, cap - len - 1, p)) > 0)
        if ((len += got) + 1 == cap) buf = realloc(buf, cap *= 2);
    buf[len] = '\0';
    int st = pclose(p);
    if (output) *output = buf;
    else free(buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

void gt_progress(int done, int total, int failed, const char *what)
{
    pthread_mutex_lock(&progress_mu);
    const double t = gt_now_s();
    if (t - progress_last >= progress_every) {
        progress_last = t;
        printf("    %d/%d %s, %d failed, %.0f s\n", done, total, what, failed, t - test_t0);
    }
    pthread_mutex_unlock(&progress_mu);
}

/* The folder of this executable, and the nearest folder at or above it that holds tests/harness.h. */
static int find_paths(void)
{
    ssize_t n = readlink("/proc/self/exe", build_dir, sizeof build_dir - 1);
    if (n <= 0) return fprintf(stderr, "gt_tests: cannot read /proc/self/exe: %s\n", strerror(errno)), -1;
    build_dir[n] = '\0';
    *strrchr(build_dir, '/') = '\0';
    snprintf(src_root, sizeof src_root, "%s", build_dir);
    for (;;) {
        char probe[4200];
        snprintf(probe, sizeof probe, "%s/tests/harness.h", src_root);
        if (access(probe, R_OK) == 0) return 0;
        char *slash = strrchr(src_root, '/');
        if (!slash || slash == src_root)
            return fprintf(stderr, "gt_tests: no source tree (tests/harness.h) at or above %s\n", build_dir), -1;
        *slash = '\0';
    }
}

static int unlock_dir(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)ftw;
    if (type == FTW_D) chmod(path, sb->st_mode | S_IRWXU); /* a test may leave a folder read-only */
    return 0;
}

static int remove_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb, (void)type, (void)ftw;
    remove(path);
    return 0;
}

/* Only the process that made the folder removes it: forked children exit through here too. */
static void remove_tmp_dir(void)
{
    if (getpid() != tmp_owner || !tmp_dir[0]) return;
    nftw(tmp_dir, unlock_dir, 16, FTW_PHYS);
    nftw(tmp_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void on_signal(int sig)
{
    remove_tmp_dir();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* One folder for every file of this run, under $TMPDIR (else /tmp); commands the tests start get it as $TMPDIR. */
static int make_tmp_dir(void)
{
    const char *base = getenv("TMPDIR");
    if (!base || base[0] != '/' || strlen(base) > 256) base = "/tmp";
    snprintf(tmp_dir, sizeof tmp_dir, "%s/gt_tests.XXXXXX", base);
    if (!mkdtemp(tmp_dir)) return fprintf(stderr, "gt_tests: mkdtemp %s: %s\n", tmp_dir, strerror(errno)), -1;
    chmod(tmp_dir, 0755); /* the read-only database tests run the CLI as another user (nobody) inside it */
    tmp_owner = getpid();
    atexit(remove_tmp_dir);
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (int i = 0; i < 3; ++i) signal(sigs[i], on_signal);
    return 0;
}

static int setup(void)
{
    char cli[4200];
    if (find_paths() || make_tmp_dir()) return -1;
    snprintf(cli, sizeof cli, "%s/gemmtune", build_dir);
    setenv("GT_TEST_CLI", cli, 1);
    setenv("GT_TEST_ROOT", src_root, 1);
    setenv("GT_TEST_BUILD", build_dir, 1);
    setenv("TMPDIR", tmp_dir, 1);
    snprintf(cli, sizeof cli, "%s/config", tmp_dir); /* the cubin cache's key (src/lib/trust.h): the run's own */
    setenv("XDG_CONFIG_HOME", cli, 1);
    if (getenv("GT_PROGRESS_S") && atof(getenv("GT_PROGRESS_S")) > 0) progress_every = atof(getenv("GT_PROGRESS_S"));
    return 0;
}

static int wanted(const gt_test *t, int want_cpu, int want_gpu, int nfilter, char **filter)
{
    if (t->needs == GT_NEEDS_GPU ? !want_gpu : !want_cpu) return 0;
    if (!nfilter) return 1;
    for (int i = 0; i < nfilter; ++i)
        if (strstr(t->name, filter[i])) return 1;
    return 0;
}

/* Runs one test; returns 0 passed, 1 failed, 2 skipped. */
static int run_one(gt_test *t)
{
    printf("[ RUN  ] %s\n", t->name);
    cur_failed = cur_skipped = 0;
    test_t0 = progress_last = gt_now_s();
    if (t->needs == GT_NEEDS_GPU && gt_test_gpu_count() == 0) gt_skip("no CUDA device on this machine");
    else t->fn();
    const double s = gt_now_s() - test_t0;
    if (cur_failed) return printf("[ FAIL ] %s (%d checks, %.1f s)\n", t->name, cur_failed, s), 1;
    if (cur_skipped) return printf("[ SKIP ] %s\n", t->name), 2;
    return printf("[  OK  ] %s (%.1f s)\n", t->name, s), 0;
}

/* --shard I/N: the I-th of N parts of the wanted tests (tests/shards.sh runs the parts at once). The tests of each
 * kind (gt_needs: the compiling ones are the long ones) are dealt out in turn, so every part gets its share. */
static int parse_shard(const char *v, int *i, int *n)
{
    char tail;
    return sscanf(v, "%d/%d%c", i, n, &tail) == 2 && *n >= 1 && *n <= 64 && *i >= 0 && *i < *n ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "__worker")) return gt_worker_main(argc, argv);
    int want_cpu = 1, want_gpu = 0, count[3] = {0}, argi = 1, shard = 0, shards = 1, dealt[3] = {0};
    if (argi < argc && !strcmp(argv[argi], "--cpu")) argi++;
    else if (argi < argc && !strcmp(argv[argi], "--gpu")) want_cpu = 0, want_gpu = 1, argi++;
    else if (argi < argc && !strcmp(argv[argi], "--all")) want_gpu = 1, argi++;
    if (argi < argc && !strcmp(argv[argi], "--shard")) {
        if (argi + 1 >= argc || parse_shard(argv[argi + 1], &shard, &shards))
            return fprintf(stderr, "gt_tests: --shard wants I/N, 0 <= I < N <= 64\n"), 2;
        argi += 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (setup()) return 1;
    for (gt_test *t = head; t; t = t->next)
        if (wanted(t, want_cpu, want_gpu, argc - argi, argv + argi) && dealt[t->needs]++ % shards == shard)
            count[run_one(t)]++;
    printf("%d passed, %d failed, %d skipped\n", count[0], count[1], count[2]);
    return count[1] ? 1 : 0;
}
