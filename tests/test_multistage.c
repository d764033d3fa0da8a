/* Family multistage without a GPU: constraints, launch geometry, rendering, and NVRTC compiles of the key
 * configurations in all four layouts with zero spills. Run: build/gt_tests --cpu multistage */
#include "compile.h"
#include "family.h"
#include "fixture.h"
#include "harness.h"
#include "toolkit.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

/* BM BN BK WM WN WNITER TM TN STAGES MINB RASTER SPLITK */
static const gt_params cublas_like = {{256, 128, 8, 64, 64, 2, 4, 4, 3, 1, 8, 1}};  /* 16x8 per thread */
static const gt_params wide = {{128, 256, 8, 64, 64, 4, 4, 4, 3, 1, 8, 1}};         /* 8x16 per thread */
static const gt_params square8x8 = {{128, 128, 8, 64, 32, 2, 4, 4, 3, 2, 1, 1}};    /* 2 blocks per SM */
static const gt_params square16x8 = {{128, 128, 16, 64, 64, 2, 4, 4, 3, 1, 8, 1}};  /* 128 threads */
static const gt_params split4 = {{128, 128, 8, 64, 32, 2, 4, 4, 3, 1, 1, 4}};
static const gt_params split128 = {{64, 64, 8, 32, 64, 2, 4, 4, 3, 1, 1, 128}};
static const gt_params stream1 = {{128, 128, 8, 64, 32, 2, 4, 4, 3, 1, 1, 1, 1}};   /* stream-K, 1 block per SM */
static const gt_params stream2 = {{128, 128, 8, 64, 64, 2, 4, 4, 3, 1, 1, 1, 2}};   /* 4 warps, 2 blocks per SM */
static const gt_params stream_big = {{256, 128, 8, 64, 64, 2, 4, 4, 3, 1, 1, 1, 1}}; /* 128 results per thread */
static const gt_params skinny_m = {{16, 128, 8, 16, 64, 1, 4, 4, 3, 1, 1, 1, 2}};     /* M ~ 16, stream-K */
static const gt_params skinny_n = {{128, 16, 8, 64, 16, 2, 4, 4, 3, 1, 1, 4, 0}};     /* N ~ 16, split-K */
static const gt_params edge = {{128, 128, 8, 64, 32, 2, 4, 4, 3, 1, 1, 2, 0, 1}};    /* edge steady loop, split-K */
static const gt_params wide96_n = {{256, 96, 8, 64, 32, 2, 4, 4, 3, 1, 1, 1, 1}};    /* N ~ 96, stream-K, 12 warps */
static const gt_params wide96_m = {{96, 256, 8, 32, 64, 2, 4, 4, 3, 1, 1, 1, 1}};    /* M ~ 96, stream-K */
static const gt_params split96 = {{64, 96, 8, 64, 32, 2, 4, 4, 3, 1, 1, 4, 0, 1}};   /* 6 warps, split-K, EDGE */
/* 48-wide warps across 96 (8 x 12 sums a thread; 128 threads copy a 96-wide stage in passes of 5 k rows and a part) */
static const gt_params w48_n = {{128, 96, 8, 64, 48, 3, 4, 4, 3, 1, 1, 1, 2}};      /* stream-K, 2 blocks an SM */
static const gt_params w48_m = {{96, 128, 8, 48, 64, 2, 4, 4, 3, 1, 1, 4, 0}};      /* 12 x 8 sums, split-K */
static const gt_params w48_deep = {{256, 96, 16, 64, 48, 3, 4, 4, 2, 1, 1, 1, 1}};  /* streamed, k 16 a stage */
static const gt_params w48_deep_kt = {{256, 96, 16, 64, 48, 3, 4, 4, 2, 1, 1, 1, 1, 0, 1}}; /* ... and KT */
/* KT: the k-contiguous operand through registers (a 16x8 thread tile with 2 stages; 8x8 with stream-K, 4 warps;
 * 8x8 with 12 warps and stream-K) */
static const gt_params kt_big = {{256, 128, 8, 64, 64, 2, 4, 4, 2, 1, 1, 1, 0, 0, 1}};
static const gt_params kt_square = {{128, 128, 8, 64, 64, 2, 4, 4, 3, 1, 1, 1, 2, 0, 1}};
static const gt_params kt_96 = {{256, 96, 8, 64, 32, 2, 4, 4, 3, 1, 1, 1, 1, 0, 1}};

static const gt_family *fam(void) { return gt_family_find("multistage"); }

static gt_limits sm90(void)
{
    gt_limits l;
    gt_limits_for_arch("sm_90", &l);
    return l;
}

static int is_legal(const gt_params *p, char *why, size_t n) { return gt_legal_on(fam(), "sm_90", p, why, n); }

/* A copy of base with parameter `name` set to v. */
static gt_params with(gt_params p, const char *name, int v) { return gt_params_with(fam(), p, name, v); }

