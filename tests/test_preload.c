/* The cuBLAS drop-in (src/preload) without a GPU: the environment, the serve-or-forward rules, the log, the
 * exported symbols, and the interposer itself in front of a stand-in cuBLAS (tests/preload/fake_cublas.c) and
 * in front of the real one (whose errors must come back unchanged). GPU: preload_gpu_* here, and the full check
 * tests/preload/run_check.sh.   Run: build/gt_tests --cpu preload */
#include "cli.h"
#include "fixture.h"
#include "harness.h"
#include "preload.h"

#include <cublas_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LIB GT_BUILD "/libgemmtune_cublas.so" /* in shell commands */

static int asan_build(void) { return strstr(gt_build_dir(), "asan") != NULL; }

/* ---- the environment ---- */

static const char *const *env_table;

static const char *table_env(const char *name)
{
    for (const char *const *p = env_table; p && *p; p += 2)
        if (!strcmp(p[0], name)) return p[1];
    return NULL;
}

static gt_pl_config parse(const char *const *table)
{
    gt_pl_config c;
    env_table = table;
    gt_pl_config_parse(table_env, &c);
    return c;
}

GT_TEST(preload_config_defaults_and_switch, GT_NEEDS_NONE)
{
    gt_pl_config c = parse((const char *const[]){NULL});
    CHECK(c.enabled && c.log == GT_PL_LOG_NONE && !c.json_path[0] && !c.fallback_from_env && !c.numerics);
    CHECK(c.max_batch == GT_PL_DEFAULT_MAX_BATCH && !c.warning[0]);
    static const char *const off[] = {"off", "0", "no", "FALSE", "disabled"}, *const on[] = {"on", "1", "yes", ""};
    for (size_t i = 0; i < sizeof off / sizeof off[0]; ++i) {
        c = parse((const char *const[]){"GEMMTUNE_PRELOAD", off[i], NULL});
        CHECK_MSG(!c.enabled && !c.warning[0], "GEMMTUNE_PRELOAD=%s", off[i]);
    }
    for (size_t i = 0; i < sizeof on / sizeof on[0]; ++i) {
        c = parse((const char *const[]){"GEMMTUNE_PRELOAD", on[i], NULL});
        CHECK_MSG(c.enabled && !c.warning[0], "GEMMTUNE_PRELOAD=%s", on[i]);
    }
    c = parse((const char *const[]){"GEMMTUNE_PRELOAD", "maybe", NULL});
    CHECK_MSG(!c.enabled && strstr(c.warning, "GEMMTUNE_PRELOAD=maybe"), "%s", c.warning);
}

GT_TEST(preload_config_log_batch_sources, GT_NEEDS_NONE)
{
    gt_pl_config c = parse((const char *const[]){"GEMMTUNE_PRELOAD_LOG", "1", NULL});
    CHECK(c.log == GT_PL_LOG_STDERR);
    c = parse((const char *const[]){"GEMMTUNE_PRELOAD_LOG", "stderr", NULL});
    CHECK(c.log == GT_PL_LOG_STDERR);
    c = parse((const char *const[]){"GEMMTUNE_PRELOAD_LOG", "off", NULL});
    CHECK(c.log == GT_PL_LOG_NONE);
    c = parse((const char *const[]){"GEMMTUNE_PRELOAD_LOG", "/tmp/x.log", NULL});
    CHECK(c.log == GT_PL_LOG_FILE && !strcmp(c.log_path, "/tmp/x.log"));
    c = parse((const char *const[]){"GEMMTUNE_PRELOAD_BATCH", "0", NULL});
    CHECK(c.max_batch == 0 && !c.warning[0]);
    c = parse((const char *const[]){"GEMMTUNE_PRELOAD_BATCH", "12x", NULL});
    CHECK_MSG(c.max_batch == GT_PL_DEFAULT_MAX_BATCH && strstr(c.warning, "GEMMTUNE_PRELOAD_BATCH"), "%s", c.warning);
    c = parse((const char *const[]){"GEMMTUNE_JSON", "/tmp/w.json", "GEMMTUNE_FALLBACK", "default", NULL});
    CHECK(!strcmp(c.json_path, "/tmp/w.json") && c.fallback_from_env && c.enabled);
    c = parse((const char *const[]){"GEMMTUNE_FALLBACK", "", NULL});
    CHECK(!c.fallback_from_env);
}

GT_TEST(preload_config_numerics_overrides, GT_NEEDS_NONE)
{
    gt_pl_config c = parse((const char *const[]){"NVIDIA_TF32_OVERRIDE", "0", NULL});
    CHECK(!c.numerics); /* 0 only forbids TF32: FP32 is what gemmtune computes anyway */
    c = parse((const char *const[]){"NVIDIA_TF32_OVERRIDE", "1", NULL});
    CHECK(c.numerics && !strcmp(c.numerics, "NVIDIA_TF32_OVERRIDE"));
    c = parse((const char *const[]){"CUBLAS_EMULATE_SINGLE_PRECISION", "1", NULL});
    CHECK(c.numerics && !strcmp(c.numerics, "CUBLAS_EMULATE_SINGLE_PRECISION"));
}

