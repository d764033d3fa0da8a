/* gemmtune merge: rows of other databases (other machines' sweeps) added to this one, with provenance in
 * sweeps.origin, all parts or none. Each part is read by a connection of its own (read-only, its schema not
 * trusted, whole by SQLite's integrity_check; an older one migrated in a temporary copy), copied table by table
 * into a private staging database of this connection (schema "src"), checked row by row (db/merge_check.c), and
 * merged by the steps below; one transaction covers every part, so a bad part leaves this database as it was.
 * Sweeps are matched by uid, so merging the same file twice changes nothing; a shape tuned on both keeps the faster
 * verified winner. Compiled kernels (cubins) are never taken from a part: the loader and export compile a kernel
 * here when they need it. Tested by tests/test_export.c (idempotence, faster-wins, refusals, corrupted parts). */
#include "dbi.h"
#include "validate.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The tables a part brings, staged in src as main has them. */
static const char *const tables[] = {"gpu_models", "gpus",   "sweeps",    "shapes",
                                     "candidates", "trials", "baselines", "winners"};

/* Source-to-main id maps, by natural key. */
#define MAP_MODEL(col)                                                                                          \
    " JOIN src.gpu_models sm ON sm.id = " col " JOIN main.gpu_models mm ON mm.name = sm.name AND "                  \
    "mm.cc_major = sm.cc_major AND mm.cc_minor = sm.cc_minor AND mm.sm_count = sm.sm_count"
#define MAP_SHAPE(t)                                                                                            \
    " JOIN src.shapes ssh ON ssh.id = " t ".shape_id JOIN main.shapes msh ON msh.m = ssh.m AND msh.n = ssh.n AND " \
    "msh.k = ssh.k AND msh.layout = ssh.layout AND msh.batch = ssh.batch"
#define MAP_CAND(t)                                                                                             \
    " JOIN src.candidates sc ON sc.id = " t ".candidate_id JOIN main.candidates mc ON mc.family = sc.family AND " \
    "mc.params = sc.params AND mc.source_hash = sc.source_hash"
#define MAP_SWEEP(t) " JOIN src.sweeps ss ON ss.id = " t ".sweep_id JOIN main.sweeps ms ON ms.uid = ss.uid"

