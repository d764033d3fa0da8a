/* Worker processes: the parent side (spawn, request, watchdog, replace) and the child side (gt_worker_main).
 * Messages are fixed structs over two pipes; a trial request is followed by its cubin bytes. */
#include "worker.h"
#include "backend.h"
#include "kernel.h"
#include "measure.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { OP_INFO = 1, OP_BASELINE, OP_TRIAL, OP_CANDIDATES, OP_QUIT };

typedef struct {
    int op;
    char family[32];
    gt_params params;
    gt_shape shape, time_shape;
    gt_launch launch;
    int checks, warmup, reps;
    int pad_a, pad_b, pad_c;
    double cutoff_ms;
    int paired;
    unsigned long long seed;
    size_t cubin_size;
} msg_req;

typedef struct {
    int ok;              /* 0: the op failed before producing a verdict (message says why) */
    int dying;           /* the context is unusable: the worker exits after this reply */
    gt_trial_result r;
    gt_gpu_info gpu;
    gt_limits lim;
    int ncand;
    gt_params cand[GT_MAX_DEVICE_CANDIDATES];
} msg_resp;

struct gt_worker {
    int device;
    pid_t pid;
    int to_child, from_child;
    int restarts;
    gt_gpu_info gpu;
    gt_limits lim;
};

static int write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w, n -= (size_t)w;
    }
    return 0;
}

/* Read exactly n bytes before deadline (absolute, gt_now_s() clock; <= 0 means none). 0 ok, -1 EOF/error, -2 timeout. */
static int read_all(int fd, void *buf, size_t n, double deadline)
{
    char *p = buf;
    while (n) {
        if (deadline > 0) {
            double left = deadline - gt_now_s();
            if (left <= 0) return -2;
            struct pollfd pfd = {fd, POLLIN, 0};
            int pr = poll(&pfd, 1, (int)(left * 1000) + 1);
            if (pr < 0 && errno == EINTR) continue;
            if (pr == 0) return -2;
        }
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        p += r, n -= (size_t)r;
    }
    return 0;
}

/* ---- parent side ---- */

