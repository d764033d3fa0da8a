/* gemmtune tune (the default verb): parse the sweep's options and run tuner/tune.c. CLI tests in tests/test_cli.c. */
#include "cli.h"
#include "db.h"
#include "family.h"
#include "tune.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gemmtune [tune] [--gpu LIST] [--sizes LIST] [options]\n\n"
            "Tunes SGEMM on the GPU(s) for each size and layout: every legal candidate of every kernel family is\n"
            "compiled with NVRTC, validated against cuBLAS FP32 (pedantic), timed, and stored; the fastest few are\n"
            "re-timed on a cold L2 and the best is stored as the winner for this GPU model and shape. Rerunning the\n"
            "same command resumes: stored trials are skipped.\n\n"
            "  --preset NAME       start from configs/NAME.conf (quick, default, overnight, ci); options given\n"
            "                      on the command line override it\n"
            "  --gpu LIST          CUDA device indices, e.g. 0 or 0,1,2,3 (one worker each, shared queue; default 0)\n"
            "  --sizes LIST        N (N x N x N) or MxNxK items, e.g. 1024,2048,3000x5000x700 (default 1024,2048);\n"
            "                      MxNxK:tn tunes an item in its own layout only; @FILE reads the items from a file,\n"
            "                      e.g. the calls a program recorded with GEMMTUNE_RECORD=FILE (docs/LOADER.md)\n"
            "  --layouts LIST      nn, nt, tn, tt (row-major; t = operand stored transposed; default nn)\n"
            "  --family LIST       only these families (see `gemmtune candidates --count`; default all)\n"
            "  --db PATH           results database (default $GEMMTUNE_DB, else\n"
            "                      $XDG_DATA_HOME/gemmtune/gemmtune.db, i.e. ~/.local/share/gemmtune/gemmtune.db)\n"
            "  --strategy S        halving (default: screen every candidate with one run on a proxy problem, keep\n"
            "                      the fastest eighth, then quarters, validate and time the last few at full size),\n"
            "                      exhaustive (validate and time every candidate at full size), or random (a\n"
            "                      seeded sample, with --max-trials)\n"
            "  --budget T          wall-clock budget for the whole sweep (all sizes), e.g. 90s, 30m, 8h;\n"
            "                      when spent, the sweep stops and keeps everything measured\n"
            "  --max-trials N      at most N candidates per size and layout\n"
            "  --seed S            seed for random sampling and operands (default 1)\n"
            "  --reps N            timed runs per candidate (default 10; median kept)\n"
            "  --warmup N          untimed runs before timing (default 2)\n"
            "  --top-k N           candidates re-timed before the winner is chosen (default 5)\n"
            "  --final-reps N      timed runs in that re-timing (default 30)\n"
            "  --retry-failed      rerun candidates whose stored trial failed (default: skip them)\n"
            "  --shard I/N         run only the I-th of N deterministic parts of the work (0 <= I < N)\n"
            "  --jobs N            NVRTC compile threads (default: the host's cores)\n"
            "  --prune-ratio R     a candidate whose first run is R times slower than cuBLAS is stored as\n"
            "                      'pruned' and not validated or timed further (default 20; 0 = never)\n"
            "  --prune-best R      ... or R times slower than the best so far in its round (default 4; 0 = never)\n"
            "  --family-ceiling R  in a screen, a family whose spread probes are all R times slower than the best\n"
            "                      so far skips its other candidates, stored as 'pruned' (default 3; 0 = never)\n"
            "  --screen-ms T       screens time a proxy with K cut so cuBLAS would take about T ms (default 1;\n"
            "                      0 = screen at full size); the winner is always timed at full size\n"
            "  --no-cross          do not time each tuned neighbour's winner on this shape and this winner on\n"
            "                      them (one trial each; the data of the loader's serving model)\n"
            "  --trial-timeout S   floor of the per-trial watchdog in seconds (default 20); the limit grows with\n"
            "                      cuBLAS's time on the shape; a candidate past it is stored as 'timeout'\n"
            "  --progress, --no-progress   live progress line on stderr (default: when stderr is a terminal)\n"
            "  -h, --help          this text\n\n"
            "Exit status: 0 done, 1 setup error (no GPU, bad database), 2 bad arguments, 130 interrupted (Ctrl-C;\n"
            "every finished trial is kept and the next run resumes).\n");
}

