/* Family gemv: GEMMs with a small side of at most 16 rows (M or N, as SIDE says) whose large operand runs along K,
 * as the rows of W do in y = x W^T: each warp streams whole columns of it with 16-byte loads into registers (X
 * through L1, or from three rows on staged in shared memory) and adds its lanes' sums at the end, in a fixed order.
 * Template: templates/gemv.cu. Tested by tests/test_gemv.c. */
#include "family.h"

#include <stdio.h>

enum { P_SIDE, P_SR, P_RW, P_WARPS, P_KW, P_U, P_XS, NPARAMS };

#define REJECT GT_REJECT

/* Columns of L per block: RW for each of the WARPS / KW column groups (GV_BL in the template). */
static long block_cols(const gt_params *p) { return (long)p->v[P_WARPS] / p->v[P_KW] * p->v[P_RW]; }

/* Dynamic shared memory: with XS, two chunks of X, each SR rounded up to 4 by 128 U floats (GV_XBUF in the
 * template). */
static long smem_bytes(const gt_params *p)
{
    return p->v[P_XS] ? 2L * ((p->v[P_SR] + 3) / 4 * 4) * 128 * p->v[P_U] * 4 : 0;
}

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
    if (v[P_XS] < 0 || v[P_XS] > 1) REJECT("XS=%d: 0 or 1", v[P_XS]);
    if (v[P_XS] && v[P_KW] != 1) REJECT("XS=1 with KW=%d: the block's warps walk K together, KW=1", v[P_KW]);
    const long part = v[P_KW] > 1 ? 4L * v[P_WARPS] * v[P_RW] * v[P_SR] : 0; /* the KW warps' sums */
    return gt_block_fits_dynamic(32L * v[P_WARPS], 1, part + smem_bytes(p), regs_estimate(p), lim, why, n);
}

/* The default space (docs/BENCHMARKS.md, 2026-11-27, H100; an exploration over SR 1-16, RW 1-4, WARPS 4 and 8, KW
 * 1 and 4, U 2 and 4, XS 0 and 1 on twelve shapes): one or two rows read X through L1 with K split over four warps
 * (every best four of those shapes), and the other values stay (within 1-2% of each other); from three rows X's
 * chunks in shared memory, which took 8x4096x4096 nt from 52.2 us to 32.1 and 4096x8x4096 nn from 144.5 to 32.7
 * (X along S, its pieces swizzled), with 8 warps and U=4 as every such winner had; sixteen rows stay out, skinny
 * ran them faster (4096x16x4096 nn 40.7 us against 52.6). One or two rows also split K over eight warps of eight or
 * sixteen of sixteen (ninth session: every such candidate timed, U up to 8, WARPS up to 16; 2.4-3.6% faster than
 * four warps at 1x4096x4096, 1x16384x4096, 1x4096x16384 and 2x4096x4096 nt, the best of each). */
static int in_space(const gt_params *p, char *why, size_t n)
{
    const int sr = p->v[P_SR], kw = p->v[P_KW], warps = p->v[P_WARPS];
    if (sr > 8) REJECT("default space: SR up to 8 (skinny ran sixteen rows faster)");
    if (sr <= 2 && (p->v[P_XS] || !((kw == 4 && warps <= 8) || kw == warps)))
        REJECT("default space: one or two rows take XS=0 and KW=4 (4 or 8 warps), 8 (8 warps) or 16 (16 warps)");
    if (sr > 2 && (!p->v[P_XS] || p->v[P_WARPS] != 8 || p->v[P_U] != 4))
        REJECT("default space: from three rows XS=1, WARPS=8 and U=4");
    return 1;
}

/* One block per block_cols() columns of L, the whole of K; a batch walks grid z (gt_family_launch). */
static void launch(const gt_params *p, const gt_shape *s, int sms, gt_launch *out)
{
    (void)sms;
    *out = (gt_launch){.grid = {gt_cdiv(gt_large_side(p->v[P_SIDE], s), block_cols(p)), 1, 1},
                       .block = {32u * (unsigned)p->v[P_WARPS], 1, 1},
                       .smem = (unsigned)smem_bytes(p),
                       .splitk = 1};
}

/* The layouts whose large operand runs along K (in the others the template is correct but reads one element at a
 * time), where the small side fits SR rows and fills more than half of them. */
static int applicable(const gt_params *p, const gt_call *call)
{
    const int s = gt_small_side(p->v[P_SIDE], &call->shape), sr = p->v[P_SR];
    return !gt_large_along_l(p->v[P_SIDE], call->shape.ta, call->shape.tb) && s <= sr && 2 * s > sr; /* GV_YK */
}

/* The cost model's view of a block: SR rows of the small side by the block's columns of the large one. */
static void work(const gt_params *p, gt_work *out)
{
    gt_side_work(p->v[P_SIDE], p->v[P_SR], (int)block_cols(p), (int)regs_estimate(p), out);
}

const gt_family gt_family_gemv = {
    .name = "gemv",
    .batched = 1,
    .doc = "one side of C at most 16 rows and the large operand along K (y = x W^T): warps stream its columns "
           "into registers and add their lanes' sums in a fixed order",
    .template_name = "gemv.cu",
    .nparams = NPARAMS,
    .params = {{"SIDE", "the small side: 0 M, 1 N", 2, {0, 1}},
               {"SR", "rows of the small side held (at least the side, under twice it)", 4, {1, 2, 4, 8}},
               {"RW", "columns of the large side per warp", 3, {1, 2, 4}},
               {"WARPS", "warps per block", 3, {4, 8, 16}},
               {"KW", "warps that share columns and split K", 4, {4, 1, 8, 16}},
               {"U", "16-byte loads per lane and column in flight", 2, {2, 4}},
               {"XS", "1: X's chunk of K in shared memory, the block's warps on it together (KW=1)", 2, {0, 1}}},
    .legal = legal,
    .in_space = in_space,
    .launch = launch,
    .applicable = applicable,
    .work = work,
    .bias_epilogue = 1, /* no workspace: gv_put adds a cuBLASLt call's bias as it writes C */
};
