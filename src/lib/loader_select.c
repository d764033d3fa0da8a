/* Kernel selection for the runtime loader, as pure functions over winner rows (rules in src/gemmtune.h), plus
 * the mapping of gemmtune_sgemm's arguments to a row-major call. No GPU, no database: tests/test_loader.c. */
#include "loader.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *gt_rule_name(gt_rule r)
{
    static const char *names[] = {"exact", "nearest", "same_cc", "default", "cublas", "none"};
    return (unsigned)r < sizeof names / sizeof names[0] ? names[r] : "?";
}

int gt_loader_fallback(gemmtune_fallback opt, gemmtune_fallback *out, char *err, size_t errlen)
{
    if (opt == GEMMTUNE_FALLBACK_DEFAULT || opt == GEMMTUNE_FALLBACK_CUBLAS || opt == GEMMTUNE_FALLBACK_NONE) {
        *out = opt;
        return 0;
    }
    if (opt != GEMMTUNE_FALLBACK_ENV) {
        snprintf(err, errlen, "fallback option %d is not a gemmtune_fallback", (int)opt);
        return -1;
    }
    const char *e = getenv("GEMMTUNE_FALLBACK");
    if (!e || !*e || !strcasecmp(e, "default")) *out = GEMMTUNE_FALLBACK_DEFAULT;
    else if (!strcasecmp(e, "cublas")) *out = GEMMTUNE_FALLBACK_CUBLAS;
    else if (!strcasecmp(e, "none")) *out = GEMMTUNE_FALLBACK_NONE;
    else {
        snprintf(err, errlen, "GEMMTUNE_FALLBACK='%s': want default, cublas or none", e);
        return -1;
    }
    return 0;
}

int gt_loader_align(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    int al = 16;
    while (al > 1 && a % (uintptr_t)al) al /= 2;
    return al;
}

int gt_loader_map_call(int column_major, int transa, int transb, int m, int n, int k, const void *A, int lda,
                       const void *B, int ldb, const void *C, int ldc, gt_call *out, int *swap, char *err,
                       size_t errlen)
{
    memset(out, 0, sizeof *out);
    *swap = column_major != 0;
    if ((transa != 0 && transa != 1) || (transb != 0 && transb != 1)) {
        snprintf(err, errlen, "transa=%d transb=%d: want GEMMTUNE_OP_N (0) or GEMMTUNE_OP_T (1)", transa, transb);
        return -1;
    }
    if (m < 0 || n < 0 || k < 1) {
        snprintf(err, errlen, "sizes m=%d n=%d k=%d: want m, n >= 0 and k >= 1", m, n, k);
        return -1;
    }
    /* Column-major C (m x n) is row-major C^T (n x m) = op(B)^T op(A)^T: B plays A, n plays m. */
    const int rm = *swap ? n : m, rn = *swap ? m : n;
    const int ta = *swap ? transb != 0 : transa != 0, tb = *swap ? transa != 0 : transb != 0;
    const int la = *swap ? ldb : lda, lb = *swap ? lda : ldb;
    const void *pa = *swap ? B : A, *pb = *swap ? A : B;
    const int need_a = ta ? rm : k, need_b = tb ? k : rn, need_c = rn;
    if (la < need_a || lb < need_b || ldc < need_c || la < 1 || lb < 1 || ldc < 1) {
        snprintf(err, errlen, "leading dimensions lda=%d ldb=%d ldc=%d too small for %s m=%d n=%d k=%d %s%s "
                 "(need lda>=%d ldb>=%d ldc>=%d)", lda, ldb, ldc, *swap ? "column-major" : "row-major", m, n, k,
                 transa ? "T" : "N", transb ? "T" : "N", *swap ? need_b : need_a, *swap ? need_a : need_b, need_c);
        return -1;
    }
    out->shape = (gt_shape){rm, rn, k, ta, tb};
    out->lda = la;
    out->ldb = lb;
    out->ldc = ldc;
    out->align_a = gt_loader_align(pa);
    out->align_b = gt_loader_align(pb);
    out->align_c = gt_loader_align(C);
    return 0;
}