static void reap(gt_worker *w, char *why, size_t whylen)
{
    int st = 0;
    if (w->pid <= 0) return;
    kill(w->pid, SIGKILL);
    if (waitpid(w->pid, &st, 0) == w->pid && why) {
        if (WIFSIGNALED(st) && WTERMSIG(st) != SIGKILL)
            snprintf(why, whylen, "worker killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
        else if (WIFEXITED(st) && WEXITSTATUS(st))
            snprintf(why, whylen, "worker exited with status %d", WEXITSTATUS(st));
    }
    close(w->to_child);
    close(w->from_child);
    w->pid = -1;
}

static int spawn(gt_worker *w, char *err, size_t errlen)
{
    int down[2], up[2];
    char exe[4096], a_dev[16], a_in[16], a_out[16];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return snprintf(err, errlen, "cannot find this executable: %s", strerror(errno)), -1;
    exe[n] = '\0';
    if (pipe(down) || pipe(up)) return snprintf(err, errlen, "pipe: %s", strerror(errno)), -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return snprintf(err, errlen, "fork: %s", strerror(errno)), -1;
    if (pid == 0) {
        close(down[1]);
        close(up[0]);
        snprintf(a_dev, sizeof a_dev, "%d", w->device);
        snprintf(a_in, sizeof a_in, "%d", down[0]);
        snprintf(a_out, sizeof a_out, "%d", up[1]);
        execl(exe, exe, "__worker", a_dev, a_in, a_out, (char *)NULL);
        _exit(127);
    }
    close(down[0]);
    close(up[1]);
    fcntl(down[1], F_SETFD, FD_CLOEXEC);
    fcntl(up[0], F_SETFD, FD_CLOEXEC);
    w->pid = pid;
    w->to_child = down[1];
    w->from_child = up[0];
    /* The first reply is the device's identity, or why the worker could not open it. */
    msg_req q = {.op = OP_INFO};
    msg_resp r;
    int rc = write_all(w->to_child, &q, sizeof q) ? -1 : read_all(w->from_child, &r, sizeof r, gt_now_s() + 120);
    if (rc || !r.ok) {
        snprintf(err, errlen, "%s", rc ? "the worker process died while opening the GPU" : r.r.message);
        reap(w, NULL, 0);
        return -1;
    }
    w->gpu = r.gpu;
    w->lim = r.lim;
    return 0;
}

int gt_worker_start(int device, gt_worker **out, char *err, size_t errlen)
{
    gt_worker *w = calloc(1, sizeof *w);
    *out = NULL;
    if (!w) return snprintf(err, errlen, "out of memory"), -1;
    signal(SIGPIPE, SIG_IGN); /* a dead worker shows up as a failed write, not a dead parent */
    w->device = device;
    w->pid = -1;
    if (spawn(w, err, errlen)) {
        free(w);
        return -1;
    }
    *out = w;
    return 0;
}

void gt_worker_stop(gt_worker *w)
{
    if (!w) return;
    if (w->pid > 0) {
        msg_req q = {.op = OP_QUIT};
        write_all(w->to_child, &q, sizeof q);
        reap(w, NULL, 0);
    }
    free(w);
}

void gt_worker_info(const gt_worker *w, gt_gpu_info *gpu, gt_limits *lim)
{
    if (gpu) *gpu = w->gpu;
    if (lim) *lim = w->lim;
}

int gt_worker_restarts(const gt_worker *w) { return w->restarts; }

/* Send q (+ payload), wait for the reply until timeout. On death or timeout the worker is replaced and a
 * faulted/timeout verdict is written into r. Returns 0 with r filled, -1 if no worker could be restarted. */
static int transact(gt_worker *w, const msg_req *q, const void *payload, double timeout_s, msg_resp *r, char *err,
                    size_t errlen)
{
    if (w->pid <= 0 && spawn(w, err, errlen)) return -1;
    int rc = write_all(w->to_child, q, sizeof *q);
    if (!rc && q->cubin_size) rc = write_all(w->to_child, payload, q->cubin_size);
    if (!rc) rc = read_all(w->from_child, r, sizeof *r, gt_now_s() + timeout_s);
    if (!rc && !r->dying) return 0;
    if (rc) {
        memset(r, 0, sizeof *r);
        r->ok = 1;
        r->r.status = rc == -2 ? GT_ST_TIMEOUT : GT_ST_FAULTED;
        snprintf(r->r.message, sizeof r->r.message, rc == -2 ? "no result after %.1f s; worker killed" : "worker died",
                 timeout_s);
        r->r.median_ms = r->r.min_ms = r->r.max_ms = r->r.rel_err = -1;
    }
    char why[256] = "";
    reap(w, why, sizeof why);
    if (*why && rc == -1) snprintf(r->r.message, sizeof r->r.message, "%s", why);
    w->restarts++;
    return spawn(w, err, errlen) ? -1 : 0;
}

int gt_worker_baseline(gt_worker *w, const gt_shape *s, int warmup, int reps, double *median_ms, char *err,
                       size_t errlen)
{
    msg_req q = {.op = OP_BASELINE, .shape = *s, .warmup = warmup, .reps = reps};
    msg_resp r;
    if (transact(w, &q, NULL, 600, &r, err, errlen)) return -1;
    if (!r.ok || r.r.status != GT_ST_OK) {
        char dims[48];
        snprintf(err, errlen, "cuBLAS baseline on %s: %s", gt_shape_dims(s, dims, sizeof dims), r.r.message);
        return -1;
    }
    *median_ms = r.r.median_ms;
    return 0;
}

int gt_worker_candidates(gt_worker *w, const gt_family *f, const gt_shape *s, gt_params *out, int *n, char *err,
                         size_t errlen)
{
    msg_req q = {.op = OP_CANDIDATES, .shape = *s};
    msg_resp r;
    snprintf(q.family, sizeof q.family, "%s", f->name);
    *n = 0;
    if (transact(w, &q, NULL, 120, &r, err, errlen)) return -1;
    if (!r.ok || r.r.status != GT_ST_OK) {
        char dims[48];
        snprintf(err, errlen, "%s candidates for %s: %s", f->name, gt_shape_dims(s, dims, sizeof dims), r.r.message);
        return -1;
    }
    memcpy(out, r.cand, (size_t)r.ncand * sizeof *out);
    *n = r.ncand;
    return 0;
}

int gt_worker_trial(gt_worker *w, const gt_trial_request *req, gt_trial_result *out, char *err, size_t errlen)
{
    msg_req q = {.op = OP_TRIAL, .params = req->params, .shape = req->shape, .time_shape = req->time_shape,
                 .launch = req->launch, .checks = req->checks,
                 .warmup = req->warmup, .reps = req->reps, .pad_a = req->pad_a, .pad_b = req->pad_b,
                 .pad_c = req->pad_c, .cutoff_ms = req->cutoff_ms, .paired = req->paired, .seed = req->seed,
                 .cubin_size = req->cubin_size};
    msg_resp r;
    snprintf(q.family, sizeof q.family, "%s", req->family->name);
    if (transact(w, &q, req->cubin, req->timeout_s, &r, err, errlen)) return -1;
    *out = r.r;
    return 0;
}

/* ---- child side ---- */

/* What a trial runs: a loaded kernel (built families) or a backend plan made for the call at hand (library
 * families; a check with padded leading dimensions needs its own plan, so the plan follows the arguments). */
typedef struct {
    gt_measure *m;
    const gt_kernel *k;
    const gt_launch *L;
    float *ws;
    const gt_backend *be;
    gt_backend_ctx *bctx;
    const gt_family *f;
    const gt_params *p;
    gt_backend_plan *plan;
    gt_call planned;
    gt_status plan_status;
} cand_ctx;

/* be's context, one per backend and worker process: its library handles live as long as the process's context. */
static gt_backend_ctx *backend_ctx(const gt_backend *be, char *err, size_t errlen)
{
    static gt_backend_ctxs open;
    return gt_backend_ctx_of(&open, be, err, errlen);
}

static int replan(cand_ctx *c, const gt_call *call, char *err, size_t errlen)
{
    if (c->plan) c->be->release(c->plan);
    c->plan = NULL;
    c->plan_status = c->be->plan(c->bctx, c->f, c->p, call, &c->plan, err, errlen);
    if (c->plan_status != GT_ST_OK) return -1;
    c->planned = *call;
    size_t ws = c->be->workspace(c->plan);
    c->ws = ws ? gt_measure_scratch(c->m, ws, err, errlen) : NULL;
    return ws && !c->ws ? -1 : 0;
}

static int run_candidate(void *vctx, const gt_args *a, cudaStream_t stream, char *err, size_t errlen)
{
    cand_ctx *c = vctx;
    if (!c->be) {
        gt_args b = *a;
        b.ws = c->ws;
        return gt_kernel_launch(c->k, c->L, stream, &b, err, errlen);
    }
    gt_call call = {{a->m, a->n, a->k, a->ta, a->tb, a->batch}, a->lda, a->ldb, a->ldc, 16, 16, 16, a->sa, a->sb, a->sc};
    if ((!c->plan || memcmp(&call, &c->planned, sizeof call)) && replan(c, &call, err, errlen)) return -1;
    return c->be->run(c->bctx, c->plan, a, c->ws, stream, err, errlen);
}

/* A failed CUDA step: a broken context (fault) makes this worker unusable; otherwise it is a launch problem, or a
 * library algorithm that is not available here. */
static void classify(msg_resp *r, const cand_ctx *c, const char *err)
{
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess && cudaDeviceSynchronize() != cudaSuccess) {
        r->r.status = GT_ST_FAULTED;
        r->dying = 1;
    } else if (c && c->be && c->plan_status == GT_ST_UNAVAILABLE) {
        r->r.status = GT_ST_UNAVAILABLE;
    } else if (strstr(err, "resources") || strstr(err, "shared memory") || strstr(err, "too many")) {
        r->r.status = GT_ST_RESOURCES;
    } else {
        r->r.status = GT_ST_LAUNCH_ERROR;
    }
    snprintf(r->r.message, sizeof r->r.message, "%s", err);
}

