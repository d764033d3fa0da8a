/* Family skinny: GEMMs with one small side (M or N, as SIDE says, up to SR rows, shared out over RG row groups of
 * a warp's lanes), which read the large operand once and split K over the GPU, reduced in a fixed order. Family
 * skinny3, in the tf32x3 math class: the same kernel with its products on tensor cores (TC: three TF32 products a
 * pair, checked against FP64). Template: templates/skinny.cu. Tested by tests/test_skinny.c. */
#include "family.h"

#include <stdio.h>

enum { P_SIDE, P_SR, P_TL, P_WARPS, P_KC, P_STAGES, P_FILL, P_RG, P_CL, P_TC, NPARAMS };

#define REJECT GT_REJECT

/* Rows per lane: SR over the RG row groups of a warp. */
static int rows_per_lane(const gt_params *p) { return p->v[P_SR] / p->v[P_RG]; }

/* Columns of L per block: each of WARPS warps has 32 / RG lanes side by side, TL columns each. */
static long block_cols(const gt_params *p) { return (long)p->v[P_WARPS] * (32 / p->v[P_RG]) * p->v[P_TL]; }

/* Floats of X per k in a stage: RG groups of the rows per lane rounded up to 4, plus 4 where that is a multiple
 * of 8 and there are several groups; with TC, SR + 4 (SK_XK in the template). */
static long x_floats_per_k(const gt_params *p)
{
    const int rp = (rows_per_lane(p) + 3) / 4 * 4, rg = p->v[P_RG];
    if (p->v[P_TC]) return p->v[P_SR] + 4L;
    return (long)rg * (rg > 1 && rp % 8 == 0 ? rp + 4 : rp);
}

/* Floats between the k rows of a stage along L (SK_YP), and between the rows along K (SK_KP). */
static long pitch_l(const gt_params *p) { return block_cols(p) + 4L * p->v[P_TC]; }
static long pitch_k(const gt_params *p)
{
    const long kc = p->v[P_KC];
    return !p->v[P_TC] ? kc + 4 : kc % 16 ? kc : kc + 8;
}

/* X along S (KC rows of x_floats_per_k) or along K (SR rows of KC + 4): the rule of SK_X_SMAJOR. */
static int x_smajor(const gt_params *p, int ta, int tb) { return p->v[P_SIDE] ? !tb : ta; }

/* Dynamic shared memory in layout (ta, tb): STAGES stages of X and of the block's Y tile (SK_XSTAGE and SK_YSTAGE
 * in the template), and with clusters (CL > 1) at least the block's SR x BL sums, which wait there for the
 * cluster's reduction. */
static long smem_bytes(const gt_params *p, int ta, int tb)
{
    const long kc = p->v[P_KC], bl = block_cols(p);
    const long x = x_smajor(p, ta, tb) ? kc * x_floats_per_k(p) : p->v[P_SR] * pitch_k(p);
    const long y = gt_large_along_l(p->v[P_SIDE], ta, tb) ? kc * pitch_l(p) : bl * pitch_k(p); /* SK_Y_LMAJOR */
    const long stages = 4L * p->v[P_STAGES] * (x + y);
    const long sums = p->v[P_CL] > 1 ? 4L * p->v[P_SR] * bl : 0;
    return stages > sums ? stages : sums;
}

/* Registers per thread: the sums, a k-step's Y, a read of X and ~32 for addresses, predicates and loop state
 * (ptxas -v: SR=64 TL=2 uses 170 of 255). With TC, three sets of 8 TL SR / 8 sums, X's split fragments (SR / 2)
 * a tile of Y's (8) and ~20 more (ptxas: SR=40 TL=1 takes 169-188, SR=64 249-255). */
static long regs_estimate(const gt_params *p)
{
    const long r = rows_per_lane(p), tl = p->v[P_TL];
    if (p->v[P_TC]) return 3 * tl * r + r / 2 + 8 + 20;
    return r * tl + 4 * tl + 4 + 32;
}

