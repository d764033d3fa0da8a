/* The database verbs through the built CLI (build/gemmtune): query, export (JSON, header compiled with
 * cc -Werror, embedded cubins), import, merge, report, and bad input that must leave the database byte-identical.
 * Fixture databases come from tests/fixture.c. */
#include "compile.h"
#include "cubin.h"
#include "db.h"
#include "fixture.h"
#include "harness.h"

#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *out; /* output of the last run() */

#define run(...) gt_runf(&out, __VA_ARGS__)

static int exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

static int json_array_len(const char *text)
{
    const char *start = strchr(text, '[');
    cJSON *a = start ? cJSON_Parse(start) : NULL;
    int n = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : -1;
    cJSON_Delete(a);
    return n;
}

GT_TEST(cli_query_formats_filters_and_ratio, GT_NEEDS_NONE)
{
    char *db = gt_tmp_path(".db");
    CHECK(gt_fixture_db(db, 0, 0, 1.0) == 0 && gt_fixture_db(db, 2, 0, 1.3) == 0);
    CHECK(run(GT_CLI " query --db %s", db) == 0);
    CHECK(strstr(out, "ratio_vs_cublas") && strstr(out, "NVIDIA H200") && strstr(out, "BM="));
    CHECK(run(GT_CLI " query --db %s --format json", db) == 0 && json_array_len(out) == 8);
    CHECK(run(GT_CLI " query --db %s --format json --gpu-model a100", db) == 0 && json_array_len(out) == 4);
    CHECK(run(GT_CLI " query --db=%s --format=json --shape 2048 --layout tn", db) == 0 && json_array_len(out) == 2);
    CHECK(run(GT_CLI " query --db %s --format json --layout tn", db) == 0 && json_array_len(out) == 2);
    CHECK(run(GT_CLI " query --db %s --format json --family nosuch", db) == 0 && json_array_len(out) == 0);
    /* every trial, failed ones too; --top keeps the fastest per GPU model and shape */
    CHECK(run(GT_CLI " query --db %s --format json --trials", db) == 0 && json_array_len(out) == 32);
    CHECK(run(GT_CLI " query --db %s --format json --trials --top 2", db) == 0 && json_array_len(out) == 16);
    CHECK(strstr(out, "\"resources\"") == NULL); /* the failed trial is never among the fastest */
    CHECK(run(GT_CLI " query --db %s --format json --trials --shape 4096x4096x1024 --gpu-model h200", db) == 0);
    cJSON *a = cJSON_Parse(strchr(out, '['));
    CHECK(cJSON_GetArraySize(a) == 4);
    cJSON *first = cJSON_GetArrayItem(a, 0), *last = cJSON_GetArrayItem(a, 3);
    CHECK(first && cJSON_IsTrue(cJSON_GetObjectItem(first, "winner")));
    CHECK(first && cJSON_GetObjectItem(first, "ratio_vs_cublas")->valuedouble ==
                       cJSON_GetObjectItem(first, "cublas_ms")->valuedouble / cJSON_GetObjectItem(first, "ms")->valuedouble);
    CHECK(last && !strcmp(cJSON_GetObjectItem(last, "status")->valuestring, "resources"));
    CHECK(last && cJSON_IsNull(cJSON_GetObjectItem(last, "ratio_vs_cublas")));
    cJSON_Delete(a);
    CHECK(run(GT_CLI " query --db %s --format csv --gpu-model h200", db) == 0);
    const char *head = "gpu,cc,sms,batch,m,n,k,layout,family,params,ms,tflops,cublas_ms,cublas_tflops,ratio_vs_cublas,";
    CHECK_MSG(!strncmp(out, head, strlen(head)), "%.200s", out);
    CHECK(strstr(out, "\"BM=64,BN=64,BK=8,TM=8,TN=8\"") != NULL); /* commas quoted */
    int lines = 0;
    for (const char *p = out; *p; ++p) lines += *p == '\n';
    CHECK(lines == 5);
    gt_fixture_rm(db);
    free(db);
}

GT_TEST(cli_query_missing_db_fails_and_creates_nothing, GT_NEEDS_NONE)
{
    char *dir = gt_tmp_path(""), path[600];
    snprintf(path, sizeof path, "%s/sub/x.db", dir);
    CHECK(run(GT_CLI " query --db %s", path) == 1 && strstr(out, "no database at"));
    CHECK(!exists(path) && !exists(dir));
    CHECK(run("GEMMTUNE_DB=%s " GT_CLI " query", path) == 1 && strstr(out, path));
    CHECK(run("unset GEMMTUNE_DB; XDG_DATA_HOME=%s " GT_CLI " query --format csv", dir) == 1 &&
          strstr(out, "gemmtune/gemmtune.db"));
    CHECK(run("unset GEMMTUNE_DB; XDG_DATA_HOME=%s " GT_CLI " export", dir) == 1);
    CHECK(run("unset GEMMTUNE_DB; XDG_DATA_HOME=%s " GT_CLI " report", dir) == 1);
    CHECK(!exists(dir));
    free(dir);
}

