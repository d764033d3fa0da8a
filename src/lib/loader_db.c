/* gemmtune_create: winners from a gemmtune database or an exported JSON file (imported into an in-memory
 * database), and cubins through the database's cache shared with the tuner. Thin layer over db/db.h and
 * src/lib/cubin.h; tests/test_loader.c (missing/bad sources), tests/test_loader_gpu.c (cache hits). */
#include "abi.h"
#include "cubin.h"
#include "files.h"
#include "loader.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    gt_winner_set *set;
    int cap, oom;
} collect_ctx;

static int collect(const gt_winner *w, void *vctx)
{
    collect_ctx *c = vctx;
    if (c->set->n == c->cap) {
        int cap = c->cap ? c->cap * 2 : 64;
        gt_winner *r = realloc(c->set->rows, (size_t)cap * sizeof *r);
        if (!r) return c->oom = 1;
        c->set->rows = r;
        c->cap = cap;
    }
    c->set->rows[c->set->n++] = *w;
    return 0;
}

/* Of two winners of one GPU model and shape (one per math class), keep the faster, or the one not stale (which is
 * served, where the stale one is not). The walk orders rows by model, layout and shape, so a shape's classes are
 * neighbours. */
static void keep_fastest(gt_winner_set *s)
{
    int n = 0;
    for (int i = 0; i < s->n; ++i) {
        gt_winner *last = n ? &s->rows[n - 1] : NULL;
        const gt_winner *w = &s->rows[i];
        gt_gpu_model a = last ? gt_winner_model(last) : (gt_gpu_model){0}, b = gt_winner_model(w);
        if (last && gt_gpu_model_equal(&a, &b) && gt_shape_equal(&last->shape, &w->shape)) {
            if (last->stale > w->stale || (last->stale == w->stale && w->median_ms < last->median_ms)) *last = *w;
            continue;
        }
        s->rows[n++] = *w;
    }
    s->n = n;
}

/* gemmtune_math is GEMMTUNE_MATH_FP32 + a class's row in GT_MATH_CLASSES: the constants gemmtune.h names stay in
 * step with the rows; a class added since needs no edit here (a caller names it through $GEMMTUNE_MATH). */
_Static_assert(GEMMTUNE_MATH_FP32 - GEMMTUNE_MATH_FP32 == GT_MATH_FP32 &&
                   GEMMTUNE_MATH_TF32X3 - GEMMTUNE_MATH_FP32 == GT_MATH_TF32X3,
               "gemmtune_math names gt_math's classes in their order, from GEMMTUNE_MATH_FP32");

gt_math gt_loader_math_class(gemmtune_math math) { return (gt_math)(math - GEMMTUNE_MATH_FP32); }

gemmtune_math gt_loader_math_of_class(gt_math c) { return (gemmtune_math)(GEMMTUNE_MATH_FP32 + c); }

int gt_loader_set_from_db(gt_db *db, gemmtune_math math, gt_winner_set *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    collect_ctx c = {out, 0, 0};
    const gt_winner_filter f = {.math = GT_MATH_BIT(GT_MATH_FP32) | GT_MATH_BIT(gt_loader_math_class(math))};
    if (gt_db_winners(db, &f, collect, &c, err, errlen)) goto fail;
    if (c.oom) {
        snprintf(err, errlen, "out of memory reading winners");
        goto fail;
    }
    keep_fastest(out);
    return 0;
fail:
    gt_loader_set_free(out);
    return -1;
}

static gemmtune_status open_json(const char *path, gt_db **db, char *err, size_t errlen)
{
    char msg[512];
    char *text = gt_file_read(path, GT_FILE_MAX_JSON, NULL, err, errlen); /* a regular file: never a FIFO's wait */
    if (!text) return GEMMTUNE_STATUS_JSON_ERROR;
    int imported = 0;
    if (gt_db_open(":memory:", 1, db, msg, sizeof msg)) {
        snprintf(err, errlen, "in-memory database for %s: %s", path, msg);
        free(text);
        return GEMMTUNE_STATUS_DB_ERROR;
    }
    int rc = gt_db_import_json(*db, text, path, &imported, msg, sizeof msg);
    free(text);
    if (rc) {
        snprintf(err, errlen, "%s: %s", path, msg);
        gt_db_close(*db);
        *db = NULL;
        return GEMMTUNE_STATUS_JSON_ERROR;
    }
    return GEMMTUNE_SUCCESS;
}

gemmtune_status gt_loader_open_source(const gemmtune_options *opt, gt_db **db, char *err, size_t errlen)
{
    char path[4096], msg[512];
    struct stat st;
    *db = NULL;
    if (opt && opt->json_path) return open_json(opt->json_path, db, err, errlen);
    /* A database the user named must exist; the default one may not yet (nothing tuned: fallback only). */
    const char *env = getenv("GEMMTUNE_DB");
    int named = (opt && opt->db_path) || (env && *env);
    if (opt && opt->db_path) snprintf(path, sizeof path, "%s", opt->db_path);
    else if (gt_db_default_path(path, sizeof path, msg, sizeof msg)) {
        snprintf(err, errlen, "default database path: %s", msg);
        return GEMMTUNE_STATUS_DB_ERROR;
    }
    if (stat(path, &st)) {
        if (!named && errno == ENOENT) return GEMMTUNE_SUCCESS;
        snprintf(err, errlen, "database %s: %s", path, strerror(errno));
        return GEMMTUNE_STATUS_DB_ERROR;
    }
    if (gt_db_open(path, 0, db, msg, sizeof msg)) {
        snprintf(err, errlen, "database %s: %s", path, msg);
        *db = NULL;
        return GEMMTUNE_STATUS_DB_ERROR;
    }
    return GEMMTUNE_SUCCESS;
}