/* Bind the request's candidate: load its cubin, or find its backend. 0, or -1 with r's verdict set. */
static int prepare(gt_measure *m, const msg_req *q, const void *cubin, cand_ctx *c, gt_kernel **k, msg_resp *r)
{
    char err[512] = "";
    const gt_family *f = gt_family_find(q->family);
    *c = (cand_ctx){.m = m, .L = &q->launch, .f = f, .p = &q->params, .plan_status = GT_ST_OK};
    if (!f) snprintf(err, sizeof err, "this worker has no family '%s'", q->family);
    else if (f->build == GT_BUILD_NVRTC) {
        if (gt_kernel_load(cubin, q->cubin_size, q->launch.smem, f, &q->params, k, err, sizeof err) == 0) {
            c->k = *k;
            r->r.regs = gt_kernel_regs(*k);
            if (!q->launch.ws_bytes || (c->ws = gt_measure_scratch(m, q->launch.ws_bytes, err, sizeof err))) return 0;
        }
    } else if (!(c->be = gt_backend_find(f->backend))) {
        snprintf(err, sizeof err, "family %s: backend '%s' is not in this build", f->name, f->backend ? f->backend : "");
    } else if ((c->bctx = backend_ctx(c->be, err, sizeof err))) {
        return 0;
    }
    classify(r, NULL, err);
    return -1;
}

