/* Family skinnyr3 (math class tf32x3): skinnyr's shapes and loads with skinny3's products. One small side of C (M
 * or N, as SIDE says) whose large operand runs along the large side: each lane loads its MMA A fragments of MT
 * m16 tiles straight from global memory into registers, P steps of 8 k ahead, splits each value into two TF32
 * parts and takes three MMAs a pair against the SR / 8 n8 tiles of X, whose block's slice of K waits in shared
 * memory; sums folded into FP32 every four steps; K split over the GPU and reduced in slice order.
 * Template: templates/skinnyr3.cu. Tested by tests/test_skinnyr3.c. */
#include "family.h"

#include <stdio.h>

enum { P_SIDE, P_SR, P_MT, P_WARPS, P_P, P_MINB, P_FILL, NPARAMS };

/* Shared memory a block may ask for its slice of X: two blocks an SM fit beside each other. */
#define X_BUDGET (96L * 1024)

#define REJECT GT_REJECT

/* Columns of L per block: WARPS warps of MT m16 tiles (Y3_BL). */
static long block_cols(const gt_params *p) { return 16L * p->v[P_MT] * p->v[P_WARPS]; }

/* k's of a slice of a split into z, as y3_per in the template: whole groups of P steps of 8. */
static long per_slice(const gt_params *p, long k, long z)
{
    const long g = 8L * p->v[P_P];
    return ((k + z - 1) / z + g - 1) / g * g;
}

/* The most k's a slice may have for its X (SR floats a k) to fit X_BUDGET: whole groups of P steps. */
static long most_k(const gt_params *p)
{
    const long g = 8L * p->v[P_P];
    return X_BUDGET / (4L * p->v[P_SR]) / g * g;
}

/* Registers per thread: the three sums (sum, chunk, corr: 4 floats a tile pair each), P steps of 4 floats a tile,
 * a step's big and small parts (8 a tile), and ~36 for X's parts, addresses and loop state (ptxas, P 4: SR 40 MT 1
 * takes 136 registers, 128 under a 128 cap; SR 40 MT 2 248; SR 48 MT 2 255; SR 56 MT 2 spills 252 bytes). */
static long regs_estimate(const gt_params *p)
{
    const long mt = p->v[P_MT];
    return 12 * mt * (p->v[P_SR] / 8) + 4L * p->v[P_P] * mt + 16 * mt + 36;
}

static int legal(const gt_params *p, const gt_limits *lim, char *why, size_t n)
{
    const int *v = p->v;
    if (v[P_SIDE] < 0 || v[P_SIDE] > 1) REJECT("SIDE=%d: 0 (M small) or 1 (N small)", v[P_SIDE]);
    if (v[P_SR] < 8 || v[P_SR] > 64 || v[P_SR] % 8) REJECT("SR=%d: a multiple of 8 in 8..64", v[P_SR]);
    if (v[P_MT] < 1 || v[P_MT] > 4) REJECT("MT=%d outside 1..4", v[P_MT]);
    if (v[P_WARPS] < 1 || v[P_WARPS] > 16) REJECT("WARPS=%d outside 1..16", v[P_WARPS]);
    if (v[P_P] < 1 || v[P_P] > 8) REJECT("P=%d outside 1..8", v[P_P]);
    if (v[P_MINB] < 1 || v[P_MINB] > 8) REJECT("MINB=%d outside 1..8", v[P_MINB]);
    if (v[P_FILL] < 1 || v[P_FILL] > 256) REJECT("FILL=%d outside 1..256", v[P_FILL]);
    if (lim->cc_major < 8) REJECT("TF32 tensor cores need sm_80 or later");
    if (most_k(p) < 1) REJECT("SR=%d P=%d: one group of steps' X over %ld bytes", v[P_SR], v[P_P], X_BUDGET);
    return gt_block_fits_dynamic(32L * v[P_WARPS], v[P_MINB], X_BUDGET, regs_estimate(p), lim, why, n);
}

/* The default space, measured on an H200 (docs/BENCHMARKS.md, 2026-11-28, twenty-fourth session, the study
 * tests/perf/skinny_tc_direct.cu): blocks of 8 warps, 4 steps in flight; two m16 tiles a warp (one block an SM,
 * 242 registers at SR 40: 33x8191x4097 nn 66.8 us against one tile's 73.9 and skinny3's 77) or one, in one or two
 * blocks an SM (legal() keeps the second where its registers fit; 32x4096x4096 nn ran one tile in 35.3 us, two in
 * 47.0; 16x16384x4096 nn two in 87.4, one in 93.7). 4 warps, 2 steps in flight and 8 steps between folds were
 * slower in the study. */
