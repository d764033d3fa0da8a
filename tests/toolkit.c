/* The test toolkit's GEMM checking (tests/toolkit.h): problems, operands, the CPU reference and the validator.
 * Plain C with no CUDA and no harness: the GPU tests, the CPU tests and the emulator (tests/emu/) share it. */
#include "toolkit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

gt_problem gt_problem_make(int colmajor, int ta, int tb, int m, int n, int k, int pad, float alpha, float beta)
{
    gt_problem p = {colmajor, ta, tb, m, n, k, 0, 0, 0, alpha, beta};
    if (colmajor) p.lda = (ta ? k : m) + pad, p.ldb = (tb ? n : k) + pad, p.ldc = m + pad;
    else p.lda = (ta ? m : k) + pad, p.ldb = (tb ? k : n) + pad, p.ldc = n + pad;
    return p;
}

/* Stored rows x cols (a row being ld apart) of each operand. */
static void stored(const gt_problem *p, char operand, int *rows, int *cols, int *ld)
{
    int r, c;
    if (operand == 'A') r = p->ta ? p->k : p->m, c = p->ta ? p->m : p->k, *ld = p->lda;
    else if (operand == 'B') r = p->tb ? p->n : p->k, c = p->tb ? p->k : p->n, *ld = p->ldb;
    else r = p->m, c = p->n, *ld = p->ldc;
    *rows = p->colmajor ? c : r; /* column-major: a "row" here is a column of length r */
    *cols = p->colmajor ? r : c;
}

size_t gt_problem_elems(const gt_problem *p, char operand)
{
    int rows, cols, ld;
    stored(p, operand, &rows, &cols, &ld);
    return (size_t)(rows - 1) * ld + cols;
}

/* C's element (i, j) of the m x n window. */
static size_t c_at(const gt_problem *p, int i, int j)
{
    return p->colmajor ? (size_t)j * p->ldc + i : (size_t)i * p->ldc + j;
}

static float urand(unsigned *seed)
{
    *seed = *seed * 1664525u + 1013904223u;
    return (float)((*seed >> 8) & 0xffffff) / 8388608.0f - 1.0f;
}

void gt_problem_fill(const gt_problem *p, unsigned *seed, float *A, float *B, float *C0)
{
    for (size_t e = 0; e < gt_problem_elems(p, 'A'); ++e) A[e] = urand(seed);
    for (size_t e = 0; e < gt_problem_elems(p, 'B'); ++e) B[e] = urand(seed);
    for (size_t e = 0; e < gt_problem_elems(p, 'C'); ++e) C0[e] = urand(seed);
    if (p->beta == 0.0f)
        for (int i = 0; i < p->m; ++i)
            for (int j = 0; j < p->n; ++j) C0[c_at(p, i, j)] = NAN;
}

/* op(A) as m x k and op(B) as k x n, row-major doubles, so the products below walk memory in order. */
static void unpack(const gt_problem *p, const float *A, const float *B, double *a, double *b)
{
    for (int i = 0; i < p->m; ++i)
        for (int q = 0; q < p->k; ++q) {
            const int row = p->ta ? q : i, col = p->ta ? i : q; /* A(i, q) is stored at (row, col) */
            a[(size_t)i * p->k + q] = p->colmajor ? A[(size_t)col * p->lda + row] : A[(size_t)row * p->lda + col];
        }
    for (int q = 0; q < p->k; ++q)
        for (int j = 0; j < p->n; ++j) {
            const int row = p->tb ? j : q, col = p->tb ? q : j;
            b[(size_t)q * p->n + j] = p->colmajor ? B[(size_t)col * p->ldb + row] : B[(size_t)row * p->ldb + col];
        }
}

/* For each C element: the reference alpha op(A) op(B) + beta c0 and its bound |alpha| (|A||B|) + |beta c0|,
 * row-major m x n. NULL when memory runs out. */
static double *reference(const gt_problem *p, const float *A, const float *B, const float *C0, double **bound)
{
    const size_t mn = (size_t)p->m * p->n;
    double *a = malloc((size_t)p->m * p->k * sizeof *a), *b = malloc((size_t)p->k * p->n * sizeof *b);
    double *r = calloc(mn, sizeof *r), *mag = calloc(mn, sizeof *mag);
    if (!a || !b || !r || !mag) {
        free(a), free(b), free(r), free(mag);
        return NULL;
    }
    unpack(p, A, B, a, b);
    for (int i = 0; i < p->m; ++i)
        for (int q = 0; q < p->k; ++q) {
            const double x = a[(size_t)i * p->k + q], *brow = b + (size_t)q * p->n;
            double *ri = r + (size_t)i * p->n, *mi = mag + (size_t)i * p->n;
            for (int j = 0; j < p->n; ++j) ri[j] += x * brow[j], mi[j] += fabs(x * brow[j]);
        }
    for (int i = 0; i < p->m; ++i)
        for (int j = 0; j < p->n; ++j) {
            const size_t e = (size_t)i * p->n + j;
            const double c0 = p->beta != 0.0f ? C0[c_at(p, i, j)] : 0.0;
            r[e] = p->alpha * r[e] + p->beta * c0;
            mag[e] = fabs(p->alpha) * mag[e] + fabs(p->beta * c0);
        }
    free(a), free(b);
    *bound = mag;
    return r;
}

void gt_ref_gemm(const gt_problem *p, const float *A, const float *B, const float *C0, float *C)
{
    double *bound = NULL, *r = reference(p, A, B, C0, &bound);
    memcpy(C, C0, gt_problem_elems(p, 'C') * sizeof *C);
    for (int i = 0; r && i < p->m; ++i)
        for (int j = 0; j < p->n; ++j) C[c_at(p, i, j)] = (float)r[(size_t)i * p->n + j];
    free(r), free(bound);
}

