/* The vendor family (kernels/cublas.c) and its backend without a GPU: parameter checks, applicability, replay of a
 * stored algorithm across versions, its JSON round trip, the loader's choice of it; and the recorder's file.
 * GPU tests: tests/test_loader_gpu.c (loader_gpu_vendor_*, loader_gpu_records_untuned_calls). Run: gt_tests vendor */
#include "backend.h"
#include "backend_resolve.h"
#include "cublas_family.h"
#include "fixture.h"
#include "handle.h"
#include "harness.h"

#include <cublasLt.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static gt_params lt_params(int ver)
{
    gt_params p;
    memset(&p, 0, sizeof p);
    p.v[GT_CUBLAS_P_API] = GT_CUBLAS_API_LT;
    p.v[GT_CUBLAS_P_ALGO] = 6, p.v[GT_CUBLAS_P_TILE] = 20, p.v[GT_CUBLAS_P_SPLITK] = 1;
    p.v[GT_CUBLAS_P_WSKB] = 1024, p.v[GT_CUBLAS_P_VER] = ver;
    return p;
}

/* The vendor's family is the yardstick: it alone is marked vendor; every other family, ozaki with its products in
 * cuBLASLt too, counts as gemmtune's own in bench's "own" column and in gemmtune_runs_own_kernel. */
GT_TEST(vendor_family_alone_is_the_vendor, GT_NEEDS_NONE)
{
    int vendors = 0;
    for (int i = 0; i < gt_family_count(); ++i) {
        const gt_family *f = gt_family_at(i);
        vendors += f->vendor;
        CHECK_MSG(!f->vendor || !strcmp(f->name, "cublas"), "%s is marked vendor", f->name);
    }
    CHECK(vendors == 1 && gt_family_find("cublas")->vendor && !gt_family_find("ozaki")->vendor);
}

GT_TEST(vendor_family_checks_its_parameters, GT_NEEDS_NONE)
{
    const gt_family *f = gt_family_find("cublas");
    gt_limits l;
    char why[256], text[256], err[256];
    gt_limits_for_arch("sm_90", &l);
    CHECK(f && f->build == GT_BUILD_NONE && f->space == GT_SPACE_DEVICE && f->backend && !strcmp(f->backend, "cublas"));
    CHECK(gt_enumerate(f, &l, NULL, NULL) == 0); /* its candidates exist only on a GPU */
    gt_params p = lt_params(130000);
    CHECK_MSG(f->legal(&p, &l, why, sizeof why), "%s", why);
    gt_params_format(f, &p, text, sizeof text);
    CHECK_MSG(!strcmp(text, "API=1,ALGO=6,TILE=20,SPLITK=1,RED=0,SWIZZLE=0,CUSTOM=0,STAGES=0,INNER=0,CLUSTER=0,"
                            "WSKB=1024,VER=130000"), "%s", text);
    gt_params q;
    CHECK(gt_params_parse(f, text, &q, err, sizeof err) == 0 && !memcmp(&p, &q, sizeof p));
    gt_launch L;
    f->launch(&p, &(gt_shape){100, 100, 100, 0, 0}, GT_TEST_SMS, &L);
    CHECK(L.ws_bytes == 1024 * 1024 && L.splitk == 1);
    p.v[GT_CUBLAS_P_API] = 2;
    CHECK(!f->legal(&p, &l, why, sizeof why) && strstr(why, "API=2"));
    p = lt_params(0);
    CHECK(!f->legal(&p, &l, why, sizeof why) && strstr(why, "VER"));
    p = lt_params(130000);
    p.v[GT_CUBLAS_P_API] = GT_CUBLAS_API_SGEMM; /* cublasSgemm takes no algorithm */
    CHECK(!f->legal(&p, &l, why, sizeof why) && strstr(why, "ALGO must be 0"));
    p.v[GT_CUBLAS_P_TILE] = -3;
    CHECK(!f->legal(&p, &l, why, sizeof why) && strstr(why, "negative TILE"));
}

GT_TEST(vendor_family_is_applicable_where_its_heuristic_was_asked, GT_NEEDS_NONE)
{
    const gt_family *f = gt_family_find("cublas");
    gt_params lt = lt_params(130000), sg;
    const gt_family *df;
    gt_backend_default_params(&df, &sg);
    CHECK(df == f && sg.v[GT_CUBLAS_P_API] == GT_CUBLAS_API_SGEMM && sg.v[GT_CUBLAS_P_VER] > 0);
    gt_call aligned = {{100, 200, 300, 0, 0}, 300, 200, 200, 16, 16, 16}, odd = aligned;
    odd.align_b = 4;
    CHECK(f->applicable(&lt, &aligned) && !f->applicable(&lt, &odd));
    odd = aligned, odd.ldc = 201; /* the backend's plan asks cuBLASLt about leading dimensions */
    CHECK(f->applicable(&lt, &odd) && f->applicable(&sg, &odd));
}

