/* The regret rows behind `gemmtune report` (src/cli/regret.c) on a hand-made database whose times are chosen here:
 * each tuned shape served by the loader's rules without its own row (a neighbour's kernel where the serving model
 * predicts a win, else cuBLAS), that kernel's stored time here or n/a, the same-kernel case, GPU models apart. And
 * `gemmtune bench`'s own best kernel (src/cli/own.c) on such a database. */
#include "db.h"
#include "fixture.h"
#include "harness.h"
#include "own.h"
#include "regret.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char err[512];

typedef struct {
    gt_regret_row r[8];
    int n;
} rows;

static int collect(const gt_regret_row *r, void *ctx)
{
    rows *v = ctx;
    if (v->n < 8) v->r[v->n++] = *r;
    return 0;
}

/* Kernels of tile2d, legal on sm_80 and sm_90, stored with their real ids (a stale winner is never served). */
#define PA "BM=64,BN=64,BK=8,TM=8,TN=8"
#define PB "BM=128,BN=128,BK=8,TM=8,TN=8"
#define PC "BM=128,BN=64,BK=16,TM=8,TN=4"

static void kernel_id(const char *params, const gt_shape *s, char hash[17])
{
    const gt_family *f = gt_family_find("tile2d");
    gt_params p;
    CHECK(f && gt_params_parse(f, params, &p, err, sizeof err) == 0 &&
          gt_kernel_id(f, &p, s->ta, s->tb, 0, hash, NULL, err, sizeof err) == 0);
}

static void trial(gt_db *db, long long sw, const gt_shape *s, const char *params, double ms, gt_status status)
{
    char hash[17];
    kernel_id(params, s, hash);
    gt_trial t = {"tile2d", params, hash, status, NULL, ms, ms, ms, 1, 0, 32, 0, 0.1, 10};
    CHECK_MSG(gt_db_add_trial(db, sw, s, &t, err, sizeof err) == 0, "%s", err);
}

/* A winner at ms, with cuBLAS at cublas_ms when it is positive. */
static void winner(gt_db *db, long long sw, const gt_shape *s, const char *params, double ms, double cublas_ms)
{
    char hash[17];
    kernel_id(params, s, hash);
    trial(db, sw, s, params, ms, GT_ST_OK);
    CHECK_MSG(gt_db_set_winner(db, sw, s, "tile2d", params, hash, ms, 1, err, sizeof err) == 0, "%s", err);
    if (cublas_ms > 0) CHECK_MSG(gt_db_set_baseline(db, sw, s, cublas_ms, err, sizeof err) == 0, "%s", err);
}

