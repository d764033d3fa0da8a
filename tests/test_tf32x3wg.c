/* Family tf32x3wg (3xTF32 on wgmma, sm_90a): registration, the arch it compiles for, constraints, launch geometry,
 * rendering, and NVRTC compiles of its default space without a GPU. Its GPU checks against DGEMM share
 * tests/test_tf32x3.c's harness (tf32x3wg_gpu_matches_dgemm_at_least_as_well_as_sgemm).
 * Run: build/gt_tests --cpu tf32x3wg */
#include "compile.h"
#include "family.h"
#include "fixture.h"
#include "harness.h"
#include "pool.h"
#include "toolkit.h"

#include <stdlib.h>
#include <string.h>

/* BM BN BK STAGES KC PF MINB SPLITK */
static const gt_params best = {{128, 128, 32, 3, 128, 1, 1, 1}}; /* two warpgroups of 64 x 128 */
static const gt_params one_wg = {{64, 96, 32, 2, 128, 1, 1, 1}}; /* one warpgroup, N 96 */

static const gt_family *fam(void) { return gt_family_find("tf32x3wg"); }

static gt_limits limits(const char *arch)
{
    gt_limits l;
    gt_limits_for_arch(arch, &l);
    return l;
}

static int is_legal(const gt_params *p, char *why, size_t n)
{
    const gt_limits l = limits("sm_90");
    return fam()->legal(p, &l, why, n);
}

static gt_params with(gt_params p, const char *name, int v) { return gt_params_with(fam(), p, name, v); }

GT_TEST(tf32x3wg_is_registered_arch_specific_with_its_math, GT_NEEDS_NONE)
{
    const gt_family *f = fam();
    CHECK(f != NULL);
    if (!f) return;
    CHECK(f->math == GT_MATH_TF32X3 && f->reference == GT_REF_FP64 && f->arch_specific == 1);
    CHECK(f->build == GT_BUILD_NVRTC && f->space == GT_SPACE_STATIC && !f->backend && !f->test_only);
    CHECK(gt_template_text(f->template_name) != NULL);
    char arch[20];
    gt_family_arch(f, "sm_90", arch, sizeof arch);
    CHECK_MSG(!strcmp(arch, "sm_90a"), "%s", arch);
    gt_family_arch(f, "sm_90a", arch, sizeof arch); /* already arch-specific: unchanged */
    CHECK_MSG(!strcmp(arch, "sm_90a"), "%s", arch);
    gt_family_arch(f, "sm_100f", arch, sizeof arch); /* a family-specific arch: the arch's own, not "sm_100fa" */
    CHECK_MSG(!strcmp(arch, "sm_100a"), "%s", arch);
    gt_family_arch(gt_family_find("tf32x3"), "sm_90", arch, sizeof arch); /* the portable families keep it */
    CHECK_MSG(!strcmp(arch, "sm_90"), "%s", arch);
    gt_family_arch(NULL, "sm_80", arch, sizeof arch);
    CHECK_MSG(!strcmp(arch, "sm_80"), "%s", arch);
}

typedef struct {
    int n, bad;
    char first_bad[160];
} space_ctx;

static int space_cb(const gt_family *f, const gt_params *p, void *vctx)
{
    space_ctx *c = vctx;
    char why[160];
    c->n++;
    if (p->v[2] != 32 || !is_legal(p, why, sizeof why)) {
        c->bad++;
        gt_params_format(f, p, c->first_bad, sizeof c->first_bad);
    }
    return 0;
}

/* 12 points on sm_90 without a K split, all with BK 32; PF=0 only where a whole tile does not fit in registers
 * (64 x 128); the same 12 folding every 32 k-values instead of 128; 8 that split K (2, 3, 4 or 8 slices) with
 * the two-warpgroup blocks of 128 x 128 and 128 x 64 and 3 stages, folding every 128; and those two blocks with
 * stream-K, one or two blocks a SM, folding every 128 or 32 (40); 128 x 112 with 3 stages, folding every 128 or 32,
 * with stream-K or not, C tiled transposed or not (12); C tiled transposed by 128 x 96 (2) and 128 x 64 blocks (6)
 * as those blocks are untransposed; and narrow blocks of BN 16, 32 and 48 for a skinny side, 2 or 3 stages,
 * stream-K 1 or 2, folding every 32, C transposed or not (24); one warpgroup's 64 x 96 with C transposed, 2 stages,
 * folding every 128 or 32 (2); the unsplit 128-row points folding every 32 again with PT (10); none on any other
 * arch: sm_90a's wgmma runs on sm_90 alone. */
