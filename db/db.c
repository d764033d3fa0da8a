/* The writes a sweep makes (GPU, sweep, trials, baselines, winners, cubin cache); opening is db/open.c.
 * Tested by tests/test_db.c on databases the tests create. */
#include "dbi.h"
#include "validate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int gt_db_begin_sweep(gt_db *db, const gt_gpu_info *gpu, const char *command, long long *sweep_id, char *err,
                      size_t errlen)
{
    long long model, gpu_id;
    int found;
    char raw[256] = "", host[256], cmd[DBV_COMMAND_MAX + 1], driver[sizeof gpu->nvidia_driver];
    /* stored as text a merge accepts (db/validate.h), whatever the host name or the command line held */
    gethostname(raw, sizeof raw - 1);
    dbv_clean_copy(host, sizeof host, raw, 0);
    dbv_clean_copy(cmd, sizeof cmd, command, 0);
    dbv_clean_copy(driver, sizeof driver, gpu->nvidia_driver, 0);
    if (dbi_begin(db, err, errlen) < 0) return -1;
    if (dbi_model_id(db, gpu->name, gpu->cc_major, gpu->cc_minor, gpu->sm_count, &model, err, errlen) < 0 ||
        dbi_run(db, err, errlen,
                "INSERT INTO gpus (model_id, uuid, mem_bytes, l2_bytes) VALUES (?, ?, ?, ?) ON CONFLICT (uuid) DO "
                "UPDATE SET mem_bytes = excluded.mem_bytes, l2_bytes = excluded.l2_bytes",
                "ItIk", model, gpu->uuid, gpu->mem_bytes, gpu->l2_bytes) < 0 ||
        dbi_int64(db, &gpu_id, &found, err, errlen, "SELECT id FROM gpus WHERE uuid = ?", "t", gpu->uuid) < 0 ||
        dbi_run(db, err, errlen,
                "INSERT INTO sweeps (gpu_id, host, command, gemmtune_version, driver_version, cuda_version, "
                "nvrtc_version, sm_clock_mhz, nvidia_driver, uid, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, "
                "lower(hex(randomblob(16))), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
                "Itttkkkkt", gpu_id, host, command ? cmd : NULL, GT_VERSION, gpu->driver_version, gpu->cuda_version,
                gpu->nvrtc_version, gpu->sm_clock_mhz, driver[0] ? driver : NULL) < 0)
        goto fail;
    *sweep_id = sqlite3_last_insert_rowid(db->h);
    return dbi_commit(db, err, errlen);
fail:
    dbi_rollback(db);
    return -1;
}

int gt_db_add_trial(gt_db *db, long long sweep_id, const gt_shape *s, const gt_trial *t, char *err, size_t errlen)
{
    long long shape, cand;
    char msg[DBV_MESSAGE_MAX + 1];
    if (!t->family || !t->params || !t->source_hash || (unsigned)t->status >= GT_ST_COUNT) {
        snprintf(err, errlen, "trial lacks family, params, source hash or status");
        return -1;
    }
    dbv_clean_copy(msg, sizeof msg, t->message, 1); /* a compiler log or an error text, as a merge accepts it */
    if (dbi_begin(db, err, errlen) < 0) return -1;
    if (dbi_shape_id(db, s, &shape, err, errlen) < 0 ||
        dbi_candidate_id(db, t->family, t->params, t->source_hash, &cand, err, errlen) < 0 ||
        dbi_run(db, err, errlen,
                "INSERT INTO trials (sweep_id, shape_id, candidate_id, status, message, median_ms, min_ms, max_ms, "
                "tflops, rel_err, regs, spill_bytes, compile_s, reps) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                "IIIttDDDDDkkDk", sweep_id, shape, cand, gt_status_name(t->status), t->message ? msg : NULL, t->median_ms, t->min_ms, t->max_ms,
                t->tflops, t->rel_err, t->regs, t->spill_bytes, t->compile_s, t->reps) < 0)
        goto fail;
    return dbi_commit(db, err, errlen);
fail:
    dbi_rollback(db);
    return -1;
}