GT_TEST(report_regret_serves_each_shape_by_the_loader_rules, GT_NEEDS_NONE)
{
    char *path = gt_tmp_path(".db");
    gt_db *db;
    long long sw, sw2;
    const gt_serve_model model = {.decay = 0.10, .margin = 0.03, .dmax = 1.0};
    gt_gpu_info g = gt_fixture_gpu(0, 0), other = gt_fixture_gpu(2, 0);
    gt_shape a = {1024, 1024, 1024, 0, 0}, b = {1024, 1024, 2048, 0, 0}, c = {8192, 8192, 8192, 0, 0},
             d = {1024, 1024, 1024, 1, 1}, e = {1000, 1000, 1000, 0, 0};
    CHECK(gt_db_open(path, 1, &db, err, sizeof err) == 0);
    CHECK(gt_db_begin_sweep(db, &g, "t", &sw, err, sizeof err) == 0);
    CHECK(gt_db_begin_sweep(db, &other, "t", &sw2, err, sizeof err) == 0);
    winner(db, sw, &a, PA, 1.0, 1.5);
    winner(db, sw, &b, PB, 2.0, 3.0);     /* a's neighbour at d = 1: each is predicted 1.36x cuBLAS on the other */
    winner(db, sw, &c, PC, 500.0, 600.0); /* no neighbour within dmax: cuBLAS, 20% slower than its own */
    winner(db, sw, &d, PA, 1.1, -1);      /* another layout, no baseline: cuBLAS, n/a */
    winner(db, sw2, &e, PC, 0.9, 2.0);    /* another GPU model, nearer to a than b is: never served to a */
    trial(db, sw, &b, PA, 2.5, GT_ST_OK);    /* b is served a's kernel: 25% slower than its own */
    trial(db, sw, &a, PB, 1.2, GT_ST_WRONG); /* a is served b's kernel, which failed there: n/a */
    rows v = {0};
    CHECK_MSG(gt_regret_walk(db, NULL, &model, collect, &v, err, sizeof err) == 0, "%s", err);
    CHECK(v.n == 5);
    /* order: A100 first (e), then H200 nn a, b, c, then tt d */
    const gt_regret_row *re = &v.r[0], *ra = &v.r[1], *rb = &v.r[2], *rc = &v.r[3], *rd = &v.r[4];
    CHECK(!strncmp(re->self.gpu_name, "NVIDIA A100", 11) && re->rule == GT_RULE_CUBLAS && re->regret == 2.0 / 0.9);
    CHECK(ra->self.shape.k == 1024 && ra->rule == GT_RULE_REUSE && ra->picked.shape.k == 2048 && ra->distance == 1.0);
    CHECK(!strcmp(ra->picked.params, PB) && ra->predicted > 1.03 && ra->served_ms < 0 && ra->regret < 0);
    CHECK(rb->self.shape.k == 2048 && rb->rule == GT_RULE_REUSE && rb->picked.shape.k == 1024);
    CHECK(!strcmp(rb->picked.params, PA) && rb->served_ms == 2.5 && rb->regret == 2.5 / 2.0);
    CHECK(rc->self.shape.m == 8192 && rc->rule == GT_RULE_CUBLAS && rc->served_ms == 600.0 && rc->regret == 1.2);
    CHECK(rd->self.shape.ta == 1 && rd->rule == GT_RULE_CUBLAS && rd->served_ms < 0 && rd->regret < 0);
    /* the same kernel wins the neighbour: no regret, even without a separate trial */
    winner(db, sw, &b, PA, 1.9, -1);
    v.n = 0;
    gt_winner_filter f = {.shape = &a};
    CHECK(gt_regret_walk(db, &f, &model, collect, &v, err, sizeof err) == 0 && v.n == 1);
    CHECK(v.r[0].rule == GT_RULE_REUSE && v.r[0].served_ms == 1.0 && v.r[0].regret == 1.0);
    /* a serving model that reuses nothing: cuBLAS for every shape */
    const gt_serve_model never = {.decay = 0.10, .margin = 100, .dmax = 1.0};
    v.n = 0;
    CHECK(gt_regret_walk(db, &f, &never, collect, &v, err, sizeof err) == 0 && v.n == 1);
    CHECK(v.r[0].rule == GT_RULE_CUBLAS && v.r[0].served_ms == 1.5 && v.r[0].regret == 1.5);
    gt_db_close(db);
    gt_fixture_rm(path);
    free(path);
}

/* The chart of 20 shapes: every shape's label is in it as plain horizontal text (no rotated label, which SVG
 * renderers place differently and used to draw over the bars), and no report table cuts a kernel's parameters.
 * GT_KEEP_REPORT=1 keeps the PNG to look at. */
GT_TEST(report_chart_of_20_shapes_has_every_label_unrotated, GT_NEEDS_NONE)
{
    if (gt_run("command -v gnuplot", NULL)) {
        gt_skip("gnuplot is not installed (make deps installs gnuplot-nox)");
        return;
    }
    static const int dims[20][4] = {
        {1024, 1024, 1024, 0}, {2048, 2048, 2048, 0}, {4096, 4096, 4096, 0}, {8192, 8192, 8192, 0}, {1000, 1000, 1000, 0},
        {5000, 5000, 5000, 0}, {3000, 5000, 700, 0},  {4096, 4096, 256, 0},  {256, 4096, 4096, 0},  {8192, 128, 8192, 0},
        {127, 4099, 1025, 0},  {64, 64, 65536, 0},    {33, 8191, 2048, 0},   {777, 1531, 4096, 0},  {16384, 16384, 512, 0},
        {2048, 2048, 2048, 2}, {4096, 4096, 4096, 2}, {1024, 1024, 1024, 3}, {12288, 12288, 12288, 0}, {100, 100, 100, 0}};
    static const char *params = "BM=128,BN=128,BK=16,WM=64,WN=64,WNITER=2,TM=8,TN=4,STAGES=3,MINB=1,RASTER=8,SPLITK=1";
    char *path = gt_tmp_path(".db"), *svg = gt_tmp_path(".svg"), *png = gt_tmp_path(".png"), cmd[2048], *out = NULL;
    gt_db *db;
    long long sw;
    gt_gpu_info g = gt_fixture_gpu(0, 0);
    CHECK(gt_db_open(path, GT_DB_CREATE, &db, err, sizeof err) == 0 && gt_db_begin_sweep(db, &g, "t", &sw, err, sizeof err) == 0);
    for (int i = 0; i < 20; ++i) {
        gt_shape s = {dims[i][0], dims[i][1], dims[i][2], dims[i][3] >> 1, dims[i][3] & 1};
        double ms = 2.0 * s.m * s.n * s.k / (30e9 + 1e9 * i);
        CHECK(gt_db_set_winner(db, sw, &s, "multistage", params, "0123456789abcdef", ms, 1, err, sizeof err) == 0 &&
              gt_db_set_baseline(db, sw, &s, ms * (0.8 + 0.02 * i), err, sizeof err) == 0);
    }
    gt_db_close(db);
    snprintf(cmd, sizeof cmd, "%s report --db %s -o %s && %s report --db %s -o %s", GT_CLI, path, svg, GT_CLI, path, png);
    CHECK(gt_run(cmd, &out) == 0 && strstr(out, params) && strstr(out, "12288x12288x12288 nn"));
    free(out);
    size_t n;
    char *text = (char *)gt_fixture_slurp(svg, &n);
    CHECK(text && !strstr(text, ") rotate(")); /* text is placed with translate(x,y) rotate(a) */
    for (int i = 0; text && i < 20; ++i) {
        char label[80];
        snprintf(label, sizeof label, ">%dx%dx%d %s<", dims[i][0], dims[i][1], dims[i][2],
                 gt_layout_name(dims[i][3] >> 1, dims[i][3] & 1));
        CHECK_MSG(strstr(text, label), "no label %s in the chart", label);
    }
    free(text);
    if (getenv("GT_KEEP_REPORT")) printf("    chart kept at %s\n", png);
    else unlink(png);
    gt_fixture_rm(path), unlink(svg);
    free(path), free(svg), free(png);
}