GT_TEST(tf32x3wg_default_space_is_sm90_only, GT_NEEDS_NONE)
{
    gt_limits l = limits("sm_90");
    space_ctx c = {0, 0, ""};
    CHECK(gt_enumerate(fam(), &l, space_cb, &c) == 96);
    CHECK_MSG(c.n == 96 && c.bad == 0, "%d points, %d bad (%s)", c.n, c.bad, c.first_bad);
    char why[160];
    const gt_params kc32 = with(best, "KC", 32), kc64 = with(best, "KC", 64);
    CHECK(fam()->in_space(&kc32, why, sizeof why));
    CHECK(is_legal(&kc64, why, sizeof why) && !fam()->in_space(&kc64, why, sizeof why) && strstr(why, "KC"));
    const gt_params kc32_split = with(kc32, "SPLITK", 4);
    CHECK(is_legal(&kc32_split, why, sizeof why) && !fam()->in_space(&kc32_split, why, sizeof why) &&
          strstr(why, "KC"));
    CHECK(!is_legal(&(gt_params){{64, 128, 32, 3, 128, 1, 1, 1}}, why, sizeof why) && strstr(why, "registers"));
    CHECK(is_legal(&(gt_params){{64, 128, 32, 3, 128, 0, 1, 1}}, why, sizeof why));
    CHECK(!fam()->in_space(&(gt_params){{128, 128, 32, 3, 128, 0, 1, 1}}, why, sizeof why) && strstr(why, "PF"));
    const gt_params split96 = with(with(best, "BN", 96), "SPLITK", 4), split64 = with(with(best, "BN", 64), "SPLITK", 8);
    CHECK(is_legal(&split96, why, sizeof why) && !fam()->in_space(&split96, why, sizeof why) && strstr(why, "SPLITK"));
    CHECK(fam()->in_space(&split64, why, sizeof why));
    const gt_params split2 = with(split64, "STAGES", 2);
    CHECK(!fam()->in_space(&split2, why, sizeof why) && strstr(why, "3 stages"));
    const gt_params bk16 = with(best, "BK", 16);
    CHECK(!fam()->in_space(&bk16, why, sizeof why) && strstr(why, "BK"));
    const gt_params ct = with(with(best, "BN", 112), "CT", 1), ct128 = with(best, "CT", 1);
    const gt_params ct_sk2 = with(ct, "SK", 2);
    CHECK(fam()->in_space(&ct, why, sizeof why) && fam()->in_space(&ct_sk2, why, sizeof why));
    CHECK(is_legal(&ct128, why, sizeof why) && !fam()->in_space(&ct128, why, sizeof why) && strstr(why, "CT"));
    const gt_params ct2 = with(ct, "STAGES", 2), wg1 = with(with(one_wg, "BN", 112), "PF", 0);
    CHECK(is_legal(&ct2, why, sizeof why) && !fam()->in_space(&ct2, why, sizeof why) && strstr(why, "3 stages"));
    CHECK(is_legal(&wg1, why, sizeof why) && !fam()->in_space(&wg1, why, sizeof why) && strstr(why, "128-row"));
    const gt_params narrow = with(with(with(with(ct, "BN", 32), "SK", 1), "STAGES", 2), "KC", 32); /* a skinny side */
    CHECK(fam()->in_space(&narrow, why, sizeof why));
    const gt_params narrow_bad[] = {with(narrow, "BM", 64), with(narrow, "SK", 0), with(narrow, "KC", 128)};
    const gt_params narrow_n = with(narrow, "CT", 0); /* N the skinny side */
    CHECK(fam()->in_space(&narrow_n, why, sizeof why));
    for (int i = 0; i < 3; ++i)
        CHECK(is_legal(&narrow_bad[i], why, sizeof why) && !fam()->in_space(&narrow_bad[i], why, sizeof why) &&
              strstr(why, "BN below 64"));
    /* one warpgroup's 64 x 96 tiling C transposed, 2 stages (a side of 64: attention's P.V); no other such block */
    const gt_params ct64 = with(with(with(with(one_wg, "BN", 96), "CT", 1), "STAGES", 2), "PF", 1);
    CHECK(fam()->in_space(&ct64, why, sizeof why));
    const gt_params ct64_bad[] = {with(with(ct64, "BN", 128), "PF", 0), with(ct64, "BN", 64), with(ct64, "BN", 112),
                                  with(ct64, "STAGES", 3), with(ct64, "PF", 0)};
    for (int i = 0; i < 5; ++i)
        CHECK(is_legal(&ct64_bad[i], why, sizeof why) && !fam()->in_space(&ct64_bad[i], why, sizeof why) &&
              strstr(why, "64-row blocks only as 64 x 96"));
    static const char *const others[] = {"sm_80", "sm_89", "sm_100", "sm_120"};
    for (size_t i = 0; i < sizeof others / sizeof others[0]; ++i) {
        l = limits(others[i]);
        CHECK_MSG(gt_enumerate(fam(), &l, NULL, NULL) == 0, "%s has tf32x3wg candidates", others[i]);
        CHECK(!fam()->legal(&best, &l, why, sizeof why) && strstr(why, "sm_90"));
    }
}

