/* The NVRTC compile pool of the test toolkit (tests/toolkit.h): one thread per core, costliest compiles first so
 * no core idles at the end, progress every 10 s, the GT_SAMPLE spread sample for sanitizer runs, and each kernel
 * compiled once per process (a memo by kernel id and arch). */
#include "compile.h"
#include "harness.h"
#include "toolkit.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

gt_compile_job gt_compile_job_make(const gt_family *f, const gt_params *p, int ta, int tb)
{
    gt_compile_job j;
    memset(&j, 0, sizeof j);
    j.f = f, j.p = *p, j.ta = ta, j.tb = tb;
    j.rc = -2, j.regs = j.spill_bytes = -1;
    return j;
}

typedef struct {
    gt_compile_job *jobs;
    int n, cap;
} job_list;

/* 1 when p and q differ in launch-only params alone. */
static int same_kernel(const gt_family *f, const gt_params *p, const gt_params *q)
{
    for (int i = 0; i < f->nparams; ++i)
        if (!f->params[i].launch_only && p->v[i] != q->v[i]) return 0;
    return 1;
}

/* One job per kernel: candidates that differ in a launch-only param alone share a source (gt_render), as a
 * sweep's compile pool shares it. */
static int add_job(const gt_family *f, const gt_params *p, void *ctx)
{
    job_list *l = ctx;
    for (int i = l->n - 1; i >= 0 && l->jobs[i].f == f; --i)
        if (same_kernel(f, &l->jobs[i].p, p)) return 0;
    if (l->n == l->cap) l->jobs = realloc(l->jobs, (l->cap = l->cap ? 2 * l->cap : 256) * sizeof *l->jobs);
    l->jobs[l->n++] = gt_compile_job_make(f, p, 0, 0);
    return 0;
}

gt_compile_job *gt_compile_default_space(const char *arch, int *n)
{
    gt_limits lim;
    job_list l = {NULL, 0, 0};
    gt_limits_for_arch(arch, &lim);
    for (int i = 0; i < gt_family_count(); ++i)
        if (!gt_family_at(i)->test_only && gt_family_at(i)->build == GT_BUILD_NVRTC)
            gt_enumerate(gt_family_at(i), &lim, add_job, &l);
    *n = l.n;
    return l.jobs;
}

static int has_symbol(const gt_cubin *c, const char *sym)
{
    return c->data && memmem(c->data, c->size, sym, strlen(sym)) != NULL;
}

/* What this process has compiled, by kernel id and arch: NVRTC gives one source the same result every time, so
 * a kernel that several tests compile (the NVRTC test's every default candidate, a family's own layouts) is
 * compiled once per run of the tests. */
typedef struct {
    char id[17], arch[24];
    gt_compile_job result;
} memo_entry;
static struct {
    pthread_mutex_t mu;
    memo_entry *v;
    int n, cap;
} memo = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

/* Copies the remembered result of (id, arch) into j's outcome fields: 1, or 0 when there is none. */
static int memo_get(const char *id, const char *arch, gt_compile_job *j)
{
    int hit = 0;
    pthread_mutex_lock(&memo.mu);
    for (int i = 0; i < memo.n && !hit; ++i)
        if (!strcmp(memo.v[i].id, id) && !strcmp(memo.v[i].arch, arch)) {
            const gt_compile_job *r = &memo.v[i].result;
            j->rc = r->rc, j->regs = r->regs, j->spill_bytes = r->spill_bytes, j->stack_bytes = r->stack_bytes;
            j->seconds = r->seconds, j->has_gemm = r->has_gemm, j->has_reduce = r->has_reduce;
            memcpy(j->err, r->err, sizeof j->err);
            hit = 1;
        }
    pthread_mutex_unlock(&memo.mu);
    return hit;
}

static void memo_put(const char *id, const char *arch, const gt_compile_job *j)
{
    pthread_mutex_lock(&memo.mu);
    if (memo.n == memo.cap) {
        memo_entry *grown = realloc(memo.v, (size_t)(memo.cap = memo.cap ? 2 * memo.cap : 512) * sizeof *grown);
        if (grown) memo.v = grown;
        else memo.cap = memo.n;
    }
    if (memo.n < memo.cap) {
        memo_entry *e = &memo.v[memo.n++];
        snprintf(e->id, sizeof e->id, "%s", id), snprintf(e->arch, sizeof e->arch, "%s", arch);
        e->result = *j;
    }
    pthread_mutex_unlock(&memo.mu);
}

