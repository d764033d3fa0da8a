/* Family skinnyr3 without a GPU: constraints, the default space, launch geometry (the block, the K split and its
 * workspace), which calls a kernel takes, and NVRTC compiles of both sides in every layout with zero spills (that
 * FILL is launch-only, never rendered: tests/test_kernels.c's render_defines_every_param, for every family). Its
 * results against FP64: tests/test_gpu.c (gpu_skinnyr3_kernels_match_dgemm_as_sgemm_does). Run: build/gt_tests --cpu
 * skinnyr3 */
#include "family.h"
#include "harness.h"
#include "toolkit.h"

#include <stdlib.h>
#include <string.h>

/* SIDE SR MT WARPS P MINB FILL */
static const gt_params m40 = {{0, 40, 2, 8, 4, 1, 16}};  /* 33..40 rows, two tiles a warp: the H200's best */
static const gt_params m40a = {{0, 40, 1, 8, 4, 2, 16}}; /* ... one tile, two blocks an SM */
static const gt_params n16 = {{1, 16, 2, 8, 4, 1, 16}};  /* N up to 16 */
static const gt_params m64 = {{0, 64, 1, 8, 4, 1, 8}};   /* the most rows */

static const gt_family *fam(void) { return gt_family_find("skinnyr3"); }

static int legal(const gt_params *p, char *why, size_t n) { return gt_legal_on(fam(), "sm_90", p, why, n); }

GT_TEST(skinnyr3_constraints_reject_bad_points, GT_NEEDS_NONE)
{
    char why[256];
    CHECK(fam() && fam()->math == GT_MATH_TF32X3 && gt_family_reference(fam()) == GT_REF_FP64 && fam()->batched);
    CHECK(legal(&m40, why, sizeof why) && legal(&m40a, why, sizeof why) && legal(&n16, why, sizeof why) &&
          legal(&m64, why, sizeof why));
    static const gt_refusal bad[] = {
        {{{2, 40, 2, 8, 4, 1, 16}}, "SIDE"},      {{{0, 36, 2, 8, 4, 1, 16}}, "SR"},
        {{{0, 72, 1, 8, 4, 1, 16}}, "SR"},        {{{0, 0, 1, 8, 4, 1, 16}}, "SR"},
        {{{0, 40, 0, 8, 4, 1, 16}}, "MT"},        {{{0, 40, 2, 0, 4, 1, 16}}, "WARPS"},
        {{{0, 40, 2, 8, 0, 1, 16}}, "P"},         {{{0, 40, 2, 8, 9, 1, 16}}, "P"},
        {{{0, 40, 2, 8, 4, 0, 16}}, "MINB"},      {{{0, 40, 2, 8, 4, 1, 0}}, "FILL"},
        {{{0, 56, 2, 8, 4, 1, 16}}, "registers"}, {{{0, 40, 2, 8, 4, 2, 16}}, "registers"},
        {{{0, 48, 1, 8, 4, 2, 16}}, "registers"}
    };
    const int first = gt_first_not_refused(fam(), "sm_90", bad, sizeof bad / sizeof bad[0], why, sizeof why);
    CHECK_MSG(first < 0, "point %d: '%s'", first, why);
    why[0] = '\0';
    CHECK_MSG(!gt_legal_on(fam(), "sm_75", &m40a, why, sizeof why) && strstr(why, "sm_80"), "'%s'", why);
}

/* The default space: blocks of 8 warps, 4 steps in flight, two tiles a warp in one block an SM, one tile in one or
 * two; every point legal on sm_90 with both sides, 80 to 240 candidates (FILL's four values each). */
GT_TEST(skinnyr3_default_space_keeps_what_won, GT_NEEDS_NONE)
{
    char why[256];
    CHECK(fam()->in_space(&m40, why, sizeof why) && fam()->in_space(&m40a, why, sizeof why));
    CHECK(fam()->in_space(&n16, why, sizeof why) && fam()->in_space(&m64, why, sizeof why));
    gt_params p = m40;
    p.v[3] = 4;
    CHECK(!fam()->in_space(&p, why, sizeof why) && strstr(why, "WARPS") && legal(&p, why, sizeof why));
    p = m40, p.v[4] = 2;
    CHECK(!fam()->in_space(&p, why, sizeof why) && strstr(why, "P=4") && legal(&p, why, sizeof why));
    p = m40, p.v[1] = 8, p.v[5] = 2; /* two tiles, two blocks an SM: legal at 8 rows, not in the space */
    CHECK(!fam()->in_space(&p, why, sizeof why) && strstr(why, "one block") && legal(&p, why, sizeof why));
    gt_limits lim;
    gt_limits_for_arch("sm_90", &lim);
    const int n = gt_enumerate(fam(), &lim, NULL, NULL);
    CHECK_MSG(n >= 80 && n <= 240, "%d candidates", n);
    printf("    %d candidates of skinnyr3 on sm_90\n", n);
}

/* A block is WARPS x MT x 16 columns; K is split into as many slices as FILL warps per SM hold (gt_skinny_slices),
 * and at least as many as keep a slice's X within 96 KiB, which the launch asks for; the slices meet in a workspace
 * of the slice count and the slices; a batch never splits. */