GT_TEST(multistage_key_configs_are_in_the_default_space, GT_NEEDS_NONE)
{
    const gt_params *keys[] = {&cublas_like, &wide, &square8x8, &square16x8, &split4, &split128, &stream1, &stream2,
                               &stream_big, &skinny_m, &skinny_n, &edge, &wide96_n, &wide96_m, &split96,
                               &kt_big, &kt_square, &kt_96, &w48_n, &w48_m, &w48_deep, &w48_deep_kt};
    char why[160];
    CHECK(fam() != NULL);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; ++i)
        CHECK_MSG(is_legal(keys[i], why, sizeof why) && fam()->in_space(keys[i], why, sizeof why), "%s", why);
    const gt_limits l = sm90();
    int n = gt_enumerate(fam(), &l, NULL, NULL);
    CHECK_MSG(n >= 100 && n <= 600, "%d candidates", n);
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
    p = with(with(cublas_like, "TM", 8), "WNITER", 1);            /* 32x4 thread tile: legal, outside the space */
    CHECK(is_legal(&p, why, sizeof why));
    CHECK(fam()->in_space && !fam()->in_space(&p, why, sizeof why) && strstr(why, "default space"));
    CHECK(fam()->in_space(&cublas_like, why, sizeof why));
    p = with(cublas_like, "STAGES", 1);
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "STAGES"));
    p = with(cublas_like, "SPLITK", 0);
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "SPLITK"));
    p = with(cublas_like, "MINB", 2);                              /* 128 accumulators under a 128 cap */
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "registers"));
    p = with(with(cublas_like, "BK", 64), "STAGES", 8);           /* 8 x 64 x 392 x 4 B = 784 KiB */
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "shared"));
    p = with(cublas_like, "BM", 1000000);                           /* refused before any product overflows */
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "BM=1000000"));
    p = with(cublas_like, "SPLITK", 70000);                         /* over the grid's z limit */
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "SPLITK"));
    gt_params big = {{256, 256, 8, 32, 32, 1, 4, 4, 3, 1, 1, 1}};   /* 64 warps */
    CHECK(!is_legal(&big, why, sizeof why) && strstr(why, "threads"));
    p = with(skinny_m, "WN", 32);                                  /* 16-row tiles take 16 x 64 warps */
    CHECK(is_legal(&p, why, sizeof why) && !fam()->in_space(&p, why, sizeof why) && strstr(why, "16-wide"));
    p = with(skinny_n, "STAGES", 4);
    CHECK(is_legal(&p, why, sizeof why) && !fam()->in_space(&p, why, sizeof why) && strstr(why, "16-wide"));
    p = with(split96, "SPLITK", 2);                                /* 96-wide tiles split 1, 4 or 8 ways */
    CHECK(is_legal(&p, why, sizeof why) && !fam()->in_space(&p, why, sizeof why) && strstr(why, "96-wide"));
    p = with(with(wide96_m, "BN", 96), "WN", 32);                  /* 96 x 96: legal, never a winner */
    CHECK(is_legal(&p, why, sizeof why) && !fam()->in_space(&p, why, sizeof why) && strstr(why, "96 x 64"));
    p = with(with(wide96_n, "BN", 64), "WN", 64);                  /* 256 x 64 stays outside: 4:1 */
    CHECK(is_legal(&p, why, sizeof why) && !fam()->in_space(&p, why, sizeof why) && strstr(why, "2:1"));
    p = with(kt_big, "BK", 16);                                    /* KT's stores conflict at four quads a row */
    CHECK(is_legal(&p, why, sizeof why) && !fam()->in_space(&p, why, sizeof why) && strstr(why, "KT=1"));
    p = with(kt_square, "SK", 0);                                  /* 3 stages without stream-K: never won */
    CHECK(is_legal(&p, why, sizeof why) && !fam()->in_space(&p, why, sizeof why) && strstr(why, "KT=1"));
    p = with(skinny_m, "KT", 1);
    CHECK(is_legal(&p, why, sizeof why) && !fam()->in_space(&p, why, sizeof why) && strstr(why, "16-wide"));
    p = with(kt_square, "KT", 2);
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "KT=2"));
    p = with(w48_n, "BM", 64);             /* 64 threads: passes of 2 k rows and a part would copy past BK = 8 */
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "copies"));
    p = with(p, "BK", 16);                 /* ... as past 16 */
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "copies"));
    p = with(with(w48_n, "BN", 192), "SK", 0); /* 48-wide warps in a 192-wide tile: legal, outside the space */
    CHECK(is_legal(&p, why, sizeof why) && !fam()->in_space(&p, why, sizeof why) && strstr(why, "48-wide"));
    p = with(w48_deep, "SK", 0);               /* k 16 a stage through 2 stages: streamed only */
    CHECK(is_legal(&p, why, sizeof why) && !fam()->in_space(&p, why, sizeof why) && strstr(why, "96-wide"));
    p = with(w48_deep, "STAGES", 3);
    CHECK(is_legal(&p, why, sizeof why) && !fam()->in_space(&p, why, sizeof why) && strstr(why, "96-wide"));
    p = with(with(stream_big, "BK", 16), "STAGES", 2); /* ... and in 96-wide tiles only */
    CHECK(is_legal(&p, why, sizeof why) && !fam()->in_space(&p, why, sizeof why) && strstr(why, "SK > 0"));
}

