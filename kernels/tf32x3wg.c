/* Family tf32x3wg: FP32-accurate SGEMM on Hopper's warpgroup tensor cores (wgmma, sm_90a only): the tf32x3 family's
 * arithmetic (two TF32 parts per operand value, three products, the big*big chunk folded into FP32 every KC
 * k-values) with both operands split once per block into shared memory and wgmma reading them from there; K may be
 * split over grid z (SPLITK), the slices reduced in a fixed order, or shared out by stream-K (SK); with CT the
 * blocks tile C transposed, C's rows taking the wgmma's N (BN 16 to 128); with PT a block takes tiles in turn, its
 * K loop one pipeline over them, so that a short K's loads and stores overlap.
 * Template: templates/tf32x3wg.cu. Tested by tests/test_tf32x3wg.c and, on the GPU, tests/test_tf32x3.c. */
#include "family.h"

#include <stdio.h>

enum { P_BM, P_BN, P_BK, P_STAGES, P_KC, P_PF, P_MINB, P_SPLITK, P_SK, P_CT, P_EVEN, P_PT, NPARAMS };

typedef struct {
    int bm, bn, bk, stages, kc, pf, minb, splitk, sk, ct, even, pt;
    int threads, bnl, items_a, items_b; /* bnl: rows of B's shared tiles; items: quads of 4 k-values a thread moves
                                           per tile and operand */
    int cm, cn;                         /* a block's tile of C: BM x BN, with CT BN of its rows by BM of its columns */
} shape_t;

static shape_t unpack(const gt_params *p)
{
    const int *v = p->v;
    shape_t s = {v[P_BM],     v[P_BN], v[P_BK], v[P_STAGES], v[P_KC], v[P_PF], v[P_MINB], v[P_SPLITK], v[P_SK],
                 v[P_CT],     v[P_EVEN], v[P_PT], v[P_BM] / 64 * 128, (v[P_BN] + 31) / 32 * 32, 0, 0,
                 v[P_CT] ? v[P_BN] : v[P_BM], v[P_CT] ? v[P_BM] : v[P_BN]};
    if (s.threads > 0) {
        s.items_a = s.bm * s.bk / 4 / s.threads;
        s.items_b = s.bnl * s.bk / 4 / s.threads;
    }
    return s;
}

/* Dynamic shared memory of one block: STAGES stages of the big and small tiles of A and B (the same in every
 * layout: the template stores both operands k-major; B's tiles BN rows rounded up to 32, the template's BNL), and at
 * BK 32 1 KiB of slack to align the 128-byte swizzle's 1024-byte atoms (the template's SMEM_BYTES). */
static long smem_bytes(const shape_t *s)
{
    return 4L * s->stages * 2 * (s->bm + s->bnl) * s->bk + (s->bk == 32) * 1024;
}

/* Registers per thread: three accumulator sets of BN/2 (chunk, corrections, FP32 sum), the operand quads in flight
 * (PF: a whole tile, else the larger operand's share) and ~30 for addresses and loop state. ptxas -v, 128x128
 * blocks: 252 with PF, 240 without, no spills; 64x128 with PF (256 quads in flight) spills. Stream-K's loop needs a
 * few more than this counts: its 128x128 points use 255 and spill 36-112 B (NVRTC, by layout), all outside the k
 * loop's steady path (a reload a k tile in the edge tiles' path only). */
static int regs_estimate(const shape_t *s)
{
    const int big = s->items_a > s->items_b ? s->items_a : s->items_b;
    return 3 * (s->bn / 2) + 4 * (s->pf ? s->items_a + s->items_b : big) + 30;
}

#define REJECT GT_REJECT

extern const gt_family gt_family_tf32x3wg;

/* Values far outside any GPU's reach are refused before any product of them can overflow an int. */
static int bounded(const gt_params *p, char *why, size_t n)
{
    static const int lo[NPARAMS] = {64, 16, 16, 2, 16, 0, 1, 1, 0, 0, 0, 0},
                     hi[NPARAMS] = {256, 128, 256, 3, 65536, 1, 4, 64, 4, 1, 1, 1};
    for (int i = 0; i < NPARAMS; ++i)
        if (p->v[i] < lo[i] || p->v[i] > hi[i])
            REJECT("%s=%d outside %d..%d", gt_family_tf32x3wg.params[i].name, p->v[i], lo[i], hi[i]);
    return 1;
}

/* How the template hands out quads (its Map): in the k-contiguous layout a warp load takes QW quads of 32 / QW
 * rows and the row groups divide among the warps; otherwise a warp load takes 32 rows of one quad, and warps and
 * quads per row divide one another. Either operand may be either, depending on the layout. */
