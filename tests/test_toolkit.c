/* The test toolkit itself (tests/toolkit.h): the reference GEMM on small exact cases, the validator's verdicts
 * under the product's rule, and the GT_SAMPLE spread sample. Run: build/gt_tests --cpu toolkit */
#include "harness.h"
#include "toolkit.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 2x3 times 3x2 with small integers: every sum is exact in float. */
static const float A23[] = {1, 2, 3, 4, 5, 6}, B32[] = {7, 8, 9, 10, 11, 12};

GT_TEST(toolkit_reference_gemm_is_exact_on_integers, GT_NEEDS_NONE)
{
    float C0[4] = {1, 1, 1, 1}, C[4];
    gt_problem p = gt_problem_make(0, 0, 0, 2, 2, 3, 0, 2.0f, 0.5f);
    gt_ref_gemm(&p, A23, B32, C0, C);
    const float want[4] = {2 * 58 + 0.5f, 2 * 64 + 0.5f, 2 * 139 + 0.5f, 2 * 154 + 0.5f};
    CHECK_MSG(!memcmp(C, want, sizeof want), "%g %g %g %g", C[0], C[1], C[2], C[3]);
    /* the same numbers stored transposed, and column-major: A^T is 3x2 row-major = 2x3 column-major */
    p = gt_problem_make(1, 0, 0, 2, 2, 3, 0, 2.0f, 0.5f);
    const float Acol[] = {1, 4, 2, 5, 3, 6}, Bcol[] = {7, 9, 11, 8, 10, 12};
    const float wantcol[4] = {want[0], want[2], want[1], want[3]};
    gt_ref_gemm(&p, Acol, Bcol, C0, C);
    CHECK_MSG(!memcmp(C, wantcol, sizeof wantcol), "col-major %g %g %g %g", C[0], C[1], C[2], C[3]);
    /* beta 0 never reads C: NaN there does not leak */
    float nan0[4] = {NAN, NAN, NAN, NAN};
    p = gt_problem_make(0, 1, 1, 2, 2, 3, 0, 1.0f, 0.0f);
    const float At[] = {1, 4, 2, 5, 3, 6}, Bt[] = {7, 9, 11, 8, 10, 12};
    gt_ref_gemm(&p, At, Bt, nan0, C);
    CHECK_MSG(C[0] == 58 && C[1] == 64 && C[2] == 139 && C[3] == 154, "tt %g %g %g %g", C[0], C[1], C[2], C[3]);
}

typedef struct {
    gt_problem p;
    float *A, *B, *C0, *C;
} case_t;

static case_t make_case(int colmajor, int ta, int tb, float beta)
{
    case_t c = {gt_problem_make(colmajor, ta, tb, 13, 9, 37, 3, 1.5f, beta), NULL, NULL, NULL, NULL};
    unsigned seed = 42;
    c.A = malloc(gt_problem_elems(&c.p, 'A') * sizeof(float));
    c.B = malloc(gt_problem_elems(&c.p, 'B') * sizeof(float));
    c.C0 = malloc(gt_problem_elems(&c.p, 'C') * sizeof(float));
    c.C = malloc(gt_problem_elems(&c.p, 'C') * sizeof(float));
    gt_problem_fill(&c.p, &seed, c.A, c.B, c.C0);
    gt_ref_gemm(&c.p, c.A, c.B, c.C0, c.C);
    return c;
}

static void free_case(case_t *c) { free(c->A), free(c->B), free(c->C0), free(c->C); }

/* Element (i, j) of C's window, in either storage order. */
static float *at(case_t *c, int i, int j)
{
    return c->C + (c->p.colmajor ? (size_t)j * c->p.ldc + i : (size_t)i * c->p.ldc + j);
}

