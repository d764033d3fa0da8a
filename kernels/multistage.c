/* Family multistage: warp-tiled FFMA SGEMM with a cp.async pipeline of STAGES shared-memory buffers, block
 * rasterization, deterministic split-K and deterministic stream-K; KT brings an operand stored with k contiguous
 * by 16-byte loads. Template: templates/multistage.cu. Tested by tests/test_multistage.c. */
#include "family.h"

#include <stdio.h>

enum { P_BM, P_BN, P_BK, P_WM, P_WN, P_WNITER, P_TM, P_TN, P_STAGES, P_MINB, P_RASTER, P_SPLITK, P_SK, P_EDGE, P_KT,
       P_EVEN, NPARAMS };

#define PAD 4 /* floats after each k row of a shared tile, as in the template */

typedef struct {
    int bm, bn, bk, wm, wn, wniter, tm, tn, stages, minb, raster, splitk, sk, edge, kt;
    int threads, wmiter, wsubm, wsubn;
} shape_t;

static shape_t unpack(const gt_params *p)
{
    const int *v = p->v;
    shape_t s = {v[P_BM], v[P_BN], v[P_BK], v[P_WM], v[P_WN], v[P_WNITER], v[P_TM], v[P_TN], v[P_STAGES],
                 v[P_MINB], v[P_RASTER], v[P_SPLITK], v[P_SK], v[P_EDGE], v[P_KT], 0, 0, 0, 0};
    if (s.wm > 0 && s.wn > 0 && s.tm > 0 && s.tn > 0 && s.wniter > 0) {
        s.threads = s.bm / s.wm * (s.bn / s.wn) * 32;
        s.wmiter = s.wm * s.wn / (32 * s.tm * s.tn * s.wniter);
        s.wsubm = s.wmiter ? s.wm / s.wmiter : 0;
        s.wsubn = s.wn / s.wniter;
    }
    return s;
}

/* Dynamic shared memory of one block: STAGES k-major tiles of A and B, each row padded. */
static unsigned smem_bytes(const shape_t *s) { return (unsigned)(4 * s->stages * s->bk * (s->bm + s->bn + 2 * PAD)); }

/* Registers per thread: accumulators, two fragment buffers, ~28 for addresses, predicates and loop state, ~32
 * more for stream-K's work loop (ptxas -v: 128x128 8x8 uses 124 under a 128 cap, 256x128 16x8 stays under 255
 * without spills; with stream-K 159-161 and 222-226). */
static int regs_estimate(const shape_t *s)
{
    const int fm = s->wmiter * s->tm, fn = s->wniter * s->tn;
    const int quads = s->kt ? gt_cdiv(s->bm * s->bk / 4, s->threads) + gt_cdiv(s->bn * s->bk / 4, s->threads) : 0;
    return fm * fn + 2 * (fm + fn) + 28 + (s->sk > 0 ? 32 : 0) + 4 * quads;
}

/* LDS.128 runs in quarter-warp phases; a phase is conflict-free when its distinct 16-byte addresses fall in
 * distinct 16-byte bank groups. Lane l of a warp reads row offset (l / tcols) * TM and column offset
 * (l % tcols) * TN of its sub-tile, plus 4v for the v-th LDS.128 of a fragment. */
static int conflict_free(int tcols, int tm, int tn)
{
    for (int q = 0; q < 4; ++q)
        for (int side = 0; side < 2; ++side)
            for (int v = 0; v < (side ? tn : tm); v += 4) {
                int owner[8];
                for (int g = 0; g < 8; ++g) owner[g] = -1;
                for (int l = 8 * q; l < 8 * q + 8; ++l) {
                    const int off = (side ? l % tcols * tn : l / tcols * tm) + v, g = off / 4 % 8;
                    if (owner[g] >= 0 && owner[g] != off) return 0;
                    owner[g] = off;
                }
            }
    return 1;
}

#define REJECT GT_REJECT

/* The block's 16-byte copies of a k-major stage of D columns (copy_kmajor in the template): a pass covers
 * NT / (D / 4) whole k rows; where D / 4 does not divide NT (128 threads, a 96-wide tile), the threads past the last
 * whole row copy part of the next pass's first row, which that pass copies again (the same bytes), and their last
 * pass stays inside the stage only where BK is not a multiple of the rows a pass covers (the template then stops
 * each thread at BK). */
static int copies_cover(int threads, int d, int bk)
{
    const int cpr = d / 4;
    return d % 4 == 0 && threads >= cpr && (threads % cpr == 0 || bk % (threads / cpr) != 0);
}