/* KT is offered where B is stored with k contiguous (nt, tt); in nn it lost 1-4% (docs/BENCHMARKS.md), in tn it
 * would change nothing. */
GT_TEST(multistage_kt_applies_where_b_has_k_contiguous, GT_NEEDS_NONE)
{
    for (int l = 0; l < 4; ++l) {
        const gt_call call = {.shape = {1024, 1024, 1024, l >> 1, l & 1, 1}};
        CHECK_MSG(fam()->applicable(&kt_square, &call) == (l & 1), "layout %s", gt_layout_name(l >> 1, l & 1));
        CHECK(fam()->applicable(&stream2, &call));
    }
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
    fam()->launch(&cublas_like, &s, GT_TEST_SMS, &L);
    CHECK(L.block[0] == 256 && L.block[1] == 1 && L.block[2] == 1);
    CHECK(L.grid[0] == 5 * 8 && L.grid[1] == 1 && L.grid[2] == 1); /* ceil(1025/256) x ceil(1023/128) tiles */
    CHECK(L.smem == 3u * 8 * (256 + 4 + 128 + 4) * 4 && L.splitk == 1 && L.ws_bytes == 0);
    fam()->launch(&square16x8, &s, GT_TEST_SMS, &L);
    CHECK(L.block[0] == 128 && L.grid[0] == 9 * 8 && L.smem == 3u * 16 * (132 + 132) * 4);
    gt_shape thin = {64, 64, 65536, 1, 1};
    fam()->launch(&split128, &thin, GT_TEST_SMS, &L);
    CHECK(L.grid[0] == 1 && L.grid[2] == 128 && L.splitk == 128 && L.block[0] == 64);
    CHECK(L.ws_bytes == (size_t)128 * 64 * 64 * 4);
    CHECK(L.rgrid[0] == 16 && L.rblock[0] == 256 && L.rgrid[1] == 1 && L.rblock[2] == 1);
    gt_shape one = {1, 1, 1, 0, 0};
    fam()->launch(&split4, &one, GT_TEST_SMS, &L);
    CHECK(L.grid[0] == 1 && L.grid[2] == 4 && L.ws_bytes == 16 && L.rgrid[0] == 1);
}

/* Stream-K: a persistent grid of SK blocks per SM, tile counters zeroed by the launch, two partial slots per block;
 * no workspace when the tiles make whole waves; SK excludes split-K and is left out of the canonical text at 0. */
GT_TEST(multistage_stream_k_geometry_and_text, GT_NEEDS_NONE)
{
    gt_launch L;
    gt_shape odd = {777, 1531, 2049, 0, 0}; /* 7 x 12 = 84 tiles, fewer than the SMs: all shared out */
    fam()->launch(&stream1, &odd, 132, &L);
    CHECK(L.grid[0] == 132 && L.grid[1] == 1 && L.grid[2] == 1 && L.block[0] == 256 && L.splitk == 1);
    CHECK(fam()->applicable(&stream1, &(gt_call){odd, 2049, 1531, 1531, 4, 4, 4}));
    CHECK(!fam()->applicable(&stream1, &(gt_call){{64, 64, 8 << 20, 0, 0}, 8 << 20, 64, 64, 16, 16, 16}));
    CHECK(L.ws_zero == 128 * 4 && L.ws_bytes == L.ws_zero + (size_t)2 * 132 * 128 * 128 * 4);
    fam()->launch(&stream2, &odd, 132, &L);
    CHECK(L.grid[0] == 264 && L.block[0] == 128 && L.ws_bytes == L.ws_zero + (size_t)2 * 264 * 128 * 128 * 4);
    gt_shape whole = {128 * 12, 128 * 11, 1000, 0, 0}; /* 132 tiles: one whole wave, nothing to fix up */
    fam()->launch(&stream1, &whole, 132, &L);
    CHECK(L.grid[0] == 132 && L.ws_bytes == 0 && L.ws_zero == 0);
    gt_shape tiny = {64, 64, 64, 0, 0}; /* 1 tile of 8 K tiles: never more blocks than K tiles */
    fam()->launch(&stream1, &tiny, 132, &L);
    CHECK(L.grid[0] == 8 && L.ws_zero == 64 * 4);
    fam()->launch(&stream1, &odd, 0, &L); /* SMs unknown (a plan ahead of the GPU): a block a tile, no workspace */
    CHECK(L.grid[0] == 84 && L.ws_bytes == 0 && L.ws_zero == 0);

    char why[160], text[256], err[160];
    CHECK(is_legal(&stream1, why, sizeof why) && is_legal(&stream2, why, sizeof why));
    gt_params p = with(stream1, "SPLITK", 4);
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "exclusive"));
    p = with(stream1, "SK", 9);
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "SK=9"));
    p = with(stream1, "SK", 2); /* 256 threads x ~100 registers: two blocks cannot share an SM */
    CHECK(is_legal(&p, why, sizeof why) && !fam()->in_space(&p, why, sizeof why) && strstr(why, "share"));
    CHECK(fam()->in_space(&stream1, why, sizeof why) && fam()->in_space(&stream2, why, sizeof why));
    gt_params_format(fam(), &cublas_like, text, sizeof text);
    CHECK_MSG(!strstr(text, "SK=") && !strcmp(text + strlen(text) - 8, "SPLITK=1"), "%s", text);
    CHECK(gt_params_parse(fam(), text, &p, err, sizeof err) == 0 && gt_param_get(fam(), &p, "SK", -1) == 0);
    gt_params_format(fam(), &stream2, text, sizeof text);
    CHECK_MSG(strstr(text, ",SPLITK=1,SK=2"), "%s", text);
    CHECK(gt_params_parse(fam(), text, &p, err, sizeof err) == 0 && !memcmp(&p, &stream2, sizeof p));
}