/* A family that claims FP32 accuracy by other means (GT_REF_FP64) must, against cuBLAS DGEMM on the same inputs,
 * err no more than cuBLAS SGEMM does there, on uniform inputs, on values and on rows of very different scale. Each
 * kind is drawn twice (GT_FP64_DRAWS) and the worst of each side's draws are compared, so that a shape where the
 * two are close gets the same verdict from sweep to sweep rather than one draw's luck. GT_FP64_FLOOR: four FP32 ulps
 * of the bound, where both are near exact (K = 1: SGEMM rounds once, while three TF32 products leave out the
 * product of the two small parts). 0 when it passed. */
#define GT_FP64_FLOOR (4.0 * FLT_EPSILON / 2)
#define GT_FP64_DRAWS 2
static int validate_fp64(gt_measure *m, const msg_req *q, cand_ctx *c, msg_resp *r)
{
    static const char *const kinds[] = {"uniform", "wide-exponent", "row-scaled"};
    gt_trial_result *t = &r->r;
    char err[512] = "";
    double worst = 0, worst_ref = 0;
    for (int i = 0; i < 3; ++i) {
        const float beta = i ? 0.5f : 0.0f;
        double e = 0, e32 = 0;
        for (int d = 0; d < GT_FP64_DRAWS; ++d) {
            gt_check_spec sp = {.s = q->shape, .pad_a = q->pad_a, .pad_b = q->pad_b, .pad_c = q->pad_c, .alpha = 1.5f,
                                .beta = beta, .seed = q->seed * 7 + 11 + (unsigned)(i * GT_FP64_DRAWS + d),
                                .inputs = i};
            double ed, e32d;
            if (gt_measure_check_fp64(m, &sp, run_candidate, c, &ed, &e32d, err, sizeof err))
                return classify(r, c, err), -1;
            if (e == e && !(ed <= e)) e = ed; /* the larger, or NaN (which stays, and fails below) */
            if (e32d > e32) e32 = e32d;
        }
        if (!(e <= fmax(e32, GT_FP64_FLOOR))) {
            t->status = GT_ST_WRONG;
            snprintf(t->message, sizeof t->message, "error against FP64 %.3g > cuBLAS FP32's %.3g (%s inputs, the worst of "
                     "%d draws each, alpha 1.5, beta %g)", e, e32, kinds[i], GT_FP64_DRAWS, beta);
            return -1;
        }
        if (e > worst) worst = e, worst_ref = e32;
    }
    snprintf(t->message, sizeof t->message, "error against FP64 at most %.3g (cuBLAS FP32 there: %.3g)", worst,
             worst_ref);
    return 0;
}

