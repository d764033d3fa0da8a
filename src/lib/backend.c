/* The table of library backends (src/lib/backend.h): one line per backend file, found by the name a family states.
 * Also the table of contexts a user keeps, one per backend. Tested by tests/test_vendor.c (vendor_backend_*). */
#include "backend.h"

#include <stdio.h>
#include <string.h>

extern const gt_backend gt_backend_cublas; /* backend_cublas.c */
extern const gt_backend gt_backend_ozaki;  /* backend_ozaki.c */

static const gt_backend *const backends[] = {&gt_backend_cublas, &gt_backend_ozaki};

const gt_backend *gt_backend_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof backends / sizeof backends[0]; ++i)
        if (!strcmp(backends[i]->name, name) && (!backends[i]->available || backends[i]->available()))
            return backends[i];
    return NULL;
}

gt_backend_ctx *gt_backend_ctx_of(gt_backend_ctxs *c, const gt_backend *be, char *err, size_t errlen)
{
    int i = 0;
    while (i < GT_BACKEND_MAX && c->slot[i].be && c->slot[i].be != be) ++i;
    if (i == GT_BACKEND_MAX) return snprintf(err, errlen, "more library backends than %d", GT_BACKEND_MAX), NULL;
    if (!c->slot[i].be && be->open(&c->slot[i].ctx, err, errlen) == 0) c->slot[i].be = be;
    return c->slot[i].be ? c->slot[i].ctx : NULL;
}

void gt_backend_ctxs_close(gt_backend_ctxs *c)
{
    for (int i = 0; i < GT_BACKEND_MAX && c->slot[i].be; ++i) c->slot[i].be->close(c->slot[i].ctx);
    memset(c, 0, sizeof *c);
}
