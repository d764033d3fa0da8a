/* Kernel selection for the runtime loader, as pure functions over winner rows (rules in src/lib/gemmtune.h), plus
 * the mapping of gemmtune_sgemm's arguments to a row-major call. No GPU, no database: tests/test_loader.c. */
#include "backend.h"
#include "loader.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *gt_rule_name(gt_rule r)
{
    static const char *names[] = {"exact", "reuse", "cublas", "default", "none"};
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
    if (!e || !*e || !strcasecmp(e, "cublas")) *out = GEMMTUNE_FALLBACK_CUBLAS;
    else if (!strcasecmp(e, "default")) *out = GEMMTUNE_FALLBACK_DEFAULT;
    else if (!strcasecmp(e, "none")) *out = GEMMTUNE_FALLBACK_NONE;
    else {
        snprintf(err, errlen, "GEMMTUNE_FALLBACK='%s': want cublas, default or none", e);
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
    if (m < 0 || n < 0 || k < 0) {
        snprintf(err, errlen, "sizes m=%d n=%d k=%d: want m, n, k >= 0", m, n, k);
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

/* The alignment, in bytes, of every address p + i * stride floats. */
static int stride_align(int align, long long stride)
{
    while (align > 4 && (stride * 4) % align) align /= 2;
    return align;
}

int gt_loader_map_batch(gt_call *c, int swap, int batch, long long sa, long long sb, long long sc, char *err,
                        size_t errlen)
{
    if (batch < 0 || sa < 0 || sb < 0 || sc < 0) {
        snprintf(err, errlen, "batch=%d strides %lld %lld %lld: want a batch and strides >= 0", batch, sa, sb, sc);
        return -1;
    }
    if (batch <= 1) return 0;
    c->shape.batch = batch;
    c->stride_a = swap ? sb : sa; /* the row-major call's A is the caller's B when the operands swapped */
    c->stride_b = swap ? sa : sb;
    c->stride_c = sc;
    c->align_a = stride_align(c->align_a, c->stride_a);
    c->align_b = stride_align(c->align_b, c->stride_b);
    c->align_c = stride_align(c->align_c, c->stride_c);
    return 0;
}

/* Parse a row's kernel and check it runs this call on this device; why says what stops it. */
static int usable(const char *family, const char *params, const gt_device_id *dev, const gt_call *call,
                  const gt_family **fout, gt_params *pout, char *why, size_t n)
{
    const gt_family *f = gt_family_find(family);
    gt_params p;
    if (!f) return snprintf(why, n, "this build has no family '%s'", family), 0;
    if (f->build != GT_BUILD_NVRTC && !gt_backend_find(f->backend))
        return snprintf(why, n, "its library (%s) is not linked in", f->backend ? f->backend : "?"), 0;
    if (gt_params_parse(f, params, &p, why, n)) return 0;
    if (!f->legal(&p, &dev->lim, why, n)) return 0;
    if (gt_family_params_for_call(f, &p, call, &dev->lim, &p)) { /* as stored, or its variant for this call */
        if (fout) *fout = f, *pout = p;
        return 1;
    }
    if (f->applicable && !f->applicable(&p, call))
        return snprintf(why, n, "not applicable to this call's alignment, leading dimensions%s", f->specialize ?
                        " or tiles (nor is its variant for it)" : ""), 0;
    return snprintf(why, n, "it cannot run a batch of %d in one launch", gt_shape_batch(&call->shape)), 0;
}

/* usable() for a stored row, which must also not be stale: its timing is another kernel's. */
static int row_usable(const gt_winner *w, const gt_device_id *dev, const gt_call *call, const gt_family **fout,
                      gt_params *pout, char *why, size_t n)
{
    if (w->stale) return snprintf(why, n, "stale: the kernel's source changed since it was tuned; re-tune"), 0;
    return usable(w->family, w->params, dev, call, fout, pout, why, n);
}


int gt_device_id_of(const gt_gpu_model *m, gt_device_id *out)
{
    gt_limits lim;
    if (!gt_limits_for_cc(m->cc_major, m->cc_minor, &lim)) return 0;
    snprintf(out->name, sizeof out->name, "%s", m->name);
    out->lim = lim;
    out->lim.sm_count = m->sm_count;
    return 1;
}

int gt_winner_on_device(const gt_winner *w, const gt_device_id *dev)
{
    gt_gpu_model b = {.cc_major = dev->lim.cc_major, .cc_minor = dev->lim.cc_minor, .sm_count = dev->lim.sm_count};
    snprintf(b.name, sizeof b.name, "%s", dev->name);
    const gt_gpu_model a = gt_winner_model(w);
    return gt_gpu_model_equal(&a, &b);
}

static int same_layout(const gt_shape *a, const gt_shape *b) { return a->ta == b->ta && a->tb == b->tb; }

static int exact(const gt_winner *rows, int n, const gt_device_id *dev, const gt_call *call, gt_choice *c)
{
    const gt_shape *s = &call->shape;
    char why[256];
    for (int i = 0; i < n; ++i) {
        if (!gt_shape_equal(&rows[i].shape, s) || !gt_winner_on_device(&rows[i], dev)) continue;
        if (row_usable(&rows[i], dev, call, &c->family, &c->params, why, sizeof why)) {
            const gt_backend *be = c->family->backend ? gt_backend_find(c->family->backend) : NULL;
            if (!c->family->vendor && rows[i].ratio > 0 && rows[i].ratio < 1.0) { /* a sweep without the vendor */
                snprintf(c->why, sizeof c->why, "the winner tuned for this shape, %s, ran at %.3fx cuBLAS: not "
                         "served; ", rows[i].family, rows[i].ratio);
                c->family = NULL;
                continue;
            }
            c->rule = GT_RULE_EXACT, c->row = i, c->predicted = rows[i].ratio;
            if (be && !be->replayable(c->family, &c->params, why, sizeof why)) {
                snprintf(c->why, sizeof c->why, "%s: cuBLAS's own choice runs instead", why);
                gt_backend_default_params(&c->family, &c->params);
            }
            return 1;
        }
        snprintf(c->why, sizeof c->why, "the exact row (%s %s) was skipped: %s; ", rows[i].family, rows[i].params, why);
    }
    return 0;
}

/* Whether row r's shape may stand for call shape s on its skinny sides (each side of s of at most
 * GT_LOADER_SKINNY_SIDE equal): skinny kernels are tuned to their side exactly (rows a warp holds, a K split sized
 * by it), and a neighbour's with another side is no prediction of it. */
static int same_skinny_sides(const gt_shape *r, const gt_shape *s)
{
    return (s->m > GT_LOADER_SKINNY_SIDE || r->m == s->m) && (s->n > GT_LOADER_SKINNY_SIDE || r->n == s->n);
}

/* The best-predicted tuned neighbour of this model and layout; served when the model expects a win. */
static int reuse(const gt_winner *rows, int n, const gt_device_id *dev, const gt_call *call, const gt_serve_model *m,
                 gt_choice *c)
{
    const gt_shape *s = &call->shape;
    int best = -1, model_rows = 0, layout_rows = 0, other_side = 0;
    double best_pred = 0, best_d = 0;
    char dims[48];
    gt_params bp;
    const gt_family *bf = NULL;
    char why[256];
    for (int i = 0; i < n; ++i) {
        if (!gt_winner_on_device(&rows[i], dev)) continue;
        model_rows++;
        if (!same_layout(&rows[i].shape, s)) continue;
        layout_rows++;
        const gt_family *f;
        gt_params p;
        const double d = gt_shape_distance(&rows[i].shape, s);
        if (d > m->dmax) continue;
        if (!same_skinny_sides(&rows[i].shape, s)) {
            other_side++;
            continue;
        }
        if (!row_usable(&rows[i], dev, call, &f, &p, why, sizeof why) || f->exact_only) continue;
        const double pred = gt_serve_predict(&rows[i], f, &p, s, dev->lim.sm_count, m);
        if (pred > best_pred) best = i, best_pred = pred, best_d = d, bf = f, bp = p;
    }
    size_t used = strlen(c->why);
    char *w = c->why + used;
    const size_t left = sizeof c->why - used;
    if (!model_rows) snprintf(w, left, "no kernel is tuned for this GPU model (%s, %d SMs)", dev->name, dev->lim.sm_count);
    else if (!layout_rows) snprintf(w, left, "no shape is tuned in layout %s on this GPU model", gt_layout_name(s->ta, s->tb));
    else if (best < 0)
        snprintf(w, left,
                 "no shape of this layout is tuned within distance %.2g with a kernel that can run this call%s",
                 m->dmax, other_side ? " (a skinny call takes only a neighbour of its own skinny side)" : "");
    else if (best_pred < 1 + m->margin)
        snprintf(w, left, "the best tuned neighbour, %s from %s (d=%.3g), is predicted at %.3fx cuBLAS here, "
                 "under the %.3fx a reuse needs", rows[best].family, gt_shape_dims(&rows[best].shape, dims, sizeof dims),
                 best_d, best_pred, 1 + m->margin);
    else {
        c->rule = GT_RULE_REUSE, c->row = best, c->distance = best_d, c->predicted = best_pred;
        c->family = bf, c->params = bp;
        c->why[0] = '\0';
        return 1;
    }
    return 0;
}

/* No tuned kernel: cuBLAS's own SGEMM, the built-in kernel, or none, as the fallback says. */
static void fall_back(const gt_device_id *dev, const gt_call *call, gemmtune_fallback fallback, gt_choice *c)
{
    char why[256];
    c->row = -1;
    if (fallback == GEMMTUNE_FALLBACK_NONE) {
        c->rule = GT_RULE_NONE;
        return;
    }
    if (fallback == GEMMTUNE_FALLBACK_CUBLAS) {
        gt_backend_default_params(&c->family, &c->params);
        if (gt_backend_find(c->family->backend) && c->family->legal(&c->params, &dev->lim, why, sizeof why)) {
            c->rule = GT_RULE_CUBLAS;
            return;
        }
        snprintf(c->why + strlen(c->why), sizeof c->why - strlen(c->why), "; cuBLAS is not linked in");
    }
    const char *params = NULL;
    const gt_family *builtin = gt_family_builtin(&params); /* the family descriptor that provides it */
    c->rule = GT_RULE_DEFAULT;
    c->family = NULL;
    if (!builtin || !usable(builtin->name, params, dev, call, &c->family, &c->params, why, sizeof why))
        c->rule = GT_RULE_NONE, c->family = NULL;
}

gt_choice gt_loader_select(const gt_winner *rows, int n, const gt_device_id *dev, const gt_call *call,
                           gemmtune_fallback fallback, const gt_serve_model *model)
{
    gt_choice c;
    memset(&c, 0, sizeof c);
    c.row = -1;
    if (!exact(rows, n, dev, call, &c) && !reuse(rows, n, dev, call, model, &c)) fall_back(dev, call, fallback, &c);
    return c;
}

void gt_loader_kernel_text(const gt_family *f, const gt_params *p, char *buf, size_t n)
{
    char text[256];
    const gt_backend *be = f && f->backend ? gt_backend_find(f->backend) : NULL;
    if (!f) snprintf(buf, n, "no kernel (fallback none: the call fails)");
    else if (be) be->describe(f, p, buf, n);
    else {
        gt_params_format(f, p, text, sizeof text);
        snprintf(buf, n, "%s %s", f->name, text);
    }
}

void gt_loader_none_note(const gt_choice *c, const gt_shape *s, const gt_device_id *dev, char *buf, size_t n)
{
    char dims[48];
    snprintf(buf, n, "no tuned kernel for %s %s on %s and fallback none%s%s", gt_shape_dims(s, dims, sizeof dims),
             gt_layout_name(s->ta, s->tb), dev->name, c->why[0] ? ": " : "", c->why);
}

void gt_loader_describe(const gt_choice *c, const gt_winner *rows, char *buf, size_t n)
{
    char kernel[320], dims[48];
    gt_loader_kernel_text(c->family, &c->params, kernel, sizeof kernel);
    const gt_winner *w = c->row >= 0 ? &rows[c->row] : NULL;
    if (c->rule == GT_RULE_EXACT && w && w->ratio > 0)
        snprintf(buf, n, "exact: %s (tuned for this shape: %.3fx cuBLAS)%s%s", kernel, w->ratio, c->why[0] ? "; " : "",
                 c->why);
    else if (c->rule == GT_RULE_REUSE && w)
        snprintf(buf, n, "reuse: %s, tuned for %s %s (%.3fx cuBLAS there; d=%.3g; predicted %.3fx here)", kernel,
                 gt_shape_dims(&w->shape, dims, sizeof dims), gt_layout_name(w->shape.ta, w->shape.tb), w->ratio,
                 c->distance, c->predicted);
    else
        snprintf(buf, n, "%s: %s%s%s", gt_rule_name(c->rule), kernel, c->why[0] ? " (" : "", c->why[0] ? c->why : "");
    if (c->rule != GT_RULE_EXACT && c->rule != GT_RULE_REUSE && c->why[0] && strlen(buf) + 1 < n) strcat(buf, ")");
}
