/* The one option table of the CLI and its parser and help printer (see src/cli/options.h).
 * Tested by tests/test_cli.c (parsing, help drawn from the table, --shard auto). */
#include "options.h"
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef enum {
    A_FLAG,     /* no value: the int at offset becomes max (1, or 0 for --no-progress) */
    A_TEXT,     /* const char *, not empty */
    A_PATH,     /* const char *, a file name: not empty, no control character (gt_cli_check_path) */
    A_CHOICE,   /* const char *, one of choices ("a|b|c") */
    A_MATH,     /* const char *, a math class's name (gt_math_parse); with max 1, or "all" */
    A_INT,      /* long, 1..max */
    A_REAL,     /* double, 0..max; has_prune_ratio set */
    A_DURATION, /* double seconds */
    A_SIZES,    /* gt_cli_shapes, a list */
    A_SHAPE,    /* gt_cli_shapes, exactly one */
    A_LAYOUTS,  /* gt_cli_ints, at most max */
    A_GPUS,     /* gt_cli_ints, at most max */
} kind;

typedef struct {
    const char *name, *alias, *metavar;
    kind kind;
    unsigned verbs;
    size_t offset;
    long max;
    const char *choices; /* A_CHOICE */
    const char *help;    /* lines after the first are indented under it */
} gt_opt;

#define O(f) offsetof(gt_cli_args, f)
#define READERS (GT_V_QUERY | GT_V_EXPORT | GT_V_REPORT)
#define PLANS (GT_V_TUNE | GT_V_PRECOMPILE) /* what a sweep's plan is made of: tune's and precompile's */
#define DEFAULT_DB "$GEMMTUNE_DB,\nelse $XDG_DATA_HOME/gemmtune/gemmtune.db (~/.local/share/gemmtune/gemmtune.db)"

