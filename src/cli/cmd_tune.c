/* gemmtune tune (the default verb): parse the sweep's options and run tuner/tune.c, or with --dry-run list its plan
 * (tuner/ahead.c). CLI tests in tests/test_cli.c and tests/test_cli_plan.c. */
#include "ahead.h"
#include "cli.h"
#include "cli_db.h"
#include "cli_plan.h"
#include "options.h"
#include "db.h"
#include "family.h"
#include "term.h"
#include "tune.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gemmtune [tune] [options]     (with no verb and options first, the verb is tune)\n\n"
            "Tunes SGEMM on the GPU(s) for each size and layout: the candidates of every kernel family are compiled\n"
            "with NVRTC in the order a cost model predicts them fast (a family stops once its prediction, calibrated\n"
            "on its own screens, cannot reach the best so far: --model-stop), screened, validated against cuBLAS\n"
            "FP32 (pedantic), timed, and stored, each left candidate as 'pruned' with the reason; the fastest few (and\n"
            "cuBLAS's own choice) are re-timed on a cold L2, each run followed by one of cuBLAS's, and the best is\n"
            "stored as the winner for this GPU model and shape; any other candidate wins only when it is more than\n"
            "2%% faster than cuBLAS's own. Rerunning the same command resumes: stored trials are skipped. Before the\n"
            "first trial it says how much GPU memory the largest shape needs, and refuses shapes that cannot fit.\n\n");
    gt_cli_usage(out, GT_V_TUNE);
    fprintf(out, "\nExit status: 0 done, 1 setup error (no GPU, bad database, shapes too large), 2 bad arguments,\n"
                 "130 interrupted (Ctrl-C; every finished trial is kept and the next run resumes).\n");
}

typedef struct {
    gt_cli_args a;
    char *families[GT_CLI_MAX_FAMILIES];
    char db[4096];
    char command[1024];
    char shard_from[160];
    int progress;
} tune_args;

static const char *env(const char *name) { return getenv(name); }

/* The parsed options into the sweep's; defaults stay where an option was not given. */
static int to_opts(tune_args *t, gt_tune_opts *o, char *err, size_t errlen)
{
    const gt_cli_args *a = &t->a;
    o->gpus = a->gpu.v;
    o->ngpus = a->gpu.n ? a->gpu.n : 1; /* a.gpu.v[0] = 0 */
    if (gt_cli_plan_opts(a, o, t->families, err, errlen) < 0) return -1;
    if (a->arch && !a->dry_run)
        return snprintf(err, errlen, "--arch goes with --dry-run: a sweep compiles for the GPU it runs on"), -1;
    if (a->strategy)
        o->strategy = !strcmp(a->strategy, "random")    ? GT_STRATEGY_RANDOM
                      : !strcmp(a->strategy, "halving") ? GT_STRATEGY_HALVING
                                                        : GT_STRATEGY_EXHAUSTIVE;
    if (a->shard && gt_cli_parse_shard(a->shard, env, &o->shard_i, &o->shard_n, t->shard_from, sizeof t->shard_from,
                                       err, errlen) < 0)
        return -1;
    if (a->budget_s > 0) o->budget_s = a->budget_s;
    if (a->max_trials) o->max_trials = a->max_trials;
    if (a->seed) o->seed = (unsigned long long)a->seed;
    if (a->reps) o->reps = (int)a->reps;
    if (a->warmup) o->warmup = (int)a->warmup;
    if (a->topk) o->topk = (int)a->topk;
    if (a->final_reps) o->final_reps = (int)a->final_reps;
    if (a->trial_timeout) o->timeout_floor_s = (double)a->trial_timeout;
    if (a->prune_ratio >= 0) o->prune_ratio = a->prune_ratio;
    if (a->prune_best >= 0) o->prune_best = a->prune_best;
    if (a->family_ceiling >= 0) o->family_ceiling = a->family_ceiling;
    if (a->model_stop > 0 && a->model_stop < 1)
        return snprintf(err, errlen, "--model-stop %g: 0 (screen every candidate) or at least 1 (a family stops once "
                        "its prediction is that many times the best)", a->model_stop), -1;
    if (a->model_stop >= 0) o->model_stop = a->model_stop;
    if (a->screen_ms >= 0) o->screen_ms = a->screen_ms;
    if (a->no_cross) o->cross = 0;
    if (a->progress >= 0) t->progress = a->progress;
    o->retry_failed = a->retry_failed;
    return 0;
}

