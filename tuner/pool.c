/* The sweep's compile pool (see pool.h): a job list guarded by one mutex, worker threads taking the wanted job
 * that was asked for first. */
#include "pool.h"
#include "cubin.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    gt_pool_job pub;
    char *src;
    char arch[20]; /* what the source compiles for: the pool's arch, or its "a" variant (gt_family_arch) */
    int state;   /* 0 queued, 1 compiling, 2 done */
    long wanted; /* 0, or the order in which trials asked for it: only wanted jobs compile, first asked first */
} job;

struct gt_pool {
    gt_db *db;
    char arch[16];
    gt_compile_fn compile;
    job *jobs;
    int njobs, cap, stop, nthreads;
    long want_seq;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t *threads;
};

static void compile_job(gt_pool *p, job *j)
{
    j->pub.rc = p->compile(j->src, j->arch, &j->pub.cb, j->pub.err, sizeof j->pub.err);
    if (j->pub.rc > 0 && j->pub.cb.log) snprintf(j->pub.err, sizeof j->pub.err, "%.500s", j->pub.cb.log);
}

static int next_wanted(const gt_pool *p)
{
    int i = -1;
    for (int k = 0; k < p->njobs; ++k)
        if (p->jobs[k].state == 0 && p->jobs[k].wanted && (i < 0 || p->jobs[k].wanted < p->jobs[i].wanted)) i = k;
    return i;
}

static void *compile_thread(void *arg)
{
    gt_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    while (!p->stop) {
        int i = next_wanted(p);
        if (i < 0) {
            pthread_cond_wait(&p->cv, &p->mu);
            continue;
        }
        p->jobs[i].state = 1;
        job copy = p->jobs[i]; /* the array may grow while we compile: work on a copy */
        pthread_mutex_unlock(&p->mu);
        compile_job(p, &copy);
        pthread_mutex_lock(&p->mu);
        p->jobs[i].pub = copy.pub;
        p->jobs[i].state = 2;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

gt_pool *gt_pool_new(gt_db *db, const char *arch, gt_compile_fn compile, int threads)
{
    gt_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->db = db;
    snprintf(p->arch, sizeof p->arch, "%s", arch);
    p->compile = compile ? compile : gt_nvrtc_compile;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->threads = threads > 0 ? calloc((size_t)threads, sizeof *p->threads) : NULL;
    for (int i = 0; p->threads && i < threads; ++i)
        if (pthread_create(&p->threads[i], NULL, compile_thread, p) == 0) p->nthreads = i + 1;
        else break;
    return p;
}

void gt_pool_free(gt_pool *p, int *compiled)
{
    if (compiled) *compiled = 0;
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->nthreads; ++i) pthread_join(p->threads[i], NULL);
    for (int i = 0; i < p->njobs; ++i) {
        if (compiled) *compiled += !p->jobs[i].pub.cached && p->jobs[i].state == 2;
        free(p->jobs[i].src);
        gt_cubin_free(&p->jobs[i].pub.cb);
    }
    free(p->jobs);
    free(p->threads);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p);
}

static int find(const gt_pool *p, const char *hash)
{
    for (int i = 0; i < p->njobs; ++i)
        if (!strcmp(p->jobs[i].pub.hash, hash)) return i;
    return -1;
}

/* From the cache: same source hash, arch, compiler version and options. */
static void from_cache(gt_pool *p, job *j)
{
    char err[256];
    int found = 0;
    if (gt_cubin_cache_get(p->db, j->pub.hash, j->arch, &j->pub.cb, &found, err, sizeof err) == 0 && found) {
        j->pub.cached = j->pub.stored = 1;
        j->state = 2;
    }
}

