/* The runtime loader without a GPU: selection rules on fixture winners, the column-major argument mapping,
 * statuses, compiled-in tables, bad sources, `gemmtune explain`, and install + pkg-config + link of the example.
 * GPU tests of the loader are in tests/test_loader_gpu.c. Run: build/gt_tests --cpu loader */
#include "cli.h"
#include "db.h"
#include "device.h"
#include "files.h"
#include "fixture.h"
#include "handle.h"
#include "harness.h"
#include "loader.h"
#include "ozaki_family.h"
#include "toolkit.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __SANITIZE_ADDRESS__ /* programs the tests link against this build's library need its sanitizers too */
#define SAN_FLAGS "-fsanitize=address,undefined"
#else
#define SAN_FLAGS ""
#endif

#define H100 "NVIDIA H100 80GB HBM3"
#define P_BIG "BM=128,BN=128,BK=8,TM=8,TN=8"   /* 256 threads */
#define P_SMALL "BM=64,BN=32,BK=16,TM=4,TN=4"  /* 128 threads */
#define P_1024 "BM=128,BN=128,BK=8,TM=4,TN=4"  /* 1024 threads: legal on sm_90, not under a 512-thread limit */
#define P_4096 "BM=256,BN=256,BK=32,TM=4,TN=4" /* 4096 threads: never legal */

static gt_device_id h100(void)
{
    gt_device_id d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "%s", H100);
    gt_limits_for_arch("sm_90", &d.lim);
    d.lim.sm_count = 132;
    return d;
}

static gt_winner row(const char *gpu, int maj, int min, int sms, int m, int n, int k, const char *layout,
                     const char *family, const char *params)
{
    gt_winner w;
    memset(&w, 0, sizeof w);
    snprintf(w.gpu_name, sizeof w.gpu_name, "%s", gpu);
    w.cc_major = maj, w.cc_minor = min, w.sm_count = sms;
    w.shape = (gt_shape){m, n, k, 0, 0};
    gt_layout_parse(layout, &w.shape.ta, &w.shape.tb);
    snprintf(w.family, sizeof w.family, "%s", family);
    snprintf(w.params, sizeof w.params, "%s", params);
    w.tflops = 10, w.ratio = 1.1;
    return w;
}

static gt_call call_of(int m, int n, int k, const char *layout, int align)
{
    gt_call c;
    memset(&c, 0, sizeof c);
    c.shape = (gt_shape){m, n, k, 0, 0};
    gt_layout_parse(layout, &c.shape.ta, &c.shape.tb);
    c.lda = c.shape.ta ? m : k, c.ldb = c.shape.tb ? k : n, c.ldc = n;
    c.align_a = c.align_b = c.align_c = align;
    return c;
}

/* The choice's kernel as text, "family params". */
static const char *kernel_text(const gt_choice *c, char *buf, size_t n)
{
    if (!c->family) return snprintf(buf, n, "(none)"), buf;
    int w = snprintf(buf, n, "%s ", c->family->name);
    gt_params_format(c->family, &c->params, buf + w, n - (size_t)w);
    return buf;
}

static const gt_serve_model model = {.decay = 0.25, .margin = 0.03, .dmax = 2.0};

static gt_choice pick_(const gt_winner *rows, int n, const gt_device_id *d, const gt_call *c, gemmtune_fallback fb)
{
    return gt_loader_select(rows, n, d, c, fb, &model);
}

GT_TEST(loader_select_exact, GT_NEEDS_NONE)
{
    gt_device_id d = h100();
    gt_winner rows[] = {
        row("NVIDIA H200", 9, 0, 132, 1024, 1024, 1024, "nn", "tile2d", P_SMALL), /* other model */
        row(H100, 9, 0, 132, 1024, 1024, 1024, "tn", "tile2d", P_SMALL),          /* other layout */
        row(H100, 9, 0, 132, 2048, 2048, 2048, "nn", "tile2d", P_SMALL),
        row(H100, 9, 0, 132, 1024, 1024, 1024, "nn", "tile2d", P_BIG),
    };
    char k[320];
    gt_call c = call_of(1024, 1024, 1024, "nn", 16);
    gt_choice ch = pick_(rows, 4, &d, &c, GEMMTUNE_FALLBACK_CUBLAS);
    CHECK_MSG(ch.rule == GT_RULE_EXACT && ch.row == 3, "rule %s row %d", gt_rule_name(ch.rule), ch.row);
    CHECK_MSG(!strcmp(kernel_text(&ch, k, sizeof k), "tile2d " P_BIG), "%s", k);
    c = call_of(1024, 1024, 1024, "tn", 16);
    ch = pick_(rows, 4, &d, &c, GEMMTUNE_FALLBACK_CUBLAS);
    CHECK(ch.rule == GT_RULE_EXACT && ch.row == 1);
    c = call_of(2048, 2048, 2048, "nn", 1); /* tile2d runs any alignment */
    ch = pick_(rows, 4, &d, &c, GEMMTUNE_FALLBACK_CUBLAS);
    CHECK(ch.rule == GT_RULE_EXACT && ch.row == 2 && ch.distance == 0);
}

/* Unusable exact rows are skipped with a word why; the neighbour is reused only with a predicted win. */
GT_TEST(loader_select_exact_skips_unusable_rows_and_says_so, GT_NEEDS_NONE)
{
    gt_device_id d = h100();
    gt_winner rows[] = {
        row(H100, 9, 0, 132, 1024, 1024, 1024, "nn", "tile2d", P_4096),        /* illegal everywhere */
        row(H100, 9, 0, 132, 1024, 1024, 1024, "nn", "no_such_family", P_BIG), /* unknown family */
        row(H100, 9, 0, 132, 1024, 1024, 1024, "nn", "tile2d", "BM=64"),       /* malformed params */
        row(H100, 9, 0, 132, 2048, 1024, 1024, "nn", "tile2d", P_SMALL),
    };
    char line[1024];
    gt_call c = call_of(1024, 1024, 1024, "nn", 16);
    gt_choice ch = pick_(rows, 4, &d, &c, GEMMTUNE_FALLBACK_CUBLAS);
    CHECK_MSG(ch.rule == GT_RULE_CUBLAS && ch.row == -1, "rule %s row %d", gt_rule_name(ch.rule), ch.row);
    CHECK(ch.family && !strcmp(ch.family->name, "cublas"));
    gt_loader_describe(&ch, rows, line, sizeof line);
    CHECK_MSG(strstr(line, "exact row (tile2d BM=64) was skipped") && strstr(line, "predicted at 0.") &&
              strstr(line, "under the 1.030x a reuse needs"), "%s", line);
    rows[3].ratio = 1.5; /* a clear win at the neighbour: reused */
    ch = pick_(rows, 4, &d, &c, GEMMTUNE_FALLBACK_CUBLAS);
    CHECK_MSG(ch.rule == GT_RULE_REUSE && ch.row == 3 && fabs(ch.distance - 1.0) < 1e-12, "rule %s row %d",
              gt_rule_name(ch.rule), ch.row);
    gt_loader_describe(&ch, rows, line, sizeof line);
    CHECK_MSG(strstr(line, "reuse: tile2d " P_SMALL ", tuned for 2048x1024x1024 nn (1.500x cuBLAS there; d=1; "
                           "predicted "), "%s", line);
}

/* A whole-tile variant's row (multistage EVEN=1, tuned at 1024^3) is served as stored where the call is whole
 * tiles, and elsewhere as its twin with edge code, the kernel rows of earlier builds named: at 1024^3 with a padded
 * ldc or 4-byte alignment, and reused at the neighbour 1000^3. */
GT_TEST(loader_serves_a_whole_tile_winner_or_its_twin, GT_NEEDS_NONE)
{
    gt_device_id d = h100();
#define P_MS "BM=128,BN=128,BK=8,WM=64,WN=64,WNITER=2,TM=4,TN=4,STAGES=3,MINB=1,RASTER=8,SPLITK=1"
    gt_winner rows[] = {row(H100, 9, 0, 132, 1024, 1024, 1024, "nn", "multistage", P_MS ",EVEN=1")};
    rows[0].ratio = 1.5;
    char k[320];
    gt_call c = call_of(1024, 1024, 1024, "nn", 16);
    gt_choice ch = pick_(rows, 1, &d, &c, GEMMTUNE_FALLBACK_CUBLAS);
    CHECK_MSG(ch.rule == GT_RULE_EXACT && !strcmp(kernel_text(&ch, k, sizeof k), "multistage " P_MS ",EVEN=1"),
              "%s %s", gt_rule_name(ch.rule), kernel_text(&ch, k, sizeof k));
    const gt_call padded = {c.shape, c.lda, c.ldb, 1030, 16, 16, 16};
    const gt_call unaligned = {c.shape, c.lda, c.ldb, c.ldc, 4, 4, 4};
    const gt_call *twins[] = {&padded, &unaligned};
    for (int i = 0; i < 2; ++i) {
        ch = pick_(rows, 1, &d, twins[i], GEMMTUNE_FALLBACK_CUBLAS);
        CHECK_MSG(ch.rule == GT_RULE_EXACT && !strcmp(kernel_text(&ch, k, sizeof k), "multistage " P_MS), "%d: %s %s",
                  i, gt_rule_name(ch.rule), kernel_text(&ch, k, sizeof k));
    }
    c = call_of(1000, 1000, 1000, "nn", 16);
    ch = pick_(rows, 1, &d, &c, GEMMTUNE_FALLBACK_CUBLAS);
    CHECK_MSG(ch.rule == GT_RULE_REUSE && !strcmp(kernel_text(&ch, k, sizeof k), "multistage " P_MS), "%s %s",
              gt_rule_name(ch.rule), kernel_text(&ch, k, sizeof k));
#undef P_MS
}