static int in_space(const gt_params *p, char *why, size_t n)
{
    if (p->v[P_WARPS] != 8 || p->v[P_P] != 4) REJECT("default space: WARPS=8 and P=4");
    if (p->v[P_MT] == 2 && p->v[P_MINB] != 1) REJECT("default space: two tiles a warp in one block an SM");
    return 1;
}

/* K slices (gt_skinny_slices): as many as FILL warps per SM hold, each at least two groups of P steps. */
static int slices(const gt_params *p, const gt_shape *s, int sms, long tiles)
{
    return gt_skinny_slices(s, gt_small_side(p->v[P_SIDE], s), p->v[P_FILL], p->v[P_WARPS], 8 * p->v[P_P], tiles, sms);
}

/* One block per block_cols() columns of L and K slice, with at least enough slices that each one's X fits X_BUDGET
 * (a batch: one slice, K, which applicable() keeps within it), shared memory for that X; with slices, a workspace
 * (gt_skinny_workspace: the slice count, then each slice's S x L sums) and the template's gt_splitk_reduce. */
static void launch(const gt_params *p, const gt_shape *s, int sms, gt_launch *out)
{
    const long tiles = gt_cdiv(gt_large_side(p->v[P_SIDE], s), block_cols(p)), need = gt_cdiv(s->k, most_k(p));
    long z = slices(p, s, sms, tiles);
    if (gt_shape_batch(s) <= 1 && z < need) z = need;
    *out = (gt_launch){.grid = {(unsigned)tiles, 1, (unsigned)z},
                       .block = {32u * (unsigned)p->v[P_WARPS], 1, 1},
                       .smem = (unsigned)(per_slice(p, s->k, z) * p->v[P_SR] * 4),
                       .splitk = (int)z};
    gt_skinny_workspace(s, (int)z, out);
}

/* Where Y runs along L, SR the smallest multiple of 8 that holds the small side (a row group more is three MMAs
 * more for every pair of tiles), and a batch's K (its one slice) within X_BUDGET. */
static int applicable(const gt_params *p, const gt_call *call)
{
    const int s = gt_small_side(p->v[P_SIDE], &call->shape), sr = p->v[P_SR];
    if (!gt_large_along_l(p->v[P_SIDE], call->shape.ta, call->shape.tb) || s > sr || sr >= s + 8) return 0;
    return gt_shape_batch(&call->shape) <= 1 || per_slice(p, call->shape.k, 1) <= most_k(p);
}

/* The cost model's view of a block: SR rows of the small side by the block's columns of the large one. */
static void work(const gt_params *p, gt_work *out)
{
    gt_side_work(p->v[P_SIDE], p->v[P_SR], (int)block_cols(p), (int)regs_estimate(p), out);
}

const gt_family gt_family_skinnyr3 = {
    .name = "skinnyr3",
    .batched = 1,
    .doc = "skinnyr's loads with skinny3's products: the large operand along the large side straight into MMA "
           "fragments, each value split into two TF32 parts, three products a pair, FP32 accuracy checked against "
           "FP64",
    .template_name = "skinnyr3.cu",
    .math = GT_MATH_TF32X3,
    .reference = GT_REF_FP64,
    .nparams = NPARAMS,
    .params = {{"SIDE", "the small side: 0 M, 1 N", 2, {0, 1}},
               {"SR", "rows of the small side (at least the side; a multiple of 8)", 8,
                {8, 16, 24, 32, 40, 48, 56, 64}},
               {"MT", "m16 tiles of the large side per warp", 2, {2, 1}},
               {"WARPS", "warps per block", 2, {8, 4}},
               {"P", "steps of 8 k of the large operand in flight in a lane's registers", 2, {4, 2}},
               {"MINB", "blocks per SM asked of the compiler: a register budget", 2, {1, 2}},
               {"FILL", "warps per SM the K split fills, at most (launch only: no compile of its own)", 4,
                {16, 8, 12, 24},
                .launch_only = 1}},
    .legal = legal,
    .in_space = in_space,
    .launch = launch,
    .applicable = applicable,
    .work = work,
};
