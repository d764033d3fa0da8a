/* The tests' fixture builder (see tests/fixture.h): databases built through the db API, the version-1 file, file
 * and SQL helpers. Used by the db, export, CLI, report and loader tests. */
#include "fixture.h"
#include "harness.h"

#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

gt_gpu_info gt_fixture_gpu(int model, int unit)
{
    static const struct {
        const char *name;
        int ccM, ccm, sms;
    } models[] = {{"NVIDIA H200", 9, 0, 132},           {"NVIDIA H100 80GB HBM3", 9, 0, 132},
                  {"NVIDIA A100-SXM4-80GB", 8, 0, 108}, {"NVIDIA B200", 10, 0, 148},
                  {"NVIDIA RTX PRO 6000 Blackwell Server Edition", 12, 0, 188}};
    gt_gpu_info g;
    memset(&g, 0, sizeof g);
    snprintf(g.name, sizeof g.name, "%s", models[model].name);
    g.cc_major = models[model].ccM;
    g.cc_minor = models[model].ccm;
    g.sm_count = models[model].sms;
    snprintf(g.uuid, sizeof g.uuid, "GPU-%08x-0000-4000-8000-%012d", 0x1000 + model, unit);
    g.mem_bytes = 80LL << 30;
    g.l2_bytes = 50 << 20;
    g.driver_version = 13000;
    g.cuda_version = 13000;
    g.nvrtc_version = 13000;
    g.sm_clock_mhz = 1980 - 10 * unit;
    return g;
}

static const gt_shape shapes[] = {{1024, 1024, 1024, 0, 0}, {2048, 2048, 2048, 0, 0}, {4096, 4096, 1024, 0, 0},
                                  {2048, 2048, 2048, 1, 0}};
static const char *const params[] = {"BM=64,BN=64,BK=8,TM=8,TN=8", "BM=128,BN=128,BK=8,TM=8,TN=8",
                                     "BM=128,BN=64,BK=16,TM=8,TN=4", "BM=256,BN=128,BK=8,TM=16,TN=8"};

/* The kernel's real id (gt_kernel_id), so readers do not take the fixture's winners for stale ones. */
static void source_hash(const char *family, const char *ptext, const gt_shape *s, char hash[17])
{
    char err[256];
    const gt_family *f = gt_family_find(family);
    gt_params p;
    if (!f || gt_params_parse(f, ptext, &p, err, sizeof err) || gt_kernel_id(f, &p, s->ta, s->tb, 0, hash, NULL, err,
                                                                             sizeof err))
        gt_hash_hex("", 0, hash);
}

static int add_shape(gt_db *db, long long sweep, int si, double speed, char *err)
{
    const gt_shape *s = &shapes[si];
    double flop = 2.0 * s->m * s->n * s->k, best = 1e30;
    int besti = 0;
    for (int i = 0; i < 4; ++i) {
        char h[17];
        source_hash("tile2d", params[i], s, h);
        /* a different candidate wins each shape; the last one fails on all */
        double ms = (flop / 30e9) * (1.0 + 0.1 * ((i + si) % 3)) * speed;
        gt_trial t = {"tile2d", params[i], h, i < 3 ? GT_ST_OK : GT_ST_RESOURCES, i < 3 ? NULL : "too many registers",
                      i < 3 ? ms : -1, i < 3 ? ms * 0.98 : -1, i < 3 ? ms * 1.05 : -1, i < 3 ? flop / (ms * 1e9) : -1,
                      i < 3 ? 1e-6 : -1, 128, 0, 0.5, i < 3 ? 20 : -1};
        if (gt_db_add_trial(db, sweep, s, &t, err, 256) < 0) return -1;
        if (i < 3 && ms < best) best = ms, besti = i;
    }
    char h[17];
    source_hash("tile2d", params[besti], s, h);
    /* cuBLAS between 34 and 46 TFLOPS, so ratios differ per shape */
    if (gt_db_set_baseline(db, sweep, s, (flop / ((34 + 4 * si) * 1e9)) * speed, err, 256) < 0) return -1;
    return gt_db_set_winner(db, sweep, s, "tile2d", params[besti], h, best, 1.5, err, 256);
}