static const gt_opt table[] = {
    {"--preset", NULL, "NAME", A_TEXT, GT_V_TUNE, O(preset), 0, NULL,
     "start from configs/NAME.conf (quick, default, overnight, ci); options on the\n"
     "command line override it"},
    {"--gpu", NULL, "LIST", A_GPUS, GT_V_TUNE, O(gpu), 64, NULL,
     "CUDA device indices, e.g. 0 or 0,1,2,3 (one worker each, one shared queue; default 0)"},
    {"--gpu", NULL, "N", A_GPUS, GT_V_BENCH, O(gpu), 1, NULL, "CUDA device index (default 0)"},
    {"--gpu", NULL, "N", A_GPUS, READERS, O(gpu), 1, NULL,
     "only the GPU model of CUDA device N of this machine (by name: --gpu-model)"},
    {"--gpu", NULL, "N", A_GPUS, GT_V_EXPLAIN, O(gpu), 1, NULL, "explain for CUDA device N of this machine"},
    {"--gpu-model", "--gpu-name", "NAME", A_TEXT, READERS, O(gpu_model), 0, NULL,
     "only GPU models whose name contains NAME (case-insensitive)"},
    {"--gpu-model", "--gpu-name", "NAME", A_TEXT, GT_V_EXPLAIN, O(gpu_model), 0, NULL,
     "explain for the stored GPU model whose name contains NAME; with --cc and --sms,\n"
     "for a GPU so described (the database need not hold it)"},
    {"--cc", NULL, "X.Y", A_TEXT, GT_V_EXPLAIN, O(cc), 0, NULL, "compute capability of the GPU --gpu-model describes"},
    {"--sms", NULL, "N", A_INT, GT_V_EXPLAIN, O(sms), 100000, NULL, "SM count of the GPU --gpu-model describes"},
    {"--arch", NULL, "sm_XY", A_TEXT, GT_V_EXPLAIN, O(arch), 0, NULL,
     "explain for a GPU of this architecture: the stored model of that compute\n"
     "capability when there is exactly one, else an unnamed GPU (then only the fallback\n"
     "can apply)"},
    {"--arch", NULL, "sm_XY", A_TEXT, GT_V_CANDIDATES, O(arch), 0, NULL, "device limits of this architecture (default " GT_DEFAULT_ARCH ")"},
    {"--arch", NULL, "sm_XY", A_TEXT, GT_V_PRECOMPILE, O(arch), 0, NULL,
     "the architecture of the GPUs that will tune, e.g. sm_90 for H100 and H200 (an\n"
     "arch-specific family compiles for its sm_90a itself); required where there is no GPU,\n"
     "else that of --gpu's device"},
    {"--arch", NULL, "sm_XY", A_TEXT, GT_V_TUNE, O(arch), 0, NULL,
     "with --dry-run: plan for this architecture instead of asking the first --gpu"},
    {"--gpu", NULL, "N", A_GPUS, GT_V_PRECOMPILE, O(gpu), 1, NULL,
     "without --arch, compile for the architecture of CUDA device N (default 0)"},
    {"--sizes", NULL, "LIST", A_SIZES, GT_V_TUNE, O(sizes), 0, NULL,
     "N (N x N x N) or MxNxK items, e.g. 1024,2048,3000x5000x700 (default 1024,2048);\n"
     "MxNxK:tn tunes an item in its own layout only; @FILE reads the items from a file,\n"
     "e.g. the calls a program recorded with GEMMTUNE_RECORD=FILE (docs/LOADER.md), tuned\n"
     "heaviest first (calls x FLOPs); what fits in the GPU's memory is checked when the\n"
     "sweep starts"},
    {"--sizes", NULL, "LIST", A_SIZES, GT_V_PRECOMPILE, O(sizes), 0, NULL,
     "compile what a sweep of these sizes would: N, MxNxK, BxMxNxK (a batch) or MxNxK:tn\n"
     "items, or @FILE, as tune takes them (default: every family's whole default space,\n"
     "single GEMMs; the sizes only narrow it, and a batch adds its own kernels)"},
    {"--sizes", NULL, "LIST", A_SIZES, GT_V_BENCH, O(sizes), 0, NULL,
     "N, MxNxK or MxNxK:layout items, or @FILE (default: the public benchmark suite of\n"
     "docs/BENCHMARKS.md, " GT_BENCH_SUITE_1 ",\n" GT_BENCH_SUITE_2 ")"},
    {"--shape", NULL, "S", A_SHAPE, READERS, O(shape), 0, NULL,
     "one shape, MxNxK or N (N x N x N), of the layout --layout names (default nn)"},
    {"--shape", NULL, "S", A_SHAPE, GT_V_EXPLAIN, O(shape), 0, NULL, "the call's shape, MxNxK or N (required)"},
    {"--layout", "--layouts", "LIST", A_LAYOUTS, PLANS, O(layout), 4, NULL,
     "row-major layouts, a comma list of nn, nt, tn, tt (t = that operand stored\n"
     "transposed; default nn)"},
    {"--layout", "--layouts", "LIST", A_LAYOUTS, GT_V_BENCH, O(layout), 4, NULL,
     "row-major layouts of the items without one, a comma list of nn, nt, tn, tt (default nn)"},
    {"--layout", "--layouts", "L", A_LAYOUTS, GT_V_EXPLAIN, O(layout), 1, NULL,
     "row-major layout: nn, nt, tn or tt (default nn)"},
    {"--layout", "--layouts", "L", A_LAYOUTS, READERS, O(layout), 1, NULL, "only this layout: nn, nt, tn or tt"},
    {"--family", NULL, "LIST", A_TEXT, PLANS, O(family), 0, NULL,
     "only these families (gemmtune candidates --count lists them; default all)"},
    {"--family", NULL, "F", A_TEXT, READERS, O(family), 0, NULL, "only this kernel family"},
    {"--family", NULL, "F", A_TEXT, GT_V_CANDIDATES, O(family), 0, NULL,
     "only family F; test-only families (never swept) are listed only when named"},
    {"--db", NULL, "PATH", A_PATH, GT_V_TUNE | GT_V_IMPORT | GT_V_MERGE | GT_V_PRECOMPILE, O(db), 0, NULL,
     "database to write, created with its folders if needed; default " DEFAULT_DB},
    {"--db", NULL, "PATH", A_PATH, READERS, O(db), 0, NULL,
     "database to read; it is only read, so it may be another user's, and a missing one is\n"
     "an error (never created); default " DEFAULT_DB},
    {"--db", NULL, "PATH", A_PATH, GT_V_EXPLAIN | GT_V_BENCH, O(db), 0, NULL,
     "winners database, read as the library reads it (when the default one does not exist,\n"
     "the fallback applies); default " DEFAULT_DB},
    {"--json", NULL, "PATH", A_PATH, GT_V_EXPLAIN, O(json), 0, NULL, "winners from an exported JSON file instead of a database"},
    {"--db", NULL, "PATH", A_PATH, GT_V_EXEC, O(db), 0, NULL,
     "winners database the command is served from ($GEMMTUNE_DB for it); default " DEFAULT_DB},
    {"--json", NULL, "PATH", A_PATH, GT_V_EXEC, O(json), 0, NULL,
     "serve winners from an exported JSON file instead of a database ($GEMMTUNE_JSON)"},
    {"--record", NULL, "FILE", A_PATH, GT_V_EXEC, O(record), 0, NULL,
     "write the shapes the command called without a tuned kernel to FILE (merged with what it\n"
     "holds; $GEMMTUNE_RECORD); then: gemmtune tune --sizes @FILE"},
    {"--math", NULL, "CLASS", A_MATH, GT_V_EXEC, O(math), 0, NULL,
     "the arithmetic the command may be served ($GEMMTUNE_MATH; default fp32): a class besides fp32\n"
     "adds its winners where tuned and faster than fp32's. The classes:" GT_MATH_HELP},
    {"--log", NULL, "FILE", A_PATH, GT_V_EXEC, O(log), 0, NULL,
     "the drop-in's log, one line per new call and outcome ($GEMMTUNE_PRELOAD_LOG): a file, or stderr"},
    {"--math", NULL, "CLASS", A_MATH, PLANS, O(math), 1, NULL,
     "the math class whose families are swept when --family is not given (default fp32), or all.\n"
     "Each class keeps its own winner per shape; one besides fp32 is served only to callers that\n"
     "ask. The classes:" GT_MATH_HELP},
    {"--math", NULL, "CLASS", A_MATH, READERS, O(math), 1, NULL,
     "winners of this math class (default: fp32 for query and report, all for JSON export;\n"
     "the C header holds fp32 only); trials of every class unless given"},
    {"--strategy", NULL, "S", A_CHOICE, GT_V_TUNE, O(strategy), 0, "exhaustive|random|halving",
     "halving (default: screen every candidate, the median of three runs on a proxy problem,\n"
     "keep the fastest eighth, then quarters, validate and time the last few at full size),\n"
     "exhaustive (validate and time every candidate at full size), or random (a seeded\n"
     "sample, with --max-trials)"},
    {"--budget", NULL, "T", A_DURATION, GT_V_TUNE, O(budget_s), 0, NULL,
     "wall-clock budget for the whole sweep (all sizes), e.g. 90s, 30m, 8h; when spent,\n"
     "the sweep stops and keeps everything measured"},
    {"--max-trials", NULL, "N", A_INT, GT_V_TUNE, O(max_trials), 100000000, NULL, "at most N candidates per size and layout"},
    {"--seed", NULL, "S", A_INT, GT_V_TUNE, O(seed), 2000000000, NULL, "seed for random sampling and operands (default 1)"},
    {"--reps", NULL, "N", A_INT, GT_V_TUNE, O(reps), 10000, NULL, "timed runs per candidate (default 10; median kept)"},
    {"--reps", NULL, "N", A_INT, GT_V_BENCH, O(reps), 100000, NULL,
     "timed runs per side, interleaved (default 40; x10 up to 400 under 50 us)"},
    {"--warmup", NULL, "N", A_INT, GT_V_TUNE, O(warmup), 1000, NULL, "untimed runs before timing (default 2)"},
    {"--warmup", NULL, "N", A_INT, GT_V_BENCH, O(warmup), 100000, NULL, "untimed runs first (default 5)"},
    {"--beta", NULL, "B", A_REAL, GT_V_BENCH, O(beta), 1000, NULL,
     "every side checked and timed as C = alpha AB + B C (default 0: C written, never read;\n"
     "a program that accumulates into C, or a cuBLASLt call whose bias the drop-in puts in C\n"
     "first, runs with beta 1)"},
    {"--top-k", NULL, "N", A_INT, GT_V_TUNE, O(topk), 1000, NULL, "candidates re-timed before the winner is chosen (default 5)"},
    {"--final-reps", NULL, "N", A_INT, GT_V_TUNE, O(final_reps), 10000, NULL, "timed runs in that re-timing, in two passes, the second in\n"
     "reverse order, each candidate the mean of the two, each run followed by one of cuBLAS (default 30)"},
    {"--retry-failed", NULL, NULL, A_FLAG, GT_V_TUNE, O(retry_failed), 1, NULL,
     "rerun candidates whose stored trial failed (default: skip them)"},
    {"--shard", NULL, "I/N|auto", A_TEXT, GT_V_TUNE, O(shard), 0, NULL,
     "run only the I-th of N deterministic parts of the work (0 <= I < N); auto takes I and\n"
     "N from Slurm (job array, else task rank: docs/CLUSTER.md)"},
    {"--jobs", NULL, "N", A_INT, PLANS, O(jobs), 1024, NULL, "NVRTC compile threads (default: the host's cores)"},
    {"--dry-run", NULL, NULL, A_FLAG, GT_V_TUNE, O(dry_run), 1, NULL,
     "print the trials the sweep (or this --shard of it) may run, per shape: family,\n"
     "params, layout, and whether the cubin is cached; runs nothing, writes nothing, and\n"
     "needs no GPU with --arch (families whose candidates a GPU's library gives, such as\n"
     "cublas, are listed as asked of the GPU at run time; the cost model decides on the\n"
     "GPU which of the listed ones it compiles: --model-stop)"},
    {"--prune-ratio", NULL, "R", A_REAL, GT_V_TUNE, O(prune_ratio), 1000000, NULL,
     "a candidate whose first run is R times slower than cuBLAS is stored as 'pruned' and\n"
     "not validated or timed further (default 20; 0 = never)"},
    {"--prune-best", NULL, "R", A_REAL, GT_V_TUNE, O(prune_best), 1000000, NULL,
     "... or R times slower than the best so far in its round (default 4; 0 = never)"},
    {"--family-ceiling", NULL, "R", A_REAL, GT_V_TUNE, O(family_ceiling), 1000000, NULL,
     "in a screen, a family whose spread probes are all R times slower than the best so\n"
     "far skips its other candidates, stored as 'pruned' (default 3; 0 = never)"},
    {"--model-stop", NULL, "R", A_REAL, GT_V_TUNE, O(model_stop), 1000000, NULL,
     "halving: compile and screen each family's candidates in the order a cost model\n"
     "predicts (tuner/model.h), stop a family once its prediction, calibrated on its own\n"
     "screens, is R times the best screen so far, then try its best's neighbours; the\n"
     "rest are stored as 'pruned', unscreened (default 1.1; 0 = screen every candidate; a\n"
     "shape of at most 4 candidates per --jobs thread is screened whole)"},
    {"--screen-ms", NULL, "T", A_REAL, GT_V_TUNE, O(screen_ms), 1000000, NULL,
     "screens time a proxy with K cut so cuBLAS would take about T ms (default 1; 0 =\n"
     "screen at full size); the winner is always timed at full size"},
    {"--no-cross", NULL, NULL, A_FLAG, GT_V_TUNE, O(no_cross), 1, NULL,
     "do not time each tuned neighbour's winner on this shape and this winner on them\n"
     "(one trial each: the data of the loader's serving model)"},
    {"--trial-timeout", NULL, "S", A_INT, GT_V_TUNE, O(trial_timeout), 86400, NULL,
     "floor of the per-trial watchdog in seconds (default 20); the limit grows with\n"
     "cuBLAS's time on the shape; a candidate past it is stored as 'timeout'"},
    {"--progress", NULL, NULL, A_FLAG, GT_V_TUNE, O(progress), 1, NULL, "live progress line on stderr (default: when stderr is a terminal)"},
    {"--no-progress", NULL, NULL, A_FLAG, GT_V_TUNE, O(progress), 0, NULL, "no progress line"},
    {"--trials", NULL, NULL, A_FLAG, GT_V_QUERY, O(trials), 1, NULL, "every stored trial, failed ones included, instead of the winners"},
    {"--gpus", NULL, NULL, A_FLAG, GT_V_QUERY, O(gpus), 1, NULL,
     "the GPUs that ran sweeps: model, memory, NVIDIA driver and CUDA versions"},
    {"--sweeps", NULL, NULL, A_FLAG, GT_V_QUERY, O(sweeps), 1, NULL,
     "one row per sweep: when, where, GPU, NVIDIA driver, CUDA and NVRTC versions, trials"},
    {"--top", NULL, "N", A_INT, GT_V_QUERY, O(top), 1000000, NULL, "at most N rows per GPU model and shape, fastest first (with --trials)"},
    {"--format", NULL, "F", A_CHOICE, GT_V_QUERY | GT_V_BENCH, O(format), 0, "table|csv|json", "table (default), csv or json"},
    {"--format", NULL, "F", A_CHOICE, GT_V_EXPORT, O(format), 0, "json|header",
     "json: versioned JSON for `gemmtune import` and the loader (default; docs/EXPORT.md)\n"
     "header: a C header, a static gemmtune_winner_row table + gemmtune_winner_find();\n"
     "no SQLite needed"},
    {"-o", "--output", "FILE", A_PATH, GT_V_EXPORT, O(out), 0, NULL, "write FILE instead of standard output: a regular file is replaced\n"
     "atomically (its mode kept), a device or pipe written through, never replaced"},
    {"-o", "--output", "FILE", A_PATH, GT_V_REPORT, O(out), 0, NULL,
     "also plot TFLOPS per shape, winner vs cuBLAS, with gnuplot: FILE.svg or FILE.png,\n"
     "written as export -o writes (nothing is left behind when it fails)"},
    {"--with-cubin", NULL, NULL, A_FLAG, GT_V_EXPORT, O(with_cubin), 1, NULL,
     "(header) embed each winner's compiled kernel for its GPU's sm_<cc>, from the\n"
     "database's cubin cache, else compiled now with NVRTC (no GPU needed)"},
    {"--count", NULL, NULL, A_FLAG, GT_V_CANDIDATES, O(count), 1, NULL, "one line per family with its count, and a total"},
    {"--align", NULL, "BYTES", A_INT, GT_V_EXPLAIN, O(align), 16, NULL, "alignment of the call's pointers: 1, 2, 4, 8 or 16 (default 16)"},
    {"--lda", NULL, "N", A_INT, GT_V_EXPLAIN, O(lda), 1L << 30, NULL, "leading dimension of A (default: the minimum)"},
    {"--ldb", NULL, "N", A_INT, GT_V_EXPLAIN, O(ldb), 1L << 30, NULL, "leading dimension of B (default: the minimum)"},
    {"--ldc", NULL, "N", A_INT, GT_V_EXPLAIN, O(ldc), 1L << 30, NULL, "leading dimension of C (default: the minimum)"},
    {"--fallback", NULL, "F", A_CHOICE, GT_V_EXPLAIN, O(fallback), 0, "cublas|default|none",
     "when no tuned kernel is served: cublas (cuBLAS's own SGEMM), default (the built-in\n"
     "kernel) or none (default: $GEMMTUNE_FALLBACK, else cublas)"},
};
#define NOPTS (sizeof table / sizeof table[0])

