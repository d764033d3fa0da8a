/* The nearest-shape rule on a small table. */
#include "db.h"
#include "harness.h"

#include <string.h>

static int reject_family_x(const gt_winner *w, void *ctx)
{
    (void)ctx;
    return strcmp(w->family, "x") != 0;
}

GT_TEST(nearest_shape_picks_log_closest_same_layout, GT_NEEDS_NONE)
{
    gt_winner rows[4];
    memset(rows, 0, sizeof rows);
    rows[0].shape = (gt_shape){1024, 1024, 1024, 0, 0};
    rows[1].shape = (gt_shape){4096, 4096, 4096, 0, 0};
    rows[2].shape = (gt_shape){2048, 2048, 2048, 1, 0}; /* other layout */
    rows[3].shape = (gt_shape){2048, 2048, 1024, 0, 0};
    strcpy(rows[3].family, "x");
    gt_shape q = {2000, 2000, 2000, 0, 0};
    double d;
    CHECK(gt_nearest_shape(rows, 4, &q, NULL, NULL, &d) == 3);
    CHECK(gt_nearest_shape(rows, 4, &q, reject_family_x, NULL, &d) == 0 || gt_nearest_shape(rows, 4, &q, reject_family_x, NULL, &d) == 1);
    gt_shape t = {2048, 2048, 2048, 1, 0};
    CHECK(gt_nearest_shape(rows, 4, &t, NULL, NULL, &d) == 2 && d == 0.0);
    gt_shape tt = {2048, 2048, 2048, 1, 1};
    CHECK(gt_nearest_shape(rows, 4, &tt, NULL, NULL, &d) == -1);
    gt_shape exact = {4096, 4096, 4096, 0, 0};
    CHECK(gt_nearest_shape(rows, 4, &exact, NULL, NULL, &d) == 1 && d == 0.0);
    /* equidistant in log space: 1024 and 4096 around 2048 x 2048 x 2048 without row 3 -> the lower index */
    gt_shape mid = {2048, 2048, 2048, 0, 0};
    CHECK(gt_nearest_shape(rows, 3, &mid, NULL, NULL, &d) == 0);
}