GT_TEST(tf32x3wg_constraints_reject_bad_points, GT_NEEDS_NONE)
{
    static const struct {
        const char *param;
        int value;
        const char *why;
    } bad[] = {
        {"BM", 96, "BM=96"},      {"BM", 512, "outside"},   {"BN", 80, "BN=80"},       {"BN", 24, "BN=24"},
        {"BN", 8, "outside"},     {"BN", 40, "BN=40"},      {"BK", 24, "BK=24"},       {"KC", 48, "KC=48"},
        {"STAGES", 4, "outside"}, {"PF", 2, "outside"},     {"MINB", 2, "registers"},  {"SPLITK", 0, "outside"},
        {"SPLITK", 65, "outside"}, {"CT", 2, "outside"},
    };
    char why[160];
    CHECK(is_legal(&best, why, sizeof why) && is_legal(&one_wg, why, sizeof why));
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        const gt_params p = with(best, bad[i].param, bad[i].value);
        int ok = is_legal(&p, why, sizeof why);
        CHECK_MSG(!ok && strstr(why, bad[i].why), "%s=%d: legal=%d why='%s' (want '%s')", bad[i].param, bad[i].value,
                  ok, why, bad[i].why);
    }
    /* 256 rows (4 warpgroups, 512 threads) with N 128: three accumulator sets do not fit under 128 registers */
    const gt_params bm256 = with(with(best, "BM", 256), "STAGES", 2), bk64 = with(with(best, "BK", 64), "PF", 0);
    CHECK(!is_legal(&bm256, why, sizeof why) && strstr(why, "registers"));
    /* the split's reduce writes C untransposed */
    const gt_params ct_split = with(with(best, "CT", 1), "SPLITK", 2);
    CHECK(!is_legal(&ct_split, why, sizeof why) && strstr(why, "CT"));
    /* BK 64 with 3 stages of 128 x 128: 384 KiB of shared memory */
    CHECK(!is_legal(&bk64, why, sizeof why) && strstr(why, "shared memory"));
    gt_limits l = limits("sm_90");
    l.max_smem_optin = 150 * 1024; /* 3 stages of 64 KiB */
    CHECK(!fam()->legal(&best, &l, why, sizeof why) && strstr(why, "shared memory"));
}

/* Every layout stores both operands k-major: STAGES x 2 x (BM + BN) x BK floats (and 1 KiB to align the swizzle
 * at BK 32), one flat grid over the tiles. */