/* EDGE: optional (left out of the text at 0), 0 or 1, in the default space only where it changes the kernel
 * (stream-K kernels have the edge loop anyway) and beside 3 stages, BK 8, MINB 1 and RASTER 1. */
GT_TEST(multistage_edge_param_text_and_space, GT_NEEDS_NONE)
{
    char why[160], text[256], err[160];
    gt_params p;
    gt_params_format(fam(), &edge, text, sizeof text);
    CHECK_MSG(strlen(text) > 16 && !strcmp(text + strlen(text) - 16, ",SPLITK=2,EDGE=1"), "%s", text);
    CHECK(gt_params_parse(fam(), text, &p, err, sizeof err) == 0 && !memcmp(&p, &edge, sizeof p));
    CHECK(fam()->in_space(&edge, why, sizeof why));
    p = with(edge, "EDGE", 2);
    CHECK(!is_legal(&p, why, sizeof why) && strstr(why, "EDGE=2"));
    p = with(with(edge, "SPLITK", 1), "SK", 1);
    CHECK(is_legal(&p, why, sizeof why) && !fam()->in_space(&p, why, sizeof why) && strstr(why, "EDGE=1"));
    p = with(with(edge, "SPLITK", 1), "STAGES", 4);
    CHECK(!fam()->in_space(&p, why, sizeof why) && strstr(why, "EDGE"));
    CHECK(!fam()->in_space(&(gt_params){{16, 128, 8, 16, 64, 1, 4, 4, 3, 1, 1, 4, 0, 1}}, why, sizeof why));
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

/* EVEN follows the call: 1 where C is whole tiles and every operand 16-byte aligned with ld a multiple of 4, else
 * 0 (also for a point that had it); applicable() refuses the variant anywhere else; the text names it; an EDGE=1
 * point's variant is EDGE=0's (dropped from the plan), and the default space lists no point with it (a sweep
 * specializes its points: tuner/plan.c). */
GT_TEST(multistage_even_follows_the_call, GT_NEEDS_NONE)
{
    char why[160], text[256], err[160];
    const gt_shape whole = {1024, 768, 1021, 1, 0}, partial = {1000, 768, 1024, 1, 0}, oddk = {1024, 768, 1021, 0, 0};
    const gt_call tight = gt_call_tight(&whole);
    gt_params p = cublas_like; /* 256 x 128 */
    CHECK(fam()->specialize(&p, &tight) == 1);
    CHECK(gt_param_get(fam(), &p, "EVEN", -1) == 1 && fam()->applicable(&p, &tight));
    gt_params_format(fam(), &p, text, sizeof text);
    CHECK_MSG(strstr(text, ",EVEN=1") && gt_params_parse(fam(), text, &(gt_params){0}, err, sizeof err) == 0, "%s",
              text);
    CHECK(is_legal(&p, why, sizeof why));
    const gt_params two = with(p, "EVEN", 2);
    CHECK(!is_legal(&two, why, sizeof why) && strstr(why, "EVEN=2"));
    /* ldc, B's alignment, a batch's stride, partial tiles, and nn's lda = K = 1021 */
    gt_call bad[5] = {tight, tight, tight, gt_call_tight(&partial), gt_call_tight(&oddk)};
    bad[0].ldc = 770, bad[1].align_b = 8, bad[2].shape.batch = 2, bad[2].stride_a = 1024LL * 1021 + 2;
    for (int i = 0; i < 5; ++i) {
        gt_params q = p;
        fam()->specialize(&q, &bad[i]);
        CHECK_MSG(gt_param_get(fam(), &q, "EVEN", -1) == 0 && !fam()->applicable(&p, &bad[i]) &&
                      fam()->applicable(&q, &bad[i]),
                  "call %d", i);
    }
    gt_params_format(fam(), &cublas_like, text, sizeof text);
    CHECK(!strstr(text, "EVEN"));
    const gt_params wide96 = wide96_n; /* 256 x 96: 768 columns are whole tiles of 96 as well */
    gt_params q = wide96;
    fam()->specialize(&q, &tight);
    CHECK(gt_param_get(fam(), &q, "EVEN", -1) == 1);
    q = skinny_m; /* 16 x 128 on 1024 x 768 */
    fam()->specialize(&q, &tight);
    CHECK(gt_param_get(fam(), &q, "EVEN", -1) == 1);
    const gt_shape m96 = {96 * 11, 768, 512, 0, 0};
    const gt_call c96 = gt_call_tight(&m96);
    q = cublas_like;
    fam()->specialize(&q, &c96);
    CHECK(gt_param_get(fam(), &q, "EVEN", -1) == 0); /* 1056 rows are not whole tiles of 256 */
    char *src = gt_render(fam(), &p, 1, 0, 0, err, sizeof err);
    CHECK_MSG(src && strstr(src, "#define EVEN 1\n"), "%s", src ? "no EVEN" : err);
    free(src);
    const gt_params edge64 = with(with(edge, "BM", 64), "WM", 32); /* EDGE=1, 64 x 128 */
    q = edge64;
    CHECK(fam()->specialize(&q, &tight) == 0 && gt_param_get(fam(), &q, "EDGE", -1) == 0 &&
          gt_param_get(fam(), &q, "EVEN", -1) == 1);
    q = edge64;
    CHECK(fam()->specialize(&q, &bad[3]) == 1 && !memcmp(&q, &edge64, sizeof q)); /* partial tiles: as it was */
    const gt_limits l = sm90();
    int points = 0;
    CHECK(gt_fixture_space_with(fam(), &l, "EVEN", &points) == 0 && points > 0);
}

GT_TEST(multistage_render_has_layout_and_params, GT_NEEDS_NONE)
{
    char err[256];
    char *src = gt_render(fam(), &cublas_like, 0, 1, 0, err, sizeof err);
    CHECK_MSG(src != NULL, "%s", err);
    if (!src) return;
    CHECK(strstr(src, "#define GT_TA 0\n#define GT_TB 1\n"));
    CHECK(strstr(src, "#define BM 256\n#define BN 128\n#define BK 8\n"));
    CHECK(strstr(src, "#define STAGES 3\n") && strstr(src, "#define RASTER 8\n") && strstr(src, "#define SPLITK 1\n"));
    CHECK(strstr(src, "constexpr bool L2HINT = true;") && strstr(src, "gt_gemm")); /* every copy: the L2 hint */
    char *all = gt_source_expand(src); /* with its headers (async.cuh: cp.async), as NVRTC compiles it */
    CHECK(all && strstr(all, "cp.async.cg.shared.global.L2::128B") && strstr(all, "cp.async.ca.shared.global.L2::128B"));
    free(all);
    free(src);
}

GT_TEST(multistage_nvrtc_key_configs_all_layouts, GT_NEEDS_NVRTC)
{
    const gt_params *keys[] = {&cublas_like, &wide, &square8x8, &square16x8};
    gt_compile_job jobs[16];
    int n = 0;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; ++i)
        for (int l = 0; l < 4; ++l) jobs[n++] = gt_compile_job_make(fam(), keys[i], l >> 1, l & 1);
    CHECK(gt_compile_reg_cap(&jobs[8]) == 128); /* square8x8: MINB=2 halves the file per block */
    gt_compile_all_clean(jobs, n, "sm_90", "multistage configurations");
}

