/* Our own best kernel for a shape, as `gemmtune bench` benches it beside what is served: the fastest timed trial on
 * this GPU model of a family other than the vendor's, in FP32 or the asked math class, that this build can replay,
 * and that no validation of the same kernel refused on this shape. A screen times a candidate before it is validated
 * (and an FP32-accurate class's FP64 verdict may then refuse it): its screen's time is no measure of a kernel that
 * may be served. Tested by tests/test_report.c on a hand-made database. */
#ifndef GT_OWN_H
#define GT_OWN_H

#include "db.h"

/* 1 with the kernel's family and params, 0 when there is none, -1 with err. */
int gt_own_best(gt_db *db, const gt_gpu_model *model, const gt_shape *s, gt_math asked, char *family, size_t nf,
                char *params, size_t np, char *err, size_t errlen);

#endif
