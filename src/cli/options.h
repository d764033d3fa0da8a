/* The CLI's one option table: every option of every verb, declared once with the verbs that take it, its value's
 * kind and its help line; one parser reads argv into gt_cli_args and one printer writes each verb's option list
 * for --help from the same table, so the help cannot drift from what is parsed. Tested by tests/test_cli.c. */
#ifndef GT_CLI_OPTIONS_H
#define GT_CLI_OPTIONS_H

#include "family.h"

#include <stddef.h>
#include <stdio.h>

/* The shapes `gemmtune bench` runs by default: the public benchmark suite of docs/BENCHMARKS.md. */
#define GT_BENCH_SUITE_1 "1024,2048,4096,8192,1000,5000,3000x5000x700,4096x4096x256"
#define GT_BENCH_SUITE_2 "256x4096x4096,8192x128x8192,127x4099x1025,64x64x65536"
#define GT_BENCH_SUITE GT_BENCH_SUITE_1 "," GT_BENCH_SUITE_2

/* The verbs, as bits of gt_opt.verbs. */
enum {
    GT_V_TUNE = 1 << 0,
    GT_V_CANDIDATES = 1 << 1,
    GT_V_QUERY = 1 << 2,
    GT_V_EXPORT = 1 << 3,
    GT_V_IMPORT = 1 << 4,
    GT_V_MERGE = 1 << 5,
    GT_V_REPORT = 1 << 6,
    GT_V_EXPLAIN = 1 << 7,
    GT_V_BENCH = 1 << 8,
    GT_V_EXEC = 1 << 9,
    GT_V_PRECOMPILE = 1 << 10,
    GT_V_LAST = GT_V_PRECOMPILE,
};

typedef struct {
    int v[64];
    int n;
} gt_cli_ints;

typedef struct {
    gt_shape *v; /* malloc'd */
    int n;
} gt_cli_shapes;

/* Every option's value; zero / NULL when not given (an INT option's values start at 1). */
typedef struct {
    const char *db, *format, *out, *gpu_model, *family, *arch;
    gt_cli_ints gpu;             /* --gpu: CUDA device indices, the same meaning in every verb */
    gt_cli_ints layout;          /* --layout (alias --layouts): ta * 2 + tb */
    gt_cli_shapes sizes, shape;  /* --sizes, --shape */
    int sizes_with_layout;       /* every --sizes item carried its own layout (MxNxK:tn), as a recorded call list */
    /* tune */
    const char *preset, *strategy, *shard, *math;
    double budget_s;
    double prune_ratio, prune_best, family_ceiling, model_stop, screen_ms; /* -1 when not given */
    double beta;                 /* bench: -1 when not given */
    int has_prune_ratio, no_cross;
    long max_trials, seed, reps, warmup, topk, final_reps, jobs, trial_timeout;
    int retry_failed, progress; /* progress: -1 not given, 0 or 1 */
    int dry_run;
    /* query, export, candidates */
    int trials, gpus, sweeps, with_cubin, count;
    long top;
    /* explain */
    const char *json, *cc, *fallback;
    /* exec */
    const char *record, *log;
    long sms, align, lda, ldb, ldc;
    /* the arguments that are no option, in order (pointers into argv) */
    char **pos;
    int npos;
} gt_cli_args;

/* Start: everything "not given". */
void gt_cli_args_init(gt_cli_args *a);
void gt_cli_args_free(gt_cli_args *a);

/* Parse argv[1..argc) for verb (one GT_V_* bit) into a, on top of what it holds (a preset first, then the command
 * line). `--name VALUE` and `--name=VALUE`; `--` ends the options. Returns 0, 1 when -h/--help was given, or -1
 * with a message in err: an unknown option (or one of another verb, which it names), a missing value, or a value
 * of the wrong kind. */
int gt_cli_parse(unsigned verb, int argc, char **argv, gt_cli_args *a, char *err, size_t errlen);

/* The option list of verb, from the table, for --help. */
void gt_cli_usage(FILE *out, unsigned verb);

/* 1 when verb takes the option called name (e.g. "--gpu-model"). */
int gt_cli_has_option(unsigned verb, const char *name);

/* --shard: "I/N" (0 <= I < N), or "auto": the part from Slurm's environment, read through get (getenv in the CLI,
 * a table in tests): SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN (0 when unset), divided by SLURM_ARRAY_TASK_STEP
 * when set, of SLURM_ARRAY_TASK_COUNT; else SLURM_PROCID of SLURM_NTASKS. *from says which variables were used
 * ("" for I/N). Returns 0, or -1 with a message (none of them set, or values that give no part). */
int gt_cli_parse_shard(const char *text, const char *(*get)(const char *name), int *i, int *n, char *from,
                       size_t fromlen, char *err, size_t errlen);

#endif
