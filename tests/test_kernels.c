/* Families without a GPU: registry, enumeration and constraints, params text, layouts, rendering. */
#include "family.h"
#include "harness.h"

#include <stdlib.h>
#include <string.h>

GT_TEST(registry_finds_every_family, GT_NEEDS_NONE)
{
    CHECK(gt_family_count() >= 1);
    for (int i = 0; i < gt_family_count(); ++i) {
        const gt_family *f = gt_family_at(i);
        CHECK(f != NULL);
        if (!f) continue;
        CHECK(gt_family_find(f->name) == f);
        CHECK_MSG(f->build != GT_BUILD_NVRTC || gt_template_text(f->template_name) != NULL,
                  "%s: template %s not embedded", f->name, f->template_name);
        CHECK_MSG(f->build == GT_BUILD_NVRTC || f->backend, "%s: neither built nor run by a backend", f->name);
        for (int j = 0; j < i; ++j) CHECK(gt_family_at(j) != f);
    }
    CHECK(gt_family_find("tile2d") != NULL);
    CHECK(gt_family_find("no-such-family") == NULL);
    CHECK(gt_family_at(-1) == NULL && gt_family_at(gt_family_count()) == NULL);
}

GT_TEST(limits_table_knows_sm90, GT_NEEDS_NONE)
{
    gt_limits l;
    CHECK(gt_limits_for_arch("sm_90", &l));
    CHECK(l.cc_major == 9 && l.cc_minor == 0 && l.max_smem_optin == 227 * 1024 && l.max_threads_per_block == 1024);
    CHECK(!gt_limits_for_arch("sm_5", &l));
    CHECK(!gt_limits_for_arch("garbage", &l));
    CHECK(!gt_limits_for_arch(NULL, &l));
}

typedef struct {
    const gt_limits *lim;
    int n, bad;
} enum_ctx;

static int check_candidate(const gt_family *f, const gt_params *p, void *vctx)
{
    enum_ctx *c = vctx;
    gt_launch L;
    gt_shape s = {1025, 1023, 1021, 0, 0};
    f->launch(p, &s, GT_TEST_SMS, &L);
    unsigned threads = L.block[0] * L.block[1] * L.block[2];
    if (threads == 0 || threads > (unsigned)c->lim->max_threads_per_block || L.smem > (unsigned)c->lim->max_smem_optin ||
        L.grid[0] == 0 || L.grid[1] == 0 || L.grid[2] == 0 || L.splitk < 1)
        c->bad++;
    c->n++;
    return 0;
}

GT_TEST(enumeration_respects_limits, GT_NEEDS_NONE)
{
    gt_limits l;
    gt_limits_for_arch("sm_90", &l);
    for (int i = 0; i < gt_family_count(); ++i) {
        const gt_family *f = gt_family_at(i);
        if (f->test_only || f->space != GT_SPACE_STATIC) continue; /* a device space is asked of the GPU */
        enum_ctx c = {&l, 0, 0};
        int n = gt_enumerate(f, &l, check_candidate, &c);
        CHECK_MSG(n > 0 && n == c.n, "%s: %d candidates", f->name, n);
        CHECK_MSG(c.bad == 0, "%s: %d candidates with a launch outside sm_90 limits", f->name, c.bad);
    }
}

GT_TEST(tile2d_constraints_reject_bad_points, GT_NEEDS_NONE)
{
    const gt_family *f = gt_family_find("tile2d");
    gt_limits l;
    gt_limits_for_arch("sm_90", &l);
    char why[128];
    gt_params p = {{64, 64, 8, 8, 8}};
    CHECK(f->legal(&p, &l, why, sizeof why));
    gt_params odd = {{64, 64, 8, 3, 8}};          /* BM % TM != 0 */
    CHECK(!f->legal(&odd, &l, why, sizeof why) && strstr(why, "TM"));
    gt_params big = {{256, 256, 32, 4, 4}};       /* 4096 threads */
    CHECK(!f->legal(&big, &l, why, sizeof why) && strstr(why, "threads"));
    gt_params regs = {{256, 256, 8, 16, 16}};     /* 256 threads x ~310 registers */
    CHECK(!f->legal(&regs, &l, why, sizeof why) && strstr(why, "registers"));
    gt_params smem = {{128, 128, 64, 8, 4}};      /* 64 KiB static shared memory */
    CHECK(!f->legal(&smem, &l, why, sizeof why) && strstr(why, "shared"));
    gt_params wide = {{64, 64, 8, 4, 4}};        /* 256 threads */
    CHECK(f->legal(&wide, &l, why, sizeof why));
    l.max_threads_per_block = 128;                /* limits are inputs: a smaller device admits fewer */
    CHECK(!f->legal(&wide, &l, why, sizeof why));
}

GT_TEST(params_text_round_trips, GT_NEEDS_NONE)
{
    const gt_family *f = gt_family_find("tile2d");
    gt_params p = {{128, 64, 16, 8, 4}}, q;
    char buf[256], err[256];
    gt_params_format(f, &p, buf, sizeof buf);
    CHECK(!strcmp(buf, "BM=128,BN=64,BK=16,TM=8,TN=4"));
    CHECK(gt_params_parse(f, buf, &q, err, sizeof err) == 0 && !memcmp(&p, &q, sizeof p));
    CHECK(gt_params_parse(f, "BM=128,BN=64", &q, err, sizeof err) == -1 && strstr(err, "lack"));
    CHECK(gt_params_parse(f, "BM=128,XX=1", &q, err, sizeof err) == -1 && strstr(err, "XX"));
    CHECK(gt_params_parse(f, "BM=abc", &q, err, sizeof err) == -1 && strstr(err, "malformed"));
    CHECK(gt_param_get(f, &p, "BK", -1) == 16 && gt_param_get(f, &p, "NOPE", -7) == -7);
    char small[8];
    gt_params_format(f, &p, small, sizeof small);
    CHECK(strlen(small) == 7);
}