/* One statement per step, in dependency order. */
static const char *const steps[] = {
    "DROP TABLE IF EXISTS temp.merge_new",
    "CREATE TEMP TABLE merge_new AS SELECT uid FROM src.sweeps WHERE uid NOT IN (SELECT uid FROM main.sweeps)",
    "INSERT INTO main.gpu_models (name, cc_major, cc_minor, sm_count) SELECT name, cc_major, cc_minor, sm_count "
    "FROM src.gpu_models WHERE true ON CONFLICT DO NOTHING",
    "INSERT INTO main.gpus (model_id, uuid, mem_bytes, l2_bytes) SELECT mm.id, g.uuid, g.mem_bytes, g.l2_bytes "
    "FROM src.gpus g" MAP_MODEL("g.model_id") " WHERE true ON CONFLICT (uuid) DO NOTHING",
    "INSERT INTO main.sweeps (gpu_id, started_at, host, command, gemmtune_version, driver_version, cuda_version, "
    "nvrtc_version, sm_clock_mhz, nvidia_driver, origin, uid) SELECT mg.id, s.started_at, s.host, s.command, "
    "s.gemmtune_version, s.driver_version, s.cuda_version, s.nvrtc_version, s.sm_clock_mhz, s.nvidia_driver, "
    "CASE WHEN s.origin = 'local' THEN ?1 ELSE s.origin END, s.uid FROM src.sweeps s "
    "JOIN src.gpus sg ON sg.id = s.gpu_id JOIN main.gpus mg ON mg.uuid = sg.uuid "
    "WHERE s.uid IN (SELECT uid FROM temp.merge_new) ORDER BY s.id",
    "INSERT INTO main.shapes (m, n, k, layout, batch) SELECT m, n, k, layout, batch FROM src.shapes WHERE true "
    "ON CONFLICT DO NOTHING",
    "INSERT INTO main.candidates (family, params, source_hash, math) SELECT family, params, source_hash, math "
    "FROM src.candidates WHERE true ON CONFLICT DO NOTHING",
    /* trials only of sweeps this merge brought: a sweep already here already has its trials */
    "INSERT INTO main.trials (sweep_id, shape_id, candidate_id, status, message, median_ms, min_ms, max_ms, tflops, "
    "rel_err, regs, spill_bytes, compile_s, reps, created_at) SELECT ms.id, msh.id, mc.id, t.status, t.message, "
    "t.median_ms, t.min_ms, t.max_ms, t.tflops, t.rel_err, t.regs, t.spill_bytes, t.compile_s, t.reps, t.created_at "
    "FROM src.trials t" MAP_SWEEP("t") MAP_SHAPE("t") MAP_CAND("t") " WHERE ss.uid IN (SELECT uid FROM temp.merge_new) ORDER BY t.id",
    /* the newest baseline wins, ties going to the stored one; a stored one that is impossible always loses */
    "INSERT INTO main.baselines (model_id, shape_id, sweep_id, cublas_ms) SELECT mm.id, msh.id, ms.id, x.cublas_ms "
    "FROM src.baselines x" MAP_MODEL("x.model_id") MAP_SHAPE("x") MAP_SWEEP("x") " WHERE true ON CONFLICT (model_id, shape_id) DO UPDATE SET "
    "sweep_id = excluded.sweep_id, cublas_ms = excluded.cublas_ms "
    "WHERE (SELECT started_at || uid FROM main.sweeps WHERE id = excluded.sweep_id) > "
    "(SELECT started_at || uid FROM main.sweeps WHERE id = baselines.sweep_id) "
    "OR NOT " DBI_STORED_POSSIBLE("baselines.shape_id", "baselines.cublas_ms"),
    /* verified: its sweep stored an ok trial of it on that shape, or it came from an import (which has no trials) */
    "INSERT INTO main.winners (model_id, shape_id, math, candidate_id, sweep_id, median_ms, spread_pct) "
    "SELECT mm.id, msh.id, x.math, mc.id, ms.id, x.median_ms, x.spread_pct FROM src.winners x" MAP_MODEL("x.model_id")
    MAP_SHAPE("x") MAP_CAND("x") MAP_SWEEP("x") " WHERE (ss.origin LIKE 'import:%' OR EXISTS (SELECT 1 FROM src.trials t WHERE t.sweep_id = x.sweep_id "
    "AND t.shape_id = x.shape_id AND t.candidate_id = x.candidate_id AND t.status = 'ok')) "
    "ON CONFLICT (model_id, shape_id, math) DO UPDATE SET candidate_id = excluded.candidate_id, "
    "sweep_id = excluded.sweep_id, median_ms = excluded.median_ms, spread_pct = excluded.spread_pct "
    "WHERE NOT " DBI_STORED_POSSIBLE("winners.shape_id", "winners.median_ms") " OR "
    DBI_STALE("winners.candidate_id", "winners.shape_id") " > " DBI_STALE("excluded.candidate_id", "winners.shape_id")
    " OR (" DBI_STALE("winners.candidate_id", "winners.shape_id") " = "
    DBI_STALE("excluded.candidate_id", "winners.shape_id") " AND excluded.median_ms < winners.median_ms)",
    "DROP TABLE temp.merge_new",
};
/* Which gt_merge_stats counter each step adds its changed rows to (-1: none). */
static const int counts[] = {-1, -1, -1, -1, 0, -1, -1, 1, 2, 3, -1};

