/* Family gemv without a GPU: constraints, launch geometry, which calls a kernel takes (the layouts whose large
 * operand runs along K, a small side that fits), and NVRTC compiles of both sides in every layout with zero spills.
 * Its results against cuBLAS: tests/test_gpu.c (every family) and the CPU emulator (tests/emu/run.sh gemv).
 * Run: build/gt_tests --cpu gemv */
#include "family.h"
#include "harness.h"
#include "toolkit.h"

#include <string.h>

/* SIDE SR RW WARPS KW U XS */
static const gt_params m1 = {{0, 1, 4, 8, 1, 4, 0}};   /* batch-1 inference: y = x W^T */
static const gt_params n8 = {{1, 8, 2, 8, 4, 2, 0}};   /* N up to 8, four warps a column pair, K split between them */
static const gt_params n16 = {{1, 16, 4, 8, 2, 4, 0}}; /* the most rows it may hold */
static const gt_params m4 = {{0, 4, 1, 4, 1, 2, 0}};   /* one column a warp */
static const gt_params n8s = {{1, 8, 2, 8, 1, 4, 1}};  /* X's chunks in shared memory */
static const gt_params m16s = {{0, 16, 1, 4, 1, 4, 1}}; /* ... the most of it: 64 KiB */
static const gt_params n8s1 = {{1, 8, 1, 8, 1, 4, 1}};  /* spilled 16 bytes along S while gt_gemm was one function */

static const gt_family *fam(void) { return gt_family_find("gemv"); }

static int legal(const gt_params *p, char *why, size_t n) { return gt_legal_on(fam(), "sm_90", p, why, n); }

GT_TEST(gemv_constraints_reject_bad_points, GT_NEEDS_NONE)
{
    char why[256];
    CHECK(fam() && legal(&m1, why, sizeof why) && legal(&n8, why, sizeof why) && legal(&n16, why, sizeof why) &&
          legal(&m4, why, sizeof why) && legal(&n8s, why, sizeof why) && legal(&m16s, why, sizeof why));
    static const gt_refusal bad[] = {
        {{{2, 1, 4, 8, 1, 4}}, "SIDE"},   {{{0, 0, 4, 8, 1, 4}}, "SR"},    {{{0, 17, 4, 8, 1, 4}}, "SR"},
        {{{0, 1, 0, 8, 1, 4}}, "RW"},     {{{0, 1, 9, 8, 1, 4}}, "RW"},    {{{0, 1, 4, 1, 1, 4}}, "WARPS"},
        {{{0, 1, 4, 8, 3, 4}}, "KW"},     {{{0, 1, 4, 8, 0, 4}}, "KW"},    {{{0, 1, 4, 8, 1, 0}}, "U"},
        {{{0, 16, 8, 8, 1, 8}}, "registers"}, {{{0, 1, 4, 8, 1, 4, 2}}, "XS"},
        {{{0, 1, 4, 8, 4, 4, 1}}, "KW=1"}
    };
    const int first = gt_first_not_refused(fam(), "sm_90", bad, sizeof bad / sizeof bad[0], why, sizeof why);
    CHECK_MSG(first < 0, "point %d: '%s'", first, why);
}

/* A block owns RW columns for each of its WARPS / KW column groups and the whole of K: no split, no workspace; a
 * batch walks grid z. */
GT_TEST(gemv_launch_geometry, GT_NEEDS_NONE)
{
    gt_launch L;
    fam()->launch(&m1, &(gt_shape){1, 4096, 4096, 0, 1}, 132, &L); /* 8 column groups of 4: 32 columns a block */
    CHECK(L.grid[0] == 128 && L.grid[1] == 1 && L.grid[2] == 1 && L.block[0] == 256);
    CHECK(L.splitk == 1 && L.ws_bytes == 0 && L.smem == 0);
    fam()->launch(&n8, &(gt_shape){4097, 8, 4096, 0, 0}, 132, &L); /* N small: M is L; 2 groups of 2 columns */
    CHECK(L.grid[0] == 1025 && L.block[0] == 256);
    gt_launch B;
    CHECK(gt_family_launch(fam(), &m4, &(gt_shape){3, 1000, 777, 0, 1, 6}, 132, &B));
    CHECK(B.grid[0] == 250 && B.grid[2] == 6 && B.ws_bytes == 0); /* 4 warps x 1 column */
    fam()->launch(&m16s, &(gt_shape){13, 4096, 4096, 0, 1}, 132, &L); /* two chunks of 16 rows x 512 k */
    CHECK(L.grid[0] == 1024 && L.smem == 2u * 16 * 512 * 4);
}