int gt_db_find_trial(gt_db *db, const gt_gpu_info *gpu, const gt_shape *s, const char *family, const char *params,
                     const char *source_hash, int *found, gt_status *status, double *median_ms, char *err,
                     size_t errlen)
{
    sqlite3_stmt *st;
    *found = 0;
    if (dbi_prepare(db, &st, err, errlen,
                    "SELECT t.status, t.median_ms FROM trials t "
                    "JOIN sweeps sw ON sw.id = t.sweep_id JOIN gpus g ON g.id = sw.gpu_id "
                    "JOIN gpu_models gm ON gm.id = g.model_id JOIN shapes s ON s.id = t.shape_id "
                    "JOIN candidates c ON c.id = t.candidate_id "
                    "WHERE gm.name = ? AND gm.cc_major = ? AND gm.cc_minor = ? AND gm.sm_count = ? "
                    "AND s.m = ? AND s.n = ? AND s.k = ? AND s.layout = ? AND s.batch = ? "
                    "AND c.family = ? AND c.params = ? AND c.source_hash = ? ORDER BY t.id DESC LIMIT 1",
                    "tiiiiiitittt", gpu->name, gpu->cc_major, gpu->cc_minor, gpu->sm_count, s->m, s->n, s->k,
                    gt_layout_name(s->ta, s->tb), gt_shape_batch(s), family, params, source_hash) < 0)
        return -1;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        const int known = gt_status_parse((const char *)sqlite3_column_text(st, 0));
        *found = known >= 0;
        if (*found) *status = (gt_status)known, *median_ms = dbi_real(st, 1);
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) dbi_fail(db, DBI_WHERE, err, errlen);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

static int sweep_model(gt_db *db, long long sweep_id, long long *model, char *err, size_t errlen)
{
    int found;
    if (dbi_int64(db, model, &found, err, errlen,
                  "SELECT g.model_id FROM sweeps sw JOIN gpus g ON g.id = sw.gpu_id WHERE sw.id = ?", "I", sweep_id) < 0)
        return -1;
    if (!found) snprintf(err, errlen, "no sweep %lld in the database", sweep_id);
    return found ? 0 : -1;
}

int gt_db_set_baseline(gt_db *db, long long sweep_id, const gt_shape *s, double cublas_ms, char *err, size_t errlen)
{
    long long model, shape;
    if (!(cublas_ms > 0)) {
        snprintf(err, errlen, "cuBLAS time must be positive, got %g ms", cublas_ms);
        return -1;
    }
    if (dbi_begin(db, err, errlen) < 0) return -1;
    if (sweep_model(db, sweep_id, &model, err, errlen) < 0 || dbi_shape_id(db, s, &shape, err, errlen) < 0 ||
        dbi_run(db, err, errlen,
                "INSERT INTO baselines (model_id, shape_id, sweep_id, cublas_ms) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (model_id, shape_id) DO UPDATE SET sweep_id = excluded.sweep_id, cublas_ms = excluded.cublas_ms",
                "IIId", model, shape, sweep_id, cublas_ms) < 0)
        goto fail;
    return dbi_commit(db, err, errlen);
fail:
    dbi_rollback(db);
    return -1;
}

int dbi_offer_winner(gt_db *db, long long model, long long shape, long long cand, long long sweep_id, double median_ms,
                     double spread_pct, int same_replaces, int *replaced, char *err, size_t errlen)
{
    *replaced = 0;
    if (dbi_run(db, err, errlen,
                "INSERT INTO winners (model_id, shape_id, candidate_id, sweep_id, median_ms, spread_pct, math) "
                "VALUES (?1, ?2, ?3, ?4, ?5, ?6, (SELECT math FROM candidates WHERE id = ?3)) "
                "ON CONFLICT (model_id, shape_id, math) DO UPDATE SET "
                "candidate_id = excluded.candidate_id, sweep_id = excluded.sweep_id, median_ms = excluded.median_ms, "
                "spread_pct = excluded.spread_pct WHERE NOT " DBI_STORED_POSSIBLE("winners.shape_id", "winners.median_ms")
                " OR " DBI_STALE("winners.candidate_id", "?2") " > " DBI_STALE("excluded.candidate_id", "?2")
                " OR (" DBI_STALE("winners.candidate_id", "?2") " = " DBI_STALE("excluded.candidate_id", "?2")
                " AND (excluded.median_ms < "
                "winners.median_ms OR (?7 AND excluded.candidate_id = winners.candidate_id)))",
                "IIIIdDi", model, shape, cand, sweep_id, median_ms, spread_pct, same_replaces) < 0)
        return -1;
    *replaced = sqlite3_changes(db->h) > 0;
    return 0;
}