static int quads_map(int rows, const shape_t *s, char *why, size_t n)
{
    const int warps = s->threads / 32, quads = s->bk / 4, qw = quads < 8 ? quads : 8;
    if (rows % 32) REJECT("%d rows: not a multiple of 32", rows);
    if ((rows / (32 / qw)) % warps)
        REJECT("%d rows in groups of %d do not divide among %d warps", rows, 32 / qw, warps);
    if (warps % quads && quads % warps)
        REJECT("%d warps and %d quads per row: neither divides the other", warps, quads);
    return 1;
}

static int legal_tiling(const shape_t *s, char *why, size_t n)
{
    if (s->bm % 64) REJECT("BM=%d not a multiple of 64 (one warpgroup each)", s->bm);
    if (s->bn % 16 || s->bn == 80) REJECT("BN=%d: the template has wgmma N 16, 32, 48, 64, 96, 112 and 128", s->bn);
    if (s->bk % 16) REJECT("BK=%d not a multiple of 16", s->bk);
    if (s->kc % s->bk) REJECT("KC=%d not a multiple of BK=%d", s->kc, s->bk);
    if (s->sk && s->splitk > 1) REJECT("SK=%d with SPLITK=%d: stream-K and split-K are exclusive", s->sk, s->splitk);
    if (s->ct && s->splitk > 1) REJECT("CT with SPLITK=%d: the split's reduce writes C untransposed", s->splitk);
    if (s->pt && (!s->pf || s->sk || s->splitk > 1))
        REJECT("PT with PF=%d, SK=%d, SPLITK=%d: it prefetches into PF's registers, one K slice a tile", s->pf, s->sk,
               s->splitk);
    if (s->even && s->bnl != s->bn)
        REJECT("EVEN with BN=%d: B's tiles hold rows past it (a multiple of 32 only)", s->bn);
    if ((s->bm * s->bk / 4) % s->threads || (s->bnl * s->bk / 4) % s->threads)
        REJECT("%d threads do not share the quads of a tile evenly", s->threads);
    return quads_map(s->bm, s, why, n) && quads_map(s->bnl, s, why, n);
}

static int legal(const gt_params *p, const gt_limits *lim, char *why, size_t n)
{
    if (!bounded(p, why, n)) return 0;
    const shape_t s = unpack(p);
    if (lim->cc_major != 9 || lim->cc_minor != 0)
        REJECT("sm_%d%d: wgmma with sm_90a's features runs on sm_90 only", lim->cc_major, lim->cc_minor);
    return legal_tiling(&s, why, n) &&
           gt_block_fits_dynamic(s.threads, s.minb, smem_bytes(&s), regs_estimate(&s), lim, why, n);
}

/* The default space: BK 32 (16 ran 15-20% slower at 4096^3 and 8192^3, docs/BENCHMARKS.md), PF=0 only where a
 * whole tile in registers would not fit under 255, and K split only by the fast two-warpgroup blocks (128 x 128 and
 * 128 x 64) with 3 stages (every split winner of the workload's sweep had 3), for a deep K over few tiles of C (a
 * weight gradient's 768 x 768 x 8192: 36 blocks of 128 x 128). Folds every 128 k-values, and for unsplit points
 * also every 32: the tensor cores' truncating sums within a chunk decide the error at a short K, where 128 loses to
 * SGEMM on wide inputs (K 64 to 164) and 32 does not, for 2-4% of time at 4096^3 (docs/BENCHMARKS.md). Stream-K
 * with the same blocks, one or two a SM: at a deep K one block's FP32 sum over ~6,000 k-values loses to SGEMM on
 * wide inputs, as the unsplit kernel does, and two a SM halve it (the blocks of a SM take turns). BN 112, and C
 * tiled transposed (CT) with BN 64, 96 or 112, with the 128-row blocks: they are for a side of C that tiles of 64 or
 * 128 pad much (777 rows: 896 in tiles of 128, 784 in tiles of 112). BN 16, 32 and 48 are for a skinny side
 * of C (with CT, its rows: a batch of 1 to 48 through a Linear layer): its few tiles need stream-K, and with 2
 * stages two blocks of BN 16 or 32 share a SM, twice the loads in flight; they fold every 32 k-values, which costs
 * nothing where the loads bind, and folding every 128 lost to SGEMM on wide inputs at 32 x 16384 x 4096 nn. One
 * warpgroup's 64 x 96 tiling C transposed (2 stages) is for a side of C of 64 (attention's P.V and its gradients,
 * 96 x 1024 x 64 x 1024 nn and tn: 7% faster than the 128 x 64 blocks untransposed). PT, blocks taking tiles in
 * turn, for a short K's 128-row points folding every 32 (K 64: attention's Q.K^T, 96 x 1024 x 1024 x 64 nt, 0.273
 * -> 0.234-0.244 ms on H200s, docs/BENCHMARKS.md); folding every 128 its loop spills, and with a longer K it gained
 * nothing measured. */