GT_TEST(layouts_parse_and_name, GT_NEEDS_NONE)
{
    int ta, tb;
    CHECK(gt_layout_parse("nt", &ta, &tb) == 0 && ta == 0 && tb == 1);
    CHECK(gt_layout_parse("TN", &ta, &tb) == 0 && ta == 1 && tb == 0);
    CHECK(gt_layout_parse("nx", &ta, &tb) == -1 && gt_layout_parse("n", &ta, &tb) == -1);
    CHECK(!strcmp(gt_layout_name(1, 1), "tt") && !strcmp(gt_layout_name(0, 0), "nn"));
}

GT_TEST(render_defines_every_param, GT_NEEDS_NONE)
{
    for (int i = 0; i < gt_family_count(); ++i) {
        const gt_family *f = gt_family_at(i);
        gt_params p = {{0}};
        for (int j = 0; j < f->nparams; ++j) p.v[j] = f->params[j].values[0];
        char err[256];
        char *src = gt_render(f, &p, 1, 0, err, sizeof err);
        if (f->build != GT_BUILD_NVRTC) { /* nothing to render: it says so */
            CHECK_MSG(!src && strstr(err, "not built"), "%s: %s", f->name, err);
            continue;
        }
        CHECK_MSG(src != NULL, "%s: %s", f->name, err);
        if (!src) continue;
        CHECK(strstr(src, "#define GT_TA 1\n") && strstr(src, "#define GT_TB 0\n"));
        for (int j = 0; j < f->nparams; ++j) {
            char line[64];
            snprintf(line, sizeof line, "#define %s %d\n", f->params[j].name, p.v[j]);
            CHECK_MSG(strstr(src, line) != NULL, "%s: missing %s", f->name, line);
        }
        CHECK(strstr(src, "gt_gemm") != NULL);
        free(src);
    }
}

GT_TEST(hash_is_stable_and_distinguishes, GT_NEEDS_NONE)
{
    char a[17], b[17], c[17];
    gt_hash_hex("abc", 3, a);
    gt_hash_hex("abc", 3, b);
    gt_hash_hex("abd", 3, c);
    CHECK(!strcmp(a, b) && strcmp(a, c) && strlen(a) == 16);
    gt_hash_hex("", 0, a);
    CHECK(!strcmp(a, "cbf29ce484222325")); /* FNV-1a 64 offset basis */
}

/* A batch runs in one launch, grid z over its matrices, for every point of a batched family that neither splits K
 * nor needs a workspace; the others are refused for batches and still run single GEMMs. */
typedef struct {
    int batched, refused, bad;
} batch_ctx;

static int check_batch(const gt_family *f, const gt_params *p, void *vctx)
{
    batch_ctx *c = vctx;
    gt_launch one, many, huge;
    const gt_shape s1 = {200, 300, 64, 1, 0}, s64 = {200, 300, 64, 1, 0, 64}, sbig = {8, 8, 8, 0, 0, 100000};
    if (!gt_family_launch(f, p, &s1, GT_TEST_SMS, &one)) return c->bad++, 0; /* one GEMM always launches */
    if (!gt_family_launch(f, p, &s64, GT_TEST_SMS, &many)) {
        c->refused++;
        c->bad += !(one.grid[2] > 1 || one.splitk > 1 || one.ws_bytes); /* refused only for split-K or a workspace */
        return 0;
    }
    c->batched++;
    c->bad += many.grid[0] != one.grid[0] || many.grid[1] != one.grid[1] || many.grid[2] != 64 || many.ws_bytes;
    c->bad += !gt_family_launch(f, p, &sbig, GT_TEST_SMS, &huge) || huge.grid[2] != GT_BATCH_PER_LAUNCH;
    return 0;
}

GT_TEST(family_launch_walks_a_batch_over_grid_z, GT_NEEDS_NONE)
{
    gt_limits l;
    gt_limits_for_arch("sm_90", &l);
    int split_refused = 0;
    for (int i = 0; i < gt_family_count(); ++i) {
        const gt_family *f = gt_family_at(i);
        if (f->test_only || f->build != GT_BUILD_NVRTC) continue;
        batch_ctx c = {0};
        gt_enumerate(f, &l, check_batch, &c);
        CHECK_MSG(c.bad == 0 && c.batched > 0, "%s: %d batched, %d refused, %d wrong", f->name, c.batched, c.refused,
                  c.bad);
        split_refused += c.refused;
    }
    CHECK(split_refused > 0); /* the split-K and stream-K points exist and are refused */
    gt_family plain = *gt_family_find("tile2d"); /* a family that does not say it walks batches never gets one */
    gt_params p;
    gt_launch L;
    char err[128];
    plain.batched = 0;
    CHECK(gt_params_parse(&plain, "BM=64,BN=64,BK=8,TM=8,TN=8", &p, err, sizeof err) == 0);
    CHECK(gt_family_launch(&plain, &p, &(gt_shape){8, 8, 8, 0, 0, 1}, GT_TEST_SMS, &L));
    CHECK(!gt_family_launch(&plain, &p, &(gt_shape){8, 8, 8, 0, 0, 2}, GT_TEST_SMS, &L));
}