enum { O_LAYOUTS = 256, O_FAMILY, O_DB, O_STRATEGY, O_BUDGET, O_MAXTRIALS, O_SEED, O_REPS, O_WARMUP, O_TOPK,
       O_FINALREPS, O_RETRY, O_SHARD, O_JOBS, O_PROGRESS, O_NOPROGRESS, O_TIMEOUT, O_PRESET, O_PRUNE, O_PRUNEBEST,
       O_CEILING, O_SCREEN, O_NOCROSS };

static const struct option opts[] = {
    {"gpu", required_argument, 0, 'g'},          {"sizes", required_argument, 0, 's'},
    {"layouts", required_argument, 0, O_LAYOUTS}, {"family", required_argument, 0, O_FAMILY},
    {"db", required_argument, 0, O_DB},           {"strategy", required_argument, 0, O_STRATEGY},
    {"budget", required_argument, 0, O_BUDGET},   {"max-trials", required_argument, 0, O_MAXTRIALS},
    {"seed", required_argument, 0, O_SEED},       {"reps", required_argument, 0, O_REPS},
    {"warmup", required_argument, 0, O_WARMUP},   {"top-k", required_argument, 0, O_TOPK},
    {"final-reps", required_argument, 0, O_FINALREPS}, {"retry-failed", no_argument, 0, O_RETRY},
    {"shard", required_argument, 0, O_SHARD},     {"jobs", required_argument, 0, O_JOBS},
    {"trial-timeout", required_argument, 0, O_TIMEOUT},
    {"preset", required_argument, 0, O_PRESET},
    {"prune-ratio", required_argument, 0, O_PRUNE},
    {"prune-best", required_argument, 0, O_PRUNEBEST}, {"family-ceiling", required_argument, 0, O_CEILING},
    {"screen-ms", required_argument, 0, O_SCREEN},  {"no-cross", no_argument, 0, O_NOCROSS},
    {"progress", no_argument, 0, O_PROGRESS},     {"no-progress", no_argument, 0, O_NOPROGRESS},
    {"help", no_argument, 0, 'h'},                {0, 0, 0, 0}};

typedef struct {
    int gpus[64];
    gt_shape *shapes;
    char *families[64];
    char db[4096];
    char command[1024];
    int progress, layouts_given;
} tune_args;

static int parse_families(const char *text, gt_tune_opts *o, tune_args *a, char *err, size_t errlen)
{
    char *copy = strdup(text), *save = NULL;
    for (int i = 0; i < o->nfamilies; ++i) free(a->families[i]);
    o->nfamilies = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!gt_family_find(tok) || o->nfamilies == 64) {
            snprintf(err, errlen, "unknown family '%s' (see gemmtune candidates --count)", tok);
            free(copy);
            return -1;
        }
        a->families[o->nfamilies++] = strdup(tok);
    }
    free(copy);
    o->families = (const char *const *)a->families;
    return o->nfamilies ? 0 : (snprintf(err, errlen, "empty --family list"), -1);
}

static int parse_shard(const char *text, gt_tune_opts *o, char *err, size_t errlen)
{
    int i, n, used = 0;
    if (sscanf(text, "%d/%d%n", &i, &n, &used) != 2 || text[used] || n < 1 || i < 0 || i >= n || n > 100000)
        return snprintf(err, errlen, "bad --shard '%s': want I/N with 0 <= I < N", text), -1;
    o->shard_i = i;
    o->shard_n = n;
    return 0;
}

static int parse_ratio(const char *opt, const char *arg, double *out, char *err, size_t errlen)
{
    char *end;
    double v = strtod(arg, &end);
    if (end == arg || *end || !(v >= 0) || v > 1e6)
        return snprintf(err, errlen, "bad %s '%s': want a number >= 0", opt, arg), -1;
    *out = v;
    return 0;
}

