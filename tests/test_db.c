/* The results database (db/db.c, db/query.c): paths, open/create/migrate, the sweep writes, resume lookup, winner
 * rules, baselines, cubin cache, refusals that leave a file untouched. Databases live under /tmp. */
#include "db.h"
#include "fixture.h"
#include "harness.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char err[512];

static void set_env(const char *k, const char *v)
{
    if (v) setenv(k, v, 1);
    else unsetenv(k);
}

GT_TEST(db_default_path_follows_env_rules, GT_NEEDS_NONE)
{
    char *saved[3];
    const char *keys[3] = {"GEMMTUNE_DB", "XDG_DATA_HOME", "HOME"};
    for (int i = 0; i < 3; ++i) saved[i] = getenv(keys[i]) ? strdup(getenv(keys[i])) : NULL;
    char buf[4096];
    set_env("GEMMTUNE_DB", "/x/y.db");
    set_env("XDG_DATA_HOME", "/xdg");
    set_env("HOME", "/home/u");
    CHECK(gt_db_default_path(buf, sizeof buf, err, sizeof err) == 0 && !strcmp(buf, "/x/y.db"));
    set_env("GEMMTUNE_DB", NULL);
    CHECK(gt_db_default_path(buf, sizeof buf, err, sizeof err) == 0 && !strcmp(buf, "/xdg/gemmtune/gemmtune.db"));
    set_env("XDG_DATA_HOME", "relative/ignored");
    CHECK(gt_db_default_path(buf, sizeof buf, err, sizeof err) == 0 &&
          !strcmp(buf, "/home/u/.local/share/gemmtune/gemmtune.db"));
    set_env("XDG_DATA_HOME", NULL);
    CHECK(gt_db_default_path(buf, sizeof buf, err, sizeof err) == 0 &&
          !strcmp(buf, "/home/u/.local/share/gemmtune/gemmtune.db"));
    set_env("HOME", NULL);
    CHECK(gt_db_default_path(buf, sizeof buf, err, sizeof err) == -1 && strstr(err, "HOME"));
    for (int i = 0; i < 3; ++i) set_env(keys[i], saved[i]), free(saved[i]);
}

GT_TEST(db_open_creates_dirs_schema_wal_views, GT_NEEDS_NONE)
{
    char *dir = gt_tmp_path(""), path[512], cmd[600];
    snprintf(path, sizeof path, "%s/a/b/gemmtune.db", dir);
    gt_db *db;
    CHECK_MSG(gt_db_open(path, 1, &db, err, sizeof err) == 0, "%s", err);
    gt_db_close(db);
    CHECK(gt_fixture_sql_int(path, "PRAGMA user_version") == GT_DB_SCHEMA_VERSION);
    CHECK(gt_fixture_sql_int(path, "SELECT count(*) FROM sqlite_master WHERE type = 'view' AND name IN "
                        "('v_winners', 'v_trials', 'v_sweeps', 'v_gpus', 'v_baselines')") == 5);
    CHECK(gt_fixture_sql_int(path, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND "
                                   "name = 'sweeps_by_uid'") == 1);
    /* WAL is a property of the file: a fresh read-only connection sees it */
    sqlite3 *h;
    sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(h, "PRAGMA journal_mode", -1, &st, NULL);
    CHECK(sqlite3_step(st) == SQLITE_ROW && !strcmp((const char *)sqlite3_column_text(st, 0), "wal"));
    sqlite3_finalize(st);
    sqlite3_close(h);
    /* reopening an up-to-date database changes nothing */
    char copy[600];
    snprintf(copy, sizeof copy, "%s.copy", path);
    CHECK(gt_fixture_copy(path, copy) == 0);
    CHECK(gt_db_open(path, 0, &db, err, sizeof err) == 0);
    gt_db_close(db);
    CHECK(gt_fixture_same_bytes(path, copy));
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    free(dir);
}