static int legal_tiling(const shape_t *s, char *why, size_t n)
{
    if (s->bm <= 0 || s->bn <= 0 || s->bk <= 0 || s->wm <= 0 || s->wn <= 0 || s->wniter <= 0 || s->tm <= 0 ||
        s->tn <= 0)
        REJECT("non-positive tile parameter");
    if (s->bk % 8 || s->tm % 4 || s->tn % 4) REJECT("BK must be a multiple of 8, TM and TN of 4");
    if (s->bm % s->wm || s->bn % s->wn) REJECT("BM %% WM or BN %% WN != 0");
    if (s->wn % s->wniter || s->wm * s->wn % (32 * s->tm * s->tn * s->wniter) || s->wmiter < 1)
        REJECT("warp tile %dx%d does not split into 32 threads x WNITER=%d x %dx%d", s->wm, s->wn, s->wniter, s->tm,
               s->tn);
    if (s->wm % s->wmiter || s->wsubm % s->tm || s->wsubn % s->tn)
        REJECT("(WM/WMITER) %% TM or (WN/WNITER) %% TN != 0");
    if (s->wsubm / s->tm * (s->wsubn / s->tn) != 32) REJECT("warp sub-tile is not 32 thread tiles");
    if (!copies_cover(s->threads, s->bm, s->bk) || !copies_cover(s->threads, s->bn, s->bk))
        REJECT("%d threads do not cover the copies of a %d- or %d-wide stage", s->threads, s->bm, s->bn);
    if (!conflict_free(s->wsubn / s->tn, s->tm, s->tn)) REJECT("fragment LDS.128 has bank conflicts");
    return 1;
}

/* Skinny tiles for problems with M or N of about 16 (16 x 16384 x 4096 wastes three quarters of a 64-row tile):
 * 16 rows (or columns) by 128 or 256, one warp across the 16, with split-K or stream-K to fill the GPU. */
static int skinny(const shape_t *s, char *why, size_t n)
{
    const int wide = s->bm == 16 ? s->bn : s->bm, warp_long = s->bm == 16 ? s->wn : s->wm;
    if (s->bm == s->bn || wide < 128 || (s->bm == 16 ? s->wm : s->wn) != 16 || warp_long != 64)
        REJECT("default space: a 16-wide tile is 16 x 128 or 16 x 256, warps 16 x 64");
    if (s->stages != 3 || s->bk != 8 || s->minb > 1 || s->raster > 1 || s->splitk == 2 || s->splitk > 16 || s->edge)
        REJECT("default space: 16-wide tiles with 3 stages, BK=8, MINB=1, RASTER=1, SPLITK 1, 4, 8 or 16, EDGE=0");
    return 1;
}

/* 96-wide tiles for a side of 96 or so (10240 x 96 x 10240 wastes a quarter of a 128-wide tile): 96 by 64, 128 or
 * 256 with the pipeline the other tiles' winners have, unsplit or split 4 or 8 ways, or streamed (an exploration of
 * every candidate on side-96 shapes found no other winner, docs/BENCHMARKS.md). Their warps may be 48 wide across
 * the 96 (two warps, three sub-tiles of 16 each: a thread's 8 x 12 sums read 20 floats a k where a 32-wide warp's
 * 8 x 8 read 16; 10240 x 96 x 10240 nn 510 -> 457 us, docs/BENCHMARKS.md, twenty-sixth session). Streamed, they
 * may also take k 16 at a time through 2 stages, with KT too (10240 x 96 x 10240 tn 432 -> 416 us, tt 431 -> 417
 * with KT, twenty-ninth session). */
static int wide96_deep(const shape_t *s)
{
    return (s->bm == 96 || s->bn == 96) && s->bk == 16 && s->stages == 2 && s->sk > 0 && s->minb == 1 &&
           s->raster == 1 && s->splitk == 1 && !s->edge;
}

static int wide96(const shape_t *s, char *why, size_t n)
{
    if (s->bm == s->bn || (s->bm == 96 ? s->bn : s->bm) < 64)
        REJECT("default space: a 96-wide tile is 96 x 64, 128 or 256");
    if (wide96_deep(s)) return 1;
    if (s->stages != 3 || s->bk != 8 || s->minb > 1 || s->raster > 1 || (s->splitk != 1 && s->splitk != 4 && s->splitk != 8))
        REJECT("default space: 96-wide tiles with 3 stages, BK=8, MINB=1, RASTER=1, SPLITK 1, 4 or 8 (or streamed "
               "with BK=16 and 2 stages)");
    return 1;
}

/* The default space's shape, not hardware limits (in_space): these keep the sweep near 490 points (about 250
 * without stream-K, EDGE and the 16- and 96-wide tiles) by dropping combinations that only repeat others or cannot
 * win. A kernel outside them is still legal and runs. */
