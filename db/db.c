/* The results database: default path, open + forward migration (db/schema.sql, db/migrate_<v>.sql, db/views.sql),
 * and the writes a sweep makes (GPU, sweep, trials, baselines, winners, cubin cache).
 * Tested by tests/test_db.c on databases the tests create. */
#include "dbi.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int gt_db_default_path(char *buf, size_t n, char *err, size_t errlen)
{
    const char *env = getenv("GEMMTUNE_DB"), *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    int len;
    if (env && *env) len = snprintf(buf, n, "%s", env);
    else if (xdg && xdg[0] == '/') len = snprintf(buf, n, "%s/gemmtune/gemmtune.db", xdg); /* XDG: relative is ignored */
    else if (home && *home) len = snprintf(buf, n, "%s/.local/share/gemmtune/gemmtune.db", home);
    else {
        snprintf(err, errlen, "no database path: set --db, $GEMMTUNE_DB, $XDG_DATA_HOME or $HOME");
        return -1;
    }
    if (len < 0 || (size_t)len >= n) {
        snprintf(err, errlen, "database path too long");
        return -1;
    }
    return 0;
}

/* mkdir -p of the directory part of path. */
static int make_parent_dirs(const char *path, char *err, size_t errlen)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; *p; ++p) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
            snprintf(err, errlen, "cannot create directory %s: %s", dir, strerror(errno));
            return -1;
        }
        *p = '/';
    }
    return 0;
}

/* Before SQLite sees the file: it must exist (unless create) and start with the SQLite header. */
int dbi_check_file(const char *path, int create, int *is_new, char *err, size_t errlen)
{
    struct stat sb;
    *is_new = 0;
    if (stat(path, &sb) < 0) {
        if (errno != ENOENT || !create) {
            snprintf(err, errlen, errno == ENOENT ? "no database at %s (run `gemmtune tune` first, or pass --db PATH)"
                                                  : "cannot read database %s: %s",
                     path, strerror(errno));
            return -1;
        }
        *is_new = 1;
        return make_parent_dirs(path, err, errlen);
    }
    if (!S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "%s is not a regular file", path);
        return -1;
    }
    if (sb.st_size == 0) {
        if (create) return 0;
        snprintf(err, errlen, "%s is empty, not a gemmtune database", path);
        return -1;
    }
    char head[16] = {0};
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot read database %s: %s", path, strerror(errno));
        return -1;
    }
    size_t got = fread(head, 1, sizeof head, f);
    fclose(f);
    if (got < sizeof head || memcmp(head, "SQLite format 3", 16) != 0) {
        snprintf(err, errlen, "%s is not an SQLite database (a gemmtune database is one)", path);
        return -1;
    }
    return 0;
}

