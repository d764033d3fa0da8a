/* GPU tests of the runtime loader (make gpu-test, or build/gt_tests --gpu loader_gpu; each skips without a GPU):
 * every selection rule against cuBLAS FP32 (pedantic) on odd shapes, all layouts, ld > dim, beta 0 over NaN C, in
 * both argument orders; the database's cubin cache and JSON; graph capture; several threads and streams; and the
 * numbers: first-call latency (NVRTC / cubin cache / embedded cubin) and warm dispatch overhead. */
#include "backend.h"
#include "compile.h"
#include "db.h"
#include "device.h"
#include "fixture.h"
#include "harness.h"
#include "kernel.h"
#include "loader.h"
#include "toolkit.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define P_TILE2D "BM=128,BN=128,BK=8,TM=8,TN=8"

typedef struct {
    char name[256], arch[16];
    int major, minor, sms;
    gt_limits lim;
} gpu_id;

static int this_gpu(gpu_id *g)
{
    struct cudaDeviceProp p;
    if (cudaSetDevice(0) != cudaSuccess || cudaGetDeviceProperties(&p, 0) != cudaSuccess) return -1;
    memset(g, 0, sizeof *g);
    snprintf(g->name, sizeof g->name, "%.127s", p.name);
    g->major = p.major, g->minor = p.minor, g->sms = p.multiProcessorCount;
    snprintf(g->arch, sizeof g->arch, "sm_%d%d", p.major, p.minor);
    g->lim = gt_device_limits(&p);
    return 0;
}

/* The kernels the fixture tables use: tile2d, warptile with split-K, vec4; params and a cubin per layout. */
enum { NKERN = 3 };
static const char *kern_family[NKERN] = {"tile2d", "warptile", "vec4"};
static char kern_params[NKERN][256];
static gt_cubin kern_cubin[NKERN][4];

static int first_legal(const gt_family *f, const gt_params *p, void *ctx)
{
    char *out = ctx;
    if (strcmp(f->name, "warptile") || gt_param_get(f, p, "SPLITK", 1) > 1) {
        gt_params_format(f, p, out, 256);
        return 1;
    }
    return 0;
}

/* Compile once per process; returns 0 or -1 after a failed check. */
static int kernels_ready(const gpu_id *g)
{
    static int done;
    char err[512];
    if (done) return 0;
    snprintf(kern_params[0], 256, "%s", P_TILE2D);
    for (int i = 1; i < NKERN; ++i) {
        const gt_family *f = gt_family_find(kern_family[i]);
        CHECK_MSG(f && gt_enumerate(f, &g->lim, first_legal, kern_params[i]) > 0, "%s: no legal point", kern_family[i]);
        if (!f) return -1;
    }
    for (int i = 0; i < NKERN; ++i)
        for (int lay = 0; lay < 4; ++lay) {
            const gt_family *f = gt_family_find(kern_family[i]);
            gt_params p;
            CHECK(gt_params_parse(f, kern_params[i], &p, err, sizeof err) == 0);
            char *src = gt_render(f, &p, lay >> 1, lay & 1, 0, err, sizeof err);
            int rc = src ? gt_nvrtc_compile(src, g->arch, &kern_cubin[i][lay], err, sizeof err) : -1;
            free(src);
            CHECK_MSG(rc == 0, "%s %s: %s", kern_family[i], kern_params[i], err);
            if (rc) return -1;
        }
    for (int i = 0; i < NKERN; ++i) printf("    fixture kernel %d: %s %s\n", i, kern_family[i], kern_params[i]);
    done = 1;
    return 0;
}

static gemmtune_status cublas_ref(cublasHandle_t cb, const gt_problem *p, const float *A, const float *B, float *C)
{
    cublasOperation_t oa = p->ta ? CUBLAS_OP_T : CUBLAS_OP_N, ob = p->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasStatus_t s = p->colmajor
                           ? cublasSgemm(cb, oa, ob, p->m, p->n, p->k, &p->alpha, A, p->lda, B, p->ldb, &p->beta, C, p->ldc)
                           : cublasSgemm(cb, ob, oa, p->n, p->m, p->k, &p->alpha, B, p->ldb, A, p->lda, &p->beta, C, p->ldc);
    return s == CUBLAS_STATUS_SUCCESS ? GEMMTUNE_SUCCESS : GEMMTUNE_STATUS_CUBLAS_ERROR;
}

typedef struct {
    float *A, *B, *C0, *C, *R;       /* host */
    float *dA, *dB, *dC, *dR;        /* device */
} buffers;

/* Bytes of an operand ('A', 'B', 'C'). */
static size_t bytes(const gt_problem *p, char operand) { return gt_problem_elems(p, operand) * sizeof(float); }

static int buffers_alloc(const gt_problem *p, buffers *b)
{
    const size_t na = bytes(p, 'A'), nb = bytes(p, 'B'), nc = bytes(p, 'C');
    memset(b, 0, sizeof *b);
    b->A = malloc(na), b->B = malloc(nb), b->C0 = malloc(nc), b->C = malloc(nc), b->R = malloc(nc);
    return !b->A || !b->B || !b->C0 || !b->C || !b->R || cudaMalloc((void **)&b->dA, na) ||
                   cudaMalloc((void **)&b->dB, nb) || cudaMalloc((void **)&b->dC, nc) || cudaMalloc((void **)&b->dR, nc)
               ? -1
               : 0;
}

static void buffers_free(buffers *b)
{
    free(b->A), free(b->B), free(b->C0), free(b->C), free(b->R);
    cudaFree(b->dA), cudaFree(b->dB), cudaFree(b->dC), cudaFree(b->dR);
}

static int upload(const gt_problem *p, const buffers *b, cudaStream_t s)
{
    return cudaMemcpyAsync(b->dA, b->A, bytes(p, 'A'), cudaMemcpyHostToDevice, s) ||
           cudaMemcpyAsync(b->dB, b->B, bytes(p, 'B'), cudaMemcpyHostToDevice, s) ||
           cudaMemcpyAsync(b->dC, b->C0, bytes(p, 'C'), cudaMemcpyHostToDevice, s) ||
           cudaMemcpyAsync(b->dR, b->C0, bytes(p, 'C'), cudaMemcpyHostToDevice, s);
}

static int download(const gt_problem *p, const buffers *b, cudaStream_t s)
{
    return cudaMemcpyAsync(b->C, b->dC, bytes(p, 'C'), cudaMemcpyDeviceToHost, s) ||
           cudaMemcpyAsync(b->R, b->dR, bytes(p, 'C'), cudaMemcpyDeviceToHost, s) || cudaStreamSynchronize(s);
}

static gemmtune_status run(gemmtune_handle h, cudaStream_t s, const gt_problem *p, const buffers *b)
{
    return gemmtune_sgemm(h, s, (gemmtune_op)p->ta, (gemmtune_op)p->tb, p->m, p->n, p->k, p->alpha, b->dA, p->lda,
                          b->dB, p->ldb, p->beta, b->dC, p->ldc);
}

/* One full check on stream s: fresh inputs, gemmtune vs cuBLAS. Returns 1 when it passes (message printed if not);
 * *seconds gets the host time of the gemmtune_sgemm call when non-NULL. */