static int parse_opt(int c, const char *arg, gt_tune_opts *o, tune_args *a, char *err, size_t errlen)
{
    long v;
    switch (c) {
    case 'g': return (o->ngpus = gt_cli_parse_gpus(arg, a->gpus, 64, err, errlen)) < 0 ? -1 : 0;
    case 's': free(a->shapes); a->shapes = NULL;
              return (o->nshapes = gt_cli_parse_size_list(arg, &a->shapes, &o->shape_layouts, err, errlen)) < 0 ? -1 : 0;
    case O_LAYOUTS: a->layouts_given = 1;
                    return (o->nlayouts = gt_cli_parse_layouts(arg, o->layouts, 4, err, errlen)) < 0 ? -1 : 0;
    case O_FAMILY: return parse_families(arg, o, a, err, errlen);
    case O_DB: return snprintf(a->db, sizeof a->db, "%s", arg), 0;
    case O_STRATEGY:
        if (!strcmp(arg, "exhaustive")) o->strategy = GT_STRATEGY_EXHAUSTIVE;
        else if (!strcmp(arg, "random")) o->strategy = GT_STRATEGY_RANDOM;
        else if (!strcmp(arg, "halving")) o->strategy = GT_STRATEGY_HALVING;
        else return snprintf(err, errlen, "bad --strategy '%s': want exhaustive, random or halving", arg), -1;
        return 0;
    case O_BUDGET: return gt_cli_parse_duration(arg, &o->budget_s, err, errlen);
    case O_MAXTRIALS: return gt_cli_parse_int("--max-trials", arg, 100000000, &v, err, errlen) ? -1 : (o->max_trials = v, 0);
    case O_SEED: return gt_cli_parse_int("--seed", arg, 2000000000, &v, err, errlen) ? -1 : (o->seed = (unsigned long long)v, 0);
    case O_REPS: return gt_cli_parse_int("--reps", arg, 10000, &v, err, errlen) ? -1 : (o->reps = (int)v, 0);
    case O_WARMUP: return gt_cli_parse_int("--warmup", arg, 1000, &v, err, errlen) ? -1 : (o->warmup = (int)v, 0);
    case O_TOPK: return gt_cli_parse_int("--top-k", arg, 1000, &v, err, errlen) ? -1 : (o->topk = (int)v, 0);
    case O_FINALREPS: return gt_cli_parse_int("--final-reps", arg, 10000, &v, err, errlen) ? -1 : (o->final_reps = (int)v, 0);
    case O_RETRY: return o->retry_failed = 1, 0;
    case O_SHARD: return parse_shard(arg, o, err, errlen);
    case O_JOBS: return gt_cli_parse_int("--jobs", arg, 1024, &v, err, errlen) ? -1 : (o->jobs = (int)v, 0);
    case O_TIMEOUT: return gt_cli_parse_int("--trial-timeout", arg, 86400, &v, err, errlen) ? -1 : (o->timeout_floor_s = (double)v, 0);
    case O_PRUNE: return parse_ratio("--prune-ratio", arg, &o->prune_ratio, err, errlen);
    case O_PRUNEBEST: return parse_ratio("--prune-best", arg, &o->prune_best, err, errlen);
    case O_CEILING: return parse_ratio("--family-ceiling", arg, &o->family_ceiling, err, errlen);
    case O_SCREEN: return parse_ratio("--screen-ms", arg, &o->screen_ms, err, errlen);
    case O_NOCROSS: return o->cross = 0, 0;
    case O_PROGRESS: return a->progress = 1, 0;
    case O_NOPROGRESS: return a->progress = 0, 0;
    default: return snprintf(err, errlen, "unknown option (see gemmtune tune --help)"), -1;
    }
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

/* getopt over argv into o; prefix names the source in messages. 0, 1 for --help, -1 on a bad option. */
static int parse_args(int argc, char **argv, const char *prefix, gt_tune_opts *o, tune_args *a, char *err,
                      size_t errlen)
{
    int c;
    optind = 0; /* glibc: start over, also after an earlier pass */
    while ((c = getopt_long(argc, argv, "g:s:h", opts, NULL)) != -1) {
        if (c == 'h') return 1;
        if (c == '?') return snprintf(err, errlen, "%sbad option (see gemmtune tune --help)", prefix), -1;
        if (c == O_PRESET) continue;
        if (parse_opt(c, optarg, o, a, err, errlen)) {
            if (*prefix) {
                char tmp[1024];
                snprintf(tmp, sizeof tmp, "%s%s", prefix, err);
                snprintf(err, errlen, "%s", tmp);
            }
            return -1;
        }
    }
    if (optind < argc && strcmp(argv[optind], "tune"))
        return snprintf(err, errlen, "%sunexpected argument '%s'", prefix, argv[optind]), -1;
    return 0;
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

static double tflops(const gt_shape *s, double ms) { return ms > 0 ? 2.0 * s->m * s->n * (double)s->k / (ms * 1e9) : 0; }

static void print_shape(const gt_shape_result *r, FILE *out)
{
    const gt_shape *s = &r->shape;
    fprintf(out, "%5d x %-5d x %-5d %s  ", s->m, s->n, s->k, gt_layout_name(s->ta, s->tb));
    if (!r->family[0]) {
        fprintf(out, "no candidate passed validation (%d trials, %d failed); cuBLAS %.2f TFLOPS\n", r->trials,
                r->failed, tflops(s, r->cublas_ms));
        return;
    }
    fprintf(out, "%8.2f %8.2f %6.3fx  %5.1f%%  %4d %4d %6.1f %6.1f  %-10s %s\n", tflops(s, r->median_ms),
            tflops(s, r->cublas_ms), r->cublas_ms / r->median_ms, r->spread_pct, r->trials, r->failed, r->wall_s,
            r->gpu_s, r->family, r->params);
}

static void header(void)
{
    printf("%-28s %8s %8s %7s  %6s  %4s %4s %6s %6s  %s\n", "shape", "TFLOPS", "cuBLAS", "ratio", "spread", "tri",
           "fail", "wall s", "GPU s", "winner");
}

typedef struct {
    int shown, shapes, progress;
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
    fprintf(stderr, "\r\033[K[%d/%d] %dx%dx%d %s  fail %d", e->done, e->total, s->m, s->n, s->k,
            gt_layout_name(s->ta, s->tb), e->failed);
    if (e->best_ms > 0)
        fprintf(stderr, "  best %.1f TFLOPS (%.2fx cuBLAS)", tflops(s, e->best_ms), e->cublas_ms / e->best_ms);
    fprintf(stderr, "  ETA %d:%02d  %s %s", (int)e->eta_s / 60, (int)e->eta_s % 60, e->family,
            gt_status_name(e->status));
    fflush(stderr);
}

static void summary(const gt_tune_summary *s, const char *db)
{
    printf("\n");
    header();
    for (int i = 0; i < s->nshapes; ++i) print_shape(&s->shapes[i], stdout);
    const double idle = s->wall_seconds > 0 ? 100.0 * (1 - s->gpu_seconds / s->wall_seconds) : 0;
    printf("\n%d trials run (%d failed: stored with their reason; %d cross-timings of neighbours' winners), "
           "%d already stored and skipped\n"
           "%d kernels compiled, %d taken from the cubin cache, %d worker restarts\n"
           "%.1f s wall, %.1f s of GPU time; the GPU sat idle %.0f%% of the wall time (%.1f s of it waiting for "
           "compiles)\nresults: %s   (gemmtune query --db %s)\n",
           s->trials_run, s->trials_failed, s->cross_trials, s->trials_skipped, s->compiled, s->cache_hits,
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
        fprintf(stderr, "gemmtune: %s\n", err);
        rc = 1;
    } else {
        if (rc == 130) fprintf(stderr, "\ngemmtune: interrupted; finished trials are stored, rerun to resume\n");
        summary(&sum, db);
    }
    gt_tune_summary_free(&sum);
    return rc;
}

int gt_cmd_tune(int argc, char **argv)
{
    gt_tune_opts o = {0};
    tune_args a = {0};
    char err[1024] = "";
    int c, rc = 2;
    gt_tune_defaults(&o);
    a.progress = isatty(2);
    o.gpus = a.gpus;
    const char *preset = find_preset(argc, argv);
    if (preset) {
        char **pv, prefix[160];
        int pn = preset_argv(preset, &pv, err, sizeof err);
        if (pn < 0) goto bad;
        snprintf(prefix, sizeof prefix, "preset %s: ", preset);
        c = parse_args(pn, pv, prefix, &o, &a, err, sizeof err);
        free_argv(pv, pn);
        if (c) goto bad;
    }
    if ((c = parse_args(argc, argv, "", &o, &a, err, sizeof err)) > 0) {
        usage(stdout);
        rc = 0;
        goto out;
    }
    if (c < 0) goto bad;
    if (!o.ngpus) o.ngpus = 1; /* a.gpus[0] = 0 */
    if (o.shape_layouts && a.layouts_given) {
        snprintf(err, sizeof err, "--layouts and sizes with their own layout (MxNxK:nn) do not go together");
        goto bad;
    }
    if (!o.nshapes && (o.nshapes = gt_cli_parse_sizes("1024,2048", &a.shapes, err, sizeof err)) < 0) goto bad;
    if (!a.db[0] && gt_db_default_path(a.db, sizeof a.db, err, sizeof err)) goto bad;
    command_line(argc, argv, a.command, sizeof a.command);
    o.shapes = a.shapes;
    o.db_path = a.db;
    o.command = a.command;
    view v = {0, o.shape_layouts ? o.nshapes : o.nshapes * (o.nlayouts ? o.nlayouts : 1), a.progress};
    o.on_shape = on_shape;
    o.on_trial = on_trial;
    o.ctx = &v;
    rc = sweep(&o, a.db);
    goto out;
bad:
    fprintf(stderr, "gemmtune: %s\n", err);
out:
    free(a.shapes);
    for (int i = 0; i < o.nfamilies; ++i) free(a.families[i]);
    return rc;
}
