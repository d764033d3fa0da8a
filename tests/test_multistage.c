/* Family multistage without a GPU: constraints, launch geometry, rendering, and NVRTC compiles of the key
 * configurations in all four layouts with zero spills. Run: build/gt_tests --cpu multistage */
#include "compile.h"
#include "family.h"
#include "harness.h"

#include <stdlib.h>
#include <string.h>

/* BM BN BK WM WN WNITER TM TN STAGES MINB RASTER SPLITK */
static const gt_params cublas_like = {{256, 128, 8, 64, 64, 2, 4, 4, 3, 1, 8, 1}};  /* 16x8 per thread */
static const gt_params wide = {{128, 256, 8, 64, 64, 4, 4, 4, 3, 1, 8, 1}};         /* 8x16 per thread */
static const gt_params square8x8 = {{128, 128, 8, 64, 32, 2, 4, 4, 3, 2, 1, 1}};    /* 2 blocks per SM */
static const gt_params square16x8 = {{128, 128, 16, 64, 64, 2, 4, 4, 3, 1, 8, 1}};  /* 128 threads */
static const gt_params split4 = {{128, 128, 8, 64, 32, 2, 4, 4, 3, 1, 1, 4}};
static const gt_params split128 = {{64, 64, 8, 32, 64, 2, 4, 4, 3, 1, 1, 128}};

static const gt_family *fam(void) { return gt_family_find("multistage"); }

static gt_limits sm90(void)
{
    gt_limits l;
    gt_limits_for_arch("sm_90", &l);
    return l;
}

static int is_legal(const gt_params *p, char *why, size_t n)
{
    const gt_limits l = sm90();
    return fam()->legal(p, &l, why, n);
}

/* A copy of base with parameter `name` set to v. */
static gt_params with(gt_params p, const char *name, int v)
{

    for (int i = 0; i < fam()->nparams; ++i)
        if (!strcmp(fam()->params[i].name, name)) p.v[i] = v;
    return p;
}

GT_TEST(multistage_key_configs_are_in_the_default_space, GT_NEEDS_NONE)
{
    const gt_params *keys[] = {&cublas_like, &wide, &square8x8, &square16x8, &split4, &split128};
    char why[160];
    CHECK(fam() != NULL);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; ++i) CHECK_MSG(is_legal(keys[i], why, sizeof why), "%s", why);
    const gt_limits l = sm90();
    int n = gt_enumerate(fam(), &l, NULL, NULL);
    CHECK_MSG(n >= 100 && n <= 250, "%d candidates", n);
}

GT_TEST(multistage_constraints_reject_bad_points, GT_NEEDS_NONE)
{
    char why[160];
    gt_params p = with(cublas_like, "BK", 12);
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "BK"));
    p = with(cublas_like, "TM", 6);
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "TM"));
    p = with(cublas_like, "WM", 48);                               /* 256 % 48 */
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "WM"));
    p = with(cublas_like, "WNITER", 3);                            /* 64 % 3 */
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "split"));
    p = with(cublas_like, "WNITER", 16);                           /* sub-tile 4 wide: not 32 thread tiles */
    CHECK(!is_legal(&p, why, sizeof why));
    p = with(with(cublas_like, "TM", 8), "WNITER", 1);            /* 32x4 thread tile: outside the default space */
    CHECK(!is_legal(&p, why, sizeof why));
    p = with(cublas_like, "STAGES", 1);
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "STAGES"));
    p = with(cublas_like, "SPLITK", 0);
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "SPLITK"));
    p = with(cublas_like, "MINB", 2);                              /* 128 accumulators under a 128 cap */
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "registers"));
    p = with(with(cublas_like, "BK", 64), "STAGES", 8);           /* 8 x 64 x 392 x 4 B = 784 KiB */
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "shared"));
    gt_params big = {{256, 256, 8, 32, 32, 1, 4, 4, 3, 1, 1, 1}};   /* 64 warps */
    CHECK(!is_legal(&big, why, sizeof why) && strstr(why, "threads"));
}

/* TM=8 / TN=8 sub-tiles: legal exactly when every quarter warp reads distinct bank groups. */
GT_TEST(multistage_rejects_bank_conflicted_fragments, GT_NEEDS_NONE)
{
    char why[160];
    /* 64x64 warp, TN=8, WNITER=2: sub-tile 32x32, 4 thread columns of 8 -> offsets 0,8,16,24: conflict-free */
    gt_params ok = with(cublas_like, "TN", 8);
    CHECK_MSG(is_legal(&ok, why, sizeof why) || strstr(why, "default space"), "%s", why);
    /* WNITER=1, TN=8: 8 thread columns of 8 floats span 256 B in one quarter warp: 2-way conflict */
    gt_params bad = with(with(cublas_like, "TN", 8), "WNITER", 1);
    CHECK(!is_legal(&bad, why, sizeof why) && strstr(why, "conflict"));
}

GT_TEST(multistage_limits_are_inputs, GT_NEEDS_NONE)
{
    char why[160];
    gt_limits l = sm90();
    gt_params deep = with(with(cublas_like, "BK", 16), "STAGES", 3); /* 3*16*392*4 = 75264 B: needs opt-in */
    CHECK(fam()->legal(&deep, &l, why, sizeof why));
    l.max_smem_optin = 64 * 1024;
    CHECK(!fam()->legal(&deep, &l, why, sizeof why) && strstr(why, "shared"));
    l = sm90();
    l.max_threads_per_block = 128;
    CHECK(!fam()->legal(&cublas_like, &l, why, sizeof why) && strstr(why, "threads"));
}