/* The winners' source is judged by stat alone: what is not a regular file is never opened. */
GT_TEST(preload_source_check_refuses_what_is_not_a_file, GT_NEEDS_NONE)
{
    char note[1200], *dir = gt_tmp_path("_src"), path[1100], cmd[2400];
    snprintf(cmd, sizeof cmd, "mkdir -p %s && mkfifo %s/fifo && echo '{}' > %s/w.json", dir, dir, dir);
    CHECK(gt_run(cmd, NULL) == 0);
    gt_pl_config c = parse((const char *const[]){NULL});
    CHECK(gt_pl_source_check(&c, NULL, note, sizeof note) == GT_PL_SOURCE_READ && !note[0]); /* the default db */
    snprintf(path, sizeof path, "%s/w.json", dir);
    CHECK(gt_pl_source_check(&c, path, note, sizeof note) == GT_PL_SOURCE_READ);
    snprintf(path, sizeof path, "%s/none.db", dir);
    CHECK(gt_pl_source_check(&c, path, note, sizeof note) == GT_PL_SOURCE_NONE);
    CHECK_MSG(strstr(note, "no database at GEMMTUNE_DB=") && strstr(note, "none.db yet"), "%s", note);
    static const char *const bad[] = {"fifo", "", "/dev/zero"}; /* a FIFO, a directory, a character device */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        snprintf(path, sizeof path, "%s%s%s", bad[i][0] == '/' ? "" : dir, bad[i][0] == '/' ? "" : "/", bad[i]);
        c = parse((const char *const[]){"GEMMTUNE_JSON", path, NULL});
        CHECK_MSG(gt_pl_source_check(&c, "/ignored.db", note, sizeof note) == GT_PL_SOURCE_NONE &&
                  strstr(note, "GEMMTUNE_JSON=") && strstr(note, "is not a regular file"), "%s: %s", path, note);
        CHECK_MSG(gt_pl_source_check(&(gt_pl_config){.enabled = 1}, path, note, sizeof note) == GT_PL_SOURCE_NONE &&
                  strstr(note, "GEMMTUNE_DB="), "%s: %s", path, note);
    }
    c = parse((const char *const[]){"GEMMTUNE_JSON", "/nonexistent/w.json", NULL});
    CHECK_MSG(gt_pl_source_check(&c, NULL, note, sizeof note) == GT_PL_SOURCE_NONE && strstr(note, "cannot be read"),
              "%s", note);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    gt_run(cmd, NULL);
    free(dir);
}

/* ---- serve or forward ---- */

static const float one = 1.0f, zero = 0.0f;

static gt_pl_call sgemm_call(int ta, int tb, int m, int n, int k)
{
    gt_pl_call c = {GT_PL_SGEMM, ta, tb, m, n, k, 0, 0, 0, &one, &one, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT, 1};
    c.lda = ta == CUBLAS_OP_N ? m : k, c.ldb = tb == CUBLAS_OP_N ? k : n, c.ldc = m;
    return c;
}

static void expect_reason(int line, const gt_pl_call *c, const gt_pl_modes *m, const gt_pl_config *cfg,
                          gt_pl_reason want)
{
    gt_pl_reason r = gt_pl_classify(c, m, cfg);
    if (r != want)
        gt_check_fail(__FILE__, line, "got %s, want %s", gt_pl_reason_text(r), gt_pl_reason_text(want));
}

/* An expression, so that a case reads as one line: c = ok, c.lda = 63, EXPECT_REASON(c, host, ...). */
#define EXPECT_REASON(call, modes, want) expect_reason(__LINE__, &(call), &(modes), &cfg, (want))

GT_TEST(preload_classify_serves_fp32_host_calls, GT_NEEDS_NONE)
{
    gt_pl_config cfg = parse((const char *const[]){NULL});
    gt_pl_modes host = {CUBLAS_POINTER_MODE_HOST, CUBLAS_DEFAULT_MATH, 0};
    static const int ops[] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
            gt_pl_call c = sgemm_call(ops[a], ops[b], 7, 5, 3);
            EXPECT_REASON(c, host, GT_PL_SERVE);
            c.lda += 3, c.ldb += 1, c.ldc += 2; /* ld > dim */
            EXPECT_REASON(c, host, GT_PL_SERVE);
        }
    gt_pl_modes pedantic = {CUBLAS_POINTER_MODE_HOST, CUBLAS_PEDANTIC_MATH, 0};
    gt_pl_modes flagged = {CUBLAS_POINTER_MODE_HOST, CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION, 0};
    gt_pl_call c = sgemm_call(CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 64);
    EXPECT_REASON(c, pedantic, GT_PL_SERVE);
    EXPECT_REASON(c, flagged, GT_PL_SERVE);
    CHECK(gt_pl_op(CUBLAS_OP_N) == GEMMTUNE_OP_N && gt_pl_op(CUBLAS_OP_T) == GEMMTUNE_OP_T &&
          gt_pl_op(CUBLAS_OP_C) == GEMMTUNE_OP_T);
}