int dbi_offer_baseline(gt_db *db, long long model, long long shape, long long sweep_id, double cublas_ms, char *err,
                       size_t errlen)
{
    return dbi_run(db, err, errlen,
                   "INSERT INTO baselines (model_id, shape_id, sweep_id, cublas_ms) VALUES (?1, ?2, ?3, ?4) "
                   "ON CONFLICT (model_id, shape_id) DO UPDATE SET sweep_id = excluded.sweep_id, "
                   "cublas_ms = excluded.cublas_ms WHERE (SELECT started_at || uid FROM sweeps WHERE id = ?3) > "
                   "(SELECT started_at || uid FROM sweeps WHERE id = baselines.sweep_id) "
                   "OR NOT " DBI_STORED_POSSIBLE("baselines.shape_id", "baselines.cublas_ms"),
                   "IIId", model, shape, sweep_id, cublas_ms);
}

int gt_db_set_winner(gt_db *db, long long sweep_id, const gt_shape *s, const char *family, const char *params,
                     const char *source_hash, double median_ms, double spread_pct, char *err, size_t errlen)
{
    long long model, shape, cand;
    int replaced;
    if (!(median_ms > 0) || !family || !params || !source_hash) {
        snprintf(err, errlen, "winner needs family, params, source hash and a positive time (got %g ms)", median_ms);
        return -1;
    }
    if (dbi_begin(db, err, errlen) < 0) return -1;
    if (sweep_model(db, sweep_id, &model, err, errlen) < 0 || dbi_shape_id(db, s, &shape, err, errlen) < 0 ||
        dbi_candidate_id(db, family, params, source_hash, &cand, err, errlen) < 0 ||
        dbi_offer_winner(db, model, shape, cand, sweep_id, median_ms, spread_pct, 1, &replaced, err, errlen) < 0)
        goto fail;
    return dbi_commit(db, err, errlen);
fail:
    dbi_rollback(db);
    return -1;
}

int gt_db_cubin_get(gt_db *db, const char *source_hash, const char *arch, int nvrtc_version, const char *options,
                    unsigned char **data, size_t *size, int *regs, int *spill_bytes, char mac[65], int *found,
                    char *err, size_t errlen)
{
    sqlite3_stmt *st;
    *found = 0;
    mac[0] = '\0';
    *data = NULL;
    *size = 0;
    if (dbi_prepare(db, &st, err, errlen,
                    "SELECT cubin, regs, spill_bytes, mac FROM cubins WHERE source_hash = ? AND arch = ? AND "
                    "nvrtc_version = ? AND options = ?",
                    "ttit", source_hash, arch, nvrtc_version, options) < 0)
        return -1;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        int n = sqlite3_column_bytes(st, 0);
        const void *p = sqlite3_column_blob(st, 0);
        *data = malloc(n > 0 ? n : 1);
        if (!*data) rc = SQLITE_NOMEM;
        else {
            if (n > 0) memcpy(*data, p, n);
            *size = n;
            *regs = sqlite3_column_type(st, 1) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 1);
            *spill_bytes = sqlite3_column_type(st, 2) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 2);
            dbi_text(st, 3, mac, 65);
            *found = 1;
        }
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) dbi_fail(db, DBI_WHERE, err, errlen);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

int gt_db_cubin_put(gt_db *db, const char *source_hash, const char *arch, int nvrtc_version, const char *options,
                    const unsigned char *data, size_t size, int regs, int spill_bytes, const char *mac, char *err,
                    size_t errlen)
{
    if (!data || !size) {
        snprintf(err, errlen, "empty cubin for %s", source_hash ? source_hash : "?");
        return -1;
    }
    return dbi_run(db, err, errlen,
                   "INSERT INTO cubins (source_hash, arch, nvrtc_version, options, cubin, regs, spill_bytes, mac) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET cubin = excluded.cubin, "
                   "regs = excluded.regs, spill_bytes = excluded.spill_bytes, mac = excluded.mac, "
                   "created_at = excluded.created_at",
                   "ttitbkkt", source_hash, arch, nvrtc_version, options, (const void *)data, size, regs, spill_bytes,
                   mac);
}

int gt_db_read_only(const gt_db *db)
{
    return sqlite3_db_readonly(db->h, "main") != 0;
}
