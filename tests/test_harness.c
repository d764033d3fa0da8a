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