GT_TEST(tf32x3wg_launch_geometry, GT_NEEDS_NONE)
{
    gt_launch L;
    for (int l = 0; l < 4; ++l) {
        gt_shape one = {1, 1, 1, l >> 1, l & 1};
        fam()->launch(&best, &one, GT_TEST_SMS, &L);
        CHECK(L.grid[0] == 1 && L.grid[1] == 1 && L.grid[2] == 1 && L.block[0] == 256 && L.block[1] == 1);
        CHECK(L.smem == 3u * 2 * 256 * 32 * 4 + 1024 && L.splitk == 1 && L.ws_bytes == 0);
    }
    gt_shape odd = {127, 4099, 1025, 1, 0}; /* 1 x 33 tiles of 128; 2 x 43 of 64 x 96 */
    fam()->launch(&best, &odd, GT_TEST_SMS, &L);
    CHECK(L.grid[0] == 33 && L.grid[1] == 1);
    fam()->launch(&one_wg, &odd, GT_TEST_SMS, &L);
    CHECK(L.grid[0] == 2 * 43 && L.block[0] == 128 && L.smem == 2u * 2 * 160 * 32 * 4 + 1024);
    const gt_params bk16 = with(best, "BK", 16); /* no swizzle, no slack */
    fam()->launch(&bk16, &odd, GT_TEST_SMS, &L);
    CHECK(L.grid[0] == 33 && L.smem == 3u * 2 * 256 * 16 * 4);
    /* 112 columns a block, B's tiles loaded 128 rows deep; transposed, C's 777 rows take the 112: 7 x 12 tiles */
    const gt_params bn112 = with(best, "BN", 112), ct = with(bn112, "CT", 1);
    const gt_shape s777 = {777, 1531, 2049, 0, 0};
    fam()->launch(&bn112, &s777, GT_TEST_SMS, &L);
    CHECK(L.grid[0] == 7 * 14 && L.smem == 3u * 2 * 256 * 32 * 4 + 1024);
    fam()->launch(&ct, &s777, GT_TEST_SMS, &L);
    CHECK(L.grid[0] == 12 * 7 && L.smem == 3u * 2 * 256 * 32 * 4 + 1024);
    const gt_params ct_sk = with(ct, "SK", 1); /* stream-K over the transposed tiles */
    fam()->launch(&ct_sk, &s777, GT_TEST_SMS, &L);
    CHECK(L.grid[0] == GT_TEST_SMS && L.ws_zero == 128 * 4 && L.ws_bytes == 128 * 4 + 2u * GT_TEST_SMS * 128 * 112 * 4);
}

/* SPLITK: grid z over the slices, a workspace of SPLITK partial C's and the reduce's launch (one thread per
 * element); a split cannot run a batch, and a workspace past 512 MiB is not applicable. */
GT_TEST(tf32x3wg_split_k_launch_and_workspace, GT_NEEDS_NONE)
{
    gt_launch L;
    const gt_params split = with(best, "SPLITK", 4);
    const gt_shape dw = {768, 768, 8192, 1, 0}; /* a weight gradient: 36 tiles of 128 x 128 over a deep K */
    fam()->launch(&split, &dw, GT_TEST_SMS, &L);
    CHECK(L.grid[0] == 36 && L.grid[1] == 1 && L.grid[2] == 4 && L.splitk == 4);
    CHECK(L.ws_bytes == 4u * 768 * 768 * 4 && L.ws_zero == 0);
    CHECK(L.rgrid[0] == 768 * 768 / 256 && L.rblock[0] == 256);
    CHECK(!gt_family_launch(fam(), &split, &(gt_shape){768, 768, 8192, 1, 0, 3}, GT_TEST_SMS, &L));
    CHECK(gt_family_launch(fam(), &best, &(gt_shape){768, 768, 8192, 1, 0, 3}, GT_TEST_SMS, &L) && L.grid[2] == 3);
    gt_call c = {.shape = dw};
    CHECK(fam()->applicable(&split, &c) && fam()->applicable(&best, &c));
    c.shape = (gt_shape){16384, 16384, 16384, 0, 0}; /* 4 x 1 GiB of partial sums */
    CHECK(!fam()->applicable(&split, &c) && fam()->applicable(&best, &c));
    char err[256];
    char *one = gt_render(fam(), &best, 1, 0, 0, err, sizeof err), *four = gt_render(fam(), &split, 1, 0, 0, err, sizeof err);
    CHECK(one && strstr(one, "#define SPLITK 1\n") && four && strstr(four, "#define SPLITK 4\n"));
    free(one), free(four);
}

/* Stream-K: one block per SM; a weight gradient's 36 tiles of 256 K tiles shared out over them (36 < 2 x 132), with
 * the tiles' counters and two partial tiles a block as workspace; a shape whose tiles fill whole waves is all
 * data-parallel and needs none (so a batch of it runs in one launch, and a bias may take the workspace's place);
 * stream-K and split-K are exclusive. */
