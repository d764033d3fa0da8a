/* The CLI without a GPU: argument parsing helpers, the option table and --help drawn from it, the table printer,
 * the GPU-memory check, --shard auto, --help/--version, tune's bad input and its no-GPU message. */
#include "cli.h"
#include "harness.h"
#include "options.h"
#include "table.h"
#include "term.h"

#include <stdio.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

GT_TEST(cli_parse_sizes_accepts_n_mxnxk_and_batches, GT_NEEDS_NONE)
{
    gt_shape *v = NULL;
    char err[256];
    int n = gt_cli_parse_sizes("1024,3000x5000x700,7,64x512x512x128", &v, err, sizeof err);
    CHECK(n == 4);
    if (n == 4) {
        CHECK(v[0].m == 1024 && v[0].n == 1024 && v[0].k == 1024 && gt_shape_batch(&v[0]) == 1);
        CHECK(v[1].m == 3000 && v[1].n == 5000 && v[1].k == 700);
        CHECK(v[2].m == 7 && v[2].k == 7 && v[2].ta == 0 && v[2].tb == 0);
        CHECK(v[3].batch == 64 && v[3].m == 512 && v[3].n == 512 && v[3].k == 128); /* a batch of 64 products */
    }
    free(v);
    const char *bad[] = {"0", "abc", "", "1024,", "12x34", "1x2x3x4x5", "0x2x3x4", "-5", "1024,,2", "2000000",
                         "1e3", "4 096", "4294967296x2x2x2"};
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
        {"--model-stop 0.5", "--model-stop"}, {"--model-stop x", "--model-stop"},
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
        /* never CUDA's "driver version is insufficient", which sends one after a driver upgrade */
        CHECK_MSG(out && !strstr(out, "insufficient"), "%s", out);
        if (gt_run("ldconfig -p | grep -q 'libcuda.so.1 '", NULL) != 0)
            CHECK_MSG(out && strstr(out, "no NVIDIA driver is installed"), "%s", out);
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

/* A family that takes no call of the shape and layout asked (skinnyr: a small side's large operand along K, nt) runs
 * nothing, and the sweep says so rather than that validation refused every candidate. */
GT_TEST(gpu_cli_tune_says_when_no_family_applies, GT_NEEDS_GPU)
{
    char *out = NULL, *db = gt_tmp_path(".db"), a[256];
    snprintf(a, sizeof a, "tune --gpu 0 --family skinnyr --sizes 33x100x200:nt --no-progress --db %s", db);
    int rc = run_cli(a, &out);
    CHECK_MSG(rc == 0 && out && strstr(out, "no candidate of the families asked for applies") &&
                  !strstr(out, "passed validation"),
              "exit %d: %s", rc, out);
    free(out);
    unlink(db);
    free(db);
}

GT_TEST(cli_options_one_table_parses_every_verb, GT_NEEDS_NONE)
{
    gt_cli_args a;
    char err[512];
    char *v1[] = {"query", "--layouts", "tn", "--gpu-model=h200", "--format", "csv", "--shape", "2048", NULL};
    gt_cli_args_init(&a);
    CHECK_MSG(gt_cli_parse(GT_V_QUERY, 8, v1, &a, err, sizeof err) == 0, "%s", err);
    CHECK(a.layout.n == 1 && a.layout.v[0] == 2 && !strcmp(a.gpu_model, "h200") && !strcmp(a.format, "csv"));
    CHECK(a.shape.n == 1 && a.shape.v[0].m == 2048 && a.shape.v[0].k == 2048);
    gt_cli_args_free(&a);
    /* --gpu is a device index everywhere; a name is refused with the option that takes one */
    char *v2[] = {"query", "--gpu", "h200", NULL};
    gt_cli_args_init(&a);
    CHECK(gt_cli_parse(GT_V_QUERY, 3, v2, &a, err, sizeof err) == -1 && strstr(err, "device index") &&
          strstr(err, "--gpu-model h200"));
    gt_cli_args_free(&a);
    char *v3[] = {"tune", "--gpu", "0,2", "--layout", "nn,tt", "--sizes", "64,8x16x32", "--no-progress", NULL};
    gt_cli_args_init(&a);
    CHECK_MSG(gt_cli_parse(GT_V_TUNE, 8, v3, &a, err, sizeof err) == 0, "%s", err);
    CHECK(a.gpu.n == 2 && a.gpu.v[1] == 2 && a.layout.n == 2 && a.layout.v[1] == 3 && a.sizes.n == 2 && a.progress == 0);
    gt_cli_args_free(&a);
    char *v3b[] = {"bench", "--layouts", "nt,tn", NULL}; /* bench takes a list too: each item in each layout */
    gt_cli_args_init(&a);
    CHECK_MSG(gt_cli_parse(GT_V_BENCH, 3, v3b, &a, err, sizeof err) == 0, "%s", err);
    CHECK(a.layout.n == 2 && a.layout.v[0] == 1 && a.layout.v[1] == 2 && a.beta == -1); /* not given: the bench runs beta 0 */
    gt_cli_args_free(&a);
    char *v3c[] = {"bench", "--beta", "1", NULL};
    gt_cli_args_init(&a);
    CHECK(gt_cli_parse(GT_V_BENCH, 3, v3c, &a, err, sizeof err) == 0 && a.beta == 1.0);
    gt_cli_args_free(&a);
    static const struct {
        unsigned verb;
        const char *args[4], *says;
    } bad[] = {
        {GT_V_QUERY, {"--sizes", "64"}, "an option of tune, bench and precompile, not of query"},
        {GT_V_QUERY, {"--layout", "nn,tn"}, "bad --layout 'nn,tn'"},
        {GT_V_EXPLAIN, {"--layouts", "nn,tn"}, "bad --layouts 'nn,tn': want nn, nt, tn or tt"},
        {GT_V_BENCH, {"--gpu", "0,1"}, "want one CUDA device index"},
        {GT_V_BENCH, {"--beta", "-1"}, "bad --beta '-1'"},
        {GT_V_TUNE, {"--beta", "1"}, "--beta"},
        {GT_V_EXPORT, {"--format", "csv"}, "unknown --format 'csv': want one of json,header"},
        {GT_V_QUERY, {"--math", "fp64"}, "unknown --math 'fp64': want one of fp32,tf32x3,all"},
        {GT_V_EXEC, {"--math", "all"}, "unknown --math 'all': want one of fp32,tf32x3"},
        {GT_V_QUERY, {"--top"}, "missing value after --top"},
        {GT_V_QUERY, {"--trials=yes"}, "--trials takes no value"},
        {GT_V_TUNE, {"--budget", "5x"}, "bad --budget '5x': want a duration"},
        {GT_V_TUNE, {"--layouts", "qq"}, "bad --layouts 'qq'"},
        {GT_V_EXPLAIN, {"--frobnicate"}, "unknown option '--frobnicate'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        char *v[6] = {"x", (char *)bad[i].args[0], (char *)bad[i].args[1], NULL};
        int argc = bad[i].args[1] ? 3 : 2;
        gt_cli_args_init(&a);
        CHECK_MSG(gt_cli_parse(bad[i].verb, argc, v, &a, err, sizeof err) == -1 && strstr(err, bad[i].says),
                  "%s: %s", bad[i].args[0], err);
        gt_cli_args_free(&a);
    }
    char *v4[] = {"import", "--db", "x.db", "--", "--odd-name.json", "-h", NULL};
    gt_cli_args_init(&a);
    CHECK(gt_cli_parse(GT_V_IMPORT, 6, v4, &a, err, sizeof err) == 0 && a.npos == 2 && !strcmp(a.pos[0], "--odd-name.json"));
    gt_cli_args_free(&a);
    char *v5[] = {"report", "--bogus", "--help", NULL};
    gt_cli_args_init(&a);
    CHECK(gt_cli_parse(GT_V_REPORT, 3, v5, &a, err, sizeof err) == -1); /* the first problem is reported */
    gt_cli_args_free(&a);
}

/* Every option a verb's --help shows is one its parser takes, and the other way round for a sample. */
GT_TEST(cli_help_is_drawn_from_the_option_table, GT_NEEDS_NONE)
{
    static const struct {
        const char *verb;
        unsigned bit;
        const char *must[4];
    } verbs[] = {
        {"tune", GT_V_TUNE, {"--shard I/N|auto", "--layout, --layouts LIST", "--gpu LIST", "--prune-ratio"}},
        {"query", GT_V_QUERY, {"--gpu-model, --gpu-name NAME", "--gpus", "--sweeps", "--gpu N"}},
        {"export", GT_V_EXPORT, {"-o, --output FILE", "--with-cubin", "--gpu-model", "--format F"}},
        {"import", GT_V_IMPORT, {"--db PATH", NULL}},
        {"merge", GT_V_MERGE, {"--db PATH", NULL}},
        {"report", GT_V_REPORT, {"-o, --output FILE", "--gpu-model", NULL}},
        {"explain", GT_V_EXPLAIN, {"--arch sm_XY", "--gpu-model", "--fallback F", "--gpu N"}},
        {"bench", GT_V_BENCH, {"--sizes LIST", "docs/BENCHMARKS.md", "--format F", NULL}},
        {"candidates", GT_V_CANDIDATES, {"--count", "--arch sm_XY", NULL}},
        {"precompile", GT_V_PRECOMPILE, {"--arch sm_XY", "--sizes LIST", "--jobs N", "cache.key"}},
    };
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; ++i) {
        char *out = NULL, args[64];
        snprintf(args, sizeof args, "%s --help", verbs[i].verb);
        CHECK_MSG(run_cli(args, &out) == 0 && out, "%s", args);
        for (int j = 0; out && j < 4 && verbs[i].must[j]; ++j)
            CHECK_MSG(strstr(out, verbs[i].must[j]), "%s --help lacks '%s'", verbs[i].verb, verbs[i].must[j]);
        for (const char *line = out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
            char opt[40];
            if (sscanf(line, "  %39[-a-z]", opt) == 1 && opt[0] == '-' && strcmp(opt, "-h"))
                CHECK_MSG(gt_cli_has_option(verbs[i].bit, opt), "%s --help shows %s, which it does not parse",
                          verbs[i].verb, opt);
        }
        CHECK_MSG(out && !strstr(out, "issue-7"), "%s --help speaks of issue 7", verbs[i].verb);
        free(out);
    }
}

GT_TEST(cli_table_prints_text_csv_and_json_alike, GT_NEEDS_NONE)
{
    static const gt_col cols[] = {{"name", NULL, NULL}, {"ms", "time ms", "%.2f"}, {"ok", NULL, NULL}, {"note", NULL, NULL}};
    gt_table *t = gt_table_new(cols, 4);
    cJSON *r = gt_table_row(t);
    cJSON_AddStringToObject(r, "name", "BM=128,BN=64"), cJSON_AddNumberToObject(r, "ms", 0.1);
    cJSON_AddBoolToObject(r, "ok", 1), cJSON_AddStringToObject(r, "note", "say \"hi\"");
    r = gt_table_row(t);
    cJSON_AddStringToObject(r, "name", "a"), cJSON_AddNullToObject(r, "ms"), cJSON_AddBoolToObject(r, "ok", 0);
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    CHECK(gt_table_print(t, "table", f) == 0);
    fclose(f);
    CHECK_MSG(!strcmp(buf, "name          time ms  ok   note\n"
                           "BM=128,BN=64     0.10  yes  say \"hi\"\n"
                           "a                 n/a       n/a\n"), "%s", buf);
    free(buf);
    f = open_memstream(&buf, &n);
    CHECK(gt_table_print(t, "csv", f) == 0);
    fclose(f);
    CHECK_MSG(!strcmp(buf, "name,ms,ok,note\n\"BM=128,BN=64\",0.1,true,\"say \"\"hi\"\"\"\na,,false,\n"), "%s", buf);
    free(buf);
    f = open_memstream(&buf, &n);
    CHECK(gt_table_print(t, "json", f) == 0 && gt_table_print(t, "xml", f) == -1);
    fclose(f);
    cJSON *j = cJSON_Parse(buf);
    CHECK(cJSON_GetArraySize(j) == 2 && cJSON_GetObjectItem(cJSON_GetArrayItem(j, 0), "ms")->valuedouble == 0.1);
    CHECK(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(j, 1), "note")));
    cJSON_Delete(j);
    free(buf);
    gt_table_free(t);
}