void gt_cli_args_init(gt_cli_args *a)
{
    memset(a, 0, sizeof *a);
    a->progress = -1;
    a->prune_ratio = a->prune_best = a->family_ceiling = a->model_stop = a->screen_ms = a->beta = -1;
}

void gt_cli_args_free(gt_cli_args *a)
{
    free(a->sizes.v);
    free(a->shape.v);
    free(a->pos);
    a->sizes.v = a->shape.v = NULL;
    a->pos = NULL;
}

/* The entry of verb whose name or alias is arg's option part (before any '='); *len = that part's length. */
static const gt_opt *find(unsigned verb, const char *arg, size_t *len)
{
    *len = strcspn(arg, "=");
    for (size_t i = 0; i < NOPTS; ++i) {
        const gt_opt *o = &table[i];
        if (!(o->verbs & verb)) continue;
        if ((strlen(o->name) == *len && !strncmp(arg, o->name, *len)) ||
            (o->alias && strlen(o->alias) == *len && !strncmp(arg, o->alias, *len)))
            return o;
    }
    return NULL;
}

static const char *verb_name(unsigned verb)
{
    static const char *const names[] = {"tune",    "candidates", "query", "export", "import",    "merge",
                                        "report",  "explain",    "bench", "exec",   "precompile"};
    _Static_assert(1u << (sizeof names / sizeof names[0] - 1) == GT_V_LAST, "one name per verb, in bit order");
    for (int i = 0; i < (int)(sizeof names / sizeof names[0]); ++i)
        if (verb == 1u << i) return names[i];
    return "?";
}

