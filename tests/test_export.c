/* JSON export/import (db/json.c) and merge (db/merge.c) through the db API: round trip, bad documents that must
 * leave the database byte-identical, merge idempotence (table dumps) and the faster-verified-winner rule. */
#include "db.h"
#include "fixture.h"
#include "harness.h"

#include <cjson/cJSON.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char err[512];

static char *export_all(const char *path)
{
    gt_db *db;
    char *json = NULL;
    if (gt_db_open(path, 0, &db, err, sizeof err) < 0) return NULL;
    if (gt_db_export_json(db, NULL, &json, err, sizeof err) < 0) json = NULL;
    gt_db_close(db);
    return json;
}

static int import_into(const char *path, const char *json, int *imported)
{
    gt_db *db;
    if (gt_db_open(path, 1, &db, err, sizeof err) < 0) return -1;
    int rc = gt_db_import_json(db, json, "test.json", imported, err, sizeof err);
    gt_db_close(db);
    return rc;
}

GT_TEST(export_json_import_roundtrip_identical, GT_NEEDS_NONE)
{
    char *a = gt_tmp_path(".db"), *b = gt_tmp_path(".db");
    CHECK(gt_fixture_db(a, 0, 0, 1.0) == 0 && gt_fixture_db(a, 2, 1, 1.5) == 0);
    char *j1 = export_all(a);
    CHECK(j1 != NULL);
    int n = 0;
    CHECK_MSG(j1 && import_into(b, j1, &n) == 0, "%s", err);
    CHECK(n == 8);
    char *j2 = export_all(b);
    CHECK(j1 && j2 && !strcmp(j1, j2));
    /* the document says what docs/EXPORT.md says */
    cJSON *root = j1 ? cJSON_Parse(j1) : NULL, *w0 = NULL;
    CHECK(root && !strcmp(cJSON_GetObjectItem(root, "format")->valuestring, "gemmtune-winners"));
    CHECK(root && cJSON_GetObjectItem(root, "format_version")->valueint == 2);
    CHECK(root && !strcmp(cJSON_GetObjectItem(root, "gemmtune_version")->valuestring, GT_VERSION));
    CHECK(root && cJSON_GetArraySize(cJSON_GetObjectItem(root, "winners")) == 8);
    if (root) w0 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "winners"), 0);
    CHECK(w0 && cJSON_GetObjectItem(cJSON_GetObjectItem(w0, "gpu"), "sm_count")->valueint == 108);
    CHECK(w0 && cJSON_GetObjectItem(w0, "ratio_vs_cublas")->valuedouble > 0.5);
    cJSON_Delete(root);
    /* importing the same document again changes nothing */
    size_t n1, n2;
    unsigned char *before = gt_fixture_slurp(b, &n1);
    CHECK(import_into(b, j1, &n) == 0 && n == 0);
    char *j3 = export_all(b);
    CHECK(j1 && j3 && !strcmp(j1, j3));
    unsigned char *after = gt_fixture_slurp(b, &n2);
    free(before), free(after);
    free(j1), free(j2), free(j3);
    gt_fixture_rm(a), gt_fixture_rm(b);
    free(a), free(b);
}

/* Import doc into a copy of a fixture database: it must fail with want in the message and leave the file as it was. */
static void expect_import_refused(const char *db_path, const char *doc, const char *want)
{
    char *copy = gt_tmp_path(".orig");
    CHECK(gt_fixture_copy(db_path, copy) == 0);
    int n = -1;
    int rc = import_into(db_path, doc, &n);
    CHECK_MSG(rc == -1 && n == 0, "import of a bad document succeeded: %.120s", doc);
    if (want) CHECK_MSG(strstr(err, want) != NULL, "want '%s' in: %s", want, err);
    CHECK_MSG(gt_fixture_same_bytes(db_path, copy), "database changed by a refused import: %s", err);
    unlink(copy);
    free(copy);
}

static char *mutate(const char *json, const char *path_key, const char *raw_value)
{
    cJSON *root = cJSON_Parse(json);
    cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "winners"), 1), *obj = w;
    char key[64];
    snprintf(key, sizeof key, "%s", path_key);
    char *dot = strchr(key, '.');
    if (!strncmp(key, "doc.", 4)) obj = root, memmove(key, key + 4, strlen(key + 4) + 1);
    else if (dot) *dot = 0, obj = cJSON_GetObjectItem(w, key), memmove(key, dot + 1, strlen(dot + 1) + 1);
    if (raw_value && cJSON_GetObjectItem(obj, key)) cJSON_ReplaceItemInObject(obj, key, cJSON_Parse(raw_value));
    else if (raw_value) cJSON_AddItemToObject(obj, key, cJSON_Parse(raw_value)); /* a key the row leaves out */
    else cJSON_DeleteItemFromObject(obj, key);
    char *out = cJSON_Print(root);
    cJSON_Delete(root);
    return out;
}