static int legal_any(const gt_params *p, const gt_limits *lim, char *why, size_t n)
{
    const int *v = p->v;
    if (v[P_SIDE] < 0 || v[P_SIDE] > 1) REJECT("SIDE=%d: 0 (M small) or 1 (N small)", v[P_SIDE]);
    if (v[P_SR] < 2 || v[P_SR] > 256 || v[P_SR] % 2) REJECT("SR=%d: a multiple of 2 in 2..256", v[P_SR]);
    if (v[P_TL] != 1 && v[P_TL] != 2 && v[P_TL] != 4 && v[P_TL] != 8) REJECT("TL=%d: 1, 2, 4 or 8", v[P_TL]);
    if (v[P_RG] != 1 && v[P_RG] != 2 && v[P_RG] != 4 && v[P_RG] != 8) REJECT("RG=%d: 1, 2, 4 or 8", v[P_RG]);
    if (v[P_SR] % v[P_RG]) REJECT("SR=%d: not a multiple of RG=%d", v[P_SR], v[P_RG]);
    if (v[P_WARPS] < 1 || v[P_WARPS] > 32) REJECT("WARPS=%d outside 1..32", v[P_WARPS]);
    if (v[P_KC] < 4 || v[P_KC] > 64 || v[P_KC] % 4) REJECT("KC=%d: a multiple of 4 in 4..64", v[P_KC]);
    if (v[P_STAGES] < 2 || v[P_STAGES] > 8) REJECT("STAGES=%d outside 2..8", v[P_STAGES]);
    if (v[P_FILL] < 1 || v[P_FILL] > 256) REJECT("FILL=%d outside 1..256", v[P_FILL]);
    if (v[P_CL] < 1 || v[P_CL] > 16 || (v[P_CL] & (v[P_CL] - 1))) REJECT("CL=%d: 1, 2, 4, 8 or 16", v[P_CL]);
    if (v[P_CL] > 1 && lim->cc_major < 9) REJECT("CL=%d: clusters need sm_90", v[P_CL]);
    if (v[P_TC] != 0 && v[P_TC] != 1) REJECT("TC=%d: 0 or 1", v[P_TC]);
    if (v[P_TC] && (v[P_RG] != 1 || v[P_CL] != 1 || v[P_SR] % 8 || v[P_KC] % 8 || v[P_TL] > 2))
        REJECT("TC=1: RG=1, CL=1, SR and KC multiples of 8 (the MMA's n and k), TL 1 or 2");
    if (v[P_TC] && lim->cc_major < 8) REJECT("TC=1: mma.sync TF32 needs sm_80 or newer");
    long most = 0; /* the most any layout needs */
    for (int l = 0; l < 4; ++l) {
        const long bytes = smem_bytes(p, l >> 1, l & 1);
        most = bytes > most ? bytes : most;
    }
    return gt_block_fits_dynamic(32L * v[P_WARPS], 1, most, regs_estimate(p), lim, why, n);
}

/* A kernel of either family: skinny's products in FP32, skinny3's on tensor cores. */
static int legal(const gt_params *p, const gt_limits *lim, char *why, size_t n)
{
    if (p->v[P_TC]) REJECT("TC=%d: tensor cores are family skinny3's (math class tf32x3)", p->v[P_TC]);
    return legal_any(p, lim, why, n);
}

static int legal_tc(const gt_params *p, const gt_limits *lim, char *why, size_t n)
{
    if (p->v[P_TC] != 1) REJECT("TC=%d: skinny3 computes on tensor cores (TC=1); FP32 products are skinny's",
                                p->v[P_TC]);
    return legal_any(p, lim, why, n);
}

/* The default space (measured on an H100 over twelve skinny shapes, docs/BENCHMARKS.md, 2026-11-26): row groups
 * with four columns per lane won every shape where skinny won (one group, every lane all rows, ran 8-12% slower
 * on 33x8191x4097, 50x4492x6473 and 64x4096x4096; eight columns per lane 1-4%), 8 to 128 sums per lane; two
 * groups with stages 8 or 16 deep, four with 16 (where every four-group winner was); three stages and four warps
 * (4 or 6 stages and 8 warps won nowhere, and lost up to 12%). Clusters of 8 only with four row groups, where
 * every cluster winner was, beside the same kernels without: on chip the reduction won where K is short
 * (37x7454x391: 18.6 us against 22.3) and by 3-4% at 8x4096x4096 and 16x16384x4096, and lost 5-35% on the other
 * shapes measured (the cluster scheduler fills SMs unevenly; 16 did no better than 8, and 2 or 4 slices too few).
 * Stages 32 deep with four groups and no cluster: where Y's columns run along K (N small in nn, M small in nt) a
 * stage of 16 reads 64 bytes of each, half a line; 32 took 4096x16x4096 from 47.2 us to 39.4 and 4096x8x4096 from
 * 44.7 to 37.0 (and 64, or 4 to 8 stages, or 8 warps bought nothing more on eight shapes with M or N up to 16;
 * rerun once NVRTC compiled four stages right: still nothing). FILL 32 (launch only: no compile) beside 8 to 24
 * for the tall shapes with few tiles: 10240x96x10240 572 -> 559 us, 10240x64x10240 393 -> 391. */