GT_TEST(preload_classify_forwards_what_is_not_fp32_or_not_valid, GT_NEEDS_NONE)
{
    gt_pl_config cfg = parse((const char *const[]){NULL});
    gt_pl_modes host = {CUBLAS_POINTER_MODE_HOST, CUBLAS_DEFAULT_MATH, 0};
    gt_pl_modes dev = {CUBLAS_POINTER_MODE_DEVICE, CUBLAS_DEFAULT_MATH, 0};
    const gt_pl_call ok = sgemm_call(CUBLAS_OP_N, CUBLAS_OP_T, 64, 32, 16);
    EXPECT_REASON(ok, dev, GT_PL_DEVICE_POINTERS);
    static const int reduced[] = {CUBLAS_TF32_TENSOR_OP_MATH, CUBLAS_TENSOR_OP_MATH, CUBLAS_FP32_EMULATED_BF16X9_MATH,
                                  CUBLAS_TF32_TENSOR_OP_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION};
    for (size_t i = 0; i < sizeof reduced / sizeof reduced[0]; ++i) {
        gt_pl_modes m = {CUBLAS_POINTER_MODE_HOST, reduced[i], 0};
        EXPECT_REASON(ok, m, GT_PL_MATH_MODE);
    }
    gt_pl_call c = ok;
    c.lda = 63, EXPECT_REASON(c, host, GT_PL_INVALID);
    c = ok, c.ldb = 15, EXPECT_REASON(c, host, GT_PL_INVALID); /* op(B) = B^T: B is n x k, ldb >= n */
    c = ok, c.ldb = 32, EXPECT_REASON(c, host, GT_PL_SERVE);
    c = ok, c.ldc = 63, EXPECT_REASON(c, host, GT_PL_INVALID);
    c = ok, c.transa = 3, EXPECT_REASON(c, host, GT_PL_INVALID); /* CUBLAS_OP_CONJG */
    c = ok, c.m = -1, EXPECT_REASON(c, host, GT_PL_INVALID);
    c = ok, c.alpha = NULL, EXPECT_REASON(c, host, GT_PL_INVALID);
    c = ok, c.beta = NULL, EXPECT_REASON(c, dev, GT_PL_INVALID);
    c = ok, c.k = 0, EXPECT_REASON(c, host, GT_PL_K_ZERO);
    c = ok, c.n = 0, EXPECT_REASON(c, host, GT_PL_EMPTY);
    c = ok, c.alpha = &zero, EXPECT_REASON(c, host, GT_PL_ALPHA_ZERO);
    c = ok, c.alpha = &zero, EXPECT_REASON(c, dev, GT_PL_DEVICE_POINTERS); /* device alpha is never read */
    c = sgemm_call(CUBLAS_OP_N, CUBLAS_OP_N, 0, 5, 5), c.lda = 1, c.ldc = 1;
    EXPECT_REASON(c, host, GT_PL_EMPTY); /* m == 0: ld >= max(1, m) */
    gt_pl_config off = parse((const char *const[]){"GEMMTUNE_PRELOAD", "off", NULL});
    CHECK(gt_pl_classify(&ok, &host, &off) == GT_PL_OFF);
    gt_pl_config tf32 = parse((const char *const[]){"NVIDIA_TF32_OVERRIDE", "1", NULL});
    CHECK(gt_pl_classify(&ok, &host, &tf32) == GT_PL_ENV_NUMERICS);
}

GT_TEST(preload_classify_gemmex_and_batches, GT_NEEDS_NONE)
{
    gt_pl_config cfg = parse((const char *const[]){NULL});
    gt_pl_modes host = {CUBLAS_POINTER_MODE_HOST, CUBLAS_DEFAULT_MATH, 0};
    gt_pl_call ok = sgemm_call(CUBLAS_OP_T, CUBLAS_OP_N, 32, 32, 32), c;
    ok.api = GT_PL_GEMMEX;
    static const int fp32[] = {CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_PEDANTIC, (int)CUDA_R_32F};
    for (size_t i = 0; i < 3; ++i) c = ok, c.compute = fp32[i], EXPECT_REASON(c, host, GT_PL_SERVE);
    static const int other[] = {CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_COMPUTE_32F_FAST_16F, CUBLAS_COMPUTE_32F_FAST_16BF,
                                CUBLAS_COMPUTE_32F_EMULATED_16BFX9, CUBLAS_COMPUTE_64F, (int)CUDA_R_16F};
    for (size_t i = 0; i < sizeof other / sizeof other[0]; ++i)
        c = ok, c.compute = other[i], EXPECT_REASON(c, host, GT_PL_COMPUTE);
    c = ok, c.atype = CUDA_R_16F, EXPECT_REASON(c, host, GT_PL_TYPES);
    c = ok, c.ctype = CUDA_R_16BF, EXPECT_REASON(c, host, GT_PL_TYPES);
    c = ok, c.algo = CUBLAS_GEMM_ALGO5, EXPECT_REASON(c, host, GT_PL_ALGO);
    c = ok, c.algo = CUBLAS_GEMM_DEFAULT_TENSOR_OP, EXPECT_REASON(c, host, GT_PL_ALGO); /* before sm_80: FP16 */
    gt_pl_modes sm80 = {CUBLAS_POINTER_MODE_HOST, CUBLAS_DEFAULT_MATH, 1}, sm80tf32 = sm80;
    sm80tf32.math_mode = CUBLAS_TF32_TENSOR_OP_MATH;
    EXPECT_REASON(c, sm80, GT_PL_SERVE); /* sm_80+ ignores the algorithm: it is CUBLAS_GEMM_DEFAULT */
    EXPECT_REASON(c, sm80tf32, GT_PL_MATH_MODE);
    c.compute = CUBLAS_COMPUTE_32F_FAST_16F, EXPECT_REASON(c, sm80, GT_PL_COMPUTE);
    c = ok, c.algo = CUBLAS_GEMM_ALGO0_TENSOR_OP, EXPECT_REASON(c, sm80, GT_PL_ALGO);
    c = ok, c.algo = CUBLAS_GEMM_ALGO5, EXPECT_REASON(c, sm80, GT_PL_ALGO);
    c = ok, c.algo = CUBLAS_GEMM_AUTOTUNE, EXPECT_REASON(c, host, GT_PL_ALGO);
    c = ok, c.lda = 1, c.atype = CUDA_R_16F, EXPECT_REASON(c, host, GT_PL_INVALID); /* arguments first */
    gt_pl_call b = sgemm_call(CUBLAS_OP_N, CUBLAS_OP_N, 16, 16, 16);
    b.api = GT_PL_STRIDED;
    CHECK(cfg.max_batch == GT_PL_DEFAULT_MAX_BATCH); /* by default every batch is served, in one launch */
    b.batch = 100000, EXPECT_REASON(b, host, GT_PL_SERVE);
    gt_pl_config capped = cfg;
    capped.max_batch = 16; /* GEMMTUNE_PRELOAD_BATCH=16 */
    b.batch = 16, EXPECT_REASON(b, host, GT_PL_SERVE);
    b.batch = 17;
    CHECK(gt_pl_classify(&b, &host, &capped) == GT_PL_BATCH);
    b.batch = 0, EXPECT_REASON(b, host, GT_PL_EMPTY);
    b.batch = -1, EXPECT_REASON(b, host, GT_PL_INVALID);
    for (int r = 0; r < GT_PL_NREASONS; ++r) CHECK(strlen(gt_pl_reason_text((gt_pl_reason)r)) > 5);
}