/* Under fallback none, what the call is told says why no tuned kernel ran: a vendor winner whose pointers do not
 * have the alignment its algorithm was found for is skipped, and that is in the note (the preload's log). */
GT_TEST(loader_none_note_says_why, GT_NEEDS_NONE)
{
    gt_device_id d = h100();
    char params[200], note[600];
    snprintf(params, sizeof params, "API=1,ALGO=6,TILE=20,SPLITK=1,RED=0,SWIZZLE=0,CUSTOM=0,STAGES=0,INNER=0,CLUSTER=0,"
             "WSKB=0,VER=%d", 1);
    gt_winner rows[] = {row(H100, 9, 0, 132, 300, 200, 100, "nn", "cublas", params)};
    gt_call c = call_of(300, 200, 100, "nn", 4);
    gt_choice ch = pick_(rows, 1, &d, &c, GEMMTUNE_FALLBACK_NONE);
    CHECK(ch.rule == GT_RULE_NONE);
    gt_loader_none_note(&ch, &c.shape, &d, note, sizeof note);
    CHECK_MSG(strstr(note, "no tuned kernel for 300x200x100 nn on " H100 " and fallback none: the exact row (cublas") &&
              strstr(note, "was skipped: not applicable to this call's alignment"), "%s", note);
    c = call_of(300, 200, 100, "nn", 16);
    ch = pick_(rows, 1, &d, &c, GEMMTUNE_FALLBACK_NONE);
    CHECK_MSG(ch.rule == GT_RULE_EXACT, "%s", ch.why); /* aligned: served, through the backend */
}

/* The prediction is the measured ratio, corrected for the busy share of the GPU, decaying with distance. */
GT_TEST(loader_serve_model_predicts_from_ratio_occupancy_and_distance, GT_NEEDS_NONE)
{
    const gt_family *f = gt_family_find("tile2d");
    gt_params p;
    char err[128];
    CHECK(gt_params_parse(f, P_BIG, &p, err, sizeof err) == 0);
    gt_winner w = row(H100, 9, 0, 132, 1024, 1024, 1024, "nn", "tile2d", P_BIG);
    w.ratio = 1.2;
    const gt_shape same = {1024, 1024, 1024, 0, 0}, edge = {1000, 1000, 1024, 0, 0}, deep = {1024, 1024, 4096, 0, 0};
    CHECK(fabs(gt_serve_predict(&w, f, &p, &same, 132, &model) - 1.2) < 1e-12);
    /* 8 x 8 tiles of 128 either way; 1000 of 1024 rows and columns useful */
    CHECK(fabs(gt_serve_occupancy(f, &p, &edge, 132) / gt_serve_occupancy(f, &p, &same, 132) -
               (1000.0 / 1024) * (1000.0 / 1024)) < 1e-12);
    const double want = 1.2 * exp(-0.25 * 2.0);
    CHECK_MSG(fabs(gt_serve_predict(&w, f, &p, &deep, 132, &model) - want) < 1e-12, "%g",
              gt_serve_predict(&w, f, &p, &deep, 132, &model));
    /* 64 blocks on 132 SMs; 2 x 64 on 132 SMs is twice as busy */
    const gt_shape twice = {2048, 1024, 1024, 0, 0};
    CHECK(fabs(gt_serve_occupancy(f, &p, &twice, 132) / gt_serve_occupancy(f, &p, &same, 132) - 2.0) < 1e-12);
    w.ratio = -1; /* no baseline: never reused */
    CHECK(gt_serve_predict(&w, f, &p, &same, 132, &model) == 0);
    gt_serve_model m;
    setenv("GEMMTUNE_SERVE_MODEL", "decay=0.5,margin=0.1,dmax=1", 1);
    CHECK(gt_serve_model_get(&m, err, sizeof err) == 0 && m.decay == 0.5 && m.margin == 0.1 && m.dmax == 1);
    setenv("GEMMTUNE_SERVE_MODEL", "decay=fast", 1);
    CHECK(gt_serve_model_get(&m, err, sizeof err) == -1 && strstr(err, "decay=fast"));
    unsetenv("GEMMTUNE_SERVE_MODEL");
}

GT_TEST(loader_select_reuse_respects_device_limits_layout_and_distance, GT_NEEDS_NONE)
{
    gt_device_id d = h100();
    gt_winner rows[] = {
        row(H100, 9, 0, 132, 1024, 1024, 1024, "nn", "tile2d", P_1024),
        row(H100, 9, 0, 132, 4096, 4096, 4096, "nn", "tile2d", P_BIG),
    };
    rows[0].ratio = rows[1].ratio = 3;
    char line[1024];
    gt_call c = call_of(1024, 1024, 2048, "nn", 16);
    gt_choice ch = pick_(rows, 2, &d, &c, GEMMTUNE_FALLBACK_CUBLAS);
    CHECK(ch.rule == GT_RULE_REUSE && ch.row == 0);
    d.lim.max_threads_per_block = 512; /* the 1024-thread kernel cannot launch here; 4096^3 is 4 away */
    ch = pick_(rows, 2, &d, &c, GEMMTUNE_FALLBACK_CUBLAS);
    CHECK_MSG(ch.rule == GT_RULE_CUBLAS, "rule %s row %d", gt_rule_name(ch.rule), ch.row);
    gt_loader_describe(&ch, rows, line, sizeof line);
    CHECK_MSG(strstr(line, "within distance 2 with a kernel that can run this call"), "%s", line);
    d = h100();
    c = call_of(1024, 1024, 1024, "nt", 16); /* reuse stays within the call's layout */
    ch = pick_(rows, 2, &d, &c, GEMMTUNE_FALLBACK_CUBLAS);
    gt_loader_describe(&ch, rows, line, sizeof line);
    CHECK_MSG(ch.rule == GT_RULE_CUBLAS && strstr(line, "no shape is tuned in layout nt"), "%s", line);
    c = call_of(1024, 1024, 1024, "nn", 16);
    gt_device_id other = d;
    other.lim.sm_count = 114; /* another model: its own rows only */
    ch = pick_(rows, 2, &other, &c, GEMMTUNE_FALLBACK_CUBLAS);
    gt_loader_describe(&ch, rows, line, sizeof line);
    CHECK_MSG(ch.rule == GT_RULE_CUBLAS && strstr(line, "no kernel is tuned for this GPU model"), "%s", line);
}

/* A skinny call (a side of at most 64) reuses only a neighbour with the same skinny side: such kernels are tuned to
 * that side exactly (after a tune whose budget ran out before an MLP's batch-32 shapes, a served FP32 batch-32
 * forward pass ran 0.35x, most likely on neighbours' skinny kernels: docs/BENCHMARKS.md). Other sides may differ. */