static int check(gemmtune_handle h, cublasHandle_t cb, cudaStream_t s, const gt_problem *p, unsigned *seed,
                 const char *label, double *seconds)
{
    buffers b;
    int ok = 0;
    if (buffers_alloc(p, &b)) {
        printf("    %s: allocation failed\n", label);
        buffers_free(&b);
        return 0;
    }
    gt_problem_fill(p, seed, b.A, b.B, b.C0);
    cublasSetStream(cb, s);
    gemmtune_status st = upload(p, &b, s) || cudaStreamSynchronize(s) ? GEMMTUNE_STATUS_CUDA_ERROR : GEMMTUNE_SUCCESS;
    double t0 = gt_now_s();
    if (st == GEMMTUNE_SUCCESS) st = run(h, s, p, &b);
    if (seconds) *seconds = gt_now_s() - t0;
    if (st == GEMMTUNE_SUCCESS) st = cublas_ref(cb, p, b.dA, b.dB, b.dR);
    if (st == GEMMTUNE_SUCCESS && download(p, &b, s)) st = GEMMTUNE_STATUS_CUDA_ERROR;
    if (st != GEMMTUNE_SUCCESS) {
        printf("    %s: %s (%s)\n", label, gemmtune_status_string(st), gemmtune_last_error());
    } else {
        gt_verdict v;
        char text[512];
        ok = gt_validate(p, b.A, b.B, b.C0, b.C, b.R, &v);
        gt_verdict_text(p, &v, text, sizeof text);
        if (!ok) printf("    %s: %s\n", label, text);
    }
    buffers_free(&b);
    return ok;
}

static const int shapes[][3] = {{1, 1, 1}, {17, 33, 65}, {127, 129, 31}, {64, 64, 64}, {300, 200, 513}, {5, 700, 3}};
enum { NSHAPES = sizeof shapes / sizeof shapes[0] };

/* A side of a stored neighbour: scaled, but a skinny side kept (a skinny call reuses only a row with its own side). */
static int scaled_side(int x, int scale) { return x > GT_LOADER_SKINNY_SIDE ? x * scale : x; }

/* Table rows for this GPU for every test shape and layout, in row-major terms and, for column-major calls, their
 * mapped row-major shapes. scale multiplies the stored shape's K and its sides past GT_LOADER_SKINNY_SIDE (reuse);
 * ratio is the stored speed over cuBLAS. */
static int make_table(const gpu_id *g, const char *name, int scale, double ratio, gemmtune_winner_row *rows)
{
    static const char *lay[4] = {"nn", "nt", "tn", "tt"};
    int n = 0;
    for (int s = 0; s < NSHAPES; ++s)
        for (int l = 0; l < 4; ++l)
            for (int mapped = 0; mapped < 2; ++mapped) {
                const int kf = s % NKERN, ml = mapped ? (l & 1) * 2 + (l >> 1) : l;
                rows[n++] = (gemmtune_winner_row){name, g->major, g->minor, g->sms,
                                                  scaled_side(mapped ? shapes[s][1] : shapes[s][0], scale),
                                                  scaled_side(mapped ? shapes[s][0] : shapes[s][1], scale),
                                                  shapes[s][2] * scale,
                                                  lay[ml], kern_family[kf], kern_params[kf], 1.0, ratio,
                                                  kern_cubin[kf][ml].data, kern_cubin[kf][ml].size, g->arch};
            }
    return n;
}

/* Every test shape, layout, both argument orders, padded or not, beta 0 (NaN C) or not, through handle h, whose
 * explain line must start with rule. Returns the number of failures. */
static int sweep_problems(gemmtune_handle h, int colmajor, cublasHandle_t cb, const char *rule, unsigned *seed)
{
    int bad = 0, n = 0;
    char line[512], label[64];
    for (int s = 0; s < NSHAPES; ++s)
        for (int l = 0; l < 4; ++l, ++n) {
            gt_problem p = gt_problem_make(colmajor, l >> 1, l & 1, shapes[s][0], shapes[s][1], shapes[s][2],
                                           n % 3 ? 3 : 0, n % 2 ? -0.5f : 1.3f, n % 2 ? 0.0f : 0.7f);
            gemmtune_status st = gemmtune_explain(h, (gemmtune_op)p.ta, (gemmtune_op)p.tb, p.m, p.n, p.k, p.lda,
                                                  p.ldb, p.ldc, line, sizeof line);
            snprintf(label, sizeof label, "%s %s", rule, colmajor ? "col-major" : "row-major");
            if (st != GEMMTUNE_SUCCESS || strncmp(line, rule, strlen(rule))) {
                printf("    %s %dx%dx%d: explain says '%s'\n", label, p.m, p.n, p.k, line);
                bad++;
            }
            bad += !check(h, cb, NULL, &p, seed, label, NULL);
        }
    return bad;
}

static cublasHandle_t pedantic_cublas(void)
{
    cublasHandle_t cb = NULL;
    if (cublasCreate(&cb) != CUBLAS_STATUS_SUCCESS) return NULL;
    cublasSetMathMode(cb, CUBLAS_PEDANTIC_MATH);
    return cb;
}

GT_TEST(loader_gpu_every_rule_matches_cublas, GT_NEEDS_GPU)
{
    gpu_id g;
    CHECK(this_gpu(&g) == 0);
    if (kernels_ready(&g)) return;
    cublasHandle_t cb = pedantic_cublas();
    CHECK(cb != NULL);
    static gemmtune_winner_row exact[NSHAPES * 8], near[NSHAPES * 8];
    const int ne = make_table(&g, g.name, 1, 1.0, exact), nn = make_table(&g, g.name, 2, 100.0, near);
    static const struct { const char *rule; int table; gemmtune_fallback fb; } paths[] = {
        {"exact", 0, GEMMTUNE_FALLBACK_NONE}, {"reuse", 1, GEMMTUNE_FALLBACK_NONE},
        {"default", 3, GEMMTUNE_FALLBACK_DEFAULT}, {"cublas", 3, GEMMTUNE_FALLBACK_CUBLAS}};
    setenv("GEMMTUNE_SERVE_MODEL", "decay=0,margin=0,dmax=4", 1); /* the scaled shapes are 1 to 3 away: reuse them */
    unsigned seed = 1234;
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; ++i)
        for (int colmajor = 0; colmajor < 2; ++colmajor) {
            gemmtune_options o;
            gemmtune_options_init(&o);
            o.fallback = paths[i].fb;
            o.column_major = colmajor;
            const gemmtune_winner_row *rows = paths[i].table == 0 ? exact : near;
            const int nrows = paths[i].table == 0 ? ne : paths[i].table == 1 ? nn : 0;
            gemmtune_handle h = NULL;
            gemmtune_status st = gemmtune_create_from_table(&h, rows, nrows, &o);
            CHECK_MSG(st == GEMMTUNE_SUCCESS, "%s: %s", gemmtune_status_string(st), gemmtune_last_error());
            if (st) continue;
            int bad = sweep_problems(h, colmajor, cb, paths[i].rule, &seed);
            gt_loader_counters c;
            gt_loader_counters_get(h, &c);
            printf("    %-8s %s: %d checks, %d failed; %d plans, %d kernels (%d embedded, %d compiled), %d workspaces\n",
                   paths[i].rule, colmajor ? "col-major" : "row-major", NSHAPES * 4, bad, c.plans, c.kernels,
                   c.embedded, c.compiled, c.workspaces);
            CHECK_MSG(bad == 0, "%s: %d failures", paths[i].rule, bad);
            CHECK(c.plans == NSHAPES * 4);
            if (paths[i].table < 2) CHECK_MSG(c.compiled == 0 && c.embedded > 0, "table kernels were compiled");
            if (paths[i].table < 2) CHECK_MSG(c.workspaces > 0, "no split-K plan ran");
            if (paths[i].fb == GEMMTUNE_FALLBACK_DEFAULT) CHECK(c.kernels == 4 && c.compiled == 4);
            if (paths[i].fb == GEMMTUNE_FALLBACK_CUBLAS) CHECK(c.kernels == 0);
            gemmtune_destroy(h);
        }
    unsetenv("GEMMTUNE_SERVE_MODEL");
    cublasDestroy(cb);
}