GT_TEST(db_open_missing_without_create_fails_and_creates_nothing, GT_NEEDS_NONE)
{
    char *path = gt_tmp_path("/sub/none.db");
    gt_db *db = (gt_db *)1;
    CHECK(gt_db_open(path, 0, &db, err, sizeof err) == -1 && db == NULL);
    CHECK_MSG(strstr(err, "no database at") != NULL, "%s", err);
    struct stat sb;
    CHECK(stat(path, &sb) < 0);
    *strrchr(path, '/') = 0;
    CHECK(stat(path, &sb) < 0); /* not even the directory */
    free(path);
}

GT_TEST(db_open_unwritable_path_fails_clearly, GT_NEEDS_NONE)
{
    gt_db *db;
    CHECK(gt_db_open("/proc/gemmtune-test/x.db", 1, &db, err, sizeof err) == -1);
    CHECK_MSG(strstr(err, "/proc/gemmtune-test") != NULL, "%s", err);
    if (getuid() != 0) {
        CHECK(gt_db_open("/gemmtune-not-writable.db", 1, &db, err, sizeof err) == -1);
        CHECK_MSG(strstr(err, "gemmtune-not-writable.db") != NULL, "%s", err);
    }
}

GT_TEST(db_trials_resume_lookup_by_gpu_model, GT_NEEDS_NONE)
{
    char *path = gt_tmp_path(".db");
    gt_db *db;
    long long sw1, sw2;
    gt_gpu_info a = gt_fixture_gpu(0, 0), a2 = gt_fixture_gpu(0, 1), other = gt_fixture_gpu(2, 0);
    gt_shape s = {512, 256, 128, 0, 1};
    CHECK(gt_db_open(path, 1, &db, err, sizeof err) == 0);
    CHECK(gt_db_begin_sweep(db, &a, "test", &sw1, err, sizeof err) == 0);
    gt_trial t = {"tile2d", "BM=64", "00000000000000aa", GT_ST_WRONG, "max error 3e-2", 1.5, 1.4, 1.7, 10, 3e-2, 64, 0, 0.1, 10};
    CHECK(gt_db_add_trial(db, sw1, &s, &t, err, sizeof err) == 0);
    t.status = GT_ST_OK, t.median_ms = 1.25, t.message = NULL;
    CHECK(gt_db_begin_sweep(db, &a2, "test", &sw2, err, sizeof err) == 0 && sw2 != sw1);
    CHECK(gt_db_add_trial(db, sw2, &s, &t, err, sizeof err) == 0);
    int found = -1;
    gt_status status = GT_ST_COUNT;
    double ms = 0;
    /* the newest trial wins, and another physical GPU of the same model shares it */
    CHECK(gt_db_find_trial(db, &a, &s, "tile2d", "BM=64", "00000000000000aa", &found, &status, &ms, err, sizeof err) == 0);
    CHECK(found == 1 && status == GT_ST_OK && ms == 1.25);
    CHECK(gt_db_find_trial(db, &other, &s, "tile2d", "BM=64", "00000000000000aa", &found, &status, &ms, err, sizeof err) == 0);
    CHECK(found == 0);
    gt_shape s2 = s;
    s2.tb = 0;
    CHECK(gt_db_find_trial(db, &a, &s2, "tile2d", "BM=64", "00000000000000aa", &found, &status, &ms, err, sizeof err) == 0);
    CHECK(found == 0);
    CHECK(gt_db_find_trial(db, &a, &s, "tile2d", "BM=64", "00000000000000bb", &found, &status, &ms, err, sizeof err) == 0);
    CHECK(found == 0);
    t.status = GT_ST_COUNT; /* no status: refused, as a trial without a family is */
    CHECK(gt_db_add_trial(db, sw2, &s, &t, err, sizeof err) == -1 && strstr(err, "status"));
    gt_db_close(db);
    /* absent numbers are stored as NULL, not as -1 */
    CHECK(gt_fixture_sql_int(path, "SELECT count(*) FROM trials WHERE median_ms IS NULL") == 0);
    CHECK(gt_fixture_sql_int(path, "SELECT count(*) FROM gpus") == 2 &&
          gt_fixture_sql_int(path, "SELECT count(*) FROM gpu_models") == 1);
    CHECK(gt_fixture_sql_int(path, "SELECT count(DISTINCT uid) FROM sweeps WHERE length(uid) = 32") == 2);
    gt_fixture_rm(path);
    free(path);
}