/* Data reaches a terminal as text: control bytes, C1 controls (raw bytes or UTF-8) and bidirectional overrides
 * escaped, other UTF-8 kept; the table, CSV and JSON printers all pass their text through it. */
GT_TEST(cli_term_escape_leaves_no_control_byte, GT_NEEDS_NONE)
{
    static const char in[] = "a\nb\tc\rd\x1b[31m\x07\x7f\xc2\x9b" "2J\xe2\x80\xae" "rtl\x9b\xff\xc3\xa9 ok\\";
    static const char want[] = "a\\nb\\tc\\rd\\x1b[31m\\x07\\x7f\\u009b2J\\u202ertl\\x9b\\xff\xc3\xa9 ok\\";
    char buf[256], small[8];
    size_t n = gt_term_escape(in, buf, sizeof buf);
    CHECK_MSG(!strcmp(buf, want) && n == strlen(want), "%s", buf);
    CHECK(gt_term_escape(in, small, sizeof small) == n && strlen(small) == 7 && !strncmp(small, want, 7));
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK(gt_term_printf(f, "name %s!\n", in) == 0 && gt_term_json(f, "[\"\xc2\x9b\xe2\x80\xae\xff\xc3\xa9\"]") == 0);
    fclose(f);
    CHECK_MSG(text && !strncmp(text, "name ", 5) && !strncmp(text + 5, want, strlen(want)) &&
                  !strcmp(text + 5 + strlen(want), "!\n[\"\\u009b\\u202e\\u00ff\xc3\xa9\"]"),
              "%s", text);
    free(text);
    static const gt_col cols[] = {{"name", NULL, NULL}};
    gt_table *t = gt_table_new(cols, 1);
    cJSON_AddStringToObject(gt_table_row(t), "name", "x\x1b]0;t\x07\n,y");
    static const char *const formats[] = {"table", "csv", "json"};
    for (int i = 0; i < 3; ++i) {
        f = open_memstream(&text, &len);
        CHECK(gt_table_print(t, formats[i], f) == 0);
        fclose(f);
        CHECK_MSG(!strpbrk(text, "\x1b\x07") && strstr(text, i < 2 ? "x\\x1b]0;t\\x07\\n,y" : "x\\u001b]0;t\\u0007\\n,y"),
                  "%s: %s", formats[i], text);
        free(text);
    }
    gt_table_free(t);
}

