/* The seed families (naive, coalesced, smem, tile1d, vec4, warptile, test_oob, test_hang) without a GPU:
 * enumeration counts, constraints, thread-to-element coverage, launch geometry, rendering, NVRTC compiles of a
 * sample in all four layouts, and `gemmtune candidates`. Run: build/gt_tests --cpu families */
#include "compile.h"
#include "family.h"
#include "harness.h"
#include "toolkit.h"

#include <stdlib.h>
#include <string.h>

static const char *const swept[] = {"naive", "coalesced", "smem", "tile1d", "vec4", "warptile"};
static const char *const test_only[] = {"test_oob", "test_hang"};
enum { NSWEPT = (int)(sizeof swept / sizeof swept[0]) };

static gt_limits sm90(void)
{
    gt_limits l;
    gt_limits_for_arch("sm_90", &l);
    return l;
}

/* Legal?  why receives the reason when not. */
static int is_legal(const char *family, const char *text, char *why, size_t n)
{
    const gt_family *f = gt_family_find(family);
    gt_params p;
    gt_limits l = sm90();
    char err[256];
    if (!f || gt_params_parse(f, text, &p, err, sizeof err)) {
        snprintf(why, n, "unparsable %s %s", family, text);
        return -1;
    }
    why[0] = '\0';
    return f->legal(&p, &l, why, n);
}

GT_TEST(families_enumerate_within_budget, GT_NEEDS_NONE)
{
    gt_limits l = sm90();
    int total = 0;
    for (int i = 0; i < NSWEPT; ++i) {
        const gt_family *f = gt_family_find(swept[i]);
        CHECK_MSG(f && !f->test_only, "%s missing or test-only", swept[i]);
        if (!f) continue;
        int n = gt_enumerate(f, &l, NULL, NULL);
        CHECK_MSG(n >= 30 && n <= 300, "%s: %d candidates", f->name, n);
        total += n;
    }
    CHECK_MSG(total <= 800, "%d candidates across the seed families (CI compiles each)", total);
    for (int i = 0; i < 2; ++i) {
        const gt_family *f = gt_family_find(test_only[i]);
        CHECK_MSG(f && f->test_only, "%s missing or sweepable", test_only[i]);
        if (f) CHECK(gt_enumerate(f, &l, NULL, NULL) == 1);
    }
}

GT_TEST(families_simple_constraints_reject_bad_points, GT_NEEDS_NONE)
{
    char why[160];
    CHECK(is_legal("naive", "BX=32,BY=8,KU=1", why, sizeof why) == 1);
    CHECK(!is_legal("naive", "BX=8,BY=2,KU=1", why, sizeof why) && strstr(why, "threads"));    /* 16 */
    CHECK(!is_legal("naive", "BX=64,BY=32,KU=1", why, sizeof why) && strstr(why, "threads"));  /* 2048 */
    CHECK(!is_legal("naive", "BX=10,BY=10,KU=1", why, sizeof why) && strstr(why, "warps"));    /* 100 */
    CHECK(!is_legal("naive", "BX=32,BY=8,KU=0", why, sizeof why) && strstr(why, "non-positive"));
    CHECK(is_legal("coalesced", "BM=4,BN=64,KU=4", why, sizeof why) == 1);
    CHECK(!is_legal("coalesced", "BM=8,BN=48,KU=1", why, sizeof why) && strstr(why, "warp"));
    CHECK(!is_legal("coalesced", "BM=64,BN=32,KU=1", why, sizeof why) && strstr(why, "threads"));
    CHECK(is_legal("smem", "BM=32,BN=32,BK=32", why, sizeof why) == 1);
    CHECK(!is_legal("smem", "BM=32,BN=64,BK=8", why, sizeof why) && strstr(why, "threads"));
    CHECK(!is_legal("smem", "BM=16,BN=16,BK=512", why, sizeof why) && strstr(why, "shared"));
    CHECK(is_legal("tile1d", "BM=64,BN=64,BK=8,TM=8", why, sizeof why) == 1);
    CHECK(!is_legal("tile1d", "BM=64,BN=64,BK=8,TM=12", why, sizeof why) && strstr(why, "TM"));
    CHECK(!is_legal("tile1d", "BM=16,BN=64,BK=8,TM=4", why, sizeof why) && strstr(why, "grid"));
    CHECK(!is_legal("tile1d", "BM=128,BN=128,BK=8,TM=4", why, sizeof why) && strstr(why, "threads"));
    CHECK(!is_legal("tile1d", "BM=128,BN=128,BK=64,TM=16", why, sizeof why) && strstr(why, "shared"));
    CHECK(is_legal("vec4", "BM=128,BN=128,BK=8,TM=8,TN=8", why, sizeof why) == 1);
    CHECK(!is_legal("vec4", "BM=64,BN=64,BK=6,TM=8,TN=8", why, sizeof why) && strstr(why, "multiples of 4"));
    CHECK(!is_legal("vec4", "BM=64,BN=66,BK=8,TM=8,TN=4", why, sizeof why) && strstr(why, "BN"));
    CHECK(!is_legal("vec4", "BM=256,BN=256,BK=32,TM=8,TN=8", why, sizeof why) && strstr(why, "shared"));
    CHECK(!is_legal("vec4", "BM=256,BN=256,BK=8,TM=16,TN=16", why, sizeof why) && strstr(why, "registers"));
}

