/* The serving model: how fast, against cuBLAS, a kernel tuned for shape S' is expected to be on an untuned shape X,
 * so the loader reuses it only where it is expected to win. Pure functions: tests/test_loader.c. How the constants
 * were fitted, on cross-timings of tuned neighbours (`gemmtune tune` stores them): docs/BENCHMARKS.md.
 *
 *   predicted(X) = ratio(S') * Q(X) / Q(S') * exp(-decay * d(X, S'))
 *
 * ratio(S') is the kernel's measured speed over cuBLAS on its own shape, d the log2 distance of the shapes
 * (|log2 m/m'| + |log2 n/n'| + |log2 k/k'|), and Q the fraction of the GPU a launch keeps busy: the last wave's
 * share of the SMs, and the useful share of the edge tiles when the family has BM and BN tiles; 1 for a library
 * algorithm, whose grid is the library's. The interface is src/lib/serve.h. */
#include "serve.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fitted on 124 measured pairs (a winner timed on another tuned shape) of the public suite on an H100: decay by
 * least squares on log ratios; no pair that lost to cuBLAS (under 0.98x) was predicted above 0.952, so a reuse
 * needs 1.03; no reuse won beyond distance 1. docs/BENCHMARKS.md, "serving model". */
static const gt_serve_model fitted = {.decay = 0.10, .margin = 0.03, .dmax = 1.0};

double gt_shape_distance(const gt_shape *a, const gt_shape *b)
{
    return fabs(log2((double)a->m / b->m)) + fabs(log2((double)a->n / b->n)) + fabs(log2((double)a->k / b->k)) +
           fabs(log2((double)gt_shape_batch(a) / gt_shape_batch(b)));
}

static double tile_share(int dim, int tile)
{
    return tile > 0 ? (double)dim / ((double)((dim + tile - 1) / tile) * tile) : 1.0;
}

double gt_serve_occupancy(const gt_family *f, const gt_params *p, const gt_shape *s, int sm_count)
{
    gt_launch L;
    if (f->build != GT_BUILD_NVRTC) return 1; /* a library picks its own grid: unknown here */
    if (!gt_family_launch(f, p, s, sm_count, &L)) return 0; /* cannot run this batch */
    const double blocks = (double)L.grid[0] * L.grid[1] * (L.grid[2] ? L.grid[2] : 1);
    double q = 1.0;
    if (sm_count > 0 && blocks > 0) q = blocks / (ceil(blocks / sm_count) * sm_count);
    return q * tile_share(s->m, gt_param_get(f, p, "BM", 0)) * tile_share(s->n, gt_param_get(f, p, "BN", 0));
}

double gt_serve_predict(const gt_winner *w, const gt_family *f, const gt_params *p, const gt_shape *x, int sm_count,
                        const gt_serve_model *m)
{
    if (w->ratio <= 0) return 0; /* no baseline: nothing to predict from */
    const double q_there = gt_serve_occupancy(f, p, &w->shape, sm_count);
    const double q_here = gt_serve_occupancy(f, p, x, sm_count);
    return q_there > 0 ? w->ratio * q_here / q_there * exp(-m->decay * gt_shape_distance(x, &w->shape)) : 0;
}

int gt_serve_model_get(gt_serve_model *out, char *err, size_t errlen)
{
    *out = fitted;
    const char *e = getenv("GEMMTUNE_SERVE_MODEL");
    if (!e || !*e) return 0;
    char *copy = strdup(e), *save = NULL;
    int rc = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
        char key[16];
        double v;
        char end;
        if (sscanf(tok, "%15[a-z]=%lf%c", key, &v, &end) != 2 || !(v >= 0) || v > 100) rc = -1;
        else if (!strcmp(key, "decay")) out->decay = v;
        else if (!strcmp(key, "margin")) out->margin = v;
        else if (!strcmp(key, "dmax")) out->dmax = v;
        else rc = -1;
    }
    free(copy);
    if (rc) snprintf(err, errlen, "GEMMTUNE_SERVE_MODEL='%s': want decay=X,margin=Y,dmax=Z (numbers >= 0)", e);
    return rc;
}