GT_TEST(export_import_refuses_bad_json_leaving_db_identical, GT_NEEDS_NONE)
{
    char *src = gt_tmp_path(".db"), *dst = gt_tmp_path(".db");
    CHECK(gt_fixture_db(src, 0, 0, 1.0) == 0 && gt_fixture_db(dst, 1, 0, 1.0) == 0);
    char *good = export_all(src);
    CHECK(good != NULL);
    if (!good) return;
    size_t len = strlen(good);
    /* truncated at many points: every prefix is malformed JSON */
    for (size_t cut = 0; cut < len; cut += len / 23 + 1) {
        char *t = strndup(good, cut);
        expect_import_refused(dst, t, cut ? "malformed JSON" : NULL);
        free(t);
    }
    static const struct {
        const char *key, *value, *want;
    } cases[] = {
        {"doc.format", "\"something-else\"", "format"},
        {"doc.format_version", "3", "format_version 3"},
        {"doc.format_version", "0", "format_version"},
        {"doc.format_version", "\"1\"", "format_version"},
        {"shape.batch", "0", "winners[1].shape.batch"},
        {"shape.batch", "2.5", "winners[1].shape.batch"},
        {"shape.batch", "\"64\"", "winners[1].shape.batch"},
        {"shape.batch", "4294967297", "winners[1].shape.batch"},
        {"doc.winners", "{}", "winners"},
        {"shape.m", "0", "winners[1].shape.m"},
        {"shape.m", "1.5", "winners[1].shape.m"},
        {"shape.k", "\"64\"", "winners[1].shape.k"},
        {"shape.layout", "\"xx\"", "layout"},
        {"gpu.name", "\"\"", "winners[1].gpu.name"},
        {"gpu.cc_major", "null", "cc_major"},
        {"gpu.sm_count", "-3", "sm_count"},
        {"gpu.uuid", NULL, "uuid"},
        {"median_ms", "0", "median_ms"},
        {"median_ms", "-1", "median_ms"},
        {"median_ms", "\"fast\"", "median_ms"},
        {"source_hash", "\"XYZ\"", "source_hash"},
        {"family", "[]", "family"},
        {"params", NULL, "params"},
        {"sweep", "7", "sweep"},
        {"sweep.uid", "\"short\"", "uid"},
        {"gpu", NULL, "gpu"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        char *bad = mutate(good, cases[i].key, cases[i].value);
        expect_import_refused(dst, bad, cases[i].want);
        free(bad);
    }
    expect_import_refused(dst, "[1, 2, 3]", "not a JSON object");
    /* a GPU uuid this database knows as another model: refused, not filed under the wrong model */
    gt_gpu_info known = gt_fixture_gpu(1, 0);
    char raw[100];
    snprintf(raw, sizeof raw, "\"%s\"", known.uuid);
    char *clash = mutate(good, "gpu.uuid", raw);
    cJSON *croot = cJSON_Parse(clash);
    cJSON *w1 = cJSON_GetArrayItem(cJSON_GetObjectItem(croot, "winners"), 1);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(w1, "sweep"), "uid", cJSON_CreateString("0123456789abcdef0123456789abcdef"));
    char *cdoc = cJSON_Print(croot);
    expect_import_refused(dst, cdoc, "another model");
    free(cdoc), free(clash), cJSON_Delete(croot);
    expect_import_refused(dst, "", "malformed JSON");
    /* the last row bad, the first rows good: nothing of the good rows may stay */
    char *bad_last = mutate(good, "shape.n", "4294967297"); /* 2^32 + 1: would read back as 1 */
    cJSON *root = cJSON_Parse(bad_last);
    cJSON *arr = cJSON_GetObjectItem(root, "winners");
    cJSON_AddItemToArray(arr, cJSON_DetachItemFromArray(arr, 1)); /* move the bad row to the end */
    char *doc = cJSON_Print(root);
    expect_import_refused(dst, doc, "shape.n");
    free(doc), free(bad_last), cJSON_Delete(root);
    free(good);
    gt_fixture_rm(src), gt_fixture_rm(dst);
    free(src), free(dst);
}

/* Issue 25: rows that parse but hold what no GPU measured or no gemmtune wrote: control characters in any text,
 * impossible times, a compute capability that is no architecture, a sweep already stored on another GPU. Each is
 * refused, named, and the database is left byte-identical. */