/* The seed's static_asserts: block/warp divisibility, warp count, and whole WMITER. */
static int seed_checks_pass(const int *v)
{
    const int bm = v[0], bn = v[1], wm = v[3], wn = v[4], wniter = v[5], tm = v[6], tn = v[7], nt = v[8];
    return bm % wm == 0 && bn % wn == 0 && (bm / wm) * (bn / wn) * 32 == nt &&
           (wm * wn) % (32 * tm * tn * wniter) == 0;
}

GT_TEST(warptile_constraints_include_the_checks_the_seed_misses, GT_NEEDS_NONE)
{
    char why[160];
    const gt_family *f = gt_family_find("warptile");
    gt_limits l = sm90();
    CHECK(is_legal("warptile", "BM=128,BN=128,BK=16,WM=64,WN=64,WNITER=4,TM=8,TN=4,NTHREADS=128,SPLITK=1,SWZ=1", why,
                   sizeof why) == 1);
    /* (WM/WMITER) % TM: WMITER = 1, a warp step of 128 rows does not hold whole 12-row thread tiles */
    const char *rows = "BM=128,BN=24,BK=8,WM=128,WN=12,WNITER=1,TM=12,TN=4,NTHREADS=64,SPLITK=1,SWZ=1";
    /* (WN/WNITER) % TN: the transposed case, 128 columns per step, 12-column thread tiles */
    const char *cols = "BM=36,BN=128,BK=8,WM=12,WN=128,WNITER=1,TM=4,TN=12,NTHREADS=96,SPLITK=1,SWZ=1";
    gt_params p;
    char err[128];
    CHECK(gt_params_parse(f, rows, &p, err, sizeof err) == 0 && seed_checks_pass(p.v));
    CHECK(!f->legal(&p, &l, why, sizeof why) && strstr(why, "(WM/WMITER) % TM"));
    CHECK(gt_params_parse(f, cols, &p, err, sizeof err) == 0 && seed_checks_pass(p.v));
    CHECK(!f->legal(&p, &l, why, sizeof why) && strstr(why, "(WN/WNITER) % TN"));
    CHECK(!is_legal("warptile", "BM=128,BN=128,BK=16,WM=64,WN=64,WNITER=4,TM=8,TN=4,NTHREADS=256,SPLITK=1,SWZ=1", why,
                    sizeof why) && strstr(why, "NTHREADS"));
    CHECK(!is_legal("warptile", "BM=128,BN=128,BK=16,WM=64,WN=64,WNITER=3,TM=8,TN=4,NTHREADS=128,SPLITK=1,SWZ=1", why,
                    sizeof why) && strstr(why, "WNITER"));
    CHECK(!is_legal("warptile", "BM=128,BN=128,BK=16,WM=64,WN=64,WNITER=4,TM=8,TN=4,NTHREADS=128,SPLITK=0,SWZ=1", why,
                    sizeof why) && strstr(why, "non-positive"));
    CHECK(!is_legal("warptile", "BM=128,BN=128,BK=16,WM=65536,WN=65536,WNITER=4,TM=8,TN=4,NTHREADS=128,SPLITK=1,SWZ=1",
                    why, sizeof why) && strstr(why, "over 4096"));
    CHECK(!is_legal("warptile", "BM=128,BN=128,BK=16,WM=64,WN=64,WNITER=4,TM=6,TN=4,NTHREADS=128,SPLITK=1,SWZ=1", why,
                    sizeof why) && strstr(why, "multiples of 4"));
    CHECK(!is_legal("warptile", "BM=256,BN=256,BK=32,WM=128,WN=64,WNITER=4,TM=8,TN=4,NTHREADS=256,SPLITK=1,SWZ=1",
                    why, sizeof why) && strstr(why, "shared"));
    CHECK(!is_legal("warptile", "BM=256,BN=128,BK=8,WM=128,WN=128,WNITER=4,TM=8,TN=8,NTHREADS=64,SPLITK=1,SWZ=1", why,
                    sizeof why) && strstr(why, "registers"));
}