/* Stream-K keys, the 16-wide tiles for skinny problems (one with stream-K, one with split-K), and EDGE. */
GT_TEST(multistage_nvrtc_stream_k_and_skinny, GT_NEEDS_NVRTC)
{
    const gt_params *keys[] = {&stream1, &stream2, &stream_big, &skinny_m, &skinny_n, &edge};
    gt_compile_job jobs[24];
    int n = 0;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; ++i)
        for (int l = 0; l < 4; ++l) jobs[n++] = gt_compile_job_make(fam(), keys[i], l >> 1, l & 1);
    gt_compile_all_clean(jobs, n, "sm_90", "multistage configurations");
}

/* The 96-wide tiles (stream-K; split-K with EDGE; streamed 16 k a stage, with and without KT), and KT with both
 * operands k-contiguous (nt) and with B alone (tt), one layout each: the CPU tests' time is CI's (the emulator runs
 * them in every layout). */
GT_TEST(multistage_nvrtc_wide96_and_kt, GT_NEEDS_NVRTC)
{
    gt_compile_job jobs[] = {gt_compile_job_make(fam(), &wide96_m, 0, 0), gt_compile_job_make(fam(), &split96, 1, 1),
                             gt_compile_job_make(fam(), &kt_square, 0, 1), gt_compile_job_make(fam(), &kt_96, 1, 1),
                             gt_compile_job_make(fam(), &w48_n, 0, 0), gt_compile_job_make(fam(), &w48_m, 1, 0),
                             gt_compile_job_make(fam(), &w48_deep, 1, 0),
                             gt_compile_job_make(fam(), &w48_deep_kt, 1, 1)};
    gt_compile_all_clean(jobs, sizeof jobs / sizeof jobs[0], "sm_90", "multistage configurations");
}

/* The whole-tile variants: unsplit, split-K, stream-K, KT, the 16- and 96-wide tiles, one layout each. */
static gt_params even(gt_params p) { return with(p, "EVEN", 1); }

GT_TEST(multistage_nvrtc_even_variants, GT_NEEDS_NVRTC)
{
    const gt_params keys[] = {even(cublas_like), even(split4), even(stream2), even(kt_square), even(skinny_m),
                              even(wide96_n)};
    const int layouts[] = {0, 2, 1, 3, 1, 2}; /* ta * 2 + tb; KT's B with k contiguous */
    gt_compile_job jobs[6];
    for (int i = 0; i < 6; ++i) jobs[i] = gt_compile_job_make(fam(), &keys[i], layouts[i] >> 1, layouts[i] & 1);
    gt_compile_all_clean(jobs, 6, "sm_90", "multistage whole-tile variants");
}

