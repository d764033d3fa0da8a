/* gemmtune export: the winners as versioned JSON (docs/EXPORT.md) or as a C header with a static table, optionally
 * embedding each winner's cubin (from the db's cache, else compiled with NVRTC). Tested by tests/test_cli_db.c. */
#include "cli.h"
#include "cli_db.h"
#include "cubin.h"
#include "db.h"
#include "files.h"
#include "options.h"
#include "term.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: gemmtune export [options]\n\n"
                 "Writes the stored winners (one per GPU model and shape) to standard output or -o FILE, as versioned\n"
                 "JSON (docs/EXPORT.md) or as a C header. Needs no GPU; only reads the database.\n\n");
    gt_cli_usage(out, GT_V_EXPORT);
}

/* The cubin of w for arch: the one cached under its source hash, else from the provider (NVRTC); the rendered source
 * must still hash to the winner's source hash, or the kernel would not be the one that was timed. */
static int winner_cubin(const gt_winner *w, const char *arch, unsigned char **data, size_t *size, void *ctx, char *err,
                        size_t errlen)
{
    const gt_family *f = gt_family_find(w->family);
    gt_params p;
    gt_cubin c;
    char hash[17];
    int cached = 0;
    if (gt_cubin_cache_get(ctx, w->source_hash, arch, &c, &cached, err, errlen) < 0) return -1;
    if (cached) return *data = c.data, *size = c.size, 0;
    if (!f) return snprintf(err, errlen, "winner family '%s' is unknown to this gemmtune", w->family), -1;
    if (gt_params_parse(f, w->params, &p, err, errlen) < 0) return -1;
    char *src;
    if (gt_kernel_id(f, &p, w->shape.ta, w->shape.tb, gt_shape_batch(&w->shape) > 1, hash, &src, err, errlen)) return -1;
    if (strcmp(hash, w->source_hash)) {
        snprintf(err, errlen, "%s %s renders to source %s, not the tuned %s (its template or a header it includes "
                 "changed since the sweep): re-tune, or export without --with-cubin", w->family, w->params, hash,
                 w->source_hash);
        free(src);
        return -1;
    }
    int rc = gt_cubin_provide(ctx, src, arch, &c, &cached, err, errlen);
    free(src);
    if (rc == 0) *data = c.data, *size = c.size, c.data = NULL;
    gt_cubin_free(&c);
    return rc == 0 ? 0 : -1;
}

/* The JSON text with the C1 controls and bidirectional overrides that cJSON leaves raw \u-escaped too (the same
 * value; src/cli/term.h), so the file can go to a terminal; ended with a newline, as text files are. 0, or 1. */
static int printable_json(char **text)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    int bad = !f || gt_term_json(f, *text) < 0 || fputc('\n', f) == EOF;
    if (f && fclose(f)) bad = 1;
    if (bad) return free(buf), 1;
    free(*text);
    *text = buf;
    return 0;
}

static int count_stale(const gt_winner *w, void *ctx)
{
    *(int *)ctx += w->stale;
    return 0;
}

int gt_cmd_export(int argc, char **argv)
{
    char err[1024], path[4096], *text = NULL;
    gt_cli_args a;
    gt_cli_filter cf;
    gt_db *db = NULL;
    gt_cli_args_init(&a);
    int rc = gt_cli_parse(GT_V_EXPORT, argc, argv, &a, err, sizeof err);
    if (rc == 1) return gt_cli_args_free(&a), usage(stdout), 0;
    if (!a.format) a.format = "json";
    if (rc == 0 && a.npos) rc = -1, snprintf(err, sizeof err, "unexpected argument '%s'", a.pos[0]);
    if (rc == 0 && a.with_cubin && strcmp(a.format, "header")) rc = -1, snprintf(err, sizeof err, "--with-cubin needs --format header");
    if (rc < 0) {
        gt_term_printf(stderr, "gemmtune export: %s\n", err);
        return gt_cli_args_free(&a), 2;
    }
    int stale = 0;
    rc = gt_cli_open_reader(&a, &cf, path, sizeof path, &db, err, sizeof err);
    if (rc == 0)
        rc = (!strcmp(a.format, "json") ? gt_db_export_json(db, &cf.f, &text, err, sizeof err)
                                        : gt_db_export_header(db, &cf.f, a.with_cubin ? winner_cubin : NULL, db, &text,
                                                              err, sizeof err)) < 0;
    gt_winner_filter all = cf.f;
    if (!all.math) all.math = strcmp(a.format, "json") ? GT_MATH_BIT(GT_MATH_FP32) : GT_MATH_ALL; /* what each format holds */
    if (rc == 0) rc = gt_db_winners(db, &all, count_stale, &stale, err, sizeof err) < 0;
    gt_db_close(db);
    if (rc == 0 && !strcmp(a.format, "json") && (rc = printable_json(&text)))
        snprintf(err, sizeof err, "out of memory");
    if (rc == 0 && a.out) rc = gt_file_write(a.out, text, strlen(text), err, sizeof err) < 0;
    else if (rc == 0 && fputs(text, stdout) < 0) rc = 1, snprintf(err, sizeof err, "cannot write to standard output");
    free(text);
    gt_cli_args_free(&a);
    if (rc == 0 && stale)
        fprintf(stderr, "gemmtune export: %d winner%s stale: the kernel's source changed since it was tuned, so the "
                "library never serves it (%s); re-tune\n", stale, stale > 1 ? "s are" : " is",
                strcmp(a.format, "json") ? "left out of the header" : "\"stale\": true in the JSON");
    if (rc) gt_term_printf(stderr, "gemmtune export: %s\n", err);
    return rc;
}