/* Parse a row's kernel and check it runs this call on this device. */
static int usable(const char *family, const char *params, const gt_device_id *dev, const gt_call *call,
                  const gt_family **fout, gt_params *pout)
{
    char why[256];
    const gt_family *f = gt_family_find(family);
    gt_params p;
    if (!f || gt_params_parse(f, params, &p, why, sizeof why)) return 0;
    if (!f->legal(&p, &dev->lim, why, sizeof why)) return 0;
    if (f->applicable && !f->applicable(&p, call)) return 0;
    if (fout) *fout = f, *pout = p;
    return 1;
}

static int same_model(const gt_winner *w, const gt_device_id *dev)
{
    return !strcmp(w->gpu_name, dev->name) && w->cc_major == dev->lim.cc_major &&
           w->cc_minor == dev->lim.cc_minor && w->sm_count == dev->lim.sm_count;
}

typedef struct {
    const gt_device_id *dev;
    const gt_call *call;
    int any_model; /* 0: same model only; 1: any model of the same compute capability */
} accept_ctx;

static int accept_row(const gt_winner *w, void *vctx)
{
    const accept_ctx *c = vctx;
    if (c->any_model ? (w->cc_major != c->dev->lim.cc_major || w->cc_minor != c->dev->lim.cc_minor)
                     : !same_model(w, c->dev))
        return 0;
    return usable(w->family, w->params, c->dev, c->call, NULL, NULL);
}

static int exact_row(const gt_winner *rows, int n, const gt_device_id *dev, const gt_call *call)
{
    const gt_shape *s = &call->shape;
    for (int i = 0; i < n; ++i) {
        const gt_shape *r = &rows[i].shape;
        if (r->m == s->m && r->n == s->n && r->k == s->k && r->ta == s->ta && r->tb == s->tb &&
            same_model(&rows[i], dev) && usable(rows[i].family, rows[i].params, dev, call, NULL, NULL))
            return i;
    }
    return -1;
}

gt_choice gt_loader_select(const gt_winner *rows, int n, const gt_device_id *dev, const gt_call *call,
                           gemmtune_fallback fallback)
{
    gt_choice c;
    memset(&c, 0, sizeof c);
    c.row = exact_row(rows, n, dev, call);
    c.rule = GT_RULE_EXACT;
    for (int any = 0; c.row < 0 && any < 2; ++any) {
        accept_ctx ctx = {dev, call, any};
        c.row = gt_nearest_shape(rows, n, &call->shape, accept_row, &ctx, &c.distance);
        c.rule = any ? GT_RULE_SAME_CC : GT_RULE_NEAREST;
    }
    if (c.row >= 0) {
        usable(rows[c.row].family, rows[c.row].params, dev, call, &c.family, &c.params);
        return c;
    }
    c.distance = 0;
    c.rule = fallback == GEMMTUNE_FALLBACK_CUBLAS ? GT_RULE_CUBLAS
           : fallback == GEMMTUNE_FALLBACK_NONE   ? GT_RULE_NONE
                                                  : GT_RULE_DEFAULT;
    if (c.rule == GT_RULE_DEFAULT && !usable(GT_DEFAULT_FAMILY, GT_DEFAULT_PARAMS, dev, call, &c.family, &c.params))
        c.rule = GT_RULE_NONE;
    return c;
}

void gt_loader_describe(const gt_choice *c, const gt_winner *rows, char *buf, size_t n)
{
    char kernel[320] = "cublasSgemm";
    if (c->family) {
        char p[256];
        gt_params_format(c->family, &c->params, p, sizeof p);
        snprintf(kernel, sizeof kernel, "%s %s", c->family->name, p);
    } else if (c->rule == GT_RULE_NONE) {
        snprintf(kernel, sizeof kernel, "no kernel (fallback none)");
    }
    if (c->rule == GT_RULE_NEAREST || c->rule == GT_RULE_SAME_CC) {
        const gt_winner *w = &rows[c->row];
        snprintf(buf, n, "%s (d=%.3g from %dx%dx%d %s on %s cc %d.%d, %d SMs): %s", gt_rule_name(c->rule),
                 c->distance, w->shape.m, w->shape.n, w->shape.k, gt_layout_name(w->shape.ta, w->shape.tb),
                 w->gpu_name, w->cc_major, w->cc_minor, w->sm_count, kernel);
    } else {
        snprintf(buf, n, "%s: %s", gt_rule_name(c->rule), kernel);
    }
}