/* Replays warptile.cu's index arithmetic for every thread of a block: each C element of the BM x BN tile must be
 * owned by exactly one (thread, wm, m, wn, n). Returns the number of elements not covered exactly once. */
static int warptile_coverage(const int *v)
{
    const int bm = v[0], bn = v[1], wm = v[3], wn = v[4], wniter = v[5], tm = v[6], tn = v[7], nt = v[8];
    const int wmiter = wm * wn / (32 * tm * tn * wniter), wsubm = wm / wmiter, wsubn = wn / wniter;
    unsigned char *seen = calloc((size_t)bm * bn, 1);
    int bad = 0;
    for (int tid = 0; tid < nt; ++tid) {
        const int lane = tid % 32, warp = tid / 32;
        const int row0 = warp / (bn / wn) * wm + lane / (wsubn / tn) * tm;
        const int col0 = warp % (bn / wn) * wn + lane % (wsubn / tn) * tn;
        for (int a = 0; a < wmiter; ++a)
            for (int m = 0; m < tm; ++m)
                for (int b = 0; b < wniter; ++b)
                    for (int n = 0; n < tn; ++n) {
                        const int r = row0 + a * wsubm + m, c = col0 + b * wsubn + n;
                        if (r < 0 || r >= bm || c < 0 || c >= bn) bad++;
                        else seen[(size_t)r * bn + c]++;
                    }
    }
    for (size_t e = 0; e < (size_t)bm * bn; ++e) bad += seen[e] != 1;
    free(seen);
    return bad;
}

static int count_uncovered(const gt_family *f, const gt_params *p, void *ctx)
{
    (void)f;
    *(int *)ctx += warptile_coverage(p->v) != 0;
    return 0;
}

GT_TEST(warptile_every_candidate_covers_its_tile_once, GT_NEEDS_NONE)
{
    gt_limits l = sm90();
    int bad = 0;
    int n = gt_enumerate(gt_family_find("warptile"), &l, count_uncovered, &bad);
    CHECK(n > 0);
    CHECK_MSG(bad == 0, "%d of %d warptile candidates map threads onto their tile wrongly", bad, n);
    /* the replay itself detects the seed's gap: the rejected point double-covers some elements */
    int rows[] = {128, 24, 8, 128, 12, 1, 12, 4, 64, 1, 1};
    CHECK(warptile_coverage(rows) != 0);
}

typedef struct {
    gt_shape s;
    int bad;
    char first[200];
} geom_ctx;

/* Launch geometry: within grid limits, enough blocks to cover M x N, split-K workspace and reduce sized right. */
static int check_geometry(const gt_family *f, const gt_params *p, void *vctx)
{
    geom_ctx *c = vctx;
    gt_launch L;
    memset(&L, 0xff, sizeof L);
    f->launch(p, &c->s, GT_TEST_SMS, &L);
    const long long bm = gt_param_get(f, p, "BM", gt_param_get(f, p, "BX", 0));
    const long long bn = gt_param_get(f, p, "BN", gt_param_get(f, p, "BY", 0));
    const long long tiles = ((c->s.m + bm - 1) / bm) * ((c->s.n + bn - 1) / bn);
    const int sk = gt_param_get(f, p, "SPLITK", 1);
    const size_t mn = (size_t)c->s.m * c->s.n;
    int ok = L.grid[0] >= 1 && L.grid[0] <= 2147483647u && L.grid[1] >= 1 && L.grid[1] <= 65535 &&
             L.grid[2] >= 1 && L.grid[2] <= 65535 && (long long)L.grid[0] * L.grid[1] == tiles &&
             L.splitk == sk && (int)L.grid[2] == sk && L.smem == 0;
    if (sk > 1)
        ok = ok && L.ws_bytes == (size_t)sk * mn * 4 && (size_t)L.rgrid[0] * L.rblock[0] >= mn && L.rblock[0] <= 1024 &&
             L.rgrid[1] == 1 && L.rblock[1] == 1;
    if (!ok && !c->bad++) gt_params_format(f, p, c->first, sizeof c->first);
    return 0;
}

