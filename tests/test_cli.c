/* The CLI without a GPU: argument parsing helpers, --help/--version, tune's bad input and its no-GPU message. */
#include "cli.h"
#include "harness.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

GT_TEST(cli_parse_sizes_accepts_n_and_mxnxk, GT_NEEDS_NONE)
{
    gt_shape *v = NULL;
    char err[256];
    int n = gt_cli_parse_sizes("1024,3000x5000x700,7", &v, err, sizeof err);
    CHECK(n == 3);
    if (n == 3) {
        CHECK(v[0].m == 1024 && v[0].n == 1024 && v[0].k == 1024);
        CHECK(v[1].m == 3000 && v[1].n == 5000 && v[1].k == 700);
        CHECK(v[2].m == 7 && v[2].k == 7 && v[2].ta == 0 && v[2].tb == 0);
    }
    free(v);
    const char *bad[] = {"0", "abc", "", "1024,", "12x34", "1x2x3x4", "-5", "1024,,2", "2000000", "1e3", "4 096"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        v = NULL;
        CHECK_MSG(gt_cli_parse_sizes(bad[i], &v, err, sizeof err) == -1 && strstr(err, "--sizes"), "'%s'", bad[i]);
        CHECK(v == NULL);
    }
}

GT_TEST(cli_parse_gpus_layouts_ints_durations, GT_NEEDS_NONE)
{
    int ids[8], lay[4];
    long v;
    double s;
    char err[256];
    CHECK(gt_cli_parse_gpus("0,1,3", ids, 8, err, sizeof err) == 3 && ids[2] == 3);
    CHECK(gt_cli_parse_gpus("0,0", ids, 8, err, sizeof err) == -1);
    CHECK(gt_cli_parse_gpus("x", ids, 8, err, sizeof err) == -1 && strstr(err, "--gpu"));
    CHECK(gt_cli_parse_gpus("-1", ids, 8, err, sizeof err) == -1);
    CHECK(gt_cli_parse_layouts("nn,tt", lay, 4, err, sizeof err) == 2 && lay[0] == 0 && lay[1] == 3);
    CHECK(gt_cli_parse_layouts("nn,nn", lay, 4, err, sizeof err) == -1);
    CHECK(gt_cli_parse_layouts("nx", lay, 4, err, sizeof err) == -1);
    CHECK(gt_cli_parse_int("--reps", "12", 100, &v, err, sizeof err) == 0 && v == 12);
    CHECK(gt_cli_parse_int("--reps", "0", 100, &v, err, sizeof err) == -1 && strstr(err, "--reps"));
    CHECK(gt_cli_parse_int("--reps", "101", 100, &v, err, sizeof err) == -1);
    CHECK(gt_cli_parse_int("--reps", "3x", 100, &v, err, sizeof err) == -1);
    CHECK(gt_cli_parse_duration("30m", &s, err, sizeof err) == 0 && s == 1800);
    CHECK(gt_cli_parse_duration("90", &s, err, sizeof err) == 0 && s == 90);
    CHECK(gt_cli_parse_duration("8h", &s, err, sizeof err) == 0 && s == 28800);
    CHECK(gt_cli_parse_duration("2d", &s, err, sizeof err) == -1 && gt_cli_parse_duration("-1m", &s, err, sizeof err) == -1);
}

static int run_cli(const char *args, char **out)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s", GT_CLI, args);
    return gt_run(cmd, out);
}

GT_TEST(cli_help_and_version_need_no_gpu, GT_NEEDS_NONE)
{
    char *out = NULL;
    CHECK(run_cli("--help", &out) == 0 && strstr(out, "tune") && strstr(out, "query") && strstr(out, "GEMMTUNE_DB"));
    free(out);
    CHECK(run_cli("--version", &out) == 0 && strstr(out, "gemmtune " GT_VERSION));
    free(out);
    CHECK(run_cli("tune --help", &out) == 0 && strstr(out, "--budget") && strstr(out, "whole sweep") &&
          strstr(out, "--strategy"));
    free(out);
    CHECK(run_cli("frobnicate", &out) == 2 && strstr(out, "unknown verb"));
    free(out);
}

GT_TEST(cli_tune_rejects_bad_arguments, GT_NEEDS_NONE)
{
    static const struct {
        const char *args, *says;
    } cases[] = {
        {"--sizes 0", "--sizes"},           {"--sizes abc", "--sizes"},          {"--gpu x", "--gpu"},
        {"--layouts qq", "--layouts"},      {"--family nope", "unknown family"}, {"--strategy best", "--strategy"},
        {"--budget 5x", "duration"},        {"--shard 3/2", "--shard"},          {"--reps -1", "--reps"},
        {"--preset nope", "unknown preset"}, {"--bogus", "option"},              {"tune extra", "unexpected"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        char *out = NULL, *db = gt_tmp_path(".db"), args[512];
        snprintf(args, sizeof args, "%s --db %s", cases[i].args, db);
        int rc = run_cli(args, &out);
        CHECK_MSG(rc == 2 && out && strstr(out, cases[i].says), "'%s': exit %d: %s", cases[i].args, rc, out);
        CHECK_MSG(access(db, F_OK) != 0, "'%s' created the database", cases[i].args);
        free(out);
        free(db);
    }
}

/* On a machine with no GPU (CI), tune says so plainly, exits non-zero and creates no database; --gpu 99 too. */
GT_TEST(cli_tune_without_gpu_says_so, GT_NEEDS_NONE)
{
    if (gt_test_gpu_count() > 0) {
        gt_skip("this machine has a GPU");
        return;
    }
    const char *args[] = {"--gpu 0 --sizes 64", "--gpu 99 --sizes 64"};
    for (int i = 0; i < 2; ++i) {
        char *out = NULL, *db = gt_tmp_path(".db"), a[256];
        snprintf(a, sizeof a, "%s --db %s", args[i], db);
        int rc = run_cli(a, &out);
        CHECK_MSG(rc == 1 && out && strstr(out, "no CUDA device is available"), "exit %d: %s", rc, out);
        CHECK(access(db, F_OK) != 0);
        free(out);
        free(db);
    }
}

GT_TEST(gpu_cli_tune_rejects_missing_gpu_index, GT_NEEDS_GPU)
{
    char *out = NULL, *db = gt_tmp_path(".db"), a[256];
    snprintf(a, sizeof a, "--gpu 99 --sizes 64 --db %s", db);
    int rc = run_cli(a, &out);
    CHECK_MSG(rc == 1 && out && strstr(out, "GPU 99 does not exist"), "exit %d: %s", rc, out);
    CHECK(access(db, F_OK) != 0);
    free(out);
    free(db);
}