GT_TEST(loader_select_reuses_a_skinny_neighbour_only_of_the_same_side, GT_NEEDS_NONE)
{
    gt_device_id d = h100();
    gt_winner rows[] = {row(H100, 9, 0, 132, 16, 16384, 4096, "nt", "tile2d", P_1024),
                        row(H100, 9, 0, 132, 4096, 48, 4096, "nt", "tile2d", P_1024)};
    rows[0].ratio = rows[1].ratio = 3;
    char line[1024];
    gt_call c = call_of(16, 16384, 2048, "nt", 16); /* the same 16 rows, half the K */
    gt_choice ch = pick_(rows, 2, &d, &c, GEMMTUNE_FALLBACK_CUBLAS);
    CHECK_MSG(ch.rule == GT_RULE_REUSE && ch.row == 0, "rule %s row %d", gt_rule_name(ch.rule), ch.row);
    c = call_of(32, 16384, 4096, "nt", 16); /* 32 rows: not 16's */
    ch = pick_(rows, 2, &d, &c, GEMMTUNE_FALLBACK_CUBLAS);
    gt_loader_describe(&ch, rows, line, sizeof line);
    CHECK_MSG(ch.rule == GT_RULE_CUBLAS && strstr(line, "its own skinny side"), "%s", line);
    c = call_of(4096, 40, 4096, "nt", 16); /* 40 columns: not 48's */
    ch = pick_(rows, 2, &d, &c, GEMMTUNE_FALLBACK_CUBLAS);
    CHECK(ch.rule == GT_RULE_CUBLAS);
    c = call_of(3000, 48, 4096, "nt", 16); /* the same 48 columns, other rows */
    ch = pick_(rows, 2, &d, &c, GEMMTUNE_FALLBACK_CUBLAS);
    CHECK_MSG(ch.rule == GT_RULE_REUSE && ch.row == 1, "rule %s row %d", gt_rule_name(ch.rule), ch.row);
    rows[1] = row(H100, 9, 0, 132, 4096, GT_LOADER_SKINNY_SIDE + 1, 4096, "nt", "tile2d", P_1024);
    rows[1].ratio = 3;
    c = call_of(4096, GT_LOADER_SKINNY_SIDE + 2, 4096, "nt", 16); /* past the limit: any neighbour, as before */
    ch = pick_(rows, 2, &d, &c, GEMMTUNE_FALLBACK_CUBLAS);
    CHECK_MSG(ch.rule == GT_RULE_REUSE && ch.row == 1, "rule %s row %d", gt_rule_name(ch.rule), ch.row);
    c = call_of(4096, GT_LOADER_SKINNY_SIDE, 4096, "nt", 16); /* at the limit: skinny */
    ch = pick_(rows, 2, &d, &c, GEMMTUNE_FALLBACK_CUBLAS);
    CHECK_MSG(ch.rule == GT_RULE_CUBLAS, "rule %s row %d", gt_rule_name(ch.rule), ch.row);
}

/* A family whose accuracy verdict holds for its own shape only (exact_only: ozaki) is served there and never
 * reused for a neighbour, however fast; a tf32x3wg row is. */
GT_TEST(loader_select_never_reuses_an_exact_only_family, GT_NEEDS_NONE)
{
    gt_device_id d = h100();
    char oz[64];
    snprintf(oz, sizeof oz, "NMOD=7,REV=%d,PICK=2", GT_OZAKI_REV); /* this build's revision: replayable */
    gt_winner rows[] = {row(H100, 9, 0, 132, 4096, 4096, 4096, "nn", "ozaki", oz)};
    rows[0].ratio = 1.9, rows[0].math = GT_MATH_TF32X3;
    char line[1024];
    gt_call c = call_of(4096, 4096, 4096, "nn", 16);
    gt_choice ch = pick_(rows, 1, &d, &c, GEMMTUNE_FALLBACK_CUBLAS);
    CHECK_MSG(ch.rule == GT_RULE_EXACT && ch.family && !strcmp(ch.family->name, "ozaki"), "rule %s",
              gt_rule_name(ch.rule));
    c = call_of(4096, 4096, 2048, "nn", 16); /* a neighbour at half the K: the verdict does not carry */
    ch = pick_(rows, 1, &d, &c, GEMMTUNE_FALLBACK_CUBLAS);
    gt_loader_describe(&ch, rows, line, sizeof line);
    CHECK_MSG(ch.rule == GT_RULE_CUBLAS, "%s", line);
    rows[0].ratio = 0.95; /* slower than cuBLAS where it was tuned (a sweep without the vendor): not served */
    c = call_of(4096, 4096, 4096, "nn", 16);
    ch = pick_(rows, 1, &d, &c, GEMMTUNE_FALLBACK_CUBLAS);
    gt_loader_describe(&ch, rows, line, sizeof line);
    CHECK_MSG(ch.rule == GT_RULE_CUBLAS && strstr(line, "not served"), "%s", line);
    c = call_of(4096, 4096, 2048, "nn", 16);
    rows[0] = row(H100, 9, 0, 132, 4096, 4096, 4096, "nn", "tf32x3wg",
                  "BM=128,BN=128,BK=32,STAGES=3,KC=128,PF=1,MINB=1,SPLITK=1");
    rows[0].ratio = 1.9, rows[0].math = GT_MATH_TF32X3;
    ch = pick_(rows, 1, &d, &c, GEMMTUNE_FALLBACK_CUBLAS);
    gt_loader_describe(&ch, rows, line, sizeof line);
    CHECK_MSG(ch.rule == GT_RULE_REUSE, "%s", line);
}

GT_TEST(loader_select_fallbacks, GT_NEEDS_NONE)
{
    gt_device_id d = h100();
    gt_winner other = row("NVIDIA A100-SXM4-80GB", 8, 0, 108, 512, 512, 512, "nn", "tile2d", P_BIG);
    gt_call c = call_of(33, 65, 17, "tt", 4);
    char k[320], line[1024];
    for (int n = 0; n < 2; ++n) { /* no rows; only rows of another model */
        gt_choice ch = pick_(n ? &other : NULL, n, &d, &c, GEMMTUNE_FALLBACK_DEFAULT);
        CHECK(ch.rule == GT_RULE_DEFAULT && ch.row == -1);
        CHECK(!strcmp(kernel_text(&ch, k, sizeof k), "tile2d BM=64,BN=64,BK=8,TM=8,TN=8"));
        ch = pick_(n ? &other : NULL, n, &d, &c, GEMMTUNE_FALLBACK_CUBLAS);
        CHECK(ch.rule == GT_RULE_CUBLAS && ch.family && !strcmp(ch.family->name, "cublas"));
        gt_loader_describe(&ch, NULL, line, sizeof line);
        CHECK_MSG(strstr(line, "cublas: cublasSgemm (cuBLAS's own choice, FP32 pedantic) (no kernel is tuned") == line,
                  "%s", line);
        ch = pick_(n ? &other : NULL, n, &d, &c, GEMMTUNE_FALLBACK_NONE);
        CHECK(ch.rule == GT_RULE_NONE && ch.family == NULL);
    }
    /* an exact tuned kernel beats every fallback, when it was faster than cuBLAS in its sweep */
    gt_winner mine = row(H100, 9, 0, 132, 33, 65, 17, "tt", "tile2d", P_BIG);
    mine.ratio = 1.2;
    gt_choice ch = pick_(&mine, 1, &d, &c, GEMMTUNE_FALLBACK_NONE);
    CHECK(ch.rule == GT_RULE_EXACT);
    gt_loader_describe(&ch, &mine, line, sizeof line);
    CHECK_MSG(!strcmp(line, "exact: tile2d " P_BIG " (tuned for this shape: 1.200x cuBLAS)"), "%s", line);
    mine.ratio = 0.9; /* slower than cuBLAS (a sweep without the vendor family): cuBLAS runs, and explain says why */
    ch = pick_(&mine, 1, &d, &c, GEMMTUNE_FALLBACK_CUBLAS);
    gt_loader_describe(&ch, &mine, line, sizeof line);
    CHECK_MSG(ch.rule == GT_RULE_CUBLAS && strstr(line, "the winner tuned for this shape, tile2d, ran at 0.900x "
                                                           "cuBLAS: not served"), "%s", line);
    mine.ratio = -1; /* no baseline (an imported row): nothing says it is slower */
    CHECK(pick_(&mine, 1, &d, &c, GEMMTUNE_FALLBACK_CUBLAS).rule == GT_RULE_EXACT);
}

GT_TEST(loader_fallback_from_environment, GT_NEEDS_NONE)
{
    char err[256];
    gemmtune_fallback f = GEMMTUNE_FALLBACK_ENV;
    const char *saved = getenv("GEMMTUNE_FALLBACK");
    char *keep = saved ? strdup(saved) : NULL;
    unsetenv("GEMMTUNE_FALLBACK");
    CHECK(gt_loader_fallback(GEMMTUNE_FALLBACK_ENV, &f, err, sizeof err) == 0 && f == GEMMTUNE_FALLBACK_CUBLAS);
    setenv("GEMMTUNE_FALLBACK", "default", 1);
    CHECK(gt_loader_fallback(GEMMTUNE_FALLBACK_ENV, &f, err, sizeof err) == 0 && f == GEMMTUNE_FALLBACK_DEFAULT);
    setenv("GEMMTUNE_FALLBACK", "cublas", 1);
    CHECK(gt_loader_fallback(GEMMTUNE_FALLBACK_ENV, &f, err, sizeof err) == 0 && f == GEMMTUNE_FALLBACK_CUBLAS);
    CHECK(gt_loader_fallback(GEMMTUNE_FALLBACK_NONE, &f, err, sizeof err) == 0 && f == GEMMTUNE_FALLBACK_NONE);
    setenv("GEMMTUNE_FALLBACK", "NONE", 1);
    CHECK(gt_loader_fallback(GEMMTUNE_FALLBACK_ENV, &f, err, sizeof err) == 0 && f == GEMMTUNE_FALLBACK_NONE);
    setenv("GEMMTUNE_FALLBACK", "fastest", 1);
    CHECK(gt_loader_fallback(GEMMTUNE_FALLBACK_ENV, &f, err, sizeof err) == -1 && strstr(err, "fastest"));
    CHECK(gt_loader_fallback((gemmtune_fallback)9, &f, err, sizeof err) == -1);
    if (keep) setenv("GEMMTUNE_FALLBACK", keep, 1);
    else unsetenv("GEMMTUNE_FALLBACK");
    free(keep);
}

