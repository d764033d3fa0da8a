/* Family skinny without a GPU: constraints, launch geometry (the block, the K split and its workspace or cluster),
 * which calls a kernel takes, the launch-only FILL, and NVRTC compiles of both sides in every layout with zero spills. Its
 * results against cuBLAS: tests/test_gpu.c (every family) and the CPU emulator (tests/emu/run.sh skinny).
 * Run: build/gt_tests --cpu skinny */
#include "family.h"
#include "harness.h"
#include "toolkit.h"

#include <stdlib.h>
#include <string.h>

/* SIDE SR TL WARPS KC STAGES FILL RG CL TC */
static const gt_params m40 = {{0, 40, 2, 4, 16, 3, 16, 1, 1}};  /* M up to 40, two columns per lane */
static const gt_params n16 = {{1, 16, 4, 4, 8, 3, 8, 1, 1}};    /* N up to 16, four columns per lane */
static const gt_params m8 = {{0, 8, 4, 2, 8, 3, 32, 1, 1}};     /* GEMV-like */
static const gt_params n128 = {{1, 128, 1, 4, 16, 3, 16, 1, 1}}; /* the widest small side */
static const gt_params m36g = {{0, 36, 8, 4, 16, 3, 16, 4, 1}};  /* four row groups of 9 rows, eight columns a lane */
static const gt_params n52g = {{1, 52, 8, 4, 8, 3, 16, 4, 1}};   /* ... of 13 rows (X's groups padded to 20 floats) */
static const gt_params m36c = {{0, 36, 4, 4, 16, 3, 16, 2, 8}};  /* two row groups, K slices in clusters of up to 8 */
static const gt_params n64c = {{1, 64, 4, 4, 8, 3, 16, 4, 16}};  /* clusters of 16; the sums outgrow the stages */
static const gt_params n32r2 = {{1, 32, 4, 4, 16, 3, 8, 2, 1}};  /* miscompiled with a prologue of its own */
static const gt_params m34 = {{0, 34, 4, 4, 8, 3, 8, 2, 1}};     /* two groups of 17 rows (X's rows one a copy) */
static const gt_params n50 = {{1, 50, 4, 4, 16, 3, 12, 2, 1}};   /* ... of 25 */
static const gt_params m40t = {{0, 40, 1, 4, 32, 3, 8, 1, 1, 1}}; /* skinny3: tensor cores, two m16 tiles a warp */
static const gt_params n16t = {{1, 16, 2, 4, 16, 3, 8, 1, 1, 1}}; /* ... four, KC 16 (rows along K unpadded) */

static const gt_family *fam(void) { return gt_family_find("skinny"); }

static int legal(const gt_params *p, char *why, size_t n) { return gt_legal_on(fam(), "sm_90", p, why, n); }

GT_TEST(skinny_constraints_reject_bad_points, GT_NEEDS_NONE)
{
    char why[256];
    CHECK(fam() && legal(&m40, why, sizeof why) && legal(&n16, why, sizeof why) && legal(&n128, why, sizeof why));
    CHECK(legal(&m36g, why, sizeof why) && legal(&n52g, why, sizeof why));
    static const gt_refusal bad[] = {
        {{{2, 40, 2, 4, 16, 3, 16, 1, 1}}, "SIDE"},     {{{0, 41, 2, 4, 16, 3, 16, 1, 1}}, "SR"},
        {{{0, 40, 3, 4, 16, 3, 16, 1, 1}}, "TL"},       {{{0, 40, 2, 0, 16, 3, 16, 1, 1}}, "WARPS"},
        {{{0, 40, 2, 4, 10, 3, 16, 1, 1}}, "KC"},       {{{0, 40, 2, 4, 16, 1, 16, 1, 1}}, "STAGES"},
        {{{0, 40, 2, 4, 16, 3, 0, 1, 1}}, "FILL"},      {{{0, 256, 4, 4, 16, 3, 16, 1, 1}}, "registers"},
        {{{0, 128, 1, 32, 64, 8, 16, 1, 1}}, "shared memory"}, {{{0, 36, 8, 4, 16, 3, 16, 3, 1}}, "RG"},
        {{{0, 36, 8, 4, 16, 3, 16, 8, 1}}, "multiple of RG"}, {{{0, 40, 2, 4, 16, 3, 16, 0, 1}}, "RG"},
        {{{0, 36, 4, 4, 16, 3, 16, 2, 3}}, "CL"},     {{{0, 36, 4, 4, 16, 3, 16, 2, 32}}, "CL"},
        {{{0, 36, 4, 4, 16, 3, 16, 2, 0}}, "CL"}
    };
    const int first = gt_first_not_refused(fam(), "sm_90", bad, sizeof bad / sizeof bad[0], why, sizeof why);
    CHECK_MSG(first < 0, "point %d: '%s'", first, why);
    gt_limits ampere;
    gt_limits_for_arch("sm_80", &ampere);
    CHECK(!fam()->legal(&m36c, &ampere, why, sizeof why) && strstr(why, "sm_90")); /* no clusters before Hopper */
    CHECK(fam()->legal(&m36g, &ampere, why, sizeof why));
}

