/* gemmtune merge: rows of another database (another machine's sweeps) added to this one, with provenance in
 * sweeps.origin. Sweeps are matched by uid, so merging the same file twice changes nothing; a shape tuned on both
 * keeps the faster verified winner. The source is attached read-only and never written.
 * Tested by tests/test_export.c (idempotence by table dumps, faster-wins, refusals). */
#include "dbi.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Source-to-main id maps, by natural key. */
#define MAP_MODEL(col)                                                                                          \
    " JOIN src.gpu_models sm ON sm.id = " col " JOIN main.gpu_models mm ON mm.name = sm.name AND "                  \
    "mm.cc_major = sm.cc_major AND mm.cc_minor = sm.cc_minor AND mm.sm_count = sm.sm_count"
#define MAP_SHAPE(t)                                                                                            \
    " JOIN src.shapes ssh ON ssh.id = " t ".shape_id JOIN main.shapes msh ON msh.m = ssh.m AND msh.n = ssh.n AND " \
    "msh.k = ssh.k AND msh.layout = ssh.layout"
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
    "INSERT INTO main.shapes (m, n, k, layout) SELECT m, n, k, layout FROM src.shapes WHERE true ON CONFLICT DO NOTHING",
    "INSERT INTO main.candidates (family, params, source_hash, math) SELECT family, params, source_hash, math "
    "FROM src.candidates WHERE true ON CONFLICT DO NOTHING",
    /* trials only of sweeps this merge brought: a sweep already here already has its trials */
    "INSERT INTO main.trials (sweep_id, shape_id, candidate_id, status, message, median_ms, min_ms, max_ms, tflops, "
    "rel_err, regs, spill_bytes, compile_s, reps, created_at) SELECT ms.id, msh.id, mc.id, t.status, t.message, "
    "t.median_ms, t.min_ms, t.max_ms, t.tflops, t.rel_err, t.regs, t.spill_bytes, t.compile_s, t.reps, t.created_at "
    "FROM src.trials t" MAP_SWEEP("t") MAP_SHAPE("t") MAP_CAND("t") " WHERE ss.uid IN (SELECT uid FROM temp.merge_new) ORDER BY t.id",
    /* the newest baseline wins; ties go to the stored one */
    "INSERT INTO main.baselines (model_id, shape_id, sweep_id, cublas_ms) SELECT mm.id, msh.id, ms.id, x.cublas_ms "
    "FROM src.baselines x" MAP_MODEL("x.model_id") MAP_SHAPE("x") MAP_SWEEP("x") " WHERE true ON CONFLICT (model_id, shape_id) DO UPDATE SET "
    "sweep_id = excluded.sweep_id, cublas_ms = excluded.cublas_ms "
    "WHERE (SELECT started_at || uid FROM main.sweeps WHERE id = excluded.sweep_id) > "
    "(SELECT started_at || uid FROM main.sweeps WHERE id = baselines.sweep_id)",
    /* verified: its sweep stored an ok trial of it on that shape, or it came from an import (which has no trials) */
    "INSERT INTO main.winners (model_id, shape_id, math, candidate_id, sweep_id, median_ms, spread_pct) "
    "SELECT mm.id, msh.id, x.math, mc.id, ms.id, x.median_ms, x.spread_pct FROM src.winners x" MAP_MODEL("x.model_id")
    MAP_SHAPE("x") MAP_CAND("x") MAP_SWEEP("x") " WHERE (ss.origin LIKE 'import:%' OR EXISTS (SELECT 1 FROM src.trials t WHERE t.sweep_id = x.sweep_id "
    "AND t.shape_id = x.shape_id AND t.candidate_id = x.candidate_id AND t.status = 'ok')) "
    "ON CONFLICT (model_id, shape_id, math) DO UPDATE SET candidate_id = excluded.candidate_id, "
    "sweep_id = excluded.sweep_id, "
    "median_ms = excluded.median_ms, spread_pct = excluded.spread_pct WHERE excluded.median_ms < winners.median_ms",
    "INSERT INTO main.cubins (source_hash, arch, nvrtc_version, options, cubin, regs, spill_bytes, created_at) "
    "SELECT source_hash, arch, nvrtc_version, options, cubin, regs, spill_bytes, created_at FROM src.cubins "
    "WHERE true ON CONFLICT DO NOTHING",
    "DROP TABLE temp.merge_new",
};
/* Which gt_merge_stats counter each step adds its changed rows to (-1: none). */
static const int counts[] = {-1, -1, -1, -1, 0, -1, -1, 1, 2, 3, 4, -1};

