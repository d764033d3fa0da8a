/* The regret table of `gemmtune report`: for each tuned shape, its own optimum against what the exported table
 * would serve it under the nearest-shape rule if the shape itself were missing (src/lib/nearest.c), and cuBLAS.
 * Tested by tests/test_report.c on a fixture database. */
#include "dbi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    gt_winner *v;
    int n, cap;
} wvec;

static int push(const gt_winner *w, void *ctx)
{
    wvec *a = ctx;
    if (a->n == a->cap) {
        gt_winner *p = realloc(a->v, (a->cap = a->cap ? 2 * a->cap : 64) * sizeof *p);
        if (!p) return 1;
        a->v = p;
    }
    a->v[a->n++] = *w;
    return 0;
}

static int same_model(const gt_winner *a, const gt_winner *b)
{
    return !strcmp(a->gpu_name, b->gpu_name) && a->cc_major == b->cc_major && a->cc_minor == b->cc_minor &&
           a->sm_count == b->sm_count;
}

/* accept(): another shape of the same GPU model, as the table would hold it without the shape asked for. */
static int other_shape_same_model(const gt_winner *row, void *ctx)
{
    const gt_winner *self = ctx;
    return same_model(row, self) && (row->shape.m != self->shape.m || row->shape.n != self->shape.n ||
                                     row->shape.k != self->shape.k);
}

static int fill_row(gt_db *db, const wvec *all, const gt_winner *self, gt_regret_row *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->self = *self;
    r->pick_ms = r->regret = -1;
    int i = gt_nearest_shape(all->v, all->n, &self->shape, other_shape_same_model, (void *)self, &r->distance);
    if (i < 0) return 0;
    r->has_pick = 1;
    r->picked = all->v[i];
    if (!strcmp(r->picked.family, self->family) && !strcmp(r->picked.params, self->params) &&
        !strcmp(r->picked.source_hash, self->source_hash))
        r->pick_ms = self->median_ms; /* the same kernel: its time here is the optimum itself */
    else {
        gt_gpu_info g;
        int found = 0;
        gt_status status;
        double ms = -1;
        memset(&g, 0, sizeof g);
        snprintf(g.name, sizeof g.name, "%s", self->gpu_name);
        g.cc_major = self->cc_major, g.cc_minor = self->cc_minor, g.sm_count = self->sm_count;
        if (gt_db_find_trial(db, &g, &self->shape, r->picked.family, r->picked.params, r->picked.source_hash, &found,
                             &status, &ms, err, errlen) < 0)
            return -1;
        if (found && status == GT_ST_OK && ms > 0) r->pick_ms = ms;
    }
    if (r->pick_ms > 0) r->regret = r->pick_ms / self->median_ms;
    return 0;
}

int gt_db_regret(gt_db *db, const gt_winner_filter *filter, gt_regret_fn fn, void *ctx, char *err, size_t errlen)
{
    wvec all = {0}, sel = {0};
    int rc = -1;
    if (gt_db_winners(db, NULL, push, &all, err, errlen) < 0 || gt_db_winners(db, filter, push, &sel, err, errlen) < 0)
        goto out;
    for (int i = 0; i < sel.n; ++i) {
        gt_regret_row r;
        if (fill_row(db, &all, &sel.v[i], &r, err, errlen) < 0) goto out;
        if (fn(&r, ctx)) break;
    }
    rc = 0;
out:
    free(all.v);
    free(sel.v);
    return rc;
}