GT_TEST(tf32x3wg_stream_k_launch_and_workspace, GT_NEEDS_NONE)
{
    gt_launch L;
    char why[160];
    const gt_params sk = with(best, "SK", 1);
    CHECK(is_legal(&sk, why, sizeof why) && fam()->in_space(&sk, why, sizeof why));
    const gt_params both = with(sk, "SPLITK", 2);
    CHECK(!is_legal(&both, why, sizeof why) && strstr(why, "exclusive"));
    fam()->launch(&sk, &(gt_shape){768, 768, 8192, 1, 0}, GT_TEST_SMS, &L);
    CHECK(L.grid[0] == GT_TEST_SMS && L.grid[1] == 1 && L.grid[2] == 1 && L.splitk == 1);
    CHECK(L.ws_zero == 64 * 4 && L.ws_bytes == 64 * 4 + 2u * GT_TEST_SMS * 128 * 128 * 4);
    const gt_shape whole = {128 * GT_TEST_SMS, 128 * 2, 512, 0, 0, 2}; /* 2 x 132 tiles: two whole waves */
    CHECK(gt_family_launch(fam(), &sk, &whole, GT_TEST_SMS, &L) && L.grid[0] == GT_TEST_SMS && L.grid[2] == 2);
    CHECK(L.ws_bytes == 0 && L.ws_zero == 0);
    CHECK(!gt_family_launch(fam(), &sk, &(gt_shape){768, 768, 8192, 1, 0, 2}, GT_TEST_SMS, &L));
    const gt_params sk2 = with(best, "SK", 2); /* two blocks a SM, taking turns: each sums half as long a range */
    fam()->launch(&sk2, &(gt_shape){768, 768, 8192, 1, 0}, GT_TEST_SMS, &L);
    CHECK(L.grid[0] == 2 * GT_TEST_SMS && L.ws_bytes == 64 * 4 + 4u * GT_TEST_SMS * 128 * 128 * 4);
    fam()->launch(&sk, &(gt_shape){1, 1, 1, 0, 0}, GT_TEST_SMS, &L); /* never more blocks than K tiles of work */
    CHECK(L.grid[0] == 1 && L.ws_bytes == 0);
    gt_call c = {.shape = {64, 64, 1 << 30, 0, 0}};
    CHECK(!fam()->applicable(&sk, &c) && fam()->applicable(&best, &c));
}

/* PT: blocks that take tiles in turn, as many a block as least loads the busiest SM (each block's tiles and its
 * loads and stores nothing overlaps, two K tiles' worth); only with PF's registers, one K slice a tile. */