/* A database with one winner for this GPU: 256^3 nn -> tile2d P_TILE2D. Returns the malloc'd path or NULL. */
static char *gpu_fixture_db(const gpu_id *g)
{
    char *path = gt_tmp_path(".db");
    gt_gpu_info gi;
    memset(&gi, 0, sizeof gi);
    snprintf(gi.name, sizeof gi.name, "%.127s", g->name);
    gi.cc_major = g->major, gi.cc_minor = g->minor, gi.sm_count = g->sms;
    snprintf(gi.uuid, sizeof gi.uuid, "GPU-gemmtune-loader-test");
    gt_shape s = {256, 256, 256, 0, 0};
    if (gt_fixture_winner(path, &gi, &s, "tile2d", P_TILE2D, NULL, 1.0) == 0) return path; /* its real id */
    CHECK_MSG(0, "fixture database %s", path);
    free(path);
    return NULL;
}

/* First call of a fresh handle (select + load + launch), timed on the host; checked against cuBLAS. */
static double first_call(const gemmtune_options *o, const gemmtune_winner_row *rows, int nrows, cublasHandle_t cb,
                         const char *expect, gt_loader_counters *c)
{
    gemmtune_handle h = NULL;
    gemmtune_status st = rows ? gemmtune_create_from_table(&h, rows, nrows, o) : gemmtune_create(&h, o);
    CHECK_MSG(st == GEMMTUNE_SUCCESS, "%s: %s", gemmtune_status_string(st), gemmtune_last_error());
    if (st) return -1;
    char line[512];
    gemmtune_explain(h, GEMMTUNE_OP_N, GEMMTUNE_OP_N, 256, 256, 256, 256, 256, 256, line, sizeof line);
    CHECK_MSG(!strncmp(line, expect, strlen(expect)), "explain: %s", line);
    gt_problem p = gt_problem_make(0, 0, 0, 256, 256, 256, 0, 1.0f, 0.0f);
    unsigned seed = 99;
    double t = -1;
    CHECK(check(h, cb, NULL, &p, &seed, expect, &t));
    gt_loader_counters_get(h, c);
    gemmtune_destroy(h);
    return t;
}

