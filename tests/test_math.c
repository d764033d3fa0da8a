/* Math classes (issue 16): a winner is kept per GPU model, shape and class; readers see FP32 winners unless they
 * ask; the loader serves another class only to a handle that asks (options.math or $GEMMTUNE_MATH), and then the
 * faster of the two winners; JSON carries the class and import checks it. A test-only family of class tf32x3 stands
 * in for the real one, so these tests hold whatever the kernel does. */
#include "db.h"
#include "family.h"
#include "fixture.h"
#include "harness.h"
#include "loader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int legal(const gt_params *p, const gt_limits *lim, char *why, size_t n)
{
    (void)lim;
    return p->v[0] == 32 ? 1 : (snprintf(why, n, "BX must be 32"), 0);
}

static void launch(const gt_params *p, const gt_shape *s, int sms, gt_launch *out)
{
    (void)s, (void)sms;
    *out = (gt_launch){.grid = {1, 1, 1}, .block = {(unsigned)p->v[0], 1, 1}, .splitk = 1};
}

static const gt_family split3 = {.name = "test_split3", .doc = "test only: a family of math class tf32x3",
                                 .template_name = "test_oob.cu", .nparams = 1,
                                 .params = {{"BX", "threads per block", 1, {32}}}, .legal = legal, .launch = launch,
                                 .math = GT_MATH_TF32X3, .reference = GT_REF_FP64, .test_only = 1};

__attribute__((constructor)) static void register_family(void) { gt_family_register(&split3); }

static const gt_shape sq = {1024, 1024, 1024, 0, 0}, slow = {2048, 2048, 2048, 0, 0};

/* 1024^3: FP32 winner 1.0 ms, tf32x3 winner 0.5 ms; 2048^3: FP32 4.0 ms, tf32x3 6.0 ms. */
static char *two_class_db(void)
{
    char *path = gt_tmp_path("math.db");
    const gt_gpu_info g = gt_fixture_gpu(0, 0);
    const char *h = NULL, *fp = "BM=64,BN=64,BK=8,TM=4,TN=4"; /* NULL: each kernel's real id, not a stale one */
    if (gt_fixture_winner(path, &g, &sq, "tile2d", fp, h, 1.0) || gt_fixture_winner(path, &g, &sq, "test_split3",
                                                                                     "BX=32", h, 0.5) ||
        gt_fixture_winner(path, &g, &slow, "tile2d", fp, h, 4.0) ||
        gt_fixture_winner(path, &g, &slow, "test_split3", "BX=32", h, 6.0))
        return free(path), NULL;
    return path;
}

GT_TEST(math_class_names_round_trip, GT_NEEDS_NONE)
{
    gt_math m = GT_MATH_COUNT;
    CHECK(!strcmp(gt_math_name(GT_MATH_FP32), "fp32") && !strcmp(gt_math_name(GT_MATH_TF32X3), "tf32x3"));
    CHECK(gt_math_parse("tf32x3", &m) == 0 && m == GT_MATH_TF32X3);
    CHECK(gt_math_parse("fp32", &m) == 0 && m == GT_MATH_FP32);
    CHECK(gt_math_parse("tf32", &m) == -1 && gt_math_parse(NULL, &m) == -1 && gt_math_name(GT_MATH_COUNT) == NULL);
    /* the sets the database's filters take: "all" or one class, and back */
    unsigned set = 0;
    char text[64];
    CHECK(gt_math_set_parse("all", &set) == 0 && set == GT_MATH_ALL && !strcmp(gt_math_set_name(set, text, sizeof text), "all"));
    CHECK(gt_math_set_parse("tf32x3", &set) == 0 && set == GT_MATH_BIT(GT_MATH_TF32X3));
    CHECK(!strcmp(gt_math_set_name(set, text, sizeof text), "tf32x3"));
    CHECK(gt_math_set_parse("every", &set) == -1 && gt_math_set_parse(NULL, &set) == -1);
    CHECK(!strcmp(gt_math_set_name(0, text, sizeof text), ""));
}

static int count_rows(const gt_winner *w, void *ctx)
{
    int *n = ctx;
    n[0]++;
    n[1] += w->math == GT_MATH_TF32X3;
    return 0;
}

/* A class is one row of GT_MATH_CLASSES: its name, the public value (GEMMTUNE_MATH_FP32 + its place), the least
 * reference its families are validated against, and the CLI's help all come from it. */