/* A candidate screened fastest and then refused by its validation (as an FP32-accurate class's FP64 verdict refuses
 * a kernel after its screen) is not our own best; nor is a screen timed on a proxy shape, nor another GPU model's
 * trial; a refusal on another GPU model or another shape refuses nothing here. */
GT_TEST(bench_own_best_skips_a_kernel_its_validation_refused, GT_NEEDS_NONE)
{
    char *path = gt_tmp_path(".db");
    gt_db *db;
    long long sw, sw2;
    gt_gpu_info g = gt_fixture_gpu(0, 0), other = gt_fixture_gpu(2, 0);
    gt_gpu_model here = {.cc_major = g.cc_major, .cc_minor = g.cc_minor, .sm_count = g.sm_count};
    snprintf(here.name, sizeof here.name, "%s", g.name);
    gt_shape a = {1024, 1024, 1024, 0, 0}, b = {1024, 1024, 2048, 0, 0};
    char fam[32], params[256], hash[17];
    CHECK(gt_db_open(path, 1, &db, err, sizeof err) == 0);
    CHECK(gt_db_begin_sweep(db, &g, "t", &sw, err, sizeof err) == 0);
    CHECK(gt_db_begin_sweep(db, &other, "t", &sw2, err, sizeof err) == 0);
    trial(db, sw, &a, PB, 1.5, GT_ST_OK);
    CHECK(gt_own_best(db, &here, &a, GT_MATH_FP32, fam, sizeof fam, params, sizeof params, err, sizeof err) == 1 &&
          !strcmp(fam, "tile2d") && !strcmp(params, PB));
    trial(db, sw, &a, PA, 1.0, GT_ST_SCREENED);
    CHECK(gt_own_best(db, &here, &a, GT_MATH_FP32, fam, sizeof fam, params, sizeof params, err, sizeof err) == 1 &&
          !strcmp(params, PA));
    trial(db, sw, &a, PA, -1, GT_ST_WRONG);
    CHECK(gt_own_best(db, &here, &a, GT_MATH_FP32, fam, sizeof fam, params, sizeof params, err, sizeof err) == 1 &&
          !strcmp(params, PB));
    kernel_id(PC, &a, hash);
    gt_trial proxy = {"tile2d", PC, hash, GT_ST_SCREENED, "proxy 1024x1024x64", 0.5, 0.5, 0.5, 1, 0, 32, 0, 0.1, 10};
    CHECK(gt_db_add_trial(db, sw, &a, &proxy, err, sizeof err) == 0);
    trial(db, sw2, &a, PC, 0.4, GT_ST_OK);    /* another GPU model */
    trial(db, sw2, &a, PB, -1, GT_ST_WRONG);  /* refused on another GPU model */
    trial(db, sw, &b, PB, -1, GT_ST_FAULTED); /* refused on another shape */
    CHECK(gt_own_best(db, &here, &a, GT_MATH_FP32, fam, sizeof fam, params, sizeof params, err, sizeof err) == 1 &&
          !strcmp(params, PB));
    CHECK(gt_own_best(db, &here, &b, GT_MATH_FP32, fam, sizeof fam, params, sizeof params, err, sizeof err) == 0);
    gt_db_close(db);
    gt_fixture_rm(path);
    free(path);
}
