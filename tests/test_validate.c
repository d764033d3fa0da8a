/* The row validator of import and merge (db/validate.c), field by field: a good row of each kind passes, and each
 * mutation an attacker or a damaged file could bring is refused with the field named. Import and merge through
 * it are tested in tests/test_export.c and tests/test_cli_db.c. */
#include "fixture.h"
#include "harness.h"
#include "validate.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static char err[1024];

GT_TEST(validate_text_refuses_control_characters_and_bad_utf8, GT_NEEDS_NONE)
{
    static const char *const good[] = {"NVIDIA H200", "Grüße ✓ 東京", "a=b,c", "x"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; ++i)
        CHECK_MSG(dbv_text("f", good[i], 64, 0, 0, err, sizeof err) == 0, "%s: %s", good[i], err);
    static const char *const bad[] = {
        "red \x1b[31m",     /* ESC: a terminal escape */
        "two\nlines",       /* a newline in a name */
        "tab\there",        "del\x7f",
        "csi \xc2\x9b" "2J", /* U+009B, the one-byte CSI of C1 */
        "rlo \xe2\x80\xae", /* U+202E, right-to-left override */
        "iso \xe2\x81\xa6", /* U+2066, left-to-right isolate */
        "NVIDIA\xe2\x80\x8b H200", /* U+200B, a zero-width space: a look-alike name */
        "line\xe2\x80\xa8sep",     /* U+2028, a line separator */
        "\xef\xbb\xbf" "bom",      /* U+FEFF */
        "\xff",             "over \xc0\xaf", /* an overlong '/' */
        "sur \xed\xa0\x80", /* a UTF-16 surrogate */
        "cut \xe2\x82",     /* a character cut short */
        "cont \x80",        "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i)
        CHECK_MSG(dbv_text("f", bad[i], 64, 0, 0, err, sizeof err) < 0 && strstr(err, "f: "), "case %zu accepted", i);
    CHECK(dbv_text("message", "line 1\n\tline 2", 64, 0, 1, err, sizeof err) == 0); /* a log keeps its lines */
    CHECK(dbv_text("message", "line 1\n\x1b[2J", 64, 0, 1, err, sizeof err) < 0);
    char *big = malloc(1 << 20);
    memset(big, 'A', (1 << 20) - 1), big[(1 << 20) - 1] = 0;
    CHECK(dbv_text("gpu.name", big, DBV_NAME_MAX, 0, 0, err, sizeof err) < 0 && strstr(err, "over the limit of 127"));
    free(big);
    char out[16];
    dbv_clean_copy(out, sizeof out, "a\x1b[1m\xff" "b\xe2\x80\xae" "c", 0);
    CHECK_MSG(!strcmp(out, "a?[1m?b?c"), "%s", out);
    dbv_clean_copy(out, 4, "abcdef", 0);
    CHECK(!strcmp(out, "abc"));
    dbv_clean_copy(out, 3, "a\xc3\xa9", 0); /* a character that does not fit is left out whole */
    CHECK(!strcmp(out, "a"));
}

GT_TEST(validate_timestamps_are_utc_dates_not_in_the_future, GT_NEEDS_NONE)
{
    static const char *const good[] = {"2026-01-02T03:04:05Z", "2024-02-29T23:59:59.123Z", "1970-01-01T00:00:00.5Z",
                                       "2025-06-30T12:00:00.123456789Z"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; ++i)
        CHECK_MSG(dbv_timestamp("t", good[i], err, sizeof err) == 0, "%s: %s", good[i], err);
    static const char *const bad[] = {"yesterday", "2025-02-29T00:00:00Z", "2025-13-01T00:00:00Z",
                                      "2025-01-01 00:00:00Z", "2025-01-01T00:00:00", "2025-01-01T00:00:00+01:00",
                                      "2025-01-01T00:00:00.Z", "2025-01-01T00:00:00.1234567890Z", "1969-12-31T23:59:59Z",
                                      "9999-12-31T23:59:59Z", "2025-01-01T24:00:00Z", "2025-01-01T00:00:00Zjunk",
                                      "2025-1-01T00:00:00Z", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i)
        CHECK_MSG(dbv_timestamp("t", bad[i], err, sizeof err) < 0, "%s accepted", bad[i]);
    CHECK(dbv_timestamp("t", NULL, err, sizeof err) < 0);
}

/* A good H200 winner: tile2d on 4096^3 at 30 TFLOPS, cuBLAS a little slower. */
static dbv_winner good_winner(void)
{
    return (dbv_winner){{"NVIDIA H200", 9, 0, 132}, 4096, 4096, 4096, "nn",
                        {"tile2d", "BM=128,BN=128,BK=8,TM=8,TN=8", "0123456789abcdef", "fp32"}, 4.5, 1.2, 5.0};
}

GT_TEST(validate_winner_refuses_every_impossible_field, GT_NEEDS_NONE)
{
    gt_shape s;
    dbv_winner w = good_winner();
    CHECK_MSG(dbv_winner_check(&w, &s, err, sizeof err) == 0 && s.m == 4096 && !s.ta, "%s", err);
    w.model = (dbv_model){"NVIDIA B200", 10, 0, 148}; /* three-digit architectures are architectures */
    CHECK_MSG(dbv_winner_check(&w, &s, err, sizeof err) == 0, "%s", err);
    w = good_winner(), w.spread_pct = w.cublas_ms = NAN, w.kernel.math = NULL; /* the optional fields absent */
    CHECK_MSG(dbv_winner_check(&w, &s, err, sizeof err) == 0, "%s", err);
    char *big = malloc(1 << 20);
    memset(big, 'G', (1 << 20) - 1), big[(1 << 20) - 1] = 0;
    static const struct {
        int field;
        double v;
        const char *text, *says;
    } cases[] = {
        {0, 99, NULL, "compute capability 99.0"}, {0, 75, NULL, "75.0 is no architecture"},
        {1, 10, NULL, "9.10"},                    {2, 0, NULL, "sm_count 0"},
        {2, 5000, NULL, "sm_count"},              {3, 0, NULL, "shape.m 0"},
        {3, 4294967297.0, NULL, "shape.m 4294967297"}, {4, -1, NULL, "shape.n -1"},
        {6, 0, "NN", "layout"},                   {6, 0, "x", "layout"},
        {7, 0, "nosuch", "family 'nosuch' is unknown"}, {7, 0, "test_oob", "family 'test_oob' is unknown"},
        {7, 0, "tile2d\x1b[2J", "control character"}, {8, 0, "BM=7,BN=128,BK=8,TM=8,TN=8", "not a legal kernel on sm_90"},
        {8, 0, "BN=128,BM=128,BK=8,TM=8,TN=8", "canonical"}, {8, 0, "BM=0128,BN=128,BK=8,TM=8,TN=8", "canonical"},
        {8, 0, "BM=128;rm -rf /", "params"},      {9, 0, "XYZ", "source_hash"},
        {10, 0, "tf32x3", "math 'tf32x3', but family tile2d"}, {10, 0, "bogus", "math"},
        {11, -1, NULL, "median_ms -1"},           {11, 0, NULL, "median_ms 0"},
        {11, 1e-300, NULL, "median_ms"},          {11, NAN, NULL, "median_ms"},
        {11, INFINITY, NULL, "median_ms"},        {11, 0.02, NULL, "TFLOPS"},
        {11, 1e9, NULL, "median_ms"},             {12, -1, NULL, "spread_pct"},
        {12, INFINITY, NULL, "spread_pct"},       {13, 1e-300, NULL, "cublas_ms"},
        {13, 0, NULL, "cublas_ms"},               {13, 4.5e4, NULL, "times median_ms"},
        {5, 0, NULL, "gpu.name"},                 {14, 0, NULL, "gpu.name"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        w = good_winner();
        switch (cases[i].field) {
        case 0: w.model.cc_major = (long long)cases[i].v; break;
        case 1: w.model.cc_minor = (long long)cases[i].v; break;
        case 2: w.model.sm_count = (long long)cases[i].v; break;
        case 3: w.m = (long long)cases[i].v; break;
        case 4: w.n = (long long)cases[i].v; break;
        case 5: w.model.name = ""; break;
        case 6: w.layout = cases[i].text; break;
        case 7: w.kernel.family = cases[i].text; break;
        case 8: w.kernel.params = cases[i].text; break;
        case 9: w.kernel.source_hash = cases[i].text; break;
        case 10: w.kernel.math = cases[i].text; break;
        case 11: w.median_ms = cases[i].v; break;
        case 12: w.spread_pct = cases[i].v; break;
        case 13: w.cublas_ms = cases[i].v; break;
        case 14: w.model.name = big; break;
        }
        const int rc = dbv_winner_check(&w, &s, err, sizeof err);
        CHECK_MSG(rc < 0 && strstr(err, cases[i].says), "case %zu: rc %d, want '%s' in: %s", i, rc, cases[i].says, err);
        CHECK_MSG(!strchr(err, '\x1b'), "case %zu: the message repeats the control character", i);
    }
    free(big);
    /* the vendor family's parameters are checked by its own legal() */
    w = good_winner();
    w.kernel.family = "cublas";
    w.kernel.params = "API=7,ALGO=0,TILE=0,SPLITK=0,RED=0,SWIZZLE=0,CUSTOM=0,STAGES=0,INNER=0,CLUSTER=0,WSKB=0,VER=1";
    CHECK(dbv_winner_check(&w, &s, err, sizeof err) < 0 && strstr(err, "API=7"));
    w.kernel.params = "API=0,ALGO=0,TILE=0,SPLITK=0,RED=0,SWIZZLE=0,CUSTOM=0,STAGES=0,INNER=0,CLUSTER=0,WSKB=0,VER=1";
    CHECK_MSG(dbv_winner_check(&w, &s, err, sizeof err) == 0, "%s", err);
    char label[200];
    w.model.name = "evil\x1b]0;title\x07";
    dbv_winner_label(&w, label, sizeof label);
    CHECK_MSG(!strcmp(label, "(evil?]0;title?, 4096x4096x4096 nn)"), "%s", label);
}

static dbv_sweep good_sweep(void)
{
    return (dbv_sweep){"0123456789abcdef0123456789abcdef", "2025-01-02T03:04:05.678Z", "gpu-box-1", "gemmtune tune",
                       "0.2.0", "580.159.04", "local", 13000, 13000, 13000, 1980};
}

GT_TEST(validate_sweep_and_gpu_rows, GT_NEEDS_NONE)
{
    dbv_sweep s = good_sweep();
    CHECK_MSG(dbv_sweep_check(&s, err, sizeof err) == 0, "%s", err);
    s.host = s.command = s.version = s.nvidia_driver = NULL;
    s.driver_version = s.cuda_version = s.nvrtc_version = s.sm_clock_mhz = DBV_ABSENT;
    s.origin = "merge:/data/part-1.db";
    CHECK_MSG(dbv_sweep_check(&s, err, sizeof err) == 0, "%s", err);
    s = good_sweep(), s.uid = "0123456789ABCDEF0123456789ABCDEF";
    CHECK(dbv_sweep_check(&s, err, sizeof err) < 0 && strstr(err, "sweep.uid"));
    s = good_sweep(), s.started_at = "soon";
    CHECK(dbv_sweep_check(&s, err, sizeof err) < 0 && strstr(err, "sweep.started_at"));
    s = good_sweep(), s.host = "box\r\nX-Injected: 1";
    CHECK(dbv_sweep_check(&s, err, sizeof err) < 0 && strstr(err, "sweep.host"));
    s = good_sweep(), s.origin = "elsewhere";
    CHECK(dbv_sweep_check(&s, err, sizeof err) < 0 && strstr(err, "sweep.origin"));
    s = good_sweep(), s.origin = NULL;
    CHECK(dbv_sweep_check(&s, err, sizeof err) < 0 && strstr(err, "sweep.origin"));
    s = good_sweep(), s.driver_version = -5;
    CHECK(dbv_sweep_check(&s, err, sizeof err) < 0 && strstr(err, "driver_version -5"));
    s = good_sweep(), s.sm_clock_mhz = 1LL << 40;
    CHECK(dbv_sweep_check(&s, err, sizeof err) < 0 && strstr(err, "sm_clock_mhz"));
    s = good_sweep(), s.nvidia_driver = "580.159.04.0000000000000000000000";
    CHECK(dbv_sweep_check(&s, err, sizeof err) < 0 && strstr(err, "nvidia_driver"));
    CHECK(dbv_gpu_check("GPU-5c0e1a2b", 80LL << 30, 50 << 20, err, sizeof err) == 0);
    CHECK(dbv_gpu_check("GPU-5c0e1a2b", DBV_ABSENT, DBV_ABSENT, err, sizeof err) == 0);
    CHECK(dbv_gpu_check("GPU-\x1b", DBV_ABSENT, DBV_ABSENT, err, sizeof err) < 0 && strstr(err, "gpu.uuid"));
    CHECK(dbv_gpu_check("GPU-1", -1, DBV_ABSENT, err, sizeof err) < 0 && strstr(err, "mem_bytes"));
}

GT_TEST(validate_trial_rows, GT_NEEDS_NONE)
{
    const gt_shape s = {4096, 4096, 4096, 0, 0};
    const dbv_kernel k = {"tile2d", "BM=128,BN=128,BK=8,TM=8,TN=8", "0123456789abcdef", "fp32"};
    const dbv_kernel illegal = {"tile2d", "BM=7,BN=128,BK=8,TM=8,TN=8", "0123456789abcdef", "fp32"};
    gt_limits lim;
    CHECK(gt_limits_for_cc(9, 0, &lim));
    const dbv_trial ok = {"ok", NULL, "2025-01-02T03:04:05Z", 4.5, 4.4, 4.7, 30.5, 1e-6, 0.5, 128, 0, 20};
    dbv_trial t = ok;
    CHECK_MSG(dbv_trial_check(&t, &s, &k, &lim, err, sizeof err) == 0, "%s", err);
    t.status = "resources", t.message = "ptxas: too many registers\n\tin gt_gemm";
    t.median_ms = t.min_ms = t.max_ms = t.tflops = t.rel_err = NAN, t.regs = t.reps = DBV_ABSENT;
    CHECK_MSG(dbv_trial_check(&t, &s, &illegal, &lim, err, sizeof err) == 0, "%s", err); /* a failed one may be */
    /* screened on a proxy of a smaller K: over 2000 TFLOPS counted on the full shape, and so allowed */
    t = ok, t.status = "screened", t.median_ms = 0.05, t.min_ms = 0.049, t.max_ms = 0.051;
    CHECK_MSG(dbv_trial_check(&t, &s, &k, &lim, err, sizeof err) == 0, "%s", err);
    t = ok, t.rel_err = INFINITY, t.status = "wrong";
    CHECK_MSG(dbv_trial_check(&t, &s, &k, &lim, err, sizeof err) == 0, "%s", err);
    static const struct {
        int field;
        double v;
        const char *says;
    } cases[] = {{0, 0, "status 'bogus'"}, {1, 0, "message"},   {2, 0, "created_at"},   {3, NAN, "an ok trial has"},
                 {3, 1e-300, "median_ms"}, {3, 0.002, "TFLOPS"}, {4, 5, "not in order"}, {5, 1e12, "tflops"},
                 {6, -1, "rel_err"},       {7, 300, "regs"},     {8, -2, "reps"},        {9, 0, "not a legal kernel"},
                 {10, -1, "compile_s"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const dbv_kernel *kk = &k;
        t = ok;
        switch (cases[i].field) {
        case 0: t.status = "bogus"; break;
        case 1: t.message = "done \x1b[2J"; break;
        case 2: t.created_at = "2025-01-02"; break;
        case 3: t.median_ms = cases[i].v, t.min_ms = t.max_ms = NAN; break;
        case 4: t.min_ms = cases[i].v; break;
        case 5: t.tflops = cases[i].v; break;
        case 6: t.rel_err = cases[i].v; break;
        case 7: t.regs = (long long)cases[i].v; break;
        case 8: t.reps = (long long)cases[i].v; break;
        case 9: kk = &illegal; break;
        case 10: t.compile_s = cases[i].v; break;
        }
        CHECK_MSG(dbv_trial_check(&t, &s, kk, &lim, err, sizeof err) < 0 && strstr(err, cases[i].says),
                  "case %zu: want '%s' in: %s", i, cases[i].says, err);
    }
}

GT_TEST(validate_possible_times_for_readers, GT_NEEDS_NONE)
{
    const gt_shape s = {1024, 1024, 1024, 0, 0};
    CHECK(dbv_ms_possible(&s, 0.1) && !dbv_ms_possible(&s, 1e-300) && !dbv_ms_possible(&s, -1) &&
          !dbv_ms_possible(&s, 0) && !dbv_ms_possible(&s, NAN) && !dbv_ms_possible(&s, INFINITY));
    CHECK(dbv_row_possible(1024, 1024, 1024, 1, 0.1) && !dbv_row_possible(4294967297LL, 1, 1, 1, 0.1) &&
          !dbv_row_possible(0, 1, 1, 1, 0.1) && !dbv_row_possible(1, 1, 1, 1, 1e-9));
    /* a batch is batch times the work: a time possible for one product is impossible for 100000 of them */
    CHECK(dbv_row_possible(1024, 1024, 1024, 64, 1.0) && !dbv_row_possible(1024, 1024, 1024, 100000, 0.1) &&
          !dbv_row_possible(1, 1, 1, 0, 0.1) && !dbv_row_possible(1, 1, 1, 4294967297LL, 0.1));
}