GT_TEST(loader_gpu_db_cache_json_and_first_call_latency, GT_NEEDS_GPU)
{
    gpu_id g;
    CHECK(this_gpu(&g) == 0);
    if (kernels_ready(&g)) return;
    cublasHandle_t cb = pedantic_cublas();
    char *db = gpu_fixture_db(&g);
    if (!db || !cb) return;
    {   /* a garbage cubin under the winner's key, MAC'd by another user (issue 25 item 4): never loaded, compiled */
        char err[512], id[17];
        const gt_family *f = gt_family_find("tile2d");
        gt_params p;
        gt_db *h = NULL;
        CHECK(gt_params_parse(f, P_TILE2D, &p, err, sizeof err) == 0 &&
              gt_kernel_id(f, &p, 0, 0, 0, id, NULL, err, sizeof err) == 0);
        CHECK(gt_db_open(db, GT_DB_WRITE, &h, err, sizeof err) == 0);
        CHECK(h && gt_db_cubin_put(h, id, g.arch, gt_nvrtc_version(), gt_nvrtc_options(),
                                   (const unsigned char *)"\x7f" "ELF garbage", 12, 32, 0,
                                   "0000000000000000000000000000000000000000000000000000000000000000", err,
                                   sizeof err) == 0);
        gt_db_close(h);
    }
    gemmtune_options o;
    gemmtune_options_init(&o);
    o.db_path = db;
    gt_loader_counters c1, c2, c3;
    const double t_nvrtc = first_call(&o, NULL, 0, cb, "exact", &c1); /* compiled: the foreign cubin is a miss */
    CHECK_MSG(c1.compiled == 1 && c1.cache_hits == 0, "cold: %d compiled, %d cache hits", c1.compiled, c1.cache_hits);
    const double t_cache = first_call(&o, NULL, 0, cb, "exact", &c2);
    CHECK_MSG(c2.compiled == 0 && c2.cache_hits == 1, "warm cache: %d compiled, %d cache hits (the row replaced)",
              c2.compiled, c2.cache_hits);
    gemmtune_winner_row row = {g.name, g.major, g.minor, g.sms, 256, 256, 256, "nn", "tile2d", P_TILE2D, 1, 1,
                               kern_cubin[0][0].data, kern_cubin[0][0].size, g.arch};
    const double t_embed = first_call(&o, &row, 1, cb, "exact", &c3);
    CHECK(c3.embedded == 1 && c3.compiled == 0);
    printf("    first call 256^3 nn (select + load + launch): NVRTC %.1f ms, cubin cache %.1f ms, embedded cubin "
           "%.1f ms\n", t_nvrtc * 1e3, t_cache * 1e3, t_embed * 1e3);
    CHECK(t_cache < t_nvrtc && t_embed < t_nvrtc);
    {
        char err[512], *json = NULL, *jpath = gt_tmp_path(".json");
        gt_db *h = NULL;
        CHECK(gt_db_open(db, 0, &h, err, sizeof err) == 0 && gt_db_export_json(h, NULL, &json, err, sizeof err) == 0);
        if (h) gt_db_close(h);
        FILE *f = fopen(jpath, "w");
        if (f && json) fputs(json, f);
        if (f) fclose(f);
        o.db_path = NULL, o.json_path = jpath;
        first_call(&o, NULL, 0, cb, "exact", &c1);
        remove(jpath);
        free(jpath), free(json);
    }
    remove(db);
    free(db);
    cublasDestroy(cb);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Host time per enqueue over batches of 100 (synchronised between batches so the queue never fills). */
enum { BATCH = 100, ROUNDS = 41 };

GT_TEST(loader_gpu_warm_dispatch_overhead, GT_NEEDS_GPU)
{
    gpu_id g;
    CHECK(this_gpu(&g) == 0);
    if (kernels_ready(&g)) return;
    for (int kf = 0; kf < 2; ++kf) { /* tile2d, and warptile with split-K (workspace lookup too) */
        gemmtune_winner_row row = {g.name, g.major, g.minor, g.sms, 64, 64, 64, "nn", kern_family[kf], kern_params[kf],
                                   1, 1, kern_cubin[kf][0].data, kern_cubin[kf][0].size, g.arch};
        gemmtune_handle h = NULL;
        CHECK(gemmtune_create_from_table(&h, &row, 1, NULL) == GEMMTUNE_SUCCESS);
        if (!h) return;
        gt_problem p = gt_problem_make(0, 0, 0, 64, 64, 64, 0, 1.0f, 0.0f);
        buffers b;
        CHECK(buffers_alloc(&p, &b) == 0);
        unsigned seed = 5;
        gt_problem_fill(&p, &seed, b.A, b.B, b.C0);
        upload(&p, &b, NULL);
        CHECK(run(h, NULL, &p, &b) == GEMMTUNE_SUCCESS); /* the cold call */
        gt_loader_counters before, after;
        gt_loader_counters_get(h, &before);
        /* the same kernel launched directly */
        const gt_family *f = gt_family_find(kern_family[kf]);
        gt_params prm;
        char err[512];
        gt_params_parse(f, kern_params[kf], &prm, err, sizeof err);
        gt_launch L;
        f->launch(&prm, &(gt_shape){64, 64, 64, 0, 0}, GT_TEST_SMS, &L);
        gt_kernel *k = NULL;
        CHECK(gt_kernel_load(kern_cubin[kf][0].data, kern_cubin[kf][0].size, L.smem, f, &prm, &k, err, sizeof err) ==
              0);
        float *ws = NULL;
        if (L.ws_bytes) cudaMalloc((void **)&ws, L.ws_bytes);
        gt_args a = {.m = 64, .n = 64, .k = 64, .alpha = 1, .beta = 0, .A = b.dA, .B = b.dB, .C = b.dC, .lda = 64,
                     .ldb = 64, .ldc = 64, .ws = ws};
        double direct[ROUNDS], loader[ROUNDS];
        int fails = 0;
        for (int r = 0; r < ROUNDS && k; ++r) {
            double t0 = gt_now_s();
            for (int i = 0; i < BATCH; ++i) fails += gt_kernel_launch(k, &L, NULL, &a, err, sizeof err) != 0;
            direct[r] = (gt_now_s() - t0) / BATCH;
            cudaDeviceSynchronize();
            t0 = gt_now_s();
            for (int i = 0; i < BATCH; ++i) fails += run(h, NULL, &p, &b) != GEMMTUNE_SUCCESS;
            loader[r] = (gt_now_s() - t0) / BATCH;
            cudaDeviceSynchronize();
        }
        gt_loader_counters_get(h, &after);
        qsort(direct, ROUNDS, sizeof(double), cmp_double);
        qsort(loader, ROUNDS, sizeof(double), cmp_double);
        const double d = direct[ROUNDS / 2] * 1e6, l = loader[ROUNDS / 2] * 1e6;
        printf("    warm dispatch, %s 64^3 nn (median of %d x %d enqueues): gt_kernel_launch %.2f us, gemmtune_sgemm "
               "%.2f us, overhead %.2f us/call\n", kern_family[kf], ROUNDS, BATCH, d, l, l - d);
        CHECK(fails == 0);
        CHECK_MSG(after.plans == before.plans && after.kernels == before.kernels && after.workspaces == before.workspaces,
                  "the warm path made plans, kernels or workspaces");
        CHECK_MSG(l - d < 20.0, "overhead %.2f us per call", l - d);
        if (k) gt_kernel_unload(k);
        cudaFree(ws);
        buffers_free(&b);
        gemmtune_destroy(h);
    }
}

GT_TEST(loader_gpu_graph_capture, GT_NEEDS_GPU)
{
    gpu_id g;
    CHECK(this_gpu(&g) == 0);
    if (kernels_ready(&g)) return;
    cublasHandle_t cb = pedantic_cublas();
    static gemmtune_winner_row rows[NSHAPES * 8];
    const int n = make_table(&g, g.name, 1, 1.0, rows);
    gemmtune_handle h = NULL;
    CHECK(gemmtune_create_from_table(&h, rows, n, NULL) == GEMMTUNE_SUCCESS);
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    if (!h || !cb) return;
    for (int si = 0; si < NSHAPES; ++si) { /* every kernel kind, split-K included */
        gt_problem p = gt_problem_make(0, 0, 1, shapes[si][0], shapes[si][1], shapes[si][2], 2, 1.0f,
                                       si % 2 ? 0.0f : 0.5f);
        buffers b;
        unsigned seed = 77 + si;
        CHECK(buffers_alloc(&p, &b) == 0);
        gt_problem_fill(&p, &seed, b.A, b.B, b.C0);
        upload(&p, &b, s);
        CHECK(run(h, s, &p, &b) == GEMMTUNE_SUCCESS); /* prepares plan and workspace outside capture */
        cudaStreamSynchronize(s);
        gt_problem_fill(&p, &seed, b.A, b.B, b.C0); /* fresh inputs for the graph's run */
        upload(&p, &b, s);
        cudaStreamSynchronize(s);
        cudaGraph_t graph = NULL;
        cudaGraphExec_t exec = NULL;
        CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
        gemmtune_status st = run(h, s, &p, &b);
        CHECK(cudaStreamEndCapture(s, &graph) == cudaSuccess && st == GEMMTUNE_SUCCESS);
        CHECK(graph && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess);
        CHECK(exec && cudaGraphLaunch(exec, s) == cudaSuccess);
        cublasSetStream(cb, s);
        CHECK(cublas_ref(cb, &p, b.dA, b.dB, b.dR) == GEMMTUNE_SUCCESS);
        CHECK(download(&p, &b, s) == 0);
        gt_verdict v;
        char text[512];
        const int ok = gt_validate(&p, b.A, b.B, b.C0, b.C, b.R, &v);
        gt_verdict_text(&p, &v, text, sizeof text);
        CHECK_MSG(ok, "from a graph: %s", text);
        if (exec) cudaGraphExecDestroy(exec);
        if (graph) cudaGraphDestroy(graph);
        buffers_free(&b);
    }
    /* a call never made before, inside capture: refused without breaking the capture */
    gt_problem p = gt_problem_make(0, 0, 0, 77, 55, 33, 0, 1.0f, 0.0f);
    buffers b;
    CHECK(buffers_alloc(&p, &b) == 0);
    cudaGraph_t graph = NULL;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) == cudaSuccess);
    CHECK(run(h, s, &p, &b) == GEMMTUNE_STATUS_NOT_PREPARED);
    CHECK(cudaStreamEndCapture(s, &graph) == cudaSuccess);
    if (graph) cudaGraphDestroy(graph);
    CHECK(run(h, s, &p, &b) == GEMMTUNE_SUCCESS && cudaStreamSynchronize(s) == cudaSuccess);
    buffers_free(&b);
    cudaStreamDestroy(s);
    gemmtune_destroy(h);
    cublasDestroy(cb);
}

typedef struct {
    gemmtune_handle h;
    int id;
    atomic_int *bad;
} thread_arg;

/* Each thread: its own stream (thread 3: the per-thread default stream) and cuBLAS handle, the shapes in its own
 * order, twice, with fresh inputs each time. */
static void *worker(void *v)
{
    thread_arg *t = v;
    cudaSetDevice(0);
    cudaStream_t s = cudaStreamPerThread;
    if (t->id != 3) cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cublasHandle_t cb = pedantic_cublas();
    unsigned seed = 1000u * (unsigned)t->id;
    char label[32];
    snprintf(label, sizeof label, "thread %d", t->id);
    for (int round = 0; round < 2 * NSHAPES * 4; ++round) {
        const int i = (round * 7 + t->id * 5) % (NSHAPES * 4), si = i / 4, l = i % 4;
        gt_problem p = gt_problem_make(0, l >> 1, l & 1, shapes[si][0], shapes[si][1], shapes[si][2], round % 2,
                                       1.0f, round % 3 ? 0.0f : -1.5f);
        if (!cb || !check(t->h, cb, s, &p, &seed, label, NULL)) atomic_fetch_add(t->bad, 1);
    }
    if (cb) cublasDestroy(cb);
    if (t->id != 3) cudaStreamDestroy(s);
    return NULL;
}