GT_TEST(math_class_facts_come_from_its_row, GT_NEEDS_NONE)
{
#define ROW_(id, name_, ref_, doc_) {GT_MATH_##id, name_, ref_, doc_},
    static const struct {
        gt_math m;
        const char *name;
        gt_reference ref;
        const char *doc;
    } rows[] = {GT_MATH_CLASSES(ROW_)};
#undef ROW_
    char *tune = NULL, *exec = NULL;
    CHECK(gt_run(GT_CLI " tune --help", &tune) == 0 && gt_run(GT_CLI " exec --help", &exec) == 0);
    CHECK(sizeof rows / sizeof rows[0] == GT_MATH_COUNT && rows[0].m == GT_MATH_FP32);
    for (int i = 0; i < GT_MATH_COUNT; ++i) {
        gt_math m = GT_MATH_COUNT;
        char line[256];
        CHECK(rows[i].m == (gt_math)i && gt_math_parse(rows[i].name, &m) == 0 && m == rows[i].m);
        CHECK(gt_loader_math_class(gt_loader_math_of_class(m)) == m);
        gt_family f = {.math = m}; /* a family that states no reference gets its class's */
        CHECK(gt_family_reference(&f) == rows[i].ref);
        f.reference = GT_REF_FP64; /* nor can a family's be weaker than its class's, while it may be stricter */
        CHECK(gt_family_reference(&f) == GT_REF_FP64);
        snprintf(line, sizeof line, "%s: %s\n", rows[i].name, rows[i].doc);
        CHECK_MSG(tune && exec && strstr(tune, line) && strstr(exec, line), "the help lacks '%s'", line);
    }
    CHECK(gt_family_reference(gt_family_find("test_split3")) == GT_REF_FP64);
    CHECK(gt_loader_math_of_class(GT_MATH_TF32X3) == GEMMTUNE_MATH_TF32X3);
    free(tune);
    free(exec);
}

GT_TEST(math_winners_are_kept_per_class, GT_NEEDS_NONE)
{
    char *path = two_class_db(), err[512];
    CHECK(path != NULL);
    if (!path) return;
    CHECK(gt_fixture_sql_int(path, "SELECT count(*) FROM winners") == 4);
    CHECK(gt_fixture_sql_int(path, "SELECT count(*) FROM candidates WHERE math = 'tf32x3'") == 1);
    CHECK(gt_fixture_sql_int(path, "SELECT count(*) FROM v_winners WHERE math = 'tf32x3' AND "
                                   "family = 'test_split3'") == 2);
    gt_db *db;
    CHECK(gt_db_open(path, GT_DB_READ, &db, err, sizeof err) == 0);
    int plain[2] = {0}, all[2] = {0}, only[2] = {0};
    CHECK(gt_db_winners(db, NULL, count_rows, plain, err, sizeof err) == 0 && plain[0] == 2 && plain[1] == 0);
    CHECK(gt_db_winners(db, &(gt_winner_filter){.math = GT_MATH_ALL}, count_rows, all, err, sizeof err) == 0);
    CHECK(all[0] == 4 && all[1] == 2);
    CHECK(gt_db_winners(db, &(gt_winner_filter){.math = GT_MATH_BIT(GT_MATH_TF32X3)}, count_rows, only, err, sizeof err) == 0);
    CHECK(only[0] == 2 && only[1] == 2);
    int both[2] = {0}; /* a set of classes, named one by one */
    const unsigned fp32_tf32x3 = GT_MATH_BIT(GT_MATH_FP32) | GT_MATH_BIT(GT_MATH_TF32X3);
    CHECK(gt_db_winners(db, &(gt_winner_filter){.math = fp32_tf32x3}, count_rows, both, err, sizeof err) == 0);
    CHECK(both[0] == 4 && both[1] == 2);
    char *text = NULL; /* a C header's rows have no class, so it refuses any but FP32, and holds FP32 rows */
    CHECK(gt_db_export_header(db, &(gt_winner_filter){.math = GT_MATH_BIT(GT_MATH_TF32X3)}, NULL, NULL, &text, err, sizeof err) < 0);
    CHECK_MSG(strstr(err, "FP32 winners only") && strstr(err, "'tf32x3'"), "%s", err);
    CHECK(gt_db_export_header(db, NULL, NULL, NULL, &text, err, sizeof err) == 0 && text);
    CHECK(text && strstr(text, "tile2d") && !strstr(text, "test_split3"));
    free(text);
    CHECK(gt_db_export_json(db, &(gt_winner_filter){.math = GT_MATH_ALL}, &text, err, sizeof err) == 0 && text);
    CHECK(text && strstr(text, "\"math\":\t\"tf32x3\"") && strstr(text, "\"math\":\t\"fp32\""));
    free(text);
    gt_db_close(db);
    free(path);
}