GT_TEST(vendor_backend_replays_only_its_own_version, GT_NEEDS_NONE)
{
    const gt_backend *be = gt_backend_find("cublas");
    const gt_family *f = gt_family_find("cublas");
    char why[256], line[256];
    CHECK(be && !gt_backend_find("nosuch"));
    if (!be) return;
    const int ver = (int)cublasLtGetVersion();
    gt_params mine = lt_params(ver), old = lt_params(ver - 1);
    CHECK(be->replayable(f, &mine, why, sizeof why));
    CHECK(!be->replayable(f, &old, why, sizeof why) && strstr(why, "found with cuBLAS"));
    be->describe(f, &mine, line, sizeof line);
    CHECK_MSG(strstr(line, "cuBLASLt algorithm 6 (tile 20"), "%s", line);
}

static int asked_sgemm;
static void *resolve_none(const char *name) { return asked_sgemm |= !strcmp(name, "cublasSgemm_v2"), NULL; }
static void *resolve_global(const char *name) { return dlsym(RTLD_DEFAULT, name); }

/* The backend finds cuBLAS through a resolver when one is set (the preload's, which finds the program's own cuBLAS
 * wherever it was loaded): absent while the resolver finds nothing, there as soon as it does. */
/* Fake backends for gt_backend_ctx_of: open fails while fail_opens > 0, and the contexts count opens and closes. */
static int opens, closes, fail_opens;
static struct gt_backend_ctx *fake_ctx = (struct gt_backend_ctx *)&opens; /* any address: never dereferenced */
static int fake_open(gt_backend_ctx **out, char *err, size_t n)
{
    if (fail_opens > 0) return fail_opens--, snprintf(err, n, "no library"), -1;
    opens++, *out = fake_ctx;
    return 0;
}
static void fake_close(gt_backend_ctx *c) { closes += c == fake_ctx; }

/* The contexts a handle or a worker keeps: one per backend, opened once on first use, a failed open tried again,
 * a backend past the table's size refused, every opened one closed. */
GT_TEST(vendor_backend_contexts_one_per_backend, GT_NEEDS_NONE)
{
    gt_backend fake[GT_BACKEND_MAX + 1];
    for (int i = 0; i <= GT_BACKEND_MAX; ++i)
        fake[i] = (gt_backend){.name = "fake", .open = fake_open, .close = fake_close};
    gt_backend_ctxs c;
    memset(&c, 0, sizeof c);
    char err[128] = "";
    opens = closes = 0, fail_opens = 1;
    CHECK(gt_backend_ctx_of(&c, &fake[0], err, sizeof err) == NULL && strstr(err, "no library"));
    CHECK(gt_backend_ctx_of(&c, &fake[0], err, sizeof err) == fake_ctx && opens == 1); /* tried again */
    CHECK(gt_backend_ctx_of(&c, &fake[0], err, sizeof err) == fake_ctx && opens == 1); /* kept */
    for (int i = 1; i < GT_BACKEND_MAX; ++i) CHECK(gt_backend_ctx_of(&c, &fake[i], err, sizeof err) == fake_ctx);
    CHECK(opens == GT_BACKEND_MAX);
    CHECK(gt_backend_ctx_of(&c, &fake[GT_BACKEND_MAX], err, sizeof err) == NULL &&
          strstr(err, "more library backends"));
    gt_backend_ctxs_close(&c);
    CHECK(closes == GT_BACKEND_MAX && c.slot[0].be == NULL);
}

GT_TEST(vendor_backend_resolver, GT_NEEDS_NONE)
{
    CHECK(gt_backend_find("cublas") != NULL); /* this program links cuBLAS */
    gt_backend_cublas_resolver(resolve_none);
    CHECK(gt_backend_find("cublas") == NULL && asked_sgemm);
    const gt_family *f = NULL;
    gt_params p;
    gt_backend_default_params(&f, &p);
    CHECK(f && p.v[GT_CUBLAS_P_VER] == 1); /* no cuBLAS: no version either */
    gt_backend_cublas_resolver(resolve_global);
    CHECK(gt_backend_find("cublas") != NULL);
    gt_backend_default_params(&f, &p);
    CHECK(p.v[GT_CUBLAS_P_VER] == (int)cublasLtGetVersion());
    gt_backend_cublas_resolver(NULL);
    CHECK(gt_backend_find("cublas") != NULL);
}