static int in_space(const gt_params *p, char *why, size_t n)
{
    if (!bounded(p, why, n)) return 0;
    shape_t s = unpack(p);
    if (s.bk != 32) REJECT("default space: BK=%d, only 32", s.bk);
    const int narrow = s.bn < 64; /* a skinny side of C (with CT, its rows) */
    if (narrow && (!s.sk || s.kc != 32 || s.bm != 128 || !s.pf))
        REJECT("default space: BN below 64 only with stream-K, 128-row blocks, KC 32 and PF=1");
    if ((s.splitk > 1 || s.sk) && (s.bm != 128 || s.bn == 96 || !s.pf || (s.stages != 3 && !narrow)))
        REJECT("default space: SPLITK > 1 and SK only for 128-row blocks of BN 64, 112 or 128, 3 stages, PF=1");
    if (s.kc != 128 && (s.kc != 32 || s.splitk > 1)) REJECT("default space: KC 128, or 32 unsplit (stream-K too)");
    if (s.pt && (s.kc != 32 || s.bm != 128))
        REJECT("default space: PT only for 128-row blocks folding every 32 (a short K's; with KC 128 its loop spills)");
    const int ct64 = s.ct && s.bm == 64; /* one warpgroup over 64 columns of C */
    if (ct64 && (s.bn != 96 || s.stages != 2 || !s.pf || s.splitk > 1))
        REJECT("default space: CT with 64-row blocks only as 64 x 96, 2 stages, PF=1, K not split");
    if ((s.bn == 112 || s.ct) && !ct64 && (s.bm != 128 || !s.pf || (s.stages != 3 && !narrow) || s.splitk > 1))
        REJECT("default space: BN=112, and CT but for 64 x 96, only for 128-row blocks with 3 stages and PF=1, K "
               "not split");
    if (s.ct && s.bn == 128) REJECT("default space: CT with BN=128 tiles C as without it");
    s.pf = 1;
    if (p->v[P_PF] == 0 && regs_estimate(&s) <= 255) REJECT("default space: PF=0 where PF=1 fits");
    return 1;
}

/* The cost model's view of a block (tuner/model.c): BM x BN of C, with CT BN of its rows by BM of its columns; the
 * registers regs_estimate counts; and the share of the rate a wgmma of N = BN reaches, BN / (BN + 48): its A operand
 * is read whatever N. Fitted on the 1,808 screens of a GPT-2-sized workload's sweep on an H200 (37 shapes, M 1 to
 * 8192, docs/BENCHMARKS.md, 2026-11-28): the best screen's place in the predicted order, 34th on average before
 * (BM x BN over C whatever CT, the default register guess), 1.3rd after; measured over predicted time 0.49-0.60 for
 * every BN, where it had run from 0.67 (BN 128) to 1.62 (BN 16). */
static void work(const gt_params *p, gt_work *out)
{
    const shape_t s = unpack(p);
    out->tile_m = s.cm;
    out->tile_n = s.cn;
    out->regs = regs_estimate(&s);
    out->rate = (double)s.bn / (s.bn + 48);
}

/* Blocks of s that one sm_90 SM holds (the family runs on sm_90 alone: legal()). */
static int resident(const shape_t *s)
{
    gt_limits lim;
    if (!gt_limits_for_cc(9, 0, &lim)) return 1;
    return gt_blocks_per_sm(s->threads, regs_estimate(s), smem_bytes(s), &lim);
}

/* PT: the tiles of a matrix each block takes (1 to 32), for the least time on the busiest SM. The launch's blocks
 * (a matrix's tiles / per, times the matrices of grid z) run in waves of `slots` (the SMs times the blocks one
 * holds), each block its per tiles and about two K tiles' worth that nothing overlaps: its first tile's loads and
 * its last tile's stores (lone, in tiles). */
static unsigned tiles_per_block(long long tiles, long long matrices, int ktiles, long long slots)
{
    const double lone = 2.0 / ktiles;
    unsigned best = 1;
    double best_t = 0;
    for (long long per = 1; per <= 32 && per <= tiles; ++per) {
        const long long blocks = (tiles + per - 1) / per * matrices, waves = (blocks + slots - 1) / slots;
        const double t = (double)waves * ((double)per + lone);
        if (per == 1 || t < best_t) best = (unsigned)per, best_t = t;
    }
    return best;
}

