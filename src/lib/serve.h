/* The serving model (src/lib/serve.c): how fast, against cuBLAS, a kernel tuned for one shape is expected to be on
 * another, and the busy share of the GPU a kernel's grid keeps on a shape. Pure functions of the family descriptors
 * and a stored winner, shared by the loader's reuse rule, the tuner's sweep order (tuner/plan.c) and the CLI.
 * Tested by tests/test_loader.c. */
#ifndef GT_SERVE_H
#define GT_SERVE_H

#include "db.h"
#include "family.h"

#include <stddef.h>

/* The serving model's constants: a reuse needs predicted >= 1 + margin within distance dmax. */
typedef struct {
    double decay, margin, dmax;
} gt_serve_model;

/* The fitted constants, or $GEMMTUNE_SERVE_MODEL's ("decay=0.25,margin=0.03,dmax=2"). 0, or -1 with err. */
int gt_serve_model_get(gt_serve_model *out, char *err, size_t errlen);
/* Predicted speed over cuBLAS of winner w's kernel (f, p) on shape x: 0 when w has no baseline. */
double gt_serve_predict(const gt_winner *w, const gt_family *f, const gt_params *p, const gt_shape *x, int sm_count,
                        const gt_serve_model *m);
/* The busy share of the GPU (last wave, edge tiles) of kernel f/p on shape s. */
double gt_serve_occupancy(const gt_family *f, const gt_params *p, const gt_shape *s, int sm_count);
/* |log2 m/m'| + |log2 n/n'| + |log2 k/k'| + |log2 batch/batch'|. */
double gt_shape_distance(const gt_shape *a, const gt_shape *b);

#endif