static int in_space(const gt_params *p, char *why, size_t n)
{
    const int tl = p->v[P_TL], rg = p->v[P_RG], r = rows_per_lane(p);
    if (rg == 1) REJECT("default space: row groups (RG=2 or 4)");
    if (tl != 4) REJECT("default space: TL=4");
    if (r * tl > 128 || r * tl < 8) REJECT("default space: 8 to 128 sums per lane");
    if (rg == 2 && p->v[P_KC] > 16) REJECT("default space: two row groups take KC=8 or 16");
    if (rg == 4 && p->v[P_KC] != 16 && (p->v[P_KC] != 32 || p->v[P_CL] != 1))
        REJECT("default space: four row groups take KC=16, or 32 without clusters");
    if (p->v[P_CL] != 1 && (p->v[P_CL] != 8 || rg != 4)) REJECT("default space: CL=8 with four row groups, else 1");
    return 1;
}

/* K slices (gt_skinny_slices): as many as FILL warps per SM hold, each at least two stages deep. */
static int slices(const gt_params *p, const gt_shape *s, int sms, long tiles)
{
    return gt_skinny_slices(s, gt_small_side(p->v[P_SIDE], s), p->v[P_FILL], p->v[P_WARPS], p->v[P_KC], tiles, sms);
}

/* One block per BL columns of L and K slice. With slices and CL = 1, a workspace of the slice count (64 floats, as
 * SK_HEAD) and every slice's S x L partial sums (each slice rounded up to 4 floats: sk_slice), and
 * gt_splitk_reduce with a thread per four elements of C; with CL > 1, at most CL slices, one cluster along z (the
 * launch hook asks for it), reduced on chip. */
static void launch(const gt_params *p, const gt_shape *s, int sms, gt_launch *out)
{
    const long tiles = gt_cdiv(gt_large_side(p->v[P_SIDE], s), block_cols(p));
    int z = slices(p, s, sms, tiles);
    const int cl = p->v[P_CL];
    z = cl > 1 && z > cl ? cl : z;
    *out = (gt_launch){.grid = {(unsigned)tiles, 1, (unsigned)z},
                       .block = {32u * (unsigned)p->v[P_WARPS], 1, 1},
                       .smem = (unsigned)smem_bytes(p, s->ta, s->tb),
                       .splitk = cl > 1 ? 1 : z};
    if (cl == 1) gt_skinny_workspace(s, z, out);
}

/* With clusters (CL > 1), a launch of several K slices (never more than CL) runs each tile's slices as one cluster
 * along z. A batch's grid z walks its matrices instead: no cluster (its launches' z is above CL, or their batch
 * above 1). */
static int launch_hook(const gt_params *p, const gt_launch *L, const gt_args *a, void *stream, gt_launch_extra *out,
                       char *err, size_t errlen)
{
    (void)stream, (void)err, (void)errlen;
    if (p->v[P_CL] > 1 && L->grid[2] > 1 && L->grid[2] <= (unsigned)p->v[P_CL] && a->batch <= 1)
        out->cluster[0] = out->cluster[1] = 1, out->cluster[2] = L->grid[2];
    return 0;
}

/* The cost model's view of a block: SR rows of the small side by the block's columns of the large one. */
static void work(const gt_params *p, gt_work *out)
{
    gt_side_work(p->v[P_SIDE], p->v[P_SR], (int)block_cols(p), (int)regs_estimate(p), out);
}

/* Any layout, ld and alignment (loads pick their width at run time) where the small side fits SR rows, and not
 * so far below SR that most of the arithmetic would be on padding (SR under twice the side, plus 8). An SR of 4 j +
 * 2 (two row groups of 2 j + 1 rows) only for the sides it fits best, 4 j + 1 and 4 j + 2: 33 rows ran 4% faster in
 * 34 than in 36, 50 rows 3% faster in 50 than in 52 (docs/BENCHMARKS.md, 2026-11-28); smaller sides take the
 * multiple of 4 below, whose rows fill whole 16-byte reads. */
