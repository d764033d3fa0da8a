/* Opening the results database: the default path, the four open modes of gt_db_open (db.h), the checks made
 * before SQLite touches a file, and forward migration (db/schema.sql, db/migrate_<v>.sql, db/views.sql).
 * A reader never writes: not the file, not its journal mode, not a -wal or -shm beside it.
 * Tested by tests/test_db.c (modes, migration, refusals) and tests/test_cli_db.c (another user's database). */
#include "dbi.h"
#include "files.h"
#include "validate.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
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
            snprintf(err, errlen, errno == ENOENT ? "no database at %s" : "cannot read database %s: %s", path,
                     strerror(errno));
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
    char head[16] = {0}, why[600];
    int fd = gt_file_open_regular(path, O_RDONLY, 0, why, sizeof why); /* no wait on what became a FIFO since */
    if (fd < 0) return snprintf(err, errlen, "database: %s", why), -1;
    ssize_t got = read(fd, head, sizeof head);
    close(fd);
    if (got < (ssize_t)sizeof head || memcmp(head, "SQLite format 3", 16) != 0) {
        snprintf(err, errlen, "%s is not an SQLite database (a gemmtune database is one)", path);
        return -1;
    }
    return 0;
}

/* 1 when the file header says WAL (bytes 18 and 19 are 2) and no <path>-wal lies beside it: no connection has
 * it open and nothing waits to be checkpointed, so it can be read as immutable, which creates no -wal or -shm. */
static int wal_without_log(const char *path)
{
    unsigned char head[20];
    char wal[4200], why[600];
    int fd = gt_file_open_regular(path, O_RDONLY, 0, why, sizeof why);
    ssize_t got = fd >= 0 ? read(fd, head, sizeof head) : 0;
    if (fd >= 0) close(fd);
    snprintf(wal, sizeof wal, "%s-wal", path);
    return got == (ssize_t)sizeof head && head[18] == 2 && head[19] == 2 && access(wal, F_OK) != 0;
}

