/* Family skinnyr without a GPU: constraints, the default space, launch geometry (the block, the K split and its
 * workspace), which calls a kernel takes, the launch-only FILL, and NVRTC compiles of both sides in every layout with
 * zero spills. Its results against cuBLAS: tests/test_gpu.c (every family) and the CPU emulator (tests/emu/run.sh
 * skinnyr). Run: build/gt_tests --cpu skinnyr */
#include "family.h"
#include "harness.h"
#include "toolkit.h"

#include <stdlib.h>
#include <string.h>

/* SIDE SR TL WARPS P MINB FILL KW */
static const gt_params m33 = {{0, 33, 2, 8, 8, 2, 16, 1}};  /* 33 rows, two columns a lane: the H200's best */
static const gt_params m33w = {{0, 33, 4, 4, 8, 1, 16, 1}}; /* ... four columns, blocks of four warps */
static const gt_params n16 = {{1, 16, 8, 4, 4, 2, 16, 1}};  /* N up to 16, eight columns, four rows in flight */
static const gt_params m5 = {{0, 5, 4, 8, 4, 2, 8, 1}};      /* a few rows, X's row of 8 floats */
static const gt_params m33k = {{0, 33, 2, 8, 8, 2, 16, 2}}; /* m33, two warps a column (KW 2) */

static const gt_family *fam(void) { return gt_family_find("skinnyr"); }

static int legal(const gt_params *p, char *why, size_t n) { return gt_legal_on(fam(), "sm_90", p, why, n); }

GT_TEST(skinnyr_constraints_reject_bad_points, GT_NEEDS_NONE)
{
    char why[256];
    CHECK(fam() && fam()->math == GT_MATH_FP32 && fam()->batched);
    CHECK(legal(&m33, why, sizeof why) && legal(&m33w, why, sizeof why) && legal(&n16, why, sizeof why) &&
          legal(&m5, why, sizeof why));
    static const gt_refusal bad[] = {
        {{{2, 33, 2, 8, 8, 2, 16, 1}}, "SIDE"},      {{{0, 0, 2, 8, 8, 2, 16, 1}}, "SR"},
        {{{0, 65, 2, 8, 8, 2, 16, 1}}, "SR"},        {{{0, 33, 3, 8, 8, 2, 16, 1}}, "TL"},
        {{{0, 33, 2, 0, 8, 2, 16, 1}}, "WARPS"},     {{{0, 33, 2, 8, 0, 2, 16, 1}}, "P"},
        {{{0, 33, 2, 8, 17, 2, 16, 1}}, "P"},        {{{0, 33, 2, 8, 8, 0, 16, 1}}, "MINB"},
        {{{0, 33, 2, 8, 8, 2, 0, 1}}, "FILL"},       {{{0, 40, 4, 8, 8, 2, 16, 1}}, "registers"},
        {{{0, 64, 8, 4, 8, 1, 16, 1}}, "registers"}, {{{0, 33, 8, 4, 8, 1, 16, 1}}, "registers"},
        {{{0, 33, 2, 8, 8, 2, 16, 3}}, "KW"},        {{{0, 33, 2, 8, 8, 2, 16, 0}}, "KW"},
        {{{0, 33, 8, 8, 4, 1, 16, 2}}, "join"}}; /* 4 warps x 32 lanes x 33 x 8 sums: 132 KiB */
    const int first = gt_first_not_refused(fam(), "sm_90", bad, sizeof bad / sizeof bad[0], why, sizeof why);
    CHECK_MSG(first < 0, "point %d: '%s'", first, why);
}

/* The default space: up to 40 rows, 8 to 136 sums a lane, 16 or 32 floats of Y in flight a lane, at most 16 warps
 * an SM asked of the compiler, two warps a column (KW 2) only in two blocks of 8 warps an SM; its points legal on
 * sm_90 (M small) number 100 to 500, under a third of them with KW 2. */