const char *gt_config_text(const char *name);
const char *gt_config_text_name(int i);

/* A preset's "key = value" / "key" lines as argv ("--key", "value"); '#' starts a comment. */
static int preset_argv(const char *name, char ***out, char *err, size_t errlen)
{
    char file[128];
    snprintf(file, sizeof file, "%s.conf", name);
    const char *text = gt_config_text(file);
    if (!text) {
        size_t used = (size_t)snprintf(err, errlen, "unknown preset '%s'; presets:", name);
        for (int i = 0; gt_config_text_name(i) && used < errlen; ++i)
            used += (size_t)snprintf(err + used, errlen - used, " %.*s", (int)strcspn(gt_config_text_name(i), "."),
                                     gt_config_text_name(i));
        return -1;
    }
    char **v = calloc(2 * strlen(text) + 2, sizeof *v), *copy = strdup(text), *save = NULL;
    int n = 0;
    v[n++] = strdup("gemmtune");
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        line[strcspn(line, "#")] = '\0';
        char key[64] = "", val[1024] = "";
        if (sscanf(line, " %63[a-z-] = %1023s", key, val) < 1) continue;
        char opt[80];
        snprintf(opt, sizeof opt, "--%s", key);
        v[n++] = strdup(opt);
        if (val[0]) v[n++] = strdup(val);
    }
    free(copy);
    *out = v;
    return n;
}

static void free_argv(char **v, int n)
{
    for (int i = 0; i < n; ++i) free(v[i]);
    free(v);
}

static const char *find_preset(int argc, char **argv)
{
    const char *p = NULL;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--")) break;
        if (!strcmp(argv[i], "--preset") && i + 1 < argc) p = argv[++i];
        else if (!strncmp(argv[i], "--preset=", 9)) p = argv[i] + 9;
    }
    return p;
}

static void command_line(int argc, char **argv, char *out, size_t n)
{
    size_t used = (size_t)snprintf(out, n, "gemmtune");
    for (int i = 1; i < argc && used < n; ++i) used += (size_t)snprintf(out + used, n - used, " %s", argv[i]);
}


static void print_shape(const gt_shape_result *r, FILE *out)
{
    const gt_shape *s = &r->shape;
    char dims[48];
    fprintf(out, "%-21s %s  ", gt_shape_dims(s, dims, sizeof dims), gt_layout_name(s->ta, s->tb)); /* BxMxNxK: a batch */
    if (!r->family[0] && !r->trials && !r->skipped) { /* nothing was run: no family asked for takes this call */
        fprintf(out, "no candidate of the families asked for applies to this shape and layout; cuBLAS %.2f TFLOPS\n",
                gt_tflops(s, r->cublas_ms));
        return;
    }
    if (!r->family[0]) {
        fprintf(out, "no candidate passed validation (%d trials, %d failed); cuBLAS %.2f TFLOPS\n", r->trials,
                r->failed, gt_tflops(s, r->cublas_ms));
        return;
    }
    gt_term_printf(out, "%8.2f %8.2f %6.3fx  %5.1f%%  %4d %4d %6.1f %6.1f  %-10s %s\n", gt_tflops(s, r->median_ms),
                   gt_tflops(s, r->cublas_ms), r->cublas_ms / r->median_ms, r->spread_pct, r->trials, r->failed,
                   r->wall_s, r->gpu_s, r->family, r->params);
    for (int i = 0; i < r->nalso; ++i) { /* another class's winner, served only to callers that ask for it */
        const gt_class_result *c = &r->also[i];
        char label[40];
        snprintf(label, sizeof label, "  %s class:", gt_math_name(c->math));
        gt_term_printf(out, "%-26s%8.2f %8s %6.3fx  %31s  %-10s %s\n", label, gt_tflops(s, c->median_ms), "",
                       r->cublas_ms / c->median_ms, "", c->family, c->params);
    }
}