int gt_fixture_db(const char *path, int model, int unit, double speed)
{
    char err[256];
    gt_db *db;
    long long sweep;
    gt_gpu_info g = gt_fixture_gpu(model, unit);
    if (gt_db_open(path, 1, &db, err, sizeof err) < 0) goto fail;
    if (gt_db_begin_sweep(db, &g, "gemmtune --sizes fixture", &sweep, err, sizeof err) < 0) goto fail_db;
    for (int si = 0; si < 4; ++si)
        if (add_shape(db, sweep, si, speed, err) < 0) goto fail_db;
    gt_db_close(db);
    return 0;
fail_db:
    gt_db_close(db);
fail:
    printf("    fixture %s: %s\n", path, err);
    return -1;
}

int gt_fixture_winner(const char *path, const gt_gpu_info *g, const gt_shape *s, const char *family,
                      const char *ptext, const char *hash, double ms)
{
    char err[256], h[17];
    gt_db *db;
    long long sweep;
    if (!hash) source_hash(family, ptext, s, h), hash = h;
    int rc = gt_db_open(path, 1, &db, err, sizeof err);
    if (rc == 0) {
        rc = gt_db_begin_sweep(db, g, "gemmtune --sizes fixture", &sweep, err, sizeof err);
        if (rc == 0) rc = gt_db_set_winner(db, sweep, s, family, ptext, hash, ms, 1.0, err, sizeof err);
        gt_db_close(db);
    }
    if (rc) printf("    fixture winner %s: %s\n", path, err);
    return rc ? -1 : 0;
}

int gt_fixture_v1_db(const char *path)
{
    sqlite3 *h;
    int rc = sqlite3_open(path, &h);
    if (rc == SQLITE_OK) rc = sqlite3_exec(h, gt_sql_text("schema.sql"), NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(h,
                          "INSERT INTO gpu_models VALUES (1, 'Old GPU', 8, 6, 84);"
                          "INSERT INTO gpus VALUES (1, 1, 'GPU-old', NULL, NULL);"
                          "INSERT INTO sweeps (id, gpu_id, command) VALUES (1, 1, 'gemmtune v0');"
                          "INSERT INTO shapes VALUES (1, 64, 64, 64, 'nt');"
                          "INSERT INTO candidates VALUES (1, 'tile2d', 'BM=64,BN=64,BK=8,TM=8,TN=8', '0123456789abcdef');"
                          "INSERT INTO trials (sweep_id, shape_id, candidate_id, status, median_ms) "
                          "VALUES (1, 1, 1, 'ok', 0.5);"
                          "INSERT INTO baselines VALUES (1, 1, 1, 0.25);"
                          "INSERT INTO winners VALUES (1, 1, 1, 1, 0.5, 2.0);"
                          "PRAGMA user_version = 1;",
                          NULL, NULL, NULL);
    sqlite3_close(h);
    return rc == SQLITE_OK ? 0 : -1;
}

long long gt_fixture_sql_int(const char *path, const char *sql)
{
    sqlite3 *h;
    sqlite3_stmt *st;
    long long v = LLONG_MIN;
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(h);
    return v;
}

unsigned char *gt_fixture_slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, len = 0, got;
    unsigned char *buf = malloc(cap + 1);
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0)
        if ((len += got) == cap) buf = realloc(buf, (cap *= 2) + 1);
    fclose(f);
    if (buf) buf[len] = 0;
    *n = len;
    return buf;
}

int gt_fixture_same_bytes(const char *a, const char *b)
{
    size_t na, nb;
    unsigned char *x = gt_fixture_slurp(a, &na), *y = gt_fixture_slurp(b, &nb);
    int same = x && y && na == nb && !memcmp(x, y, na);
    free(x);
    free(y);
    return same;
}