/* `make install` on a fresh clone builds the CLI and installs it (it used to install it only when already built). */
GT_TEST(cli_make_install_builds_and_installs_the_cli, GT_NEEDS_NONE)
{
    char *fresh = gt_tmp_path("_fresh"), cmd[1200], want[1400], *out = NULL;
    snprintf(cmd, sizeof cmd, "make -n -C " GT_ROOT " BUILD=%s PREFIX=/opt/gt-prefix install", fresh);
    int rc = gt_run(cmd, &out);
    snprintf(want, sizeof want, "-o %s/gemmtune ", fresh);
    CHECK_MSG(rc == 0 && out && strstr(out, want), "no link of the CLI in: %s", out ? out : "");
    snprintf(want, sizeof want, "\ninstall -m 755 %s/gemmtune /opt/gt-prefix/bin/gemmtune\n", fresh);
    CHECK_MSG(out && strstr(out, want), "no unconditional install of the CLI in: %s", out ? out : "");
    free(out), free(fresh);
}

GT_TEST(cli_memory_check_says_what_fits_and_refuses_what_cannot, GT_NEEDS_NONE)
{
    char msg[600];
    const long long h200 = 150754820096LL, l2 = 60 << 20;
    gt_shape ok[] = {{8192, 8192, 8192, 0, 0}, {1024, 1024, 1024, 0, 0}};
    CHECK(gt_cli_check_memory("NVIDIA H200", h200, l2, ok, 2, msg, sizeof msg) == 0);
    CHECK_MSG(strstr(msg, "NVIDIA H200 has 140.4 GiB") && strstr(msg, "8192x8192x8192, needs 3.1 GiB") &&
              strstr(msg, "square shapes fit up to about 6"), "%s", msg);
    gt_shape big[] = {{1024, 1024, 1024, 0, 0}, {1048576, 1048576, 1, 0, 0}};
    CHECK(gt_cli_check_memory("NVIDIA H200", h200, l2, big, 2, msg, sizeof msg) == -1);
    CHECK_MSG(strstr(msg, "shape 1048576x1048576x1 needs") && strstr(msg, "but NVIDIA H200 has 140.4 GiB") &&
              strstr(msg, "nothing was run"), "%s", msg);
    /* a shape just past the largest square that fits is refused, one at it is not */
    CHECK(sscanf(strstr(msg, "about ") + 6, "%d", &big[1].m) == 1);
    big[1].n = big[1].k = big[1].m;
    CHECK(gt_cli_check_memory("G", h200, l2, big, 2, msg, sizeof msg) == 0);
    big[1].m = big[1].n = big[1].k = big[1].m + 100;
    CHECK(gt_cli_check_memory("G", h200, l2, big, 2, msg, sizeof msg) == -1);
    CHECK(gt_cli_check_memory("G", 0, 0, ok, 2, msg, sizeof msg) == 0 && strstr(msg, "did not report"));
}