static int read_version(sqlite3 *h, int *version, int *ntables)
{
    sqlite3_stmt *st;
    int rc = SQLITE_ERROR;
    *version = *ntables = 0;
    if (sqlite3_prepare_v2(h, "SELECT (SELECT user_version FROM pragma_user_version), count(*) FROM sqlite_master", -1,
                           &st, NULL) == SQLITE_OK &&
        (rc = sqlite3_step(st)) == SQLITE_ROW) {
        *version = sqlite3_column_int(st, 0);
        *ntables = sqlite3_column_int(st, 1);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : -1;
}

static int exec_script(gt_db *db, const char *name, char *err, size_t errlen)
{
    const char *sql = gt_sql_text(name);
    char *msg = NULL;
    if (!sql) {
        snprintf(err, errlen, "internal: no embedded %s", name);
        return -1;
    }
    if (sqlite3_exec(db->h, sql, NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(err, errlen, "migration %s failed: %s", name, msg ? msg : sqlite3_errmsg(db->h));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

/* Bring the schema from its stored version to GT_DB_SCHEMA_VERSION in one transaction: all or nothing. */
static int migrate(gt_db *db, char *err, size_t errlen)
{
    int v, ntables;
    if (dbi_begin(db, err, errlen) < 0) return -1;
    if (read_version(db->h, &v, &ntables) < 0) {
        dbi_fail(db, DBI_WHERE, err, errlen);
        goto fail;
    }
    if (v == GT_DB_SCHEMA_VERSION) return dbi_commit(db, err, errlen);
    for (int step = v + 1; step <= GT_DB_SCHEMA_VERSION; ++step) {
        char name[32];
        if (step == 1) snprintf(name, sizeof name, "schema.sql");
        else snprintf(name, sizeof name, "migrate_%d.sql", step);
        if (exec_script(db, name, err, errlen) < 0) goto fail;
    }
    char pragma[48];
    snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d", GT_DB_SCHEMA_VERSION);
    if (exec_script(db, "views.sql", err, errlen) < 0 || dbi_run(db, err, errlen, pragma, "") < 0) goto fail;
    return dbi_commit(db, err, errlen);
fail:
    dbi_rollback(db);
    return -1;
}

/* Refuse what is not ours before anything is written: a newer schema, or someone else's SQLite file. */
int dbi_check_version(sqlite3 *h, const char *path, int *version, char *err, size_t errlen)
{
    int ntables;
    if (read_version(h, version, &ntables) < 0) {
        snprintf(err, errlen, "%s is not a readable SQLite database: %s", path, sqlite3_errmsg(h));
        return -1;
    }
    if (*version > GT_DB_SCHEMA_VERSION) {
        snprintf(err, errlen, "%s has schema version %d, newer than this gemmtune's %d: use a newer gemmtune", path,
                 *version, GT_DB_SCHEMA_VERSION);
        return -1;
    }
    if (*version == 0 && ntables > 0) {
        snprintf(err, errlen, "%s is an SQLite database but not a gemmtune one (tables, no schema version)", path);
        return -1;
    }
    return 0;
}

/* gt_stable_uid(a, b, ...): 32 hex digits from the arguments' text (two FNV-1a 64 with different bases). */
static void stable_uid(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    unsigned long long h[2] = {14695981039346656037ull, 14695981039346656037ull ^ 0x9e3779b97f4a7c15ull};
    for (int i = 0; i < argc; ++i) {
        const unsigned char *t = sqlite3_value_text(argv[i]);
        for (int j = 0; j < 2; ++j) {
            for (const unsigned char *p = t ? t : (const unsigned char *)"\1null"; *p; ++p)
                h[j] = (h[j] ^ *p) * 1099511628211ull;
            h[j] = (h[j] ^ '|') * 1099511628211ull;
        }
    }
    char out[33];
    snprintf(out, sizeof out, "%016llx%016llx", h[0], h[1]);
    sqlite3_result_text(ctx, out, 32, SQLITE_TRANSIENT);
}

static int configure(gt_db *db, char *err, size_t errlen)
{
    if (sqlite3_create_function(db->h, "gt_stable_uid", -1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, stable_uid, NULL,
                                NULL) != SQLITE_OK)
        return dbi_fail(db, DBI_WHERE, err, errlen);
    sqlite3_stmt *st;
    if (dbi_prepare(db, &st, err, errlen, "PRAGMA journal_mode = WAL", "") < 0) return -1;
    const char *mode = sqlite3_step(st) == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    int ok = mode && (!strcmp(mode, "wal") || (!strcmp(mode, "memory") && !strcmp(db->path, ":memory:")));
    sqlite3_finalize(st);
    if (!ok) {
        snprintf(err, errlen, "cannot switch %s to WAL mode: %s (is its directory writable?)", db->path,
                 sqlite3_errmsg(db->h));
        return -1;
    }
    /* WAL + NORMAL survives a killed process (not a power cut): what a sweep killed mid-way needs. */
    return dbi_run(db, err, errlen, "PRAGMA synchronous = NORMAL", "") < 0 ||
                   dbi_run(db, err, errlen, "PRAGMA foreign_keys = ON", "") < 0
               ? -1
               : 0;
}

int gt_db_open(const char *path, int create, gt_db **out, char *err, size_t errlen)
{
    int is_new = 0;
    *out = NULL;
    if (!path || !*path || strlen(path) >= sizeof((gt_db *)0)->path) {
        snprintf(err, errlen, "bad database path");
        return -1;
    }
    int mem = !strcmp(path, ":memory:"); /* the loader imports JSON into one */
    if (!mem && dbi_check_file(path, create, &is_new, err, errlen) < 0) return -1;
    if (mem && !create) return snprintf(err, errlen, "an in-memory database must be created"), -1;
    gt_db *db = calloc(1, sizeof *db);
    if (!db) return snprintf(err, errlen, "out of memory"), -1;
    snprintf(db->path, sizeof db->path, "%s", path);
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI | (create ? SQLITE_OPEN_CREATE : 0);
    char opened[4200]; /* URI names are on (merge attaches read-only); keep a plain path from reading as one */
    snprintf(opened, sizeof opened, "%s%s", strncmp(path, "file:", 5) ? "" : "./", path);
    if (sqlite3_open_v2(opened, &db->h, flags, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot open %s: %s%s", path, db->h ? sqlite3_errmsg(db->h) : "out of memory",
                 is_new ? " (is its directory writable?)" : "");
        goto fail;
    }
    sqlite3_extended_result_codes(db->h, 1);
    sqlite3_busy_timeout(db->h, 10000);
    int version;
    if (dbi_check_version(db->h, path, &version, err, errlen) < 0 || configure(db, err, errlen) < 0 || migrate(db, err, errlen) < 0) goto fail;
    *out = db;
    return 0;
fail:
    gt_db_close(db);
    if (is_new) unlink(path);
    return -1;
}

void gt_db_close(gt_db *db)
{
    if (!db) return;
    sqlite3_close_v2(db->h);
    free(db);
}

const char *gt_db_path(const gt_db *db) { return db->path; }

int gt_db_probe(const char *path, int *version, char *err, size_t errlen)
{
    int is_new;
    sqlite3 *h = NULL;
    if (dbi_check_file(path, 0, &is_new, err, errlen) < 0) return -1;
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot open %s: %s", path, h ? sqlite3_errmsg(h) : "out of memory");
        sqlite3_close(h);
        return -1;
    }
    int rc = dbi_check_version(h, path, version, err, errlen);
    sqlite3_close(h);
    return rc;
}

int gt_db_begin_sweep(gt_db *db, const gt_gpu_info *gpu, const char *command, long long *sweep_id, char *err,
                      size_t errlen)
{
    long long model, gpu_id;
    int found;
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    if (dbi_begin(db, err, errlen) < 0) return -1;
    if (dbi_model_id(db, gpu->name, gpu->cc_major, gpu->cc_minor, gpu->sm_count, &model, err, errlen) < 0 ||
        dbi_run(db, err, errlen,
                "INSERT INTO gpus (model_id, uuid, mem_bytes, l2_bytes) VALUES (?, ?, ?, ?) ON CONFLICT (uuid) DO "
                "UPDATE SET mem_bytes = excluded.mem_bytes, l2_bytes = excluded.l2_bytes",
                "ItIk", model, gpu->uuid, gpu->mem_bytes, gpu->l2_bytes) < 0 ||
        dbi_int64(db, &gpu_id, &found, err, errlen, "SELECT id FROM gpus WHERE uuid = ?", "t", gpu->uuid) < 0 ||
        dbi_run(db, err, errlen,
                "INSERT INTO sweeps (gpu_id, host, command, gemmtune_version, driver_version, cuda_version, "
                "nvrtc_version, sm_clock_mhz, uid, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, "
                "lower(hex(randomblob(16))), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))",
                "Itttkkkk", gpu_id, host, command, GT_VERSION, gpu->driver_version, gpu->cuda_version,
                gpu->nvrtc_version, gpu->sm_clock_mhz) < 0)
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
    if (!t->family || !t->params || !t->source_hash || !t->status) {
        snprintf(err, errlen, "trial lacks family, params, source hash or status");
        return -1;
    }
    if (dbi_begin(db, err, errlen) < 0) return -1;
    if (dbi_shape_id(db, s, &shape, err, errlen) < 0 ||
        dbi_candidate_id(db, t->family, t->params, t->source_hash, &cand, err, errlen) < 0 ||
        dbi_run(db, err, errlen,
                "INSERT INTO trials (sweep_id, shape_id, candidate_id, status, message, median_ms, min_ms, max_ms, "
                "tflops, rel_err, regs, spill_bytes, compile_s, reps) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                "IIIttDDDDDkkDk", sweep_id, shape, cand, t->status, t->message, t->median_ms, t->min_ms, t->max_ms,
                t->tflops, t->rel_err, t->regs, t->spill_bytes, t->compile_s, t->reps) < 0)
        goto fail;
    return dbi_commit(db, err, errlen);
fail:
    dbi_rollback(db);
    return -1;
}

int gt_db_find_trial(gt_db *db, const gt_gpu_info *gpu, const gt_shape *s, const char *family, const char *params,
                     const char *source_hash, int *found, char status[32], double *median_ms, char *err,
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
                    "AND s.m = ? AND s.n = ? AND s.k = ? AND s.layout = ? "
                    "AND c.family = ? AND c.params = ? AND c.source_hash = ? ORDER BY t.id DESC LIMIT 1",
                    "tiiiiiitttt", gpu->name, gpu->cc_major, gpu->cc_minor, gpu->sm_count, s->m, s->n, s->k,
                    gt_layout_name(s->ta, s->tb), family, params, source_hash) < 0)
        return -1;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *found = 1;
        dbi_text(st, 0, status, 32);
        *median_ms = dbi_real(st, 1);
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
                "INSERT INTO winners (model_id, shape_id, candidate_id, sweep_id, median_ms, spread_pct) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (model_id, shape_id) DO UPDATE SET "
                "candidate_id = excluded.candidate_id, sweep_id = excluded.sweep_id, median_ms = excluded.median_ms, "
                "spread_pct = excluded.spread_pct "
                "WHERE excluded.median_ms < winners.median_ms OR (? AND excluded.candidate_id = winners.candidate_id)",
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
                   "(SELECT started_at || uid FROM sweeps WHERE id = baselines.sweep_id)",
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
                    unsigned char **data, size_t *size, int *regs, int *spill_bytes, int *found, char *err,
                    size_t errlen)
{
    sqlite3_stmt *st;
    *found = 0;
    *data = NULL;
    *size = 0;
    if (dbi_prepare(db, &st, err, errlen,
                    "SELECT cubin, regs, spill_bytes FROM cubins WHERE source_hash = ? AND arch = ? AND "
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
            *found = 1;
        }
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) dbi_fail(db, DBI_WHERE, err, errlen);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

int gt_db_cubin_put(gt_db *db, const char *source_hash, const char *arch, int nvrtc_version, const char *options,
                    const unsigned char *data, size_t size, int regs, int spill_bytes, char *err, size_t errlen)
{
    if (!data || !size) {
        snprintf(err, errlen, "empty cubin for %s", source_hash ? source_hash : "?");
        return -1;
    }
    return dbi_run(db, err, errlen,
                   "INSERT INTO cubins (source_hash, arch, nvrtc_version, options, cubin, regs, spill_bytes) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET cubin = excluded.cubin, regs = excluded.regs, "
                   "spill_bytes = excluded.spill_bytes",
                   "ttitbkk", source_hash, arch, nvrtc_version, options, (const void *)data, size, regs, spill_bytes);
}