/* ---- the log ---- */

GT_TEST(preload_log_lines_once_per_call_and_outcome, GT_NEEDS_NONE)
{
    static gt_pl_seen seen; /* 32 KiB: not on the stack */
    memset(&seen, 0, sizeof seen);
    gt_pl_call c = sgemm_call(CUBLAS_OP_N, CUBLAS_OP_T, 1000, 1000, 1000);
    uint64_t k0 = gt_pl_key(&c, GT_PL_SERVE), k1 = gt_pl_key(&c, GT_PL_GEMMTUNE);
    CHECK(k0 && k1 && k0 != k1);
    CHECK(gt_pl_seen_insert(&seen, k0) == 1 && gt_pl_seen_insert(&seen, k0) == 0 && gt_pl_seen_insert(&seen, k1) == 1);
    c.ldc++;
    CHECK(gt_pl_seen_insert(&seen, gt_pl_key(&c, GT_PL_SERVE)) == 1);
    int fresh = 3, full = 0;
    for (uint64_t k = 1; k < 3 * GT_PL_SEEN_SLOTS; ++k) {
        int r = gt_pl_seen_insert(&seen, k * 0x9e3779b97f4a7c15ull + 7);
        fresh += r == 1, full += r == -1;
    }
    CHECK_MSG(fresh == GT_PL_SEEN_SLOTS && full == 1, "fresh %d full %d", fresh, full);
    char line[256];
    c = sgemm_call(CUBLAS_OP_N, CUBLAS_OP_C, 1000, 1000, 1000);
    size_t n = gt_pl_format(line, sizeof line, &c, "served by exact: tile2d BM=64");
    CHECK_MSG(n == strlen(line) && !strcmp(line, "gemmtune: 1000x1000x1000 nc served by exact: tile2d BM=64 "
                                                 "[cublasSgemm_v2 lda=1000 ldb=1000 ldc=1000]\n"), "%s", line);
    c.api = GT_PL_STRIDED, c.batch = 3;
    gt_pl_format(line, sizeof line, &c, "forwarded to cuBLAS: x");
    CHECK_MSG(strstr(line, "[cublasSgemmStridedBatched lda=1000 ldb=1000 ldc=1000 batch=3]\n"), "%s", line);
    n = gt_pl_format(line, 20, &c, "forwarded to cuBLAS: x");
    CHECK_MSG(n == 19 && line[18] == '\n', "%zu '%s'", n, line);
}

/* ---- the library ---- */

GT_TEST(preload_library_exports_only_cublas_entry_points, GT_NEEDS_NONE)
{
    char *out = NULL;
    int rc = gt_run("nm -D --defined-only " LIB " | awk '$2 ~ /^[TtWwDdBbRrVvi]$/ {print $3}' | sort", &out);
    CHECK_MSG(rc == 0 && out && !strcmp(out, "cublasGemmEx\ncublasLtMatmul\ncublasSgemmStridedBatched\ncublasSgemm_v2\n"),
              "exports of %s:\n%s", LIB, out ? out : "");
    free(out);
    rc = gt_run("readelf -d " LIB " | grep -E 'SONAME|NEEDED'", &out);
    CHECK_MSG(rc == 0 && strstr(out, "[libgemmtune_cublas.so]"), "%s", out);
    /* it must not pin a cuBLAS soname: the program's own cuBLAS, whatever its version, is the one forwarded to */
    CHECK_MSG(!strstr(out, "libcublas.so"), "%s", out);
    free(out);
}