static int shaped(const shape_t *s, char *why, size_t n)
{
    const int fm = s->wmiter * s->tm, fn = s->wniter * s->tn;
    if ((s->bm == 16 || s->bn == 16) && s->kt) REJECT("default space: no KT=1 for 16-wide tiles (not measured)");
    if (s->bm == 16 || s->bn == 16) return skinny(s, why, n);
    if ((s->wm == 48 || s->wn == 48 || s->wniter == 3) && s->bm != 96 && s->bn != 96)
        REJECT("default space: 48-wide warp tiles (and WNITER=3, which only they take) in 96-wide tiles only");
    if ((s->bm == 96 || s->bn == 96) && !wide96(s, why, n)) return 0;
    if (s->wm * s->wn < 2048) REJECT("default space: warp tiles of at least 64 results per thread");
    if (fm > 2 * fn || fn > 2 * fm) REJECT("default space: thread tile %dx%d more than 2:1", fm, fn);
    if (3 * s->bm > 8 * s->bn || 3 * s->bn > 8 * s->bm || s->bm * s->bn > 256 * 128 ||
        ((s->bm > 2 * s->bn || s->bn > 2 * s->bm) && s->bm != 96 && s->bn != 96))
        REJECT("default space: block tiles up to 256x128, at most 2:1 (256 x 96 and 96 x 256 too)");
    if (s->bk > 8 && s->stages > 3) REJECT("default space: BK > 8 with at most 3 stages");
    if (s->minb > 1 && 65536 / (s->threads * s->minb) >= 255)
        REJECT("default space: MINB > 1 only where it lowers the register cap");
    if (s->raster > 1 && (s->splitk > 1 || s->bm * s->bn < 128 * 128))
        REJECT("default space: RASTER > 1 only for tiles of 128x128 and more without split-K");
    if (s->splitk > 1 && (s->bm * s->bn > 128 * 128 || s->minb > 1 || s->stages != 3 || (s->bk != 8 && s->bm != s->bn)))
        REJECT("default space: SPLITK > 1 only with tiles up to 128x128, 3 stages, MINB=1, BK=16 on square tiles");
    if ((s->sk > 0 || s->edge) && !wide96_deep(s) && (s->minb > 1 || s->stages != 3 || s->bk != 8 || s->raster > 1))
        REJECT("default space: SK > 0 or EDGE=1 only with MINB=1, 3 stages, BK=8 and RASTER=1");
    if (s->edge && (s->sk > 0 || s->splitk > 8))
        REJECT("default space: EDGE=1 only without stream-K (which has the edge loop anyway), SPLITK up to 8");
    if (s->kt && !wide96_deep(s) &&
        (s->bk != 8 || s->minb > 1 || s->raster > 1 || s->splitk > 1 || s->edge || (!s->sk && s->stages != 2)))
        REJECT("default space: KT=1 with BK=8 (two quads a row: conflict-free stores), MINB=1, RASTER=1, unsplit, "
               "EDGE=0, and stream-K or 2 stages (as every KT winner of the exploration), or in streamed 96-wide "
               "tiles with BK=16");
    if (s->sk > 1 && (s->threads * regs_estimate(s) > 32768 || 2 * smem_bytes(s) > 200 * 1024))
        REJECT("default space: SK=%d where %d blocks cannot share an SM", s->sk, s->sk);
    return 1;
}

extern const gt_family gt_family_multistage;

/* Values far outside any GPU's reach are refused before any product of them can overflow an int. */
static int bounded(const gt_params *p, char *why, size_t n)
{
    static const int hi[NPARAMS] = {1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024, 8, 32, 65535, 65535, 8, 1, 1, 1};
    for (int i = 0; i < NPARAMS; ++i) {
        const int lo = i == P_SK || i == P_EDGE || i == P_KT || i == P_EVEN ? 0 : 1;
        if (p->v[i] < lo || p->v[i] > hi[i])
            REJECT("%s=%d outside %d..%d", gt_family_multistage.params[i].name, p->v[i], lo, hi[i]);
    }
    return 1;
}

static int legal(const gt_params *p, const gt_limits *lim, char *why, size_t n)
{
    if (!bounded(p, why, n)) return 0;
    const shape_t s = unpack(p);
    if (!legal_tiling(&s, why, n)) return 0;
    if (s.stages < 2 || s.stages > 8) REJECT("STAGES=%d outside 2..8", s.stages);
    if (s.minb < 1 || s.raster < 1 || s.splitk < 1) REJECT("MINB, RASTER and SPLITK must be >= 1");
    if (s.sk > 0 && s.splitk > 1) REJECT("SK=%d with SPLITK=%d: stream-K and split-K are exclusive", s.sk, s.splitk);
    return gt_block_fits_dynamic(s.threads, s.minb, smem_bytes(&s), regs_estimate(&s), lim, why, n);
}

static int in_space(const gt_params *p, char *why, size_t n)
{
    if (!bounded(p, why, n)) return 0;
    const shape_t s = unpack(p);
    return shaped(&s, why, n);
}