static int collect(const gt_winner *w, void *ctx)
{
    gt_winner *out = ctx;
    int i = 0;
    while (out[i].gpu_name[0]) i++;
    if (i < 15) out[i] = *w;
    return 0;
}

static int count_winners(gt_db *db, const gt_winner_filter *f, gt_winner *out)
{
    memset(out, 0, 16 * sizeof *out);
    if (gt_db_winners(db, f, collect, out, err, sizeof err) < 0) return -1;
    int n = 0;
    while (n < 16 && out[n].gpu_name[0]) n++;
    return n;
}

GT_TEST(db_winner_rules_faster_or_same_candidate_replaces, GT_NEEDS_NONE)
{
    char *path = gt_tmp_path(".db");
    gt_db *db;
    long long sw, sw2, swo;
    gt_gpu_info a = gt_fixture_gpu(0, 0), a2 = gt_fixture_gpu(0, 1), b = gt_fixture_gpu(1, 0);
    gt_shape s = {1000, 2000, 300, 1, 1};
    gt_winner w[16];
    CHECK(gt_db_open(path, 1, &db, err, sizeof err) == 0);
    CHECK(gt_db_begin_sweep(db, &a, "t", &sw, err, sizeof err) == 0);
    CHECK(gt_db_begin_sweep(db, &a2, "t", &sw2, err, sizeof err) == 0);
    CHECK(gt_db_begin_sweep(db, &b, "t", &swo, err, sizeof err) == 0);
    CHECK(gt_db_set_winner(db, sw, &s, "tile2d", "P1", "1111111111111111", 2.0, 1.0, err, sizeof err) == 0);
    CHECK(gt_db_set_winner(db, sw2, &s, "tile2d", "P2", "2222222222222222", 3.0, 1.0, err, sizeof err) == 0);
    CHECK(count_winners(db, NULL, w) == 1 && !strcmp(w[0].params, "P1") && w[0].median_ms == 2.0);
    CHECK(w[0].ratio < 0 && w[0].cublas_ms < 0); /* no baseline yet */
    CHECK(gt_db_set_winner(db, sw2, &s, "tile2d", "P2", "2222222222222222", 1.5, 1.0, err, sizeof err) == 0);
    CHECK(count_winners(db, NULL, w) == 1 && !strcmp(w[0].params, "P2") && w[0].sweep_id == sw2);
    /* the same candidate re-timed slower replaces its own timing */
    CHECK(gt_db_set_winner(db, sw, &s, "tile2d", "P2", "2222222222222222", 1.8, 0.5, err, sizeof err) == 0);
    CHECK(count_winners(db, NULL, w) == 1 && w[0].median_ms == 1.8 && w[0].spread_pct == 0.5);
    /* another model keeps its own winner */
    CHECK(gt_db_set_winner(db, swo, &s, "tile2d", "P9", "9999999999999999", 9.0, -1, err, sizeof err) == 0);
    CHECK(count_winners(db, NULL, w) == 2);
    CHECK(gt_db_set_baseline(db, sw, &s, 3.6, err, sizeof err) == 0);
    CHECK(gt_db_set_baseline(db, sw2, &s, 2.7, err, sizeof err) == 0); /* newest replaces */
    gt_winner_filter f = {.gpu_name = "h200"};
    CHECK(count_winners(db, &f, w) == 1 && w[0].cublas_ms == 2.7 && w[0].ratio == 2.7 / 1.8);
    CHECK(w[0].tflops > 0 && w[0].cublas_tflops > 0 && w[0].shape.ta == 1 && w[0].shape.tb == 1);
    CHECK(w[0].cc_major == 9 && w[0].sm_count == 132 && !strcmp(w[0].source_hash, "2222222222222222"));
    CHECK(gt_db_set_winner(db, 999, &s, "tile2d", "P2", "2222222222222222", 1.0, 0, err, sizeof err) == -1);
    CHECK(strstr(err, "no sweep 999") != NULL);
    CHECK(gt_db_set_baseline(db, sw, &s, 0, err, sizeof err) == -1);
    gt_db_close(db);
    gt_fixture_rm(path);
    free(path);
}