static void preload_prefix(char *buf, size_t n) { gt_fixture_preload_env(buf, n, ""); }

static int count_lines(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; p && (p = strstr(p, needle)); p += strlen(needle)) ++n;
    return n;
}

#define DRIVE "CUDA_VISIBLE_DEVICES= " GT_BUILD "/tests/drive_fake"

/* Without a GPU every call ends at cuBLAS, but each takes its path through the interposer: the status and the
 * arguments that reach the (stand-in) cuBLAS must be exactly the program's, and the log says why each went. */
GT_TEST(preload_interposer_forwards_untouched_to_a_stand_in_cublas, GT_NEEDS_NONE)
{
    char pre[4400], cmd[16384], *plain = NULL, *with = NULL, *log = gt_tmp_path(".log");
    preload_prefix(pre, sizeof pre);
    int rc = gt_run(DRIVE " 2>/dev/null", &plain);
    CHECK_MSG(rc == 0 && count_lines(plain, "same=1") == 20, "%d:\n%s", rc, plain);
    snprintf(cmd, sizeof cmd, "%s GEMMTUNE_PRELOAD_BATCH=16 GEMMTUNE_PRELOAD_LOG=%s " DRIVE " 2>/dev/null", pre, log);
    rc = gt_run(cmd, &with);
    CHECK_MSG(rc == 0 && with && plain && !strcmp(plain, with), "%s ->\n%s\nwithout the preload:\n%s", cmd, with, plain);
    CHECK_MSG(with && strstr(with, "sgemm_reentry: status=0 reached=3 same=1 deepest=2"), "%s", with);
    char *text = gt_fixture_text(log);
    static const char *const want[] = {
        "serving FP32 GEMM", "forwarded to cuBLAS: device pointer mode", "forwarded to cuBLAS: math mode allows TF32",
        "forwarded to cuBLAS: invalid arguments", "forwarded to cuBLAS: the handle's getters failed",
        "forwarded to cuBLAS: k == 0", "forwarded to cuBLAS: alpha == 0", "cublasGemmEx compute type is not pure FP32",
        "cublasGemmEx data types", "cublasGemmEx names an algorithm", "batch larger than GEMMTUNE_PRELOAD_BATCH",
        "24x24x24 nt forwarded to cuBLAS", "0 calls served by gemmtune, 20 forwarded to cuBLAS"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; ++i)
        CHECK_MSG(text && strstr(text, want[i]), "log lacks '%s':\n%s", want[i], text ? text : "(none)");
    /* the re-entered calls went straight through: one line for the shape, counted once */
    CHECK_MSG(count_lines(text, "24x24x24") == 1, "%s", text);
    unlink(log);
    free(plain), free(with), free(text), free(log);
}

/* Each entry point forwards to its own real symbol: a cuBLAS without cublasGemmEx (the stand-in built without it,
 * preloaded in place of the one drive_fake links, by its soname) still gets every SGEMM; only GemmEx calls, which
 * have nothing to reach, return NOT_INITIALIZED, and the program is told once. */
GT_TEST(preload_forwards_each_entry_point_to_its_own_symbol, GT_NEEDS_NONE)
{
    char pre[4400], cmd[16384], *plain = NULL, *with = NULL, also[4200];
    snprintf(also, sizeof also, "%s/tests/nogemmex/libfakecublas.so", gt_build_dir());
    gt_fixture_preload_env(pre, sizeof pre, also);
    gt_run(DRIVE " 2>/dev/null", &plain);
    snprintf(cmd, sizeof cmd, "%s " DRIVE " 2>&1", pre);
    int rc = gt_run(cmd, &with);
    CHECK_MSG(rc == 0 && with && plain, "%s ->\n%s", cmd, with);
    int sgemm = 0, gemmex = 0;
    for (char *line = plain; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        char name[64], want[256];
        if (sscanf(line, "%63[^:]:", name) != 1) break;
        size_t len = strcspn(line, "\n");
        if (!strncmp(name, "gemmex", 6)) {
            snprintf(want, sizeof want, "%s: status=%d reached=0 same=0", name, (int)CUBLAS_STATUS_NOT_INITIALIZED);
            gemmex += 1;
        } else snprintf(want, sizeof want, "%.*s", (int)len, line), sgemm += 1;
        CHECK_MSG(with && strstr(with, want), "want '%s' in:\n%s", want, with);
    }
    CHECK_MSG(sgemm >= 15 && gemmex >= 4, "%d sgemm, %d gemmex cases", sgemm, gemmex);
    CHECK_MSG(with && count_lines(with, "no cublasGemmEx") == 1, "%s", with);
    free(plain), free(with);
}

/* The log is opened so that it can never block the program: a FIFO without a reader (whose open would wait for
 * one) is refused with a warning; a terminal or /dev/null is taken. */