/* Validate against the reference: alpha 1.5 with beta 0 over a NaN-filled C, then beta 0.5, run twice: C must be
 * the same bit for bit; a GT_REF_FP64 family then takes validate_fp64. 0 when it passed. */
static int validate(gt_measure *m, const msg_req *q, cand_ctx *c, msg_resp *r)
{
    gt_trial_result *t = &r->r;
    const double tol = gt_tolerance(q->shape.k);
    const float betas[2] = {0.0f, 0.5f};
    char err[512] = "";
    for (int i = 0; i < 2; ++i) {
        gt_check_spec sp = {.s = q->shape, .pad_a = q->pad_a, .pad_b = q->pad_b, .pad_c = q->pad_c, .alpha = 1.5f,
                            .beta = betas[i], .seed = q->seed * 2 + (unsigned)i};
        double e;
        int same = 1;
        if (gt_measure_check(m, &sp, run_candidate, c, &e, i ? &same : NULL, err, sizeof err))
            return classify(r, c, err), -1;
        if (e > t->rel_err) t->rel_err = e;
        if (!(e <= tol)) {
            t->status = GT_ST_WRONG;
            snprintf(t->message, sizeof t->message, "max relative error %.3g > tolerance %.3g (alpha 1.5, beta %g%s)",
                     e, tol, betas[i], betas[i] == 0.0f ? ", C NaN-filled" : "");
            return -1;
        }
        if (!same) {
            t->status = GT_ST_WRONG;
            snprintf(t->message, sizeof t->message, "not deterministic: a second run on the same inputs (alpha 1.5, "
                                                     "beta %g) changed C", betas[i]);
            return -1;
        }
    }
    return c->f && gt_family_reference(c->f) == GT_REF_FP64 ? validate_fp64(m, q, c, r) : 0;
}

/* Each run of the candidate, then one of cuBLAS FP32, each after its own L2 flush (q->paired): the candidate's
 * median, fastest and slowest run, cuBLAS's median in ref_ms, and a note of it in the trial's message. */
static int paired_timing(gt_measure *m, const gt_shape *ts, cand_ctx *c, int warmup, int reps, gt_trial_result *t,
                         char *err, size_t errlen)
{
    const gt_run_fn run[2] = {run_candidate, gt_measure_cublas_run};
    void *const ctx[2] = {c, m};
    double med[2], lo[2], hi[2];
    if (gt_measure_time_interleaved(m, ts, 0.0f, 2, run, ctx, warmup, reps, med, lo, hi, err, errlen)) return -1;
    t->median_ms = med[0], t->min_ms = lo[0], t->max_ms = hi[0], t->ref_ms = med[1];
    if (!t->message[0])
        snprintf(t->message, sizeof t->message, "timed run by run with cuBLAS FP32, whose median was %.4f ms", med[1]);
    return 0;
}

/* Time at the request's timing shape; 1 when the first judged run was over the cutoff (pruned). */
static int timing(gt_measure *m, const msg_req *q, cand_ctx *c, int warmup, int reps, double cutoff, msg_resp *r)
{
    gt_trial_result *t = &r->r;
    char err[512] = "";
    const gt_shape *ts = q->time_shape.k > 0 ? &q->time_shape : &q->shape;
    int p = q->paired && cutoff <= 0
                ? paired_timing(m, ts, c, warmup, reps, t, err, sizeof err)
                : gt_measure_time(m, ts, run_candidate, c, warmup, reps, cutoff, &t->median_ms, &t->min_ms,
                                  &t->max_ms, err, sizeof err);
    if (p < 0) classify(r, c, err);
    return p;
}

