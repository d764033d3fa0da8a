/* The GPU model of a sweep's GPU and of a stored winner (db.h), apart from db.c so that a program linking the static
 * library for a compiled-in table needs no SQLite. */
#include "db.h"

#include <stdio.h>

gt_gpu_model gt_gpu_info_model(const gt_gpu_info *g)
{
    gt_gpu_model m = {.cc_major = g->cc_major, .cc_minor = g->cc_minor, .sm_count = g->sm_count};
    snprintf(m.name, sizeof m.name, "%s", g->name);
    return m;
}

gt_gpu_model gt_winner_model(const gt_winner *w)
{
    gt_gpu_model m = {.cc_major = w->cc_major, .cc_minor = w->cc_minor, .sm_count = w->sm_count};
    snprintf(m.name, sizeof m.name, "%s", w->gpu_name);
    return m;
}

int gt_winner_same_model(const gt_winner *a, const gt_winner *b)
{
    const gt_gpu_model ma = gt_winner_model(a), mb = gt_winner_model(b);
    return gt_gpu_model_equal(&ma, &mb);
}