/* The block holds all SR rows for 32 / RG WARPS TL columns; K is split into as many slices as FILL warps per SM
 * hold (never more: a block over is a second wave), at most half the stages, 64 slices, and a quarter of Y's bytes
 * in partial sums; a batch never splits. */
GT_TEST(skinny_launch_geometry, GT_NEEDS_NONE)
{
    gt_launch L;
    const gt_shape big = {33, 8191, 4097, 0, 0};
    fam()->launch(&m40, &big, 132, &L);
    /* 32 tiles of 256 columns x 4 warps: floor(16 x 132 / 128) = 16 slices, under 257 / 2 and 4097 / (4 x 33) */
    CHECK(L.grid[0] == 32 && L.grid[1] == 1 && L.grid[2] == 16 && L.block[0] == 128 && L.splitk == 16);
    CHECK(L.smem == 4u * 3 * (40 * 20 + 16 * 256) && L.ws_zero == 0); /* X along K: rows of KC + 4 */
    /* each slice rounded up to 4 floats (33 x 8191 is odd); a reduce thread per four elements */
    CHECK(L.ws_bytes == (64 + 16ull * (33 * 8191 + 1)) * 4 && L.rgrid[0] == (33u * 8191 + 1023) / 1024 &&
          L.rblock[0] == 256);
    const gt_shape tall = {10240, 16, 10240, 1, 0}; /* N small; A stored K x M: Y along L */
    fam()->launch(&n16, &tall, 132, &L);
    CHECK(L.grid[0] == 20 && L.grid[2] == 13 && L.block[0] == 128); /* floor(8 x 132 / (20 x 4)) = 13 */
    CHECK(L.smem == 4u * 3 * (8 * 16 + 8 * 512));
    const gt_shape tall_nt = {10240, 16, 10240, 0, 1}; /* A along K: a lane's column is a row of KC + 4 */
    fam()->launch(&n16, &tall_nt, 132, &L);
    CHECK(L.smem == 4u * 3 * (16 * 12 + 512 * 12)); /* and X (op(B), N x K) too */
    const gt_shape short_k = {64, 4096, 100, 0, 0}; /* 100 / (4 x 64) < 1: no split */
    fam()->launch(&m40, &short_k, 132, &L);
    CHECK(L.grid[2] == 1 && L.splitk == 1 && L.ws_bytes == 0);
    const gt_shape gemv = {1, 1 << 20, 1 << 20, 0, 0};
    fam()->launch(&m8, &gemv, 132, &L);
    CHECK(L.grid[0] == (1u << 20) / 256 && L.grid[2] == 1); /* 4096 tiles already fill the GPU */
    const gt_shape dot = {1, 256, 1 << 20, 0, 0}; /* one tile, a long K: at most 64 slices */
    fam()->launch(&m8, &dot, 132, &L);
    CHECK(L.grid[0] == 1 && L.grid[2] == 64);
    gt_launch B;
    CHECK(gt_family_launch(fam(), &m40, &(gt_shape){33, 8191, 4097, 0, 0, 8}, 132, &B));
    CHECK(B.grid[2] == 8 && B.splitk <= 1 && B.ws_bytes == 0); /* a batch walks grid z, never split */
    /* Row groups: 4 warps x 8 lanes x 8 columns = 256 columns, as m40's. X along S: a k row holds 4 groups of 13
     * rows in 16 + 4 floats each (a multiple of 8 gets 4 more: the groups' reads in distinct banks) */
    fam()->launch(&m36g, &big, 132, &L);
    CHECK(L.grid[0] == 32 && L.grid[2] == 16 && L.block[0] == 128 && L.smem == 4u * 3 * (36 * 20 + 16 * 256));
    fam()->launch(&n52g, &(gt_shape){6473, 50, 4492, 1, 0}, 132, &L); /* Y = op(A) along L */
    CHECK(L.grid[0] == 26 && L.smem == 4u * 3 * (8 * 4 * 20 + 8 * 256));
}