/* A vendor winner goes through JSON and the loader's choice like any other row. */
GT_TEST(vendor_winner_round_trips_and_is_chosen, GT_NEEDS_NONE)
{
    char *db = gt_tmp_path(".db"), err[512], params[256], *json = NULL;
    const gt_family *f = gt_family_find("cublas");
    gt_params p = lt_params((int)cublasLtGetVersion());
    gt_params_format(f, &p, params, sizeof params);
    gt_db *h = NULL, *mem = NULL;
    gt_gpu_info gi = gt_fixture_gpu(0, 0);
    long long sweep;
    gt_shape s = {777, 1531, 2049, 0, 0};
    CHECK(gt_db_open(db, 1, &h, err, sizeof err) == 0 && gt_db_begin_sweep(h, &gi, "t", &sweep, err, sizeof err) == 0);
    CHECK(gt_db_set_baseline(h, sweep, &s, 0.2, err, sizeof err) == 0);
    CHECK(gt_db_set_winner(h, sweep, &s, "cublas", params, "0123456789abcdef", 0.19, 1, err, sizeof err) == 0);
    CHECK(gt_db_export_json(h, NULL, &json, err, sizeof err) == 0 && json && strstr(json, params));
    int imported = 0;
    CHECK(gt_db_open(":memory:", 1, &mem, err, sizeof err) == 0);
    CHECK_MSG(gt_db_import_json(mem, json, "t.json", &imported, err, sizeof err) == 0 && imported == 1, "%s", err);
    gt_winner_set set;
    CHECK(gt_loader_set_from_db(mem, GEMMTUNE_MATH_FP32, &set, err, sizeof err) == 0 && set.n == 1);
    gt_device_id d = {.lim = {0}};
    snprintf(d.name, sizeof d.name, "%s", gi.name);
    gt_limits_for_arch("sm_90", &d.lim);
    d.lim.sm_count = gi.sm_count;
    gt_call c = {s, 2049, 1531, 1531, 16, 16, 16};
    gt_serve_model m = {0.25, 0.03, 2};
    gt_choice ch = gt_loader_select(set.rows, set.n, &d, &c, GEMMTUNE_FALLBACK_CUBLAS, &m);
    CHECK(ch.rule == GT_RULE_EXACT && ch.family == f && !memcmp(&ch.params, &p, sizeof p));
    c.align_a = 4; /* the algorithm was not asked for this alignment: cuBLAS's own choice, never another guess */
    ch = gt_loader_select(set.rows, set.n, &d, &c, GEMMTUNE_FALLBACK_CUBLAS, &m);
    CHECK(ch.rule == GT_RULE_CUBLAS && ch.family == f && ch.params.v[GT_CUBLAS_P_API] == GT_CUBLAS_API_SGEMM);
    gt_loader_set_free(&set);
    gt_db_close(mem);
    gt_db_close(h);
    free(json);
    gt_fixture_rm(db);
    free(db);
}

/* The recorder merges into its file under a lock: counts add up, damaged lines are dropped, a line's fields (batch,
 * and one of a later version) are kept, exact calls never appear. Plans are made by hand: this needs no GPU. */
GT_TEST(vendor_recorder_writes_and_merges_counts, GT_NEEDS_NONE)
{
    static struct gemmtune_context h;
    static gt_plan p[3];
    char *path = gt_tmp_path(".calls"), err[256];
    memset(&h, 0, sizeof h);
    snprintf(h.record_path, sizeof h.record_path, "%s", path);
    const gt_shape shapes[3] = {{1000, 1000, 1000, 0, 0}, {7, 1000, 13, 1, 1}, {64, 64, 64, 0, 0}};
    const gt_rule rules[3] = {GT_RULE_CUBLAS, GT_RULE_REUSE, GT_RULE_EXACT};
    for (int i = 0; i < 3; ++i) {
        memset(&p[i], 0, sizeof p[i]);
        p[i].call.shape = shapes[i];
        p[i].choice.rule = rules[i];
        atomic_store(&p[i].calls, 10 * (i + 1));
        p[i].next = i ? &p[i - 1] : NULL;
    }
    atomic_store(&h.buckets[7], &p[2]);
    static const char before[] = "garbage line\n7x1000x13:tt 5\n5x6x7:nt 3 batch=4 future=x\n";
    CHECK(gt_fixture_write(path, before, sizeof before - 1) == 0);
    CHECK_MSG(gt_record_write(&h, err, sizeof err) == 0, "%s", err);
    CHECK_MSG(gt_record_write(&h, err, sizeof err) == 0, "%s", err);
    size_t n = 0;
    char *text = (char *)gt_fixture_slurp(path, &n);
    CHECK_MSG(text && strstr(text, "\n1000x1000x1000:nn 20\n") && strstr(text, "\n7x1000x13:tt 45\n") &&
              !strstr(text, "64x64x64") && !strstr(text, "garbage") && strstr(text, "--sizes @") &&
              strstr(text, "\n5x6x7:nt 3 batch=4 future=x\n"), "%s", text); /* fields carried through */
    free(text);
    gt_fixture_rm(path);
    free(path);
}