GT_TEST(loader_gpu_threads_and_streams, GT_NEEDS_GPU)
{
    gpu_id g;
    CHECK(this_gpu(&g) == 0);
    if (kernels_ready(&g)) return;
    static gemmtune_winner_row rows[NSHAPES * 8];
    const int n = make_table(&g, g.name, 1, 1.0, rows);
    gemmtune_handle h = NULL;
    CHECK(gemmtune_create_from_table(&h, rows, n, NULL) == GEMMTUNE_SUCCESS);
    if (!h) return;
    atomic_int bad = 0;
    pthread_t th[4];
    thread_arg args[4];
    for (int i = 0; i < 4; ++i) {
        args[i] = (thread_arg){h, i, &bad};
        pthread_create(&th[i], NULL, worker, &args[i]);
    }
    for (int i = 0; i < 4; ++i) pthread_join(th[i], NULL);
    gt_loader_counters c;
    gt_loader_counters_get(h, &c);
    printf("    4 threads x %d calls: %d failed; %d plans, %d kernels, %d workspaces\n", 2 * NSHAPES * 4,
           atomic_load(&bad), c.plans, c.kernels, c.workspaces);
    CHECK(atomic_load(&bad) == 0);
    CHECK_MSG(c.plans <= NSHAPES * 4 * 2, "%d plans: a call signature planned twice", c.plans); /* ld pads 0/1 */
    CHECK_MSG(c.workspaces >= 4, "%d workspaces for 4 streams running split-K", c.workspaces);
    gemmtune_destroy(h);
}

/* ---- the vendor family, k = 0, and recording ---- */

#include "cli.h"
#include "fixture.h"
#include "tune.h"

#include <cublasLt.h>

/* A sweep of the vendor family alone on two odd shapes in two layouts: its winners are served exactly, and give
 * cuBLAS's results. */
GT_TEST(loader_gpu_vendor_winners_are_tuned_and_served, GT_NEEDS_GPU)
{
    char *db = gt_tmp_path(".db"), err[512];
    const char *fams[1] = {"cublas"};
    int gpus[1] = {0};
    gt_shape tuned[2] = {{300, 200, 513, 0, 0}, {127, 129, 131, 1, 0}};
    gt_tune_opts o;
    gt_tune_summary s;
    memset(&o, 0, sizeof o);
    gt_tune_defaults(&o);
    o.db_path = db, o.gpus = gpus, o.ngpus = 1, o.shapes = tuned, o.nshapes = 2, o.shape_layouts = 1;
    o.families = fams, o.nfamilies = 1, o.reps = 3, o.topk = 3, o.final_reps = 5, o.command = "vendor test";
    CHECK_MSG(gt_tune_run(&o, &s, err, sizeof err) == 0, "%s", err);
    CHECK(s.nshapes == 2);
    for (int i = 0; i < s.nshapes; ++i) {
        printf("    %dx%dx%d %s: %d trials, winner %s %s, %.4f ms, cuBLAS %.4f ms\n", s.shapes[i].shape.m,
               s.shapes[i].shape.n, s.shapes[i].shape.k, gt_layout_name(s.shapes[i].shape.ta, s.shapes[i].shape.tb),
               s.shapes[i].trials, s.shapes[i].family, s.shapes[i].params, s.shapes[i].median_ms, s.shapes[i].cublas_ms);
        CHECK(!strcmp(s.shapes[i].family, "cublas") && s.shapes[i].trials >= 2 && s.shapes[i].failed == 0);
    }
    gt_tune_summary_free(&s);
    cublasHandle_t cb = pedantic_cublas();
    gemmtune_options opt;
    gemmtune_options_init(&opt);
    opt.db_path = db;
    unsigned seed = 5;
    for (int colmajor = 0; colmajor < 2; ++colmajor) {
        opt.column_major = colmajor;
        gemmtune_handle h = NULL;
        CHECK(gemmtune_create(&h, &opt) == GEMMTUNE_SUCCESS);
        for (int i = 0; h && i < 2; ++i) {
            /* the stored row-major shape, asked in this argument order */
            const gt_shape *t = &tuned[i];
            gt_problem p = colmajor ? gt_problem_make(1, t->tb, t->ta, t->n, t->m, t->k, 0, 1.5f, 0.0f)
                                 : gt_problem_make(0, t->ta, t->tb, t->m, t->n, t->k, 0, 1.5f, 0.0f);
            char line[512];
            gemmtune_explain(h, (gemmtune_op)p.ta, (gemmtune_op)p.tb, p.m, p.n, p.k, p.lda, p.ldb, p.ldc, line,
                             sizeof line);
            CHECK_MSG(!strncmp(line, "exact: cu", 9), "%s", line);
            CHECK(check(h, cb, NULL, &p, &seed, "vendor exact", NULL));
            p.beta = 0.5f, p.ldc += 3; /* padded C, beta != 0: the same plan family, another call signature */
            CHECK(check(h, cb, NULL, &p, &seed, "vendor exact, padded", NULL));
        }
        gemmtune_destroy(h);
    }
    cublasDestroy(cb);
    gt_fixture_rm(db);
    free(db);
}

/* A family of the FP32-accurate class tuned alone on shapes (its FP64 validation in the sweep), then served to
 * handles that ask for math tf32x3, every call checked against cuBLAS FP32 at the FP32 tolerance (padded ld,
 * alpha, beta 0 over NaN C and beta != 0), in both argument orders. A handle of the default math never serves it.
 * A shape whose candidates are all refused against FP64 has no winner: then nothing is served there; with
 * all_pass, no candidate may be refused. */
static void served_to_handles_that_ask(const char *family, gt_shape *tuned, int ntuned, int all_pass, unsigned seed)
{
    char *db = gt_tmp_path(".db"), err[512];
    const char *fams[1] = {family};
    int gpus[1] = {0};
    gt_tune_opts o;
    gt_tune_summary s;
    memset(&o, 0, sizeof o);
    gt_tune_defaults(&o);
    o.db_path = db, o.gpus = gpus, o.ngpus = 1, o.shapes = tuned, o.nshapes = ntuned, o.shape_layouts = 1;
    o.families = fams, o.nfamilies = 1, o.reps = 3, o.topk = 2, o.final_reps = 5, o.command = "served class test";
    CHECK_MSG(gt_tune_run(&o, &s, err, sizeof err) == 0, "%s", err);
    int served = 0;
    for (int i = 0; i < s.nshapes; ++i) {
        const int won = s.shapes[i].family[0] != 0 && !strcmp(s.shapes[i].family, family);
        printf("    %dx%dx%d %s: %d trials, %d failed, winner %s %s\n", s.shapes[i].shape.m, s.shapes[i].shape.n,
               s.shapes[i].shape.k, gt_layout_name(s.shapes[i].shape.ta, s.shapes[i].shape.tb), s.shapes[i].trials,
               s.shapes[i].failed, won ? s.shapes[i].family : "(none: refused against FP64)",
               won ? s.shapes[i].params : "");
        served += won;
        CHECK(!all_pass || (won && s.shapes[i].failed == 0));
    }
    CHECK_MSG(served > 0, "no %s winner to serve", family);
    cublasHandle_t cb = pedantic_cublas();
    gemmtune_options opt;
    gemmtune_options_init(&opt);
    opt.db_path = db;
    int calls = 0, bad = 0, own = 0;
    void *any = NULL; /* operands for gemmtune_runs_own_kernel, which reads their alignment only */
    CHECK(cudaMalloc(&any, 256) == cudaSuccess);
    for (int colmajor = 0; colmajor < 2; ++colmajor)
        for (int math = GEMMTUNE_MATH_FP32; math <= GEMMTUNE_MATH_TF32X3; ++math) {
            opt.column_major = colmajor, opt.math = (gemmtune_math)math;
            gemmtune_handle h = NULL;
            CHECK(gemmtune_create(&h, &opt) == GEMMTUNE_SUCCESS);
            for (int i = 0; h && i < s.nshapes; ++i) {
                const gt_shape *t = &s.shapes[i].shape;
                for (int v = 0; v < 3; ++v) { /* plain, beta 0 over NaN; padded with beta 0.5; alpha -2 */
                    gt_problem p = colmajor ? gt_problem_make(1, t->tb, t->ta, t->n, t->m, t->k, v ? 3 : 0,
                                                              v == 2 ? -2.0f : 1.5f, v == 1 ? 0.5f : 0.0f)
                                            : gt_problem_make(0, t->ta, t->tb, t->m, t->n, t->k, v ? 3 : 0,
                                                              v == 2 ? -2.0f : 1.5f, v == 1 ? 0.5f : 0.0f);
                    char line[512];
                    gemmtune_explain(h, (gemmtune_op)p.ta, (gemmtune_op)p.tb, p.m, p.n, p.k, p.lda, p.ldb, p.ldc,
                                     line, sizeof line);
                    const int names = strstr(line, family) != NULL;
                    CHECK_MSG(math == GEMMTUNE_MATH_FP32 ? !names : names || strcmp(s.shapes[i].family, family),
                              "math %d: %s", math, line);
                    if (math == GEMMTUNE_MATH_TF32X3 && names) { /* served, or refused as slower than cuBLAS */
                        const int exact = !strncmp(line, "exact:", 6);
                        calls += exact;
                        own += exact && gemmtune_runs_own_kernel(h, NULL, (gemmtune_op)p.ta, (gemmtune_op)p.tb, p.m,
                                                                 p.n, p.k, any, p.lda, any, p.ldb, any, p.ldc) == 1;
                        bad += !check(h, cb, NULL, &p, &seed, "served", NULL);
                    }
                }
            }
            gemmtune_destroy(h);
        }
    printf("    %d served %s calls checked against cuBLAS FP32, %d mismatches\n", calls, family, bad);
    CHECK(calls > 0 && bad == 0);
    CHECK_MSG(own == calls, "%d of %d served %s calls said to run gemmtune's own kernel (the drop-in forwards the rest "
              "of its cuBLASLt calls with a bias)", own, calls, family);
    cudaFree(any);
    gt_tune_summary_free(&s);
    cublasDestroy(cb);
    gt_fixture_rm(db);
    free(db);
}