/* With CT the blocks tile C transposed: N rows by M columns. */
static void launch(const gt_params *p, const gt_shape *call, int sms, gt_launch *out)
{
    const shape_t s = unpack(p);
    gt_shape t = *call;
    if (s.ct) t.m = call->n, t.n = call->m;
    gt_launch_tiles(&t, s.bm, s.bn, (unsigned)s.threads, (unsigned)smem_bytes(&s), s.splitk, 1, out);
    if (s.sk) gt_launch_stream_k(&t, s.bm, s.bn, s.bk, s.sk, sms, out);
    if (s.pt) {
        const long long batch = gt_shape_batch(call), z = batch < GT_BATCH_PER_LAUNCH ? batch : GT_BATCH_PER_LAUNCH;
        const int ktiles = (int)gt_cdiv(call->k, s.bk);
        const long long slots = (sms > 0 ? sms : 1) * resident(&s);
        out->grid[0] = gt_cdiv(out->grid[0], tiles_per_block(out->grid[0], z, ktiles, slots));
    }
}

/* EVEN's calls: the blocks' product (C, or with CT C transposed) whole tiles of BM x BN, the operands 16-byte
 * aligned (gt_call_whole_tiles), BN a multiple of 32 (legal()): the template's check in gemm. */
static int whole_tiles(const gt_params *p, const gt_call *c)
{
    const shape_t s = unpack(p);
    return s.bn % 32 == 0 && gt_call_whole_tiles(c, s.cm, s.cn);
}

/* Every layout, alignment and ld works, but EVEN's variant's whole tiles (whole_tiles); refused besides: a split
 * past GT_SPLITK_WS_CAP of partial sums, and stream-K and PT past a shape whose counts would overflow the template's
 * int (stream-K: K tiles x 2 x blocks, for up to 1024 SMs; PT: the tiles of C, and a block's K tiles, up to 32 tiles'
 * worth). */
static int applicable(const gt_params *p, const gt_call *call)
{
    const shape_t s = unpack(p);
    if (s.even && !whole_tiles(p, call)) return 0;
    if (s.pt && ((long long)gt_cdiv(call->shape.m, s.cm) * gt_cdiv(call->shape.n, s.cn) >= 2147483647LL ||
                 (long long)gt_cdiv(call->shape.k, s.bk) * 32 + 2 >= 2147483647LL))
        return 0;
    if (s.sk) return (long long)gt_cdiv(call->shape.k, s.bk) * 2 * 1024 * s.sk < 2147483647LL;
    return gt_splitk_workspace_fits(s.splitk, &call->shape);
}

/* EVEN=1 wherever the call is whole tiles: the same kernel and results without the edge code, two thirds of what
 * NVRTC compiles (docs/BENCHMARKS.md, 2026-11-27, twelfth session). */
static int specialize(gt_params *p, const gt_call *call)
{
    p->v[P_EVEN] = whole_tiles(p, call);
    return 1;
}

const gt_family gt_family_tf32x3wg = {
    .name = "tf32x3wg",
    .batched = 1,
    .bias_epilogue = 1,
    .doc = "FP32-accurate SGEMM from three TF32 products on wgmma (sm_90a), operands split once into shared memory",
    .template_name = "tf32x3wg.cu",
    .math = GT_MATH_TF32X3,
    .reference = GT_REF_FP64,
    .arch_specific = 1,
    .nparams = NPARAMS,
    .params = {{"BM", "rows of C per block: 64 per warpgroup", 2, {128, 64}},
               {"BN", "columns of C per block: the wgmma's N (16, 32, 48, 64, 96, 112 or 128)", 7,
                {128, 112, 96, 64, 48, 32, 16}},
               {"BK", "K depth of one stage (multiple of 16)", 2, {32, 16}},
               {"STAGES", "shared-memory stages (2 or 3)", 2, {2, 3}},
               {"KC", "k-values between folds into the FP32 accumulator (multiple of BK)", 2, {128, 32}},
               {"PF", "1: the next tile waits in registers for an iteration; 0: loaded one operand at a time", 2,
                {1, 0}},
               {"MINB", "blocks per SM promised to __launch_bounds__", 1, {1}},
               {"SPLITK", "K slices in grid z, partial sums reduced in a fixed order", 5, {1, 2, 3, 4, 8},
                .optional = 1},
               {"SK", "stream-K: a persistent grid of SK blocks per SM shares the tiles' K loops out evenly (0: off)",
                3, {0, 1, 2}, .optional = 1},
               {"CT", "1: blocks tile C transposed, as op(B)^T op(A)^T: C's rows take the wgmma's N, which tiles "
                      "them by any BN (16 to 128), not only by 64 or 128", 2, {0, 1}, .optional = 1},
               {"EVEN", "1: for calls of whole tiles and 16-byte aligned operands only, without edge code (a "
                        "sweep sets it where its shape allows)", 1, {0}, .optional = 1},
               {"PT", "1: a block takes tiles in turn (the launch picks how many), each next tile's loads issued "
                      "before the last one's stores: overlaps them where a short K makes the stores as long as the "
                      "products", 2, {0, 1}, .optional = 1}},
    .legal = legal,
    .in_space = in_space,
    .launch = launch,
    .applicable = applicable,
    .specialize = specialize,
    .work = work,
};