/* An unknown option; when another verb takes it, say which. */
static int unknown(unsigned verb, const char *arg, char *err, size_t errlen)
{
    size_t len;
    unsigned others = 0;
    for (unsigned v = 1; v <= GT_V_LAST; v <<= 1)
        if (v != verb && find(v, arg, &len)) others |= v;
    size_t used = (size_t)snprintf(err, errlen, "unknown option '%.*s'", (int)strcspn(arg, "="), arg);
    if (others && used < errlen) {
        int left = __builtin_popcount(others), first = 1;
        used += (size_t)snprintf(err + used, errlen - used, " (an option of");
        for (unsigned v = 1; v <= GT_V_LAST && used < errlen; v <<= 1) {
            if (!(others & v)) continue;
            left--;
            used += (size_t)snprintf(err + used, errlen - used, "%s %s", first ? "" : left ? "," : " and", verb_name(v));
            first = 0;
        }
        if (used < errlen) used += (size_t)snprintf(err + used, errlen - used, ", not of %s)", verb_name(verb));
    }
    if (used < errlen) snprintf(err + used, errlen - used, "; gemmtune %s --help lists its options", verb_name(verb));
    return -1;
}

/* What a value of o must look like, for messages. */
static void want(const gt_opt *o, char *buf, size_t n)
{
    switch (o->kind) {
    case A_SIZES: snprintf(buf, n, "want a comma list of N (N x N x N) or MxNxK, each 1..1048576"); break;
    case A_SHAPE: snprintf(buf, n, "want one MxNxK or N (N x N x N), each 1..1048576"); break;
    case A_LAYOUTS: snprintf(buf, n, o->max > 1 ? "want a comma list of distinct nn, nt, tn, tt" : "want nn, nt, tn or tt"); break;
    case A_GPUS:
        snprintf(buf, n, o->max > 1 ? "want CUDA device indices: 0, or a comma list of distinct ones such as 0,1,3"
                                    : "want one CUDA device index such as 0");
        break;
    case A_INT: snprintf(buf, n, "want an integer 1..%ld", o->max); break;
    case A_REAL: snprintf(buf, n, "want a number 0..%ld", o->max); break;
    case A_DURATION: snprintf(buf, n, "want a duration: a positive number with s, m or h, e.g. 90s, 30m, 8h"); break;
    default: snprintf(buf, n, "bad value");
    }
}