static int applicable(const gt_params *p, const gt_call *call)
{
    const int s = gt_small_side(p->v[P_SIDE], &call->shape), sr = p->v[P_SR];
    if (sr % 4 && s <= sr - 2) return 0;
    return s <= sr && sr < 2 * s + 8;
}

/* skinny3: the multiple of 8 at or just above the side (the MMA's n tiles), or the next. */
static int applicable_tc(const gt_params *p, const gt_call *call)
{
    const int s = gt_small_side(p->v[P_SIDE], &call->shape), sr = p->v[P_SR];
    return s <= sr && sr < s + 16;
}

/* skinny3's default space (its table's values): a warp's 32 columns of L (two m16 tiles) with up to 64 rows of S,
 * or 64 columns with up to 16 rows. */
static int in_space_tc(const gt_params *p, char *why, size_t n)
{
    if (p->v[P_TL] == 2 && p->v[P_SR] > 16) REJECT("default space: TL=2 for SR up to 16 (three sets of sums)");
    return 1;
}

const gt_family gt_family_skinny = {
    .name = "skinny",
    .batched = 1,
    .doc = "one side of C small: a warp's row groups hold all its rows, the large operand read once through a "
           "cp.async pipeline, K split over the GPU in one wave and reduced in order",
    .template_name = "skinny.cu",
    .nparams = NPARAMS,
    .params = {{"SIDE", "the small side: 0 M, 1 N", 2, {0, 1}},
               {"SR", "rows of the small side per warp (at least the side)", 30,
                {4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64, 96, 128, 18, 22, 26, 30, 34, 38, 42,
                 46, 50, 54, 58, 62}},
               {"TL", "columns of the large side per lane", 4, {1, 2, 4, 8}},
               {"WARPS", "warps per block", 1, {4}},
               {"KC", "K depth of a pipeline stage", 3, {16, 8, 32}},
               {"STAGES", "pipeline stages in flight", 1, {3}},
               {"FILL", "warps per SM the K split fills, at most (launch only: no compile of its own)", 5,
                {8, 12, 16, 24, 32},
                .launch_only = 1},
               {"RG", "row groups per warp, each SR / RG rows for its lanes' columns", 3, {1, 2, 4}, .optional = 1},
               {"CL", "1: K slices reduced through a workspace; more: the slices (at most CL) one cluster, reduced "
                      "on chip", 5, {1, 2, 4, 8, 16}, .optional = 1},
               {"TC", "0: FP32 products (1 is skinny3's)", 1, {0}, .optional = 1}},
    .legal = legal,
    .in_space = in_space,
    .launch = launch,
    .applicable = applicable,
    .launch_hook = launch_hook,
    .work = work,
    .bias_epilogue = 1, /* where C is written in gt_gemm (one slice, or a cluster's): sk_put adds the bias */
};

const gt_family gt_family_skinny3 = {
    .name = "skinny3",
    .batched = 1,
    .doc = "skinny's kernel with its products on tensor cores (mma.sync): each value split into two TF32 parts, "
           "three products a pair, FP32 accuracy checked against FP64",
    .template_name = "skinny.cu",
    .math = GT_MATH_TF32X3,
    .reference = GT_REF_FP64,
    .nparams = NPARAMS,
    .params = {{"SIDE", "the small side: 0 M, 1 N", 2, {0, 1}},
               {"SR", "rows of the small side per warp (at least the side; a multiple of 8)", 8,
                {8, 16, 24, 32, 40, 48, 56, 64}},
               {"TL", "pairs of 16 columns of the large side per warp", 2, {1, 2}},
               {"WARPS", "warps per block", 1, {4}},
               {"KC", "K depth of a pipeline stage", 2, {32, 16}},
               {"STAGES", "pipeline stages in flight", 1, {3}},
               {"FILL", "warps per SM the K split fills, at most (launch only: no compile of its own)", 4,
                {8, 12, 16, 24},
                .launch_only = 1},
               {"RG", "row groups (1: a warp's MMAs cover its rows)", 1, {1}},
               {"CL", "1: K slices reduced through a workspace", 1, {1}},
               {"TC", "1: the products on tensor cores", 1, {1}}},
    .legal = legal_tc,
    .in_space = in_space_tc,
    .launch = launch,
    .applicable = applicable_tc,
    .work = work,
    .bias_epilogue = 1,
};