GT_TEST(skinnyr_default_space_keeps_what_won, GT_NEEDS_NONE)
{
    char why[256];
    CHECK(fam()->in_space(&m33, why, sizeof why) && fam()->in_space(&m33w, why, sizeof why));
    CHECK(fam()->in_space(&n16, why, sizeof why) && fam()->in_space(&m5, why, sizeof why));
    gt_params p = m33;
    p.v[4] = 4; /* two columns, four rows: 8 floats in flight */
    CHECK(!fam()->in_space(&p, why, sizeof why) && strstr(why, "in flight") && legal(&p, why, sizeof why));
    p = m33, p.v[3] = 16; /* two blocks of 16 warps */
    CHECK(!fam()->in_space(&p, why, sizeof why) && strstr(why, "16 warps"));
    p = m33, p.v[1] = 48, p.v[5] = 1;
    CHECK(!fam()->in_space(&p, why, sizeof why) && strstr(why, "40") && legal(&p, why, sizeof why));
    p = m33, p.v[7] = 2; /* two warps a column, two blocks of 8 warps an SM */
    CHECK(fam()->in_space(&p, why, sizeof why) && legal(&p, why, sizeof why));
    p = m33w, p.v[7] = 2; /* ... in blocks of four warps, one an SM */
    CHECK(!fam()->in_space(&p, why, sizeof why) && strstr(why, "KW") && legal(&p, why, sizeof why));
    int n = 0; /* every point of the default space the registry enumerates is legal */
    gt_limits lim;
    gt_limits_for_arch("sm_90", &lim);
    const gt_family *f = fam();
    int kw2 = 0;
    for (int a = 0; a < f->params[1].nvalues; ++a)
        for (int b = 0; b < f->params[2].nvalues; ++b)
            for (int c = 0; c < f->params[3].nvalues; ++c)
                for (int d = 0; d < f->params[4].nvalues; ++d)
                    for (int e = 0; e < f->params[5].nvalues; ++e)
                        for (int w = 1; w <= 2; ++w) {
                            gt_params q = {{0, f->params[1].values[a], f->params[2].values[b], f->params[3].values[c],
                                            f->params[4].values[d], f->params[5].values[e], 16, w}};
                            if (!f->in_space(&q, why, sizeof why) || !f->legal(&q, &lim, why, sizeof why)) continue;
                            ++n, kw2 += w == 2;
                        }
    CHECK_MSG(n > 100 && n < 500 && kw2 > 0 && kw2 < n / 3, "%d points, %d with KW 2", n, kw2);
    printf("    %d points of SIDE 0 legal on sm_90, %d of them with KW 2\n", n, kw2);
}

/* A block is WARPS / KW x 32 lanes x TL columns; K is split into as many slices as FILL warps per SM hold, at most half
 * the steps of P rows, 64 slices, and a quarter of Y's bytes in partial sums, and at least as many as keep a slice's
 * X within 96 KiB of shared memory, which the launch asks for; the slices meet in a workspace of the slice count and
 * the slices; a batch never splits. */
GT_TEST(skinnyr_launch_geometry, GT_NEEDS_NONE)
{
    gt_launch L;
    const gt_shape big = {33, 8191, 4097, 0, 0};
    fam()->launch(&m33, &big, 132, &L);
    /* 16 tiles of 512 columns x 8 warps: floor(16 x 132 / 128) = 16 slices, under 513 / 2 and 4097 / (4 x 33) */
    CHECK(L.grid[0] == 16 && L.grid[1] == 1 && L.grid[2] == 16 && L.block[0] == 256 && L.splitk == 16);
    CHECK(L.smem == 264u * 36 * 4); /* 257 rows a slice, rounded up to 8: 264 rows of 33 floats padded to 36 */
    CHECK(L.ws_bytes == (64 + 16ull * (33 * 8191 + 1)) * 4 && L.rgrid[0] == (33u * 8191 + 1023) / 1024 &&
          L.rblock[0] == 256);
    const gt_shape tall = {16384, 16, 4096, 1, 0}; /* N small; A stored K x M: Y along L */
    fam()->launch(&n16, &tall, 132, &L);
    CHECK(L.grid[0] == 16 && L.grid[2] == 33 && L.block[0] == 128); /* 16384 / 1024; floor(16 x 132 / 64) */
    CHECK(L.smem == 128u * 16 * 4);                                 /* 125 rows, rounded up to 4 */
    fam()->launch(&m33, &(gt_shape){33, 8191, 100, 0, 0}, 132, &L); /* 100 / (4 x 33) < 1: no split */
    CHECK(L.grid[2] == 1 && L.splitk == 1 && L.ws_bytes == 0 && L.smem == 104u * 36 * 4);
    /* one tile and a long K: 64 slices wanted, but a slice's X holds at most 3072 rows of 8 floats in 96 KiB:
     * 342 slices of 3068 rows */
    fam()->launch(&m5, &(gt_shape){5, 256, 1 << 20, 0, 0}, 132, &L);
    CHECK(L.grid[0] == 1 && L.grid[2] == 342 && L.smem == 3068u * 8 * 4);
    CHECK(L.ws_bytes == (64 + 342ull * 5 * 256) * 4);
    /* KW 2: 4 warps across 256 columns, 32 tiles, floor(16 x 132 / (32 x 8)) = 8 slices of 520 rows (513 rounded up
     * to 8), X's 74880 bytes above the 33792 of sums the second warps hand over; with K 100, one slice, the sums */
    gt_params h = m33;
    h.v[7] = 2;
    fam()->launch(&h, &big, 132, &L);
    CHECK(L.grid[0] == 32 && L.grid[2] == 8 && L.block[0] == 256 && L.splitk == 8 && L.smem == 520u * 36 * 4);
    CHECK(L.ws_bytes == (64 + 8ull * (33 * 8191 + 1)) * 4);
    fam()->launch(&h, &(gt_shape){33, 8191, 100, 0, 0}, 132, &L);
    CHECK(L.grid[2] == 1 && L.smem == 4u * 32 * 33 * 2 * 4);
    gt_launch B;
    CHECK(gt_family_launch(fam(), &m33, &(gt_shape){33, 8191, 600, 0, 0, 8}, 132, &B));
    CHECK(B.grid[2] == 8 && B.splitk <= 1 && B.ws_bytes == 0 && B.smem == 600u * 36 * 4); /* one slice: K */
}