/* Issue 16's serving bar: tf32x3wg winners (sm_90 only). */
GT_TEST(loader_gpu_tf32x3_winners_are_served_to_handles_that_ask, GT_NEEDS_GPU)
{
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess || prop.major != 9 || prop.minor != 0) {
        gt_skip("no sm_90 GPU for family tf32x3wg");
        return;
    }
    /* the last is refused against FP64 on an H100 (SGEMM is the more accurate there): then nothing is served */
    gt_shape tuned[3] = {{1024, 1024, 1024, 0, 0}, {2048, 1024, 2048, 1, 0}, {512, 768, 4096, 1, 1}};
    served_to_handles_that_ask("tf32x3wg", tuned, 3, 0, 11);
}

/* The INT8 route (family ozaki, any GPU of sm_75 on), every layout. Its error is relative to each row's and
 * column's norm, so against FP64 it is far below SGEMM's on long sums and may exceed it on short ones with wide
 * inputs (the last shape, where SGEMM rounds only 131 times): then nothing is served there. */
GT_TEST(loader_gpu_ozaki_winners_are_served_to_handles_that_ask, GT_NEEDS_GPU)
{
    gt_shape tuned[5] = {{1, 1, 1, 0, 0}, {7, 127, 1025, 1, 0}, {777, 1531, 2049, 0, 1}, {513, 257, 4099, 1, 1},
                         {127, 129, 131, 0, 0}};
    served_to_handles_that_ask("ozaki", tuned, 5, 0, 13);
}

/* A stored cuBLASLt algorithm this cuBLAS cannot replay (another version; an id it does not have) falls back to
 * cuBLAS's own choice; explain says so, and the results stay right. */
GT_TEST(loader_gpu_unusable_vendor_algorithm_falls_back, GT_NEEDS_GPU)
{
    gpu_id g;
    CHECK(this_gpu(&g) == 0);
    cublasHandle_t cb = pedantic_cublas();
    gemmtune_winner_row rows[2] = {
        {g.name, g.major, g.minor, g.sms, 200, 300, 64, "nn", "cublas",
         "API=1,ALGO=6,TILE=20,SPLITK=1,RED=0,SWIZZLE=0,CUSTOM=0,STAGES=0,INNER=0,CLUSTER=0,WSKB=0,VER=1", 1, 1,
         NULL, 0, NULL},
        {g.name, g.major, g.minor, g.sms, 300, 200, 64, "nn", "cublas", "", 1, 1, NULL, 0, NULL}};
    char bogus[256];
    snprintf(bogus, sizeof bogus, "API=1,ALGO=999999,TILE=20,SPLITK=1,RED=0,SWIZZLE=0,CUSTOM=0,STAGES=0,INNER=0,"
             "CLUSTER=0,WSKB=0,VER=%d", (int)cublasLtGetVersion());
    rows[1].params = bogus;
    gemmtune_handle h = NULL;
    CHECK(gemmtune_create_from_table(&h, rows, 2, NULL) == GEMMTUNE_SUCCESS);
    unsigned seed = 9;
    char line[1024];
    gt_problem p = gt_problem_make(0, 0, 0, 200, 300, 64, 0, 1.5f, 0.0f);
    gemmtune_explain(h, 0, 0, 200, 300, 64, 64, 300, 300, line, sizeof line);
    CHECK_MSG(strstr(line, "found with cuBLAS 1, this is") && strstr(line, "cuBLAS's own choice runs instead"), "%s",
              line);
    CHECK(check(h, cb, NULL, &p, &seed, "version mismatch", NULL));
    p = gt_problem_make(0, 0, 0, 300, 200, 64, 0, 1.5f, 0.0f);
    CHECK(check(h, cb, NULL, &p, &seed, "unknown algorithm", NULL));
    gemmtune_explain(h, 0, 0, 300, 200, 64, 64, 200, 200, line, sizeof line);
    CHECK_MSG(strstr(line, "not usable here") && strstr(line, "own choice instead"), "%s", line);
    printf("    %s\n", line);
    gemmtune_destroy(h);
    cublasDestroy(cb);
}

/* k = 0 computes C = beta C (beta 0 over NaN gives 0); m = 0 or n = 0 touches nothing. */
GT_TEST(loader_gpu_k_zero_scales_c, GT_NEEDS_GPU)
{
    gemmtune_handle h = NULL;
    CHECK(gemmtune_create_from_table(&h, NULL, 0, NULL) == GEMMTUNE_SUCCESS);
    if (!h) return;
    enum { M = 37, N = 19, LDC = 23 };
    float host[M * LDC], out[M * LDC], *dC = NULL, *dA = NULL;
    const float betas[3] = {0.5f, 0.0f, 1.0f};
    CHECK(cudaMalloc((void **)&dC, sizeof host) == cudaSuccess && cudaMalloc((void **)&dA, 64) == cudaSuccess);
    for (int b = 0; b < 3; ++b) {
        for (int i = 0; i < M * LDC; ++i) host[i] = b == 1 && i % LDC < N ? NAN : (float)(i % 97) - 40.0f;
        cudaMemcpy(dC, host, sizeof host, cudaMemcpyHostToDevice);
        CHECK(gemmtune_sgemm(h, NULL, 0, 0, M, N, 0, 2.0f, dA, 1, dA, N, betas[b], dC, LDC) == GEMMTUNE_SUCCESS);
        cudaMemcpy(out, dC, sizeof out, cudaMemcpyDeviceToHost);
        int bad = 0;
        for (int i = 0; i < M * LDC; ++i) {
            const float want = i % LDC < N ? (betas[b] == 0.0f ? 0.0f : betas[b] * host[i]) : host[i];
            bad += memcmp(&out[i], &want, sizeof want) != 0;
        }
        CHECK_MSG(bad == 0, "k = 0, beta %g: %d elements wrong", betas[b], bad);
    }
    CHECK(gemmtune_sgemm(h, NULL, 0, 0, 0, N, 5, 1.0f, dA, 5, dA, N, 0.0f, dC, LDC) == GEMMTUNE_SUCCESS);
    CHECK(gemmtune_sgemm(h, NULL, 0, 0, M, 0, 5, 1.0f, dA, 5, dA, 1, 0.0f, dC, 1) == GEMMTUNE_SUCCESS);
    cudaFree(dC), cudaFree(dA);
    gemmtune_destroy(h);
}