/* Clusters: at most CL slices, one cluster along z (the launch hook asks for it), no workspace and no reduce; the
 * block's SR x BL sums wait in shared memory, which grows to hold them where the stages are smaller. */
GT_TEST(skinny_clusters_reduce_on_chip, GT_NEEDS_NONE)
{
    gt_launch L;
    const gt_shape big = {33, 8191, 4097, 0, 0};
    fam()->launch(&m36c, &big, 132, &L); /* 16 slices wanted (as m40's), capped at 8 */
    CHECK(L.grid[0] == 32 && L.grid[2] == 8 && L.splitk == 1 && L.ws_bytes == 0 && L.rgrid[0] == 0);
    CHECK(L.smem == 4u * 3 * (36 * 20 + 16 * 256)); /* the stages (56.4 KiB) hold the 36 x 256 sums */
    gt_args a = {.m = 33, .n = 8191, .k = 4097, .batch = 1};
    gt_launch_extra x;
    char err[128];
    memset(&x, 0, sizeof x);
    CHECK(fam()->launch_hook(&m36c, &L, &a, NULL, &x, err, sizeof err) == 0);
    CHECK(x.cluster[0] == 1 && x.cluster[1] == 1 && x.cluster[2] == 8 && x.nextra == 0);
    const gt_shape tall = {6473, 50, 4492, 1, 0}; /* N small, 51 tiles of 128: 10 slices, under 16 */
    fam()->launch(&n64c, &tall, 132, &L);
    CHECK(L.grid[0] == 51 && L.grid[2] == 10 && L.splitk == 1 && L.ws_bytes == 0);
    CHECK(L.smem == 4u * 64 * 128); /* 64 x 128 sums: 32 KiB, over the stages' 19.5 KiB */
    memset(&x, 0, sizeof x);
    CHECK(fam()->launch_hook(&n64c, &L, &a, NULL, &x, err, sizeof err) == 0 && x.cluster[2] == 10);
    fam()->launch(&m40, &big, 132, &L); /* CL = 1: the workspace, no cluster */
    memset(&x, 0, sizeof x);
    CHECK(L.splitk == 16 && fam()->launch_hook(&m40, &L, &a, NULL, &x, err, sizeof err) == 0 && !x.cluster[2]);
    gt_launch B; /* a batch walks grid z: no cluster, whatever its count */
    CHECK(gt_family_launch(fam(), &m36c, &(gt_shape){33, 8191, 4097, 0, 0, 8}, 132, &B) && B.grid[2] == 8);
    a.batch = 8;
    memset(&x, 0, sizeof x);
    CHECK(fam()->launch_hook(&m36c, &B, &a, NULL, &x, err, sizeof err) == 0 && !x.cluster[2]);
    B.grid[2] = 65535, a.batch = 1; /* the last launch of a batch of 65536 */
    memset(&x, 0, sizeof x);
    CHECK(fam()->launch_hook(&m36c, &B, &a, NULL, &x, err, sizeof err) == 0 && !x.cluster[2]);
    char why[128];
    gt_params in = m36c;
    CHECK(!fam()->in_space(&m36c, why, sizeof why) && strstr(why, "CL=8")); /* clusters: four row groups only */
    in.v[7] = 4;
    CHECK(fam()->in_space(&in, why, sizeof why));
    in.v[8] = 16;
    CHECK(!fam()->in_space(&in, why, sizeof why) && fam()->legal && legal(&in, why, sizeof why)); /* legal, not swept */
    fam()->launch(&m36c, &(gt_shape){33, 8191, 100, 0, 0}, 132, &L); /* too short to split: no cluster */
    memset(&x, 0, sizeof x);
    a.batch = 1;
    CHECK(L.grid[2] == 1 && fam()->launch_hook(&m36c, &L, &a, NULL, &x, err, sizeof err) == 0 && !x.cluster[2]);
}

