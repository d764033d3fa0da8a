/* `gemmtune exec`: the drop-in preloaded into an unmodified program (a stand-in cuBLAS here: no GPU, so every call
 * is judged and forwarded), the command's own exit status, the summary of what was served and forwarded by entry
 * point and reason, the record file named, and bad arguments. */
#include "harness.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *out;

/* The ASan build's programs need its runtime first in LD_PRELOAD: exec keeps what is there first. */
static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
    char cmd[8192], body[6000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "%s CUDA_VISIBLE_DEVICES= %s",
             strstr(gt_build_dir(), "asan") ? "ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0 "
                                              "LD_PRELOAD=\"$(cc -print-file-name=libasan.so)\""
                                            : "",
             body);
    free(out);
    out = NULL;
    int rc = gt_run(cmd, &out);
    if (!out) out = strdup("");
    return rc;
}

GT_TEST(exec_runs_the_command_under_the_drop_in_and_says_what_it_served, GT_NEEDS_NONE)
{
    char *rec = gt_tmp_path(".calls"), *log = gt_tmp_path(".log");
    int rc = run(GT_CLI " exec --record %s --log %s -- " GT_BUILD "/tests/drive_fake 2>&1", rec, log);
    CHECK_MSG(rc == 0, "%d: %s", rc, out);
    /* the program ran as it does alone (its own checks print same=1), and exec summed what reached the drop-in */
    CHECK_MSG(strstr(out, "same=1") && strstr(out, "gemmtune exec: ") && strstr(out, "forwarded to cuBLAS"), "%s", out);
    static const char *const want[] = {"cublasSgemm_v2", "cublasGemmEx", "cublasSgemmStridedBatched",
                                       "device pointer mode", "math mode allows TF32", "recorded:"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; ++i)
        CHECK_MSG(strstr(out, want[i]), "exec's summary lacks '%s':\n%s", want[i], out);
    CHECK_MSG(strstr(out, "0 cuBLAS GEMM calls served by gemmtune, 20 forwarded"), "%s", out);
    unlink(rec), unlink(log);
    free(rec), free(log);
}

GT_TEST(exec_returns_the_commands_status_and_refuses_bad_arguments, GT_NEEDS_NONE)
{
    CHECK_MSG(run(GT_CLI " exec -- sh -c 'exit 3'") == 3 && strstr(out, "no call reached the drop-in"), "%s", out);
    CHECK_MSG(run(GT_CLI " exec sh -c 'kill -TERM $$'") == 128 + 15, "%s", out);
    CHECK_MSG(run(GT_CLI " exec") == 2 && strstr(out, "no command to run"), "%s", out);
    CHECK_MSG(run(GT_CLI " exec --math fp64 -- true") == 2 && strstr(out, "--math"), "%s", out);
    CHECK_MSG(run(GT_CLI " exec --record -- true") == 2, "%s", out);
    CHECK_MSG(run(GT_CLI " exec -- /no/such/program") == 127 && strstr(out, "cannot run /no/such/program"),
              "%s", out);
    CHECK_MSG(run(GT_CLI " exec --help") == 0 && strstr(out, "gemmtune tune --sizes @calls.txt"), "%s", out);
    /* the command sees the environment exec sets, paths made absolute */
    CHECK_MSG(run(GT_CLI " exec --math tf32x3 --record rel.txt -- sh -c 'echo \"$GEMMTUNE_MATH $GEMMTUNE_RECORD "
                  "$LD_PRELOAD\"'") == 0 &&
                  strstr(out, "tf32x3 /") && strstr(out, "/rel.txt") && strstr(out, "libgemmtune_cublas.so"),
              "%s", out);
    free(out);
    out = NULL;
}