GT_TEST(multistage_nvrtc_split_k, GT_NEEDS_NVRTC)
{
    gt_compile_job jobs[] = {gt_compile_job_make(fam(), &split4, 0, 0), gt_compile_job_make(fam(), &split4, 1, 1),
                             gt_compile_job_make(fam(), &split128, 0, 1), gt_compile_job_make(fam(), &split128, 1, 0)};
    gt_compile_all_clean(jobs, 4, "sm_90", "multistage configurations");
    for (int i = 0; i < 4; ++i) CHECK(jobs[i].rc == -2 || jobs[i].has_reduce); /* -2: not in the sample */
}

/* ---- GPU: the key configurations against cuBLAS FP32 (pedantic) on odd shapes in all four layouts ---- */

typedef struct {
    const gt_params *p;
    int ta, tb;
    cudaKernel_t gemm, reduce;
    cublasHandle_t blas;
} grun;

/* Launch the candidate into dC (and cuBLAS into dR) for problem q. Returns the CUDA status. */
static cudaError_t launch_both(const grun *r, const gt_problem *q, const float *dA, const float *dB, float *dC,
                               float *dR, float *dW)
{
    gt_shape sh = {q->m, q->n, q->k, r->ta, r->tb};
    gt_launch L;
    fam()->launch(r->p, &sh, GT_TEST_SMS, &L);
    cudaError_t e =
        cudaFuncSetAttribute((const void *)r->gemm, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)L.smem);
    int M = q->m, N = q->n, K = q->k, lda = q->lda, ldb = q->ldb, ldc = q->ldc;
    float alpha = q->alpha, beta = q->beta;
    void *args[] = {&M, &N, &K, &alpha, &dA, &lda, &dB, &ldb, &beta, &dC, &ldc, &dW};
    dim3 grid = {L.grid[0], L.grid[1], L.grid[2]}, block = {L.block[0], L.block[1], L.block[2]};
    if (e == cudaSuccess && L.ws_zero) e = cudaMemset(dW, 0, L.ws_zero);
    if (e == cudaSuccess) e = cudaLaunchKernel((const void *)r->gemm, grid, block, args, L.smem, 0);
    if (e == cudaSuccess && L.splitk > 1) {
        void *rargs[] = {&M, &N, &alpha, &dW, &beta, &dC, &ldc};
        dim3 rg = {L.rgrid[0], L.rgrid[1], L.rgrid[2]}, rb = {L.rblock[0], L.rblock[1], L.rblock[2]};
        e = cudaLaunchKernel((const void *)r->reduce, rg, rb, rargs, 0, 0);
    }
    /* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T. */
    if (e == cudaSuccess &&
        cublasSgemm(r->blas, r->tb ? CUBLAS_OP_T : CUBLAS_OP_N, r->ta ? CUBLAS_OP_T : CUBLAS_OP_N, N, M, K, &alpha,
                    dB, ldb, dA, lda, &beta, dR, ldc) != CUBLAS_STATUS_SUCCESS)
        e = cudaErrorUnknown;
    return e == cudaSuccess ? cudaDeviceSynchronize() : e;
}

/* 1 when C passes the toolkit's validator against cuBLAS (what went wrong printed if not); 0 when it fails or
 * the run does. With twin, the twin runs first on the same inputs and poisoned C, and r's C must equal its bits. */