GT_TEST(export_import_refuses_impossible_rows, GT_NEEDS_NONE)
{
    char *src = gt_tmp_path(".db"), *dst = gt_tmp_path(".db");
    CHECK(gt_fixture_db(src, 0, 0, 1.0) == 0 && gt_fixture_db(dst, 1, 0, 1.0) == 0);
    char *good = export_all(src);
    CHECK(good != NULL);
    if (!good) return;
    static const struct {
        const char *key, *value, *want;
    } cases[] = {
        {"gpu.name", "\"NVIDIA \\u001b[31mH200\"", "winners[1] (NVIDIA ?[31mH200, 2048x2048x2048 nn): gpu.name"},
        {"gpu.uuid", "\"GPU-\\u202e1\"", "gpu.uuid"},
        {"gpu.nvidia_driver", "\"580\\u0007\"", "gpu.nvidia_driver"},
        {"gpu.cc_major", "99", "compute capability 99.0"},
        {"gpu.cc_minor", "10", "compute capability 9.10"},
        {"gpu.sm_count", "99999", "sm_count"},
        {"shape.m", "4294967297", "winners[1].shape.m"},
        {"shape.layout", "\"NN\"", "layout"},
        {"family", "\"test_oob\"", "family 'test_oob' is unknown"},
        {"family", "\"tile2d\\n\"", "family"},
        {"params", "\"BM=128,BN=128,BK=8,TM=8,TN=8\\u009b\"", "params"},
        {"math", "\"tf32x3\"", "math 'tf32x3', but family tile2d"},
        {"math", "\"bogus\"", "math"},
        {"median_ms", "1e-300", "median_ms"},
        {"median_ms", "1e999", "median_ms"},
        {"median_ms", "1e-9", "median_ms"},
        {"cublas_ms", "1e-300", "cublas_ms"},
        {"cublas_ms", "1e6", "times median_ms"},
        {"spread_pct", "1e300", "spread_pct"},
        {"sweep.started_at", "\"not a time\"", "sweep.started_at"},
        {"sweep.started_at", "\"2999-01-01T00:00:00Z\"", "in the future"},
        {"sweep.host", "\"box\\r\\nX: 1\"", "sweep.host"},
        {"sweep.gemmtune_version", "\"0.2\\u001b\"", "sweep.gemmtune_version"},
        {"doc.gemmtune_version", "\"\\u001b]0;x\\u0007\"", "gemmtune_version"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        char *bad = mutate(good, cases[i].key, cases[i].value);
        expect_import_refused(dst, bad, cases[i].want);
        CHECK_MSG(!strpbrk(err, "\x1b\x07\r\n"), "the message repeats a control character: %s", err);
        free(bad);
    }
    /* a row naming a sweep stored here on another GPU is not filed under that GPU */
    char uid[40] = "";
    sqlite3 *h;
    sqlite3_stmt *q;
    CHECK(sqlite3_open_v2(dst, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
          sqlite3_prepare_v2(h, "SELECT uid FROM sweeps", -1, &q, NULL) == SQLITE_OK);
    if (sqlite3_step(q) == SQLITE_ROW) snprintf(uid, sizeof uid, "\"%s\"", sqlite3_column_text(q, 0));
    sqlite3_finalize(q);
    sqlite3_close(h);
    char *stolen = mutate(good, "sweep.uid", uid);
    expect_import_refused(dst, stolen, "is stored here as a sweep of GPU GPU-00001001");
    free(stolen);
    free(good);
    gt_fixture_rm(src), gt_fixture_rm(dst);
    free(src), free(dst);
}

static int count_row(const gt_winner *w, void *ctx)
{
    gt_winner *rows = ctx;
    int i = 0;
    while (rows[i].median_ms != 0) ++i;
    if (i < 7) rows[i] = *w;
    return 0;
}

/* Issue 25, the readers' side: rows already stored with an impossible time (a -1 ms or 1e-300 ms winner, a shape
 * whose m no longer fits an int, a baseline a million times slower) are never served, exported or counted, and
 * an import of a possible winner replaces them. */
GT_TEST(stored_impossible_rows_are_never_served_and_are_replaced, GT_NEEDS_NONE)
{
    char *a = gt_tmp_path(".db");
    CHECK(gt_fixture_db(a, 0, 0, 1.0) == 0);
    char *good = export_all(a);
    sqlite3 *h;
    CHECK(sqlite3_open(a, &h) == SQLITE_OK &&
          sqlite3_exec(h,
                       "UPDATE winners SET median_ms = -1 WHERE shape_id = (SELECT id FROM shapes WHERE m = 1024);"
                       "UPDATE winners SET median_ms = 1e-300 WHERE shape_id = "
                       "  (SELECT id FROM shapes WHERE m = 2048 AND layout = 'nn');"
                       "UPDATE shapes SET m = 4294967297 WHERE m = 4096;"
                       "UPDATE baselines SET cublas_ms = 1e6 WHERE shape_id = (SELECT id FROM shapes WHERE layout = 'tn');",
                       NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(h);
    gt_db *db;
    gt_winner rows[8];
    memset(rows, 0, sizeof rows);
    CHECK(gt_db_open(a, GT_DB_READ, &db, err, sizeof err) == 0);
    CHECK(gt_db_winners(db, NULL, count_row, rows, err, sizeof err) == 0);
    gt_db_close(db);
    CHECK_MSG(rows[0].median_ms > 0 && rows[1].median_ms == 0, "served %s %dx%dx%d", rows[1].gpu_name, rows[1].shape.m,
              rows[1].shape.n, rows[1].shape.k);
    CHECK(rows[0].shape.ta == 1 && rows[0].cublas_ms == -1 && rows[0].ratio == -1); /* its baseline is not served */
    char *left = export_all(a);
    cJSON *root = left ? cJSON_Parse(left) : NULL;
    CHECK(root && cJSON_GetArraySize(cJSON_GetObjectItem(root, "winners")) == 1);
    cJSON_Delete(root);
    /* a possible winner for those shapes replaces the impossible ones, whatever its time */
    gt_import_stats st;
    CHECK(gt_db_open(a, GT_DB_WRITE, &db, err, sizeof err) == 0);
    CHECK_MSG(good && gt_db_import_json_stats(db, good, "good.json", &st, err, sizeof err) == 0, "%s", err);
    CHECK_MSG(st.imported == 3 && st.already == 1, "%d imported, %d already, %d slower", st.imported, st.already,
              st.slower);
    memset(rows, 0, sizeof rows);
    CHECK(gt_db_winners(db, NULL, count_row, rows, err, sizeof err) == 0);
    gt_db_close(db);
    CHECK(rows[3].median_ms > 0 && rows[4].median_ms == 0);
    free(good), free(left);
    gt_fixture_rm(a);
    free(a);
}

static int merge_into(const char *path, const char *other, gt_merge_stats *st)
{
    gt_db *db;
    if (gt_db_open(path, 1, &db, err, sizeof err) < 0) return -1;
    int rc = gt_db_merge(db, other, st, err, sizeof err);
    gt_db_close(db);
    return rc;
}

GT_TEST(merge_idempotent_and_keeps_faster_winner, GT_NEEDS_NONE)
{
    char *a = gt_tmp_path(".db"), *b = gt_tmp_path(".db"), *c = gt_tmp_path(".db");
    /* two machines with the same GPU model (b is 20% faster), and one A100 */
    CHECK(gt_fixture_db(a, 0, 0, 1.0) == 0 && gt_fixture_db(b, 0, 1, 0.8) == 0 && gt_fixture_db(c, 2, 0, 1.0) == 0);
    char *b_before = gt_fixture_dump(b);
    gt_merge_stats st;
    CHECK_MSG(merge_into(a, b, &st) == 0, "%s", err);
    CHECK_MSG(st.sweeps == 1 && st.trials == 16 && st.winners == 4 && st.baselines == 4, "%d %d %d %d", st.sweeps,
              st.trials, st.winners, st.baselines);
    CHECK(merge_into(a, c, &st) == 0 && st.sweeps == 1 && st.winners == 4);
    char *once = gt_fixture_dump(a);
    CHECK(merge_into(a, b, &st) == 0 && st.sweeps == 0 && st.trials == 0 && st.winners == 0 && st.baselines == 0);
    CHECK(merge_into(a, c, &st) == 0 && st.sweeps == 0 && st.trials == 0 && st.winners == 0);
    char *twice = gt_fixture_dump(a);
    CHECK(once && twice && !strcmp(once, twice));
    char *b_after = gt_fixture_dump(b);
    CHECK(!strcmp(b_before, b_after)); /* the source is only read */
    /* the H200 winners now come from b's sweep, with its provenance */
    gt_db *db;
    CHECK(gt_db_open(a, 0, &db, err, sizeof err) == 0);
    sqlite3 *h;
    sqlite3_open_v2(a, &h, SQLITE_OPEN_READONLY, NULL);
    sqlite3_stmt *q;
    sqlite3_prepare_v2(h, "SELECT count(*) FROM v_winners WHERE gpu = 'NVIDIA H200' AND origin LIKE 'merge:%'", -1, &q, NULL);
    CHECK(sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0) == 4);
    sqlite3_finalize(q);
    sqlite3_close(h);
    gt_db_close(db);
    /* merging the slower machine into the faster one keeps the faster winners */
    CHECK(merge_into(b, a, &st) == 0 && st.winners == 4 /* the A100's */ && st.sweeps == 2);
    free(once), free(twice), free(b_before), free(b_after);
    gt_fixture_rm(a), gt_fixture_rm(b), gt_fixture_rm(c);
    free(a), free(b), free(c);
}

/* A copy of part at bad with sql run on it as a damaged or forged file would hold it (constraints off). */
static int forge(const char *part, const char *bad, const char *sql)
{
    sqlite3 *h;
    gt_fixture_rm(bad);
    if (gt_fixture_copy(part, bad) < 0 || sqlite3_open(bad, &h) != SQLITE_OK) return -1;
    char *msg = NULL;
    int rc = sqlite3_exec(h, "PRAGMA ignore_check_constraints = ON; PRAGMA foreign_keys = OFF;", NULL, NULL, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_exec(h, sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK) printf("    forge: %s: %s\n", sql, msg ? msg : "?");
    sqlite3_free(msg);
    sqlite3_close(h);
    return rc == SQLITE_OK ? 0 : -1;
}

/* A part's winner whose kernel is stale (its source changed since it was timed) never displaces a fresh one here,
 * however fast it claims to be; and a fresh part's winner displaces a stale one here, however slow. */
GT_TEST(merge_prefers_fresh_winners_to_stale_ones, GT_NEEDS_NONE)
{
    char *a = gt_tmp_path(".db"), *b = gt_tmp_path(".db"), *stale = gt_tmp_path(".db");
    const char *forged = "UPDATE candidates SET source_hash = 'ffffffff' || printf('%08x', id) WHERE family != 'cublas'";
    CHECK(gt_fixture_db(a, 0, 0, 1.0) == 0 && gt_fixture_db(b, 0, 1, 0.5) == 0 && forge(b, stale, forged) == 0);
    gt_merge_stats st;
    CHECK_MSG(merge_into(a, stale, &st) == 0 && st.winners == 0, "%s; %d winners replaced", err, st.winners);
    CHECK(gt_fixture_sql_int(a, "SELECT count(*) FROM winners w JOIN candidates c ON c.id = w.candidate_id "
                                "WHERE c.source_hash LIKE 'ffffffff%'") == 0);
    CHECK_MSG(merge_into(stale, a, &st) == 0 && st.winners == 4, "%s; %d winners replaced", err, st.winners);
    gt_fixture_rm(a), gt_fixture_rm(b), gt_fixture_rm(stale);
    free(a), free(b), free(stale);
}

GT_TEST(merge_refuses_bad_sources_leaving_db_identical, GT_NEEDS_NONE)
{
    char *a = gt_tmp_path(".db"), *bad = gt_tmp_path(".db"), *copy = gt_tmp_path(".orig");
    CHECK(gt_fixture_db(a, 0, 0, 1.0) == 0);
    CHECK(gt_fixture_copy(a, copy) == 0);
    gt_merge_stats st;
    CHECK(merge_into(a, "/nonexistent/x.db", &st) == -1 && strstr(err, "no database at"));
    CHECK(gt_fixture_write(bad, "not sqlite at all", 17) == 0);
    CHECK(merge_into(a, bad, &st) == -1 && strstr(err, "not an SQLite database"));
    gt_fixture_rm(bad);
    CHECK(gt_fixture_db(bad, 1, 0, 1.0) == 0);
    sqlite3 *h;
    sqlite3_open(bad, &h);
    sqlite3_exec(h, "PRAGMA user_version = 42", NULL, NULL, NULL);
    sqlite3_close(h);
    CHECK(merge_into(a, bad, &st) == -1 && strstr(err, "newer"));
    CHECK(merge_into(a, a, &st) == -1 && strstr(err, "this database"));
    CHECK(gt_fixture_same_bytes(a, copy));
    gt_fixture_rm(a), gt_fixture_rm(bad);
    unlink(copy);
    free(a), free(bad), free(copy);
}

GT_TEST(merge_reads_v1_source_without_touching_it, GT_NEEDS_NONE)
{
    char *a = gt_tmp_path(".db"), *old = gt_tmp_path(".db"), *copy = gt_tmp_path(".orig");
    sqlite3 *h;
    CHECK(gt_fixture_v1_db(old) == 0);
    CHECK(gt_fixture_copy(old, copy) == 0);
    CHECK(gt_fixture_db(a, 0, 0, 1.0) == 0);
    gt_merge_stats st;
    CHECK_MSG(merge_into(a, old, &st) == 0, "%s", err);
    CHECK(st.sweeps == 1 && st.trials == 1 && st.winners == 1);
    CHECK(gt_fixture_same_bytes(old, copy)); /* migrated in a temporary copy, not in place */
    /* the v1 sweep's uid is derived from its row, so merging the old file again (a fresh copy) changes nothing */
    char *once = gt_fixture_dump(a);
    CHECK(merge_into(a, old, &st) == 0 && st.sweeps == 0 && st.trials == 0 && st.winners == 0);
    char *twice = gt_fixture_dump(a);
    CHECK(once && twice && !strcmp(once, twice) && strstr(once, "Old GPU"));
    free(once), free(twice);
    /* and the same file migrated in place keeps that uid */
    CHECK(sqlite3_open_v2(a, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    sqlite3_stmt *q;
    char merged_uid[40] = "";
    CHECK(sqlite3_prepare_v2(h, "SELECT uid FROM sweeps WHERE command = 'gemmtune v0'", -1, &q, NULL) == SQLITE_OK);
    if (sqlite3_step(q) == SQLITE_ROW) snprintf(merged_uid, sizeof merged_uid, "%s", sqlite3_column_text(q, 0));
    sqlite3_finalize(q);
    sqlite3_close(h);
    gt_db *db;
    CHECK(gt_db_open(old, GT_DB_WRITE, &db, err, sizeof err) == 0);
    gt_db_close(db);
    CHECK(sqlite3_open_v2(old, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
    CHECK(sqlite3_prepare_v2(h, "SELECT uid FROM sweeps", -1, &q, NULL) == SQLITE_OK);
    CHECK(sqlite3_step(q) == SQLITE_ROW && strlen(merged_uid) == 32 &&
          !strcmp((const char *)sqlite3_column_text(q, 0), merged_uid));
    sqlite3_finalize(q);
    sqlite3_close(h);
    gt_fixture_rm(a), gt_fixture_rm(old);
    unlink(copy);
    free(a), free(old), free(copy);
}


/* Issue 25: merge takes nothing it has not checked. Each forged part (an impossible time, a family that does not
 * exist, illegal or non-canonical parameters, control characters, a 1 MB name, a shape past INT_MAX, text where a
 * number belongs, rows that refer to nothing, a clash with what this database holds, a view for a table) is
 * refused, naming the part, the table and the reason; the database stays byte-identical. */
GT_TEST(merge_refuses_every_invalid_row_naming_the_part, GT_NEEDS_NONE)
{
    char *a = gt_tmp_path(".db"), *b = gt_tmp_path(".db"), *bad = gt_tmp_path(".db"), *copy = gt_tmp_path(".orig");
    CHECK(gt_fixture_db(a, 2, 0, 1.0) == 0 && gt_fixture_db(b, 0, 1, 0.8) == 0);
    char a_uid[40] = "", a_uuid[60] = "", sql[300];
    sqlite3 *h;
    sqlite3_stmt *q;
    CHECK(sqlite3_open_v2(a, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
          sqlite3_prepare_v2(h, "SELECT sw.uid, g.uuid FROM sweeps sw JOIN gpus g ON g.id = sw.gpu_id", -1, &q, NULL) ==
              SQLITE_OK);
    if (sqlite3_step(q) == SQLITE_ROW)
        snprintf(a_uid, sizeof a_uid, "%s", sqlite3_column_text(q, 0)),
            snprintf(a_uuid, sizeof a_uuid, "%s", sqlite3_column_text(q, 1));
    sqlite3_finalize(q);
    sqlite3_close(h);
    CHECK(gt_fixture_copy(a, copy) == 0);
    static const struct {
        const char *sql, *says;
    } cases[] = {
        {"UPDATE winners SET median_ms = -1 WHERE rowid = 1", "winners row 1 (NVIDIA H200, 1024x1024x1024 nn): median_ms -1"},
        {"UPDATE winners SET median_ms = 0 WHERE rowid = 2", "median_ms 0"},
        {"UPDATE winners SET median_ms = 1e-300", "median_ms"},
        {"UPDATE winners SET spread_pct = -5", "spread_pct -5"},
        {"UPDATE winners SET math = 'tf32x3'", "math 'tf32x3', but family tile2d"},
        {"UPDATE winners SET model_id = 99", "refers to a GPU model, shape, kernel or sweep the part lacks"},
        {"UPDATE trials SET median_ms = -1 WHERE status = 'ok'", "trials row 1: median_ms -1"},
        {"UPDATE trials SET median_ms = 'fast' WHERE id = 1", "trials row 1: column median_ms holds text"},
        {"UPDATE trials SET status = 'great' WHERE id = 2", "trials row 2: status 'great'"},
        {"UPDATE trials SET message = 'done' || char(27) || '[2J' WHERE id = 3", "trials row 3: message"},
        {"UPDATE trials SET created_at = 'later'", "created_at"},
        {"DELETE FROM shapes WHERE id = 1", "trials row 1: refers to a shape"},
        {"UPDATE candidates SET family = 'nosuch' WHERE id = 1", "candidates row 1: family 'nosuch' is unknown"},
        {"UPDATE candidates SET family = 'test_oob' WHERE id = 1", "family 'test_oob' is unknown"},
        {"UPDATE candidates SET params = 'BM=7,BN=64,BK=8,TM=8,TN=8' WHERE id = 1", "not a legal kernel on sm_90"},
        {"UPDATE candidates SET params = 'BM=64; DROP TABLE x' WHERE id = 1", "candidates row 1: params"},
        {"UPDATE candidates SET source_hash = 'ZZZZ' WHERE id = 1", "source_hash"},
        {"UPDATE gpu_models SET name = 'NVIDIA H200' || char(27) || '[2J'", "gpu_models row 1: gpu.name: byte 11 is a "
                                                                            "control character"},
        {"UPDATE gpu_models SET name = 'G' || hex(zeroblob(500000))", "over the limit of 127"},
        {"UPDATE gpu_models SET cc_major = 99", "compute capability 99.0"},
        {"UPDATE gpu_models SET cc_major = 10, cc_minor = 10", "compute capability 10.10"},
        {"UPDATE shapes SET m = 4294967297 WHERE id = 1", "shapes row 1: shape.m 4294967297"},
        {"UPDATE shapes SET m = '64abc' WHERE id = 1", "shapes row 1: column m holds text"},
        {"UPDATE shapes SET layout = 'NN' WHERE id = 1", "shape.layout"},
        {"DROP INDEX sweeps_by_uid; INSERT INTO sweeps (gpu_id, started_at, origin, uid) SELECT gpu_id, started_at, "
         "origin, uid FROM sweeps", "sweeps.uid: 2 rows hold a value another row holds too"},
        {"UPDATE sweeps SET started_at = 'whenever'", "sweeps row 1: sweep.started_at"},
        {"UPDATE sweeps SET started_at = '2999-01-01T00:00:00Z'", "in the future"},
        {"UPDATE sweeps SET host = 'box' || char(10) || 'evil'", "sweep.host"},
        {"UPDATE sweeps SET origin = 'elsewhere'", "sweep.origin"},
        {"UPDATE sweeps SET command = CAST('tune' AS BLOB)", "column command holds a blob"},
        {"UPDATE baselines SET cublas_ms = 1e-300 WHERE rowid = 1", "baselines row 1: cublas_ms"},
        {"UPDATE baselines SET cublas_ms = 1e6 WHERE rowid = 1", "times median_ms"},
        {"UPDATE baselines SET model_id = 99", "baselines row 1: refers to a GPU model, shape or sweep the part lacks"},
        {"INSERT INTO gpu_models (name, cc_major, cc_minor, sm_count) VALUES ('NVIDIA X', 9, 0, 100); UPDATE baselines "
         "SET model_id = (SELECT max(id) FROM gpu_models)", "baselines row 1: its GPU model is not the one of its sweep"},
        {"INSERT INTO gpu_models (name, cc_major, cc_minor, sm_count) VALUES ('NVIDIA X', 9, 0, 100); UPDATE winners "
         "SET model_id = (SELECT max(id) FROM gpu_models)", "winners row 1: its GPU model is not the one of its sweep"},
        {"UPDATE gpus SET model_id = 99", "refers to no GPU model"},
        {"UPDATE sweeps SET gpu_id = 99", "refers to no GPU"},
        {"DROP TABLE winners; CREATE VIEW winners AS SELECT 1 AS model_id", "holds no table winners"},
    };
    gt_merge_stats st;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        if (forge(b, bad, cases[i].sql) < 0) {
            CHECK_MSG(0, "case %zu could not be forged", i);
            continue;
        }
        const int rc = merge_into(a, bad, &st);
        CHECK_MSG(rc == -1 && strstr(err, bad) && strstr(err, cases[i].says) && strstr(err, "nothing was merged"),
                  "case %zu (%s): want '%s' in: %.300s", i, cases[i].sql, cases[i].says, err);
        CHECK_MSG(!strpbrk(err, "\x1b\n"), "case %zu: the message repeats a control character", i);
        CHECK_MSG(gt_fixture_same_bytes(a, copy), "case %zu: the database changed", i);
    }
    /* what the part says against what this database holds: a's GPU as another model, a's sweep on another GPU */
    snprintf(sql, sizeof sql, "UPDATE gpus SET uuid = '%s'", a_uuid);
    CHECK(forge(b, bad, sql) == 0 && merge_into(a, bad, &st) == -1 && strstr(err, "stored here as another GPU model"));
    snprintf(sql, sizeof sql, "UPDATE sweeps SET uid = '%s'", a_uid);
    CHECK(forge(b, bad, sql) == 0 && merge_into(a, bad, &st) == -1 && strstr(err, "a sweep of another GPU"));
    CHECK(gt_fixture_same_bytes(a, copy));
    gt_fixture_rm(a), gt_fixture_rm(b), gt_fixture_rm(bad), unlink(copy);
    free(a), free(b), free(bad), free(copy);
}

/* Issue 25: several parts are merged all or nothing, naming the part at fault; a damaged part (SQLite's
 * integrity_check) is refused; cubins are never taken from a part; and a damaged database is named as such. */
GT_TEST(merge_all_or_nothing_whole_parts_no_cubins, GT_NEEDS_NONE)
{
    char *a = gt_tmp_path(".db"), *b = gt_tmp_path(".db"), *c = gt_tmp_path(".db"), *bad = gt_tmp_path(".db");
    char *copy = gt_tmp_path(".orig");
    CHECK(gt_fixture_db(a, 2, 0, 1.0) == 0 && gt_fixture_db(b, 0, 1, 0.8) == 0 && gt_fixture_db(c, 1, 0, 1.0) == 0);
    CHECK(forge(b, bad, "UPDATE winners SET median_ms = -1") == 0);
    CHECK(gt_fixture_copy(a, copy) == 0);
    gt_db *db;
    gt_merge_stats st[3];
    const char *parts[] = {c, b, bad};
    CHECK(gt_db_open(a, GT_DB_WRITE, &db, err, sizeof err) == 0);
    CHECK_MSG(gt_db_merge_all(db, parts, 3, st, err, sizeof err) == -1 && strstr(err, bad) == err, "%s", err);
    CHECK(st[0].sweeps == 0 && st[1].sweeps == 0); /* the good parts' counts are not claimed either */
    gt_db_close(db);
    CHECK_MSG(gt_fixture_same_bytes(a, copy), "the good parts before the bad one were merged");
    /* a damaged part: SQLite's integrity check fails, and nothing of it is read */
    gt_fixture_rm(bad);
    CHECK(gt_fixture_copy(b, bad) == 0 && gt_fixture_damage_index(bad, "sqlite_autoindex_candidates_1") == 0);
    CHECK_MSG(merge_into(a, bad, st) == -1 && strstr(err, "damaged") && strstr(err, bad), "%s", err);
    CHECK(gt_fixture_same_bytes(a, copy));
    /* a 9-byte garbage cubin in a part never reaches this database */
    CHECK(gt_db_open(c, GT_DB_WRITE, &db, err, sizeof err) == 0 &&
          gt_db_cubin_put(db, "0123456789abcdef", "sm_90", 13000, "", (const unsigned char *)"garbage!!", 9, 32, 0, "",
                          err, sizeof err) == 0);
    gt_db_close(db);
    CHECK(gt_db_open(a, GT_DB_WRITE, &db, err, sizeof err) == 0);
    CHECK_MSG(gt_db_merge_all(db, parts, 2, st, err, sizeof err) == 0 && st[0].sweeps == 1 && st[1].sweeps == 1 &&
                  st[1].winners == 4,
              "%s", err);
    gt_db_close(db);
    CHECK(gt_fixture_sql_int(a, "SELECT count(*) FROM cubins") == 0);
    /* a damaged database to merge into: it is the one named */
    CHECK(gt_fixture_copy(c, copy) == 0 && gt_fixture_damage_index(copy, "sqlite_autoindex_candidates_1") == 0);
    CHECK(gt_db_open(copy, GT_DB_WRITE, &db, err, sizeof err) == 0);
    CHECK_MSG(gt_db_merge(db, b, st, err, sizeof err) == -1 && strstr(err, "damaged") && strstr(err, copy), "%s", err);
    gt_db_close(db);
    gt_fixture_rm(a), gt_fixture_rm(b), gt_fixture_rm(c), gt_fixture_rm(bad), gt_fixture_rm(copy);
    free(a), free(b), free(c), free(bad), free(copy);
}

/* What gemmtune writes from outside sources (the command line, a compiler log) is stored as text merge accepts, so
 * a database of this gemmtune always merges. */
GT_TEST(merge_takes_a_local_database_whatever_its_command_and_logs_held, GT_NEEDS_NONE)
{
    char *a = gt_tmp_path(".db"), *b = gt_tmp_path(".db");
    gt_db *db;
    long long sweep;
    gt_gpu_info g = gt_fixture_gpu(0, 3);
    const gt_shape s = {512, 512, 512, 0, 0};
    gt_trial t = {"tile2d", "BM=64,BN=64,BK=8,TM=8,TN=8", "0123456789abcdef", GT_ST_COMPILE_ERROR,
                  "error: \x1b[31mexpected ';'\x1b[0m\n\tat line 3\xff", -1, -1, -1, -1, -1, -1, -1, 0.5, -1};
    CHECK(gt_fixture_db(a, 2, 0, 1.0) == 0 && gt_db_open(b, GT_DB_CREATE, &db, err, sizeof err) == 0);
    CHECK(gt_db_begin_sweep(db, &g, "gemmtune tune --sizes '512\x1b[2J'", &sweep, err, sizeof err) == 0 &&
          gt_db_add_trial(db, sweep, &s, &t, err, sizeof err) == 0);
    gt_db_close(db);
    gt_merge_stats st;
    CHECK_MSG(merge_into(a, b, &st) == 0 && st.sweeps == 1 && st.trials == 1, "%s", err);
    CHECK(gt_fixture_sql_int(a, "SELECT count(*) FROM sweeps WHERE command = 'gemmtune tune --sizes ''512?[2J'''") == 1);
    CHECK(gt_fixture_sql_int(a, "SELECT count(*) FROM trials WHERE message = 'error: ?[31mexpected '';''?[0m' || "
                                "char(10) || char(9) || 'at line 3?'") == 1);
    gt_fixture_rm(a), gt_fixture_rm(b);
    free(a), free(b);
}
