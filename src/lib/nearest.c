/* The nearest-shape rule (see db/db.h): log-distance over m, n, k within one layout. Tested in tests/test_nearest.c. */
#include "db.h"

#include <math.h>

int gt_nearest_shape(const gt_winner *rows, int n, const gt_shape *s, int (*accept)(const gt_winner *, void *),
                     void *ctx, double *distance)
{
    int best = -1;
    double bestd = INFINITY;
    for (int i = 0; i < n; ++i) {
        const gt_shape *r = &rows[i].shape;
        if (r->ta != s->ta || r->tb != s->tb) continue;
        double d = fabs(log2((double)s->m / r->m)) + fabs(log2((double)s->n / r->n)) + fabs(log2((double)s->k / r->k));
        if (d < bestd && (!accept || accept(&rows[i], ctx))) {
            best = i;
            bestd = d;
        }
    }
    if (distance) *distance = bestd;
    return best;
}