GT_TEST(multistage_launch_geometry, GT_NEEDS_NONE)
{
    gt_launch L;
    gt_shape s = {1025, 1023, 1021, 0, 0};
    fam()->launch(&cublas_like, &s, &L);
    CHECK(L.block[0] == 256 && L.block[1] == 1 && L.block[2] == 1);
    CHECK(L.grid[0] == 5 * 8 && L.grid[1] == 1 && L.grid[2] == 1); /* ceil(1025/256) x ceil(1023/128) tiles */
    CHECK(L.smem == 3u * 8 * (256 + 4 + 128 + 4) * 4 && L.splitk == 1 && L.ws_bytes == 0);
    fam()->launch(&square16x8, &s, &L);
    CHECK(L.block[0] == 128 && L.grid[0] == 9 * 8 && L.smem == 3u * 16 * (132 + 132) * 4);
    gt_shape thin = {64, 64, 65536, 1, 1};
    fam()->launch(&split128, &thin, &L);
    CHECK(L.grid[0] == 1 && L.grid[2] == 128 && L.splitk == 128 && L.block[0] == 64);
    CHECK(L.ws_bytes == (size_t)128 * 64 * 64 * 4);
    CHECK(L.rgrid[0] == 16 && L.rblock[0] == 256 && L.rgrid[1] == 1 && L.rblock[2] == 1);
    gt_shape one = {1, 1, 1, 0, 0};
    fam()->launch(&split4, &one, &L);
    CHECK(L.grid[0] == 1 && L.grid[2] == 4 && L.ws_bytes == 16 && L.rgrid[0] == 1);
}

/* Any alignment and ld is computed (16-byte copies are chosen at run time); only huge split-K workspaces are
 * refused. */
GT_TEST(multistage_applicable_bounds_split_k_workspace, GT_NEEDS_NONE)
{
    gt_call odd = {{127, 4099, 1025, 1, 0}, 1027, 4101, 4099, 4, 4, 4};
    CHECK(fam()->applicable(&cublas_like, &odd) && fam()->applicable(&split4, &odd));
    gt_call big = {{8192, 8192, 8192, 0, 0}, 8192, 8192, 8192, 16, 16, 16};
    CHECK(fam()->applicable(&cublas_like, &big));
    const gt_params split2 = with(split4, "SPLITK", 2);
    CHECK(fam()->applicable(&split2, &big));                      /* 512 MiB */
    CHECK(!fam()->applicable(&split4, &big));                     /* 1 GiB */
    gt_call thin = {{64, 64, 65536, 0, 0}, 65536, 64, 64, 16, 16, 16};
    CHECK(fam()->applicable(&split128, &thin));
}

GT_TEST(multistage_render_has_layout_and_params, GT_NEEDS_NONE)
{
    char err[256];
    char *src = gt_render(fam(), &cublas_like, 0, 1, err, sizeof err);
    CHECK_MSG(src != NULL, "%s", err);
    if (!src) return;
    CHECK(strstr(src, "#define GT_TA 0\n#define GT_TB 1\n"));
    CHECK(strstr(src, "#define BM 256\n#define BN 128\n#define BK 8\n"));
    CHECK(strstr(src, "#define STAGES 3\n") && strstr(src, "#define RASTER 8\n") && strstr(src, "#define SPLITK 1\n"));
    CHECK(strstr(src, "cp.async.cg.shared.global") && strstr(src, "gt_gemm"));
    free(src);
}

static void compile_ok(const gt_params *p, int ta, int tb, int max_regs)
{
    char err[512], name[256];
    gt_params_format(fam(), p, name, sizeof name);
    char *src = gt_render(fam(), p, ta, tb, err, sizeof err);
    gt_cubin c;
    int rc = src ? gt_nvrtc_compile(src, "sm_90", &c, err, sizeof err) : -1;
    CHECK_MSG(rc == 0, "%s %s: %s %s", name, gt_layout_name(ta, tb), err, rc == 1 && c.log ? c.log : "");
    if (rc == 0) {
        CHECK_MSG(c.spill_bytes == 0 && c.stack_bytes == 0, "%s %s: %d B spills, %d B stack", name,
                  gt_layout_name(ta, tb), c.spill_bytes, c.stack_bytes);
        CHECK_MSG(c.regs > 0 && c.regs <= max_regs, "%s %s: %d registers over %d", name, gt_layout_name(ta, tb),
                  c.regs, max_regs);
        printf("    %s %s: %d registers\n", name, gt_layout_name(ta, tb), c.regs);
    }
    gt_cubin_free(&c);
    free(src);
}

GT_TEST(multistage_nvrtc_key_configs_all_layouts, GT_NEEDS_NVRTC)
{
    const gt_params *keys[] = {&cublas_like, &wide, &square8x8, &square16x8};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; ++i)
        for (int l = 0; l < 4; ++l) compile_ok(keys[i], l >> 1, l & 1, keys[i] == &square8x8 ? 128 : 255);
}

GT_TEST(multistage_nvrtc_split_k, GT_NEEDS_NVRTC)
{
    compile_ok(&split4, 0, 0, 255);
    compile_ok(&split4, 1, 1, 255);
    compile_ok(&split128, 0, 1, 255);
    compile_ok(&split128, 1, 0, 255);
}
