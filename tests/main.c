/* Test runner: runs the registered tests whose needs this machine meets and prints `N passed, N failed, N skipped`.
 *   gt_tests --cpu      tests needing nothing or only NVRTC (make test)
 *   gt_tests --gpu      tests needing a GPU; each skips with a line when there is none (make gpu-test)
 *   gt_tests --all      both;  trailing words keep only tests whose name contains one of them */
#include "harness.h"
#include "worker.h"

#include <cuda_runtime_api.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static gt_test *head;
static int cur_failed, cur_skipped;

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

char *gt_tmp_path(const char *suffix)
{
    char tmpl[] = "/tmp/gt_test_XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd >= 0) close(fd), unlink(tmpl);
    char *out = malloc(strlen(tmpl) + strlen(suffix) + 1);
    strcpy(out, tmpl);
    strcat(out, suffix);
    return out;
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

static int wanted(const gt_test *t, int want_cpu, int want_gpu, int nfilter, char **filter)
{
    if (t->needs == GT_NEEDS_GPU ? !want_gpu : !want_cpu) return 0;
    if (!nfilter) return 1;
    for (int i = 0; i < nfilter; ++i)
        if (strstr(t->name, filter[i])) return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "__worker")) return gt_worker_main(argc, argv);
    int want_cpu = 1, want_gpu = 0, passed = 0, failed = 0, skipped = 0, argi = 1;
    if (argi < argc && !strcmp(argv[argi], "--cpu")) argi++;
    else if (argi < argc && !strcmp(argv[argi], "--gpu")) want_cpu = 0, want_gpu = 1, argi++;
    else if (argi < argc && !strcmp(argv[argi], "--all")) want_gpu = 1, argi++;
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (gt_test *t = head; t; t = t->next) {
        if (!wanted(t, want_cpu, want_gpu, argc - argi, argv + argi)) continue;
        printf("[ RUN  ] %s\n", t->name);
        cur_failed = cur_skipped = 0;
        if (t->needs == GT_NEEDS_GPU && gt_test_gpu_count() == 0) gt_skip("no CUDA device on this machine");
        else t->fn();
        if (cur_failed) printf("[ FAIL ] %s (%d checks)\n", t->name, cur_failed), failed++;
        else if (cur_skipped) printf("[ SKIP ] %s\n", t->name), skipped++;
        else printf("[  OK  ] %s\n", t->name), passed++;
    }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