/* The record file's lines: "MxNxK:layout calls" or "BxMxNxK:layout calls" (a strided batch), then key=value fields:
 * a field of a later version is kept verbatim, an old file's lines read as before, and `tune --sizes @FILE` takes
 * them, the batch included. */
GT_TEST(loader_record_lines_carry_fields, GT_NEEDS_NONE)
{
    gt_record_line r;
    char buf[400], err[512];
    CHECK(gt_record_parse("100x50x70:nn 6\n", &r) == 0 && r.shape.m == 100 && r.shape.n == 50 && r.shape.k == 70 &&
          !r.shape.ta && !r.shape.tb && r.calls == 6 && gt_shape_batch(&r.shape) == 1 && !r.extra[0]);
    gt_record_format(&r, buf, sizeof buf);
    CHECK_MSG(!strcmp(buf, "100x50x70:nn 6\n"), "%s", buf); /* one GEMM is written as before: an old reader reads it */
    CHECK(gt_record_parse("8x7x1000x13:tn 4 stream=2 # note\n", &r) == 0 && r.shape.ta && !r.shape.tb &&
          r.shape.m == 7 && r.calls == 4 && r.shape.batch == 8 && !strcmp(r.extra, "stream=2"));
    gt_record_format(&r, buf, sizeof buf);
    CHECK_MSG(!strcmp(buf, "8x7x1000x13:tn 4 stream=2\n"), "%s", buf);
    static const char *const bad[] = {"# comment\n", "100x50x70 6\n", "100x50x70:nx 6\n", "0x5x5:nn 1\n",
                                      "5x5x5:nn -1\n", "0x5x5x5:nn 1\n", "5x5x5:nn 1 junk\n", "5:nn 1\n",
                                      "5x5x5:nn 1 =3\n", "5x5x5:nnn 1\n", "5x5x5:nn\n", "1x2x3x4x5:nn 1\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) CHECK_MSG(gt_record_parse(bad[i], &r) == -1, "%s", bad[i]);
    char *path = gt_tmp_path(".calls");
    FILE *f = fopen(path, "w");
    fputs("# gemmtune: calls served without a kernel tuned for their shape\n100x50x70:nn 6\n"
          "8x7x1000x13:tn 4 stream=2\n", f);
    fclose(f);
    gt_shape *list = NULL;
    int with = 0;
    char arg[1100];
    snprintf(arg, sizeof arg, "@%s", path);
    CHECK_MSG(gt_cli_parse_size_list(arg, &list, &with, err, sizeof err) == 2 && with == 1, "%s", err);
    /* heaviest first: 4 calls of 8 x 7x1000x13 (5.8 MFLOP) before 6 of 100x50x70 (4.2), though listed second */
    CHECK(list && list[0].m == 7 && list[0].n == 1000 && list[0].k == 13 && list[0].ta == 1 && list[0].tb == 0 &&
          list[0].batch == 8 && list[1].m == 100);
    free(list);
    f = fopen(path, "w");
    fputs("100x50x70:nn 6\n8x7x1000x13:tn 2\n7x7x7:nn 6\n", f); /* 2.9 MFLOP now: the file's order */
    fclose(f);
    CHECK_MSG(gt_cli_parse_size_list(arg, &list, &with, err, sizeof err) == 3, "%s", err);
    CHECK(list && list[0].m == 100 && list[1].batch == 8 && list[2].m == 7 && list[2].k == 7);
    free(list);
    f = fopen(path, "w");
    fputs("7x7x7:nn\n100x50x70:nn 6\n", f); /* not every item counted: the file's order */
    fclose(f);
    CHECK_MSG(gt_cli_parse_size_list(arg, &list, &with, err, sizeof err) == 2, "%s", err);
    CHECK(list && list[0].m == 7 && list[1].m == 100);
    free(list);
    f = fopen(path, "w");
    fputs("100x50x70:nn 6 batch\n", f); /* not a field: still an error, naming the line */
    fclose(f);
    CHECK_MSG(gt_cli_parse_size_list(arg, &list, &with, err, sizeof err) == -1 && strstr(err, ":1:"), "%s", err);
    remove(path);
    free(path);
}

GT_TEST(loader_map_call_checks_arguments, GT_NEEDS_NONE)
{
    gt_call c;
    int swap;
    char err[512];
    const void *p16 = (const void *)(uintptr_t)0x10000, *p4 = (const void *)(uintptr_t)0x10004;
    CHECK(gt_loader_map_call(0, 0, 1, 3, 5, 7, p4, 7, p16, 7, p16, 5, &c, &swap, err, sizeof err) == 0);
    CHECK(!swap && c.shape.m == 3 && c.shape.n == 5 && c.shape.k == 7 && c.shape.ta == 0 && c.shape.tb == 1);
    CHECK(c.align_a == 4 && c.align_b == 16 && c.align_c == 16);
    CHECK(gt_loader_map_call(0, 0, 0, 3, 5, 7, p16, 6, p16, 5, p16, 5, &c, &swap, err, sizeof err) == -1 &&
          strstr(err, "lda=6") && strstr(err, "need lda>=7"));
    CHECK(gt_loader_map_call(0, 1, 0, 3, 5, 7, p16, 3, p16, 5, p16, 4, &c, &swap, err, sizeof err) == -1 &&
          strstr(err, "ldc>=5"));
    CHECK(gt_loader_map_call(0, 'T', 0, 3, 5, 7, p16, 7, p16, 5, p16, 5, &c, &swap, err, sizeof err) == -1 &&
          strstr(err, "transa"));
    CHECK(gt_loader_map_call(0, 0, 0, 3, 5, 0, p16, 7, p16, 5, p16, 5, &c, &swap, err, sizeof err) == 0); /* C = bC */
    CHECK(gt_loader_map_call(0, 0, 0, 3, 5, -1, p16, 7, p16, 5, p16, 5, &c, &swap, err, sizeof err) == -1);
    CHECK(gt_loader_map_call(0, 0, 0, -1, 5, 7, p16, 7, p16, 5, p16, 5, &c, &swap, err, sizeof err) == -1);
    /* column-major, cuBLAS order: A is m x k (lda >= m), B is k x n (ldb >= k), C is m x n (ldc >= m) */
    CHECK(gt_loader_map_call(1, 1, 0, 3, 5, 7, p4, 9, p16, 8, p16, 4, &c, &swap, err, sizeof err) == 0);
    CHECK(swap && c.shape.m == 5 && c.shape.n == 3 && c.shape.k == 7 && c.shape.ta == 0 && c.shape.tb == 1);
    CHECK(c.lda == 8 && c.ldb == 9 && c.ldc == 4 && c.align_a == 16 && c.align_b == 4);
    CHECK(gt_loader_map_call(1, 0, 0, 3, 5, 7, p16, 2, p16, 7, p16, 3, &c, &swap, err, sizeof err) == -1 &&
          strstr(err, "column-major") && strstr(err, "need lda>=3"));
    CHECK(gt_loader_map_call(1, 0, 1, 3, 5, 7, p16, 3, p16, 4, p16, 3, &c, &swap, err, sizeof err) == -1 &&
          strstr(err, "need lda>=3 ldb>=5"));
    CHECK(gt_loader_align(NULL) == 16 && gt_loader_align((void *)(uintptr_t)0x1008) == 8 &&
          gt_loader_align((void *)(uintptr_t)0x1001) == 1);
}

/* The mapped row-major call computes what the column-major call means: the one reference GEMM run on both. */
GT_TEST(loader_column_major_mapping_computes_cublas_semantics, GT_NEEDS_NONE)
{
    enum { M = 5, N = 7, K = 3, PAD = 4, MAXE = (K + PAD) * (N + PAD) };
    float A[MAXE], B[MAXE], C0[MAXE], want[MAXE], got[MAXE];
    unsigned seed = 7;
    for (int t = 0; t < 4; ++t) {
        const gt_problem col = gt_problem_make(1, t >> 1, t & 1, M, N, K, PAD, 2.0f, 0.5f);
        gt_call c;
        int swap;
        char err[256];
        gt_problem_fill(&col, &seed, A, B, C0);
        CHECK(gt_loader_map_call(1, col.ta, col.tb, M, N, K, A, col.lda, B, col.ldb, C0, col.ldc, &c, &swap, err,
                                 sizeof err) == 0);
        const gt_problem row = {0, c.shape.ta, c.shape.tb, c.shape.m, c.shape.n, c.shape.k, (int)c.lda, (int)c.ldb,
                                (int)c.ldc, 2.0f, 0.5f};
        CHECK(gt_problem_elems(&row, 'C') == gt_problem_elems(&col, 'C'));
        gt_ref_gemm(&col, A, B, C0, want);
        gt_ref_gemm(&row, swap ? B : A, swap ? A : B, C0, got);
        CHECK_MSG(!memcmp(want, got, gt_problem_elems(&col, 'C') * sizeof(float)),
                  "transa %d transb %d: mapped call differs", col.ta, col.tb);
    }
}

GT_TEST(loader_status_strings, GT_NEEDS_NONE)
{
    const char *seen[16];
    for (int s = 0; s <= GEMMTUNE_STATUS_ALLOC_FAILED; ++s) {
        const char *t = gemmtune_status_string((gemmtune_status)s);
        CHECK_MSG(t && !strncmp(t, "GEMMTUNE_", 9) && strlen(t) > 20, "status %d: %s", s, t ? t : "NULL");
        for (int j = 0; j < s; ++j) CHECK(t != seen[j] && strcmp(t, seen[j]));
        seen[s] = t;
    }
    CHECK(strstr(gemmtune_status_string(GEMMTUNE_STATUS_DB_ERROR), "DB_ERROR"));
    CHECK(strstr(gemmtune_status_string((gemmtune_status)99), "unknown"));
    CHECK(gemmtune_sgemm(NULL, NULL, GEMMTUNE_OP_N, GEMMTUNE_OP_N, 1, 1, 1, 1, NULL, 1, NULL, 1, 0, NULL, 1) ==
          GEMMTUNE_STATUS_INVALID_VALUE);
    CHECK(strstr(gemmtune_last_error(), "handle is NULL"));
    CHECK(gemmtune_create(NULL, NULL) == GEMMTUNE_STATUS_INVALID_VALUE);
    gemmtune_destroy(NULL);
}

static const unsigned char fake_cubin[] = "\177ELF not really";

static const gemmtune_winner_row table[] = {
    {H100, 9, 0, 132, 1024, 1024, 1024, "nn", "tile2d", P_BIG, 21.5, 1.04, fake_cubin, sizeof fake_cubin, "sm_90"},
    {H100, 9, 0, 132, 4096, 4096, 4096, "tn", "tile2d", P_SMALL, 30.0, 0.8, NULL, 0, NULL},
    {"NVIDIA H200", 9, 0, 132, 512, 512, 512, "nn", "tile2d", P_SMALL, 11.0, 0.7, NULL, 0, NULL},
};

GT_TEST(loader_table_rows_convert_and_select, GT_NEEDS_NONE)
{
    gt_winner_set set;
    char err[256];
    CHECK(gt_loader_set_from_table(table, 3, &set, err, sizeof err) == 0);
    CHECK(set.n == 3 && set.cubin[0] == fake_cubin && set.cubin_size[0] == sizeof fake_cubin && !set.cubin[1]);
    CHECK(!strcmp(set.cubin_arch[0], "sm_90") && !strcmp(set.rows[1].params, P_SMALL));
    CHECK(set.rows[1].shape.ta == 1 && set.rows[1].shape.tb == 0 && set.rows[1].shape.k == 4096);
    CHECK(set.rows[0].tflops == 21.5 && set.rows[0].ratio == 1.04);
    gt_device_id d = h100();
    gt_call c = call_of(1024, 1024, 1024, "nn", 16);
    CHECK(pick_(set.rows, set.n, &d, &c, GEMMTUNE_FALLBACK_CUBLAS).rule == GT_RULE_EXACT);
    c = call_of(4000, 4000, 4000, "tn", 16); /* 0.8x cuBLAS at 4096^3: not reused */
    gt_choice ch = pick_(set.rows, set.n, &d, &c, GEMMTUNE_FALLBACK_CUBLAS);
    CHECK(ch.rule == GT_RULE_CUBLAS && ch.row == -1);
    c = call_of(512, 512, 512, "tt", 16);
    CHECK(pick_(set.rows, set.n, &d, &c, GEMMTUNE_FALLBACK_DEFAULT).rule == GT_RULE_DEFAULT);
    gt_loader_set_free(&set);
    CHECK(gt_loader_set_from_table(NULL, 0, &set, err, sizeof err) == 0 && set.n == 0);
    gt_loader_set_free(&set);
}

GT_TEST(loader_table_refuses_bad_rows, GT_NEEDS_NONE)
{
    gemmtune_winner_row bad[2] = {table[0], table[1]};
    gt_winner_set set;
    char err[256];
    bad[1].family = "warp9";
    CHECK(gt_loader_set_from_table(bad, 2, &set, err, sizeof err) == -1 && strstr(err, "row 1") &&
          strstr(err, "family"));
    bad[1] = table[1], bad[1].layout = "nx";
    CHECK(gt_loader_set_from_table(bad, 2, &set, err, sizeof err) == -1 && strstr(err, "layout 'nx'"));
    bad[1] = table[1], bad[1].params = "BM=64,BN=64";
    CHECK(gt_loader_set_from_table(bad, 2, &set, err, sizeof err) == -1 && strstr(err, "row 1"));
    bad[1] = table[1], bad[1].m = 0;
    CHECK(gt_loader_set_from_table(bad, 2, &set, err, sizeof err) == -1 && strstr(err, "0x4096x4096"));
    bad[1] = table[1], bad[1].cubin = fake_cubin;
    CHECK(gt_loader_set_from_table(bad, 2, &set, err, sizeof err) == -1 && strstr(err, "cubin"));
    bad[1] = table[1], bad[1].gpu_name = NULL;
    CHECK(gt_loader_set_from_table(bad, 2, &set, err, sizeof err) == -1 && strstr(err, "gpu_name"));
    CHECK(gt_loader_set_from_table(NULL, 2, &set, err, sizeof err) == -1);

    gemmtune_handle h = (gemmtune_handle)&set;
    bad[1] = table[1], bad[1].family = "warp9";
    CHECK(gemmtune_create_from_table(&h, bad, 2, NULL) == GEMMTUNE_STATUS_TABLE_ERROR && h == NULL);
    CHECK(strstr(gemmtune_last_error(), "table row 1"));
    gemmtune_status st = gemmtune_create_from_table(&h, table, 3, NULL);
    if (gt_test_gpu_count() == 0) CHECK_MSG(st == GEMMTUNE_STATUS_NO_DEVICE && h == NULL, "%s", gemmtune_status_string(st));
    else CHECK(st == GEMMTUNE_SUCCESS && h != NULL);
    gemmtune_destroy(h);
    gemmtune_options o;
    gemmtune_options_init(&o);
    CHECK(o.device == -1 && o.db_path == NULL && o.fallback == GEMMTUNE_FALLBACK_ENV);
    o.fallback = (gemmtune_fallback)7;
    CHECK(gemmtune_create_from_table(&h, table, 3, &o) == GEMMTUNE_STATUS_INVALID_VALUE && h == NULL);
}

/* A database with winners on H100 for 1024^3 nn (P_BIG) and 4096^3 nn (P_SMALL), and on H200 for 512^3 nn,
 * each with the hash of its rendered source. Returns the malloc'd path, or NULL after a failed check. */
static char *fixture_db(void)
{
    char *path = gt_tmp_path(".db");
    static const struct { const char *gpu; int m; const char *params; } w[] = {
        {H100, 1024, P_BIG}, {H100, 4096, P_SMALL}, {"NVIDIA H200", 512, P_SMALL}};
    int ok = 1;
    for (size_t i = 0; ok && i < sizeof w / sizeof w[0]; ++i) {
        gt_gpu_info g;
        memset(&g, 0, sizeof g);
        snprintf(g.name, sizeof g.name, "%s", w[i].gpu);
        g.cc_major = 9, g.sm_count = 132;
        snprintf(g.uuid, sizeof g.uuid, "GPU-test-%zu", i);
        gt_shape s = {w[i].m, w[i].m, w[i].m, 0, 0};
        ok = gt_fixture_winner(path, &g, &s, "tile2d", w[i].params, NULL, 1.5) == 0;
        CHECK(ok);
    }
    if (!ok) free(path), path = NULL;
    return path;
}

/* Expected outcome of gemmtune_create once its source is read: no device here, or a handle on a GPU machine. */
static void check_created(gemmtune_status st, gemmtune_handle h, const char *what)
{
    if (gt_test_gpu_count() == 0) CHECK_MSG(st == GEMMTUNE_STATUS_NO_DEVICE, "%s: %s (%s)", what,
                                            gemmtune_status_string(st), gemmtune_last_error());
    else CHECK_MSG(st == GEMMTUNE_SUCCESS, "%s: %s (%s)", what, gemmtune_status_string(st), gemmtune_last_error());
    gemmtune_destroy(h);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) fputs(text, f), fclose(f);
}

