/* The test toolkit, one of each: a CPU reference GEMM and a validator under the product's rule (tests/toolkit.c,
 * plain C with no CUDA, so the CPU emulator tests/emu/ links it too), and the NVRTC compile pool that every test
 * compiling many candidates goes through (tests/toolkit_nvrtc.c). Fixture databases: tests/fixture.h. */
#ifndef GT_TOOLKIT_H
#define GT_TOOLKIT_H

#ifdef __cplusplus
extern "C" { /* the C++ emulator driver links the C objects */
#endif

#include "family.h"

#include <stddef.h>

/* One GEMM call in user terms: row-major per the kernel contract (templates/common.cuh), or column-major with
 * cuBLAS's argument order (colmajor = 1: A is m x k with lda >= m when not transposed, C is m x n, ldc >= m). */
typedef struct {
    int colmajor, ta, tb, m, n, k;
    int lda, ldb, ldc;
    float alpha, beta;
} gt_problem;

/* Tight leading dimensions plus pad elements each. */
gt_problem gt_problem_make(int colmajor, int ta, int tb, int m, int n, int k, int pad, float alpha, float beta);
/* Elements an operand spans, from its first to its last element ('A', 'B' or 'C'): allocations of exactly this
 * size let ASan catch a read past an operand, padding of the last row or column included. */
size_t gt_problem_elems(const gt_problem *p, char operand);
/* A and B uniform in [-1, 1) from *seed (advanced); C0 the same, but NaN over the m x n window when beta == 0 so
 * a kernel that reads C there, or leaves an element unwritten, fails. */
void gt_problem_fill(const gt_problem *p, unsigned *seed, float *A, float *B, float *C0);

/* The reference: C = alpha op(A) op(B) + beta C0 in double, rounded once; C's padding is copied from C0, and
 * beta == 0 never reads C0. */
void gt_ref_gemm(const gt_problem *p, const float *A, const float *B, const float *C0, float *C);

/* What the validator found: the worst scaled error and where, against the tolerance. */
typedef struct {
    double worst, tol;   /* max over C of the scaled error; gt_tolerance(k) */
    long long bad;       /* elements over tol (NaN and Inf included) */
    long long pad;       /* padding elements of C that differ from C0 */
    int i, j;            /* the worst element */
    double got, want;
} gt_verdict;

/* The product's rule (tuner/measure.c): per element |c - r| / (|alpha| (|A||B|)_ij + |beta c0_ij|) must stay
 * under gt_tolerance(k) = 16 sqrt(k) FLT_EPSILON; NaN or Inf fails, and so does any change to C's padding. r is
 * R's element, or with R == NULL the reference computed here in double. Returns 1 when C passes. */
int gt_validate(const gt_problem *p, const float *A, const float *B, const float *C0, const float *C, const float *R,
                gt_verdict *v);
/* The same rule where the caller has the reference R and the bound |alpha| (|A||B|)_ij + |beta c0_ij| (both laid
 * out as C), e.g. from cuBLAS on |A| and |B| for a shape too large for the CPU reference. Returns 1 when C passes. */
int gt_validate_bound(const gt_problem *p, const float *C0, const float *C, const float *R, const float *bound,
                      gt_verdict *v);
/* One line: the problem, and the verdict's worst element and counts. */
void gt_verdict_text(const gt_problem *p, const gt_verdict *v, char *buf, size_t n);

/* One compile for the pool: what to build and what came of it. */
typedef struct {
    const gt_family *f;
    gt_params p;
    int ta, tb;
    int batch;                        /* 1: a strided batch's source (GT_BATCHED), as gt_render renders it */
    int rc;                           /* 0 compiled, 1 NVRTC refused the source, -1 render or NVRTC failure,
                                         -2 not run */
    int regs, spill_bytes, stack_bytes;
    int has_gemm, has_reduce;         /* the cubin defines gt_gemm / gt_splitk_reduce */
    double seconds;
    char err[200];                    /* the failure, or the start of NVRTC's log */
    void *keep;                       /* set: a gt_cubin (compile.h) that keeps the cubin, for a GPU test to load */
} gt_compile_job;

/* p with f's parameter `name` set to v (unchanged when f has no such parameter). Cannot fail. */
gt_params gt_params_with(const gt_family *f, gt_params p, const char *name, int v);

/* f's legal() on p under arch's limits (gt_limits_for_arch), why it is not in why. */
int gt_legal_on(const gt_family *f, const char *arch, const gt_params *p, char *why, size_t n);

/* A point f's legal() must refuse, and a word its reason must hold. */
typedef struct {
    gt_params p;
    const char *word;
} gt_refusal;

/* The index of the first of the n points that f's legal() on arch takes, or refuses without the point's word (why:
 * the reason, "" where it was taken); -1 when each is refused for its word. */
int gt_first_not_refused(const gt_family *f, const char *arch, const gt_refusal *bad, size_t n, char *why,
                         size_t wn);

/* src with each `#include "NAME"` of a template header replaced by the header's text (gt_template_text), headers
 * inside headers too, each header once as its include guard would have it: the program NVRTC compiles, for tests
 * that look for what a kernel's source holds. malloc'd; NULL when a header is missing. */
char *gt_source_expand(const char *src);

/* A job for f at p in layout (ta, tb), not run yet. */
gt_compile_job gt_compile_job_make(const gt_family *f, const gt_params *p, int ta, int tb);
/* Every default candidate of every sweepable family that NVRTC builds under arch's limits, in the nn layout, in
 * enumeration order (grouped by family). malloc'd; *n gets the count. */
gt_compile_job *gt_compile_default_space(const char *arch, int *n);
/* Compile every job for arch (a virtual "compute_90": to PTX only, no registers known) on one thread per core, the costliest first (by threads' share of the tile), with a
 * progress line every 10 s and a closing line on how busy the threads were. Returns the number that failed. */
int gt_compile_all(gt_compile_job *jobs, int n, const char *arch, const char *what);

/* The register cap __launch_bounds__(threads, MINB) sets job j's kernel: 65536 / (threads x MINB), at most 255. */
int gt_compile_reg_cap(const gt_compile_job *j);

/* Compile the jobs for arch (gt_compile_all, after the GT_SAMPLE sample): each must compile with no spills, no
 * stack, registers within the cap __launch_bounds__(threads, MINB) sets, and gt_gemm without a split-K reduce;
 * CHECK failures name the job. One line per job with its registers. */
void gt_compile_all_clean(gt_compile_job *jobs, int n, const char *arch, const char *what);

/* How many of its n compiles a test should keep: all (0) unless $GT_SAMPLE is set (make asan: 16), which is the
 * sample of the whole default space; a test compiling n keeps the same share, GT_SAMPLE * n / (default space),
 * at least 1 (and gt_sample_jobs keeps each family's first and last). */
int gt_sample_wanted(int n);
/* Keep a spread sample of about want jobs (jobs grouped by family): every family, with its first and last job
 * and evenly spaced ones between, in proportion to its share. Compacts jobs in place, prints what it kept
 * (family and indices, so a failure can be rerun), returns the new count. want <= 0 or >= n keeps all. */
int gt_sample_jobs(gt_compile_job *jobs, int n, int want);

#ifdef __cplusplus
}
#endif

#endif