static int set_choice(const gt_opt *o, const char *typed, const char *val, const char **dst, char *err, size_t errlen)
{
    size_t vlen = strlen(val);
    for (const char *c = o->choices; *c;) {
        size_t clen = strcspn(c, "|");
        if (clen == vlen && !strncmp(c, val, vlen)) return *dst = val, 0;
        c += clen + (c[clen] == '|');
    }
    char list[128];
    snprintf(list, sizeof list, "%s", o->choices);
    for (char *p = list; *p; ++p)
        if (*p == '|') *p = ',';
    return snprintf(err, errlen, "unknown %s '%s': want one of %s", typed, val, list), -1;
}

/* A math class by name (kernels/family.c's table), or with o->max "all" too. */
static int set_math(const gt_opt *o, const char *typed, const char *val, const char **dst, char *err, size_t errlen)
{
    gt_math m;
    unsigned set;
    if (o->max ? gt_math_set_parse(val, &set) == 0 : gt_math_parse(val, &m) == 0) return *dst = val, 0;
    char list[128] = "";
    for (int i = 0; i < GT_MATH_COUNT; ++i)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? "," : "", gt_math_name((gt_math)i));
    if (o->max) snprintf(list + strlen(list), sizeof list - strlen(list), ",all");
    return snprintf(err, errlen, "unknown %s '%s': want one of %s", typed, val, list), -1;
}

