/* Family skinnyr: skinny's shapes (one small side, M or N as SIDE says) whose large operand runs along the large
 * side, read straight from global memory into registers: each lane holds all SR rows for TL columns 32 apart, P
 * rows of K ahead; each block's slice of X in shared memory; K split over the GPU and reduced in slice order; with
 * KW 2, two warps share each column, each over half of the block's slice, joined in shared memory.
 * Template: templates/skinnyr.cu. Tested by tests/test_skinnyr.c. */
#include "family.h"

#include <stdio.h>

enum { P_SIDE, P_SR, P_TL, P_WARPS, P_P, P_MINB, P_FILL, P_KW, NPARAMS };

/* Shared memory a block may ask for its slice of X: two blocks an SM fit beside each other. */
#define X_BUDGET (96L * 1024)

#define REJECT GT_REJECT

/* Columns of L per block: WARPS / KW warps across them (KW warps share each column), 32 lanes, TL columns each. */
static long block_cols(const gt_params *p) { return 32L * (p->v[P_WARPS] / p->v[P_KW]) * p->v[P_TL]; }

/* Bytes of shared memory the KW - 1 later parts' sums take where they meet part 0's (X's space, reused). */
static long join_bytes(const gt_params *p)
{
    return 4L * (p->v[P_KW] - 1) * (p->v[P_WARPS] / p->v[P_KW]) * 32 * p->v[P_SR] * p->v[P_TL];
}

/* Bytes of a row of K of X in shared memory: SR floats rounded up to 4 (YR_XP). */
static long x_row_bytes(const gt_params *p) { return 4L * ((p->v[P_SR] + 3) / 4 * 4); }

/* The most rows of K a slice may have for its X to fit X_BUDGET: whole steps of P. */
static long most_rows(const gt_params *p) { return X_BUDGET / x_row_bytes(p) / p->v[P_P] * p->v[P_P]; }

/* Rows of K per slice of a split into z, as yr_per in the template: whole steps of P. */
static long rows_per_slice(const gt_params *p, long k, long z)
{
    const long pp = p->v[P_P];
    return ((k + z - 1) / z + pp - 1) / pp * pp;
}

/* Registers per thread: the sums, P rows of the lane's columns, a 16-byte read of X, ~28 for addresses, predicates
 * and loop state (ptxas -v at SR=33: TL=2 P=8 takes 128 under a 128 cap, TL=4 P=8 210). */
static long regs_estimate(const gt_params *p)
{
    const long tl = p->v[P_TL];
    return p->v[P_SR] * tl + p->v[P_P] * tl + 4 + 28;
}

static int legal(const gt_params *p, const gt_limits *lim, char *why, size_t n)
{
    const int *v = p->v;
    if (v[P_SIDE] < 0 || v[P_SIDE] > 1) REJECT("SIDE=%d: 0 (M small) or 1 (N small)", v[P_SIDE]);
    if (v[P_SR] < 1 || v[P_SR] > 64) REJECT("SR=%d outside 1..64", v[P_SR]);
    if (v[P_TL] != 1 && v[P_TL] != 2 && v[P_TL] != 4 && v[P_TL] != 8) REJECT("TL=%d: 1, 2, 4 or 8", v[P_TL]);
    if (v[P_WARPS] < 1 || v[P_WARPS] > 16) REJECT("WARPS=%d outside 1..16", v[P_WARPS]);
    if (v[P_P] < 1 || v[P_P] > 16) REJECT("P=%d outside 1..16", v[P_P]);
    if (v[P_MINB] < 1 || v[P_MINB] > 8) REJECT("MINB=%d outside 1..8", v[P_MINB]);
    if (v[P_KW] < 1 || v[P_KW] > 4 || v[P_WARPS] % v[P_KW])
        REJECT("KW=%d: 1 to 4 and dividing WARPS=%d", v[P_KW], v[P_WARPS]);
    if (join_bytes(p) > X_BUDGET)
        REJECT("KW=%d: %ld bytes of sums to join, over %ld", v[P_KW], join_bytes(p), X_BUDGET);
    if (v[P_FILL] < 1 || v[P_FILL] > 256) REJECT("FILL=%d outside 1..256", v[P_FILL]);
    return gt_block_fits_dynamic(32L * v[P_WARPS], v[P_MINB], X_BUDGET, regs_estimate(p), lim, why, n);
}

/* The default space, measured on an H200 (docs/BENCHMARKS.md, 2026-11-28, twenty-second session): in
 * tests/perf/skinny_direct.cu at 33 rows, two columns a lane in blocks of 8 warps, two blocks an SM, 8 rows in
 * flight won (76-77 us at 33x8191x4097 nn; skinny 84), four columns in blocks of 4 or 8 warps came within 5%, and
 * as this family's sweep they won 79.7 us nn (four columns) and 77.9 us tn (two); at 16 rows eight columns, 4 rows
 * in flight. Up to 40 rows: from 50 rows on every form measured lost to skinny by 15-40% (its row groups share Y
 * through shared memory; a lane of 50 rows has too few registers left for Y in flight). SR: every count to 24, then
 * 26 to 36 in steps of 2, 33 (issue 28's shape) and 40. KW 2 (twenty-third session) only in two blocks of 8 warps an
 * SM: there it took 33x8191x4097 nn from 80.6 to 77.2 us and 16 rows at four columns from 101.6 to 90.8; with one
 * block an SM or blocks of 4 warps it lost 2-9 us. */
