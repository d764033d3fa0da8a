/* The ozaki family's parameters and arithmetic (kernels/ozaki.c), shared with the backend that runs it
 * (src/lib/backend_ozaki.c). Plain C: everything here is tested without a GPU (tests/test_ozaki.c). */
#ifndef GT_OZAKI_FAMILY_H
#define GT_OZAKI_FAMILY_H

#include "family.h"

#include <stddef.h>

/* Indices into gt_params.v, in the order of gt_family_ozaki.params. */
enum { GT_OZAKI_P_NMOD, GT_OZAKI_P_REV, GT_OZAKI_P_PICK, GT_OZAKI_NP };

/* The revision of templates/ozaki.cu's arithmetic that this build runs. A stored candidate names the revision it
 * was timed with (REV); one of another revision is not replayed (the backend's replayable), so a change of the
 * kernels is never served on an old timing. Raise it with any change to templates/ozaki.cu that changes results
 * or speed. */
#define GT_OZAKI_REV 7
#define GT_OZAKI_RC 2 /* columns a thread of templates/ozaki.cu's gt_oz_reconstruct */
#define GT_OZAKI_MAX_PICK 7 /* PICK: a rank in cuBLASLt's heuristic list, 0 .. this */
#define GT_OZAKI_MAXMOD 10  /* as templates/ozaki.cu's GT_OZ_MAXMOD */
#define GT_OZAKI_MAX_K 131056 /* K, rounded up to 16, times 128^2 must stay below 2^31: the int32 sums are exact */
#define GT_OZAKI_MAX_SIDE (65535 * 32) /* M and N: the kernels' int block counts and indices stay below 2^31 */
#define GT_OZAKI_WS_CAP ((size_t)8 << 30) /* the most workspace a call may take (residues and int32 products) */

/* What templates/ozaki.cu's kernels take by value, field for field as its gt_oz_consts: the residues are floats
 * holding small integers (exact FP32 arithmetic, at twice the integer rate on the GPU). */
typedef struct {
    double pd[GT_OZAKI_MAXMOD];            /* the first nmod of 256, 255, 253, 251, 247, 241, 239, 233, 229 */
    float p[GT_OZAKI_MAXMOD], invp[GT_OZAKI_MAXMOD]; /* the same as floats, and 1 / p rounded */
    float w[GT_OZAKI_MAXMOD][GT_OZAKI_MAXMOD]; /* Garner's weights mod p_l: w[m][l] = Q_m / Q_l (m < l), w[l][l] =
                                                 1 / Q_l, Q_m the product of the first m moduli */
    float pow16[GT_OZAKI_MAXMOD];          /* 2^16 mod p in p's symmetric range: the rebuild's split of int32 sums */
    float pow22[GT_OZAKI_MAXMOD];          /* 2^22 mod p in p's symmetric range: the residues' split (|x| < 2^22) */
    int bits; /* rows of op(A) and columns of op(B) are scaled to a 2-norm below 2^bits, so that their products'
                 sums stay below half the product P of the moduli */
} gt_ozaki_consts;

/* One operand as templates/ozaki.cu's gt_oz_norms, gt_oz_scales and gt_oz_residues take it (its gt_oz_operand,
 * field for field): rows x K, element (r, k) at X[r ld + k], or at X[k ld + r] when trans; the norms' slices, their
 * partial sums (part, slices x rows doubles), the scales (e, rows ints) and the residues (out, nmod x prow x Kp
 * int8). */
typedef struct {
    const float *X;
    double *part;
    int *e;
    signed char *out;
    int ld, trans, rows, prow, slices, kslice;
} gt_ozaki_operand;

/* The constants for nmod moduli (2 .. 9). Returns 0, or -1 (out untouched) for another count. */
int gt_ozaki_consts_make(int nmod, gt_ozaki_consts *out);

/* The blocks of one launch of templates/ozaki.cu over both operands: op(A)'s first, then op(B)'s. */
typedef struct {
    int a, b;
} gt_ozaki_blocks;

/* Where a call's workspace holds what (bytes from its start, each 256-byte aligned), for nmod moduli on shape s:
 * int32 products (nmod x Mp x Np), the partial norms (slices_a x M + slices_b x N doubles), the scales (M + N
 * ints), the residues of op(A) (nmod x Mp x Kp int8, rows past M zero) and of op(B) (nmod x Np x Kp), then
 * cuBLASLt's own. The products are Np x Mp x Kp, every side a multiple of 16: with an odd M or N cuBLASLt offers one
 * int8 algorithm, 3.4x slower at 8191^3 than 8192^3's best. */
typedef struct {
    int kp, mp, np;               /* K, M and N rounded up to 16 */
    int slices_a, slices_b, kslice_a, kslice_b; /* the norms' K slices */
    gt_ozaki_blocks norms, scales, residues; /* the launches' blocks */
    size_t prod, part, scale, res_a, res_b, lt, total;
} gt_ozaki_layout;

/* The layout of a call of shape s with nmod moduli and lt_bytes of cuBLASLt workspace. The norms' slices depend
 * on the shape alone (about 1056 blocks an operand), so the scales' bits never depend on the GPU. Cannot fail. */
void gt_ozaki_layout_make(int nmod, const gt_shape *s, size_t lt_bytes, gt_ozaki_layout *out);

extern const gt_family gt_family_ozaki;

#endif