static void header(void)
{
    printf("%-28s %8s %8s %7s  %6s  %4s %4s %6s %6s  %s\n", "shape", "TFLOPS", "cuBLAS", "ratio", "spread", "tri",
           "fail", "wall s", "GPU s", "winner");
}

typedef struct {
    int shown, shapes, progress; /* shape lines printed; shapes x layouts of the sweep; a live line on stderr */
    const gt_shape *sizes;       /* for the memory check */
    int nsizes;
} view;

/* Each shape's line as it finishes, for long sweeps; a one-shape sweep has only the closing table. */
static void on_shape(const gt_shape_result *r, void *ctx)
{
    view *v = ctx;
    if (v->progress) fprintf(stderr, "\r\033[K");
    if (v->shapes < 2) return;
    if (!v->shown++) header();
    print_shape(r, stdout);
    fflush(stdout);
}

/* One live line: done/total, failures, best so far against cuBLAS, ETA, the trial just finished. */
static void on_trial(const gt_trial_event *e, void *ctx)
{
    const view *v = ctx;
    const gt_shape *s = e->shape;
    if (!v->progress) return;
    char dims[48];
    fprintf(stderr, "\r\033[K[%d/%d] %s %s  fail %d", e->done, e->total, gt_shape_dims(s, dims, sizeof dims),
            gt_layout_name(s->ta, s->tb), e->failed);
    if (e->best_ms > 0)
        fprintf(stderr, "  best %.1f TFLOPS (%.2fx cuBLAS)", gt_tflops(s, e->best_ms), e->cublas_ms / e->best_ms);
    fprintf(stderr, "  ETA %d:%02d  %s %s", (int)e->eta_s / 60, (int)e->eta_s % 60, e->family,
            gt_status_name(e->status));
    fflush(stderr);
}

/* Once the GPUs answered: what the largest shape needs of the GPU's memory, or why a shape cannot run at all. */
static int on_gpu(const gt_gpu_info *gpu, void *ctx, char *err, size_t errlen)
{
    view *v = ctx;
    char msg[600];
    if (gt_cli_check_memory(gpu->name, gpu->mem_bytes, gpu->l2_bytes, v->sizes, v->nsizes, msg, sizeof msg) < 0)
        return snprintf(err, errlen, "%s", msg), -1;
    gt_term_printf(stdout, "%s\n", msg);
    fflush(stdout);
    return 0;
}

static void summary(const gt_tune_summary *s, const char *db)
{
    printf("\n");
    header();
    for (int i = 0; i < s->nshapes; ++i) print_shape(&s->shapes[i], stdout);
    const double idle = s->wall_seconds > 0 ? 100.0 * (1 - s->gpu_seconds / s->wall_seconds) : 0;
    printf("\n%d trials run (%d failed: stored with their reason; %d cross-timings of neighbours' winners), "
           "%d already stored and skipped, %d left unscreened by the cost model\n"
           "%d kernels compiled, %d taken from the cubin cache, %d worker restarts\n"
           "%.1f s wall, %.1f s of GPU time; the GPU sat idle %.0f%% of the wall time (%.1f s of it waiting for "
           "compiles)\nresults: %s   (gemmtune query --db %s)\n",
           s->trials_run, s->trials_failed, s->cross_trials, s->trials_skipped, s->unscreened, s->compiled, s->cache_hits,
           s->restarts, s->wall_seconds, s->gpu_seconds, idle, s->wait_seconds, db, db);
}