static void run_trial(gt_measure *m, const msg_req *q, const void *cubin, msg_resp *r)
{
    gt_trial_result *t = &r->r;
    gt_kernel *k = NULL;
    cand_ctx c;
    t->median_ms = t->min_ms = t->max_ms = t->rel_err = t->ref_ms = -1;
    r->ok = 1;
    if (prepare(m, q, cubin, &c, &k, r)) goto out;
    /* Far slower than the cutoff: one run ranks it, and validating it would cost the sweep the most. */
    int p = 0;
    if (q->cutoff_ms > 0 && q->checks) {
        if ((p = timing(m, q, &c, 1, 1, q->cutoff_ms, r))) goto judged;
        t->median_ms = t->min_ms = t->max_ms = -1; /* the probe is no timing */
    }
    if (q->checks && validate(m, q, &c, r)) goto out;
    if (q->reps > 0 && (p = timing(m, q, &c, q->warmup, q->reps, q->checks ? 0 : q->cutoff_ms, r))) goto judged;
    t->status = GT_ST_OK;
    goto out;
judged: /* p < 0: classify() gave the verdict; p == 1: a run over the cutoff */
    if (p == 1) {
        t->status = GT_ST_PRUNED;
        snprintf(t->message, sizeof t->message, "a run took %.3f ms, over the cutoff of %.3f ms", t->median_ms,
                 q->cutoff_ms);
    }
out:
    if (c.plan) c.be->release(c.plan);
    if (!r->dying) gt_kernel_unload(k);
}

static void run_baseline(gt_measure *m, const msg_req *q, msg_resp *r)
{
    char err[512] = "";
    r->ok = 1;
    if (gt_measure_time(m, &q->shape, gt_measure_cublas_run, m, q->warmup, q->reps, 0, &r->r.median_ms, &r->r.min_ms,
                        &r->r.max_ms, err, sizeof err)) {
        classify(r, NULL, err);
        return;
    }
    r->r.status = GT_ST_OK;
}

static void run_candidates(const msg_req *q, msg_resp *r)
{
    char err[512] = "";
    const gt_family *f = gt_family_find(q->family);
    const gt_backend *be = f ? gt_backend_find(f->backend) : NULL;
    gt_backend_ctx *ctx = be ? backend_ctx(be, err, sizeof err) : NULL;
    r->ok = 1;
    r->r.status = GT_ST_LAUNCH_ERROR;
    if (!be) snprintf(err, sizeof err, "family '%s' has no backend in this build", q->family);
    else if (ctx && be->candidates(ctx, f, &q->shape, r->cand, GT_MAX_DEVICE_CANDIDATES, &r->ncand, err, sizeof err) == 0)
        r->r.status = GT_ST_OK;
    snprintf(r->r.message, sizeof r->r.message, "%s", err);
}

int gt_worker_main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s __worker DEVICE IN_FD OUT_FD (started by gemmtune itself)\n", argv[0]);
        return 2;
    }
    int dev = atoi(argv[2]), in = atoi(argv[3]), out = atoi(argv[4]);
    signal(SIGINT, SIG_IGN); /* Ctrl-C is the parent's to handle: it finishes or abandons the trial */
    gt_measure *m = NULL;
    char err[512] = "";
    int opened = gt_measure_open(dev, &m, err, sizeof err) == 0;
    msg_req q;
    while (read_all(in, &q, sizeof q, 0) == 0 && q.op != OP_QUIT) {
        static msg_resp r;
        memset(&r, 0, sizeof r);
        unsigned char *cubin = q.cubin_size ? malloc(q.cubin_size) : NULL;
        if (q.cubin_size && (!cubin || read_all(in, cubin, q.cubin_size, 0))) break;
        if (!opened) snprintf(r.r.message, sizeof r.r.message, "%s", err);
        else if (q.op == OP_INFO)
            r.ok = gt_measure_gpu_info(m, &r.gpu, &r.lim, r.r.message, sizeof r.r.message) == 0;
        else if (q.op == OP_BASELINE) run_baseline(m, &q, &r);
        else if (q.op == OP_TRIAL) run_trial(m, &q, cubin, &r);
        else if (q.op == OP_CANDIDATES) run_candidates(&q, &r);
        free(cubin);
        if (write_all(out, &r, sizeof r) || r.dying || !opened) _exit(r.dying ? 3 : 0);
    }
    gt_measure_close(m);
    return 0;
}
