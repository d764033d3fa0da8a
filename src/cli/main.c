/* gemmtune command line: `gemmtune VERB [options]`; with no verb and options first, the verb is `tune`; a bare
 * `gemmtune` prints the usage. Each verb lives in src/cli/cmd_<verb>.c; options in src/cli/options.c. */
#include "cli.h"
#include "term.h"
#include "worker.h"

#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} verbs[] = {
    {"tune", gt_cmd_tune, "tune SGEMM for shapes on a GPU and store every trial (the verb when options come first)"},
    {"candidates", gt_cmd_candidates, "list the legal candidates of each family, no GPU needed"},
    {"precompile", gt_cmd_precompile, "compile and cache what a sweep would compile, no GPU needed (docs/CLUSTER.md)"},
    {"query", gt_cmd_query, "print stored winners or trials with their ratio to cuBLAS"},
    {"export", gt_cmd_export, "write the winners as JSON or as a C header"},
    {"import", gt_cmd_import, "read winners from an exported JSON file"},
    {"merge", gt_cmd_merge, "combine other databases into this one"},
    {"report", gt_cmd_report, "plot TFLOPS per shape against cuBLAS and print a regret table"},
    {"explain", gt_cmd_explain, "say which stored kernel the loader would run for a shape"},
    {"bench", gt_cmd_bench, "time the loader's kernel against cuBLAS in one process"},
    {"exec", gt_cmd_exec, "run a program with its cuBLAS SGEMMs served by the tuned kernels, and say what was served"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: gemmtune VERB [options]     (gemmtune VERB --help for a verb's options)\n"
                 "       gemmtune --OPTION ...       (options first, no verb: the verb is tune)\n\n"
                 "Autotunes FP32 GEMM (SGEMM) kernels for your GPU and shapes; results live in SQLite.\n\n");
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; ++i) fprintf(out, "  %-11s %s\n", verbs[i].name, verbs[i].summary);
    fprintf(out, "\nexample: gemmtune --gpu 0 --sizes 1024,2048     (same as: gemmtune tune --gpu 0 --sizes 1024,2048)\n"
                 "database: --db PATH, else $GEMMTUNE_DB, else $XDG_DATA_HOME/gemmtune/gemmtune.db\n"
                 "          (~/.local/share/gemmtune/gemmtune.db)\n"
                 "--gpu N is a CUDA device index in every verb; --gpu-model NAME picks GPU models by name.\n"
                 "exit status: 0 done, 1 a failure (no GPU, an unreadable database or file), 2 bad arguments.\n");
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "__worker")) return gt_worker_main(argc, argv);
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        printf("gemmtune %s\n", GT_VERSION);
        return 0;
    }
    if (argv[1][0] == '-') return gt_cmd_tune(argc, argv);
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; ++i)
        if (!strcmp(argv[1], verbs[i].name)) return verbs[i].run(argc - 1, argv + 1);
    gt_term_printf(stderr, "gemmtune: unknown verb '%s'\n", argv[1]);
    fputc('\n', stderr);
    usage(stderr);
    return 2;
}
