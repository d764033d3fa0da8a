/* Our own best kernel for a shape in a database (see own.h). */
#include "own.h"
#include "backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char family[32], params[256], hash[17];
} kernel_key;

typedef struct {
    const gt_gpu_model *model;
    gt_math asked;
    kernel_key *refused; /* kernels a validation failed on this shape and GPU model */
    int nrefused, cap, oom;
    gt_trial_row best;
    int found;
} own_ctx;

static int same_model(const gt_trial_row *t, const gt_gpu_model *m)
{
    gt_gpu_model tm = {.cc_major = t->cc_major, .cc_minor = t->cc_minor, .sm_count = t->sm_count};
    snprintf(tm.name, sizeof tm.name, "%s", t->gpu_name);
    return gt_gpu_model_equal(&tm, m);
}

static int same_kernel(const kernel_key *k, const gt_trial_row *t)
{
    return !strcmp(k->family, t->family) && !strcmp(k->params, t->params) && !strcmp(k->hash, t->source_hash);
}

static int note_refused(const gt_trial_row *t, void *vctx)
{
    own_ctx *c = vctx;
    if (!gt_status_failed(t->status) || !same_model(t, c->model)) return 0;
    if (c->nrefused == c->cap) {
        const int cap = c->cap ? 2 * c->cap : 16;
        kernel_key *v = realloc(c->refused, (size_t)cap * sizeof *v);
        if (!v) return c->oom = 1;
        c->refused = v, c->cap = cap;
    }
    kernel_key *k = &c->refused[c->nrefused++];
    snprintf(k->family, sizeof k->family, "%s", t->family);
    snprintf(k->params, sizeof k->params, "%s", t->params);
    snprintf(k->hash, sizeof k->hash, "%s", t->source_hash);
    return 0;
}

static int refused(const own_ctx *c, const gt_trial_row *t)
{
    for (int i = 0; i < c->nrefused; ++i)
        if (same_kernel(&c->refused[i], t)) return 1;
    return 0;
}

/* A library family's trial this build would not replay (another revision, another cuBLAS): not one to bench. */
static int replayable(const gt_family *f, const char *params)
{
    const gt_backend *be = f->backend ? gt_backend_find(f->backend) : NULL;
    gt_params p;
    char why[256];
    return !be || (gt_params_parse(f, params, &p, why, sizeof why) == 0 && be->replayable(f, &p, why, sizeof why));
}

static int fastest(const gt_trial_row *t, void *vctx)
{
    own_ctx *c = vctx;
    const gt_family *f = gt_family_find(t->family);
    /* validated trials, and screens timed at full size (the bench validates its pick before timing it) */
    const int timed = t->status == GT_ST_OK || (t->status == GT_ST_SCREENED && !strstr(t->message, "proxy"));
    if (!f || f->vendor || (f->math != GT_MATH_FP32 && f->math != c->asked) || !timed || t->median_ms <= 0 ||
        !same_model(t, c->model) || refused(c, t) || !replayable(f, t->params))
        return 0;
    if (!c->found || t->median_ms < c->best.median_ms) c->best = *t, c->found = 1;
    return 0;
}

int gt_own_best(gt_db *db, const gt_gpu_model *model, const gt_shape *s, gt_math asked, char *family, size_t nf,
                char *params, size_t np, char *err, size_t errlen)
{
    own_ctx c = {.model = model, .asked = asked};
    gt_winner_filter fl = {.shape = s};
    int rc = gt_db_trials(db, &fl, note_refused, &c, err, errlen);
    if (rc == 0 && c.oom) rc = -1, snprintf(err, errlen, "out of memory");
    if (rc == 0) rc = gt_db_trials(db, &fl, fastest, &c, err, errlen);
    free(c.refused);
    if (rc) return -1;
    if (c.found) snprintf(family, nf, "%s", c.best.family), snprintf(params, np, "%s", c.best.params);
    return c.found;
}