int gt_fixture_write(const char *path, const char *text, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t put = fwrite(text, 1, n, f);
    return fclose(f) == 0 && put == n ? 0 : -1;
}

int gt_fixture_copy(const char *from, const char *to)
{
    size_t n;
    unsigned char *b = gt_fixture_slurp(from, &n);
    int rc = b ? gt_fixture_write(to, (const char *)b, n) : -1;
    free(b);
    return rc;
}

void gt_fixture_rm(const char *path)
{
    static const char *const ext[] = {"", "-wal", "-shm", "-journal"};
    char p[4200];
    for (int i = 0; i < 4; ++i) {
        snprintf(p, sizeof p, "%s%s", path, ext[i]);
        unlink(p);
    }
}

/* Every row of every table, in a stable order, as text. */
char *gt_fixture_dump(const char *path)
{
    static const char *const tables[] = {"gpu_models", "gpus", "sweeps", "shapes", "candidates",
                                         "trials", "baselines", "winners", "cubins"};
    sqlite3 *h;
    size_t cap = 1 << 16, len = 0;
    char *out = calloc(1, cap);
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) return out;
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; ++t) {
        char sql[128];
        sqlite3_stmt *st;
        snprintf(sql, sizeof sql, "SELECT * FROM %s ORDER BY 1, 2, 3", tables[t]);
        if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) continue;
        while (sqlite3_step(st) == SQLITE_ROW) {
            for (int c = 0; c < sqlite3_column_count(st); ++c) {
                const char *v = (const char *)sqlite3_column_text(st, c);
                size_t need = len + (v ? strlen(v) : 4) + 64;
                if (need > cap) out = realloc(out, cap = need * 2);
                len += sprintf(out + len, "%s%s", c ? "|" : tables[t], v ? v : "NULL");
            }
            out[len++] = '\n', out[len] = 0;
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(h);
    return out;
}

int gt_fixture_damage_index(const char *path, const char *index)
{
    char q[200];
    snprintf(q, sizeof q, "SELECT rootpage FROM sqlite_master WHERE name = '%s'", index);
    const long long page = gt_fixture_sql_int(path, q), size = gt_fixture_sql_int(path, "PRAGMA page_size");
    FILE *f = page > 0 && size > 0 ? fopen(path, "r+b") : NULL;
    if (!f) return -1;
    unsigned char junk[64];
    memset(junk, 0xA5, sizeof junk);
    int rc = fseek(f, (long)((page - 1) * size + 12), SEEK_SET) == 0 && fwrite(junk, 1, sizeof junk, f) == sizeof junk;
    return fclose(f) == 0 && rc ? 0 : -1;
}

void gt_fixture_preload_env(char *buf, size_t n, const char *also)
{
    if (strstr(gt_build_dir(), "asan"))
        snprintf(buf, n, "ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0 LD_PRELOAD=\"$(cc -print-file-name=libasan.so)"
                 " %s/libgemmtune_cublas.so %s\"", gt_build_dir(), also);
    else snprintf(buf, n, "LD_PRELOAD=\"%s/libgemmtune_cublas.so %s\"", gt_build_dir(), also);
}

char *gt_fixture_text(const char *path)
{
    size_t n;
    return (char *)gt_fixture_slurp(path, &n);
}

typedef struct {
    const char *name;
    int with;
} space_with;

static int count_with(const gt_family *f, const gt_params *p, void *ctx)
{
    space_with *c = ctx;
    c->with += gt_param_get(f, p, c->name, 0) != 0;
    return 0;
}

int gt_fixture_space_with(const gt_family *f, const gt_limits *lim, const char *name, int *total)
{
    space_with c = {name, 0};
    const int n = gt_enumerate(f, lim, count_with, &c);
    if (total) *total = n;
    return c.with;
}