GT_TEST(db_winners_filter_gpu_shape_family, GT_NEEDS_NONE)
{
    char *path = gt_tmp_path(".db");
    gt_winner w[16];
    CHECK(gt_fixture_db(path, 0, 0, 1.0) == 0 && gt_fixture_db(path, 2, 0, 2.0) == 0);
    gt_db *db;
    CHECK(gt_db_open(path, 0, &db, err, sizeof err) == 0);
    CHECK(count_winners(db, NULL, w) == 8);
    /* ordered by GPU, layout, m, n, k */
    CHECK(!strncmp(w[0].gpu_name, "NVIDIA A100", 11) && !strcmp(w[7].gpu_name, "NVIDIA H200"));
    CHECK(w[0].shape.m == 1024 && w[3].shape.ta == 1);
    gt_winner_filter f = {.gpu_name = "a100"};
    CHECK(count_winners(db, &f, w) == 4);
    gt_shape s = {2048, 2048, 2048, 1, 0};
    gt_winner_filter fs = {.shape = &s};
    CHECK(count_winners(db, &fs, w) == 2 && w[0].shape.ta == 1 && w[1].shape.ta == 1);
    CHECK(w[0].ratio > 0 && w[0].ratio < 1.0); /* fixture: cuBLAS at 40 TFLOPS beats our 30 */
    gt_winner_filter ff = {.family = "nosuch"};
    CHECK(count_winners(db, &ff, w) == 0);
    gt_winner_filter fx = {.family = "tile2d"};
    CHECK(count_winners(db, &fx, w) == 8);
    gt_winner_filter fl = {.layout = "tn"}, fg = {.gpu_name = "H200", .layout = "nn"};
    CHECK(count_winners(db, &fl, w) == 2 && w[0].shape.ta == 1 && w[1].shape.ta == 1);
    CHECK(count_winners(db, &fg, w) == 3 && !strcmp(w[2].gpu_name, "NVIDIA H200") && w[2].shape.ta == 0);
    gt_db_close(db);
    gt_fixture_rm(path);
    free(path);
}

static int count_trial(const gt_trial_row *t, void *ctx)
{
    int *n = ctx;
    if (n[0] == 0) n[1] = t->status == GT_ST_OK; /* the first row of the walk is an ok one */
    if (t->status == GT_ST_RESOURCES) n[2]++;
    n[3] += t->is_winner;
    n[0]++;
    return 0;
}

GT_TEST(db_trials_walk_ok_first_and_marks_winner, GT_NEEDS_NONE)
{
    char *path = gt_tmp_path(".db");
    CHECK(gt_fixture_db(path, 1, 0, 1.0) == 0);
    gt_db *db;
    CHECK(gt_db_open(path, 0, &db, err, sizeof err) == 0);
    int n[4] = {0};
    gt_shape s = {4096, 4096, 1024, 0, 0};
    gt_winner_filter f = {.shape = &s};
    CHECK(gt_db_trials(db, &f, count_trial, n, err, sizeof err) == 0);
    CHECK(n[0] == 4 && n[1] == 1 && n[2] == 1 && n[3] == 1);
    gt_db_close(db);
    gt_fixture_rm(path);
    free(path);
}

