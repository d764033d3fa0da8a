/* The regret table of `gemmtune report`: each tuned shape served as if it were not tuned, by the loader's own rules
 * (src/lib/loader_select.c) over the other winners the library would read: a tuned neighbour's kernel where the
 * serving model predicts it beats cuBLAS (reuse), else cuBLAS; and what that costs against the shape's own optimum,
 * where the served kernel's time on this shape is stored. Tested by tests/test_report.c on a hand-made database. */
#ifndef GT_REGRET_H
#define GT_REGRET_H

#include "db.h"
#include "loader.h"

typedef struct {
    gt_winner self;          /* the shape's own winner */
    gt_rule rule;            /* what the loader serves it without its own row: GT_RULE_REUSE or GT_RULE_CUBLAS
                                (GT_RULE_DEFAULT or GT_RULE_NONE where cuBLAS cannot run there) */
    gt_winner picked;        /* reuse: the neighbour's winner whose kernel is served */
    double distance;         /* reuse: the neighbour's distance (gt_shape_distance) */
    double predicted;        /* reuse: the serving model's predicted speed over cuBLAS here */
    double served_ms;        /* what is served, on this shape: reuse, the newest ok trial of that kernel here (the
                                optimum itself when it is the same kernel); cuBLAS, the stored baseline; -1 when not
                                measured */
    double regret;           /* served_ms / self.median_ms (>= 1 when the optimum is right), -1 when n/a */
} gt_regret_row;

typedef int (*gt_regret_fn)(const gt_regret_row *r, void *ctx); /* non-zero stops the walk */

/* Walk the regret rows of the winners matching filter (NULL: every FP32 one), in gt_db_winners order, under the
 * serving model's constants model. The rows served from are those a handle reads (gt_loader_set_from_db: FP32, or
 * the faster class of each shape when filter asks for another class too). 0, or -1 with err. */
int gt_regret_walk(gt_db *db, const gt_winner_filter *filter, const gt_serve_model *model, gt_regret_fn fn, void *ctx,
                   char *err, size_t errlen);

#endif
