/* The tuner's cost model (tuner/model.c) without a GPU: what it must see of a launch to order candidates as a GPU
 * does (waves, edge tiles, split-K on deep shapes, K, a skinny tile's padding), and what it leaves alone (a
 * library's algorithms, a batch a family cannot take). How it leads a sweep: tests/test_tune.c (tune_model_*).
 * Run: build/gt_tests --cpu model */
#include "harness.h"
#include "model.h"

static gt_limits h100(void)
{
    gt_limits l;
    gt_limits_for_arch("sm_90", &l);
    l.sm_count = 132;
    return l;
}

/* family/params on m x n x k (nn), in seconds; -1 when the params do not parse. */
static double t(const char *family, const char *params, int m, int n, int k)
{
    const gt_family *f = gt_family_find(family);
    gt_params p;
    char err[256];
    const gt_limits l = h100();
    const gt_shape s = {m, n, k, 0, 0};
    if (!f || gt_params_parse(f, params, &p, err, sizeof err)) return -1;
    return gt_model_time(f, &p, &s, &l);
}

#define MS "BM=128,BN=128,BK=8,WM=64,WN=64,WNITER=2,TM=4,TN=4,STAGES=3,MINB=1,RASTER=1"

GT_TEST(model_sees_waves_and_edge_tiles, GT_NEEDS_NONE)
{
    /* 12 x 11 = 132 tiles of 128 x 128 fill the SMs once; one row of tiles more is a second wave */
    const double one = t("multistage", MS ",SPLITK=1", 1536, 1408, 4096), two = t("multistage", MS ",SPLITK=1", 1664, 1408, 4096);
    CHECK_MSG(one > 0 && two > 1.5 * one, "%.4g s for one wave, %.4g s for a wave and a row", one, two);
    /* one row past the last tile costs a whole row of tiles, here a second wave */
    const double edge = t("multistage", MS ",SPLITK=1", 1537, 1408, 4096);
    CHECK_MSG(edge > 1.5 * one, "%.4g s at M 1536, %.4g s at M 1537", one, edge);
    const double fit = t("multistage", MS ",SPLITK=1", 4096, 4096, 1024);
    /* twice the K, about twice the time, on a shape the FMAs bound */
    const double k2 = t("multistage", MS ",SPLITK=1", 4096, 4096, 2048);
    CHECK_MSG(k2 > 1.8 * fit && k2 < 2.2 * fit, "%.4g s at K 1024, %.4g s at K 2048", fit, k2);
}

GT_TEST(model_prefers_split_k_on_deep_small_shapes_only, GT_NEEDS_NONE)
{
    /* 4 tiles on 132 SMs: splitting K eight ways fills more of the GPU */
    const double deep1 = t("multistage", MS ",SPLITK=1", 256, 256, 65536), deep8 = t("multistage", MS ",SPLITK=8", 256, 256, 65536);
    CHECK_MSG(deep8 > 0 && deep8 < 0.5 * deep1, "256x256x65536: %.4g s whole, %.4g s split 8 ways", deep1, deep8);
    /* a GPU already full: the split only adds its workspace and reduce */
    const double big1 = t("multistage", MS ",SPLITK=1", 4096, 4096, 4096), big4 = t("multistage", MS ",SPLITK=4", 4096, 4096, 4096);
    CHECK_MSG(big4 > big1, "4096^3: %.4g s whole, %.4g s split 4 ways", big1, big4);
}

GT_TEST(model_charges_a_skinny_tile_its_padding, GT_NEEDS_NONE)
{
    /* M = 33 in 36 rows per lane, or in 64: the padded rows are work */
    const double sr36 = t("skinny", "SIDE=0,SR=36,TL=2,WARPS=4,KC=8,STAGES=3,FILL=16", 33, 8191, 4097);
    const double sr64 = t("skinny", "SIDE=0,SR=64,TL=2,WARPS=4,KC=8,STAGES=3,FILL=16", 33, 8191, 4097);
    CHECK_MSG(sr36 > 0 && sr64 > 1.3 * sr36, "SR=36 %.4g s, SR=64 %.4g s", sr36, sr64);
    /* and it is bound by reading B once: not below DRAM's time for it (~3 TB/s) */
    CHECK_MSG(sr36 > 4.0 * 8191 * 4097 / 3.5e12, "%.4g s", sr36);
}