GT_TEST(math_loader_serves_another_class_only_when_asked, GT_NEEDS_NONE)
{
    char *path = two_class_db(), err[512];
    CHECK(path != NULL);
    if (!path) return;
    gt_db *db;
    gt_winner_set set;
    CHECK(gt_db_open(path, GT_DB_READ, &db, err, sizeof err) == 0);
    CHECK(gt_loader_set_from_db(db, GEMMTUNE_MATH_FP32, &set, err, sizeof err) == 0 && set.n == 2);
    for (int i = 0; i < set.n; ++i) CHECK_MSG(!strcmp(set.rows[i].family, "tile2d"), "%s", set.rows[i].family);
    gt_loader_set_free(&set);
    CHECK(gt_loader_set_from_db(db, GEMMTUNE_MATH_TF32X3, &set, err, sizeof err) == 0 && set.n == 2);
    for (int i = 0; i < set.n; ++i) /* the faster of the two classes on each shape */
        CHECK_MSG(!strcmp(set.rows[i].family, set.rows[i].shape.m == 1024 ? "test_split3" : "tile2d"), "%d: %s",
                  set.rows[i].shape.m, set.rows[i].family);
    gt_loader_set_free(&set);
    gt_db_close(db);

    gemmtune_options opt;
    gemmtune_options_init(&opt);
    opt.db_path = path;
    CHECK(opt.math == GEMMTUNE_MATH_ENV);
    const char *saved = getenv("GEMMTUNE_MATH");
    char *keep = saved ? strdup(saved) : NULL;
    setenv("GEMMTUNE_MATH", "tf32", 1);
    CHECK(gt_loader_winners(&opt, &set, NULL, err, sizeof err) == GEMMTUNE_STATUS_INVALID_VALUE);
    CHECK_MSG(strstr(err, "GEMMTUNE_MATH='tf32': want fp32 or tf32x3"), "%s", err);
    setenv("GEMMTUNE_MATH", "tf32x3", 1);
    CHECK(gt_loader_winners(&opt, &set, NULL, err, sizeof err) == GEMMTUNE_SUCCESS && set.n == 2);
    int served = 0;
    for (int i = 0; i < set.n; ++i) served += !strcmp(set.rows[i].family, "test_split3");
    CHECK(served == 1);
    gt_loader_set_free(&set);
    opt.math = GEMMTUNE_MATH_FP32; /* the option overrides the environment */
    CHECK(gt_loader_winners(&opt, &set, NULL, err, sizeof err) == GEMMTUNE_SUCCESS && set.n == 2);
    for (int i = 0; i < set.n; ++i) CHECK(!strcmp(set.rows[i].family, "tile2d"));
    gt_loader_set_free(&set);
    opt.math = (gemmtune_math)7;
    CHECK(gt_loader_winners(&opt, &set, NULL, err, sizeof err) == GEMMTUNE_STATUS_INVALID_VALUE);
    if (keep) setenv("GEMMTUNE_MATH", keep, 1);
    else unsetenv("GEMMTUNE_MATH");
    free(keep);
    free(path);
}

/* An older database migrates with every winner FP32. */
GT_TEST(math_migration_makes_old_winners_fp32, GT_NEEDS_NONE)
{
    char *path = gt_tmp_path("v1math.db"), err[512];
    gt_db *db;
    CHECK(gt_fixture_v1_db(path) == 0);
    CHECK(gt_db_open(path, GT_DB_WRITE, &db, err, sizeof err) == 0);
    gt_db_close(db);
    CHECK(gt_fixture_sql_int(path, "SELECT count(*) FROM winners WHERE math = 'fp32'") == 1);
    CHECK(gt_fixture_sql_int(path, "SELECT count(*) FROM candidates WHERE math <> 'fp32'") == 0);
    free(path);
}

/* Export writes each winner's class; import refuses a row whose class is not its family's. */
GT_TEST(math_json_carries_and_checks_the_class, GT_NEEDS_NONE)
{
    char *path = gt_tmp_path("mathjson.db"), *other = gt_tmp_path("mathjson2.db"), err[512], *json = NULL;
    gt_db *db;
    CHECK(gt_fixture_db(path, 0, 0, 1.0) == 0);
    CHECK(gt_db_open(path, GT_DB_READ, &db, err, sizeof err) == 0);
    CHECK(gt_db_export_json(db, NULL, &json, err, sizeof err) == 0 && json);
    gt_db_close(db);
    if (!json) return;
    char *at = strstr(json, "\"math\":\t\"fp32\"");
    CHECK_MSG(at != NULL, "%.400s", json);
    int imported = 0;
    CHECK(gt_db_open(other, GT_DB_CREATE, &db, err, sizeof err) == 0);
    CHECK(gt_db_import_json(db, json, "ok.json", &imported, err, sizeof err) == 0 && imported > 0);
    if (at) memcpy(at + 9, "tf32", 4); /* the first row, a tile2d kernel, now claims class "tf32" */
    CHECK(gt_db_import_json(db, json, "bad.json", &imported, err, sizeof err) < 0);
    CHECK_MSG(strstr(err, "math"), "%s", err);
    gt_db_close(db);
    free(json);
    free(path);
    free(other);
}