static const char *const *slurm_env;
static const char *fake_getenv(const char *name)
{
    for (int i = 0; slurm_env && slurm_env[i]; i += 2)
        if (!strcmp(slurm_env[i], name)) return slurm_env[i + 1];
    return NULL;
}

GT_TEST(cli_shard_auto_reads_slurm, GT_NEEDS_NONE)
{
    static const struct {
        const char *env[12];
        int rc, i, n;
        const char *says;
    } cases[] = {
        {{"SLURM_ARRAY_TASK_ID", "3", "SLURM_ARRAY_TASK_COUNT", "8", "SLURM_ARRAY_TASK_MIN", "0"}, 0, 3, 8, "job array"},
        {{"SLURM_ARRAY_TASK_ID", "5", "SLURM_ARRAY_TASK_COUNT", "4", "SLURM_ARRAY_TASK_MIN", "2",
          "SLURM_ARRAY_TASK_MAX", "5"}, 0, 3, 4, "task 5 of 4 tasks from 2"},
        {{"SLURM_ARRAY_TASK_ID", "7", "SLURM_ARRAY_TASK_COUNT", "4", "SLURM_ARRAY_TASK_MIN", "1",
          "SLURM_ARRAY_TASK_MAX", "7", "SLURM_ARRAY_TASK_STEP", "2"}, 0, 3, 4, "job array"},
        {{"SLURM_ARRAY_TASK_ID", "9", "SLURM_ARRAY_TASK_COUNT", "3", "SLURM_ARRAY_TASK_MIN", "1",
          "SLURM_ARRAY_TASK_MAX", "9"}, -1, 0, 0, "evenly spaced"},
        {{"SLURM_ARRAY_TASK_ID", "2"}, -1, 0, 0, "SLURM_ARRAY_TASK_COUNT is not"},
        {{"SLURM_ARRAY_TASK_ID", "x2", "SLURM_ARRAY_TASK_COUNT", "4"}, -1, 0, 0, "not a task number"},
        {{"SLURM_PROCID", "2", "SLURM_NTASKS", "4"}, 0, 2, 4, "SLURM_PROCID 2 of SLURM_NTASKS 4"},
        {{"SLURM_PROCID", "4", "SLURM_NTASKS", "4"}, -1, 0, 0, "not below"},
        {{"SLURM_PROCID", "1"}, -1, 0, 0, "no Slurm job array or task rank"},
        {{NULL}, -1, 0, 0, "sbatch --array"},
    };
    char from[160], err[400];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        int i = -1, n = -1;
        slurm_env = cases[c].env;
        int rc = gt_cli_parse_shard("auto", fake_getenv, &i, &n, from, sizeof from, err, sizeof err);
        CHECK_MSG(rc == cases[c].rc && strstr(rc ? err : from, cases[c].says), "case %zu: %d %s %s", c, rc, from, err);
        if (rc == 0) CHECK_MSG(i == cases[c].i && n == cases[c].n, "case %zu: %d/%d", c, i, n);
    }
    slurm_env = NULL;
    int i, n;
    CHECK(gt_cli_parse_shard("2/8", fake_getenv, &i, &n, from, sizeof from, err, sizeof err) == 0 && i == 2 && n == 8 && !from[0]);
    CHECK(gt_cli_parse_shard("8/8", fake_getenv, &i, &n, from, sizeof from, err, sizeof err) == -1 && strstr(err, "or auto"));
    /* through the CLI: no GPU is needed to refuse it, and nothing is created */
    char *out = NULL, *db = gt_tmp_path(".db"), args[300];
    snprintf(args, sizeof args, "--shard auto --sizes 64 --db %s", db);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "env -u SLURM_ARRAY_TASK_ID -u SLURM_PROCID %s %s", GT_CLI, args);
    CHECK(gt_run(cmd, &out) == 2 && strstr(out, "--shard auto: no Slurm") && access(db, F_OK) != 0);
    free(out);
    free(db);
}

GT_TEST(cli_bare_gemmtune_prints_usage_and_exits_0, GT_NEEDS_NONE)
{
    char *out = NULL;
    CHECK(gt_run(GT_CLI " 2>/dev/null", &out) == 0 && strstr(out, "usage: gemmtune VERB") &&
          strstr(out, "options first, no verb: the verb is tune"));
    free(out);
}