static int run_case(const grun *r, const grun *twin, const gt_problem *q)
{
    const size_t na = gt_problem_elems(q, 'A'), nb = gt_problem_elems(q, 'B'), nc = gt_problem_elems(q, 'C');
    gt_shape sh = {q->m, q->n, q->k, r->ta, r->tb};
    gt_launch L;
    fam()->launch(r->p, &sh, GT_TEST_SMS, &L);
    float *h = malloc((na + nb + 4 * nc) * sizeof(float)), *hA = h, *hB = h + na, *hC = hB + nb, *got = hC + nc,
          *ref = got + nc, *theirs = ref + nc;
    float *dA = NULL, *dB = NULL, *dC = NULL, *dR = NULL, *dW = NULL;
    unsigned seed = 1u + q->m * 7u + q->n * 13u + q->k;
    int ok = 0;
    gt_problem_fill(q, &seed, hA, hB, hC);
    if (cudaMalloc((void **)&dA, na * 4) || cudaMalloc((void **)&dB, nb * 4) || cudaMalloc((void **)&dC, nc * 4) ||
        cudaMalloc((void **)&dR, nc * 4) || (L.ws_bytes && cudaMalloc((void **)&dW, L.ws_bytes)))
        goto out;
    if (cudaMemcpy(dA, hA, na * 4, cudaMemcpyHostToDevice) || cudaMemcpy(dB, hB, nb * 4, cudaMemcpyHostToDevice) ||
        cudaMemcpy(dC, hC, nc * 4, cudaMemcpyHostToDevice) || cudaMemcpy(dR, hC, nc * 4, cudaMemcpyHostToDevice))
        goto out;
    cudaError_t e = cudaSuccess;
    if (twin && (e = launch_both(twin, q, dA, dB, dC, dR, dW)) == cudaSuccess && /* then C and cuBLAS's C afresh */
        (cudaMemcpy(theirs, dC, nc * 4, cudaMemcpyDeviceToHost) || cudaMemcpy(dC, hC, nc * 4, cudaMemcpyHostToDevice) ||
         cudaMemcpy(dR, hC, nc * 4, cudaMemcpyHostToDevice)))
        e = cudaErrorUnknown;
    if (e == cudaSuccess) e = launch_both(r, q, dA, dB, dC, dR, dW);
    CHECK_MSG(e == cudaSuccess, "launch: %s", cudaGetErrorString(e));
    if (e != cudaSuccess || cudaMemcpy(got, dC, nc * 4, cudaMemcpyDeviceToHost) ||
        cudaMemcpy(ref, dR, nc * 4, cudaMemcpyDeviceToHost))
        goto out;
    gt_verdict v;
    char text[512];
    ok = gt_validate(q, hA, hB, hC, got, ref, &v);
    gt_verdict_text(q, &v, text, sizeof text);
    if (!ok) printf("    %s\n", text);
    if (twin && memcmp(got, theirs, nc * 4)) printf("    C differs from its twin's\n"), ok = 0;
out:
    cudaFree(dA), cudaFree(dB), cudaFree(dC), cudaFree(dR), cudaFree(dW);
    free(h);
    return ok;
}

/* The cases of one compiled configuration and layout (job j, its cubin in cb) against cuBLAS. */
static void check_built(const gt_compile_job *j, const gt_cubin *cb, cublasHandle_t blas)
{
    static const struct { int m, n, k, pad; float alpha, beta; } cases[] = { /* beta 0: over NaN C */
        {1, 1, 1, 0, 1.5f, 0.0f},         {7, 13, 5, 0, 1.5f, 0.5f},         {7, 13, 5, 3, 1.5f, 0.0f},
        {127, 129, 131, 0, 1.5f, 0.0f},   {127, 129, 131, 1, 1.5f, 0.5f},    {1025, 1023, 1021, 0, 1.5f, 0.0f},
        {1025, 1023, 1021, 4, 1.5f, 0.5f}, {64, 64, 4099, 2, 1.0f, 0.5f},
        /* stream-K: 18 tiles cut among all blocks; 306 tiles, of which 132 data-parallel at SK=1 */
        {300, 700, 513, 1, 1.5f, 0.5f},    {2200, 2100, 40, 0, 1.5f, 0.0f}};
    char name[256];
    gt_params_format(fam(), &j->p, name, sizeof name);
    grun r = {&j->p, j->ta, j->tb, NULL, NULL, blas};
    cudaLibrary_t lib = NULL;
    int rc = j->rc;
    CHECK_MSG(rc == 0, "%s %s: %s", name, gt_layout_name(r.ta, r.tb), j->err);
    if (rc == 0 && (cudaLibraryLoadData(&lib, cb->data, NULL, NULL, 0, NULL, NULL, 0) ||
                    cudaLibraryGetKernel(&r.gemm, lib, "gt_gemm") ||
                    (gt_param_get(fam(), &j->p, "SPLITK", 1) > 1 &&
                     cudaLibraryGetKernel(&r.reduce, lib, "gt_splitk_reduce")))) {
        CHECK_MSG(0, "%s: load failed: %s", name, cudaGetErrorString(cudaGetLastError()));
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && i < sizeof cases / sizeof cases[0]; ++i) {
        const gt_problem q = gt_problem_make(0, r.ta, r.tb, cases[i].m, cases[i].n, cases[i].k, cases[i].pad,
                                             cases[i].alpha, cases[i].beta);
        CHECK_MSG(run_case(&r, NULL, &q), "%s %s %dx%dx%d pad %d beta %g", name, gt_layout_name(r.ta, r.tb), q.m, q.n,
                  q.k, cases[i].pad, q.beta);
    }
    if (lib) cudaLibraryUnload(lib);
}

/* jobs[0] the whole-tile variant, jobs[1] its twin, in one layout: shapes of whole tiles for every key (512 rows
 * are whole tiles of 256 and 16, 384 columns of 128 and 96), ld past the dimension by 4 or 8 (still 16-byte
 * rows), alpha and beta, beta 0 over NaN C. */