GT_TEST(tf32x3wg_pt_takes_tiles_in_turn, GT_NEEDS_NONE)
{
    gt_launch L;
    char why[160];
    const gt_params pt = with(with(best, "KC", 32), "PT", 1);
    CHECK(is_legal(&pt, why, sizeof why) && fam()->in_space(&pt, why, sizeof why));
    const gt_params sk = with(pt, "SK", 1), split = with(pt, "SPLITK", 2), pf0 = with(pt, "PF", 0);
    CHECK(!is_legal(&sk, why, sizeof why) && strstr(why, "PT"));
    CHECK(!is_legal(&split, why, sizeof why) && strstr(why, "PT"));
    CHECK(!is_legal(&pf0, why, sizeof why) && strstr(why, "PT"));
    const gt_params pt128 = with(pt, "KC", 128), pt64 = with(with(pt, "BM", 64), "BN", 96);
    CHECK(is_legal(&pt128, why, sizeof why) && !fam()->in_space(&pt128, why, sizeof why) && strstr(why, "PT"));
    CHECK(is_legal(&pt64, why, sizeof why) && !fam()->in_space(&pt64, why, sizeof why) && strstr(why, "PT"));
    /* 384 tiles of 128 x 128, 24 K tiles: 3 a block on 128 blocks, one wave (1 or 2 a block take 3 or 4 waves' time) */
    fam()->launch(&pt, &(gt_shape){8192, 768, 768, 0, 0}, GT_TEST_SMS, &L);
    CHECK_MSG(L.grid[0] == 128 && L.grid[1] == 1 && L.ws_bytes == 0, "%u blocks", L.grid[0]);
    /* GPT-2's Q.K^T: 96 x 64 tiles, K 64 (2 K tiles: the loads and stores of a block's ends weigh a tile): 16 a block */
    CHECK(gt_family_launch(fam(), &pt, &(gt_shape){1024, 1024, 64, 0, 1, 96}, GT_TEST_SMS, &L));
    CHECK_MSG(L.grid[0] == 4 && L.grid[2] == 96, "%u x %u blocks", L.grid[0], L.grid[2]);
    fam()->launch(&pt, &(gt_shape){100, 100, 100, 0, 0}, GT_TEST_SMS, &L); /* fewer tiles than SMs: one each */
    CHECK(L.grid[0] == 1);
    fam()->launch(&pt, &(gt_shape){4096, 4096, 64, 0, 0}, GT_TEST_SMS, &L); /* 1,024 tiles */
    CHECK_MSG(L.grid[0] >= 32 && L.grid[0] <= 132 && L.grid[0] * 32u >= 1024, "%u blocks", L.grid[0]);
    static const gt_shape some[] = {{1, 1, 1, 0, 0},          {129, 4097, 64, 0, 0, 7}, {20000, 300, 32, 0, 0},
                                    {8192, 8192, 8192, 0, 0}, {512, 512, 64, 0, 1, 3000}};
    for (size_t i = 0; i < sizeof some / sizeof some[0]; ++i) { /* the template relies on a tile for every block */
        CHECK(gt_family_launch(fam(), &pt, &some[i], GT_TEST_SMS, &L));
        const unsigned tiles = gt_cdiv(some[i].m, 128) * gt_cdiv(some[i].n, 128);
        CHECK_MSG(L.grid[0] >= 1 && L.grid[0] <= tiles && L.grid[0] * 32u >= tiles, "%u blocks, %u tiles", L.grid[0],
                  tiles);
    }
    gt_call huge_k = {.shape = {128, 128, 2147483640, 0, 0}}, many = {.shape = {1 << 30, 1 << 20, 64, 0, 0}};
    CHECK(!fam()->applicable(&pt, &huge_k) && fam()->applicable(&best, &huge_k)); /* its counts would overflow */
    CHECK(!fam()->applicable(&pt, &many));
    char err[256];
    char *src = gt_render(fam(), &pt, 0, 1, 1, err, sizeof err);
    CHECK_MSG(src && strstr(src, "#define PT 1\n"), "%s", err);
    free(src);
}

GT_TEST(tf32x3wg_render_has_wgmma_and_the_split, GT_NEEDS_NONE)
{
    char err[256];
    char *src = gt_render(fam(), &best, 0, 1, 0, err, sizeof err);
    CHECK_MSG(src != NULL, "%s", err);
    if (!src) return;
    CHECK(strstr(src, "#define GT_TA 0\n#define GT_TB 1\n") && strstr(src, "#define PF 1\n"));
    CHECK(strstr(src, "gt_wgmma_tf32<BN>") && strstr(src, "#include \"wgmma.cuh\"") && strstr(src, "#define CT 0\n"));
    char *all = gt_source_expand(src); /* with its headers (tf32.cuh: the split; wgmma.cuh), as NVRTC compiles it */
    CHECK(all && strstr(all, "cvt.rn.tf32.f32"));
    CHECK(all && strstr(all, "wgmma.mma_async.sync.aligned.m64n\" #N \"k8.f32.tf32.tf32"));
    CHECK(all && strstr(all, "fence.proxy.async.shared::cta"));
    /* deterministic: the one atomic is stream-K's count of a tile's parts (its fix-up adds them in block order) */
    const char *at = all ? strstr(all, "atomic") : NULL;
    CHECK(at && !strncmp(at, "atomicAdd(&cnt[t], 1u)", 22) && !strstr(at + 1, "atomic"));
    free(all);
    free(src);
    const gt_params ct = with(with(best, "BN", 112), "CT", 1);
    src = gt_render(fam(), &ct, 0, 0, 0, err, sizeof err);
    CHECK(src && strstr(src, "#define CT 1\n") && strstr(src, "#define BN 112\n"));
    free(src);
}

/* EVEN follows the call in the blocks' own product: C's m and n for untransposed blocks, C transposed with CT
 * (C's columns tiled by BM, its rows by BN); it needs BN a multiple of 32 (B's tiles hold no rows past BN). The
 * default space lists none; applicable() refuses the variant where C is not whole tiles. */