static int run_steps(gt_db *db, const char *origin, gt_merge_stats *stats, char *err, size_t errlen)
{
    int *c[4] = {&stats->sweeps, &stats->trials, &stats->baselines, &stats->winners};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; ++i) {
        if (dbi_run(db, err, errlen, steps[i], strstr(steps[i], "?1") ? "t" : "", origin) < 0) return -1;
        if (counts[i] >= 0) *c[counts[i]] += sqlite3_changes(db->h);
    }
    return 0;
}

static void remove_tmp(const char *tmp)
{
    static const char *const ext[] = {"", "-wal", "-shm", "-journal"};
    char p[300];
    for (int i = 0; tmp[0] && i < 4; ++i) {
        snprintf(p, sizeof p, "%s%s", tmp, ext[i]);
        unlink(p);
    }
}

/* A read-only connection to path whose schema is not trusted: a view, trigger or default in the file may call no
 * function with side effects, and the defensive flag keeps SQL from writing the file's internals. */
static int open_reader(const char *path, sqlite3 **h, char *err, size_t errlen)
{
    char uri[8400];
    dbi_ro_uri(path, uri, sizeof uri);
    if (sqlite3_open_v2(uri, h, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) != SQLITE_OK ||
        sqlite3_db_config(*h, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)0) != SQLITE_OK ||
        sqlite3_db_config(*h, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)0) != SQLITE_OK) {
        snprintf(err, errlen, "cannot open it: %s", *h ? sqlite3_errmsg(*h) : "out of memory");
        return -1;
    }
    return 0;
}

/* SQLite's integrity_check of the whole file (every page, record and index): a damaged part is refused before any
 * of its rows is read. */
static int whole(sqlite3 *h, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    char first[200] = "";
    int rc = sqlite3_prepare_v2(h, "PRAGMA integrity_check(1)", -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
        dbv_clean_copy(first, sizeof first, (const char *)sqlite3_column_text(st, 0), 0);
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW && !strcmp(first, "ok")) return 0;
    if (!first[0]) dbv_clean_copy(first, sizeof first, sqlite3_errmsg(h), 0);
    return snprintf(err, errlen, "it is damaged (SQLite's integrity_check: %s)", first), -1;
}