/* The default space keeps what won on the H100 (kernels/skinny.c): row groups with four columns per lane, 32-deep
 * stages only with four groups and no cluster, clusters of 8 only with four groups. */
GT_TEST(skinny_default_space_keeps_what_won, GT_NEEDS_NONE)
{
    char why[128];
    gt_params p = {{1, 16, 4, 4, 32, 3, 8, 4, 1}}; /* 4096x16x4096's winner */
    CHECK(fam()->in_space(&p, why, sizeof why));
    p.v[8] = 8; /* with a cluster */
    CHECK(!fam()->in_space(&p, why, sizeof why) && strstr(why, "KC=16, or 32 without clusters"));
    p.v[8] = 1, p.v[7] = 2; /* two groups */
    CHECK(!fam()->in_space(&p, why, sizeof why) && strstr(why, "KC=8 or 16"));
    p.v[4] = 16;
    CHECK(fam()->in_space(&p, why, sizeof why));
    p.v[7] = 1;
    CHECK(!fam()->in_space(&p, why, sizeof why) && legal(&p, why, sizeof why)); /* one group: legal, not swept */
}

/* A kernel takes the calls whose small side fits its SR rows without being mostly padding. */
GT_TEST(skinny_takes_calls_its_rows_fit, GT_NEEDS_NONE)
{
    gt_call c = gt_call_tight(&(gt_shape){33, 8191, 4097, 0, 0});
    CHECK(fam()->applicable(&m40, &c));
    c.shape.m = 41;
    CHECK(!fam()->applicable(&m40, &c)); /* more rows than the lane holds */
    c.shape.m = 16;
    CHECK(!fam()->applicable(&m40, &c)); /* 40 >= 2 x 16 + 8: mostly padding */
    c.shape.m = 17;
    CHECK(fam()->applicable(&m40, &c));
    c.shape = (gt_shape){4096, 16, 4096, 1, 1};
    CHECK(fam()->applicable(&n16, &c) && !fam()->applicable(&m40, &c)); /* SIDE picks N */
}

/* Two row groups of an odd count of rows (SR = 4 j + 2) are legal and swept, and take only the sides they fit
 * better than a multiple of 4 does: 4 j + 1 and 4 j + 2. */
GT_TEST(skinny_takes_rows_of_two_groups_of_an_odd_count_where_they_fit_best, GT_NEEDS_NONE)
{
    char why[256];
    gt_params p = {{0, 34, 4, 4, 16, 3, 8, 2, 1}};
    CHECK(legal(&p, why, sizeof why) && fam()->in_space(&p, why, sizeof why));
    gt_call c = gt_call_tight(&(gt_shape){33, 8191, 4097, 0, 0});
    CHECK(fam()->applicable(&p, &c));
    c.shape.m = 34;
    CHECK(fam()->applicable(&p, &c));
    c.shape.m = 32;
    CHECK(!fam()->applicable(&p, &c)); /* SR 32 fits it */
    c.shape.m = 35;
    CHECK(!fam()->applicable(&p, &c));
    p.v[7] = 4;
    CHECK(!legal(&p, why, sizeof why) && strstr(why, "multiple of RG")); /* four groups: 8.5 rows each */
    p.v[7] = 2, p.v[1] = 50;
    c.shape.m = 49;
    CHECK(legal(&p, why, sizeof why) && fam()->applicable(&p, &c));
    int found = 0; /* the default space lists such an SR */
    for (int i = 0; i < fam()->params[1].nvalues; ++i) found |= fam()->params[1].values[i] == 50;
    CHECK(found);
}