GT_TEST(db_cubin_cache_roundtrip, GT_NEEDS_NONE)
{
    char *path = gt_tmp_path(".db");
    gt_db *db;
    unsigned char blob[300], *got = NULL;
    char mac[65];
    for (int i = 0; i < 300; ++i) blob[i] = (unsigned char)(i * 7); /* zeros included */
    size_t n = 0;
    int regs = 0, spill = 0, found = -1;
    CHECK(gt_db_open(path, 1, &db, err, sizeof err) == 0);
    CHECK(gt_db_cubin_get(db, "abcd", "sm_90", 13000, "-o", &got, &n, &regs, &spill, mac, &found, err, sizeof err) == 0);
    CHECK(found == 0 && got == NULL);
    CHECK(gt_db_cubin_put(db, "abcd", "sm_90", 13000, "-o", blob, sizeof blob, 96, -1, "m", err, sizeof err) == 0);
    CHECK(gt_db_cubin_get(db, "abcd", "sm_90", 13000, "-o", &got, &n, &regs, &spill, mac, &found, err, sizeof err) == 0);
    CHECK(found == 1 && n == sizeof blob && got && !memcmp(got, blob, n) && regs == 96 && spill == -1 &&
          !strcmp(mac, "m"));
    free(got);
    got = NULL;
    CHECK(gt_db_cubin_get(db, "abcd", "sm_90", 13010, "-o", &got, &n, &regs, &spill, mac, &found, err, sizeof err) == 0);
    CHECK(found == 0);
    CHECK(gt_db_cubin_get(db, "abcd", "sm_80", 13000, "-o", &got, &n, &regs, &spill, mac, &found, err, sizeof err) == 0);
    CHECK(found == 0);
    CHECK(gt_db_cubin_put(db, "abcd", "sm_90", 13000, "-o", blob, 0, 96, 0, "m", err, sizeof err) == -1);
    gt_db_close(db);
    gt_fixture_rm(path);
    free(path);
}

GT_TEST(db_migrates_v1_file_forward, GT_NEEDS_NONE)
{
    char *path = gt_tmp_path(".db");
    CHECK(gt_fixture_v1_db(path) == 0);
    CHECK(gt_fixture_sql_int(path, "PRAGMA user_version") == 1);
    gt_db *db;
    gt_winner w[16];
    /* a reader (and the loader) reads it through a migrated copy in memory and leaves the file as it is */
    char copy[600];
    snprintf(copy, sizeof copy, "%s.v1", path);
    CHECK(gt_fixture_copy(path, copy) == 0);
    for (int mode = GT_DB_READ_CACHE; mode <= GT_DB_READ; mode += GT_DB_READ - GT_DB_READ_CACHE) {
        CHECK_MSG(gt_db_open(path, mode, &db, err, sizeof err) == 0, "%s", err);
        CHECK(db && count_winners(db, NULL, w) == 1 && !strcmp(w[0].gpu_name, "Old GPU") && w[0].ratio == 0.5);
        gt_db_close(db);
        CHECK(gt_fixture_same_bytes(path, copy) && gt_fixture_sql_int(path, "PRAGMA user_version") == 1);
    }
    unlink(copy);
    /* a writer migrates the file itself */
    CHECK_MSG(gt_db_open(path, GT_DB_WRITE, &db, err, sizeof err) == 0, "%s", err);
    CHECK(count_winners(db, NULL, w) == 1 && !strcmp(w[0].gpu_name, "Old GPU") && w[0].ratio == 0.5);
    CHECK(w[0].shape.m == 64 && w[0].shape.ta == 0 && w[0].shape.tb == 1);
    /* the migrated file takes new sweeps and its old sweep got a uid */
    long long sw;
    gt_gpu_info g = gt_fixture_gpu(0, 0);
    CHECK(gt_db_begin_sweep(db, &g, "t", &sw, err, sizeof err) == 0 && sw == 2);
    gt_db_close(db);
    CHECK(gt_fixture_sql_int(path, "PRAGMA user_version") == GT_DB_SCHEMA_VERSION);
    CHECK(gt_fixture_sql_int(path, "SELECT count(*) FROM sweeps WHERE length(uid) = 32") == 2);
    CHECK(gt_fixture_sql_int(path, "SELECT count(*) FROM v_trials WHERE ratio_vs_cublas = 0.5") == 1);
    CHECK(gt_fixture_sql_int(path, "SELECT count(*) FROM pragma_table_info('sweeps') WHERE name = 'nvidia_driver'") == 1); /* v3 */
    gt_fixture_rm(path);
    free(path);
}