static int in_space(const gt_params *p, char *why, size_t n)
{
    const int tl = p->v[P_TL], sr = p->v[P_SR];
    if (sr > 40) REJECT("default space: SR up to 40");
    if (sr * tl > 136 || sr * tl < 8) REJECT("default space: 8 to 136 sums a lane");
    if (p->v[P_P] * tl != 16 && p->v[P_P] * tl != 32) REJECT("default space: 16 or 32 floats of Y in flight a lane");
    if (p->v[P_MINB] * p->v[P_WARPS] > 16) REJECT("default space: at most 16 warps an SM asked of the compiler");
    if (p->v[P_KW] > 1 && (p->v[P_KW] != 2 || p->v[P_WARPS] != 8 || p->v[P_MINB] != 2))
        REJECT("default space: warps share columns (KW 2) only in two blocks of 8 warps an SM");
    return 1;
}

/* K slices (gt_skinny_slices): as many as FILL warps per SM hold, each at least two steps of P rows. */
static int slices(const gt_params *p, const gt_shape *s, int sms, long tiles)
{
    return gt_skinny_slices(s, gt_small_side(p->v[P_SIDE], s), p->v[P_FILL], p->v[P_WARPS], p->v[P_P] * p->v[P_KW],
                            tiles, sms);
}

/* One block per BL columns of L and K slice, with at least enough slices that each one's X fits X_BUDGET (a batch:
 * one slice, K, which applicable() keeps within it), shared memory for that X; with slices, a workspace of the
 * slice count (64 floats, YR_HEAD) and each slice's S x L sums rounded up to 4 floats, and gt_splitk_reduce with a
 * thread per four elements of C. */
static void launch(const gt_params *p, const gt_shape *s, int sms, gt_launch *out)
{
    const long tiles = gt_cdiv(gt_large_side(p->v[P_SIDE], s), block_cols(p)), need = gt_cdiv(s->k, most_rows(p));
    long z = slices(p, s, sms, tiles);
    if (gt_shape_batch(s) <= 1 && z < need) z = need;
    const long rows = rows_per_slice(p, s->k, z), x = rows * x_row_bytes(p);
    *out = (gt_launch){.grid = {(unsigned)tiles, 1, (unsigned)z},
                       .block = {32u * (unsigned)p->v[P_WARPS], 1, 1},
                       .smem = (unsigned)(x > join_bytes(p) ? x : join_bytes(p)),
                       .splitk = (int)z};
    gt_skinny_workspace(s, (int)z, out);
}

/* Where Y runs along L, SR is the smallest of the family's values that holds the small side (a row more is an FMA
 * more for each of the lane's columns on every k), and a batch's K (its one slice) fits X_BUDGET. */
static int applicable(const gt_params *p, const gt_call *call);

/* The cost model's view of a block: SR rows of the small side by the block's columns of the large one. */
static void work(const gt_params *p, gt_work *out)
{
    gt_side_work(p->v[P_SIDE], p->v[P_SR], (int)block_cols(p), (int)regs_estimate(p), out);
}

const gt_family gt_family_skinnyr = {
    .name = "skinnyr",
    .batched = 1,
    .doc = "one side of C small and the large operand along the large side: each lane holds all the small side's "
           "rows and loads its columns straight into registers, rows of K ahead; K split over the GPU, reduced in "
           "order",
    .template_name = "skinnyr.cu",
    .nparams = NPARAMS,
    .params = {{"SIDE", "the small side: 0 M, 1 N", 2, {0, 1}},
               {"SR", "rows of the small side per lane (at least the side)", 32,
                {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
                 17, 18, 19, 20, 21, 22, 23, 24, 26, 28, 30, 32, 33, 34, 36, 40}},
               {"TL", "columns of the large side per lane, 32 apart", 3, {2, 4, 8}},
               {"WARPS", "warps per block", 2, {8, 4}},
               {"P", "rows of K of the large operand in flight in a lane's registers", 2, {8, 4}},
               {"MINB", "blocks per SM asked of the compiler: a register budget", 2, {2, 1}},
               {"FILL", "warps per SM the K split fills, at most (launch only: no compile of its own)", 4,
                {16, 8, 12, 24},
                .launch_only = 1},
               {"KW", "warps sharing their columns, each over its own part of the block's K slice, joined in "
                      "shared memory (fewer slices to reduce)",
                2, {1, 2}, .optional = 1}},
    .legal = legal,
    .in_space = in_space,
    .launch = launch,
    .applicable = applicable,
    .work = work,
};

static int applicable(const gt_params *p, const gt_call *call)
{
    const int s = gt_small_side(p->v[P_SIDE], &call->shape), sr = p->v[P_SR];
    const gt_param *v = &gt_family_skinnyr.params[P_SR];
    if (!gt_large_along_l(p->v[P_SIDE], call->shape.ta, call->shape.tb) || s > sr) return 0;
    if (gt_shape_batch(&call->shape) > 1 && rows_per_slice(p, call->shape.k, 1) > most_rows(p)) return 0;
    for (int i = 0; i < v->nvalues; ++i)
        if (v->values[i] >= s && v->values[i] < sr) return 0; /* a smaller value holds the side */
    return 1;
}