static int run_steps(gt_db *db, const char *origin, gt_merge_stats *stats, char *err, size_t errlen)
{
    int *c[5] = {&stats->sweeps, &stats->trials, &stats->baselines, &stats->winners, &stats->cubins};
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

/* The source must be a gemmtune database of this version; an older one is migrated in a temporary copy. */
static int source_path(const char *other, char *tmp, size_t tmplen, char *err, size_t errlen)
{
    sqlite3 *h = NULL;
    int is_new, version;
    tmp[0] = 0;
    char uri[8400];
    if (dbi_check_file(other, 0, &is_new, err, errlen) < 0) return -1;
    dbi_ro_uri(other, uri, sizeof uri);
    if (sqlite3_open_v2(uri, &h, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) != SQLITE_OK ||
        dbi_check_version(h, other, &version, err, errlen) < 0) {
        if (h && !err[0]) snprintf(err, errlen, "cannot open %s: %s", other, sqlite3_errmsg(h));
        sqlite3_close(h);
        return -1;
    }
    if (version == GT_DB_SCHEMA_VERSION) return sqlite3_close(h), 0;
    const char *dir = getenv("TMPDIR");
    snprintf(tmp, tmplen, "%s/gemmtune-merge-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(err, errlen, "cannot make a temporary copy of %s to migrate it: %s", other, strerror(errno));
        tmp[0] = 0;
        sqlite3_close(h);
        return -1;
    }
    close(fd);
    sqlite3 *t = NULL;
    int rc = sqlite3_open(tmp, &t);
    sqlite3_backup *b = rc == SQLITE_OK ? sqlite3_backup_init(t, "main", h, "main") : NULL;
    if (b) sqlite3_backup_step(b, -1), rc = sqlite3_backup_finish(b);
    else rc = SQLITE_ERROR;
    sqlite3_close(t);
    sqlite3_close(h);
    gt_db *m = NULL;
    if (rc != SQLITE_OK || gt_db_open(tmp, GT_DB_WRITE, &m, err, errlen) < 0) {
        if (rc != SQLITE_OK) snprintf(err, errlen, "cannot copy %s to migrate it", other);
        remove_tmp(tmp);
        return -1;
    }
    /* back to a rollback journal so no -wal/-shm outlive the copy */
    char e2[64];
    dbi_run(m, e2, sizeof e2, "PRAGMA journal_mode = DELETE", "");
    gt_db_close(m);
    return 0;
}


int gt_db_merge(gt_db *db, const char *other_path, gt_merge_stats *stats, char *err, size_t errlen)
{
    char tmp[256], uri[8400], origin[4200], real[PATH_MAX];
    memset(stats, 0, sizeof *stats);
    err[0] = 0;
    if (source_path(other_path, tmp, sizeof tmp, err, errlen) < 0) return -1;
    const char *from = tmp[0] ? tmp : other_path;
    if (realpath(other_path, real) && realpath(db->path, origin) && !strcmp(real, origin)) {
        snprintf(err, errlen, "%s is this database: nothing to merge", other_path);
        goto fail_tmp;
    }
    snprintf(origin, sizeof origin, "merge:%s", realpath(other_path, real) ? real : other_path);
    dbi_ro_uri(from, uri, sizeof uri);
    if (dbi_run(db, err, errlen, "ATTACH DATABASE ? AS src", "t", uri) < 0) goto fail_tmp;
    if (dbi_begin(db, err, errlen) < 0) goto fail_detach;
    if (run_steps(db, origin, stats, err, errlen) < 0 || dbi_commit(db, err, errlen) < 0) {
        dbi_rollback(db);
        memset(stats, 0, sizeof *stats);
        goto fail_detach;
    }
    sqlite3_exec(db->h, "DETACH DATABASE src", NULL, NULL, NULL);
    remove_tmp(tmp);
    return 0;
fail_detach:
    sqlite3_exec(db->h, "DETACH DATABASE src", NULL, NULL, NULL);
fail_tmp:
    remove_tmp(tmp);
    return -1;
}