static const gt_family *fam3(void) { return gt_family_find("skinny3"); }

/* skinny3 is skinny's kernel on tensor cores (TC): in the tf32x3 math class, checked against FP64; a TC point is
 * skinny3's alone, on one row group, K slices through the workspace, SR and KC multiples of 8. */
GT_TEST(skinny3_is_the_tensor_core_twin_in_the_tf32x3_class, GT_NEEDS_NONE)
{
    char why[256];
    gt_limits lim, ampere, volta;
    gt_limits_for_arch("sm_90", &lim), gt_limits_for_arch("sm_80", &ampere), gt_limits_for_arch("sm_70", &volta);
    CHECK(fam3() && fam3()->math == GT_MATH_TF32X3 && gt_family_reference(fam3()) == GT_REF_FP64);
    CHECK(fam()->math == GT_MATH_FP32 && !strcmp(fam3()->template_name, fam()->template_name));
    CHECK(fam3()->legal(&m40t, &lim, why, sizeof why) && fam3()->legal(&n16t, &ampere, why, sizeof why));
    CHECK(!fam3()->legal(&m40t, &volta, why, sizeof why) && strstr(why, "sm_80"));
    CHECK(!fam()->legal(&m40t, &lim, why, sizeof why) && strstr(why, "skinny3")); /* not in the FP32 class */
    CHECK(!fam3()->legal(&m40, &lim, why, sizeof why) && strstr(why, "TC=0"));
    static const int bad[][2] = {{1, 36}, {7, 2}, {8, 2}, {4, 12}, {2, 4}}; /* {param, value} */
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        gt_params p = m40t;
        p.v[bad[i][0]] = bad[i][1];
        CHECK_MSG(!fam3()->legal(&p, &lim, why, sizeof why) && strstr(why, "TC=1"), "%s=%d: '%s'",
                  fam3()->params[bad[i][0]].name, bad[i][1], why);
    }
    int n = 0, tl2 = 0; /* its default space: every point legal on sm_90, four m16 tiles only up to 16 rows */
    gt_params p = m40t;
    for (int sr = 8; sr <= 64; sr += 8)
        for (int tl = 1; tl <= 2; ++tl) {
            p.v[1] = sr, p.v[2] = tl;
            const int in = fam3()->in_space(&p, why, sizeof why);
            n += in, tl2 += in && tl == 2;
            CHECK_MSG(!in || fam3()->legal(&p, &lim, why, sizeof why), "SR=%d TL=%d: %s", sr, tl, why);
        }
    CHECK(n == 10 && tl2 == 2);
}

/* A skinny3 kernel takes the sides it covers in whole n8 tiles without a spare one: 33 in 40 or 48, not 56. */
GT_TEST(skinny3_takes_sides_within_its_mma_tiles, GT_NEEDS_NONE)
{
    gt_call c = gt_call_tight(&(gt_shape){33, 8191, 4097, 0, 0});
    gt_params p = m40t;
    CHECK(fam3()->applicable(&p, &c));
    p.v[1] = 48;
    CHECK(fam3()->applicable(&p, &c));
    p.v[1] = 56;
    CHECK(!fam3()->applicable(&p, &c));
    p.v[1] = 32;
    CHECK(!fam3()->applicable(&p, &c));
    c.shape = (gt_shape){4096, 9, 4096, 1, 0};
    CHECK(fam3()->applicable(&n16t, &c) && !fam3()->applicable(&m40t, &c)); /* SIDE picks N */
}