static volatile sig_atomic_t interrupted;
/* First Ctrl-C: finish the trial in flight, commit, stop. A second one ends the process at once. */
static void on_sigint(int sig)
{
    interrupted = 1;
    signal(sig, SIG_DFL);
}

/* The sweep with Ctrl-C caught; 0, 130 (interrupted) or 1 (setup error, printed). */
static int sweep(gt_tune_opts *o, const char *db)
{
    char err[1024] = "";
    gt_tune_summary sum = {0};
    struct sigaction sa = {.sa_handler = on_sigint}, old;
    interrupted = 0;
    o->interrupt = &interrupted;
    sigaction(SIGINT, &sa, &old);
    int rc = gt_tune_run(o, &sum, err, sizeof err);
    sigaction(SIGINT, &old, NULL);
    if (rc < 0) {
        gt_term_printf(stderr, "gemmtune: %s\n", err);
        rc = 1;
    } else {
        if (rc == 130) fprintf(stderr, "\ngemmtune: interrupted; finished trials are stored, rerun to resume\n");
        summary(&sum, db);
    }
    gt_tune_summary_free(&sum);
    return rc;
}

/* ---- --dry-run: the plan, listed (tuner/ahead.c) ---- */

/* What a shape's sources depend on besides params: "tn", or "tn/batch" for a batch. */
static const char *variant_name(const gt_shape *s, char *buf, size_t n)
{
    snprintf(buf, n, "%s%s", gt_layout_name(s->ta, s->tb), gt_shape_batch(s) > 1 ? "/batch" : "");
    return buf;
}

static void dry_shape(const gt_shape *s, int n, void *ctx)
{
    char dims[48];
    (void)ctx;
    printf("\n%s %s: %d candidate%s\n", gt_shape_dims(s, dims, sizeof dims), gt_layout_name(s->ta, s->tb), n,
           n == 1 ? "" : "s");
    printf("  %-10s %-8s %-10s %-16s  %s\n", "family", "layout", "cubin", "id", "params");
}

static void dry_item(const gt_ahead_item *e, void *ctx)
{
    char var[16];
    (void)ctx;
    gt_term_printf(stdout, "  %-10s %-8s %-10s %-16s  %s\n", e->f->name, variant_name(e->shape, var, sizeof var),
                   e->cached < 0 ? "-" : e->cached ? "cached" : "to compile", e->hash, e->params);
}

static void dry_device(const gt_shape *s, const gt_family *f, void *ctx)
{
    char var[16];
    (void)ctx;
    printf("  %-10s %-8s %-10s %-16s  %s\n", f->name, variant_name(s, var, sizeof var), "-", "-",
           "(candidates asked of the GPU at run time)");
}

/* The plan of this sweep (or shard) for --arch, or for the first GPU's; nothing run, nothing written. A part taken
 * from Slurm (--shard auto) is named first with where it came from, as the sweep names it. 0, 1 (the database cannot
 * be read) or 2 (no architecture). */
static int dry_run(gt_tune_opts *o, const gt_cli_args *a, const char *db, const char *shard_from)
{
    char err[1024], arch[16];
    gt_ahead_opts ao = {.arch = arch, .on_shape = dry_shape, .on_item = dry_item, .on_device = dry_device};
    gt_ahead_summary sum;
    if (gt_cli_plan_arch(a->arch, o->gpus[0], arch, sizeof arch, &ao.sms, err, sizeof err) < 0)
        return gt_term_printf(stderr, "gemmtune: %s\n", err), 2;
    if (shard_from[0]) printf("shard %d/%d (%s)\n", o->shard_i, o->shard_n, shard_from);
    printf("dry run for %s%s", arch, ao.sms ? "" : " (sweep order for an unknown SM count)");
    if (o->shard_n > 1) printf(", shard %d/%d", o->shard_i, o->shard_n);
    printf(": nothing is run or written\n");
    if (gt_ahead_run(o, &ao, &sum, err, sizeof err) < 0) return gt_term_printf(stderr, "gemmtune: %s\n", err), 1;
    printf("\n%d candidates over %d (shape, layout) pair%s: %d distinct sources, %d cubins cached, %d to compile\n",
           sum.candidates, sum.shapes, sum.shapes == 1 ? "" : "s", sum.sources, sum.cached, sum.sources - sum.cached);
    if (sum.device) printf("and %d lists of candidates asked of the GPU at run time (nothing to compile)\n", sum.device);
    gt_term_printf(stdout, "cubin cache: %s\n", db);
    return 0;
}