/* Store val, the value of o (typed as typed), into a. */
static int set_value(const gt_opt *o, const char *typed, const char *val, gt_cli_args *a, char *err, size_t errlen)
{
    void *dst = (char *)a + o->offset;
    char tmp[256], *end;
    int n = 0;
    switch (o->kind) {
    case A_FLAG: return *(int *)dst = (int)o->max, 0;
    case A_TEXT:
    case A_PATH:
        if (!*val) return snprintf(err, errlen, "bad %s '': want a value", typed), -1;
        if (o->kind == A_PATH && gt_cli_check_path(typed, val, err, errlen) < 0) return -1;
        return *(const char **)dst = val, 0;
    case A_CHOICE: return set_choice(o, typed, val, dst, err, errlen);
    case A_MATH: return set_math(o, typed, val, dst, err, errlen);
    case A_DURATION: n = gt_cli_parse_duration(val, dst, tmp, sizeof tmp); break;
    case A_INT: n = gt_cli_parse_int(typed, val, o->max, dst, tmp, sizeof tmp) < 0 ? -1 : 0; break;
    case A_REAL: {
        errno = 0;
        double v = strtod(val, &end);
        n = end == val || *end || errno || !(v >= 0) || v > o->max ? -1 : 0;
        if (!n) *(double *)dst = v, a->has_prune_ratio = 1;
        break;
    }
    case A_SIZES: {
        gt_cli_shapes *s = dst, next = {NULL, 0};
        int with = 0;
        next.n = gt_cli_parse_size_list(val, &next.v, &with, err, errlen);
        if (next.n < 0) return -1; /* its message names the file and line, or the item */
        free(s->v), *s = next, a->sizes_with_layout = with;
        break;
    }
    case A_SHAPE: {
        gt_cli_shapes *s = dst, next = {NULL, 0};
        next.n = gt_cli_parse_sizes(val, &next.v, tmp, sizeof tmp);
        if (next.n != 1) n = -1, free(next.v);
        else free(s->v), *s = next;
        break;
    }
    case A_LAYOUTS:
    case A_GPUS: {
        int v[66], got; /* one more than the most, to tell "too many" from a good list */
        got = o->kind == A_GPUS ? gt_cli_parse_gpus(val, v, (int)o->max + 1, tmp, sizeof tmp)
                                : gt_cli_parse_layouts(val, v, (int)o->max + 1, tmp, sizeof tmp);
        if (got < 1 || got > o->max) n = -1;
        else memcpy(((gt_cli_ints *)dst)->v, v, (size_t)got * sizeof *v), ((gt_cli_ints *)dst)->n = got;
        break;
    }
    }
    if (n == 0) return 0;
    want(o, tmp, sizeof tmp);
    int named = o->kind == A_GPUS && strpbrk(val, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") &&
                gt_cli_has_option(o->verbs & -o->verbs, "--gpu-model");
    return snprintf(err, errlen, "bad %s '%s': %s%s%s", typed, val, tmp,
                    named ? "; to choose GPU models by name use --gpu-model " : "", named ? val : ""), -1;
}

int gt_cli_parse(unsigned verb, int argc, char **argv, gt_cli_args *a, char *err, size_t errlen)
{
    int options = 1;
    for (int i = 1; i < argc; ++i) {
        const char *arg = argv[i], *val;
        size_t len;
        if (!options || arg[0] != '-' || !arg[1]) {
            char **p = realloc(a->pos, (size_t)(a->npos + 1) * sizeof *p);
            if (!p) return snprintf(err, errlen, "out of memory"), -1;
            (a->pos = p)[a->npos++] = argv[i];
            continue;
        }
        if (!strcmp(arg, "--")) {
            options = 0;
            continue;
        }
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) return 1;
        const gt_opt *o = find(verb, arg, &len);
        if (!o) return unknown(verb, arg, err, errlen);
        char typed[64];
        snprintf(typed, sizeof typed, "%.*s", (int)len, arg);
        if (o->kind == A_FLAG && arg[len]) return snprintf(err, errlen, "%s takes no value", typed), -1;
        if (o->kind == A_FLAG) val = NULL;
        else if (arg[len] == '=') val = arg + len + 1;
        else if (i + 1 < argc) val = argv[++i];
        else return snprintf(err, errlen, "missing value after %s", typed), -1;
        if (set_value(o, typed, val, a, err, errlen) < 0) return -1;
    }
    return 0;
}