GT_TEST(families_launch_geometry_covers_shapes, GT_NEEDS_NONE)
{
    const gt_shape shapes[] = {{1, 1, 1, 0, 0},          {7, 13, 5, 1, 0},     {1025, 1023, 1021, 0, 1},
                               {1048576, 32, 64, 0, 0}, {32, 1048576, 64, 1, 1}, {65536, 65536, 16, 0, 0}};
    gt_limits l = sm90();
    for (int i = 0; i < NSWEPT; ++i)
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
            geom_ctx c = {shapes[s], 0, ""};
            gt_enumerate(gt_family_find(swept[i]), &l, check_geometry, &c);
            CHECK_MSG(c.bad == 0, "%s on %dx%dx%d: %d bad launches, first %s", swept[i], shapes[s].m, shapes[s].n,
                      shapes[s].k, c.bad, c.first);
        }
}

static int has_splitk(const gt_family *f, const gt_params *p, void *ctx)
{
    *(int *)ctx |= gt_param_get(f, p, "SPLITK", 1) > 1 ? 1 : 0;
    *(int *)ctx |= gt_param_get(f, p, "SWZ", 1) > 1 ? 2 : 0;
    *(int *)ctx |= gt_param_get(f, p, "SPLITK", 1) == 1 && gt_param_get(f, p, "SWZ", 1) == 1 ? 4 : 0;
    return 0;
}

GT_TEST(families_render_their_templates, GT_NEEDS_NONE)
{
    gt_limits l = sm90();
    int flags = 0;
    gt_enumerate(gt_family_find("warptile"), &l, has_splitk, &flags);
    CHECK_MSG(flags == 7, "warptile's default space lacks SPLITK > 1, SWZ > 1 or the plain kernel (flags %d)", flags);
    for (int i = 0; i < NSWEPT + 2; ++i) {
        const char *name = i < NSWEPT ? swept[i] : test_only[i - NSWEPT];
        const gt_family *f = gt_family_find(name);
        gt_params p;
        memset(&p, 0, sizeof p);
        for (int j = 0; j < f->nparams; ++j) p.v[j] = f->params[j].values[f->params[j].nvalues - 1];
        char err[256];
        char *src = gt_render(f, &p, 1, 1, 0, err, sizeof err);
        CHECK_MSG(src != NULL, "%s: %s", name, err);
        if (!src) continue;
        CHECK(strstr(src, "#define GT_TA 1\n#define GT_TB 1\n") != NULL);
        CHECK_MSG(strstr(src, "extern \"C\" __global__ void") && strstr(src, "gt_gemm(GT_GEMM_ARGS)"), "%s", name);
        /* every tunable has a default in the template or a header it includes, so the file compiles alone */
        char *all = gt_source_expand(src);
        CHECK_MSG(all != NULL, "%s: a header it includes is not embedded", name);
        for (int j = 0; all && j < f->nparams; ++j) {
            char def[64];
            snprintf(def, sizeof def, "#ifndef %s\n", f->params[j].name);
            CHECK_MSG(strstr(all, def), "%s: no default for %s", name, f->params[j].name);
        }
        free(all);
        free(src);
    }
}

/* 1 when the ELF image names sym (a kernel entry). */
static int cubin_has(const gt_cubin *c, const char *sym)
{
    size_t n = strlen(sym);
    for (size_t i = 0; c->data && i + n <= c->size; ++i)
        if (!memcmp(c->data + i, sym, n)) return 1;
    return 0;
}

static int compile_point(const gt_family *f, const gt_params *p, int ta, int tb, gt_cubin *c, char *err, size_t n)
{
    char *src = gt_render(f, p, ta, tb, 0, err, n), arch[20];
    gt_family_arch(f, "sm_90", arch, sizeof arch);
    int rc = src ? gt_nvrtc_compile(src, arch, c, err, n) : -1;
    free(src);
    return rc;
}