GT_TEST(preload_log_never_blocks_on_a_fifo, GT_NEEDS_NONE)
{
    char pre[4400], cmd[16384], *out = NULL, *fifo = gt_tmp_path(".fifo");
    preload_prefix(pre, sizeof pre);
    snprintf(cmd, sizeof cmd, "mkfifo %s && timeout 10 env %s GEMMTUNE_PRELOAD_LOG=%s " DRIVE " 2>&1; echo rc=$?",
             fifo, pre, fifo);
    gt_run(cmd, &out);
    CHECK_MSG(out && strstr(out, "rc=0") && strstr(out, "sgemm_servable: status=0 reached=1 same=1") &&
              strstr(out, "is not a regular file") && strstr(out, "not logging"), "%s ->\n%s", cmd, out);
    free(out);
    snprintf(cmd, sizeof cmd, "timeout 10 env %s GEMMTUNE_PRELOAD_LOG=/dev/null " DRIVE " 2>&1; echo rc=$?", pre);
    gt_run(cmd, &out);
    CHECK_MSG(out && strstr(out, "rc=0") && !strstr(out, "gemmtune:"), "%s ->\n%s", cmd, out);
    free(out);
    unlink(fifo);
    free(fifo);
}

/* A winners' source that is missing or not a file is said on stderr at once (the log may be off), never opened
 * (a FIFO would block the program, /dev/zero never end), and the program runs on cuBLAS; a record file that is
 * a FIFO is refused the same way (the recorder would block reading it at exit). */
GT_TEST(preload_says_when_the_winners_cannot_be_read, GT_NEEDS_NONE)
{
    char pre[4400], cmd[16384], *out = NULL, *fifo = gt_tmp_path(".fifo"), *none = gt_tmp_path(".db");
    preload_prefix(pre, sizeof pre);
    static const char *const cases[][2] = {{"GEMMTUNE_DB", NULL}, {"GEMMTUNE_JSON", NULL}, {"GEMMTUNE_JSON", "/dev/zero"},
                                           {"GEMMTUNE_RECORD", NULL}};
    const char *want[] = {"gemmtune: no database at GEMMTUNE_DB=", "is not a regular file: every GEMM goes to cuBLAS",
                          "GEMMTUNE_JSON=/dev/zero is not a regular file", "is not a regular file: not recording"};
    for (int i = 0; i < 4; ++i) {
        const char *path = cases[i][1] ? cases[i][1] : i == 0 ? none : fifo;
        snprintf(cmd, sizeof cmd, "rm -f %s; mkfifo %s && timeout 10 env %s %s=%s " DRIVE " 2>&1; echo rc=$?", fifo,
                 fifo, pre, cases[i][0], path);
        gt_run(cmd, &out);
        CHECK_MSG(out && strstr(out, "rc=0") && count_lines(out, want[i]) == 1 &&
                  strstr(out, "sgemm_servable: status=0 reached=1 same=1"), "%s ->\n%s", cmd, out);
        free(out);
    }
    unlink(fifo);
    free(fifo), free(none);
}

GT_TEST(preload_switch_off_is_pure_pass_through, GT_NEEDS_NONE)
{
    char pre[4400], cmd[16384], *plain = NULL, *with = NULL, *log = gt_tmp_path(".log");
    preload_prefix(pre, sizeof pre);
    gt_run(DRIVE " 2>/dev/null", &plain);
    snprintf(cmd, sizeof cmd, "%s GEMMTUNE_PRELOAD=off GEMMTUNE_PRELOAD_LOG=%s " DRIVE, pre, log);
    int rc = gt_run(cmd, &with);
    CHECK_MSG(rc == 0 && with && plain && !strcmp(plain, with), "%s ->\n%s", cmd, with);
    char *text = gt_fixture_text(log);
    CHECK_MSG(text && strstr(text, "pass-through (GEMMTUNE_PRELOAD=off)") && !strstr(text, "forwarded to cuBLAS:") &&
              strstr(text, "0 calls served by gemmtune, 0 forwarded"), "%s", text);
    free(with), free(text);
    snprintf(cmd, sizeof cmd, "%s GEMMTUNE_PRELOAD=perhaps " DRIVE, pre);
    rc = gt_run(cmd, &with);
    CHECK_MSG(rc == 0 && strstr(with, "GEMMTUNE_PRELOAD=perhaps: expected on or off") &&
              strstr(with, "sgemm_servable: status=0 reached=1 same=1"), "%s", with);
    unlink(log);
    free(plain), free(with), free(log);
}

/* A program that knows only cublas_v2.h: with the real cuBLAS, preloaded or linked ahead of it, it gets the same
 * statuses (no GPU here: cublasCreate's error, and NOT_INITIALIZED for a NULL handle; with a GPU, success). */
static const char probe_src[] =
    "#include <cublas_v2.h>\n#include <stdio.h>\n"
    "int main(void) { cublasHandle_t h = 0; float a = 1, b = 0, x[1] = {0};\n"
    "  int c = cublasCreate(&h);\n"
    "  int s = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, 1, 1, 1, &a, x, 0, x, 1, &b, x, 1);\n"
    "  int z = cublasSgemm(0, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &a, x, 1, x, 1, &b, x, 1);\n"
    "  printf(\"create %d bad-lda %d null-handle %d\\n\", c, s, z); if (!c) cublasDestroy(h); return 0; }\n";