/* FILL only sizes the split: two candidates that differ in it are one kernel (one source, id and compile). */
GT_TEST(skinny_fill_is_launch_only, GT_NEEDS_NONE)
{
    gt_params a = m40, b = m40;
    b.v[6] = 32;
    char ia[17], ib[17], err[256];
    char *src = NULL;
    CHECK(gt_kernel_id(fam(), &a, 0, 0, 0, ia, &src, err, sizeof err) == 0);
    CHECK(gt_kernel_id(fam(), &b, 0, 0, 0, ib, NULL, err, sizeof err) == 0 && !strcmp(ia, ib));
    CHECK(src && !strstr(src, "#define FILL") && strstr(src, "#define SR 40\n"));
    free(src);
    b = m40, b.v[1] = 48;
    CHECK(gt_kernel_id(fam(), &b, 0, 0, 0, ib, NULL, err, sizeof err) == 0 && strcmp(ia, ib));
    gt_launch La, Lb;
    b = m40, b.v[6] = 32;
    const gt_shape s = {33, 8191, 4097, 0, 0};
    fam()->launch(&a, &s, 132, &La), fam()->launch(&b, &s, 132, &Lb);
    CHECK(La.grid[2] < Lb.grid[2]); /* but it does split K differently */
}

/* f's kernels at keys in every layout into jobs (room for 4 nkeys), compiled for sm_90 (a $GT_SAMPLE sample):
 * each with no spills, registers within the cap, and gt_splitk_reduce beside gt_gemm. Returns how many ran. */
static int compile_clean(const gt_family *f, const gt_params *const *keys, size_t nkeys, gt_compile_job *jobs)
{
    int n = 0;
    for (size_t i = 0; i < nkeys; ++i)
        for (int l = 0; l < 4; ++l) jobs[n++] = gt_compile_job_make(f, keys[i], l >> 1, l & 1);
    n = gt_sample_jobs(jobs, n, gt_sample_wanted(n));
    gt_compile_all(jobs, n, "sm_90", f->name);
    for (int i = 0; i < n; ++i) {
        const gt_compile_job *j = &jobs[i];
        CHECK_MSG(j->rc == 0 && j->spill_bytes == 0 && j->stack_bytes == 0, "%s %s: rc %d, %d B spills: %s",
                  f->name, gt_layout_name(j->ta, j->tb), j->rc, j->spill_bytes, j->err);
        CHECK(j->has_gemm && j->has_reduce && j->regs > 0 && j->regs <= 255);
        printf("    %s %s %s: %d registers\n", f->name, j->p.v[0] ? "N small" : "M small",
               gt_layout_name(j->ta, j->tb), j->regs);
    }
    return n;
}

/* Both sides in every layout on tensor cores (skinny3). */
GT_TEST(skinny3_nvrtc_both_sides_all_layouts, GT_NEEDS_NVRTC)
{
    const gt_params *keys[] = {&m40t, &n16t};
    gt_compile_job jobs[8];
    compile_clean(fam3(), keys, 2, jobs);
}

/* Both sides in every layout (each moves Y and X between their along-L / along-K paths) and a batch. */
GT_TEST(skinny_nvrtc_both_sides_all_layouts, GT_NEEDS_NVRTC)
{
    const gt_params *keys[] = {&m40, &n16, &m36g, &n52g, &m36c, &n64c, &n32r2, &m34, &n50};
    gt_compile_job jobs[36];
    const int n = compile_clean(fam(), keys, 9, jobs);
    for (int i = 0; i < n; ++i) {
        const gt_compile_job *j = &jobs[i];
        /* The pipeline's copies issue from one site (sk_step): with the prologue's unrolled before the loop, this
         * kernel took 250 registers in nt and NVRTC 13.0 read some copies' L2 policy from a uniform register
         * nothing wrote (templates/skinny.cu; 168 now). */
        if (!memcmp(&j->p, &n32r2, sizeof n32r2) && j->tb && !j->ta)
            CHECK_MSG(j->regs < 230, "SIDE=1 SR=32 RG=2 KC=16 nt: %d registers", j->regs);
    }
}