void gt_cli_usage(FILE *out, unsigned verb)
{
    fprintf(out, "options:\n");
    for (size_t i = 0; i < NOPTS; ++i) {
        const gt_opt *o = &table[i];
        if (!(o->verbs & verb)) continue;
        char left[64];
        int w = snprintf(left, sizeof left, "%s%s%s%s%s", o->name, o->alias ? ", " : "", o->alias ? o->alias : "",
                         o->metavar ? " " : "", o->metavar ? o->metavar : "");
        fprintf(out, "  %-20s", left);
        if (w > 20) fprintf(out, "\n  %20s", "");
        for (const char *h = o->help; *h;) {
            size_t n = strcspn(h, "\n");
            fprintf(out, " %.*s\n", (int)n, h);
            h += n;
            if (*h) h++, fprintf(out, "  %20s", "");
        }
    }
    fprintf(out, "  %-20s this text\n", "-h, --help");
}

int gt_cli_has_option(unsigned verb, const char *name)
{
    size_t len;
    return find(verb, name, &len) != NULL;
}

/* An environment variable as a non-negative integer: 1 when set and one, 0 when unset or empty, -1 otherwise. */
static int env_long(const char *(*get)(const char *), const char *name, long *v, char *err, size_t errlen)
{
    const char *t = get(name);
    char *end;
    if (!t || !*t) return 0;
    errno = 0;
    *v = strtol(t, &end, 10);
    if (errno || *end || *v < 0 || *v > 10000000)
        return snprintf(err, errlen, "--shard auto: %s='%s' is not a task number", name, t), -1;
    return 1;
}