static void expect_refused_untouched(const char *path, const char *want)
{
    char copy[600];
    snprintf(copy, sizeof copy, "%s.orig", path);
    CHECK(gt_fixture_copy(path, copy) == 0);
    gt_db *db = NULL;
    CHECK(gt_db_open(path, 1, &db, err, sizeof err) == -1 && db == NULL);
    CHECK_MSG(strstr(err, want) != NULL, "want '%s' in: %s", want, err);
    CHECK(gt_fixture_same_bytes(path, copy));
    unlink(copy);
}

GT_TEST(db_refuses_newer_foreign_or_non_sqlite_untouched, GT_NEEDS_NONE)
{
    char *path = gt_tmp_path(".db");
    sqlite3 *h;
    CHECK(gt_fixture_db(path, 0, 0, 1.0) == 0);
    sqlite3_open(path, &h);
    sqlite3_exec(h, "PRAGMA user_version = 99", NULL, NULL, NULL);
    sqlite3_close(h);
    expect_refused_untouched(path, "newer");
    gt_fixture_rm(path);
    sqlite3_open(path, &h);
    sqlite3_exec(h, "CREATE TABLE notes (x TEXT); INSERT INTO notes VALUES ('mine');", NULL, NULL, NULL);
    sqlite3_close(h);
    expect_refused_untouched(path, "not a gemmtune");
    gt_fixture_rm(path);
    CHECK(gt_fixture_write(path, "hello, not a database\n", 22) == 0);
    expect_refused_untouched(path, "not an SQLite database");
    /* an SQLite header with garbage after it */
    char junk[4096];
    memset(junk, 0x5a, sizeof junk);
    memcpy(junk, "SQLite format 3", 16);
    CHECK(gt_fixture_write(path, junk, sizeof junk) == 0);
    expect_refused_untouched(path, path);
    gt_fixture_rm(path);
    free(path);
}

GT_TEST(db_trial_survives_killed_process, GT_NEEDS_NONE)
{
    char *path = gt_tmp_path(".db");
    gt_gpu_info g = gt_fixture_gpu(1, 3);
    gt_shape s = {128, 128, 128, 0, 0};
    pid_t pid = fork();
    if (pid == 0) {
        gt_db *db;
        long long sw;
        char e[256];
        gt_trial t = {"tile2d", "BM=32", "00000000000000cc", GT_ST_OK, NULL, 0.1, 0.1, 0.1, 1, 0, 32, 0, 0.1, 5};
        if (gt_db_open(path, 1, &db, e, sizeof e) || gt_db_begin_sweep(db, &g, "t", &sw, e, sizeof e) ||
            gt_db_add_trial(db, sw, &s, &t, e, sizeof e))
            _exit(1);
        kill(getpid(), SIGKILL); /* no close, no checkpoint */
        _exit(2);
    }
    int st;
    waitpid(pid, &st, 0);
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    gt_db *db;
    int found = 0;
    gt_status status;
    double ms;
    CHECK(gt_db_open(path, 0, &db, err, sizeof err) == 0);
    CHECK(gt_db_find_trial(db, &g, &s, "tile2d", "BM=32", "00000000000000cc", &found, &status, &ms, err, sizeof err) == 0);
    CHECK(found == 1 && ms == 0.1);
    gt_db_close(db);
    gt_fixture_rm(path);
    free(path);
}