GT_TEST(skinnyr3_launch_geometry, GT_NEEDS_NONE)
{
    gt_launch L;
    const gt_shape big = {33, 8191, 4097, 0, 0};
    fam()->launch(&m40, &big, 132, &L);
    /* 32 tiles of 256 columns; floor(16 x 132 / (32 x 8)) = 8 slices (a slice's X holds 608 k's: 7 needed); 513
     * k's rounded up to 4 steps of 8: 544 k's of 40 floats */
    CHECK(L.grid[0] == 32 && L.grid[1] == 1 && L.grid[2] == 8 && L.block[0] == 256 && L.splitk == 8);
    CHECK(L.smem == 544u * 40 * 4);
    CHECK(L.ws_bytes == (64 + 8ull * (33 * 8191 + 1)) * 4 && L.rblock[0] == 256);
    const gt_shape tall = {4096, 16, 4096, 1, 0}; /* N small; A stored K x M: Y along L */
    fam()->launch(&n16, &tall, 132, &L);
    CHECK(L.grid[0] == 16 && L.grid[2] == 16 && L.block[0] == 256); /* 4096 / 256; floor(16 x 132 / 128) */
    CHECK(L.smem == 256u * 16 * 4);
    fam()->launch(&m64, &(gt_shape){64, 4096, 1 << 16, 0, 0}, 132, &L); /* X: 384 k's a slice at most */
    CHECK(L.grid[0] == 32 && L.grid[2] == 171 && L.smem == 384u * 64 * 4);
    gt_launch B;
    CHECK(gt_family_launch(fam(), &m40, &(gt_shape){33, 8191, 600, 0, 0, 8}, 132, &B));
    CHECK(B.grid[2] == 8 && B.splitk <= 1 && B.ws_bytes == 0 && B.smem == 608u * 40 * 4); /* one slice: K */
}

/* A kernel takes the calls whose large operand runs along the large side, with the smallest multiple of 8 that
 * holds the small side, and a batch whose K fits its shared memory. */
GT_TEST(skinnyr3_takes_calls_along_l_with_the_fewest_rows, GT_NEEDS_NONE)
{
    gt_call c = gt_call_tight(&(gt_shape){33, 8191, 4097, 0, 0}); /* nn: B along N */
    CHECK(fam()->applicable(&m40, &c));
    c.shape.ta = 1; /* tn */
    CHECK(fam()->applicable(&m40, &c));
    c.shape.tb = 1; /* tt: B along K */
    CHECK(!fam()->applicable(&m40, &c));
    c.shape = (gt_shape){32, 8191, 4097, 0, 0};
    CHECK(!fam()->applicable(&m40, &c)); /* SR 32 holds it */
    c.shape.m = 41;
    CHECK(!fam()->applicable(&m40, &c));
    c.shape = (gt_shape){4096, 16, 4096, 1, 0}; /* N small, A stored K x M */
    CHECK(fam()->applicable(&n16, &c) && !fam()->applicable(&m40, &c));
    c.shape.ta = 0;
    CHECK(!fam()->applicable(&n16, &c));
    c.shape = (gt_shape){33, 8191, 608, 0, 0, 4}; /* a batch: 608 k's of 40 floats in 96 KiB */
    CHECK(fam()->applicable(&m40, &c));
    c.shape.k = 609;
    CHECK(!fam()->applicable(&m40, &c));
    c.shape.batch = 1;
    CHECK(fam()->applicable(&m40, &c));
}

/* Both sides in every layout, gt_splitk_reduce beside gt_gemm, registers within each point's cap and no spills. */
GT_TEST(skinnyr3_nvrtc_both_sides_all_layouts, GT_NEEDS_NVRTC)
{
    const gt_params *keys[] = {&m40, &m40a, &n16, &m64};
    gt_compile_job jobs[16];
    int n = 0;
    for (size_t i = 0; i < 4; ++i)
        for (int l = 0; l < 4; ++l) jobs[n++] = gt_compile_job_make(fam(), keys[i], l >> 1, l & 1);
    n = gt_sample_jobs(jobs, n, gt_sample_wanted(n));
    gt_compile_all(jobs, n, "sm_90", "skinnyr3");
    for (int i = 0; i < n; ++i) {
        const gt_compile_job *j = &jobs[i];
        const int cap = 65536 / (32 * j->p.v[3] * j->p.v[5]);
        CHECK_MSG(j->rc == 0, "%s: %s", gt_layout_name(j->ta, j->tb), j->err);
        CHECK_MSG(j->spill_bytes == 0 && j->stack_bytes == 0, "%s: %d B spills", gt_layout_name(j->ta, j->tb),
                  j->spill_bytes);
        CHECK(j->has_gemm && j->has_reduce && j->regs > 0 && j->regs <= (cap < 255 ? cap : 255));
        printf("    skinnyr3 SR=%d MT=%d %s %s: %d registers\n", j->p.v[1], j->p.v[2],
               j->p.v[0] ? "N small" : "M small", gt_layout_name(j->ta, j->tb), j->regs);
    }
}