/* The cubin provider over this database's cache (shared with the tuner); ctx is the gt_db or NULL. */
static gemmtune_status db_obtain(void *ctx, const char *src, const char *arch, unsigned char **data, size_t *size,
                                 int *cached, char *err, size_t errlen)
{
    gt_cubin cb;
    int rc = gt_cubin_provide(ctx, src, arch, &cb, cached, err, errlen);
    *data = cb.data, *size = cb.size;
    cb.data = NULL;
    gt_cubin_free(&cb);
    return rc ? GEMMTUNE_STATUS_COMPILE_ERROR : GEMMTUNE_SUCCESS;
}

static void db_close(void *ctx) { gt_db_close(ctx); }

/* The math classes a handle of these options may be served: the option, else $GEMMTUNE_MATH (a gt_math name),
 * else FP32. */
static gemmtune_status math_of(const gemmtune_options *opt, gemmtune_math *out, char *err, size_t errlen)
{
    const char *e = getenv("GEMMTUNE_MATH");
    gt_math m = GT_MATH_FP32;
    if (opt && opt->math != GEMMTUNE_MATH_ENV) {
        *out = opt->math;
        if ((unsigned)gt_loader_math_class(opt->math) < GT_MATH_COUNT) return GEMMTUNE_SUCCESS;
        snprintf(err, errlen, "options.math = %d is not a gemmtune_math", (int)opt->math);
        return GEMMTUNE_STATUS_INVALID_VALUE;
    }
    if (e && *e && gt_math_parse(e, &m)) {
        char names[96] = "";
        for (int i = 0; i < GT_MATH_COUNT; ++i)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                     !i ? "" : i == GT_MATH_COUNT - 1 ? " or " : ", ", gt_math_name((gt_math)i));
        snprintf(err, errlen, "GEMMTUNE_MATH='%.64s': want %s", e, names);
        return GEMMTUNE_STATUS_INVALID_VALUE;
    }
    *out = gt_loader_math_of_class(m);
    return GEMMTUNE_SUCCESS;
}

gemmtune_status gt_loader_winners(const gemmtune_options *opt, gt_winner_set *set, gt_db **keep, char *err,
                                  size_t errlen)
{
    char msg[1024];
    gt_db *db = NULL;
    gemmtune_math math;
    memset(set, 0, sizeof *set);
    if (keep) *keep = NULL;
    gemmtune_status st = math_of(opt, &math, err, errlen);
    if (!st) st = gt_loader_open_source(opt, &db, err, errlen);
    if (st) return st;
    if (db && gt_loader_set_from_db(db, math, set, msg, sizeof msg)) {
        gt_db_close(db);
        snprintf(err, errlen, "reading winners: %s", msg);
        return opt && opt->json_path ? GEMMTUNE_STATUS_JSON_ERROR : GEMMTUNE_STATUS_DB_ERROR;
    }
    if (keep) *keep = db;
    else if (db) gt_db_close(db);
    return GEMMTUNE_SUCCESS;
}

/* gemmtune_create of either options layout, once they are the full struct. */
static gemmtune_status create(gemmtune_handle *handle, const gemmtune_options *opt)
{
    char err[1024];
    gt_db *db = NULL;
    gt_winner_set set;
    gemmtune_status st = gt_loader_winners(opt, &set, &db, err, sizeof err);
    if (st) return gt_loader_fail(st, "%s", err);
    return gt_loader_create(handle, &set, db_obtain, db, db ? db_close : NULL, opt);
}

gemmtune_status GT_ABI_SIZED(gemmtune_create)(gemmtune_handle *handle, const gemmtune_options *opt)
{
    char err[512];
    gemmtune_options full;
    if (!handle) return gt_loader_fail(GEMMTUNE_STATUS_INVALID_VALUE, "gemmtune_create: handle is NULL");
    *handle = NULL;
    gemmtune_status st = gt_options_resolve(opt, &full, err, sizeof err);
    return st ? gt_loader_fail(st, "gemmtune_create: %s", err) : create(handle, &full);
}

gemmtune_status gt_legacy_create(gemmtune_handle *handle, const gt_options_v02 *opt)
{
    gemmtune_options full;
    if (!handle) return gt_loader_fail(GEMMTUNE_STATUS_INVALID_VALUE, "gemmtune_create: handle is NULL");
    *handle = NULL;
    gt_options_from_v02(opt, &full);
    return create(handle, &full);
}

GT_ABI_VERSIONS(gemmtune_create, gt_legacy_create)
