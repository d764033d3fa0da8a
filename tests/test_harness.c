/* The runner itself: it runs from any directory (paths come from /proc/self/exe) and leaves nothing behind in
 * $TMPDIR or /tmp (one folder per run, removed on exit). Run: build/gt_tests --cpu harness */
#include "harness.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Entries of dir whose name starts with prefix. */
static int count_entries(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += !strncmp(e->d_name, prefix, strlen(prefix));
    if (d) closedir(d);
    return n;
}

GT_TEST(harness_paths_come_from_the_binary, GT_NEEDS_NONE)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/gt_tests", gt_build_dir());
    CHECK_MSG(gt_build_dir()[0] == '/' && access(path, X_OK) == 0, "%s", path);
    snprintf(path, sizeof path, "%s/tests/harness.h", gt_src_root());
    CHECK_MSG(gt_src_root()[0] == '/' && access(path, R_OK) == 0, "%s", path);
    char *t = gt_tmp_path(".db");
    CHECK_MSG(!strncmp(t, gt_tmp_dir(), strlen(gt_tmp_dir())) && t[strlen(gt_tmp_dir())] == '/', "%s", t);
    CHECK(strstr(gt_tmp_dir(), "/gt_tests.") && !strcmp(getenv("TMPDIR"), gt_tmp_dir()));
    free(t);
}

/* A second runner started from / with none of the variables this one exported: it finds the CLI and the source
 * tree, runs tests that use both (and one that leaves a database behind), and removes its folder on exit. */
GT_TEST(harness_runs_from_any_directory_and_cleans_up, GT_NEEDS_NONE)
{
    char *out = NULL;
    int rc = gt_run("cd / && env -u GT_TEST_CLI -u GT_TEST_ROOT -u GT_TEST_BUILD " GT_BUILD "/gt_tests --cpu "
                    "cli_help_and_version_need_no_gpu loader_header_is_plain_c_and_cxx "
                    "loader_explain_cli_names_the_rule",
                    &out);
    CHECK_MSG(rc == 0 && out && strstr(out, "3 passed, 0 failed, 0 skipped"), "exit %d:\n%s", rc, out);
    CHECK_MSG(count_entries(gt_tmp_dir(), "gt_tests.") == 0, "the second runner left its folder in %s",
              gt_tmp_dir());
    free(out);
}

/* A test that compiles on the pool reports progress while it runs (here every 0.1 s instead of 10 s): lines
 * "    2/4 compiled, 0 failed, 1 s" (the pool's closing line says "... 0 failed in 1 s"). */
GT_TEST(harness_long_tests_print_progress, GT_NEEDS_NVRTC)
{
    char *out = NULL;
    int rc = gt_run("GT_PROGRESS_S=0.1 " GT_BUILD "/gt_tests --cpu multistage_nvrtc_split_k", &out);
    const char *line = out ? strstr(out, " compiled, 0 failed, ") : NULL;
    CHECK_MSG(rc == 0 && line && strstr(out, "1 passed, 0 failed"), "exit %d:\n%s", rc, out);
    free(out);
}

/* tests/shards.sh's parts (gt_tests --shard I/N): two parts of three tests run each test once between them, and
 * the script's last line sums them up; a bad part is refused. */
GT_TEST(harness_shards_split_the_tests_and_sum_them_up, GT_NEEDS_NONE)
{
    const char *each[3] = {"cli_help_and_version_need_no_gpu", "loader_header_is_plain_c_and_cxx",
                           "loader_explain_cli_names_the_rule"};
    char names[256], cmd[1024], *out[2] = {NULL, NULL};
    int ran[3] = {0, 0, 0};
    snprintf(names, sizeof names, "%s %s %s", each[0], each[1], each[2]);
    for (int i = 0; i < 2; ++i) {
        snprintf(cmd, sizeof cmd, GT_BUILD "/gt_tests --cpu --shard %d/2 %s", i, names);
        CHECK(gt_run(cmd, &out[i]) == 0 && out[i]);
        for (int k = 0; k < 3; ++k) {
            char ok[128];
            snprintf(ok, sizeof ok, "[  OK  ] %s (", each[k]);
            ran[k] += out[i] && strstr(out[i], ok) != NULL;
        }
    }
    CHECK(ran[0] == 1 && ran[1] == 1 && ran[2] == 1);
    CHECK(out[0] && out[1] && (strstr(out[0], "2 passed") || strstr(out[1], "2 passed")));
    free(out[0]), free(out[1]);
    char *sum = NULL;
    snprintf(cmd, sizeof cmd, "GT_SHARDS=2 %s/tests/shards.sh " GT_BUILD "/gt_tests --cpu %s", gt_src_root(), names);
    int rc = gt_run(cmd, &sum);
    const char *last = sum ? strstr(sum, "3 passed, 0 failed, 0 skipped\n") : NULL;
    CHECK_MSG(rc == 0 && last && !strchr(last, '\n')[1] && strstr(sum, "---- part 1 of 2 ----"), "exit %d:\n%s", rc,
              sum);
    free(sum);
    char *bad = NULL;
    CHECK(gt_run(GT_BUILD "/gt_tests --cpu --shard 2/2", &bad) == 2 && bad && strstr(bad, "--shard wants I/N"));
    free(bad);
}