GT_TEST(loader_create_reports_bad_sources, GT_NEEDS_NONE)
{
    char *dbpath = fixture_db();
    if (!dbpath) return;
    char *missing = gt_tmp_path(".db"), *junk = gt_tmp_path(".db"), *dir = gt_tmp_path("_xdg");
    char *saved = getenv("GEMMTUNE_DB") ? strdup(getenv("GEMMTUNE_DB")) : NULL;
    char *xdg = getenv("XDG_DATA_HOME") ? strdup(getenv("XDG_DATA_HOME")) : NULL;
    gemmtune_options o;
    gemmtune_options_init(&o);
    gemmtune_handle h = NULL;
    unsetenv("GEMMTUNE_DB");
    o.db_path = missing;
    CHECK(gemmtune_create(&h, &o) == GEMMTUNE_STATUS_DB_ERROR && h == NULL);
    CHECK_MSG(strstr(gemmtune_last_error(), missing), "%s", gemmtune_last_error());
    write_text(junk, "this is not a database, it is a text file long enough to have a header\n");
    o.db_path = junk;
    CHECK(gemmtune_create(&h, &o) == GEMMTUNE_STATUS_DB_ERROR && strstr(gemmtune_last_error(), junk));
    o.db_path = NULL;
    setenv("GEMMTUNE_DB", missing, 1); /* named through the environment: must exist too */
    CHECK(gemmtune_create(&h, &o) == GEMMTUNE_STATUS_DB_ERROR);
    unsetenv("GEMMTUNE_DB");
    mkdir(dir, 0700);
    setenv("XDG_DATA_HOME", dir, 1); /* the default database not there yet: fallback only, not an error */
    gemmtune_status st = gemmtune_create(&h, &o);
    check_created(st, h, "absent default database");
    o.db_path = dbpath;
    st = gemmtune_create(&h, &o);
    check_created(st, h, "fixture database");
    o.db_path = NULL;
    o.json_path = missing;
    CHECK(gemmtune_create(&h, &o) == GEMMTUNE_STATUS_JSON_ERROR && strstr(gemmtune_last_error(), missing));
    o.json_path = junk;
    CHECK(gemmtune_create(&h, &o) == GEMMTUNE_STATUS_JSON_ERROR && strstr(gemmtune_last_error(), junk));
    write_text(junk, "{\"schema\": \"something-else\", \"winners\": 3}");
    CHECK(gemmtune_create(&h, &o) == GEMMTUNE_STATUS_JSON_ERROR);
    xdg ? setenv("XDG_DATA_HOME", xdg, 1) : unsetenv("XDG_DATA_HOME");
    if (saved) setenv("GEMMTUNE_DB", saved, 1);
    unlink(dbpath), unlink(junk), rmdir(dir);
    free(dbpath), free(missing), free(junk), free(dir), free(saved), free(xdg);
}