void dbi_ro_uri(const char *path, char *out, size_t n)
{
    /* "file:" + "//x/y" would read x as the URI's authority: an absolute path gets an empty one, "file://" */
    size_t o = (size_t)snprintf(out, n, "file:%s", path[0] == '/' ? "//" : "");
    for (const unsigned char *p = (const unsigned char *)path; *p && o + 4 < n; ++p)
        o += *p == '%' || *p == '?' || *p == '#' ? (size_t)snprintf(out + o, n - o, "%%%02X", *p)
                                                 : (size_t)snprintf(out + o, n - o, "%c", *p);
    snprintf(out + o, n - o, "?mode=ro%s", wal_without_log(path) ? "&immutable=1" : "");
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

/* The steps from version v up, the views, and the new version, inside the caller's transaction. */
static int migrate_steps(gt_db *db, int v, char *err, size_t errlen)
{
    for (int step = v + 1; step <= GT_DB_SCHEMA_VERSION; ++step) {
        char name[32];
        if (step == 1) snprintf(name, sizeof name, "schema.sql");
        else snprintf(name, sizeof name, "migrate_%d.sql", step);
        if (exec_script(db, name, err, errlen) < 0) return -1;
    }
    char pragma[48];
    snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d", GT_DB_SCHEMA_VERSION);
    if (exec_script(db, "views.sql", err, errlen) < 0 || dbi_run(db, err, errlen, pragma, "") < 0) return -1;
    int dangling = 0; /* a rebuilt table must leave every reference to it whole */
    if (dbi_int64(db, &(long long){0}, &dangling, err, errlen, "PRAGMA foreign_key_check", "") < 0) return -1;
    if (dangling) return snprintf(err, errlen, "migration to schema %d left a dangling reference", GT_DB_SCHEMA_VERSION), -1;
    return 0;
}

/* Bring the schema from its stored version to GT_DB_SCHEMA_VERSION in one transaction: all or nothing. A step may
 * rebuild a table others reference (migrate_4's winners, migrate_6's shapes): as SQLite documents for that, foreign
 * keys are off while the steps run (the pragma cannot change inside a transaction), checked whole before the
 * commit, and as they were after. */
static int migrate(gt_db *db, char *err, size_t errlen)
{
    int v, ntables, found = 0;
    long long on = 0;
    if (dbi_int64(db, &on, &found, err, errlen, "PRAGMA foreign_keys", "") < 0) return -1;
    const int fk = found && on;
    if (fk && dbi_run(db, err, errlen, "PRAGMA foreign_keys = OFF", "") < 0) return -1;
    int rc = dbi_begin(db, err, errlen);
    if (rc == 0 && read_version(db->h, &v, &ntables) < 0) rc = dbi_fail(db, DBI_WHERE, err, errlen);
    if (rc == 0 && v != GT_DB_SCHEMA_VERSION) rc = migrate_steps(db, v, err, errlen);
    if (rc == 0) rc = dbi_commit(db, err, errlen);
    if (rc < 0) dbi_rollback(db);
    char ignored[256]; /* a failure's own message stays in err */
    if (fk && dbi_run(db, rc ? ignored : err, rc ? sizeof ignored : errlen, "PRAGMA foreign_keys = ON", "") < 0)
        rc = -1;
    return rc;
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

/* The dims and a time of a stored row, as the validator wants them: -1 (refused) for a value of the wrong type. */
/* The dims (m, n, k, batch) and a time of a stored row, as the validator wants them: -1 (refused) for a value of
 * the wrong type. */
static int row_args(sqlite3_value **argv, long long d[4], double *ms)
{
    for (int i = 0; i < 4; ++i) {
        if (sqlite3_value_type(argv[i]) != SQLITE_INTEGER) return -1;
        d[i] = sqlite3_value_int64(argv[i]);
    }
    const int t = sqlite3_value_type(argv[4]);
    if (t != SQLITE_INTEGER && t != SQLITE_FLOAT) return -1;
    *ms = sqlite3_value_double(argv[4]);
    return 0;
}

/* gt_possible_ms(m, n, k, batch, ms): 1 when ms is a time a GEMM of that shape can take (dbv_row_possible), else
 * 0. The readers serve no row for which it is 0, and a writer replaces such a row whatever it is offered. */
static void possible_ms(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    long long d[4];
    double ms;
    (void)argc;
    sqlite3_result_int(ctx, row_args(argv, d, &ms) == 0 && dbv_row_possible(d[0], d[1], d[2], d[3], ms));
}

/* gt_possible_baseline(m, n, k, batch, median_ms, cublas_ms): cublas_ms when it is possible and no more than
 * DBV_MAX_RATIO times median_ms, else NULL (a baseline the readers take as absent). */
static void possible_baseline(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    long long d[4];
    double median, cublas;
    sqlite3_value *b[5] = {argv[0], argv[1], argv[2], argv[3], argv[5]};
    (void)argc;
    if (row_args(argv, d, &median) == 0 && row_args(b, d, &cublas) == 0 &&
        dbv_row_possible(d[0], d[1], d[2], d[3], cublas) && median > 0 && cublas / median <= DBV_MAX_RATIO)
        sqlite3_result_double(ctx, cublas);
    else sqlite3_result_null(ctx);
}

/* gt_kernel_stale(family, params, layout, batch, source_hash): 1 when this build's id of the kernel differs from the
 * stored one (family.h), so a winner offer can let a fresh kernel displace a stale one. */
static void kernel_stale(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const char *t[3], *id = argc == 5 ? (const char *)sqlite3_value_text(argv[4]) : NULL;
    int ta = 0, tb = 0;
    for (int i = 0; i < 3 && i < argc; ++i) t[i] = (const char *)sqlite3_value_text(argv[i]);
    if (argc != 5 || !t[2] || gt_layout_parse(t[2], &ta, &tb) < 0) return sqlite3_result_int(ctx, 0);
    sqlite3_result_int(ctx, gt_kernel_stale(t[0], t[1], ta, tb, sqlite3_value_int64(argv[3]) > 1, id));
}

/* Open name on db->h with flags; the gt_stable_uid function (migrations use it), the readers' gt_possible_ms and
 * gt_possible_baseline, gt_kernel_stale, and a busy timeout. */
static int open_handle(gt_db *db, const char *name, int flags, char *err, size_t errlen)
{
    if (sqlite3_open_v2(name, &db->h, flags | SQLITE_OPEN_URI, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot open %s: %s", db->path, db->h ? sqlite3_errmsg(db->h) : "out of memory");
        return -1;
    }
    sqlite3_extended_result_codes(db->h, 1);
    sqlite3_busy_timeout(db->h, 10000);
    /* the file is data: what its schema holds (views, triggers, defaults) may call no function with effects, and
     * nothing may write the schema behind SQLite's back */
    sqlite3_db_config(db->h, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, (int *)NULL);
    sqlite3_db_config(db->h, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL);
    const int flags_fn = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
    if (sqlite3_create_function(db->h, "gt_stable_uid", -1, flags_fn, NULL, stable_uid, NULL, NULL) != SQLITE_OK ||
        sqlite3_create_function(db->h, "gt_possible_ms", 5, flags_fn, NULL, possible_ms, NULL, NULL) != SQLITE_OK ||
        sqlite3_create_function(db->h, "gt_possible_baseline", 6, flags_fn, NULL, possible_baseline, NULL, NULL) !=
            SQLITE_OK ||
        sqlite3_create_function(db->h, "gt_kernel_stale", 5, flags_fn, NULL, kernel_stale, NULL, NULL) != SQLITE_OK)
        return dbi_fail(db, DBI_WHERE, err, errlen);
    return 0;
}

/* A writer's settings: WAL (a reader can follow a running sweep), foreign keys. */
static int configure_writer(gt_db *db, char *err, size_t errlen)
{
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

/* The folder part of path ("." when none). */
static void folder_of(const char *path, char *dir, size_t n)
{
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, n, ".");
    else if (slash == path) snprintf(dir, n, "/");
    else snprintf(dir, n, "%.*s", (int)(slash - path), path);
}

/* 0 when this user may write path and create files in its folder; else -1 and, when err, why in plain words. */
static int may_write(const char *path, int is_new, char *err, size_t errlen)
{
    char dir[4096];
    struct stat sb;
    folder_of(path, dir, sizeof dir);
    if (!is_new && access(path, W_OK) < 0) {
        if (!err) return -1;
        if (errno == EROFS) return snprintf(err, errlen, "cannot write database %s: it is on a read-only file system",
                                            path), -1;
        const struct passwd *pw = stat(path, &sb) == 0 ? getpwuid(sb.st_uid) : NULL;
        snprintf(err, errlen, "cannot write database %s: it belongs to %s (uid %d, mode %04o) and this user (uid %d) "
                 "may not write it. Readers (query, export, report, explain, merge as a source) still work; to "
                 "write, use a database of your own (--db PATH)",
                 path, pw ? pw->pw_name : "another user", (int)sb.st_uid, (unsigned)(sb.st_mode & 07777),
                 (int)getuid());
        return -1;
    }
    if (access(dir, W_OK | X_OK) < 0) {
        if (err) snprintf(err, errlen, "cannot write database %s: this user (uid %d) may not create files in %s, "
                          "and SQLite keeps its -wal and -shm files there while it writes", path, (int)getuid(), dir);
        return -1;
    }
    return 0;
}

/* Replace db->h (read-only, older schema) with a migrated private copy in memory: the file stays as it is. */
static int migrate_in_memory(gt_db *db, char *err, size_t errlen)
{
    sqlite3 *file = db->h;
    db->h = NULL;
    if (open_handle(db, ":memory:", SQLITE_OPEN_READWRITE, err, errlen) < 0) {
        sqlite3_close(file);
        return -1;
    }
    sqlite3_backup *b = sqlite3_backup_init(db->h, "main", file, "main");
    int rc = b ? (sqlite3_backup_step(b, -1), sqlite3_backup_finish(b)) : SQLITE_ERROR;
    sqlite3_close(file);
    if (rc != SQLITE_OK) return snprintf(err, errlen, "cannot read %s into memory to migrate it", db->path), -1;
    return migrate(db, err, errlen);
}

/* GT_DB_READ: a read-only connection that creates nothing beside the file (see dbi_ro_uri). */
static int open_read(gt_db *db, int *version, char *err, size_t errlen)
{
    int is_new;
    char uri[8400];
    if (dbi_check_file(db->path, 0, &is_new, err, errlen) < 0) return -1;
    dbi_ro_uri(db->path, uri, sizeof uri);
    if (open_handle(db, uri, SQLITE_OPEN_READONLY, err, errlen) < 0 ||
        dbi_check_version(db->h, db->path, version, err, errlen) < 0)
        return -1;
    return *version < GT_DB_SCHEMA_VERSION ? migrate_in_memory(db, err, errlen) : 0;
}

/* GT_DB_CREATE and GT_DB_WRITE: read-write, WAL, migrated in place. */
static int open_write(gt_db *db, int create, int *is_new, char *err, size_t errlen)
{
    char name[4200]; /* URI names are on (merge attaches read-only); keep a plain path from reading as one */
    int version;
    if (dbi_check_file(db->path, create, is_new, err, errlen) < 0) return -1;
    if (may_write(db->path, *is_new, err, errlen) < 0) return -1;
    snprintf(name, sizeof name, "%s%s", strncmp(db->path, "file:", 5) ? "" : "./", db->path);
    if (open_handle(db, name, SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0), err, errlen) < 0) {
        if (*is_new) snprintf(err + strlen(err), errlen - strlen(err), " (is its directory writable?)");
        return -1;
    }
    return dbi_check_version(db->h, db->path, &version, err, errlen) < 0 || configure_writer(db, err, errlen) < 0 ||
                   migrate(db, err, errlen) < 0
               ? -1
               : 0;
}

/* GT_DB_READ_CACHE: read-write without migration or a journal-mode change when this user may write the file and
 * its folder and the schema is current; otherwise exactly GT_DB_READ. */
static int open_read_cache(gt_db *db, char *err, size_t errlen)
{
    int version;
    if (open_read(db, &version, err, errlen) < 0) return -1;
    if (version != GT_DB_SCHEMA_VERSION || may_write(db->path, 0, NULL, 0) < 0) return 0;
    char name[4200];
    sqlite3_close(db->h);
    db->h = NULL;
    snprintf(name, sizeof name, "%s%s", strncmp(db->path, "file:", 5) ? "" : "./", db->path);
    if (open_handle(db, name, SQLITE_OPEN_READWRITE, err, errlen) < 0) return -1;
    return dbi_run(db, err, errlen, "PRAGMA foreign_keys = ON", "");
}

int gt_db_open(const char *path, int mode, gt_db **out, char *err, size_t errlen)
{
    int is_new = 0, version, rc;
    *out = NULL;
    if (!path || !*path || strlen(path) >= sizeof((gt_db *)0)->path) return snprintf(err, errlen, "bad database path"), -1;
    if (mode < GT_DB_READ_CACHE || mode > GT_DB_READ) return snprintf(err, errlen, "internal: bad open mode %d", mode), -1;
    int mem = !strcmp(path, ":memory:"); /* the loader imports JSON into one */
    if (mem && mode != GT_DB_CREATE) return snprintf(err, errlen, "an in-memory database must be created"), -1;
    gt_db *db = calloc(1, sizeof *db);
    if (!db) return snprintf(err, errlen, "out of memory"), -1;
    snprintf(db->path, sizeof db->path, "%s", path);
    if (mem) rc = open_handle(db, path, SQLITE_OPEN_READWRITE, err, errlen) || configure_writer(db, err, errlen) ||
                  migrate(db, err, errlen);
    else if (mode == GT_DB_READ) rc = open_read(db, &version, err, errlen);
    else if (mode == GT_DB_READ_CACHE) rc = open_read_cache(db, err, errlen);
    else rc = open_write(db, mode == GT_DB_CREATE, &is_new, err, errlen);
    db->created = is_new;
    if (rc == 0) return *out = db, 0;
    gt_db_close(db);
    if (is_new) unlink(path);
    if (!strncmp(err, "no database at", 14) && mode != GT_DB_CREATE)
        snprintf(err + strlen(err), errlen - strlen(err), " (run `gemmtune tune` first, or pass --db PATH)");
    return -1;
}

void gt_db_close(gt_db *db)
{
    if (!db) return;
    sqlite3_close_v2(db->h);
    free(db);
}

void gt_db_discard(gt_db *db)
{
    static const char *const ext[] = {"", "-wal", "-shm", "-journal"};
    char path[4200];
    if (!db) return;
    const int created = db->created;
    snprintf(path, sizeof path, "%s", db->path);
    gt_db_close(db);
    for (int i = 0; created && i < 4; ++i) {
        char p[4300];
        snprintf(p, sizeof p, "%s%s", path, ext[i]);
        unlink(p);
    }
}

const char *gt_db_path(const gt_db *db) { return db->path; }

int gt_db_check_writable(const char *path, char *err, size_t errlen)
{
    struct stat sb;
    if (stat(path, &sb) < 0) return 0; /* created later, with its folders; failures are said then */
    return may_write(path, 0, err, errlen);
}

int gt_db_probe(const char *path, int *version, char *err, size_t errlen)
{
    int is_new;
    char uri[8400];
    sqlite3 *h = NULL;
    if (dbi_check_file(path, 0, &is_new, err, errlen) < 0) return -1;
    dbi_ro_uri(path, uri, sizeof uri);
    if (sqlite3_open_v2(uri, &h, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot open %s: %s", path, h ? sqlite3_errmsg(h) : "out of memory");
        sqlite3_close(h);
        return -1;
    }
    int rc = dbi_check_version(h, path, version, err, errlen);
    sqlite3_close(h);
    return rc;
}