typedef struct {
    int want[3], seen;
    gt_compile_job *jobs;
    int n;
} sample_ctx;

/* First, middle and last candidate of a family, each in the four layouts, as compile jobs. */
static int add_sample(const gt_family *f, const gt_params *p, void *vctx)
{
    sample_ctx *c = vctx;
    const int idx = c->seen++;
    if (idx == c->want[0] || idx == c->want[1] || idx == c->want[2])
        for (int lay = 0; lay < 4; ++lay) c->jobs[c->n++] = gt_compile_job_make(f, p, lay >> 1, lay & 1);
    return 0;
}

/* Compiled, resources within the launch bounds, and the kernels the launch needs are in the cubin. */
static int sample_ok(const gt_compile_job *j)
{
    gt_launch L;
    gt_shape s = {127, 129, 131, 0, 0};
    j->f->launch(&j->p, &s, GT_TEST_SMS, &L);
    const int threads = (int)(L.block[0] * L.block[1] * L.block[2]);
    int ok = j->rc == 0 && j->regs > 0 && j->regs * threads <= 65536 && j->has_gemm &&
             (L.splitk <= 1 || j->has_reduce); /* a split decided at launch (skinny) keeps its reduce in every cubin */
    if (!ok) {
        char name[256];
        gt_params_format(j->f, &j->p, name, sizeof name);
        printf("    %s %s %s: rc %d regs %d: %s\n", j->f->name, name, gt_layout_name(j->ta, j->tb), j->rc, j->regs,
               j->err);
    }
    return ok;
}

/* First, middle and last candidate of each family, in every layout (GT_SAMPLE: a spread sample of those). */
GT_TEST(families_sample_compiles_in_all_layouts, GT_NEEDS_NVRTC)
{
    gt_limits l = sm90();
    gt_compile_job jobs[(NSWEPT + 2) * 3 * 4];
    int n = 0;
    for (int i = 0; i < NSWEPT + 2; ++i) {
        const gt_family *f = gt_family_find(i < NSWEPT ? swept[i] : test_only[i - NSWEPT]);
        const int total = gt_enumerate(f, &l, NULL, NULL);
        sample_ctx c = {{0, total / 2, total - 1}, 0, jobs + n, 0};
        gt_enumerate(f, &l, add_sample, &c);
        CHECK_MSG(c.n == (total >= 3 ? 12 : 4 * total), "%s: %d sample compiles", f->name, c.n);
        n += c.n;
    }
    n = gt_sample_jobs(jobs, n, gt_sample_wanted(n));
    gt_compile_all(jobs, n, "sm_90", "sample candidates");
    for (int i = 0; i < n; ++i) CHECK_MSG(sample_ok(&jobs[i]), "%s: sample compile failed", jobs[i].f->name);
}

GT_TEST(warptile_splitk_compiles_and_bad_points_do_not, GT_NEEDS_NVRTC)
{
    const gt_family *f = gt_family_find("warptile");
    gt_params p;
    gt_cubin c;
    char err[512];
    gt_params_parse(f, "BM=64,BN=128,BK=8,WM=64,WN=32,WNITER=2,TM=4,TN=4,NTHREADS=128,SPLITK=3,SWZ=5", &p, err,
                    sizeof err);
    for (int lay = 0; lay < 4; ++lay) {
        int rc = compile_point(f, &p, lay >> 1, lay & 1, &c, err, sizeof err);
        CHECK_MSG(rc == 0 && cubin_has(&c, "gt_splitk_reduce"), "%s: %s", gt_layout_name(lay >> 1, lay & 1), err);
        gt_cubin_free(&c);
    }
    /* A point legal() rejects for the seed's missing check also stops the template: defence in depth. */
    gt_params_parse(f, "BM=128,BN=24,BK=8,WM=128,WN=12,WNITER=1,TM=12,TN=4,NTHREADS=64,SPLITK=1,SWZ=1", &p, err,
                    sizeof err);
    CHECK(compile_point(f, &p, 0, 0, &c, err, sizeof err) == 1 && c.log && strstr(c.log, "inconsistent warptile"));
    gt_cubin_free(&c);
}

/* ---- gemmtune candidates ---- */

static int count_lines_with(const char *out, const char *prefix)
{
    int n = 0;
    size_t len = strlen(prefix);
    for (const char *s = out; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : s + strlen(s))
        if (!strncmp(s, prefix, len)) n++;
    return n;
}