/* Drop the triggers and views of a temporary copy before migrating it, so that no SQL the file holds runs. */
static int drop_code(sqlite3 *h)
{
    sqlite3_stmt *st;
    char sql[400];
    int rc = sqlite3_prepare_v2(h, "SELECT type, replace(name, '\"', '\"\"') FROM sqlite_master WHERE type IN "
                                   "('trigger', 'view')", -1, &st, NULL);
    while (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
        snprintf(sql, sizeof sql, "DROP %s \"%s\"", sqlite3_column_text(st, 0), sqlite3_column_text(st, 1));
        sqlite3_stmt *d;
        if (sqlite3_prepare_v2(h, sql, -1, &d, NULL) != SQLITE_OK) rc = SQLITE_ERROR;
        else rc = sqlite3_step(d) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR, sqlite3_finalize(d);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_OK ? 0 : -1;
}

/* Copy h's file to a temporary tmp with its code dropped, migrated to this build's schema; *h then reads the copy. */
static int migrate_copy(sqlite3 **h, char *tmp, size_t tmplen, char *err, size_t errlen)
{
    const char *dir = getenv("TMPDIR");
    snprintf(tmp, tmplen, "%s/gemmtune-merge-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(tmp);
    if (fd < 0) return snprintf(err, errlen, "cannot make a temporary copy to migrate it: %s", strerror(errno)), tmp[0] = 0, -1;
    close(fd);
    sqlite3 *t = NULL;
    int rc = sqlite3_open(tmp, &t);
    sqlite3_backup *b = rc == SQLITE_OK ? sqlite3_backup_init(t, "main", *h, "main") : NULL;
    if (b) sqlite3_backup_step(b, -1), rc = sqlite3_backup_finish(b);
    else rc = SQLITE_ERROR;
    if (rc == SQLITE_OK && (drop_code(t) < 0 || sqlite3_exec(t, "PRAGMA journal_mode = DELETE", NULL, NULL, NULL)))
        rc = SQLITE_ERROR;
    sqlite3_close(t);
    sqlite3_close(*h);
    *h = NULL;
    gt_db *m = NULL;
    if (rc != SQLITE_OK) return snprintf(err, errlen, "cannot copy it to migrate it"), -1;
    if (gt_db_open(tmp, GT_DB_WRITE, &m, err, errlen) < 0) return -1;
    char e2[64];
    dbi_run(m, e2, sizeof e2, "PRAGMA journal_mode = DELETE", ""); /* so no -wal or -shm outlive the copy */
    gt_db_close(m);
    return open_reader(tmp, h, err, errlen);
}

/* The part, read-only, whole, of this build's schema (an older one migrated in a temporary copy, named in tmp). */
static int open_part(const char *path, sqlite3 **h, char *tmp, size_t tmplen, char *err, size_t errlen)
{
    int is_new, version;
    tmp[0] = 0;
    *h = NULL;
    if (dbi_check_file(path, 0, &is_new, err, errlen) < 0 || open_reader(path, h, err, errlen) < 0 ||
        dbi_check_version(*h, path, &version, err, errlen) < 0 || whole(*h, err, errlen) < 0)
        return -1;
    return version == GT_DB_SCHEMA_VERSION ? 0 : migrate_copy(h, tmp, tmplen, err, errlen);
}

/* 1 when the part holds t as a table (not a view, which is SQL, not data). */
static int is_table(sqlite3 *part, const char *t)
{
    sqlite3_stmt *st;
    int yes = 0;
    if (sqlite3_prepare_v2(part, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", -1, &st, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_text(st, 1, t, -1, SQLITE_STATIC);
        yes = sqlite3_step(st) == SQLITE_ROW;
    }
    sqlite3_finalize(st);
    return yes;
}

/* Copy table t of the part into src.t: the columns main.t has, by name, each value as stored. */
static int copy_table(gt_db *db, sqlite3 *part, const char *t, char *err, size_t errlen)
{
    char sel[1200], ins[1200], list[900] = "", marks[200] = "", why[200];
    sqlite3_stmt *cols, *from = NULL, *to = NULL;
    size_t n = 0, m = 0;
    if (!is_table(part, t)) return snprintf(err, errlen, "it holds no table %s", t), -1;
    if (dbi_prepare(db, &cols, err, errlen, "SELECT '\"' || name || '\"' FROM pragma_table_info(?1, 'main')", "t", t) < 0)
        return -1;
    while (sqlite3_step(cols) == SQLITE_ROW) {
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", sqlite3_column_text(cols, 0));
        m += (size_t)snprintf(marks + m, sizeof marks - m, "%s?", m ? ", " : "");
    }
    sqlite3_finalize(cols);
    snprintf(sel, sizeof sel, "SELECT %s FROM main.\"%s\"", list, t);
    snprintf(ins, sizeof ins, "INSERT INTO src.\"%s\" (%s) VALUES (%s)", t, list, marks);
    sqlite3 *failed = part;
    int rc = sqlite3_prepare_v2(part, sel, -1, &from, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_prepare_v2(db->h, ins, -1, &to, NULL)) != SQLITE_OK) failed = db->h;
    while (rc == SQLITE_OK && (rc = sqlite3_step(from)) == SQLITE_ROW) {
        for (int i = 0; i < sqlite3_column_count(from); ++i) sqlite3_bind_value(to, i + 1, sqlite3_column_value(from, i));
        if ((rc = sqlite3_step(to)) == SQLITE_DONE) rc = SQLITE_OK;
        else failed = db->h;
        sqlite3_reset(to);
    }
    if (rc != SQLITE_DONE) {
        dbv_clean_copy(why, sizeof why, sqlite3_errmsg(failed), 0);
        snprintf(err, errlen, "cannot read its table %s: %s", t, why);
    }
    sqlite3_finalize(from);
    sqlite3_finalize(to);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* Empty the staging tables and fill them with the part's rows. */
static int stage_part(gt_db *db, sqlite3 *part, char *err, size_t errlen)
{
    char sql[100];
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; ++i) {
        snprintf(sql, sizeof sql, "DELETE FROM src.%s", tables[i]);
        if (dbi_run(db, err, errlen, sql, "") < 0 || copy_table(db, part, tables[i], err, errlen) < 0) return -1;
    }
    return 0;
}

/* One part into db (inside the caller's transaction): read, staged, checked, merged. */
static int merge_part(gt_db *db, const char *path, gt_merge_stats *st, char *err, size_t errlen)
{
    char tmp[256], real[PATH_MAX], mine[PATH_MAX], origin[PATH_MAX + 16], raw[PATH_MAX + 16];
    sqlite3 *part = NULL;
    if (realpath(path, real) && realpath(db->path, mine) && !strcmp(real, mine))
        return snprintf(err, errlen, "it is this database: nothing to merge"), -1;
    int rc = open_part(path, &part, tmp, sizeof tmp, err, errlen);
    if (rc == 0) rc = stage_part(db, part, err, errlen);
    sqlite3_close(part);
    remove_tmp(tmp);
    if (rc < 0 || dbi_merge_check(db, err, errlen) < 0) return -1;
    snprintf(raw, sizeof raw, "merge:%s", realpath(path, real) ? real : path);
    dbv_clean_copy(origin, sizeof origin, raw, 0); /* a path may hold what a stored text may not */
    return run_steps(db, origin, st, err, errlen);
}

/* The staging database: private, temporary, on disk, with main's tables (columns only). */
static int stage_open(gt_db *db, char *err, size_t errlen)
{
    char sql[200];
    if (dbi_run(db, err, errlen, "ATTACH DATABASE '' AS src", "") < 0) return -1;
    for (size_t i = 0; i < sizeof tables / sizeof tables[0]; ++i) {
        snprintf(sql, sizeof sql, "CREATE TABLE src.%s AS SELECT * FROM main.%s WHERE 0", tables[i], tables[i]);
        if (dbi_run(db, err, errlen, sql, "") < 0) return -1;
    }
    return 0;
}

int gt_db_merge_all(gt_db *db, const char *const *parts, int n, gt_merge_stats *stats, char *err, size_t errlen)
{
    char why[1500], shown[300];
    int i = -1, rc = -1;
    memset(stats, 0, (size_t)(n > 0 ? n : 0) * sizeof *stats);
    if (dbi_check_integrity(db, err, errlen) < 0) return -1;
    if (stage_open(db, why, sizeof why) < 0 || dbi_begin(db, why, sizeof why) < 0) goto out;
    for (i = 0; i < n; ++i)
        if (merge_part(db, parts[i], &stats[i], why, sizeof why) < 0) break;
    if (i < n || dbi_commit(db, why, sizeof why) < 0) dbi_rollback(db);
    else rc = 0;
out:
    sqlite3_exec(db->h, "DETACH DATABASE src", NULL, NULL, NULL);
    if (rc < 0) {
        memset(stats, 0, (size_t)(n > 0 ? n : 0) * sizeof *stats);
        dbv_clean_copy(shown, sizeof shown, i >= 0 && i < n ? parts[i] : db->path, 0);
        snprintf(err, errlen, "%s%s: %s; nothing was merged", i >= 0 && i < n ? "" : "database ", shown, why);
    }
    return rc;
}

int gt_db_merge(gt_db *db, const char *other_path, gt_merge_stats *stats, char *err, size_t errlen)
{
    return gt_db_merge_all(db, &other_path, 1, stats, err, errlen);
}