GT_TEST(toolkit_validator_applies_the_product_rule, GT_NEEDS_NONE)
{
    for (int t = 0; t < 8; ++t) {
        case_t c = make_case(t >> 2, (t >> 1) & 1, t & 1, t % 3 ? 0.5f : 0.0f);
        gt_verdict v;
        CHECK_MSG(gt_validate(&c.p, c.A, c.B, c.C0, c.C, NULL, &v) && v.worst <= v.tol, "case %d: worst %g", t,
                  v.worst);
        CHECK(v.tol == gt_tolerance(37) && v.tol == 16.0 * sqrt(37.0) * FLT_EPSILON); /* tuner/measure.c's rule */
        CHECK(gt_validate(&c.p, c.A, c.B, c.C0, c.C, c.C, &v) && v.worst == 0); /* against R */
        float *e = at(&c, 12, 8), keep = *e;
        *e = nextafterf(nextafterf(keep, INFINITY), INFINITY); /* two ulps: inside 16 sqrt(37) eps */
        CHECK_MSG(gt_validate(&c.p, c.A, c.B, c.C0, c.C, NULL, &v), "case %d: two ulps failed, %g", t, v.worst);
        *e = keep + 1e-3f * fabsf(keep) + 1e-3f;
        CHECK(!gt_validate(&c.p, c.A, c.B, c.C0, c.C, NULL, &v) && v.bad == 1 && v.i == 12 && v.j == 8);
        *e = NAN;
        CHECK(!gt_validate(&c.p, c.A, c.B, c.C0, c.C, NULL, &v) && isinf(v.worst));
        *e = keep;
        float *pad = c.C + (c.p.colmajor ? (size_t)2 * c.p.ldc + 13 : (size_t)2 * c.p.ldc + 9); /* past the window */
        *pad += 1.0f;
        CHECK(!gt_validate(&c.p, c.A, c.B, c.C0, c.C, NULL, &v) && v.pad == 1 && v.bad == 0);
        free_case(&c);
    }
}

static int count_family(const gt_compile_job *jobs, int n, const gt_family *f)
{
    int k = 0;
    for (int i = 0; i < n; ++i) k += jobs[i].f == f;
    return k;
}

GT_TEST(toolkit_sample_spreads_over_every_family, GT_NEEDS_NONE)
{
    int n;
    gt_compile_job *all = gt_compile_default_space("sm_90", &n), *s = malloc(n * sizeof *s);
    memcpy(s, all, n * sizeof *s);
    const int kept = gt_sample_jobs(s, n, 40);
    CHECK_MSG(kept >= 40 && kept <= 40 + 2 * gt_family_count(), "%d kept", kept);
    for (int i = 0, first = 1; i < n; ++i) {
        const int last = i + 1 == n || all[i + 1].f != all[i].f;
        if (!first && !last) continue;
        int found = 0; /* the family's first and last candidates are in the sample */
        for (int k = 0; k < kept; ++k) found |= !memcmp(&s[k].p, &all[i].p, sizeof all[i].p) && s[k].f == all[i].f;
        CHECK_MSG(found, "%s: %s candidate missing", all[i].f->name, first ? "first" : "last");
        CHECK(count_family(s, kept, all[i].f) >= 2 || count_family(all, n, all[i].f) < 2);
        first = last;
    }
    CHECK(gt_sample_jobs(s, kept, 0) == kept && gt_sample_jobs(s, kept, kept) == kept);
    free(all), free(s);
}

/* gt_validate_bound with a bound computed the way a GPU caller does (a GEMM of |A| and |B|: here the reference
 * GEMM on absolute values) reaches the same verdicts as gt_validate. */
GT_TEST(toolkit_validator_with_a_given_bound_agrees, GT_NEEDS_NONE)
{
    for (int t = 0; t < 4; ++t) {
        case_t c = make_case(t >> 1, t & 1, 1 - (t & 1), t % 2 ? 0.5f : 0.0f);
        const size_t na = gt_problem_elems(&c.p, 'A'), nb = gt_problem_elems(&c.p, 'B');
        const size_t nc = gt_problem_elems(&c.p, 'C');
        float *aa = malloc(na * 4), *ab = malloc(nb * 4), *ac = malloc(nc * 4), *bound = malloc(nc * 4);
        float *ref = malloc(nc * 4);
        for (size_t e = 0; e < na; ++e) aa[e] = fabsf(c.A[e]);
        for (size_t e = 0; e < nb; ++e) ab[e] = fabsf(c.B[e]);
        for (size_t e = 0; e < nc; ++e) ac[e] = fabsf(c.C0[e]);
        gt_problem q = c.p;
        q.alpha = fabsf(q.alpha), q.beta = fabsf(q.beta);
        gt_ref_gemm(&q, aa, ab, ac, bound);
        memcpy(ref, c.C, nc * 4);
        gt_verdict v, w;
        CHECK(gt_validate_bound(&c.p, c.C0, c.C, ref, bound, &v) && v.worst == 0);
        float *e = at(&c, 5, 3);
        *e += 1e-3f * fabsf(*e) + 1e-3f;
        CHECK(!gt_validate_bound(&c.p, c.C0, c.C, ref, bound, &v) && v.bad == 1 && v.i == 5 && v.j == 3);
        CHECK(!gt_validate(&c.p, c.A, c.B, c.C0, c.C, NULL, &w) && w.bad == 1 &&
              fabs(v.worst - w.worst) < 1e-3 * w.worst);
        free(aa), free(ab), free(ac), free(bound), free(ref);
        free_case(&c);
    }
}