/* The default space keeps what won on the H100 (kernels/gemv.c): one or two rows through L1 with K split over four
 * warps, or over all eight or sixteen of a block; three to eight rows staged in shared memory, 8 warps, U=4; sixteen
 * rows left to skinny. */
GT_TEST(gemv_default_space_keeps_what_won, GT_NEEDS_NONE)
{
    char why[200];
    gt_params p = {{0, 1, 2, 8, 4, 4, 0}}; /* 1x4096x4096 nt's winner */
    CHECK(fam()->in_space(&p, why, sizeof why));
    p = (gt_params){{0, 1, 1, 8, 8, 2, 0}}; /* its winner with K over eight warps (ninth session) */
    CHECK(legal(&p, why, sizeof why) && fam()->in_space(&p, why, sizeof why));
    p.v[3] = 16, p.v[4] = 16; /* 1x4096x16384 nt's: sixteen of sixteen */
    CHECK(legal(&p, why, sizeof why) && fam()->in_space(&p, why, sizeof why));
    p.v[4] = 8; /* eight of sixteen: legal, not swept */
    CHECK(legal(&p, why, sizeof why) && !fam()->in_space(&p, why, sizeof why) && strstr(why, "16 (16 warps)"));
    p = (gt_params){{0, 1, 2, 8, 4, 4, 0}};
    p.v[6] = 1, p.v[4] = 1; /* staged: legal, not swept for one row */
    CHECK(legal(&p, why, sizeof why) && !fam()->in_space(&p, why, sizeof why) && strstr(why, "XS=0 and KW=4"));
    p = (gt_params){{0, 8, 2, 8, 1, 4, 1}}; /* 8x4096x4096 nt's */
    CHECK(fam()->in_space(&p, why, sizeof why));
    p.v[6] = 0, p.v[4] = 4;
    CHECK(!fam()->in_space(&p, why, sizeof why) && strstr(why, "XS=1"));
    CHECK(!fam()->in_space(&n16, why, sizeof why) && strstr(why, "SR up to 8") && legal(&n16, why, sizeof why));
}

/* A kernel takes the layouts whose large operand runs along K (M small: B stored N x K, nt and tt; N small: A
 * stored M x K, nn and nt) and a small side that fills more than half of its SR rows. */
GT_TEST(gemv_takes_calls_along_k_that_fit, GT_NEEDS_NONE)
{
    gt_call c = gt_call_tight(&(gt_shape){1, 4096, 4096, 0, 1});
    CHECK(fam()->applicable(&m1, &c));
    c.shape.ta = 1, c.shape.tb = 1;
    CHECK(fam()->applicable(&m1, &c));
    c.shape.ta = 0, c.shape.tb = 0; /* B stored K x N: its columns run along N */
    CHECK(!fam()->applicable(&m1, &c));
    c.shape = (gt_shape){4096, 8, 4096, 0, 0};
    CHECK(fam()->applicable(&n8, &c) && !fam()->applicable(&m1, &c));
    c.shape.ta = 1; /* A stored K x M */
    CHECK(!fam()->applicable(&n8, &c));
    c.shape = (gt_shape){4096, 4, 4096, 0, 1};
    CHECK(!fam()->applicable(&n8, &c)); /* 4 rows of 8: mostly padding */
    c.shape.n = 9;
    CHECK(!fam()->applicable(&n8, &c) && fam()->applicable(&n16, &c)); /* over SR */
}

/* Both sides in every layout (Y along K or read element by element, X along K or along S, through L1 or staged in
 * shared memory): compiled with no spills and registers within the cap. */
GT_TEST(gemv_nvrtc_both_sides_all_layouts, GT_NEEDS_NVRTC)
{
    const gt_params *keys[] = {&m1, &n8, &n16, &m4, &n8s, &m16s, &n8s1};
    gt_compile_job jobs[28];
    int n = 0;
    for (size_t i = 0; i < 7; ++i)
        for (int l = 0; l < 4; ++l) jobs[n++] = gt_compile_job_make(fam(), keys[i], l >> 1, l & 1);
    gt_compile_all_clean(jobs, n, "sm_90", "gemv configurations");
}