GT_TEST(cli_export_import_roundtrip_identical_and_default_path, GT_NEEDS_NONE)
{
    char *db = gt_tmp_path(".db"), *j1 = gt_tmp_path(".json"), *j2 = gt_tmp_path(".json"), *xdg = gt_tmp_path("");
    CHECK(gt_fixture_db(db, 1, 0, 1.0) == 0 && gt_fixture_db(db, 2, 4, 0.7) == 0);
    CHECK(run(GT_CLI " export --db %s --format json -o %s", db, j1) == 0);
    /* import into a database at the default path: $XDG_DATA_HOME/gemmtune/gemmtune.db, directories created */
    CHECK(run("unset GEMMTUNE_DB; XDG_DATA_HOME=%s " GT_CLI " import %s", xdg, j1) == 0 && strstr(out, "imported 8 winners"));
    char fresh[600];
    snprintf(fresh, sizeof fresh, "%s/gemmtune/gemmtune.db", xdg);
    CHECK(exists(fresh));
    CHECK(run(GT_CLI " export --db %s -o %s", fresh, j2) == 0);
    CHECK(gt_fixture_same_bytes(j1, j2));
    /* and to standard output: the same bytes */
    CHECK(run(GT_CLI " export --db %s > %s", fresh, j2) == 0 && gt_fixture_same_bytes(j1, j2));
    char cmd[1300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", xdg);
    CHECK(system(cmd) == 0);
    gt_fixture_rm(db), unlink(j1), unlink(j2);
    free(db), free(j1), free(j2), free(xdg);
}

GT_TEST(cli_merge_twice_changes_nothing, GT_NEEDS_NONE)
{
    char *a = gt_tmp_path(".db"), *b = gt_tmp_path(".db"), *c = gt_tmp_path(".db");
    CHECK(gt_fixture_db(a, 0, 0, 1.0) == 0 && gt_fixture_db(b, 0, 1, 0.9) == 0 && gt_fixture_db(c, 1, 0, 1.0) == 0);
    CHECK(run(GT_CLI " merge --db %s %s %s", a, b, c) == 0);
    CHECK(strstr(out, "1 sweeps, 16 trials") != NULL);
    char *once = gt_fixture_dump(a);
    CHECK(run(GT_CLI " merge %s %s --db %s", b, c, a) == 0 && strstr(out, "0 sweeps, 0 trials, 0 baselines, 0 winners"));
    char *twice = gt_fixture_dump(a);
    CHECK(once && twice && strlen(once) > 1000 && !strcmp(once, twice));
    CHECK(run(GT_CLI " query --db %s --format json", a) == 0 && json_array_len(out) == 8);
    CHECK(run(GT_CLI " merge --db %s", a) == 2); /* nothing to merge */
    free(once), free(twice);
    gt_fixture_rm(a), gt_fixture_rm(b), gt_fixture_rm(c);
    free(a), free(b), free(c);
}

/* Run cmd (which must fail with exit code want_rc and want in its output) and check db's bytes did not change. */
static void refused(const char *db, int want_rc, const char *want, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void refused(const char *db, int want_rc, const char *want, const char *fmt, ...)
{
    char cmd[4096], copy[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(copy, sizeof copy, "%s.orig", db);
    CHECK(gt_fixture_copy(db, copy) == 0);
    int rc = run("%s", cmd);
    CHECK_MSG(rc == want_rc, "rc %d, want %d: %s\n%s", rc, want_rc, cmd, out);
    CHECK_MSG(strstr(out, want) != NULL, "want '%s' from: %s\n%s", want, cmd, out);
    CHECK_MSG(gt_fixture_same_bytes(db, copy), "database changed by: %s", cmd);
    unlink(copy);
}

/* Issue 25: a merge of several parts is all or nothing and names the part at fault; a refused merge or import
 * into a database that did not exist leaves no file. */
GT_TEST(cli_merge_all_or_nothing_and_refusals_leave_no_new_file, GT_NEEDS_NONE)
{
    char *db = gt_tmp_path(".db"), *good = gt_tmp_path(".db"), *bad = gt_tmp_path(".db"), *fresh = gt_tmp_path(".db");
    char sql[200];
    CHECK(gt_fixture_db(db, 0, 0, 1.0) == 0 && gt_fixture_db(good, 2, 0, 1.0) == 0 && gt_fixture_db(bad, 1, 0, 1.0) == 0);
    snprintf(sql, sizeof sql, "UPDATE winners SET median_ms = -1 WHERE rowid = 2");
    sqlite3 *h;
    CHECK(sqlite3_open(bad, &h) == SQLITE_OK && sqlite3_exec(h, sql, NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(h);
    refused(db, 1, "nothing was merged", GT_CLI " merge --db %s %s %s", db, good, bad);
    CHECK_MSG(strstr(out, bad) && strstr(out, "winners row 2") && !strstr(out, "merged "), "%s", out);
    CHECK(run(GT_CLI " merge --db %s %s %s", fresh, good, bad) == 1 && !exists(fresh));
    char wal[600];
    snprintf(wal, sizeof wal, "%s-wal", fresh);
    CHECK(!exists(wal));
    CHECK_MSG(run(GT_CLI " merge --db %s %s", fresh, good) == 0 && strstr(out, "1 sweeps, 16 trials, 4 baselines, 4 winners"),
              "%s", out);
    gt_fixture_rm(db), gt_fixture_rm(good), gt_fixture_rm(bad), gt_fixture_rm(fresh);
    free(db), free(good), free(bad), free(fresh);
}

GT_TEST(cli_bad_input_leaves_db_byte_identical, GT_NEEDS_NONE)
{
    char *db = gt_tmp_path(".db"), *other = gt_tmp_path(".db"), *bad = gt_tmp_path(".json");
    CHECK(gt_fixture_db(db, 0, 0, 1.0) == 0 && gt_fixture_db(other, 2, 0, 1.0) == 0);
    refused(db, 2, "unknown --format 'xml'", GT_CLI " query --db %s --format xml", db);
    refused(db, 2, "unknown --format 'yaml'", GT_CLI " export --db %s --format yaml", db);
    refused(db, 2, "--with-cubin needs --format header", GT_CLI " export --db %s --with-cubin", db);
    refused(db, 2, "bad --shape", GT_CLI " query --db %s --shape 12x", db);
    refused(db, 2, "bad --layout", GT_CLI " query --db %s --layout nx", db);
    refused(db, 2, "unknown option", GT_CLI " query --db %s --bogus", db);
    refused(db, 1, "cannot write /nonexistent-dir/x.json", GT_CLI " export --db %s -o /nonexistent-dir/x.json", db);
    refused(db, 1, "cannot read /nonexistent.json", GT_CLI " import --db %s /nonexistent.json", db);
    CHECK(gt_fixture_write(bad, "{\"format\": \"gemmtune-winners\", \"format_version\": 1, \"winn", 57) == 0);
    refused(db, 1, "malformed JSON", GT_CLI " import --db %s %s", db, bad);
    CHECK(gt_fixture_write(bad, "{\"format\": \"other\"}", 19) == 0);
    refused(db, 1, "format 'other'", GT_CLI " import --db %s %s", db, bad);
    CHECK(gt_fixture_write(bad, "{\"format\": \"gemmtune-winners\", \"format_version\": 7}", 51) == 0);
    refused(db, 1, "format_version 7", GT_CLI " import --db %s %s", db, bad);
    refused(db, 2, "-o x.jpg", GT_CLI " report --db %s -o x.jpg", db);
    refused(db, 1, "/nonexistent-dir/r.svg", GT_CLI " report --db %s -o /nonexistent-dir/r.svg", db);
    /* a database path that cannot be created (the file itself is good) */
    char *good = gt_tmp_path(".json");
    CHECK(run(GT_CLI " export --db %s -o %s", other, good) == 0);
    CHECK(run(GT_CLI " import --db /proc/gemmtune-no/x.db %s", good) == 1 && strstr(out, "/proc/gemmtune-no"));
    CHECK(run(GT_CLI " merge --db /proc/gemmtune-no/x.db %s", other) == 1 && strstr(out, "/proc/gemmtune-no"));
    /* merge: one bad source among good ones merges nothing */
    CHECK(gt_fixture_write(bad, "plain text, not a database", 26) == 0);
    refused(db, 1, "not an SQLite database", GT_CLI " merge --db %s %s %s", db, other, bad);
    refused(db, 1, "no database at /nonexistent.db, one of the databases to merge", GT_CLI " merge --db %s %s /nonexistent.db",
            db, other);
    CHECK_MSG(!strstr(out, "--db"), "a missing source is not fixed with --db: %s", out);
    /* the database itself: a text file, then a newer schema */
    refused(bad, 1, "not an SQLite database", GT_CLI " query --db %s", bad);
    refused(bad, 1, "not an SQLite database", GT_CLI " import --db %s %s", bad, good);
    unlink(good);
    free(good);
    gt_db *h;
    char err[256];
    CHECK(gt_db_open(other, 0, &h, err, sizeof err) == 0);
    gt_db_close(h);
    CHECK(run("sqlite3 %s 'PRAGMA user_version = 9' || python3 -c \"import sqlite3; c = sqlite3.connect('%s'); "
              "c.execute('PRAGMA user_version = 9'); c.commit()\"", other, other) == 0);
    refused(other, 1, "newer", GT_CLI " query --db %s", other);
    refused(other, 1, "newer", GT_CLI " export --db %s", other);
    refused(other, 1, "newer", GT_CLI " report --db %s", other);
    refused(db, 1, "newer", GT_CLI " merge --db %s %s", db, other);
    gt_fixture_rm(db), gt_fixture_rm(other), unlink(bad);
    free(db), free(other), free(bad);
}

/* A program that includes the exported header after defining the row type itself (as gemmtune.h does), looks up
 * every row by its key and checks the fields; compiled with -Werror. */
static const char *const header_main =
    "#include <stdio.h>\n"
    "#include <string.h>\n"
    "#define GEMMTUNE_WINNER_ROW_DEFINED_0_3\n"
    "typedef struct gemmtune_winner_row {\n"
    "    const char *gpu_name; int cc_major, cc_minor, sm_count;\n"
    "    int m, n, k; const char *layout;\n"
    "    const char *family, *params;\n"
    "    double tflops, ratio_vs_cublas;\n"
    "    const unsigned char *cubin; unsigned long cubin_size; const char *cubin_arch;\n"
    "    int batch;\n"
    "} gemmtune_winner_row;\n"
    "#include \"winners.h\"\n"
    "int main(void)\n"
    "{\n"
    "    int found = 0;\n"
    "    for (int i = 0; i < gemmtune_winners_count; ++i) {\n"
    "        const gemmtune_winner_row *r = &gemmtune_winners[i];\n"
    "        found += gemmtune_winner_find(r->gpu_name, r->m, r->n, r->k, r->layout) == r && r->tflops > 0;\n"
    "        printf(\"%s %dx%dx%d %s %s %s %.2f %.3f %lu %s\\n\", r->gpu_name, r->m, r->n, r->k, r->layout, r->family,\n"
    "               r->params, r->tflops, r->ratio_vs_cublas, r->cubin_size, r->cubin_arch ? r->cubin_arch : \"-\");\n"
    "        if (r->cubin && r->cubin_size >= 4) printf(\"magic %02x%02x%02x%02x\\n\", r->cubin[0], r->cubin[1],\n"
    "                                                 r->cubin[2], r->cubin[3]);\n"
    "    }\n"
    "    if (gemmtune_winner_find(\"no such GPU\", 1, 1, 1, \"nn\")) return 3;\n"
    "    printf(\"found %d of %d\\n\", found, gemmtune_winners_count);\n"
    "    return found == gemmtune_winners_count ? 0 : 1;\n"
    "}\n";

/* Export a header from db with extra args into dir/winners.h, compile it alone and with header_main, run that. */
static int header_builds_and_runs(const char *db, const char *dir, const char *extra)
{
    char h[600], c[600];
    snprintf(h, sizeof h, "%s/winners.h", dir);
    snprintf(c, sizeof c, "%s/main.c", dir);
    if (run("mkdir -p %s", dir) || run(GT_CLI " export --db %s --format header %s -o %s", db, extra, h)) {
        printf("    export failed: %s\n", out);
        return -1;
    }
    if (run("cc -std=c11 -Wall -Wextra -Werror -fsyntax-only -x c %s", h)) {
        printf("    header alone does not compile:\n%s\n", out);
        return -1;
    }
    if (gt_fixture_write(c, header_main, strlen(header_main)) ||
        run("cc -std=c11 -Wall -Wextra -Werror -o %s/main %s && %s/main", dir, c, dir)) {
        printf("    program with the header failed:\n%s\n", out);
        return -1;
    }
    return 0;
}

GT_TEST(cli_export_header_compiles_werror_and_finds_rows, GT_NEEDS_NONE)
{
    char *db = gt_tmp_path(".db"), *dir = gt_tmp_path("");
    CHECK(gt_fixture_db(db, 0, 0, 1.0) == 0 && gt_fixture_db(db, 2, 0, 1.0) == 0);
    CHECK(header_builds_and_runs(db, dir, "") == 0);
    CHECK(strstr(out, "found 8 of 8") && strstr(out, "NVIDIA H200 2048x2048x2048 tn tile2d BM="));
    CHECK(header_builds_and_runs(db, dir, "--gpu-model a100") == 0 && strstr(out, "found 4 of 4"));
    /* nothing matched: still valid C, with a count of 0 */
    CHECK(header_builds_and_runs(db, dir, "--family nosuch") == 0 && strstr(out, "found 0 of 0"));
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    gt_fixture_rm(db);
    free(db), free(dir);
}

/* A made-up cubin cached for w as this user's own (MAC'd under the tests' key): export trusts and embeds it. */
static int put_fake_cubin(const gt_winner *w, void *ctx)
{
    gt_db *db = ctx;
    char err[256], arch[16];
    unsigned char bytes[40];
    snprintf(arch, sizeof arch, "sm_%d%d", w->cc_major, w->cc_minor);
    for (int i = 0; i < 40; ++i) bytes[i] = (unsigned char)(w->source_hash[i % 16] + i);
    memcpy(bytes, "\x7f" "ELF", 4);
    gt_cubin c = {.data = bytes, .size = 40, .regs = 64, .spill_bytes = 0};
    return gt_cubin_cache_put(db, w->source_hash, arch, &c, err, sizeof err) < 0;
}

GT_TEST(cli_export_header_embeds_cached_cubins, GT_NEEDS_NONE)
{
    char *db = gt_tmp_path(".db"), *dir = gt_tmp_path("");
    gt_db *h;
    char err[256];
    CHECK(gt_fixture_db(db, 0, 0, 1.0) == 0);
    CHECK(gt_db_open(db, 0, &h, err, sizeof err) == 0);
    CHECK(gt_db_winners(h, NULL, put_fake_cubin, h, err, sizeof err) == 0);
    gt_db_close(h);
    CHECK(header_builds_and_runs(db, dir, "--with-cubin") == 0);
    CHECK(strstr(out, "found 4 of 4") && strstr(out, " 40 sm_90\n") && strstr(out, "magic 7f454c46"));
    /* two shapes share one winner kernel (1024^3 nn and 2048^3 tn differ in layout, so none here): one array each */
    char hdr[700];
    size_t n;
    snprintf(hdr, sizeof hdr, "%s/winners.h", dir);
    unsigned char *text = gt_fixture_slurp(hdr, &n);
    int arrays = 0;
    for (const char *p = (const char *)text; p && (p = strstr(p, "static const unsigned char gemmtune_cubin_")); ++p)
        arrays++;
    CHECK(arrays == 4);
    free(text);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    gt_fixture_rm(db);
    free(db), free(dir);
}

static int take_first(const gt_family *f, const gt_params *p, void *ctx)
{
    (void)f;
    *(gt_params *)ctx = *p;
    return 1;
}

/* A winner whose source hash is the real rendered source of the first legal tile2d candidate (layout nt). */
static int real_winner_db(const char *path, char *hash)
{
    const gt_family *f = gt_family_find("tile2d");
    gt_limits lim;
    gt_params p;
    char err[256], params[256];
    if (!f || !gt_limits_for_arch("sm_90", &lim) || gt_enumerate(f, &lim, take_first, &p) < 1) return -1;
    gt_params_format(f, &p, params, sizeof params);
    if (gt_kernel_id(f, &p, 0, 1, 0, hash, NULL, err, sizeof err)) return -1;
    gt_gpu_info g = gt_fixture_gpu(0, 0);
    gt_shape s = {512, 512, 512, 0, 1};
    return gt_fixture_winner(path, &g, &s, "tile2d", params, hash, 0.05);
}

GT_TEST(cli_export_header_with_cubin_compiles_with_nvrtc, GT_NEEDS_NVRTC)
{
    char *db = gt_tmp_path(".db"), *dir = gt_tmp_path(""), hash[17];
    if (real_winner_db(db, hash) < 0) {
        gt_skip("tile2d's first default candidate is not legal on sm_90; nothing to compile");
        free(db), free(dir);
        return;
    }
    /* a cubin in the cache that this user did not put there (a merged or handed-over database) is not embedded:
     * the kernel is compiled instead (issue 25 item 4) */
    gt_db *h = NULL;
    char err[256];
    CHECK(gt_db_open(db, GT_DB_WRITE, &h, err, sizeof err) == 0);
    CHECK(h && gt_db_cubin_put(h, hash, "sm_90", gt_nvrtc_version(), gt_nvrtc_options(), (const unsigned char *)
                               "garbage, not a cubin", 20, 1, 0, "forged", err, sizeof err) == 0);
    gt_db_close(h);
    CHECK(header_builds_and_runs(db, dir, "--with-cubin") == 0);
    CHECK(strstr(out, "found 1 of 1") && strstr(out, "magic 7f454c46") && strstr(out, " sm_90\n"));
    /* a winner whose source changed since the sweep (stale) is left out, not embedded, and the export says so */
    gt_gpu_info g = gt_fixture_gpu(0, 0);
    gt_shape s = {256, 256, 256, 0, 0};
    CHECK(gt_fixture_winner(db, &g, &s, "tile2d", "BM=64,BN=64,BK=8,TM=8,TN=8", "0000000000000000", 1) == 0);
    char hdr[700];
    snprintf(hdr, sizeof hdr, "%s/w2.h", dir);
    CHECK(run(GT_CLI " export --db %s --format header --with-cubin -o %s", db, hdr) == 0);
    CHECK_MSG(strstr(out, "1 winner is stale") && strstr(out, "left out of the header"), "%s", out);
    size_t len = 0;
    char *text = (char *)gt_fixture_slurp(hdr, &len);
    CHECK(text && strstr(text, "left out, stale (its source changed since it was tuned; re-tune): 256x256x256 nn") &&
          strstr(text, "gemmtune_winners_count = 1;"));
    free(text);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    gt_fixture_rm(db);
    free(db), free(dir);
}

GT_TEST(cli_report_writes_png_svg_and_regret_table, GT_NEEDS_NONE)
{
    if (run("command -v gnuplot")) {
        gt_skip("gnuplot is not installed (make deps installs gnuplot-nox)");
        return;
    }
    char *db = gt_tmp_path(".db"), *png = gt_tmp_path(".png"), *svg = gt_tmp_path(".svg");
    CHECK(gt_fixture_db(db, 0, 0, 1.0) == 0 && gt_fixture_db(db, 2, 0, 1.2) == 0);
    CHECK(run(GT_CLI " report --db %s -o %s", db, png) == 0);
    CHECK(strstr(out, "regret") && strstr(out, "geometric mean") && strstr(out, "NVIDIA A100-SXM4-80GB (cc 8.0, 108 SMs)"));
    /* fixture: no tuned neighbour is near enough for the serving model, so each shape would be served cuBLAS, which
     * the fixture times faster than the winner (1024^3 nn: 34 against 30 TFLOPS) */
    CHECK_MSG(strstr(out, "regret of the serving rules") && strstr(out, "1024x1024x1024 nn  0.0716  cuBLAS") &&
              strstr(out, "-11.8%"), "%s", out);
    CHECK(run("GEMMTUNE_SERVE_MODEL=dmax=x " GT_CLI " report --db %s", db) == 1 && strstr(out, "GEMMTUNE_SERVE_MODEL") &&
          !strstr(out, "geometric mean"));
    size_t n;
    unsigned char *img = gt_fixture_slurp(png, &n);
    CHECK(img && n > 1000 && !memcmp(img, "\x89PNG\r\n\x1a\n", 8));
    free(img);
    CHECK(run(GT_CLI " report --db %s --gpu-model h200 -o %s", db, svg) == 0);
    unsigned char *s = gt_fixture_slurp(svg, &n);
    CHECK(s && strstr((const char *)s, "<svg") && strstr((const char *)s, "cuBLAS") &&
          strstr((const char *)s, "NVIDIA H200"));
    free(s);
    if (getenv("GT_KEEP_REPORT")) printf("    report image kept at %s\n", png);
    else unlink(png);
    gt_fixture_rm(db), unlink(svg);
    free(db), free(png), free(svg);
}

/* The prefix that runs a command as an unprivileged user (nobody) when this process is root and setpriv can drop
 * to it and that user can run the CLI; "" otherwise (the test then runs as this user, where only a read-only
 * open, not the permissions, keeps the file unchanged). */
static const char *other_user(void)
{
    static const char *prefix;
    if (prefix) return prefix;
    prefix = "";
    if (getuid() == 0 && run("setpriv --reuid=65534 --regid=65534 --clear-groups " GT_CLI " --version") == 0)
        prefix = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
    return prefix;
}

/* The names in dir, sorted, one per line (for "nothing appeared beside the file"). */
static char *listing(const char *dir)
{
    run("ls -A %s", dir);
    return strdup(out);
}

/* Run a reader as who on db (in dir, whose listing and bytes must not change); must exit 0 with want in its output. */
static void reads_untouched(const char *who, const char *dir, const char *db, const char *want, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void reads_untouched(const char *who, const char *dir, const char *db, const char *want, const char *fmt, ...)
{
    char args[4096], *copy = gt_tmp_path(".orig");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    char *before = listing(dir);
    CHECK(gt_fixture_copy(db, copy) == 0);
    int rc = run("%s%s", who, args);
    CHECK_MSG(rc == 0 && strstr(out, want), "%s%s -> %d:\n%s", who, args, rc, out);
    CHECK_MSG(gt_fixture_same_bytes(db, copy), "%s%s changed the database", who, args);
    char *after = listing(dir);
    CHECK_MSG(!strcmp(before, after), "%s%s left files beside the database:\n%s", who, args, after);
    free(before), free(after);
    unlink(copy);
    free(copy);
}

/* A database another user owns (mode 644, in a folder this user may not write) serves every reader and the
 * library, and stays byte-identical with nothing created beside it; writers say plainly why they cannot. */
GT_TEST(cli_db_of_another_user_serves_readers_untouched, GT_NEEDS_NONE)
{
    char *dir = gt_tmp_path("_ro"), *mine = gt_tmp_path("_mine"), db[600], target[600], json[600];
    CHECK(mkdir(dir, 0755) == 0 && mkdir(mine, 0777) == 0 && chmod(mine, 0777) == 0);
    snprintf(db, sizeof db, "%s/theirs.db", dir);
    snprintf(target, sizeof target, "%s/merged.db", mine);
    snprintf(json, sizeof json, "%s/w.json", mine);
    CHECK(gt_fixture_db(db, 0, 0, 1.0) == 0 && chmod(db, 0644) == 0);
    const char *who[2] = {other_user(), ""};
    if (!*who[0]) printf("    (not root or no setpriv: checking read-only opens as this user only)\n");
    for (int i = 0; i < (*who[0] ? 2 : 1); ++i) {
        reads_untouched(who[i], dir, db, "ratio_vs_cublas", GT_CLI " query --db %s", db);
        reads_untouched(who[i], dir, db, "resources", GT_CLI " query --trials --format csv --db %s", db);
        reads_untouched(who[i], dir, db, "gemmtune-winners", GT_CLI " export --db %s", db);
        reads_untouched(who[i], dir, db, "gemmtune_winner_find", GT_CLI " export --format header --db %s", db);
        reads_untouched(who[i], dir, db, "regret", GT_CLI " report --db %s", db);
        /* explain reads through the library's own open (gt_loader_winners), as gemmtune_create does */
        reads_untouched(who[i], dir, db, "rule:     cublas",
                        GT_CLI " explain --db %s --shape 1000 --gpu-model h200", db);
        reads_untouched(who[i], dir, db, "1 sweeps, 16 trials", GT_CLI " merge --db %s %s", target, db);
        unlink(target), unlink(json);
    }
    if (*who[0]) { /* writers refuse in plain words, and leave it as it was */
        CHECK(run(GT_CLI " export --db %s -o %s", db, json) == 0 && chmod(json, 0644) == 0);
        refused(db, 1, "may not write it", "%s" GT_CLI " import --db %s %s", who[0], db, json);
        refused(db, 1, "may not write it", "%s" GT_CLI " tune --sizes 64 --db %s", who[0], db); /* before any GPU */
        snprintf(target, sizeof target, "%s/src.db", mine);
        CHECK(gt_fixture_db(target, 2, 0, 1.0) == 0);
        refused(db, 1, "uid 65534", "%s" GT_CLI " merge --db %s %s", who[0], db, target);
        CHECK(chmod(db, 0666) == 0);
        refused(db, 1, "may not create files in", "%s" GT_CLI " import --db %s %s", who[0], db, json);
    }
    run("rm -rf %s %s", dir, mine);
    free(dir), free(mine);
}

/* Write json with winners[i].key set to value (a string), to path. */
static void mutate_row(const char *json, int i, const char *key, const char *value, const char *path)
{
    cJSON *root = cJSON_Parse(json);
    cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "winners"), i);
    CHECK(row != NULL);
    if (row) cJSON_ReplaceItemInObject(row, key, cJSON_CreateString(value));
    char *text = cJSON_Print(root);
    CHECK(text && gt_fixture_write(path, text, strlen(text)) == 0);
    free(text);
    cJSON_Delete(root);
}

/* Issue 25: an import refused after the database was opened (here: a file size limit, as on a full disk) leaves
 * no new database and no WAL behind; an import into a damaged database names the database, not the JSON file. */
GT_TEST(cli_import_failing_late_leaves_no_file_and_blames_the_right_file, GT_NEEDS_NONE)
{
    char *src = gt_tmp_path(".db"), *json = gt_tmp_path(".json"), *big = gt_tmp_path(".json"), *fresh = gt_tmp_path(".db");
    CHECK(gt_fixture_db(src, 0, 0, 1.0) == 0 && run(GT_CLI " export --db %s -o %s", src, json) == 0);
    size_t n;
    char *text = (char *)gt_fixture_slurp(json, &n);
    cJSON *root = text ? cJSON_Parse(text) : NULL, *rows = cJSON_GetObjectItem(root, "winners");
    cJSON *row = cJSON_GetArrayItem(rows, 0);
    for (int i = 0; row && i < 3000; ++i) { /* 3000 shapes: more than the limit below lets the database grow */
        cJSON *r = cJSON_Duplicate(row, 1);
        cJSON_SetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "shape"), "m"), 100 + i);
        cJSON_AddItemToArray(rows, r);
    }
    char *doc = cJSON_PrintUnformatted(root);
    CHECK(doc && gt_fixture_write(big, doc, strlen(doc)) == 0);
    free(doc), free(text), cJSON_Delete(root);
    CHECK(run("trap '' XFSZ; ulimit -f 300; " GT_CLI " import --db %s %s", fresh, big) == 1);
    CHECK_MSG(strstr(out, "database") && !strstr(out, "imported 3"), "%s", out);
    char side[600];
    static const char *const ext[] = {"", "-wal", "-shm", "-journal"};
    for (int i = 0; i < 4; ++i) {
        snprintf(side, sizeof side, "%s%s", fresh, ext[i]);
        CHECK_MSG(!exists(side), "%s left behind", side);
    }
    CHECK(gt_fixture_copy(src, fresh) == 0 && gt_fixture_damage_index(fresh, "sqlite_autoindex_candidates_1") == 0);
    refused(fresh, 1, "is damaged", GT_CLI " import --db %s %s", fresh, json);
    CHECK_MSG(strstr(out, fresh) && !strstr(out, json), "the JSON file is blamed: %s", out);
    gt_fixture_rm(src), gt_fixture_rm(fresh), unlink(json), unlink(big);
    free(src), free(json), free(big), free(fresh);
}

/* One row that no family can run refuses the whole file: named, with the reason, and the database unchanged. */
GT_TEST(cli_import_refuses_rows_no_family_can_run, GT_NEEDS_NONE)
{
    char *db = gt_tmp_path(".db"), *src = gt_tmp_path(".db"), *good = gt_tmp_path(".json"), *bad = gt_tmp_path(".json");
    char *fresh = gt_tmp_path(".db");
    CHECK(gt_fixture_db(db, 0, 0, 1.0) == 0 && gt_fixture_db(src, 2, 0, 1.0) == 0);
    CHECK(run(GT_CLI " export --db %s -o %s", src, good) == 0);
    size_t n;
    char *json = (char *)gt_fixture_slurp(good, &n);
    static const struct { int row; const char *key, *value, *says; } cases[] = {
        {1, "family", "nosuchfamily", "winners[1] (NVIDIA A100-SXM4-80GB, 2048x2048x2048 nn): family 'nosuchfamily' is unknown"},
        {2, "params", "BM=7,BN=64,BK=8,TM=8,TN=8", "winners[2] (NVIDIA A100-SXM4-80GB, 4096x4096x1024 nn): tile2d BM=7"},
        {0, "params", "BM=64,BN=64,BK=8,TM=8", "lack TN"},
        {0, "params", "BN=64,BM=64,BK=8,TM=8,TN=8", "canonical text"},
        {3, "params", "BM=64,BN=64,BK=8,TM=8,TN=8,XX=1", "no parameter 'XX'"},
        {1, "family", "test_oob", "unknown"},
    };
    for (size_t i = 0; json && i < sizeof cases / sizeof cases[0]; ++i) {
        mutate_row(json, cases[i].row, cases[i].key, cases[i].value, bad);
        refused(db, 1, cases[i].says, GT_CLI " import --db %s %s", db, bad);
        CHECK_MSG(strstr(out, "nothing imported"), "%s", out);
        /* into a database that does not exist yet: it is not created */
        CHECK(run(GT_CLI " import --db %s %s", fresh, bad) == 1 && access(fresh, F_OK) != 0);
    }
    mutate_row(json, 2, "params", "BM=7,BN=64,BK=8,TM=8,TN=8", bad);
    CHECK(run(GT_CLI " import --db %s %s", db, bad) == 1 && strstr(out, "not a legal kernel on sm_80"));
    /* the good file imports, and the counts say what happened to every row */
    CHECK(run(GT_CLI " import --db %s %s", db, good) == 0 && strstr(out, "imported 4 winners of 4"));
    CHECK(run(GT_CLI " import --db %s %s", db, good) == 0 && strstr(out, "imported 0 winners of 4") &&
          strstr(out, "skipped 4 already stored and 0 slower"));
    free(json);
    gt_fixture_rm(db), gt_fixture_rm(src), unlink(good), unlink(bad);
    free(db), free(src), free(good), free(bad), free(fresh);
}

/* Issue 25: compute capability 10 and later. A B200 (sm_100) and an sm_120 database export, import into an empty
 * database and explain there by --arch, --gpu-model and --cc; architectures that do not exist are refused. */
GT_TEST(cli_blackwell_exports_import_and_explain, GT_NEEDS_NONE)
{
    char *src = gt_tmp_path(".db"), *dst = gt_tmp_path(".db"), *json = gt_tmp_path(".json");
    CHECK(gt_fixture_db(src, 3, 0, 0.5) == 0 && gt_fixture_db(src, 4, 0, 1.0) == 0);
    CHECK(run(GT_CLI " export --db %s -o %s && " GT_CLI " import --db %s %s", src, json, dst, json) == 0 &&
          strstr(out, "imported 8 winners of 8"));
    CHECK_MSG(run(GT_CLI " explain --db %s --shape 1000 --arch sm_100", dst) == 0 &&
                  strstr(out, "NVIDIA B200 (cc 10.0, 148 SMs): the only stored model of that architecture") &&
                  strstr(out, "from 1024x1024x1024"),
              "%s", out);
    CHECK_MSG(run(GT_CLI " explain --db %s --shape 2048 --gpu-model 'RTX PRO' --cc 12.0 --sms 188", dst) == 0 &&
                  strstr(out, "(cc 12.0, 188 SMs)"),
              "%s", out);
    CHECK_MSG(run(GT_CLI " explain --db %s --shape 1000 --arch sm_90garbage", dst) == 2 &&
                  strstr(out, "unknown architecture") && strstr(out, "sm_121"),
              "%s", out);
    CHECK_MSG(run(GT_CLI " explain --db %s --shape 1000 --gpu-model X --cc 99.0 --sms 10", dst) == 2 &&
                  strstr(out, "no architecture this gemmtune knows"),
              "%s", out);
    gt_fixture_rm(src), gt_fixture_rm(dst), unlink(json);
    free(src), free(dst), free(json);
}

/* explain needs no GPU: it takes the database's only GPU model (or --gpu-model, --arch), says which, prints the
 * distance precisely, names a stored row for the very shape that it passed over, and a layout nothing was tuned in. */
GT_TEST(cli_explain_without_gpu_says_which_gpu_and_why, GT_NEEDS_NONE)
{
    char *one = gt_tmp_path(".db"), *two = gt_tmp_path(".db"), err[256];
    CHECK(gt_fixture_db(one, 0, 0, 1.0) == 0 && gt_fixture_db(two, 0, 0, 1.0) == 0 && gt_fixture_db(two, 2, 0, 1.0) == 0);
    gt_db *h;
    long long sw;
    gt_gpu_info g = gt_fixture_gpu(0, 0);
    gt_shape s = {512, 512, 512, 0, 0};
    CHECK(gt_db_open(one, GT_DB_WRITE, &h, err, sizeof err) == 0);
    CHECK(gt_db_begin_sweep(h, &g, "t", &sw, err, sizeof err) == 0 &&
          gt_db_set_winner(h, sw, &s, "nosuchfamily", "X=1", "0123456789abcdef", 0.01, 1, err, sizeof err) == 0);
    gt_db_close(h);
    const int gpu = gt_test_gpu_count() > 0;
    if (!gpu) { /* the README's example, on a database of one GPU model */
        CHECK(run(GT_CLI " explain --db %s --shape 1000x1000x1000", one) == 0);
        CHECK_MSG(strstr(out, "gpu:      NVIDIA H200 (cc 9.0, 132 SMs): no GPU here: the only GPU model in the database") &&
                  strstr(out, "rule:     cublas") && strstr(out, "from 1024x1024x1024 (d=0.103)"), "%s", out);
        CHECK(run(GT_CLI " explain --db %s --shape 1000", two) == 1 && strstr(out, "holds 2 GPU models") &&
              strstr(out, "NVIDIA A100-SXM4-80GB (cc 8.0, 108 SMs)") && strstr(out, "--gpu-model NAME"));
    }
    CHECK(run(GT_CLI " explain --db %s --shape 1023x1024x1024 --gpu-model h200", one) == 0);
    CHECK_MSG(strstr(out, "from 1024x1024x1024 (d=0.00141)"), "%s", out);
    CHECK(run(GT_CLI " explain --db %s --shape 1000 --layout nt --gpu-model h200", one) == 0);
    CHECK_MSG(strstr(out, "rule:     cublas") && strstr(out, "no tuned shape in layout nt for this GPU model; tuned "
                                                              "layouts: nn, tn"), "%s", out);
    CHECK(run(GT_CLI " explain --db %s --shape 512 --gpu-model h200", one) == 0);
    CHECK_MSG(strstr(out, "rule:     cublas") && strstr(out, "skipped:  the stored winner of this very shape, "
                                                               "nosuchfamily X=1: family 'nosuchfamily' is unknown"),
              "%s", out);
    CHECK(run(GT_CLI " explain --db %s --shape 1000 --gpu-model a100", two) == 0 &&
          strstr(out, "NVIDIA A100-SXM4-80GB (cc 8.0, 108 SMs): the stored model --gpu-model names"));
    CHECK(run(GT_CLI " explain --db %s --shape 1000 --arch sm_80", two) == 0 &&
          strstr(out, "the only stored model of that architecture"));
    CHECK(run(GT_CLI " explain --db %s --shape 1000 --gpu-model nvidia", two) == 2 && strstr(out, "2 stored GPU models match"));
    CHECK(run(GT_CLI " explain --db %s --shape 1000 --gpu-model nosuch", two) == 1 && strstr(out, "no stored GPU model matches"));
    CHECK(run(GT_CLI " explain --db %s --shape 1000 --gpu 0 --arch sm_90", two) == 2 && strstr(out, "one way"));
    gt_fixture_rm(one), gt_fixture_rm(two);
    free(one), free(two);
}

/* The NVIDIA driver's version is stored with each sweep (schema 3), travels through export, import and merge, and
 * query --gpus / --sweeps show it next to the CUDA versions. */
GT_TEST(cli_query_gpus_and_sweeps_show_the_driver_version, GT_NEEDS_NONE)
{
    char *db = gt_tmp_path(".db"), *copy = gt_tmp_path(".db"), *merged = gt_tmp_path(".db"), *json = gt_tmp_path(".json");
    char err[256];
    gt_db *h;
    long long sw;
    gt_gpu_info g = gt_fixture_gpu(0, 0);
    gt_shape s = {256, 256, 256, 0, 0};
    snprintf(g.nvidia_driver, sizeof g.nvidia_driver, "580.159.04");
    CHECK(gt_fixture_db(db, 2, 0, 1.0) == 0 && gt_db_open(db, GT_DB_WRITE, &h, err, sizeof err) == 0);
    CHECK(gt_db_begin_sweep(h, &g, "t", &sw, err, sizeof err) == 0 &&
          gt_db_set_winner(h, sw, &s, "tile2d", "BM=64,BN=64,BK=8,TM=8,TN=8", "0123456789abcdef", 0.01, 1, err,
                           sizeof err) == 0);
    gt_db_close(h);
    CHECK(run(GT_CLI " query --gpus --db %s", db) == 0 && strstr(out, "nvidia_driver") && strstr(out, "580.159.04") &&
          strstr(out, "cuda_driver") && strstr(out, "13.0"));
    CHECK(run(GT_CLI " query --sweeps --format json --gpu-model h200 --db %s", db) == 0 && json_array_len(out) == 1 &&
          strstr(out, "\"nvidia_driver\":\t\"580.159.04\""));
    CHECK(run(GT_CLI " query --sweeps --format csv --db %s", db) == 0 && strstr(out, ",580.159.04,13.0,13.0,13.0,"));
    CHECK(run(GT_CLI " query --gpus --shape 256 --db %s", db) == 2 && strstr(out, "only --gpu and --gpu-model"));
    /* export -> import keeps it; merge keeps it */
    CHECK(run(GT_CLI " export --db %s -o %s && " GT_CLI " import --db %s %s", db, json, copy, json) == 0);
    CHECK(run(GT_CLI " query --sweeps --db %s", copy) == 0 && strstr(out, "580.159.04"));
    CHECK(run(GT_CLI " merge --db %s %s", merged, db) == 0 && run(GT_CLI " query --gpus --db %s", merged) == 0 &&
          strstr(out, "580.159.04"));
    gt_fixture_rm(db), gt_fixture_rm(copy), gt_fixture_rm(merged), unlink(json);
    free(db), free(copy), free(merged), free(json);
}