GT_TEST(loader_json_source_selects_like_the_database, GT_NEEDS_NONE)
{
    char *dbpath = fixture_db();
    if (!dbpath) return;
    char err[512], *json = NULL, *jpath = gt_tmp_path(".json");
    gt_db *db = NULL;
    CHECK(gt_db_open(dbpath, 0, &db, err, sizeof err) == 0);
    CHECK_MSG(db && gt_db_export_json(db, NULL, &json, err, sizeof err) == 0, "%s", err);
    if (db) gt_db_close(db);
    write_text(jpath, json ? json : "");
    gt_winner_set a, b;
    gemmtune_options o;
    gemmtune_options_init(&o);
    o.db_path = dbpath;
    CHECK_MSG(gt_loader_winners(&o, &a, NULL, err, sizeof err) == GEMMTUNE_SUCCESS, "%s", err);
    o.db_path = NULL, o.json_path = jpath;
    CHECK_MSG(gt_loader_winners(&o, &b, NULL, err, sizeof err) == GEMMTUNE_SUCCESS, "%s", err);
    CHECK_MSG(a.n == 3 && b.n == 3, "%d and %d winners", a.n, b.n);
    gt_device_id d = h100();
    const int sizes[] = {1024, 1000, 4096, 512, 64};
    for (int i = 0; i < 5 && a.n == 3 && b.n == 3; ++i) {
        gt_call c = call_of(sizes[i], sizes[i], sizes[i], "nn", 16);
        gt_choice x = pick_(a.rows, a.n, &d, &c, GEMMTUNE_FALLBACK_CUBLAS);
        gt_choice y = pick_(b.rows, b.n, &d, &c, GEMMTUNE_FALLBACK_CUBLAS);
        CHECK(x.rule == y.rule && x.family == y.family && !memcmp(&x.params, &y.params, sizeof x.params));
        CHECK(x.rule == (sizes[i] == 1024 || sizes[i] == 4096 ? GT_RULE_EXACT : GT_RULE_CUBLAS));
    }
    gt_loader_set_free(&a), gt_loader_set_free(&b);
    unlink(dbpath), unlink(jpath);
    free(dbpath), free(jpath), free(json);
}

/* Run the CLI; returns its exit status with the output in *out (caller frees). */
static int cli(const char *args, char **out)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "GEMMTUNE_FALLBACK= %s explain %s", GT_CLI, args);
    return gt_run(cmd, out);
}