/* Calls without an exact winner are recorded with their counts; a second process's counts are added. */
GT_TEST(loader_gpu_records_untuned_calls, GT_NEEDS_GPU)
{
    gpu_id g;
    CHECK(this_gpu(&g) == 0);
    char *rec = gt_tmp_path(".calls");
    gemmtune_winner_row row = {g.name, g.major, g.minor, g.sms, 64, 64, 64, "nn", "cublas", "", 1, 1, NULL, 0, NULL};
    char params[128];
    snprintf(params, sizeof params, "API=0,ALGO=0,TILE=0,SPLITK=0,RED=0,SWIZZLE=0,CUSTOM=0,STAGES=0,INNER=0,"
             "CLUSTER=0,WSKB=0,VER=%d", (int)cublasLtGetVersion());
    row.params = params;
    float *d = NULL;
    CHECK(cudaMalloc((void **)&d, 4 << 20) == cudaSuccess);
    for (int round = 0; round < 2; ++round) {
        gemmtune_options o;
        gemmtune_options_init(&o);
        o.record_path = rec;
        gemmtune_handle h = NULL;
        CHECK(gemmtune_create_from_table(&h, &row, 1, &o) == GEMMTUNE_SUCCESS);
        for (int i = 0; h && i < 3; ++i) gemmtune_sgemm(h, NULL, 0, 0, 100, 50, 70, 1, d, 70, d, 50, 0, d, 50);
        for (int i = 0; h && i < 2; ++i) gemmtune_sgemm(h, NULL, 1, 0, 7, 1000, 13, 1, d, 7, d, 1000, 0, d, 1000);
        gemmtune_sgemm(h, NULL, 0, 0, 64, 64, 64, 1, d, 64, d, 64, 0, d, 64); /* exact: not recorded */
        gemmtune_destroy(h);
    }
    cudaFree(d);
    FILE *f = fopen(rec, "r");
    char text[1024] = "";
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[n] = '\0';
    if (f) fclose(f);
    CHECK_MSG(strstr(text, "\n100x50x70:nn 6\n") && strstr(text, "\n7x1000x13:tn 4\n") && !strstr(text, "64x64x64"),
              "%s", text);
    gt_shape *list = NULL;
    int with = 0;
    char arg[300];
    snprintf(arg, sizeof arg, "@%s", rec);
    CHECK(gt_cli_parse_size_list(arg, &list, &with, text, sizeof text) == 2 && with == 1);
    const gt_shape *small = list && list[0].m == 7 ? &list[0] : list ? &list[1] : NULL;
    CHECK(small && small->m == 7 && small->n == 1000 && small->k == 13 && small->ta == 1 && small->tb == 0);
    free(list);
    remove(rec);
    free(rec);
}

/* gemmtune_runs_own_kernel: 1 for a call a kernel of gemmtune's own serves, 0 for one cuBLAS serves (its own choice,
 * or a stored cuBLAS winner) or nothing does (fallback none: then counted for the recorder), -1 for bad arguments;
 * and gemmtune_kernel_times: the stored times of an exact winner. */
GT_TEST(loader_gpu_says_whether_it_runs_its_own_kernel, GT_NEEDS_GPU)
{
    gpu_id g;
    if (this_gpu(&g)) return;
    char vendor[256];
    const gt_family *vf;
    gt_params vp;
    gt_backend_default_params(&vf, &vp);
    gt_params_format(vf, &vp, vendor, sizeof vendor);
    gemmtune_winner_row rows[2] = {{g.name, g.major, g.minor, g.sms, 128, 128, 128, "nn", "tile2d", P_TILE2D, 1, 1.2},
                                   {g.name, g.major, g.minor, g.sms, 96, 96, 96, "nn", "cublas", vendor, 1, 1.0}};
    gemmtune_options o;
    gemmtune_options_init(&o);
    o.fallback = GEMMTUNE_FALLBACK_NONE;
    gemmtune_handle h = NULL;
    float *d = NULL;
    CHECK(cudaMalloc((void **)&d, 3 * 128 * 128 * sizeof(float)) == cudaSuccess);
    CHECK(gemmtune_create_from_table(&h, rows, 2, &o) == GEMMTUNE_SUCCESS);
    if (!h || !d) return;
    float *A = d, *B = d + 128 * 128, *C = d + 2 * 128 * 128;
    CHECK(gemmtune_runs_own_kernel(h, NULL, 0, 0, 128, 128, 128, A, 128, B, 128, C, 128) == 1);
    CHECK(gemmtune_runs_own_kernel(h, NULL, 0, 0, 96, 96, 96, A, 96, B, 96, C, 96) == 0);
    CHECK(gemmtune_runs_own_kernel(h, NULL, 0, 0, 50, 50, 50, A, 50, B, 50, C, 50) == 0); /* untuned, fallback none */
    CHECK(gemmtune_runs_own_kernel(h, NULL, 0, 0, 50, 50, 50, A, 10, B, 50, C, 50) == -1); /* lda too small */
    CHECK(gemmtune_runs_own_kernel(NULL, NULL, 0, 0, 50, 50, 50, A, 50, B, 50, C, 50) == -1);
    /* the stored times: a table row's, from its TFLOPS (1) and ratio (1.2); none for an untuned shape */
    double kms = -1, cms = -1;
    CHECK(gemmtune_kernel_times(h, NULL, 0, 0, 128, 128, 128, A, 128, B, 128, C, 128, &kms, &cms) == 1);
    CHECK_MSG(fabs(kms - 2.0 * 128 * 128 * 128 / 1e9) < 1e-12 && fabs(cms - 1.2 * kms) < 1e-12, "%g %g", kms, cms);
    kms = cms = -1;
    CHECK(gemmtune_kernel_times(h, NULL, 0, 0, 50, 50, 50, A, 50, B, 50, C, 50, &kms, &cms) == 0 && kms == -1);
    CHECK(gemmtune_kernel_times(h, NULL, 0, 0, 50, 50, 50, A, 10, B, 50, C, 50, &kms, &cms) == -1);
    gemmtune_destroy(h);
    cudaFree(d);
}

/* One split-K call of k (nn, row-major, lda = K, ldb = ldc = N) on stream st. */
static int split_call(const gt_kernel *k, const gt_launch *L, int m, int n, int kk, const float *A, const float *B,
                      float *C, float *ws, cudaStream_t st)
{
    char err[256];
    const gt_args a = {.m = m, .n = n, .k = kk, .alpha = 1, .beta = 0, .A = A, .B = B, .C = C, .lda = kk, .ldb = n,
                       .ldc = n, .ws = ws};
    const int rc = gt_kernel_launch(k, L, st, &a, err, sizeof err);
    CHECK_MSG(rc == 0, "%s", err);
    return rc;
}

/* skinnyr's reduce (templates/pdl.cuh) is launched before its gt_gemm has finished, and waits for it: over a
 * NaN-filled workspace it reads only what this call's gt_gemm wrote; calls back to back on alternating inputs, and
 * the call captured in a CUDA graph and replayed, each give their own product, the same bits as alone. warptile's
 * reduce (common.cuh's, which does not wait) is launched the ordinary way. */