GT_TEST(db_in_memory_database_works, GT_NEEDS_NONE)
{
    gt_db *db;
    long long sw;
    gt_gpu_info g = gt_fixture_gpu(0, 0);
    gt_shape s = {64, 64, 64, 0, 0};
    gt_winner w[16];
    CHECK_MSG(gt_db_open(":memory:", 1, &db, err, sizeof err) == 0, "%s", err);
    CHECK(gt_db_begin_sweep(db, &g, "t", &sw, err, sizeof err) == 0);
    CHECK(gt_db_set_winner(db, sw, &s, "tile2d", "P", "0123456789abcdef", 1.0, 0, err, sizeof err) == 0);
    CHECK(count_winners(db, NULL, w) == 1);
    gt_db_close(db);
    CHECK(access(":memory:", F_OK) != 0);
    CHECK(gt_db_open(":memory:", 0, &db, err, sizeof err) == -1);
}

static int exists_beside(const char *path, const char *ext)
{
    char p[600];
    snprintf(p, sizeof p, "%s%s", path, ext);
    return access(p, F_OK) == 0;
}

/* A reader creates no -wal or -shm, changes no byte, and still sees what a writer that has the file open has
 * committed; a reader cannot write. */
GT_TEST(db_reader_creates_nothing_and_follows_a_writer, GT_NEEDS_NONE)
{
    char *path = gt_tmp_path(".db"), copy[600];
    gt_db *db, *w;
    gt_winner rows[16];
    snprintf(copy, sizeof copy, "%s.orig", path);
    CHECK(gt_fixture_db(path, 0, 0, 1.0) == 0 && gt_fixture_copy(path, copy) == 0);
    CHECK(!exists_beside(path, "-wal") && !exists_beside(path, "-shm"));
    CHECK_MSG(gt_db_open(path, GT_DB_READ, &db, err, sizeof err) == 0, "%s", err);
    CHECK(count_winners(db, NULL, rows) == 4);
    long long sw;
    gt_gpu_info g = gt_fixture_gpu(2, 0);
    CHECK(gt_db_begin_sweep(db, &g, "t", &sw, err, sizeof err) == -1 && strstr(err, "readonly"));
    gt_db_close(db);
    CHECK(!exists_beside(path, "-wal") && !exists_beside(path, "-shm") && gt_fixture_same_bytes(path, copy));
    /* a writer holds it open (its -wal exists): a reader opened now sees its committed winner */
    CHECK(gt_db_open(path, GT_DB_WRITE, &w, err, sizeof err) == 0);
    gt_shape s = {77, 77, 77, 0, 0};
    CHECK(gt_db_begin_sweep(w, &g, "t", &sw, err, sizeof err) == 0 &&
          gt_db_set_winner(w, sw, &s, "tile2d", "BM=64,BN=64,BK=8,TM=8,TN=8", "0123456789abcdef", 1, 1, err,
                           sizeof err) == 0);
    CHECK(exists_beside(path, "-wal"));
    CHECK(gt_db_open(path, GT_DB_READ, &db, err, sizeof err) == 0 && count_winners(db, NULL, rows) == 5);
    gt_db_close(db);
    gt_db_close(w);
    CHECK(!exists_beside(path, "-wal") && !exists_beside(path, "-shm"));
    CHECK(gt_db_open(path, 7, &db, err, sizeof err) == -1 && strstr(err, "mode"));
    gt_fixture_rm(path);
    unlink(copy);
    free(path);
}

/* Issue 26: a batch is a shape of its own. 64 products of 512x512x128 and the single 512x512x128 keep their own
 * trials, baselines and winners; the winner reads back with its batch (TFLOPS counting every product), the shape
 * filter tells them apart, and JSON export -> import -> export is the identity with the batch in it. */