static void compile_one(gt_compile_job *j, const char *arch)
{
    gt_cubin cb;
    char farch[24], id[17];
    memset(&cb, 0, sizeof cb);
    if (!strncmp(arch, "compute_", 8)) { /* PTX only: the family's arch with the virtual prefix (compute_90a) */
        char sm[20], fsm[20];
        snprintf(sm, sizeof sm, "sm_%.12s", arch + 8);
        gt_family_arch(j->f, sm, fsm, sizeof fsm);
        snprintf(farch, sizeof farch, "compute_%.12s", fsm + 3);
    } else {
        gt_family_arch(j->f, arch, farch, sizeof farch); /* sm_90a for an arch-specific family */
    }
    char *src = gt_render(j->f, &j->p, j->ta, j->tb, j->batch, j->err, sizeof j->err);
    if (src) gt_source_id(src, id);
    if (src && !j->keep && memo_get(id, farch, j)) {
        free(src);
        return;
    }
    j->rc = src ? gt_nvrtc_compile(src, farch, &cb, j->err, sizeof j->err) : -1;
    j->regs = cb.regs, j->spill_bytes = cb.spill_bytes, j->stack_bytes = cb.stack_bytes, j->seconds = cb.seconds;
    j->has_gemm = has_symbol(&cb, "gt_gemm"), j->has_reduce = has_symbol(&cb, "gt_splitk_reduce");
    if (src && !j->keep) memo_put(id, farch, j);
    if (j->keep) *(gt_cubin *)j->keep = cb;
    else gt_cubin_free(&cb);
    free(src);
}

/* Compile time follows the size of the unrolled per-thread tile: C elements per thread on a large shape. */
static double cost(const gt_compile_job *j)
{
    gt_shape s = {4096, 4096, 4096, j->ta, j->tb};
    gt_launch L;
    j->f->launch(&j->p, &s, GT_TEST_SMS, &L);
    const double threads = (double)L.block[0] * L.block[1] * L.block[2], tiles = (double)L.grid[0] * L.grid[1];
    return threads > 0 && tiles > 0 ? 4096.0 * 4096.0 / tiles / threads : 0;
}

typedef struct {
    gt_compile_job *jobs;
    const char *arch;
    int *order, n, next, done, failed;
    double busy; /* seconds spent compiling, all threads */
    pthread_mutex_t mu;
} pool;

static void *worker(void *vp)
{
    pool *q = vp;
    for (;;) {
        pthread_mutex_lock(&q->mu);
        const int i = q->next < q->n ? q->order[q->next++] : -1;
        pthread_mutex_unlock(&q->mu);
        if (i < 0) return NULL;
        compile_one(&q->jobs[i], q->arch);
        pthread_mutex_lock(&q->mu);
        q->done++, q->failed += q->jobs[i].rc != 0, q->busy += q->jobs[i].seconds;
        pthread_mutex_unlock(&q->mu);
    }
}

static const double *cost_key;

static int by_cost(const void *a, const void *b)
{
    const int x = *(const int *)a, y = *(const int *)b;
    return cost_key[x] != cost_key[y] ? (cost_key[x] < cost_key[y] ? 1 : -1) : x - y;
}

static int *costliest_first(const gt_compile_job *jobs, int n)
{
    int *order = malloc((n ? n : 1) * sizeof *order);
    double *c = malloc((n ? n : 1) * sizeof *c);
    for (int i = 0; i < n; ++i) order[i] = i, c[i] = cost(&jobs[i]);
    cost_key = c;
    qsort(order, n, sizeof *order, by_cost);
    free(c);
    return order;
}

/* CPU seconds this process has used, all threads. */
static double cpu_s(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

/* Wait for the workers, printing progress; the main thread compiles nothing. */
static void watch(pool *q)
{
    for (;;) {
        pthread_mutex_lock(&q->mu);
        const int done = q->done, failed = q->failed;
        pthread_mutex_unlock(&q->mu);
        if (done == q->n) return;
        gt_progress(done, q->n, failed, "compiled");
        nanosleep(&(struct timespec){0, 100000000}, NULL);
    }
}

int gt_compile_all(gt_compile_job *jobs, int n, const char *arch, const char *what)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int nthreads = cores < 1 ? 1 : cores > n ? (n ? n : 1) : (int)cores, started = 0;
    pool q = {jobs, arch, costliest_first(jobs, n), n, 0, 0, 0, 0, PTHREAD_MUTEX_INITIALIZER};
    pthread_t th[64];
    if (nthreads > 64) nthreads = 64;
    const double t0 = gt_now_s(), c0 = cpu_s();
    printf("    compiling %d %s for %s on %d threads\n", n, what, arch, nthreads);
    for (int t = 0; t < nthreads; ++t) started += pthread_create(&th[started], NULL, worker, &q) == 0;
    if (!started) worker(&q);
    watch(&q);
    for (int t = 0; t < started; ++t) pthread_join(th[t], NULL);
    const double wall = gt_now_s() - t0;
    printf("    %d compiled, %d failed in %.0f s (%.0f s of compiles), %.2f of %ld cores busy\n", n - q.failed,
           q.failed, wall, q.busy, wall > 0 ? (cpu_s() - c0) / wall : 0.0, cores);
    free(q.order);
    return q.failed;
}