/* tf32x3wg's view of its blocks (its work hook): with CT a block tiles C's rows by BN, so a batch of 1 in 16-wide
 * tiles is not charged 128 rows; and a narrow wgmma reaches less of the tensor cores' rate than a wide one, so at a
 * large shape its 128 x 16 and 128 x 32 tiles come after its 128 x 128 (screened first, they once put the family out
 * of reach there: docs/BENCHMARKS.md, 2026-11-28). */
GT_TEST(model_sees_tf32x3wg_tiles_as_they_run, GT_NEEDS_NONE)
{
    const char *wide = "BM=128,BN=128,BK=32,STAGES=3,KC=128,PF=1,MINB=1";
    const char *ct16 = "BM=128,BN=16,BK=32,STAGES=2,KC=32,PF=1,MINB=1,SK=2,CT=1";
    const char *n32 = "BM=128,BN=32,BK=32,STAGES=2,KC=32,PF=1,MINB=1,SK=2";
    const char *n16 = "BM=128,BN=16,BK=32,STAGES=2,KC=32,PF=1,MINB=1,SK=2"; /* 128 rows of C a block, 16 columns */
    const double w1 = t("tf32x3wg", wide, 1, 4096, 4096), c1 = t("tf32x3wg", ct16, 1, 4096, 4096),
                 r1 = t("tf32x3wg", n16, 1, 4096, 4096);
    CHECK_MSG(w1 > 0 && c1 > 0 && c1 < 0.5 * w1 && c1 < 0.5 * r1, "1 x 4096 x 4096: 128 x 128 %.4g s, 128 x 16 %.4g s, "
              "CT 16 %.4g s", w1, r1, c1);
    const double wl = t("tf32x3wg", wide, 8192, 3072, 768), cl = t("tf32x3wg", ct16, 8192, 3072, 768),
                 nl = t("tf32x3wg", n32, 8192, 3072, 768);
    CHECK_MSG(wl > 0 && nl > 1.5 * wl && cl > 1.5 * wl, "8192 x 3072 x 768: 128 x 128 %.4g s, 128 x 32 %.4g s, CT 16 "
              "%.4g s", wl, nl, cl);
}

GT_TEST(model_leaves_library_algorithms_and_batches_it_cannot_run, GT_NEEDS_NONE)
{
    const gt_limits l = h100();
    const gt_family *cub = gt_family_find("cublas"), *ms = gt_family_find("multistage");
    gt_params p;
    char err[256];
    const gt_shape s = {1024, 1024, 1024, 0, 0}, batch = {512, 512, 512, 0, 0, 8};
    CHECK(cub && gt_params_parse(cub, "API=0,ALGO=0,TILE=0,SPLITK=0,RED=0,SWIZZLE=0,CUSTOM=0,STAGES=0,INNER=0,CLUSTER=0,"
                                 "WSKB=0,VER=130100", &p, err, sizeof err) == 0);
    CHECK(gt_model_time(cub, &p, &s, &l) == 0); /* the library picks its own grid */
    CHECK(ms && gt_params_parse(ms, MS ",SPLITK=4", &p, err, sizeof err) == 0);
    CHECK(gt_model_time(ms, &p, &batch, &l) == 0); /* a split-K point cannot take a batch in one launch */
    CHECK(gt_params_parse(ms, MS ",SPLITK=1", &p, err, sizeof err) == 0);
    const gt_shape single = {512, 512, 512, 0, 0};
    const double one = gt_model_time(ms, &p, &single, &l), eight = gt_model_time(ms, &p, &batch, &l);
    /* 16 tiles leave most SMs idle; a batch of 8 fills them in the same wave */
    CHECK_MSG(eight > 0.9 * one && eight < 2 * one, "a batch of 8 x 512^3 %.4g s, one 512^3 %.4g s", eight, one);
}