int gt_pool_add(gt_pool *p, const gt_family *f, const gt_params *par, int variant, char hash[17], int *cache_hit,
                char *err, size_t errlen)
{
    char *src;
    *cache_hit = 0;
    if (gt_kernel_id(f, par, variant >> 1 & 1, variant & 1, variant >> 2 & 1, hash, &src, err, errlen)) return -1;
    pthread_mutex_lock(&p->mu);
    int idx = find(p, hash);
    if (idx < 0 && p->njobs == p->cap) {
        job *grown = realloc(p->jobs, (size_t)(p->cap = p->cap ? p->cap * 2 : 256) * sizeof *grown);
        if (grown) p->jobs = grown;
        else p->cap = p->njobs;
    }
    if (idx < 0 && p->njobs < p->cap) {
        job *j = &p->jobs[idx = p->njobs++];
        memset(j, 0, sizeof *j);
        j->src = src;
        gt_family_arch(f, p->arch, j->arch, sizeof j->arch);
        src = NULL;
        memcpy(j->pub.hash, hash, 17);
        if (p->db) from_cache(p, j);
        *cache_hit = j->pub.cached;
    }
    pthread_mutex_unlock(&p->mu);
    free(src);
    if (idx < 0) snprintf(err, errlen, "out of memory");
    return idx;
}

void gt_pool_want(gt_pool *p, const int *jobs, int n)
{
    pthread_mutex_lock(&p->mu);
    for (int i = 0; i < n; ++i)
        if (jobs[i] >= 0 && !p->jobs[jobs[i]].wanted) p->jobs[jobs[i]].wanted = ++p->want_seq;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

void gt_pool_unwant(gt_pool *p, const int *jobs, int n)
{
    pthread_mutex_lock(&p->mu);
    for (int i = 0; i < n; ++i)
        if (jobs[i] >= 0 && p->jobs[jobs[i]].state == 0) p->jobs[jobs[i]].wanted = 0;
    pthread_mutex_unlock(&p->mu);
}

const gt_pool_job *gt_pool_wait(gt_pool *p, int idx, double *waited_s)
{
    gt_pool_want(p, &idx, 1);
    double t0 = gt_now_s();
    pthread_mutex_lock(&p->mu);
    if (p->nthreads == 0 && p->jobs[idx].state == 0) { /* no pool could be started: compile here */
        p->jobs[idx].state = 1;
        compile_job(p, &p->jobs[idx]);
        p->jobs[idx].state = 2;
    }
    while (p->jobs[idx].state != 2) pthread_cond_wait(&p->cv, &p->mu);
    const gt_pool_job *j = &p->jobs[idx].pub;
    pthread_mutex_unlock(&p->mu);
    if (waited_s) *waited_s += gt_now_s() - t0;
    return j;
}

int gt_pool_wait_any(gt_pool *p, const int *jobs, int n, double *waited_s)
{
    double t0 = gt_now_s();
    int found = -1;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        int pending = 0;
        for (int i = 0; i < n && found < 0; ++i)
            if (jobs[i] >= 0 && p->jobs[jobs[i]].state == 2) found = i;
            else pending += jobs[i] >= 0 && p->jobs[jobs[i]].wanted;
        if (found >= 0 || !pending || p->nthreads == 0) break;
        pthread_cond_wait(&p->cv, &p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    if (waited_s) *waited_s += gt_now_s() - t0;
    return found;
}

int gt_pool_store(gt_pool *p, int idx, char *err, size_t errlen)
{
    int rc = 0;
    pthread_mutex_lock(&p->mu);
    job *jb = &p->jobs[idx];
    gt_pool_job *j = &jb->pub;
    if (!j->stored && j->rc == 0) {
        rc = gt_cubin_cache_put(p->db, j->hash, jb->arch, &j->cb, err, errlen);
        j->stored = rc == 0;
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

void gt_pool_store_compiled(gt_pool *p)
{
    char err[256];
    for (int i = 0, n = gt_pool_count(p); i < n; ++i) {
        pthread_mutex_lock(&p->mu);
        const int done = p->jobs[i].state == 2;
        pthread_mutex_unlock(&p->mu);
        if (done) (void)gt_pool_store(p, i, err, sizeof err); /* it stores once, and only what compiled */
    }
}

int gt_pool_count(gt_pool *p)
{
    pthread_mutex_lock(&p->mu);
    const int n = p->njobs;
    pthread_mutex_unlock(&p->mu);
    return n;
}

int gt_pool_cached(gt_pool *p, int idx)
{
    pthread_mutex_lock(&p->mu);
    const int c = p->jobs[idx].pub.cached;
    pthread_mutex_unlock(&p->mu);
    return c;
}

int gt_pool_ready(gt_pool *p, int idx)
{
    pthread_mutex_lock(&p->mu);
    const int r = p->jobs[idx].state == 2; /* a cache hit is done when it is added */
    pthread_mutex_unlock(&p->mu);
    return r;
}
