/* Family skinnyt without a GPU: constraints (the copies' rules among them), the default space, launch geometry (the
 * block, the K split and its workspace, shared memory), which calls a kernel takes, and NVRTC compiles of both sides
 * in every layout with zero spills. Its results against cuBLAS: tests/test_gpu.c (gpu_every_family_matches_cublas
 * and gpu_skinnyt_matches_cublas); without a GPU, the CPU emulator (tests/emu/run.sh skinnyt:PARAMS, where the
 * driver's shapes fit the candidate's rows). Run: build/gt_tests --cpu skinnyt */
#include "family.h"
#include "harness.h"
#include "toolkit.h"

#include <stdlib.h>
#include <string.h>

/* SIDE ROWS RT TN WL WK KC STAGES FILL */
static const gt_params m52 = {{0, 13, 4, 8, 2, 2, 16, 3, 8}}; /* 49..52 rows: two warps across, two K groups */
static const gt_params m32 = {{0, 8, 4, 8, 4, 2, 16, 3, 8}};  /* 29..32 rows: four across */
static const gt_params m36 = {{0, 9, 4, 8, 2, 2, 8, 4, 8}};   /* 33..36 rows, stages of 8 */
static const gt_params n48 = {{1, 12, 4, 8, 4, 1, 16, 3, 8}}; /* N small, one K group */

static const gt_family *fam(void) { return gt_family_find("skinnyt"); }

static int legal(const gt_params *p, char *why, size_t n) { return gt_legal_on(fam(), "sm_90", p, why, n); }

GT_TEST(skinnyt_constraints_reject_bad_points, GT_NEEDS_NONE)
{
    char why[256];
    CHECK(fam() && fam()->math == GT_MATH_FP32 && fam()->batched);
    CHECK(legal(&m52, why, sizeof why) && legal(&m32, why, sizeof why) && legal(&m36, why, sizeof why) &&
          legal(&n48, why, sizeof why));
    static const gt_refusal bad[] = {
        {{{2, 13, 4, 8, 2, 2, 16, 3, 8}}, "SIDE"},   {{{0, 13, 3, 8, 2, 2, 16, 3, 8}}, "RT"},
        {{{0, 0, 4, 8, 2, 2, 16, 3, 8}}, "ROWS="},      {{{0, 33, 2, 4, 2, 2, 16, 3, 8}}, "ROWS="},
        {{{0, 13, 4, 6, 2, 2, 16, 3, 8}}, "TN"},     {{{0, 13, 4, 8, 3, 2, 16, 3, 8}}, "WL"},
        {{{0, 13, 4, 8, 2, 0, 16, 3, 8}}, "WK"},     {{{0, 13, 4, 8, 8, 4, 16, 3, 8}}, "16 warps"},
        {{{0, 13, 4, 8, 2, 2, 12, 3, 8}}, "KC"},     {{{0, 13, 4, 8, 2, 2, 16, 1, 8}}, "STAGES"},
        {{{0, 13, 4, 8, 2, 2, 16, 3, 0}}, "FILL"},   {{{0, 8, 4, 8, 1, 2, 16, 3, 8}}, "row groups"},
        {{{0, 8, 4, 8, 1, 1, 8, 4, 8}}, "64"},
        {{{0, 32, 2, 8, 2, 1, 16, 3, 8}}, "register"}, {{{0, 13, 4, 8, 4, 4, 32, 6, 8}}, "shared"}
    };
    const int first = gt_first_not_refused(fam(), "sm_90", bad, sizeof bad / sizeof bad[0], why, sizeof why);
    CHECK_MSG(first < 0, "point %d: '%s'", first, why);
}

/* The default space: four row groups of eight columns, ROWS up to 13, the three warp shapes and two stage shapes the
 * study kept; every point legal on sm_90 on both sides. */
GT_TEST(skinnyt_default_space_keeps_what_won, GT_NEEDS_NONE)
{
    char why[256];
    const gt_params *keys[] = {&m52, &m32, &m36, &n48};
    for (size_t i = 0; i < 4; ++i) CHECK(fam()->in_space(keys[i], why, sizeof why));
    gt_params p = m52;
    p.v[2] = 2, p.v[3] = 4; /* two row groups of four columns */
    CHECK(!fam()->in_space(&p, why, sizeof why) && strstr(why, "RT=4") && legal(&p, why, sizeof why));
    p = m52, p.v[5] = 1;
    CHECK(!fam()->in_space(&p, why, sizeof why) && strstr(why, "WL=2 with WK=2") && legal(&p, why, sizeof why));
    p = m52, p.v[6] = 8, p.v[7] = 3;
    CHECK(!fam()->in_space(&p, why, sizeof why) && strstr(why, "KC=8 in 4") && legal(&p, why, sizeof why));
    gt_limits lim;
    gt_limits_for_arch("sm_90", &lim);
    const int n = gt_enumerate(fam(), &lim, NULL, NULL);
    /* 2 sides x 9 ROWS x 3 warp shapes x 2 stage shapes x 3 FILL */
    CHECK_MSG(n == 324, "%d candidates", n);
    printf("    %d candidates of skinnyt on sm_90\n", n);
}