/* A kernel takes the calls whose large operand runs along the large side, with the smallest listed SR that holds
 * the small side. */
GT_TEST(skinnyr_takes_calls_along_l_with_the_fewest_rows, GT_NEEDS_NONE)
{
    gt_call c = gt_call_tight(&(gt_shape){33, 8191, 4097, 0, 0}); /* nn: B along N */
    CHECK(fam()->applicable(&m33, &c));
    c.shape.ta = 1; /* tn: still B along N */
    CHECK(fam()->applicable(&m33, &c));
    c.shape.tb = 1; /* tt: B along K */
    CHECK(!fam()->applicable(&m33, &c));
    c.shape = (gt_shape){32, 8191, 4097, 0, 0};
    CHECK(!fam()->applicable(&m33, &c)); /* SR 32 holds it */
    c.shape.m = 34;
    CHECK(!fam()->applicable(&m33, &c)); /* more rows than the lane holds */
    gt_params p = m33;
    p.v[1] = 36, c.shape.m = 35; /* 35: 36 is the smallest listed value above it */
    CHECK(fam()->applicable(&p, &c));
    c.shape = (gt_shape){16384, 16, 4096, 1, 0}; /* N small, A stored K x M: along M */
    CHECK(fam()->applicable(&n16, &c) && !fam()->applicable(&m33, &c));
    c.shape.ta = 0; /* A along K */
    CHECK(!fam()->applicable(&n16, &c));
    c.shape = (gt_shape){33, 8191, 680, 0, 0, 4}; /* a batch: its K is one slice, 680 rows of 36 floats in 96 KiB */
    CHECK(fam()->applicable(&m33, &c));
    c.shape.k = 681; /* 688 rows, rounded up to 8 */
    CHECK(!fam()->applicable(&m33, &c));
    c.shape.batch = 1; /* one GEMM splits K instead */
    CHECK(fam()->applicable(&m33, &c));
}

/* FILL only sizes the split: two candidates that differ in it are one kernel. */
GT_TEST(skinnyr_fill_is_launch_only, GT_NEEDS_NONE)
{
    gt_params a = m33, b = m33;
    b.v[6] = 24;
    char ia[17], ib[17], err[256];
    char *src = NULL;
    CHECK(gt_kernel_id(fam(), &a, 0, 0, 0, ia, &src, err, sizeof err) == 0);
    CHECK(gt_kernel_id(fam(), &b, 0, 0, 0, ib, NULL, err, sizeof err) == 0 && !strcmp(ia, ib));
    CHECK(src && !strstr(src, "#define FILL") && strstr(src, "#define SR 33\n"));
    free(src);
    gt_launch La, Lb;
    const gt_shape s = {33, 8191, 4097, 0, 0};
    fam()->launch(&a, &s, 132, &La), fam()->launch(&b, &s, 132, &Lb);
    CHECK(La.grid[2] < Lb.grid[2]);
}

/* Both sides in every layout, gt_splitk_reduce beside gt_gemm, registers within each point's cap; no spills in the
 * layouts the family is offered (Y along L), but for KW 2's one 8-byte value kept in local memory around the last
 * steps' loop (16 bytes in ptxas's count: once a kernel, not in its main loop). The others compile too, correct and
 * slow (a column's loads a row apart, TL pointers of their own: some spill), and applicable() never offers them. */
GT_TEST(skinnyr_nvrtc_both_sides_all_layouts, GT_NEEDS_NVRTC)
{
    const gt_params *keys[] = {&m33, &m33w, &n16, &m5, &m33k};
    gt_compile_job jobs[20];
    int n = 0;
    for (size_t i = 0; i < 5; ++i)
        for (int l = 0; l < 4; ++l) jobs[n++] = gt_compile_job_make(fam(), keys[i], l >> 1, l & 1);
    n = gt_sample_jobs(jobs, n, gt_sample_wanted(n));
    gt_compile_all(jobs, n, "sm_90", "skinnyr");
    for (int i = 0; i < n; ++i) {
        const gt_compile_job *j = &jobs[i];
        const int cap = 65536 / (32 * j->p.v[3] * j->p.v[5]);
        const int along_l = j->p.v[0] ? j->ta : !j->tb; /* a layout applicable() offers it */
        CHECK_MSG(j->rc == 0, "%s: %s", gt_layout_name(j->ta, j->tb), j->err);
        const int allowed = j->p.v[7] > 1 ? 16 : 0;
        CHECK_MSG(!along_l || (j->spill_bytes <= allowed && j->stack_bytes <= allowed), "%s KW %d: %d B spills",
                  gt_layout_name(j->ta, j->tb), j->p.v[7], j->spill_bytes);
        CHECK(j->has_gemm && j->has_reduce && j->regs > 0 && j->regs <= (cap < 255 ? cap : 255));
        printf("    skinnyr SR=%d TL=%d KW=%d %s %s: %d registers\n", j->p.v[1], j->p.v[2], j->p.v[7],
               j->p.v[0] ? "N small" : "M small", gt_layout_name(j->ta, j->tb), j->regs);
    }
}
