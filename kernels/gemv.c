/* Family gemv: GEMMs with a small side of at most 16 rows (M or N, as SIDE says) whose large operand runs along K,
 * as the rows of W do in y = x W^T: each warp streams whole columns of it with 16-byte loads into registers and
 * adds its lanes' sums at the end, in a fixed order. Template: templates/gemv.cu. Tested by tests/test_gemv.c. */
#include "family.h"

#include <stdio.h>

enum { P_SIDE, P_SR, P_RW, P_WARPS, P_KW, P_U, NPARAMS };

#define REJECT(...) return snprintf(why, n, __VA_ARGS__), 0

static int small_side(const gt_params *p, const gt_shape *s) { return p->v[P_SIDE] ? s->n : s->m; }
static int large_side(const gt_params *p, const gt_shape *s) { return p->v[P_SIDE] ? s->m : s->n; }

/* The large operand runs along K: op(B) stored N x K (SIDE 0), or op(A) stored M x K (SIDE 1): GV_YK. */
static int y_along_k(const gt_params *p, int ta, int tb) { return p->v[P_SIDE] ? !ta : tb; }

/* Columns of L per block: RW for each of the WARPS / KW column groups (GV_BL in the template). */
static long block_cols(const gt_params *p) { return (long)p->v[P_WARPS] / p->v[P_KW] * p->v[P_RW]; }

/* Registers per thread: the RW x SR sums, U loads of four floats per column in flight, and ~40 for addresses, X
 * and loop state. */
static long regs_estimate(const gt_params *p)
{
    return (long)p->v[P_RW] * p->v[P_SR] + 4L * p->v[P_U] * p->v[P_RW] + 40;
}

static int legal(const gt_params *p, const gt_limits *lim, char *why, size_t n)
{
    const int *v = p->v;
    if (v[P_SIDE] < 0 || v[P_SIDE] > 1) REJECT("SIDE=%d: 0 (M small) or 1 (N small)", v[P_SIDE]);
    if (v[P_SR] < 1 || v[P_SR] > 16) REJECT("SR=%d outside 1..16", v[P_SR]);
    if (v[P_RW] < 1 || v[P_RW] > 8) REJECT("RW=%d outside 1..8", v[P_RW]);
    if (v[P_WARPS] < 2 || v[P_WARPS] > 32) REJECT("WARPS=%d outside 2..32", v[P_WARPS]);
    if (v[P_KW] < 1 || v[P_WARPS] % v[P_KW]) REJECT("KW=%d does not divide WARPS=%d", v[P_KW], v[P_WARPS]);
    if (v[P_U] < 1 || v[P_U] > 8) REJECT("U=%d outside 1..8", v[P_U]);
    const long part = v[P_KW] > 1 ? 4L * v[P_WARPS] * v[P_RW] * v[P_SR] : 0; /* the KW warps' sums */
    return gt_block_fits_dynamic(32L * v[P_WARPS], 1, part, regs_estimate(p), lim, why, n);
}

/* One block per block_cols() columns of L, the whole of K; a batch walks grid z (gt_family_launch). */
static void launch(const gt_params *p, const gt_shape *s, int sms, gt_launch *out)
{
    (void)sms;
    *out = (gt_launch){.grid = {gt_cdiv(large_side(p, s), block_cols(p)), 1, 1},
                       .block = {32u * (unsigned)p->v[P_WARPS], 1, 1},
                       .splitk = 1};
}

/* The layouts whose large operand runs along K (in the others the template is correct but reads one element at a
 * time), where the small side fits SR rows and fills more than half of them. */
static int applicable(const gt_params *p, const gt_call *call)
{
    const int s = small_side(p, &call->shape), sr = p->v[P_SR];
    return y_along_k(p, call->shape.ta, call->shape.tb) && s <= sr && 2 * s > sr;
}

/* The cost model's view of a block: SR rows of the small side by the block's columns of the large one. */
static void work(const gt_params *p, gt_work *out)
{
    const int bl = (int)block_cols(p);
    out->tile_m = p->v[P_SIDE] ? bl : p->v[P_SR];
    out->tile_n = p->v[P_SIDE] ? p->v[P_SR] : bl;
    out->regs = (int)regs_estimate(p);
}

const gt_family gt_family_gemv = {
    .name = "gemv",
    .batched = 1,
    .doc = "one side of C at most 16 rows and the large operand along K (y = x W^T): warps stream its columns "
           "into registers and add their lanes' sums in a fixed order",
    .template_name = "gemv.cu",
    .nparams = NPARAMS,
    /* The default space: one or two rows (docs/BENCHMARKS.md, 2026-11-27, H100), where skinny's K split leaves
     * bandwidth unused (1x4096x4096 nn 0.88-0.93x cuBLAS): served at 1.10-1.34x cuBLAS with one row and 1.22-2.62x
     * with two, 73-84% of the bandwidth roofline. Over SR 1-16, RW 1-4, WARPS 4 and 8, KW 1-4, U 2 and 4, the best
     * four of every shape split K over four warps (KW=4), the other values within 1-2% of each other; from four
     * rows on skinny was faster (X's loads, S for every RW of Y's, spill out of L1: 8x4096x4096 nt 51.6 us against
     * 36.9). SR up to 16 stays legal. */
    .params = {{"SIDE", "the small side: 0 M, 1 N", 2, {0, 1}},
               {"SR", "rows of the small side held (at least the side, under twice it)", 2, {1, 2}},
               {"RW", "columns of the large side per warp", 3, {1, 2, 4}},
               {"WARPS", "warps per block", 2, {4, 8}},
               {"KW", "warps that share columns and split K", 1, {4}},
               {"U", "16-byte loads per lane and column in flight", 2, {2, 4}}},
    .legal = legal,
    .launch = launch,
    .applicable = applicable,
    .work = work,
};