/* The default space's size, counted once a process: enumerating it takes a good part of a second (several under
 * ASan, where every compiling test asks). */
static int space_size;
static pthread_once_t space_once = PTHREAD_ONCE_INIT;
static void count_space(void) { free(gt_compile_default_space("sm_90", &space_size)); }

int gt_sample_wanted(int n)
{
    const char *s = getenv("GT_SAMPLE");
    const int want = s ? atoi(s) : 0;
    if (want <= 0) return 0;
    pthread_once(&space_once, count_space);
    const int space = space_size;
    const int share = (int)((double)want * n / (space > 0 ? space : 1) + 0.5);
    return share < 1 ? 1 : share;
}

/* Keep q of the family's jobs [s, e): the first, the last and evenly spaced ones; print their indices. */
static int keep_spread(gt_compile_job *jobs, int s, int e, int q, int out)
{
    const int size = e - s;
    char line[1024];
    int w = snprintf(line, sizeof line, "      %-10s %d of %d:", jobs[s].f->name, q, size);
    for (int k = 0; k < q; ++k) {
        const int idx = q == 1 ? 0 : (int)((double)k * (size - 1) / (q - 1) + 0.5);
        jobs[out++] = jobs[s + idx];
        if (w < (int)sizeof line - 16) w += snprintf(line + w, sizeof line - w, " #%d", idx);
    }
    printf("%s\n", line);
    return out;
}

int gt_sample_jobs(gt_compile_job *jobs, int n, int want)
{
    if (want <= 0 || want >= n) return n;
    printf("    a spread sample of about %d of the %d compiles (indices in each family's order):\n", want,
           n);
    int out = 0;
    for (int s = 0, e; s < n; s = e) {
        for (e = s; e < n && jobs[e].f == jobs[s].f; ++e) {}
        int q = (int)((double)want * (e - s) / n + 0.5);
        q = q < 2 ? 2 : q;
        out = keep_spread(jobs, s, e, q > e - s ? e - s : q, out);
    }
    return out;
}

/* The register cap __launch_bounds__(NT, MINB) sets: the register file shared by MINB blocks, at most 255. */
int gt_compile_reg_cap(const gt_compile_job *j)
{
    gt_launch L;
    gt_shape s = {1024, 1024, 1024, j->ta, j->tb};
    j->f->launch(&j->p, &s, GT_TEST_SMS, &L);
    const int cap = 65536 / (int)(L.block[0] * gt_param_get(j->f, &j->p, "MINB", 1));
    return cap < 255 ? cap : 255;
}

void gt_compile_all_clean(gt_compile_job *jobs, int n, const char *arch, const char *what)
{
    n = gt_sample_jobs(jobs, n, gt_sample_wanted(n));
    gt_compile_all(jobs, n, arch, what);
    for (int i = 0; i < n; ++i) {
        const gt_compile_job *j = &jobs[i];
        const char *lay = gt_layout_name(j->ta, j->tb);
        char name[256];
        gt_params_format(j->f, &j->p, name, sizeof name);
        CHECK_MSG(j->rc == 0, "%s %s %s %s: %s", arch, j->f->name, name, lay, j->err);
        if (j->rc) continue;
        /* A stream-K kernel at the register file's 255 may keep a few per-thread constants in local memory from one
         * tile to the next (tf32x3wg's 128 x 128 blocks: 88-112 B of spill traffic, a 24-32 B stack, reloaded once
         * a tile, none in the k loop's steady path); every other kernel, none. */
        const int at_cap = gt_param_get(j->f, &j->p, "SK", 0) > 0 && j->regs >= 255;
        CHECK_MSG(j->spill_bytes <= (at_cap ? 128 : 0) && j->stack_bytes <= (at_cap ? 32 : 0),
                  "%s %s %s: %d B spills, %d B stack", arch, name, lay, j->spill_bytes, j->stack_bytes);
        const int cap = gt_compile_reg_cap(j);
        CHECK_MSG(j->regs > 0 && j->regs <= cap, "%s %s %s: %d registers over %d", arch, name, lay, j->regs, cap);
        CHECK(j->has_gemm && j->has_reduce == (gt_param_get(j->f, &j->p, "SPLITK", 1) > 1));
        printf("    %s %s %s %s: %d registers\n", arch, j->f->name, name, lay, j->regs);
    }
}
