/* The regret table of `gemmtune report` (src/cli/regret.h): the loader's selection run for each tuned shape over
 * every other winner of its GPU model, the served kernel's stored time on that shape, and the ratio to the optimum.
 * Tested by tests/test_report.c. */
#include "regret.h"

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

/* The winners of self's GPU model but those of self's own shape, into scratch: what the library would hold if the
 * shape were not tuned. Returns their number. */
static int others(const gt_winner_set *set, const gt_winner *self, gt_winner *scratch)
{
    int n = 0;
    for (int i = 0; i < set->n; ++i)
        if (gt_winner_same_model(&set->rows[i], self) && !gt_shape_equal(&set->rows[i].shape, &self->shape))
            scratch[n++] = set->rows[i];
    return n;
}

/* The newest ok time of kernel w on self's shape and GPU model; -1 when none is stored. */
static int time_here(gt_db *db, const gt_winner *self, const gt_winner *w, double *ms, char *err, size_t errlen)
{
    gt_gpu_info g;
    gt_status status;
    int found = 0;
    *ms = -1;
    if (!strcmp(w->family, self->family) && !strcmp(w->params, self->params) &&
        !strcmp(w->source_hash, self->source_hash))
        return *ms = self->median_ms, 0; /* the same kernel: its time here is the optimum itself */
    memset(&g, 0, sizeof g);
    snprintf(g.name, sizeof g.name, "%s", self->gpu_name);
    g.cc_major = self->cc_major, g.cc_minor = self->cc_minor, g.sm_count = self->sm_count;
    double t = -1;
    if (gt_db_find_trial(db, &g, &self->shape, w->family, w->params, w->source_hash, &found, &status, &t, err,
                         errlen) < 0)
        return -1;
    if (found && status == GT_ST_OK && t > 0) *ms = t;
    return 0;
}

/* The row as the kernel the loader serves for it at shape s: its params, or their variant for the call where the
 * stored ones cannot run it (gt_family_params_for_call), with that kernel's id, under which the sweep's cross-timing
 * stored its trial here. */
static void served_kernel(gt_winner *w, const gt_choice *c, const gt_shape *s)
{
    char text[sizeof w->params], id[17], err[128];
    gt_params_format(c->family, &c->params, text, sizeof text);
    if (!strcmp(text, w->params) || gt_kernel_id(c->family, &c->params, s->ta, s->tb, gt_shape_batch(s) > 1, id, NULL,
                                                  err, sizeof err))
        return;
    snprintf(w->params, sizeof w->params, "%s", text);
    snprintf(w->source_hash, sizeof w->source_hash, "%s", id);
}

static int fill_row(gt_db *db, const gt_winner_set *set, gt_winner *scratch, const gt_winner *self,
                    const gt_serve_model *model, gt_regret_row *r, char *err, size_t errlen)
{
    gt_device_id dev;
    const gt_gpu_model m = gt_winner_model(self);
    memset(r, 0, sizeof *r);
    r->self = *self;
    r->served_ms = r->regret = -1;
    r->rule = GT_RULE_NONE;
    if (!gt_device_id_of(&m, &dev)) return 0; /* no limits for its architecture: nothing can be judged legal */
    const int n = others(set, self, scratch);
    const gt_call call = gt_call_tight(&self->shape);
    const gt_choice c = gt_loader_select(scratch, n, &dev, &call, GEMMTUNE_FALLBACK_CUBLAS, model);
    r->rule = c.rule;
    if (c.rule == GT_RULE_REUSE) {
        r->picked = scratch[c.row], r->distance = c.distance, r->predicted = c.predicted;
        served_kernel(&r->picked, &c, &self->shape);
        if (time_here(db, self, &r->picked, &r->served_ms, err, errlen) < 0) return -1;
    } else if (c.rule == GT_RULE_CUBLAS && self->cublas_ms > 0)
        r->served_ms = self->cublas_ms;
    if (r->served_ms > 0) r->regret = r->served_ms / self->median_ms;
    return 0;
}

int gt_regret_walk(gt_db *db, const gt_winner_filter *filter, const gt_serve_model *model, gt_regret_fn fn, void *ctx,
                   char *err, size_t errlen)
{
    gt_winner_set set = {0};
    wvec sel = {0};
    gt_winner *scratch = NULL;
    int rc = -1;
    gt_math served = GT_MATH_FP32; /* a handle of the first class filter asks for besides FP32 */
    for (int m = GT_MATH_COUNT - 1; m > GT_MATH_FP32; --m)
        if (filter && (filter->math & GT_MATH_BIT(m))) served = (gt_math)m;
    if (gt_loader_set_from_db(db, gt_loader_math_of_class(served), &set, err, errlen) < 0) return -1;
    if (gt_db_winners(db, filter, push, &sel, err, errlen) < 0) goto out;
    if (!(scratch = malloc(((size_t)set.n + 1) * sizeof *scratch))) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (int i = 0; i < sel.n; ++i) {
        gt_regret_row r;
        if (fill_row(db, &set, scratch, &sel.v[i], model, &r, err, errlen) < 0) goto out;
        if (fn(&r, ctx)) break;
    }
    rc = 0;
out:
    gt_loader_set_free(&set);
    free(sel.v);
    free(scratch);
    return rc;
}