GT_TEST(tf32x3wg_even_follows_the_call, GT_NEEDS_NONE)
{
    char why[160];
    const gt_params ct64 = with(with(one_wg, "CT", 1), "STAGES", 2); /* 64 x 96, C transposed */
    const gt_shape sq = {768, 768, 1000, 0, 1}, rows96 = {960, 640, 64, 1, 0}, rows64 = {640, 960, 64, 1, 0};
    gt_params p = best;
    CHECK(fam()->specialize(&p, &(gt_call){sq, 1000, 1000, 768, 16, 16, 16}) == 1);
    CHECK(gt_param_get(fam(), &p, "EVEN", -1) == 1 && is_legal(&p, why, sizeof why));
    gt_call tight = gt_call_tight(&sq);
    tight.ldc = 770;
    CHECK(!fam()->applicable(&p, &tight) && fam()->specialize(&p, &tight) && gt_param_get(fam(), &p, "EVEN", -1) == 0);
    const gt_call c96 = gt_call_tight(&rows96), c64 = gt_call_tight(&rows64);
    p = ct64;
    fam()->specialize(&p, &c96);
    CHECK(gt_param_get(fam(), &p, "EVEN", -1) == 1); /* C's 960 rows in tiles of 96, its 640 columns of 64 */
    p = ct64;
    fam()->specialize(&p, &c64);
    CHECK(gt_param_get(fam(), &p, "EVEN", -1) == 0); /* 640 rows are no whole tiles of 96 */
    p = with(with(best, "BN", 112), "CT", 1);
    const gt_shape s112 = {1120, 1024, 64, 0, 0};
    const gt_call c112 = gt_call_tight(&s112);
    fam()->specialize(&p, &c112);
    CHECK(gt_param_get(fam(), &p, "EVEN", -1) == 0);
    p = with(p, "EVEN", 1);
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "EVEN with BN=112"));
    const gt_limits l = limits("sm_90");
    CHECK(gt_fixture_space_with(fam(), &l, "EVEN", NULL) == 0);
}

/* The variants without edge code compile for sm_90a: unsplit, split-K, stream-K, C transposed, one layout each. */
GT_TEST(tf32x3wg_nvrtc_even_variants, GT_NEEDS_NVRTC)
{
    const gt_params keys[] = {with(best, "EVEN", 1), with(with(best, "SPLITK", 2), "EVEN", 1),
                              with(with(best, "SK", 1), "EVEN", 1),
                              with(with(with(one_wg, "CT", 1), "STAGES", 2), "EVEN", 1)};
    gt_compile_job jobs[4];
    for (int i = 0; i < 4; ++i) jobs[i] = gt_compile_job_make(fam(), &keys[i], i >> 1, i & 1);
    gt_compile_all_clean(jobs, 4, "sm_90", "tf32x3wg whole-tile variants");
}

/* Each block width issues the wgmma of its own N (NVRTC's PTX for sm_90a: wgmma.cuh builds the asm's text). */
GT_TEST(tf32x3wg_ptx_has_the_wgmma_of_each_width, GT_NEEDS_NVRTC)
{
    static const int widths[] = {128, 112, 96, 64, 48, 32, 16};
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; ++i) {
        const gt_params p = with(with(with(best, "BN", widths[i]), "CT", widths[i] < 128), "STAGES", 2);
        char err[256], want[80];
        char *src = gt_render(fam(), &p, 0, 0, 0, err, sizeof err);
        gt_cubin cb = {0};
        const int rc = src ? gt_nvrtc_compile(src, "compute_90a", &cb, err, sizeof err) : -1;
        CHECK_MSG(rc == 0, "BN %d: %s", widths[i], err);
        snprintf(want, sizeof want, "wgmma.mma_async.sync.aligned.m64n%dk8.f32.tf32.tf32 {", widths[i]);
        CHECK_MSG(rc == 0 && memmem(cb.data, cb.size, want, strlen(want)), "BN %d: no %s in the PTX", widths[i], want);
        gt_cubin_free(&cb);
        free(src);
    }
}