GT_TEST(loader_explain_cli_names_the_rule, GT_NEEDS_NONE)
{
    char *dbpath = fixture_db(), *out = NULL, args[1024];
    if (!dbpath) return;
    static const struct { const char *call, *rule, *kernel; } cases[] = {
        {"--shape 1024x1024x1024 --gpu-name '" H100 "' --cc 9.0 --sms 132", "rule:     exact", "tile2d " P_BIG},
        {"--shape 3000x3000x3000 --gpu-name '" H100 "' --cc 9.0 --sms 132", "rule:     cublas", "kernel:   cublasSgemm"},
        {"--shape 500x500x500 --gpu-name 'NVIDIA GH200' --cc 9.0 --sms 132",
         "rule:     cublas: cublasSgemm (cuBLAS's own choice, FP32 pedantic) (no kernel is tuned for this GPU model",
         "kernel:   cublasSgemm"},
        {"--shape 1024x1024x1024 --gpu-name 'NVIDIA L4' --cc 8.9 --sms 58 --fallback default", "rule:     default",
         "BM=64,BN=64,BK=8,TM=8,TN=8"},
        {"--shape 1024x1024x1024 --layout tt --gpu-name '" H100 "' --cc 9.0 --sms 132", "no shape is tuned in layout tt",
         "kernel:   cublasSgemm"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        snprintf(args, sizeof args, "%s --db %s", cases[i].call, dbpath);
        int rc = cli(args, &out);
        CHECK_MSG(rc == 0 && strstr(out, cases[i].rule) && strstr(out, cases[i].kernel), "%s -> %d:\n%s", args, rc,
                  out);
        free(out);
    }
    free(dbpath);
}

/* The id a kernel had before ids covered the headers it includes: the hash of its rendered source alone, as every
 * database written before stores. */
static void pre_header_id(const char *family, const char *params, const gt_shape *s, char out[17])
{
    char err[256];
    const gt_family *f = gt_family_find(family);
    gt_params p;
    char *src = f && !gt_params_parse(f, params, &p, err, sizeof err) ? gt_render(f, &p, s->ta, s->tb, 0, err, sizeof err)
                                                                      : NULL;
    gt_hash_hex(src ? src : "", src ? strlen(src) : 0, out);
    free(src);
}

static int has_stale(const gt_winner *w, void *ctx)
{
    *(int *)ctx += w->stale;
    return 0;
}

/* Issue 25 item 6: a winner whose stored id no longer matches what this build renders for it (the template or a
 * header changed since it was timed) is never served, neither exact nor reused; explain says so in plain words;
 * query and export flag it; and a fresh winner of the shape replaces it even when it timed slower. */
GT_TEST(loader_stale_winner_is_never_served_and_flagged, GT_NEEDS_NONE)
{
    char *db = gt_tmp_path(".db"), *out = NULL, args[1024], err[512], old[17], old2[17];
    gt_gpu_info g;
    memset(&g, 0, sizeof g);
    snprintf(g.name, sizeof g.name, "%s", H100);
    g.cc_major = 9, g.sm_count = 132;
    snprintf(g.uuid, sizeof g.uuid, "GPU-stale");
    gt_shape s = {1024, 1024, 1024, 0, 0}, s2 = {2048, 1024, 1024, 0, 0};
    pre_header_id("tile2d", P_BIG, &s, old);
    pre_header_id("tile2d", P_SMALL, &s2, old2);
    CHECK(gt_fixture_winner(db, &g, &s, "tile2d", P_BIG, old, 1.0) == 0);
    CHECK(gt_fixture_winner(db, &g, &s2, "tile2d", P_SMALL, old2, 1.0) == 0);
    gt_winner_set set;
    gemmtune_options o;
    gemmtune_options_init(&o);
    o.db_path = db;
    CHECK_MSG(gt_loader_winners(&o, &set, NULL, err, sizeof err) == GEMMTUNE_SUCCESS, "%s", err);
    CHECK(set.n == 2 && set.rows[0].stale && set.rows[1].stale);
    for (int i = 0; i < set.n; ++i) set.rows[i].ratio = 1.5; /* a clear win, were they fresh */
    gt_device_id d = h100();
    gt_call c = call_of(1024, 1024, 1024, "nn", 16);
    gt_choice ch = pick_(set.rows, set.n, &d, &c, GEMMTUNE_FALLBACK_CUBLAS);
    char line[1024];
    gt_loader_describe(&ch, set.rows, line, sizeof line);
    CHECK_MSG(ch.rule == GT_RULE_CUBLAS && strstr(line, "stale: the kernel's source changed since it was tuned; "
                                                        "re-tune"), "%s", line);
    for (int i = 0; i < set.n; ++i) set.rows[i].stale = 0; /* the same rows, fresh: served */
    ch = pick_(set.rows, set.n, &d, &c, GEMMTUNE_FALLBACK_CUBLAS);
    CHECK(ch.rule == GT_RULE_EXACT);
    gt_loader_set_free(&set);
    snprintf(args, sizeof args, "--shape 1024x1024x1024 --gpu-name '" H100 "' --cc 9.0 --sms 132 --db %s", db);
    CHECK(cli(args, &out) == 0 && strstr(out, "rule:     cublas") && strstr(out, "stale: the kernel's source changed"));
    free(out);
    snprintf(args, sizeof args, "%s query --db %s --format csv", GT_CLI, db);
    CHECK(gt_run(args, &out) == 0 && strstr(out, ",stale") && strstr(out, ",true"));
    free(out);
    snprintf(args, sizeof args, "%s export --db %s", GT_CLI, db);
    CHECK(gt_run(args, &out) == 0 && strstr(out, "\"stale\":\ttrue") && strstr(out, "2 winners are stale"));
    free(out);
    gt_db *h = NULL;
    CHECK(gt_db_open(db, GT_DB_READ, &h, err, sizeof err) == 0);
    CHECK(h && gt_db_export_header(h, NULL, NULL, NULL, &out, err, sizeof err) == 0);
    CHECK(out && strstr(out, "left out, stale") && strstr(out, "gemmtune_winners_count = 0"));
    gt_db_close(h);
    free(out);
    /* a fresh winner of the shape, slower than the stale one's timing, replaces it */
    CHECK(gt_fixture_winner(db, &g, &s, "tile2d", P_BIG, NULL, 2.0) == 0);
    int stale = 0;
    CHECK(gt_db_open(db, GT_DB_READ, &h, err, sizeof err) == 0);
    CHECK(h && gt_db_winners(h, NULL, has_stale, &stale, err, sizeof err) == 0 && stale == 1);
    gt_db_close(h);
    /* and a stale one never replaces a fresh one, however fast */
    CHECK(gt_fixture_winner(db, &g, &s, "tile2d", P_BIG, old, 0.5) == 0);
    CHECK(gt_fixture_sql_int(db, "SELECT count(*) FROM winners w JOIN candidates c ON c.id = w.candidate_id "
                                 "WHERE w.median_ms = 2.0") == 1);
    gt_fixture_rm(db);
    free(db);
}

GT_TEST(loader_explain_cli_refuses_bad_input, GT_NEEDS_NONE)
{
    static const struct { const char *args, *msg; int rc; } cases[] = {
        {"--gpu-name X --cc 9.0 --sms 1", "--shape MxNxK is required", 2},
        {"--shape 10x10x10 --gpu-name X --cc 9.0", "go together", 2},
        {"--shape 10x10x10 --gpu-name X --cc nine --sms 1", "--cc 'nine'", 2},
        {"--shape 10x10x10 --gpu-name X --cc 5.2 --sms 1", "no architecture this gemmtune knows", 2},
        {"--shape 10x10x10 --layout xx --gpu-name X --cc 9.0 --sms 1", "--layout 'xx'", 2},
        {"--shape 10x10x10 --align 3 --gpu-name X --cc 9.0 --sms 1", "--align 3", 2},
        {"--shape 10x10x10 --lda 5 --gpu-name X --cc 9.0 --sms 1", "leading dimension", 2},
        {"--shape 10x10x10 --frobnicate", "unknown option", 2},
        {"--shape 10x10x10 --gpu-name X --cc 9.0 --sms 1 --db /nonexistent/gt.db", "/nonexistent/gt.db", 1},
        {"--shape 10x10x10 --gpu-name X --cc 9.0 --sms 1 --fallback sometimes", "sometimes", 2},
        {"--shape 10x10x10", "no GPU here", 1}, /* last: only without a GPU */
    };
    const size_t ncases = sizeof cases / sizeof cases[0] - (gt_test_gpu_count() > 0);
    for (size_t i = 0; i < ncases; ++i) {
        char *out = NULL;
        int rc = cli(cases[i].args, &out);
        CHECK_MSG(rc == cases[i].rc && out && strstr(out, cases[i].msg), "%s -> %d:\n%s", cases[i].args, rc, out);
        free(out);
    }
}

/* A program using only the compiled-in table: links against the static library without NVRTC, cuBLAS, SQLite
 * or cJSON, which proves the table path needs none of them. */
static const char table_only_src[] =
    "#include <gemmtune.h>\n#include <stdio.h>\n"
    "static const gemmtune_winner_row rows[] = {{\"GPU\", 9, 0, 132, 64, 64, 64, \"nn\", \"tile2d\",\n"
    "    \"BM=64,BN=64,BK=8,TM=8,TN=8\", 1.0, 0.5, 0, 0, 0}};\n"
    "int main(void) { gemmtune_handle h; gemmtune_status s = gemmtune_create_from_table(&h, rows, 1, 0);\n"
    "  printf(\"%s\\n\", gemmtune_status_string(s)); if (!s) gemmtune_destroy(h); return 0; }\n";

GT_TEST(loader_install_pkgconfig_example, GT_NEEDS_NONE)
{
    char *prefix = gt_tmp_path("_prefix"), *src = gt_tmp_path(".c"), *bin = gt_tmp_path(""), *out = NULL;
    char cmd[4096];
    const size_t nroot = strlen(gt_src_root());
    const char *build = strncmp(gt_build_dir(), gt_src_root(), nroot) || gt_build_dir()[nroot] != '/'
                            ? gt_build_dir() : gt_build_dir() + nroot + 1; /* as `make test` names it */
    snprintf(cmd, sizeof cmd, "make -s -C " GT_ROOT " BUILD=%s PREFIX=%s install", build, prefix);
    int rc = gt_run(cmd, &out);
    CHECK_MSG(rc == 0, "%s -> %d:\n%s", cmd, rc, out);
    free(out);
    static const char *files[] = {"include/gemmtune.h", "lib/libgemmtune.a", "lib/libgemmtune.so",
                                  "lib/libgemmtune.so.0", "lib/pkgconfig/gemmtune.pc", "bin/gemmtune"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; ++i) {
        snprintf(cmd, sizeof cmd, "%s/%s", prefix, files[i]);
        CHECK_MSG(access(cmd, R_OK) == 0, "%s not installed", cmd);
    }
    snprintf(cmd, sizeof cmd, "PKG_CONFIG_PATH=%s/lib/pkgconfig pkg-config --cflags --libs gemmtune", prefix);
    rc = gt_run(cmd, &out);
    CHECK_MSG(rc == 0 && strstr(out, prefix) && strstr(out, "-lgemmtune"), "%s", out);
    free(out);
    /* The README's command, then a run: it must explain itself without a GPU and pass with one. */
    snprintf(cmd, sizeof cmd, "cd / && export PKG_CONFIG_PATH=%s/lib/pkgconfig && cc -std=c99 -Wall -Werror " SAN_FLAGS
             " " GT_ROOT "/docs/example.c $(pkg-config --cflags --libs gemmtune) -o %s && XDG_DATA_HOME=%s "
             "GEMMTUNE_DB= %s", prefix, bin, prefix, bin);
    rc = gt_run(cmd, &out);
    if (gt_test_gpu_count() == 0)
        CHECK_MSG(rc == 1 && strstr(out, "gemmtune_create: GEMMTUNE_STATUS_NO_DEVICE"), "%d:\n%s", rc, out);
    else CHECK_MSG(rc == 0 && strstr(out, "default: tile2d") && strstr(out, "ok"), "%d:\n%s", rc, out);
    free(out);
    write_text(src, table_only_src);
    snprintf(cmd, sizeof cmd, "cc -std=c99 -Wall -Werror " SAN_FLAGS " %s -I%s/include %s/lib/libgemmtune.a "
             "-L/usr/local/cuda/lib64 -lcudart_static -lpthread -ldl -lrt -lm -o %s && %s", src, prefix, prefix, bin,
             bin);
    rc = gt_run(cmd, &out);
    CHECK_MSG(rc == 0 && strstr(out, gt_test_gpu_count() ? "GEMMTUNE_SUCCESS" : "GEMMTUNE_STATUS_NO_DEVICE"),
              "table-only static link: %d:\n%s", rc, out);
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf %s %s %s", prefix, src, bin);
    gt_run(cmd, NULL);
    free(prefix), free(src), free(bin);
}

/* A program built from `gemmtune export --format header --with-cubin` hands its table to
 * gemmtune_create_from_table: the exported row type is gemmtune.h's, the embedded cubins pass the loader's
 * checks, and it links statically without NVRTC, SQLite or cJSON. */
static const char aot_src[] =
    "#include <gemmtune.h>\n#include \"winners.h\"\n#include <stdio.h>\n"
    "int main(void) {\n"
    "  int cubins = 0;\n"
    "  for (int i = 0; i < gemmtune_winners_count; ++i) cubins += gemmtune_winners[i].cubin != 0;\n"
    "  gemmtune_handle h;\n"
    "  gemmtune_status s = gemmtune_create_from_table(&h, gemmtune_winners, gemmtune_winners_count, 0);\n"
    "  printf(\"%d rows, %d cubins: %s %s\\n\", gemmtune_winners_count, cubins, gemmtune_status_string(s),\n"
    "         gemmtune_last_error());\n"
    "  if (!s) gemmtune_destroy(h);\n  return 0;\n}\n";

GT_TEST(loader_exported_header_with_cubins_builds_a_table_program, GT_NEEDS_NVRTC)
{
    char *db = fixture_db(), *dir = gt_tmp_path("_aot"), cmd[4096], *out = NULL;
    if (!db) return;
    snprintf(cmd, sizeof cmd, "mkdir -p %s && %s export --db %s --format header --with-cubin -o %s/winners.h", dir,
             GT_CLI, db, dir);
    int rc = gt_run(cmd, &out);
    CHECK_MSG(rc == 0, "%s -> %d:\n%s", cmd, rc, out);
    free(out);
    snprintf(cmd, sizeof cmd, "%s/main.c", dir);
    write_text(cmd, aot_src);
    snprintf(cmd, sizeof cmd, "cc -std=c99 -Wall -Werror " SAN_FLAGS " -I" GT_ROOT "/src/lib -I%s %s/main.c "
             GT_BUILD "/libgemmtune.a -L/usr/local/cuda/lib64 -lcudart_static -lpthread -ldl -lrt -lm -o %s/aot && "
             "%s/aot", dir, dir, dir, dir);
    rc = gt_run(cmd, &out);
    CHECK_MSG(rc == 0 && strstr(out, "3 rows, 3 cubins") &&
              strstr(out, gt_test_gpu_count() ? "GEMMTUNE_SUCCESS" : "GEMMTUNE_STATUS_NO_DEVICE"), "%d:\n%s", rc, out);
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    gt_run(cmd, NULL);
    unlink(db);
    free(db), free(dir);
}

/* gemmtune.h needs no CUDA header and parses as strict C89 and as C++. */
GT_TEST(loader_header_is_plain_c_and_cxx, GT_NEEDS_NONE)
{
    char *out = NULL;
    int rc = gt_run("cc -std=c89 -pedantic -Wall -Wextra -Werror -fsyntax-only -x c " GT_ROOT "/src/lib/gemmtune.h",
                    &out);
    CHECK_MSG(rc == 0, "C89: %s", out);
    free(out);
    if (gt_run("command -v c++", NULL) != 0) return;
    rc = gt_run("c++ -std=c++11 -Wall -Wextra -Werror -fsyntax-only -x c++ " GT_ROOT "/src/lib/gemmtune.h", &out);
    CHECK_MSG(rc == 0, "C++: %s", out);
    free(out);
}

/* The record file (src/lib/record.c) of a handle made by hand with one untuned call: merged into a regular file;
 * a FIFO, /dev/zero and a file over GT_FILE_MAX_TEXT are refused at once (the alarm catches a wait or an endless
 * read) and left as they are. */
GT_TEST(loader_record_file_is_a_bounded_regular_file, GT_NEEDS_NONE)
{
    struct gemmtune_context *h = calloc(1, sizeof *h);
    gt_plan *p = calloc(1, sizeof *p);
    char *dir = gt_tmp_path("_rec"), path[600], err[512];
    size_t n;
    p->call.shape = (gt_shape){100, 200, 300, 0, 1};
    p->choice.rule = GT_RULE_CUBLAS;
    atomic_store(&p->calls, 3);
    atomic_store(&h->buckets[0], p);
    CHECK(mkdir(dir, 0700) == 0);
    snprintf(path, sizeof path, "%s/calls.txt", dir);
    snprintf(h->record_path, sizeof h->record_path, "%s", path);
    write_text(path, "# old\n100x200x300:nt 2\n5x6x7:nn 1\n");
    alarm(60);
    CHECK_MSG(gt_record_write(h, err, sizeof err) == 0, "%s", err);
    char *text = (char *)gt_fixture_slurp(path, &n);
    CHECK_MSG(text && strstr(text, "\n100x200x300:nt 5\n5x6x7:nn 1\n"), "%s", text);
    free(text);
    snprintf(h->record_path, sizeof h->record_path, "%s/fifo", dir);
    CHECK(mkfifo(h->record_path, 0600) == 0);
    CHECK(gt_record_write(h, err, sizeof err) < 0 && strstr(err, "a FIFO"));
    snprintf(h->record_path, sizeof h->record_path, "/dev/zero");
    CHECK(gt_record_write(h, err, sizeof err) < 0 && strstr(err, "a character device"));
    snprintf(h->record_path, sizeof h->record_path, "%s/big", dir);
    FILE *f = fopen(h->record_path, "w");
    CHECK(f && fseek(f, GT_FILE_MAX_TEXT, SEEK_SET) == 0 && fputc('\n', f) != EOF);
    if (f) fclose(f);
    CHECK(gt_record_write(h, err, sizeof err) < 0 && strstr(err, "larger than"));
    struct stat sb;
    CHECK(stat(h->record_path, &sb) == 0 && sb.st_size == GT_FILE_MAX_TEXT + 1);
    alarm(0);
    unlink(h->record_path), unlink(path), snprintf(path, sizeof path, "%s/fifo", dir), unlink(path), rmdir(dir);
    free(p), free(h), free(dir);
}

/* The one place a device's limits and model are read from its properties (the loader, explain, the GPU tests). */
GT_TEST(loader_device_limits_and_model_from_properties, GT_NEEDS_NONE)
{
    struct cudaDeviceProp p;
    memset(&p, 0, sizeof p);
    memset(p.name, 'H', sizeof p.name - 1); /* a name longer than a model keeps: cut at 127 bytes */
    p.major = 9, p.minor = 0, p.multiProcessorCount = 132, p.maxThreadsPerBlock = 1024;
    p.sharedMemPerBlock = 48 * 1024, p.sharedMemPerBlockOptin = 227 * 1024, p.regsPerBlock = 65536;
    const gt_limits l = gt_device_limits(&p);
    gt_limits arch;
    CHECK(gt_limits_for_cc(9, 0, &arch));
    arch.sm_count = 132; /* an H100's properties are its architecture's limits, with its SM count */
    CHECK(!memcmp(&l, &arch, sizeof l));
    const gt_gpu_model m = gt_device_model(&p);
    CHECK(strlen(m.name) == 127 && m.name[0] == 'H' && m.cc_major == 9 && m.cc_minor == 0 && m.sm_count == 132);
}
