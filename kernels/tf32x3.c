/* Family tf32x3: FP32-accurate SGEMM on TF32 tensor cores (mma.sync m16n8k8, sm_80+): operands split into two
 * TF32 parts in registers, three products, the big*big chunk folded into an FP32 accumulator every KC k-values.
 * Its math class is tf32x3 and it is validated against FP64. Template: templates/tf32x3.cu. Tested by
 * tests/test_tf32x3.c. */
#include "family.h"

#include <stdio.h>

enum { P_BM, P_BN, P_BK, P_WM, P_WN, P_STAGES, P_KC, P_MINB, NPARAMS };

typedef struct {
    int bm, bn, bk, wm, wn, stages, kc, minb;
    int threads;
} shape_t;

static shape_t unpack(const gt_params *p)
{
    const int *v = p->v;
    shape_t s = {v[P_BM], v[P_BN], v[P_BK], v[P_WM], v[P_WN], v[P_STAGES], v[P_KC], v[P_MINB], 0};
    if (s.wm > 0 && s.wn > 0) s.threads = s.bm / s.wm * (s.bn / s.wn) * 32;
    return s;
}

/* Shared tiles keep the global storage order (templates/tf32x3.cu): BK rows of D + 4 floats where k is the row
 * (A transposed, B not), else D rows of BK floats, padded by 8 when BK % 16 == 0. */
static int kpitch(int bk) { return bk + (bk % 16 ? 0 : 8); }
static long tile_floats(int d, int bk, int k_rows) { return k_rows ? (long)bk * (d + 4) : (long)d * kpitch(bk); }

/* Dynamic shared memory of one block in layout (ta, tb): STAGES stages of an A and a B tile. */
static long smem_bytes(const shape_t *s, int ta, int tb)
{
    return 4L * s->stages * (tile_floats(s->bm, s->bk, ta) + tile_floats(s->bn, s->bk, !tb));
}

/* The most any layout needs: what legal() holds against the limit. */
static long smem_max(const shape_t *s)
{
    long most = 0;
    for (int l = 0; l < 4; ++l) {
        const long b = smem_bytes(s, l >> 1, l & 1);
        most = b > most ? b : most;
    }
    return most;
}

/* Registers per thread: three accumulator sets (corrections, chunk, FP32 sum) of WM*WN/32 each, the split
 * fragments of one k step (the operand with fewer registers whole, the other one tile at a time; big and small
 * parts), and ~30 for addresses and loop state. ptxas -v: 64x32 warps take 250-255 with no spills under the 255
 * cap, 32x32 warps 150-170. */
static int regs_estimate(const shape_t *s)
{
    const int mi = s->wm / 16, ni = s->wn / 8, a_all = 8 * mi, b_all = 4 * ni;
    const int frags = a_all < b_all ? a_all + 4 : b_all + 8;
    return 3 * (s->wm * s->wn / 32) + frags + 30;
}

#define REJECT GT_REJECT

extern const gt_family gt_family_tf32x3;

/* Values far outside any GPU's reach are refused before any product of them can overflow an int. */
static int bounded(const gt_params *p, char *why, size_t n)
{
    static const int lo[NPARAMS] = {1, 1, 1, 1, 1, 2, 1, 1}, hi[NPARAMS] = {1024, 1024, 1024, 1024, 1024, 8, 65536, 32};
    for (int i = 0; i < NPARAMS; ++i)
        if (p->v[i] < lo[i] || p->v[i] > hi[i])
            REJECT("%s=%d outside %d..%d", gt_family_tf32x3.params[i].name, p->v[i], lo[i], hi[i]);
    return 1;
}

static int legal_tiling(const shape_t *s, char *why, size_t n)
{
    if (s->bk % 8) REJECT("BK=%d not a multiple of 8 (the MMA's k)", s->bk);
    if (s->wm % 16 || s->wn % 8) REJECT("warp tile %dx%d: WM must be a multiple of 16, WN of 8", s->wm, s->wn);
    if (s->bm % s->wm || s->bn % s->wn) REJECT("BM %% WM or BN %% WN != 0");
    if (s->kc % s->bk) REJECT("KC=%d not a multiple of BK=%d", s->kc, s->bk);
    if (s->threads % (s->bm / 4) || s->threads % (s->bn / 4) || s->threads % (s->bk / 4))
        REJECT("%d threads do not cover whole rows of 16-byte copies", s->threads);
    return 1;
}

static int legal(const gt_params *p, const gt_limits *lim, char *why, size_t n)
{
    if (!bounded(p, why, n)) return 0;
    const shape_t s = unpack(p);
    if (lim->cc_major < 8) REJECT("sm_%d%d: mma.sync TF32 needs sm_80 or newer", lim->cc_major, lim->cc_minor);
    return legal_tiling(&s, why, n) &&
           gt_block_fits_dynamic(s.threads, s.minb, smem_max(&s), regs_estimate(&s), lim, why, n);
}

/* The default space's shape: a k-step of 16 needs more than 2 stages in flight. */
static int in_space(const gt_params *p, char *why, size_t n)
{
    if (!bounded(p, why, n)) return 0;
    const shape_t s = unpack(p);
    if (s.bk < 32 && s.stages < 3) REJECT("default space: BK=%d with at least 3 stages", s.bk);
    return 1;
}

static void launch(const gt_params *p, const gt_shape *sh, int sms, gt_launch *out)
{
    (void)sms;
    const shape_t s = unpack(p);
    gt_launch_tiles(sh, s.bm, s.bn, (unsigned)s.threads, (unsigned)smem_bytes(&s, sh->ta, sh->tb), 1, 1, out);
}

const gt_family gt_family_tf32x3 = {
    .name = "tf32x3",
    .batched = 1,
    .doc = "FP32-accurate SGEMM from three TF32 tensor-core products (mma.sync), the big*big part folded in FP32",
    .template_name = "tf32x3.cu",
    .math = GT_MATH_TF32X3,
    .reference = GT_REF_FP64,
    .nparams = NPARAMS,
    .params = {{"BM", "rows of C per block", 2, {128, 64}},
               {"BN", "columns of C per block", 2, {128, 64}},
               {"BK", "K depth of one pipeline stage (multiple of 8)", 2, {32, 16}},
               {"WM", "rows of C per warp (multiple of 16)", 2, {64, 32}},
               {"WN", "columns of C per warp (multiple of 8)", 1, {32}},
               {"STAGES", "shared-memory buffers in the cp.async pipeline", 2, {3, 2}},
               {"KC", "k-values between folds of the big*big chunk into FP32 (multiple of BK)", 1, {128}},
               {"MINB", "blocks per SM promised to __launch_bounds__", 1, {1}}},
    .legal = legal,
    .in_space = in_space,
    .launch = launch,
};