/* Padding of C (elements outside the m x n window) that differs from C0, bit for bit. */
static long long pad_changed(const gt_problem *p, const float *C0, const float *C)
{
    long long n = 0;
    const int len = p->colmajor ? p->m : p->n; /* window elements per stored row */
    for (size_t e = 0; e < gt_problem_elems(p, 'C'); ++e)
        n += (int)(e % p->ldc) >= len && memcmp(&C[e], &C0[e], sizeof *C) != 0;
    return n;
}

/* One element under the rule: its scaled error (NaN and Inf count as infinite) into the verdict. */
static void tally(gt_verdict *v, int i, int j, double got, double want, double bound)
{
    double x = fabs(got - want) / fmax(bound, 1e-30);
    if (!(x <= 3.0e38)) x = INFINITY; /* as the product's compare kernel does */
    v->bad += !(x <= v->tol);
    if (x > v->worst || (i == 0 && j == 0)) v->worst = x, v->i = i, v->j = j, v->got = got, v->want = want;
}

/* The padding check, and the verdict. */
static int conclude(const gt_problem *p, const float *C0, const float *C, gt_verdict *v)
{
    v->pad = pad_changed(p, C0, C);
    if (v->pad) v->worst = INFINITY;
    return v->bad == 0 && v->pad == 0 && v->worst <= v->tol;
}

int gt_validate(const gt_problem *p, const float *A, const float *B, const float *C0, const float *C, const float *R,
                gt_verdict *v)
{
    double *bound = NULL, *r = reference(p, A, B, C0, &bound);
    memset(v, 0, sizeof *v);
    v->tol = gt_tolerance(p->k);
    for (int i = 0; r && i < p->m; ++i)
        for (int j = 0; j < p->n; ++j) {
            const size_t e = (size_t)i * p->n + j, at = c_at(p, i, j);
            tally(v, i, j, C[at], R ? R[at] : r[e], bound[e]);
        }
    if (!r) v->worst = INFINITY; /* no memory for the reference: fail, never pass unchecked */
    free(r), free(bound);
    return conclude(p, C0, C, v);
}

int gt_validate_bound(const gt_problem *p, const float *C0, const float *C, const float *R, const float *bound,
                      gt_verdict *v)
{
    memset(v, 0, sizeof *v);
    v->tol = gt_tolerance(p->k);
    for (int i = 0; i < p->m; ++i)
        for (int j = 0; j < p->n; ++j) tally(v, i, j, C[c_at(p, i, j)], R[c_at(p, i, j)], bound[c_at(p, i, j)]);
    return conclude(p, C0, C, v);
}

void gt_verdict_text(const gt_problem *p, const gt_verdict *v, char *buf, size_t n)
{
    snprintf(buf, n, "%s %dx%dx%d %s ld %d,%d,%d alpha %g beta %g: worst %.3g (tol %.3g) at C(%d,%d) = %g, want %g; "
             "%lld elements over, %lld padding elements written", p->colmajor ? "col-major" : "row-major", p->m, p->n,
             p->k, gt_layout_name(p->ta, p->tb), p->lda, p->ldb, p->ldc, p->alpha, p->beta, v->worst, v->tol, v->i,
             v->j, v->got, v->want, v->bad, v->pad);
}

gt_params gt_params_with(const gt_family *f, gt_params p, const char *name, int v)
{
    for (int i = 0; i < f->nparams; ++i)
        if (!strcmp(f->params[i].name, name)) p.v[i] = v;
    return p;
}

int gt_legal_on(const gt_family *f, const char *arch, const gt_params *p, char *why, size_t n)
{
    gt_limits lim;
    gt_limits_for_arch(arch, &lim);
    return f->legal(p, &lim, why, n);
}

int gt_first_not_refused(const gt_family *f, const char *arch, const gt_refusal *bad, size_t n, char *why, size_t wn)
{
    for (size_t i = 0; i < n; ++i) {
        why[0] = '\0';
        if (gt_legal_on(f, arch, &bad[i].p, why, wn) || !strstr(why, bad[i].word)) return (int)i;
    }
    return -1;
}

typedef struct {
    char *text;
    size_t len, cap;
    const char *seen[32];
    int nseen;
} expansion;

static int append(expansion *x, const char *s, size_t n)
{
    if (x->len + n + 1 > x->cap) {
        size_t cap = 2 * (x->len + n + 1);
        char *t = realloc(x->text, cap);
        if (!t) return -1;
        x->text = t, x->cap = cap;
    }
    memcpy(x->text + x->len, s, n);
    x->text[x->len += n] = '\0';
    return 0;
}

/* Appends src, each line `#include "NAME"` replaced by the header's own expansion (nothing the second time). */
static int expand(expansion *x, const char *src)
{
    for (const char *line = src; *line;) {
        const char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line + 1) : strlen(line);
        char name[64];
        if (sscanf(line, "#include \"%63[^\"]\"", name) == 1) {
            const char *text = gt_template_text(name);
            int seen = 0;
            for (int i = 0; i < x->nseen; ++i) seen |= x->seen[i] == text;
            if (!text || x->nseen == 32) return -1;
            if (!seen && (x->seen[x->nseen++] = text, expand(x, text) != 0)) return -1;
        } else if (append(x, line, n) != 0) {
            return -1;
        }
        line += n;
    }
    return 0;
}

char *gt_source_expand(const char *src)
{
    expansion x = {0};
    if (expand(&x, src) != 0) {
        free(x.text);
        return NULL;
    }
    return x.text;
}
