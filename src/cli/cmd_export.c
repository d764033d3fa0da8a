/* gemmtune export: the winners as versioned JSON (docs/EXPORT.md) or as a C header with a static table, optionally
 * embedding each winner's cubin (from the db's cache, else compiled with NVRTC). Tested by tests/test_cli_db.c. */
#include "cli.h"
#include "cli_db.h"
#include "compile.h"
#include "db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gemmtune export [--format json|header] [-o FILE] [--with-cubin] [--gpu NAME] [--shape S]\n"
            "                       [--layout L] [--family F] [--db PATH]\n\n"
            "Writes the stored winners (one per GPU model and shape) to FILE, or to standard output.\n"
            "  --format json    versioned JSON for `gemmtune import` and the loader (default; see docs/EXPORT.md)\n"
            "  --format header  a C header: static gemmtune_winner_row table + gemmtune_winner_find(); no SQLite needed\n"
            "  --with-cubin     (header) embed each winner's compiled kernel for its GPU's sm_<cc>, from the\n"
            "                   database's cubin cache, else compiled now with NVRTC (no GPU needed)\n"
            "  --gpu, --shape, --layout, --family   filters, as for `gemmtune query`\n");
}

/* The cubin of w for arch: the cached one, else rendered and compiled here; the rendered source must still hash
 * to the winner's source hash, or the kernel would not be the one that was timed. */
static int winner_cubin(const gt_winner *w, const char *arch, unsigned char **data, size_t *size, void *ctx, char *err,
                        size_t errlen)
{
    gt_db *db = ctx;
    int regs, spill, found = 0;
    if (gt_db_cubin_get(db, w->source_hash, arch, gt_nvrtc_version(), gt_nvrtc_options(), data, size, &regs, &spill,
                        &found, err, errlen) < 0)
        return -1;
    if (found) return 0;
    const gt_family *f = gt_family_find(w->family);
    gt_params p;
    char hash[17];
    if (!f) return snprintf(err, errlen, "winner family '%s' is unknown to this gemmtune", w->family), -1;
    if (gt_params_parse(f, w->params, &p, err, errlen) < 0) return -1;
    char *src = gt_render(f, &p, w->shape.ta, w->shape.tb, err, errlen);
    if (!src) return -1;
    gt_hash_hex(src, strlen(src), hash);
    if (strcmp(hash, w->source_hash)) {
        snprintf(err, errlen, "%s %s renders to source %s, not the tuned %s (the template changed since the sweep): "
                 "re-tune, or export without --with-cubin", w->family, w->params, hash, w->source_hash);
        free(src);
        return -1;
    }
    gt_cubin c;
    int rc = gt_nvrtc_compile(src, arch, &c, err, errlen);
    free(src);
    if (rc == 1) snprintf(err, errlen, "%s %s does not compile for %s: %.300s", w->family, w->params, arch,
                          c.log ? c.log : "");
    if (rc == 0) *data = c.data, *size = c.size, c.data = NULL;
    gt_cubin_free(&c);
    return rc == 0 ? 0 : -1;
}

typedef struct {
    gt_cli_filter cf;
    const char *db, *format, *out;
    int with_cubin;
} xopts;

static int parse(int argc, char **argv, xopts *o, char *err, size_t errlen)
{
    const char *v;
    int r;
    memset(o, 0, sizeof *o);
    o->format = "json";
    for (int i = 1; i < argc; ++i) {
        if ((r = gt_cli_filter_opt(&o->cf, argc, argv, &i, err, errlen)) != 0) {
            if (r < 0) return -1;
        } else if ((r = gt_cli_opt(argc, argv, &i, "--db", &v, err, errlen)) != 0) {
            if (r < 0) return -1;
            o->db = v;
        } else if ((r = gt_cli_opt(argc, argv, &i, "--format", &v, err, errlen)) != 0) {
            if (r < 0) return -1;
            o->format = v;
        } else if ((r = gt_cli_opt(argc, argv, &i, "-o", &v, err, errlen)) != 0 ||
                   (r = gt_cli_opt(argc, argv, &i, "--output", &v, err, errlen)) != 0) {
            if (r < 0) return -1;
            o->out = v;
        } else if (!strcmp(argv[i], "--with-cubin")) o->with_cubin = 1;
        else return snprintf(err, errlen, "unknown option '%s'", argv[i]), -1;
    }
    if (strcmp(o->format, "json") && strcmp(o->format, "header"))
        return snprintf(err, errlen, "unknown --format '%s': want json or header", o->format), -1;
    if (o->with_cubin && strcmp(o->format, "header"))
        return snprintf(err, errlen, "--with-cubin needs --format header"), -1;
    return gt_cli_filter_done(&o->cf, err, errlen);
}

int gt_cmd_export(int argc, char **argv)
{
    char err[1024], path[4096], *text = NULL;
    xopts o;
    gt_db *db;
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) return usage(stdout), 0;
    if (parse(argc, argv, &o, err, sizeof err) < 0) {
        fprintf(stderr, "gemmtune export: %s\n", err);
        return 2;
    }
    if (gt_cli_db_path(o.db, path, sizeof path, err, sizeof err) < 0 || gt_db_open(path, GT_DB_READ, &db, err, sizeof err) < 0) {
        fprintf(stderr, "gemmtune export: %s\n", err);
        return 1;
    }
    int rc = !strcmp(o.format, "json")
                 ? gt_db_export_json(db, &o.cf.f, &text, err, sizeof err)
                 : gt_db_export_header(db, &o.cf.f, o.with_cubin ? winner_cubin : NULL, db, &text, err, sizeof err);
    gt_db_close(db);
    if (rc == 0 && !strcmp(o.format, "json")) { /* end the file with a newline, as text files do */
        char *nl = realloc(text, strlen(text) + 2);
        if (nl) strcat(text = nl, "\n");
    }
    if (rc == 0 && o.out) rc = gt_cli_write_file(o.out, text, strlen(text), err, sizeof err);
    else if (rc == 0 && fputs(text, stdout) < 0) rc = -1, snprintf(err, sizeof err, "cannot write to standard output");
    free(text);
    if (rc < 0) {
        fprintf(stderr, "gemmtune export: %s\n", err);
        return 1;
    }
    return 0;
}