GT_TEST(preload_real_cublas_statuses_unchanged, GT_NEEDS_NONE)
{
    char pre[4400], cmd[16384], *src = gt_tmp_path(".c"), *bin = gt_tmp_path(""), *out[4] = {0};
    const char *san = asan_build() ? "-fsanitize=address,undefined" : "";
    FILE *f = fopen(src, "w");
    fputs(probe_src, f), fclose(f);
    preload_prefix(pre, sizeof pre);
    snprintf(cmd, sizeof cmd, "cc -std=c99 -Wall -Werror %s -I/usr/local/cuda/include %s -o %s -L/usr/local/cuda/lib64 "
             "-Wl,-rpath,/usr/local/cuda/lib64 -lcublas -lcudart && %s && %s %s", san, src, bin, bin, pre, bin);
    int rc = gt_run(cmd, &out[0]);
    char *second = out[0] ? strchr(out[0], '\n') : NULL;
    CHECK_MSG(rc == 0 && second && !strncmp(out[0], second + 1, (size_t)(second - out[0]) + 1) &&
              strstr(out[0], "null-handle 1"), "%s\n%s", cmd, out[0]);
    /* linked ahead of cuBLAS instead of preloaded: the same */
    snprintf(cmd, sizeof cmd, "cc -std=c99 %s -I/usr/local/cuda/include %s -o %s_ahead %s/libgemmtune_cublas.so "
             "-Wl,-rpath,%s -L/usr/local/cuda/lib64 -Wl,-rpath,/usr/local/cuda/lib64 -lcublas -lcudart && %s %s_ahead && "
             "readelf -d %s_ahead | grep NEEDED", san, src, bin, gt_build_dir(), gt_build_dir(), asan_build() ? pre : "",
             bin, bin);
    rc = gt_run(cmd, &out[1]);
    CHECK_MSG(rc == 0 && second && !strncmp(out[0], out[1], (size_t)(second - out[0]) + 1) &&
              strstr(out[1], "libgemmtune_cublas.so") && strstr(out[1], "libcublas.so") &&
              strstr(out[1], "libgemmtune_cublas.so") < strstr(out[1], "libcublas.so"), "%s\n%s", cmd, out[1]);
    /* the GPU check's own program, the same way */
    snprintf(cmd, sizeof cmd, GT_BUILD "/check_cublas probe && %s " GT_BUILD "/check_cublas probe", pre);
    rc = gt_run(cmd, &out[2]);
    char *half = out[2] ? out[2] + strlen(out[2]) / 2 : NULL;
    CHECK_MSG(rc == 0 && half && !strncmp(out[2], half, strlen(half)), "%s", out[2]);
    snprintf(cmd, sizeof cmd, "rm -f %s %s %s_ahead", src, bin, bin);
    gt_run(cmd, NULL);
    for (int i = 0; i < 4; ++i) free(out[i]);
    free(src), free(bin);
}

GT_TEST(preload_installed_with_the_library, GT_NEEDS_NONE)
{
    char *prefix = gt_tmp_path("_prefix"), cmd[4096], *out = NULL;
    snprintf(cmd, sizeof cmd, "cd " GT_ROOT " && make -s BUILD=%s PREFIX=%s install && nm -D --defined-only "
             "%s/lib/libgemmtune_cublas.so", gt_build_dir(), prefix, prefix);
    int rc = gt_run(cmd, &out);
    CHECK_MSG(rc == 0 && strstr(out, "cublasSgemm_v2"), "%s ->\n%s", cmd, out);
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", prefix);
    gt_run(cmd, NULL);
    free(prefix);
}

/* ---- GPU ---- */

/* The served path against the real cuBLAS on every case of the GPU check (the full check with tuning, the
 * overhead and the TF32 / pass-through comparisons is tests/preload/run_check.sh). */
GT_TEST(preload_gpu_served_calls_match_cublas, GT_NEEDS_GPU)
{
    char pre[4400], cmd[16384], *out = NULL, *dir = gt_tmp_path("_preload");
    preload_prefix(pre, sizeof pre);
    snprintf(cmd, sizeof cmd, "mkdir -p %s/ref %s/served %s/xdg && " GT_BUILD "/check_cublas run %s/ref && "
             "XDG_DATA_HOME=%s/xdg GEMMTUNE_DB= GEMMTUNE_FALLBACK=default GEMMTUNE_PRELOAD_LOG=%s/served.log %s "
             GT_BUILD "/check_cublas run %s/served && " GT_BUILD "/check_cublas compare %s/ref %s/served && "
             "grep -c 'served by default' %s/served.log && %s " GT_BUILD "/check_cublas streams",
             dir, dir, dir, dir, dir, dir, pre, dir, dir, dir, dir, pre);
    int rc = gt_run(cmd, &out);
    CHECK_MSG(rc == 0 && strstr(out, "; 0 failed") && strstr(out, "streams: ok"), "%s ->\n%s", cmd, out);
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    gt_run(cmd, NULL);
    free(dir);
}

/* The loop from nothing: GEMMTUNE_DB names a database not made yet. The preload says so once, serves the program
 * on cuBLAS, and records every call (4 of each shape: `check_cublas loop 3` makes one call more to warm up),
 * in a file `gemmtune tune --sizes @FILE` takes. A database that is not one is said once (two threads), and
 * recorded from as well. */