GT_TEST(cli_candidates_counts_match_enumeration, GT_NEEDS_NONE)
{
    char *out = NULL;
    gt_limits l = sm90();
    int rc = gt_run(GT_CLI " candidates --count --arch sm_90", &out);
    CHECK_MSG(rc == 0 && out, "rc %d", rc);
    int total = 0;
    for (int i = 0; out && i < gt_family_count(); ++i) {
        const gt_family *f = gt_family_at(i);
        char line[64];
        int n = gt_enumerate(f, &l, NULL, NULL);
        snprintf(line, sizeof line, "%-10s %d\n", f->name, n);
        CHECK_MSG(f->test_only ? !strstr(out, f->name) : strstr(out, line) != NULL, "%s: want '%s'", f->name, line);
        if (!f->test_only) total += n;
    }
    char line[64];
    snprintf(line, sizeof line, "total      %d\n", total);
    CHECK_MSG(out && strstr(out, line), "want '%s' in\n%s", line, out ? out : "");
    free(out);
}

GT_TEST(cli_candidates_lists_legal_parseable_points, GT_NEEDS_NONE)
{
    char *out = NULL;
    const gt_family *f = gt_family_find("warptile");
    gt_limits l = sm90();
    CHECK(gt_run(GT_CLI " candidates --family warptile", &out) == 0 && out);
    CHECK(count_lines_with(out, "warptile ") == gt_enumerate(f, &l, NULL, NULL));
    const char *first = out ? strstr(out, "BM=") : NULL;
    if (first) {
        char text[256], why[128], err[128];
        gt_params p;
        snprintf(text, sizeof text, "%.*s", (int)strcspn(first, "\n"), first);
        CHECK_MSG(gt_params_parse(f, text, &p, err, sizeof err) == 0 && f->legal(&p, &l, why, sizeof why), "%s", text);
    }
    free(out);
    CHECK(gt_run(GT_CLI " candidates", &out) == 0);
    CHECK(out && count_lines_with(out, "naive ") > 0 && count_lines_with(out, "test_oob") == 0 &&
          count_lines_with(out, "test_hang") == 0);
    free(out);
    /* The deliberately broken families live in the test binary only; the CLI has never heard of them. */
    CHECK(gt_run(GT_CLI " candidates --family test_oob", &out) == 2 && out && strstr(out, "unknown family"));
    free(out);
}

GT_TEST(cli_candidates_rejects_bad_input, GT_NEEDS_NONE)
{
    char *out = NULL;
    CHECK(gt_run(GT_CLI " candidates --family nosuch", &out) == 2 && out && strstr(out, "unknown family 'nosuch'"));
    free(out);
    CHECK(gt_run(GT_CLI " candidates --arch sm_5x", &out) == 2 && out && strstr(out, "unknown architecture 'sm_5x'"));
    free(out);
    CHECK(gt_run(GT_CLI " candidates --frobnicate", &out) == 2 && out && strstr(out, "unknown option"));
    free(out);
    CHECK(gt_run(GT_CLI " candidates --family", &out) == 2 && out && strstr(out, "missing value"));
    free(out);
    CHECK(gt_run(GT_CLI " candidates --help", &out) == 0 && out && strstr(out, "usage: gemmtune candidates") &&
          strstr(out, "multistage") && !strstr(out, "test_hang"));
    free(out);
}

/* The test toolkit's view of what NVRTC compiles: a template with its headers written in, each once. */
GT_TEST(toolkit_source_expand_writes_headers_in_once, GT_NEEDS_NONE)
{
    const char *src = "#define BM 64\n#include \"tileio.cuh\"\n#include \"epilogue.cuh\"\nint after;\n";
    char *all = gt_source_expand(src);
    CHECK(all != NULL);
    if (!all) return;
    const char *guard = strstr(all, "#define GT_COMMON_CUH"); /* common.cuh, which both include, once */
    CHECK(guard && !strstr(guard + 1, "#define GT_COMMON_CUH"));
    CHECK(strstr(all, "gt_load_tile") && strstr(all, "gt_store") && !strstr(all, "#include \""));
    CHECK(!strncmp(all, "#define BM 64\n", 14) && strstr(all, "int after;\n"));
    free(all);
    CHECK(gt_source_expand("#include \"nosuch.cuh\"\n") == NULL);
}