GT_TEST(gpu_skinny_reduce_starts_early_only_where_it_waits, GT_NEEDS_GPU)
{
    gpu_id g;
    CHECK(this_gpu(&g) == 0);
    if (kernels_ready(&g)) return;
    const gt_family *f = gt_family_find("skinnyr");
    const int m = 33, n = 4099, kk = 2049;
    const gt_shape s = {m, n, kk, 0, 0};
    gt_params p;
    gt_launch L;
    gt_cubin cb = {0};
    char err[512];
    CHECK(f && gt_params_parse(f, "SIDE=0,SR=33,TL=2,WARPS=8,P=8,MINB=2,FILL=16", &p, err, sizeof err) == 0);
    char *src = f ? gt_render(f, &p, 0, 0, 0, err, sizeof err) : NULL;
    CHECK_MSG(src && gt_nvrtc_compile(src, g.arch, &cb, err, sizeof err) == 0, "%s", err);
    free(src);
    gt_kernel *k = NULL, *plain = NULL;
    f->launch(&p, &s, g.sms, &L);
    CHECK(L.splitk > 1);
    CHECK(cb.data && gt_kernel_load(cb.data, cb.size, L.smem, f, &p, &k, err, sizeof err) == 0);
    CHECK_MSG(gt_kernel_reduce_waits(k) == (g.major >= 9), "skinnyr on %s: reduce_waits %d", g.arch,
              gt_kernel_reduce_waits(k));
    const gt_family *wf = gt_family_find("warptile");
    gt_params wp;
    gt_launch WL;
    CHECK(gt_params_parse(wf, kern_params[1], &wp, err, sizeof err) == 0);
    wf->launch(&wp, &(gt_shape){64, 64, 64, 0, 0}, g.sms, &WL);
    CHECK(gt_kernel_load(kern_cubin[1][0].data, kern_cubin[1][0].size, WL.smem, wf, &wp, &plain, err, sizeof err) ==
          0);
    CHECK_MSG(WL.splitk > 1 && gt_kernel_reduce_waits(plain) == 0, "warptile %s: splitk %d, reduce_waits %d",
              kern_params[1], WL.splitk, gt_kernel_reduce_waits(plain));
    const gt_problem pr = gt_problem_make(0, 0, 0, m, n, kk, 0, 1.0f, 0.0f); /* row-major nn, tight ld's */
    const size_t na = (size_t)m * kk, nb = (size_t)kk * n, nc = (size_t)m * n;
    float *hA = malloc(na * 4), *hB[2] = {malloc(nb * 4), malloc(nb * 4)}, *hC[2] = {malloc(nc * 4), malloc(nc * 4)};
    float *hD = malloc(nc * 4), *hC0 = malloc(nc * 4), *dA = NULL, *dB[2] = {NULL, NULL}, *dC = NULL, *dD = NULL;
    float *ws = NULL;
    unsigned seed = 11;
    gt_problem_fill(&pr, &seed, hA, hB[1], hC0); /* the second B; A and C0 drawn again below */
    gt_problem_fill(&pr, &seed, hA, hB[0], hC0);
    CHECK(cudaMalloc((void **)&dA, na * 4) == cudaSuccess && cudaMalloc((void **)&dB[0], nb * 4) == cudaSuccess &&
          cudaMalloc((void **)&dB[1], nb * 4) == cudaSuccess && cudaMalloc((void **)&dC, nc * 4) == cudaSuccess &&
          cudaMalloc((void **)&dD, nc * 4) == cudaSuccess && cudaMalloc((void **)&ws, L.ws_bytes) == cudaSuccess);
    cudaMemcpy(dA, hA, na * 4, cudaMemcpyHostToDevice);
    for (int v = 0; v < 2; ++v) cudaMemcpy(dB[v], hB[v], nb * 4, cudaMemcpyHostToDevice);
    for (int v = 0; v < 2 && k; ++v) { /* each product alone, over a NaN workspace and a NaN C */
        cudaMemset(ws, 0xff, L.ws_bytes);
        cudaMemset(dC, 0xff, nc * 4);
        CHECK(split_call(k, &L, m, n, kk, dA, dB[v], dC, ws, NULL) == 0);
        CHECK(cudaMemcpy(hC[v], dC, nc * 4, cudaMemcpyDeviceToHost) == cudaSuccess);
        gt_verdict vd;
        const int ok = gt_validate(&pr, hA, hB[v], hC0, hC[v], NULL, &vd); /* FP64 reference; NaN fails */
        CHECK_MSG(ok && vd.worst < 1e-5, "product %d alone: error %g over sum |A||B| (%lld bad)", v, vd.worst, vd.bad);
    }
    int differ = 0;
    for (int r = 0; r < 20 && k; ++r) { /* back to back: B0, then B1 (its C copied aside on the stream) */
        split_call(k, &L, m, n, kk, dA, dB[0], dC, ws, NULL);
        cudaMemcpyAsync(dD, dC, nc * 4, cudaMemcpyDeviceToDevice, NULL);
        split_call(k, &L, m, n, kk, dA, dB[1], dC, ws, NULL);
        CHECK(cudaMemcpy(hD, dD, nc * 4, cudaMemcpyDeviceToHost) == cudaSuccess);
        differ += memcmp(hD, hC[0], nc * 4) != 0;
        CHECK(cudaMemcpy(hD, dC, nc * 4, cudaMemcpyDeviceToHost) == cudaSuccess);
        differ += memcmp(hD, hC[1], nc * 4) != 0;
    }
    CHECK_MSG(differ == 0, "%d of 40 back-to-back calls differ from the same product alone", differ);
    cudaStream_t st = NULL; /* captured in a CUDA graph, as under a program's graphs, replayed over a NaN workspace */
    cudaGraph_t gr = NULL;
    cudaGraphExec_t ge = NULL;
    CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) == cudaSuccess);
    CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal) == cudaSuccess);
    if (k) split_call(k, &L, m, n, kk, dA, dB[1], dC, ws, st);
    CHECK(cudaStreamEndCapture(st, &gr) == cudaSuccess && cudaGraphInstantiate(&ge, gr, 0) == cudaSuccess);
    for (int r = 0; r < 3 && ge; ++r) {
        cudaMemsetAsync(ws, 0xff, L.ws_bytes, st);
        cudaMemsetAsync(dC, 0xff, nc * 4, st);
        CHECK(cudaGraphLaunch(ge, st) == cudaSuccess && cudaStreamSynchronize(st) == cudaSuccess);
        CHECK(cudaMemcpy(hD, dC, nc * 4, cudaMemcpyDeviceToHost) == cudaSuccess);
        CHECK_MSG(!memcmp(hD, hC[1], nc * 4), "graph replay %d differs from the call alone", r);
    }
    if (ge) cudaGraphExecDestroy(ge);
    if (gr) cudaGraphDestroy(gr);
    if (st) cudaStreamDestroy(st);
    printf("    skinnyr %s: reduce launched early %d; warptile: %d\n", g.arch, gt_kernel_reduce_waits(k),
           gt_kernel_reduce_waits(plain));
    cudaFree(dA), cudaFree(dB[0]), cudaFree(dB[1]), cudaFree(dC), cudaFree(dD), cudaFree(ws);
    free(hA), free(hB[0]), free(hB[1]), free(hC[0]), free(hC[1]), free(hD), free(hC0);
    if (k) gt_kernel_unload(k);
    if (plain) gt_kernel_unload(plain);
    gt_cubin_free(&cb);
}