static void check_even(const gt_compile_job *jobs, const gt_cubin *cubins, cublasHandle_t blas)
{
    static const struct { int k, pad; float alpha, beta; } cases[] = {
        {4, 0, 1.5f, 0.0f}, {132, 4, 1.5f, 0.5f}, {1028, 0, 1.0f, 0.0f}, {2000, 8, -0.5f, 2.0f}};
    char name[256];
    gt_params_format(fam(), &jobs[0].p, name, sizeof name);
    grun r[2];
    cudaLibrary_t lib[2] = {NULL, NULL};
    int rc = 0;
    for (int i = 0; i < 2; ++i) {
        r[i] = (grun){&jobs[i].p, jobs[i].ta, jobs[i].tb, NULL, NULL, blas};
        CHECK_MSG(jobs[i].rc == 0, "%s %s: %s", name, gt_layout_name(r[i].ta, r[i].tb), jobs[i].err);
        if (jobs[i].rc || cudaLibraryLoadData(&lib[i], cubins[i].data, NULL, NULL, 0, NULL, NULL, 0) ||
            cudaLibraryGetKernel(&r[i].gemm, lib[i], "gt_gemm") ||
            (gt_param_get(fam(), &jobs[i].p, "SPLITK", 1) > 1 &&
             cudaLibraryGetKernel(&r[i].reduce, lib[i], "gt_splitk_reduce")))
            rc = -1;
    }
    CHECK_MSG(rc == 0, "%s: not built or loaded", name);
    for (size_t i = 0; rc == 0 && i < sizeof cases / sizeof cases[0]; ++i) {
        const gt_problem q = gt_problem_make(0, r[0].ta, r[0].tb, 512, 384, cases[i].k, cases[i].pad,
                                             cases[i].alpha, cases[i].beta);
        const gt_call call = {{q.m, q.n, q.k, q.ta, q.tb}, q.lda, q.ldb, q.ldc, 16, 16, 16};
        CHECK_MSG(fam()->applicable(&jobs[0].p, &call), "%s: the case is not whole tiles", name);
        CHECK_MSG(run_case(&r[0], &r[1], &q), "%s %s 512x384x%d pad %d beta %g", name,
                  gt_layout_name(r[0].ta, r[0].tb), q.k, cases[i].pad, q.beta);
    }
    for (int i = 0; i < 2; ++i)
        if (lib[i]) cudaLibraryUnload(lib[i]);
}

/* Issue 30: the variant a sweep compiles for shapes of whole tiles (EVEN) computes what its twin computes, bit for
 * bit, in every layout: unsplit, split-K, stream-K, KT, the 16- and 96-wide tiles. */
GT_TEST(multistage_gpu_even_equals_its_twin, GT_NEEDS_GPU)
{
    const gt_params *keys[] = {&cublas_like, &square8x8, &split4, &stream2, &kt_square, &skinny_m, &wide96_n};
    cublasHandle_t blas;
    if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS) {
        gt_skip("cuBLAS did not initialise");
        return;
    }
    cublasSetMathMode(blas, CUBLAS_PEDANTIC_MATH);
    enum { NK = sizeof keys / sizeof keys[0], NJ = 8 * NK };
    gt_compile_job jobs[NJ];
    gt_cubin cubins[NJ];
    memset(cubins, 0, sizeof cubins);
    for (int i = 0; i < NJ; i += 2) { /* variant and twin, every key in every layout */
        const int key = i / 8, l = i / 2 % 4;
        const gt_params e = even(*keys[key]);
        jobs[i] = gt_compile_job_make(fam(), &e, l >> 1, l & 1);
        jobs[i + 1] = gt_compile_job_make(fam(), keys[key], l >> 1, l & 1);
        jobs[i].keep = &cubins[i], jobs[i + 1].keep = &cubins[i + 1];
    }
    gt_compile_all(jobs, NJ, "sm_90", "multistage whole-tile variants");
    for (int i = 0; i < NJ; i += 2) {
        if (gt_param_get(fam(), &jobs[i].p, "KT", 0) && !jobs[i].tb) { /* KT: B with k contiguous only */
            gt_cubin_free(&cubins[i]), gt_cubin_free(&cubins[i + 1]);
            continue;
        }
        check_even(&jobs[i], &cubins[i], blas);
        gt_cubin_free(&cubins[i]), gt_cubin_free(&cubins[i + 1]);
    }
    cublasDestroy(blas);
}

GT_TEST(multistage_gpu_matches_cublas, GT_NEEDS_GPU)
{
    const gt_params *keys[] = {&cublas_like, &wide, &square8x8, &square16x8, &split4, &split128, &stream1, &stream2,
                               &skinny_m, &skinny_n, &edge, &wide96_n, &wide96_m, &split96, &kt_square, &kt_96,
                               &w48_n, &w48_m, &w48_deep, &w48_deep_kt};
    cublasHandle_t blas;
    if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS) {
        gt_skip("cuBLAS did not initialise");
        return;
    }
    cublasSetMathMode(blas, CUBLAS_PEDANTIC_MATH);
    enum { NK = sizeof keys / sizeof keys[0] };
    gt_compile_job jobs[4 * NK];
    gt_cubin cubins[4 * NK];
    memset(cubins, 0, sizeof cubins);
    for (int i = 0; i < 4 * NK; ++i) { /* every key in every layout, compiled on all cores first */
        jobs[i] = gt_compile_job_make(fam(), keys[i / 4], i % 4 >> 1, i % 2);
        jobs[i].keep = &cubins[i];
    }
    gt_compile_all(jobs, 4 * NK, "sm_90", "multistage configurations");
    for (int i = 0; i < 4 * NK; ++i) check_built(&jobs[i], &cubins[i], blas), gt_cubin_free(&cubins[i]);
    cublasDestroy(blas);
}