/* --shard auto inside a Slurm job array: the task's index among the array's, counted from its first task. */
static int shard_of_array(const char *(*get)(const char *), long id, int *i, int *n, char *from, size_t fromlen,
                          char *err, size_t errlen)
{
    long count, min = 0, max = -1, step = 1;
    int has;
    if ((has = env_long(get, "SLURM_ARRAY_TASK_COUNT", &count, err, errlen)) <= 0)
        return has < 0 ? -1 : (snprintf(err, errlen, "--shard auto: SLURM_ARRAY_TASK_ID is set but "
                                        "SLURM_ARRAY_TASK_COUNT is not: give --shard I/N"), -1);
    if (env_long(get, "SLURM_ARRAY_TASK_MIN", &min, err, errlen) < 0 ||
        env_long(get, "SLURM_ARRAY_TASK_MAX", &max, err, errlen) < 0 ||
        env_long(get, "SLURM_ARRAY_TASK_STEP", &step, err, errlen) < 0)
        return -1;
    if (step < 1) step = 1;
    long k = id - min;
    if (count < 1 || k < 0 || k % step || k / step >= count || (max >= 0 && (max - min) / step + 1 != count))
        return snprintf(err, errlen, "--shard auto: array task %ld is not one of %ld evenly spaced tasks from %ld "
                        "(SLURM_ARRAY_TASK_MIN/MAX/STEP/COUNT): use a range such as --array=0-%ld, or --shard I/N",
                        id, count, min, count - 1), -1;
    *i = (int)(k / step), *n = (int)count;
    snprintf(from, fromlen, "Slurm job array: task %ld of %ld tasks from %ld", id, count, min);
    return 0;
}

int gt_cli_parse_shard(const char *text, const char *(*get)(const char *name), int *i, int *n, char *from,
                       size_t fromlen, char *err, size_t errlen)
{
    long id, procid, ntasks;
    int used = 0, has;
    from[0] = 0;
    if (strcmp(text, "auto")) {
        if (sscanf(text, "%d/%d%n", i, n, &used) != 2 || text[used] || *n < 1 || *i < 0 || *i >= *n || *n > 100000)
            return snprintf(err, errlen, "bad --shard '%s': want I/N with 0 <= I < N, or auto", text), -1;
        return 0;
    }
    if ((has = env_long(get, "SLURM_ARRAY_TASK_ID", &id, err, errlen)) != 0)
        return has < 0 ? -1 : shard_of_array(get, id, i, n, from, fromlen, err, errlen);
    int hp = env_long(get, "SLURM_PROCID", &procid, err, errlen), hn = hp < 0 ? -1 : env_long(get, "SLURM_NTASKS", &ntasks, err, errlen);
    if (hp < 0 || hn < 0) return -1;
    if (!hp || !hn)
        return snprintf(err, errlen, "--shard auto: no Slurm job array or task rank here (SLURM_ARRAY_TASK_ID with "
                        "SLURM_ARRAY_TASK_COUNT, or SLURM_PROCID with SLURM_NTASKS): run it under sbatch --array or "
                        "srun (docs/CLUSTER.md), or give --shard I/N"), -1;
    if (ntasks < 1 || procid >= ntasks)
        return snprintf(err, errlen, "--shard auto: SLURM_PROCID=%ld is not below SLURM_NTASKS=%ld", procid, ntasks), -1;
    *i = (int)procid, *n = (int)ntasks;
    snprintf(from, fromlen, "Slurm task rank: SLURM_PROCID %ld of SLURM_NTASKS %ld", procid, ntasks);
    return 0;
}