/* A preset first, then the command line (its values point into *pv, kept until the end). 1 for --help. */
static int parse_all(int argc, char **argv, tune_args *t, char ***pv, int *pn, char *err, size_t errlen)
{
    const char *preset = find_preset(argc, argv);
    if (preset) {
        char msg[900];
        if ((*pn = preset_argv(preset, pv, err, errlen)) < 0) return -1;
        if (gt_cli_parse(GT_V_TUNE, *pn, *pv, &t->a, msg, sizeof msg) != 0 || t->a.npos)
            return snprintf(err, errlen, "preset %s: %s", preset, t->a.npos ? "stray word" : msg), -1;
    }
    int c = gt_cli_parse(GT_V_TUNE, argc, argv, &t->a, err, errlen);
    if (c) return c;
    if (t->a.npos)
        return snprintf(err, errlen, "unexpected argument '%s' (gemmtune tune --help lists the options)", t->a.pos[0]),
               -1;
    return 0;
}

int gt_cmd_tune(int argc, char **argv)
{
    gt_tune_opts o = {0};
    tune_args t = {0};
    char err[1024] = "", **pv = NULL;
    int c, pn = 0, rc = 2;
    gt_cli_args_init(&t.a);
    gt_tune_defaults(&o);
    t.progress = isatty(2);
    if ((c = parse_all(argc, argv, &t, &pv, &pn, err, sizeof err)) > 0) {
        usage(stdout);
        rc = 0;
        goto out;
    }
    if (c < 0 || to_opts(&t, &o, err, sizeof err) < 0) goto bad;
    if (!t.a.sizes.n && (t.a.sizes.n = gt_cli_parse_sizes("1024,2048", &t.a.sizes.v, err, sizeof err)) < 0) goto bad;
    if (gt_cli_db_path(t.a.db, t.db, sizeof t.db, err, sizeof err) < 0) goto bad;
    if (t.a.dry_run) {
        o.shapes = t.a.sizes.v, o.nshapes = t.a.sizes.n, o.db_path = t.db;
        rc = dry_run(&o, &t.a, t.db, t.shard_from);
        goto out;
    }
    if (gt_db_check_writable(t.db, err, sizeof err) < 0) { /* before the GPUs start, not after */
        gt_term_printf(stderr, "gemmtune: %s\n", err);
        rc = 1;
        goto out;
    }
    command_line(argc, argv, t.command, sizeof t.command);
    o.shapes = t.a.sizes.v;
    o.nshapes = t.a.sizes.n;
    o.db_path = t.db;
    o.command = t.command;
    view v = {0, o.shape_layouts ? o.nshapes : o.nshapes * (o.nlayouts ? o.nlayouts : 1), t.progress, o.shapes,
              o.nshapes};
    o.on_shape = on_shape;
    o.on_trial = on_trial;
    o.on_gpu = on_gpu;
    o.ctx = &v;
    if (t.shard_from[0]) printf("shard %d/%d (%s)\n", o.shard_i, o.shard_n, t.shard_from);
    rc = sweep(&o, t.db);
    goto out;
bad:
    gt_term_printf(stderr, "gemmtune: %s\n", err);
out:
    gt_cli_args_free(&t.a);
    for (int i = 0; i < o.nfamilies; ++i) free(t.families[i]);
    if (pv) free_argv(pv, pn);
    return rc;
}