GT_TEST(preload_gpu_records_from_nothing, GT_NEEDS_GPU)
{
    char pre[4400], cmd[16384], *out = NULL, *dir = gt_tmp_path("_loop"), path[1200], *text = NULL, err[512];
    preload_prefix(pre, sizeof pre);
    snprintf(cmd, sizeof cmd, "mkdir -p %s && echo 'not a database' > %s/bad.db && GEMMTUNE_DB=%s/none.db "
             "GEMMTUNE_RECORD=%s/shapes.txt %s " GT_BUILD "/check_cublas loop 3 2>&1 && GEMMTUNE_DB=%s/bad.db "
             "GEMMTUNE_RECORD=%s/run.txt %s " GT_BUILD "/check_cublas run %s 2>&1", dir, dir, dir, dir, pre, dir, dir,
             pre, dir);
    int rc = gt_run(cmd, &out);
    CHECK_MSG(rc == 0 && count_lines(out, "gemmtune: no database at GEMMTUNE_DB=") == 1 &&
              count_lines(out, "gemmtune: the winners cannot be read") == 1, "%s ->\n%s", cmd, out);
    snprintf(path, sizeof path, "%s/shapes.txt", dir);
    text = gt_fixture_text(path);
    CHECK_MSG(text && strstr(text, "\n512x512x512:nn 4\n") && strstr(text, "\n1000x1000x1000:nn 4\n"), "%s",
              text ? text : "(no record file)");
    gt_shape *list = NULL;
    int with = 0;
    char arg[1300];
    snprintf(arg, sizeof arg, "@%s", path);
    CHECK_MSG(gt_cli_parse_size_list(arg, &list, &with, err, sizeof err) == 2 && with == 1, "%s", err);
    free(list), free(text);
    snprintf(path, sizeof path, "%s/run.txt", dir);
    text = gt_fixture_text(path);
    CHECK_MSG(text && count_lines(text, ":") >= 10, "%s", text ? text : "(no record file)");
    free(text), free(out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    gt_run(cmd, NULL);
    free(dir);
}

/* A program whose cuBLAS is loaded with RTLD_LOCAL after start (as a Python extension's): its calls reach the
 * interposer, which finds the real cuBLAS by soname, and so must the vendor backend (cuBLAS winners, and the
 * loader's cuBLAS fallback used here), or the log says "cuBLAS is not linked in" and the built-in kernel runs. */
static const char local_lib_src[] =
    "#include <cublas_v2.h>\n#include <cuda_runtime_api.h>\n"
    "int user_run(void) { cublasHandle_t h; float *d, one = 1, zero = 0; int st = 0;\n"
    "  if (cublasCreate(&h) || cudaMalloc((void **)&d, 3 * 100 * 100 * 4)) return -1;\n"
    "  for (int i = 0; i < 3; ++i) st |= cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 100, 100, 100, &one, d, 100,\n"
    "                                                d + 10000, 100, &zero, d + 20000, 100);\n"
    "  st |= cudaDeviceSynchronize(); cudaFree(d); cublasDestroy(h); return st; }\n";
static const char local_main_src[] =
    "#include <dlfcn.h>\n#include <stdio.h>\n"
    "int main(int argc, char **argv) { void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);\n"
    "  int (*run)(void) = lib ? (int (*)(void))dlsym(lib, \"user_run\") : 0;\n"
    "  int st = run ? run() : -2; printf(\"user_run: %d\\n\", st); return st != 0; }\n";

GT_TEST(preload_gpu_cublas_loaded_locally_is_found, GT_NEEDS_GPU)
{
    char pre[4400], cmd[16384], *out = NULL, *dir = gt_tmp_path("_local"), path[1200], *log = NULL;
    const char *san = asan_build() ? "-fsanitize=address,undefined" : "";
    snprintf(cmd, sizeof cmd, "mkdir -p %s", dir);
    gt_run(cmd, NULL);
    snprintf(path, sizeof path, "%s/lib.c", dir);
    FILE *f = fopen(path, "w");
    fputs(local_lib_src, f), fclose(f);
    snprintf(path, sizeof path, "%s/main.c", dir);
    f = fopen(path, "w");
    fputs(local_main_src, f), fclose(f);
    preload_prefix(pre, sizeof pre);
    snprintf(cmd, sizeof cmd, "cd %s && cc -std=c99 -shared -fPIC %s -I/usr/local/cuda/include lib.c -o libuser.so "
             "-L/usr/local/cuda/lib64 -Wl,-rpath,/usr/local/cuda/lib64 -lcublas -lcudart && cc -std=c99 %s main.c -o main "
             "-ldl && GEMMTUNE_FALLBACK=cublas GEMMTUNE_PRELOAD_LOG=%s/log %s ./main %s/libuser.so", dir, san, san, dir,
             pre, dir);
    int rc = gt_run(cmd, &out);
    snprintf(path, sizeof path, "%s/log", dir);
    log = gt_fixture_text(path);
    CHECK_MSG(rc == 0 && strstr(out, "user_run: 0") && log && strstr(log, "100x100x100 nn served by cublas: cublasSgemm") &&
              strstr(log, "3 calls served by gemmtune"), "%s ->\n%s\n%s", cmd, out, log ? log : "(no log)");
    free(out), free(log);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    gt_run(cmd, NULL);
    free(dir);
}
