/* Winners from a table compiled into the program (`gemmtune export --header`), checked row by row. No SQLite,
 * no NVRTC here, so a program built from an exported header needs neither. Tested by tests/test_loader.c. */
#include "loader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gt_loader_set_free(gt_winner_set *s)
{
    if (!s) return;
    free(s->rows);
    free(s->cubin);
    free(s->cubin_size);
    free(s->cubin_arch);
    memset(s, 0, sizeof *s);
}

static int table_row(const gemmtune_winner_row *r, int i, gt_winner *w, char *err, size_t errlen)
{
    char why[256];
    gt_params p;
    memset(w, 0, sizeof *w);
    const gt_family *f = r->family ? gt_family_find(r->family) : NULL;
    if (!r->gpu_name || !r->layout || !r->params || !f) {
        snprintf(err, errlen, "table row %d: %s", i, !f ? "unknown or missing family" : "missing gpu_name, layout or params");
        return -1;
    }
    if (gt_layout_parse(r->layout, &w->shape.ta, &w->shape.tb) || r->m < 1 || r->n < 1 || r->k < 1 || r->batch < 0) {
        snprintf(err, errlen, "table row %d: bad shape %dx%dx%d batch %d or layout '%s'", i, r->m, r->n, r->k,
                 r->batch, r->layout);
        return -1;
    }
    if (gt_params_parse(f, r->params, &p, why, sizeof why)) {
        snprintf(err, errlen, "table row %d: %s", i, why);
        return -1;
    }
    if (r->cubin && (!r->cubin_size || !r->cubin_arch)) {
        snprintf(err, errlen, "table row %d: cubin without size or arch", i);
        return -1;
    }
    snprintf(w->gpu_name, sizeof w->gpu_name, "%s", r->gpu_name);
    snprintf(w->family, sizeof w->family, "%s", r->family);
    snprintf(w->params, sizeof w->params, "%s", r->params);
    w->cc_major = r->cc_major;
    w->cc_minor = r->cc_minor;
    w->sm_count = r->sm_count;
    w->shape.m = r->m, w->shape.n = r->n, w->shape.k = r->k, w->shape.batch = r->batch > 1 ? r->batch : 1;
    w->tflops = r->tflops;
    w->ratio = r->ratio_vs_cublas;
    w->median_ms = w->cublas_ms = w->cublas_tflops = w->spread_pct = -1;
    return 0;
}

int gt_loader_set_from_table(const gemmtune_winner_row *rows, int nrows, gt_winner_set *out, char *err,
                             size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (nrows < 0 || (nrows > 0 && !rows)) {
        snprintf(err, errlen, "table of %d rows at %p", nrows, (const void *)rows);
        return -1;
    }
    size_t n = nrows ? (size_t)nrows : 1;
    out->rows = calloc(n, sizeof *out->rows);
    out->cubin = calloc(n, sizeof *out->cubin);
    out->cubin_size = calloc(n, sizeof *out->cubin_size);
    out->cubin_arch = calloc(n, sizeof *out->cubin_arch);
    if (!out->rows || !out->cubin || !out->cubin_size || !out->cubin_arch) {
        snprintf(err, errlen, "out of memory for %d table rows", nrows);
        goto fail;
    }
    for (int i = 0; i < nrows; ++i) {
        if (table_row(&rows[i], i, &out->rows[i], err, errlen)) goto fail;
        out->cubin[i] = rows[i].cubin;
        out->cubin_size[i] = rows[i].cubin_size;
        out->cubin_arch[i] = rows[i].cubin_arch;
    }
    out->n = nrows;
    return 0;
fail:
    gt_loader_set_free(out);
    return -1;
}