GT_TEST(db_batched_shape_is_its_own_shape_through_json, GT_NEEDS_NONE)
{
    char *a = gt_tmp_path(".db"), *b = gt_tmp_path(".db"), *j1 = NULL, *j2 = NULL, hash[2][17];
    gt_db *db;
    long long sw;
    gt_gpu_info gpu = gt_fixture_gpu(0, 0);
    const gt_family *f = gt_family_find("tile2d");
    gt_params p;
    const char *params = "BM=64,BN=64,BK=8,TM=8,TN=8";
    gt_shape one = {512, 512, 128, 1, 0}, many = one;
    many.batch = 64;
    CHECK(f && gt_params_parse(f, params, &p, err, sizeof err) == 0 &&
          gt_kernel_id(f, &p, 1, 0, 0, hash[0], NULL, err, sizeof err) == 0 &&
          gt_kernel_id(f, &p, 1, 0, 1, hash[1], NULL, err, sizeof err) == 0 && strcmp(hash[0], hash[1]));
    CHECK(gt_db_open(a, GT_DB_CREATE, &db, err, sizeof err) == 0 &&
          gt_db_begin_sweep(db, &gpu, "test", &sw, err, sizeof err) == 0);
    gt_trial t = {"tile2d", params, NULL, GT_ST_OK, NULL, 0.02, 0.02, 0.02, 10, 1e-7, 64, 0, 0.1, 10};
    const gt_shape *shapes[] = {&one, &many};
    for (int i = 0; i < 2; ++i) { /* a batch's kernel is its own source (GT_BATCHED): its own id */
        t.median_ms = i ? 0.5 : 0.02, t.source_hash = hash[i];
        CHECK(gt_db_add_trial(db, sw, shapes[i], &t, err, sizeof err) == 0 &&
              gt_db_set_baseline(db, sw, shapes[i], t.median_ms * 1.25, err, sizeof err) == 0 &&
              gt_db_set_winner(db, sw, shapes[i], "tile2d", params, hash[i], t.median_ms, 1.0, err, sizeof err) == 0);
    }
    gt_winner w[16];
    const gt_winner_filter by_batch = {.shape = &many};
    CHECK_MSG(count_winners(db, NULL, w) == 2, "%s", err);
    CHECK(count_winners(db, &by_batch, w) == 1 && w[0].shape.batch == 64 && w[0].median_ms == 0.5 && !w[0].stale);
    CHECK(fabs(w[0].tflops - 2.0 * 64 * 512 * 512 * 128 / 0.5e9) < 1e-9 && fabs(w[0].ratio - 1.25) < 1e-12);
    CHECK(gt_db_export_json(db, NULL, &j1, err, sizeof err) == 0 && strstr(j1, "\"batch\":\t64"));
    gt_db_close(db);
    int n = 0;
    CHECK(gt_db_open(b, GT_DB_CREATE, &db, err, sizeof err) == 0 &&
          gt_db_import_json(db, j1, "test", &n, err, sizeof err) == 0 && n == 2);
    CHECK(count_winners(db, &by_batch, w) == 1 && w[0].shape.batch == 64);
    CHECK(gt_db_export_json(db, NULL, &j2, err, sizeof err) == 0 && j1 && j2 && !strcmp(j1, j2));
    char *h = NULL; /* the C header carries the batch, and finds a row by it */
    CHECK(gt_db_export_header(db, NULL, NULL, NULL, &h, err, sizeof err) == 0 && h && strstr(h, "NULL, 0, NULL, 64},") &&
          strstr(h, "NULL, 0, NULL, 1},") && strstr(h, "gemmtune_winner_find_batch("));
    free(h);
    gt_db_close(db);
    CHECK(gt_fixture_sql_int(b, "SELECT count(*) FROM v_winners WHERE batch = 64") == 1);
    free(j1), free(j2);
    gt_fixture_rm(a), gt_fixture_rm(b);
    free(a), free(b);
}