/* The sweep's compile pool asks for each job's own arch: sm_90a for this family, sm_90 beside it. */
static char seen[2][20];
static int seen_n;
static int record_arch(const char *src, const char *arch, gt_cubin *out, char *err, size_t errlen)
{
    (void)src, (void)err, (void)errlen;
    memset(out, 0, sizeof *out);
    if (seen_n < 2) snprintf(seen[seen_n++], sizeof seen[0], "%s", arch);
    return 1; /* "does not compile": nothing to load */
}

GT_TEST(tf32x3wg_pool_compiles_for_sm90a, GT_NEEDS_NONE)
{
    gt_pool *p = gt_pool_new(NULL, "sm_90", record_arch, 0);
    char hash[17], err[256];
    int hit = 0;
    const int a = gt_pool_add(p, fam(), &best, 0, hash, &hit, err, sizeof err);
    const gt_family *t = gt_family_find("tf32x3");
    gt_params tp;
    CHECK(gt_params_parse(t, "BM=64,BN=64,BK=32,WM=64,WN=32,STAGES=2,KC=128,MINB=1", &tp, err, sizeof err) == 0);
    const int b = gt_pool_add(p, t, &tp, 0, hash, &hit, err, sizeof err);
    CHECK(a >= 0 && b >= 0);
    if (a >= 0 && b >= 0) {
        gt_pool_wait(p, a, NULL);
        gt_pool_wait(p, b, NULL);
    }
    CHECK_MSG(seen_n == 2 && !strcmp(seen[0], "sm_90a") && !strcmp(seen[1], "sm_90"), "%d: %s %s", seen_n, seen[0],
              seen[1]);
    gt_pool_free(p, NULL);
}

typedef struct {
    gt_compile_job *jobs;
    int n, cap;
    int kc32, pt; /* points folding every 32 seen, and with PT */
} job_list;

/* Every point that does not split K and folds every 128 k-values (stream-K's with one block a SM included; of the
 * narrow ones and those tiling C transposed, the transposed 112- and 32-wide and the one-warpgroup 64 x 96), of
 * those that fold every 32 the first, of those with PT the first 128 x 128 (the most registers), and of those that
 * split, the 3-stage ones with 4 slices: the others are the same source but for KC's, SPLITK's, SK's or BN's value
 * (CI's minutes). */
static int add_job(const gt_family *f, const gt_params *p, void *ctx)
{
    job_list *l = ctx;
    const int split = gt_param_get(f, p, "SPLITK", 1);
    if (split > 1 && (split != 4 || gt_param_get(f, p, "STAGES", 0) != 3)) return 0;
    const int bn = gt_param_get(f, p, "BN", 0), ct = gt_param_get(f, p, "CT", 0), bm = gt_param_get(f, p, "BM", 0);
    if ((ct && bn != 112 && bn != 32 && bm != 64) || (bn < 64 && !ct)) return 0;
    if (gt_param_get(f, p, "PT", 0) && (bn != 128 || l->pt++)) return 0;
    if (!gt_param_get(f, p, "PT", 0) && gt_param_get(f, p, "KC", 128) != 128 && bn >= 64 && l->kc32++) return 0; /* narrow ones fold every 32 */
    if (gt_param_get(f, p, "SK", 0) > 1) return 0;
    if (l->n < l->cap) l->jobs[l->n++] = gt_compile_job_make(f, p, 1, 1);
    return 0;
}

/* The nn layout of the default space is compiled with every family's (tests/test_nvrtc.c); here the tt layout of
 * most of it (add_job) and the two mixed layouts of the biggest point: each without spills, for sm_90a, a split's
 * with its reduce kernel. */
GT_TEST(tf32x3wg_nvrtc_default_space_no_spills, GT_NEEDS_NVRTC)
{
    const gt_limits l = limits("sm_90");
    job_list jl = {malloc(sizeof(gt_compile_job) * 27), 0, 25, 0, 0};
    gt_enumerate(fam(), &l, add_job, &jl);
    CHECK_MSG(jl.n == 25 && jl.kc32 == 23 && jl.pt == 2, "%d jobs, %d folding every 32, %d with PT", jl.n, jl.kc32,
              jl.pt);
    jl.jobs[jl.n++] = gt_compile_job_make(fam(), &best, 0, 1);
    jl.jobs[jl.n++] = gt_compile_job_make(fam(), &best, 1, 0);
    gt_compile_all_clean(jl.jobs, jl.n, "sm_90", "tf32x3wg configurations");
    free(jl.jobs);
}