static void launch(const gt_params *p, const gt_shape *sh, int sms, gt_launch *out)
{
    const shape_t s = unpack(p);
    gt_launch_tiles(sh, s.bm, s.bn, (unsigned)s.threads, smem_bytes(&s), s.splitk, 1, out);
    if (s.sk > 0) gt_launch_stream_k(sh, s.bm, s.bn, s.bk, s.sk, sms, out);
}

/* The cost model's view of a block: its BM x BN tile and the registers legal() estimates. */
static void work(const gt_params *p, gt_work *out)
{
    const shape_t s = unpack(p);
    *out = (gt_work){.tile_m = s.bm, .tile_n = s.bn, .regs = regs_estimate(&s)};
}

/* EVEN's calls: C whole tiles, operands 16-byte aligned (gt_call_whole_tiles), as the template's check in gt_gemm. */
static int whole_tiles(const gt_params *p, const gt_call *c) { return gt_call_whole_tiles(c, p->v[P_BM], p->v[P_BN]); }

/* Every layout, alignment and ld works (the kernel picks 16-byte copies at run time), but EVEN's variant's whole
 * tiles (whole_tiles); refused besides: a split-K workspace past GT_SPLITK_WS_CAP (gt_splitk_workspace_fits;
 * stream-K's is at most two tiles per block), and stream-K past a K whose iteration count would overflow the
 * template's int (K tiles x 2 x blocks, for up to 1024 SMs). */
static int applicable(const gt_params *p, const gt_call *call)
{
    if (p->v[P_EVEN] && !whole_tiles(p, call)) return 0;
    if (p->v[P_KT] && !call->shape.tb) return 0; /* KT: for B stored with k contiguous (nt, tt; nn lost 1-4%) */
    if (p->v[P_SK] > 0) /* the template counts stream-K iterations (< 2 x blocks x K tiles) in an int */
        return (long long)gt_cdiv(call->shape.k, p->v[P_BK]) * 2 * 1024 * p->v[P_SK] < 2147483647LL;
    return gt_splitk_workspace_fits(p->v[P_SPLITK], &call->shape);
}

/* EVEN=1 wherever the call is whole tiles: the same kernel and results without the edge code, which is half of
 * what NVRTC compiles (docs/BENCHMARKS.md, 2026-11-27, twelfth session). There EDGE (the edge blocks' own loop)
 * means nothing: its variant is EDGE=0's, so an EDGE=1 point is another point's variant (0). */
static int specialize(gt_params *p, const gt_call *call)
{
    p->v[P_EVEN] = whole_tiles(p, call);
    if (!p->v[P_EVEN] || !p->v[P_EDGE]) return 1;
    p->v[P_EDGE] = 0;
    return 0;
}

const gt_family gt_family_multistage = {
    .name = "multistage",
    .order = 8,
    .batched = 1,
    .doc = "warp-tiled FFMA with a STAGES-deep cp.async pipeline, rasterized blocks and split-K",
    .template_name = "multistage.cu",
    .nparams = NPARAMS,
    .params = {{"BM", "rows of C per block", 5, {64, 128, 256, 16, 96}},
               {"BN", "columns of C per block", 5, {64, 128, 256, 16, 96}},
               {"BK", "K depth of one pipeline stage (multiple of 8)", 2, {8, 16}},
               {"WM", "rows of C per warp", 4, {32, 64, 16, 48}},
               {"WN", "columns of C per warp", 4, {32, 64, 16, 48}},
               {"WNITER", "warp sub-tiles along N", 4, {1, 2, 4, 3}},
               {"TM", "rows of a thread sub-tile (multiple of 4)", 1, {4}},
               {"TN", "columns of a thread sub-tile (multiple of 4)", 1, {4}},
               {"STAGES", "shared-memory buffers in the cp.async pipeline", 3, {2, 3, 4}},
               {"MINB", "blocks per SM promised to __launch_bounds__", 2, {1, 2}},
               {"RASTER", "tile rows per rasterization group", 2, {1, 8}},
               {"SPLITK", "K slices reduced deterministically", 6, {1, 2, 4, 8, 16, 128}},
               {"SK", "stream-K blocks per SM (0: one block per tile)", 3, {0, 1, 2}, .optional = 1},
               {"EDGE", "1: edge and unaligned blocks keep a steady loop (stream-K kernels always do)", 2, {0, 1},
                .optional = 1},
               {"KT", "1: an operand stored with k contiguous comes by 16-byte loads through registers", 2, {0, 1},
                .optional = 1},
               {"EVEN", "1: for calls of whole tiles and 16-byte aligned operands only, without edge code (a "
                        "sweep sets it where its shape allows)", 1, {0}, .optional = 1}},
    .legal = legal,
    .in_space = in_space,
    .launch = launch,
    .applicable = applicable,
    .specialize = specialize,
    .work = work,
};