/* A block is WL x (32 / RT) x TN columns; K is split into as many slices as FILL warps per SM hold
 * (gt_skinny_slices, steps of KC WK); the slices meet in a workspace of the slice count and the slices; shared
 * memory holds the WK rings (or the joined sums, if more); a batch never splits. */
GT_TEST(skinnyt_launch_geometry, GT_NEEDS_NONE)
{
    gt_launch L;
    fam()->launch(&m52, &(gt_shape){50, 4492, 6473, 0, 0}, 132, &L);
    /* 36 tiles of 128 columns; floor(8 x 132 / (36 x 4)) = 7 slices; X a k 84 floats (groups of 16 rows 20 apart,
     * 80 rounded to an odd number of quads); 2 rings x 3 stages x 16 k x (84 + 128) floats */
    CHECK(L.grid[0] == 36 && L.grid[1] == 1 && L.grid[2] == 7 && L.block[0] == 128 && L.splitk == 7);
    CHECK(L.smem == 4u * 2 * 3 * 16 * (84 + 128));
    CHECK(L.ws_bytes == (64 + 7ull * (50 * 4492)) * 4 && L.rblock[0] == 256);
    fam()->launch(&m32, &(gt_shape){32, 4096, 4096, 0, 0}, 132, &L);
    CHECK(L.grid[0] == 16 && L.grid[2] == 8 && L.block[0] == 256); /* 4096 / 256; floor(8 x 132 / (16 x 8)) */
    fam()->launch(&n48, &(gt_shape){4096, 48, 4096, 1, 0}, 132, &L);
    CHECK(L.grid[0] == 16 && L.grid[2] == 16 && L.block[0] == 128); /* floor(8 x 132 / (16 x 4)) */
    /* one K group: the ring (3 x 16 x (4 x 12 + 4 ... 52 floats of X a k) + 256) */
    CHECK(L.smem == 4u * 3 * 16 * (52 + 256));
    gt_launch B;
    CHECK(gt_family_launch(fam(), &m52, &(gt_shape){50, 4492, 600, 0, 0, 8}, 132, &B));
    CHECK(B.grid[2] == 8 && B.splitk <= 1 && B.ws_bytes == 0);
}

/* A kernel takes the calls whose large operand runs along the large side, with the fewest rows of RT ROWS that hold
 * the small side. */
GT_TEST(skinnyt_takes_calls_along_l_with_the_fewest_rows, GT_NEEDS_NONE)
{
    gt_call c = gt_call_tight(&(gt_shape){50, 4492, 6473, 0, 0}); /* nn: B along N */
    CHECK(fam()->applicable(&m52, &c));
    c.shape.ta = 1; /* tn */
    CHECK(fam()->applicable(&m52, &c));
    c.shape.tb = 1; /* tt: B along K */
    CHECK(!fam()->applicable(&m52, &c));
    c.shape = (gt_shape){48, 4492, 6473, 0, 0};
    CHECK(!fam()->applicable(&m52, &c)); /* ROWS 12 holds it */
    c.shape.m = 49;
    CHECK(fam()->applicable(&m52, &c));
    c.shape.m = 53;
    CHECK(!fam()->applicable(&m52, &c));
    c.shape = (gt_shape){4096, 48, 4096, 1, 0}; /* N small, A stored K x M */
    CHECK(fam()->applicable(&n48, &c) && !fam()->applicable(&m52, &c));
    c.shape.ta = 0;
    CHECK(!fam()->applicable(&n48, &c));
}

/* Both sides in every layout (along K too: correct there, and slow), gt_splitk_reduce beside gt_gemm, no spills;
 * a small stack frame, for the call of the out-of-line copies of a stage at K's or L's end. */
GT_TEST(skinnyt_nvrtc_both_sides_all_layouts, GT_NEEDS_NVRTC)
{
    const gt_params *keys[] = {&m52, &m32, &m36, &n48};
    gt_compile_job jobs[16];
    int n = 0;
    for (size_t i = 0; i < 4; ++i)
        for (int l = 0; l < 4; ++l) jobs[n++] = gt_compile_job_make(fam(), keys[i], l >> 1, l & 1);
    n = gt_sample_jobs(jobs, n, gt_sample_wanted(n));
    gt_compile_all(jobs, n, "sm_90", "skinnyt");
    for (int i = 0; i < n; ++i) {
        const gt_compile_job *j = &jobs[i];
        CHECK_MSG(j->rc == 0, "%s: %s", gt_layout_name(j->ta, j->tb), j->err);
        CHECK_MSG(j->spill_bytes == 0 && j->stack_bytes <= 128, "%s: %d B spills, %d B stack",
                  gt_layout_name(j->ta, j->tb), j->spill_bytes, j->stack_bytes);
        CHECK(j->has_gemm && j->has_reduce && j->regs > 0 && j->regs <= 255);
        printf("    skinnyt ROWS=%d WL=%d WK=%d %s %s: %d registers\n", j->p.v[1], j->p.v[4], j->p.v[5],
               j->p.v[0] ? "N small" : "M small", gt_layout_name(j->ta, j->tb), j->regs);
    }
}
