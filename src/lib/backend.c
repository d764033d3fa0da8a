/* The table of library backends (src/lib/backend.h): one line per backend file, found by the name a family states.
 * Tested by tests/test_vendor.c (vendor_backend_*). */
#include "backend.h"

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
