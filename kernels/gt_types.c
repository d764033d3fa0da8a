/* The shared vocabulary of kernels/gt_types.h: GPU model comparison, trial statuses, TFLOPS, the tolerance.
 * Tested by tests/test_kernels.c. */
#include "gt_types.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int gt_gpu_model_equal(const gt_gpu_model *a, const gt_gpu_model *b)
{
    return !strcmp(a->name, b->name) && a->cc_major == b->cc_major && a->cc_minor == b->cc_minor &&
           a->sm_count == b->sm_count;
}

const char *gt_shape_dims(const gt_shape *s, char *buf, size_t n)
{
    if (gt_shape_batch(s) > 1) snprintf(buf, n, "%dx%dx%dx%d", s->batch, s->m, s->n, s->k);
    else snprintf(buf, n, "%dx%dx%d", s->m, s->n, s->k);
    return buf;
}

int gt_shape_parse_dims(const char *text, long max, gt_shape *s, const char **end)
{
    long d[4];
    int nd = 0;
    const char *p = text;
    for (;;) {
        char *e;
        errno = 0;
        if (*p < '0' || *p > '9') return -1;
        d[nd] = strtol(p, &e, 10);
        if (errno || d[nd] < 1 || d[nd] > (nd == 0 ? 65535L * 65535L : max)) return -1;
        p = e, nd++;
        if (nd < 4 && (*p == 'x' || *p == 'X')) p++;
        else break;
    }
    if (nd == 2 || (nd == 1 && d[0] > max)) return -1;
    const long *mnk = nd == 4 ? d + 1 : d;
    *s = nd == 1 ? (gt_shape){(int)d[0], (int)d[0], (int)d[0], 0, 0, 1}
                 : (gt_shape){(int)mnk[0], (int)mnk[1], (int)mnk[2], 0, 0, nd == 4 ? (int)d[0] : 1};
    if (nd == 4 && d[0] > INT_MAX) return -1;
    *end = p;
    return 0;
}

int gt_shape_equal(const gt_shape *a, const gt_shape *b)
{
    return a->m == b->m && a->n == b->n && a->k == b->k && a->ta == b->ta && a->tb == b->tb &&
           gt_shape_batch(a) == gt_shape_batch(b);
}

gt_call gt_call_tight(const gt_shape *s)
{
    gt_call c = {*s, s->ta ? s->m : s->k, s->tb ? s->k : s->n, s->n, 16, 16, 16, 0, 0, 0};
    if (gt_shape_batch(s) > 1) {
        c.stride_a = (long long)s->m * s->k;
        c.stride_b = (long long)s->k * s->n;
        c.stride_c = (long long)s->m * s->n;
    }
    return c;
}

static const char *const names[GT_ST_COUNT] = {"ok",           "screened", "pruned",  "wrong",   "compile_error",
                                               "resources",    "launch_error", "faulted", "timeout", "unavailable"};

const char *gt_status_name(gt_status s) { return (unsigned)s < GT_ST_COUNT ? names[s] : "?"; }

int gt_status_parse(const char *name)
{
    for (int i = 0; name && i < GT_ST_COUNT; ++i)
        if (!strcmp(names[i], name)) return i;
    return -1;
}

int gt_status_timed(gt_status s) { return s == GT_ST_OK || s == GT_ST_SCREENED; }

int gt_status_failed(gt_status s) { return !gt_status_timed(s) && s != GT_ST_PRUNED; }

double gt_tflops(const gt_shape *s, double ms)
{
    return ms > 0 ? 2.0 * gt_shape_batch(s) * s->m * s->n * (double)s->k / (ms * 1e9) : 0;
}

double gt_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

double gt_tolerance(int k) { return 16.0 * sqrt((double)k) * FLT_EPSILON; }
