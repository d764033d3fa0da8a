/* Families without a GPU: registry, enumeration and constraints, params text, layouts, rendering. */
#include "backend.h"
#include "family.h"
#include "harness.h"

#include <stdio.h>
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
        CHECK_MSG(!f->backend || gt_backend_find(f->backend), "%s: backend %s is in no table", f->name, f->backend);
        for (int j = 0; j < i; ++j) CHECK(gt_family_at(j) != f);
    }
    CHECK(gt_family_find("tile2d") != NULL);
    CHECK(gt_family_find("no-such-family") == NULL);
    CHECK(gt_family_at(-1) == NULL && gt_family_at(gt_family_count()) == NULL);
}

/* The registry's stable order (the candidates listing and the sweep walk it): the seeds' optimisation path, as each
 * family states its place in it, then the rest by name, then the registered test families. */
GT_TEST(registry_order_is_the_seeds_path_then_by_name, GT_NEEDS_NONE)
{
    char names[512] = "";
    for (int i = 0; i < gt_family_count(); ++i)
        if (!gt_family_at(i)->test_only)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s ", gt_family_at(i)->name);
    CHECK_MSG(!strcmp(names, "naive coalesced smem tile1d tile2d vec4 warptile multistage "
                             "cublas gemv ozaki skinny skinny3 skinnyr skinnyr3 skinnyt tf32x3 tf32x3wg "),
              "%s", names);
    for (int i = 1; i < gt_family_count(); ++i)
        CHECK_MSG(!gt_family_at(i - 1)->test_only || gt_family_at(i)->test_only, "a test family before %s",
                  gt_family_at(i)->name);
}

/* The built-in kernel is a field of the family that provides it: one family states it, and it is legal on every
 * architecture this gemmtune knows (it must run wherever cuBLAS is not there). */
GT_TEST(registry_builtin_kernel_is_stated_by_one_family, GT_NEEDS_NONE)
{
    const char *params = NULL;
    const gt_family *f = gt_family_builtin(&params);
    CHECK(f && !strcmp(f->name, "tile2d") && !strcmp(params, "BM=64,BN=64,BK=8,TM=8,TN=8"));
    int stating = 0;
    for (int i = 0; i < gt_family_count(); ++i) stating += gt_family_at(i)->builtin_params != NULL;
    CHECK(stating == 1);
    gt_params p;
    char why[256];
    CHECK(f && gt_params_parse(f, params, &p, why, sizeof why) == 0);
    for (int major = 7; f && major <= 12; ++major)
        for (int minor = 0; minor <= 9; ++minor) {
            gt_limits lim;
            if (gt_limits_for_cc(major, minor, &lim))
                CHECK_MSG(f->legal(&p, &lim, why, sizeof why), "sm_%d%d: %s", major, minor, why);
        }
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

/* Issue 25: every architecture CUDA 13 targets has limits (sm_100 and later have three digits), suffixes 'a' and
 * 'f' are read, and nothing else is: trailing text, a compute capability that is no architecture, a leading 0. */
GT_TEST(limits_table_knows_every_toolkit_arch_and_refuses_the_rest, GT_NEEDS_NONE)
{
    static const struct {
        const char *arch;
        int major, minor, optin_kib;
    } known[] = {{"sm_70", 7, 0, 96},    {"sm_75", 7, 5, 64},     {"sm_80", 8, 0, 163},   {"sm_86", 8, 6, 99},
                 {"sm_87", 8, 7, 163},   {"sm_88", 8, 8, 99},     {"sm_89", 8, 9, 99},    {"sm_90a", 9, 0, 227},
                 {"sm_100", 10, 0, 227}, {"sm_100f", 10, 0, 227}, {"sm_103", 10, 3, 227}, {"sm_110", 11, 0, 227},
                 {"sm_120", 12, 0, 99},  {"sm_121a", 12, 1, 99}};
    gt_limits l;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; ++i) {
        memset(&l, 0, sizeof l);
        CHECK_MSG(gt_limits_for_arch(known[i].arch, &l) && l.cc_major == known[i].major &&
                      l.cc_minor == known[i].minor && l.max_smem_optin == known[i].optin_kib * 1024 &&
                      l.max_threads_per_block == 1024 && l.max_regs_per_block == 65536 &&
                      l.max_smem_per_block == 48 * 1024,
                  "%s: cc %d.%d, %d B opt-in", known[i].arch, l.cc_major, l.cc_minor, l.max_smem_optin);
    }
    static const char *const refused[] = {"sm_90garbage", "sm_90 ", "sm_99", "sm_60", "sm_1000", "sm_090", "sm_9",
                                          "sm_90af", "sm_90b", "sm_910", "sm_130", "SM_90", "sm_-90", "sm_"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i)
        CHECK_MSG(!gt_limits_for_arch(refused[i], &l), "%s accepted", refused[i]);
    CHECK(gt_limits_for_cc(10, 0, &l) && gt_limits_for_cc(12, 1, &l));
    CHECK(!gt_limits_for_cc(99, 0, &l) && !gt_limits_for_cc(75, 0, &l) && !gt_limits_for_cc(9, 10, &l) &&
          !gt_limits_for_cc(-1, 0, &l));
    int major, minor;
    char suffix = 'x', list[200];
    CHECK(gt_arch_parse("sm_121f", &major, &minor, &suffix) == 0 && major == 12 && minor == 1 && suffix == 'f');
    CHECK(gt_arch_parse("sm_100", &major, &minor, &suffix) == 0 && major == 10 && minor == 0 && suffix == 0);
    gt_arch_list(list, sizeof list);
    CHECK_MSG(strstr(list, "sm_70, ") == list && strstr(list, "sm_100, ") && strstr(list, ", sm_121"), "%s", list);
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
        /* a device space is asked of the GPU; a library family's library picks its own grid */
        if (f->test_only || f->space != GT_SPACE_STATIC || f->build != GT_BUILD_NVRTC) continue;
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

/* Every param a kernel reads is a #define of its render; a launch-only one (skinny's FILL) is not. */
GT_TEST(render_defines_every_param, GT_NEEDS_NONE)
{
    for (int i = 0; i < gt_family_count(); ++i) {
        const gt_family *f = gt_family_at(i);
        gt_params p = {{0}};
        for (int j = 0; j < f->nparams; ++j) p.v[j] = f->params[j].values[0];
        char err[256];
        char *src = gt_render(f, &p, 1, 0, 0, err, sizeof err);
        if (f->build != GT_BUILD_NVRTC) { /* nothing to render: it says so */
            CHECK_MSG(!src && strstr(err, "not built"), "%s: %s", f->name, err);
            continue;
        }
        CHECK_MSG(src != NULL, "%s: %s", f->name, err);
        if (!src) continue;
        CHECK(strstr(src, "#define GT_TA 1\n") && strstr(src, "#define GT_TB 0\n"));
        for (int j = 0; j < f->nparams; ++j) {
            char line[64];
            snprintf(line, sizeof line, "#define %s ", f->params[j].name);
            const int shown = strstr(src, line) != NULL;
            snprintf(line, sizeof line, "#define %s %d\n", f->params[j].name, p.v[j]);
            if (f->params[j].launch_only) /* only launch() reads it: it must not split one kernel in two */
                CHECK_MSG(!shown, "%s: renders launch-only %s", f->name, f->params[j].name);
            else
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

/* A header's text as the embedded one, or with a line appended when it is the header being "edited". */
typedef struct {
    const char *edited;
    char *text;
} header_edit;

static const char *edited_header(const char *name, void *ctx)
{
    header_edit *e = ctx;
    return !strcmp(name, e->edited) ? e->text : gt_template_text(name);
}

static int first_point(const gt_family *f, const gt_params *p, void *ctx)
{
    (void)f;
    *(gt_params *)ctx = *p;
    return 1;
}

/* 1 when the family's template includes name, directly or through another header. */
static int includes(const char *text, const char *name, int depth)
{
    char line[160];
    for (const char *s = text; depth < 8 && (s = strstr(s, "#include \"")); s += 10) {
        snprintf(line, sizeof line, "%.*s", (int)strcspn(s + 10, "\""), s + 10);
        if (!strcmp(line, name) || (gt_template_text(line) && includes(gt_template_text(line), name, depth + 1)))
            return 1;
    }
    return 0;
}

/* Issue 27 item 1: an edit to a header alone changes the id of every kernel that includes it (so its cached cubin,
 * stored trials and winners stop matching), and of no other. */
GT_TEST(kernel_id_covers_included_headers, GT_NEEDS_NONE)
{
    static const char *const headers[] = {"common.cuh", "tileio.cuh"};
    char err[256], before[17], after[17];
    for (size_t h = 0; h < sizeof headers / sizeof headers[0]; ++h) {
        const char *orig = gt_template_text(headers[h]);
        CHECK_MSG(orig != NULL, "%s is not embedded", headers[h]);
        if (!orig) continue;
        header_edit e = {headers[h], malloc(strlen(orig) + 32)};
        sprintf(e.text, "%s\n// edited\n", orig);
        int changed = 0, kept = 0;
        for (int i = 0; i < gt_family_count(); ++i) {
            const gt_family *f = gt_family_at(i);
            gt_limits lim;
            gt_params p;
            char arch[20];
            if (f->build != GT_BUILD_NVRTC) continue;
            gt_family_arch(f, "sm_90", arch, sizeof arch);
            if (!gt_limits_for_arch(arch, &lim) || gt_enumerate(f, &lim, first_point, &p) < 1) continue;
            CHECK(gt_kernel_id(f, &p, 0, 1, 0, before, NULL, err, sizeof err) == 0);
            CHECK(gt_kernel_id_with(f, &p, 0, 1, 0, edited_header, &e, after, NULL, err, sizeof err) == 0);
            const int inc = includes(gt_template_text(f->template_name), headers[h], 0);
            CHECK_MSG(inc == !!strcmp(before, after), "%s: includes %s: %d, id %s -> %s", f->name, headers[h], inc,
                      before, after);
            changed += inc, kept += !inc;
        }
        CHECK_MSG(changed > 0, "no family includes %s", headers[h]);
        if (!strcmp(headers[h], "tileio.cuh")) CHECK_MSG(kept > 0, "every family includes tileio.cuh");
        free(e.text);
    }
}

/* The id covers the rendered source itself (params, layout) and is what the cubin provider keys by; a family with no
 * source is named by its params, whatever the templates. */
GT_TEST(kernel_id_of_source_and_vendor, GT_NEEDS_NONE)
{
    char err[256], a[17], b[17], c[17], hash[17];
    const gt_family *f = gt_family_find("tile2d"), *v = gt_family_find("cublas");
    gt_params p, q;
    gt_limits lim;
    char *src = NULL;
    CHECK(f && v && gt_limits_for_arch("sm_90", &lim) && gt_enumerate(f, &lim, first_point, &p) == 1);
    CHECK(gt_kernel_id(f, &p, 0, 0, 0, a, &src, err, sizeof err) == 0 && src);
    CHECK(gt_kernel_id(f, &p, 1, 0, 0, b, NULL, err, sizeof err) == 0 && strcmp(a, b));
    gt_source_id(src, c);
    CHECK(!strcmp(a, c));
    gt_hash_hex(src, strlen(src), hash); /* the id before headers counted: a stored winner of it is stale now */
    CHECK(strcmp(a, hash) != 0);
    char params[256];
    gt_params_format(f, &p, params, sizeof params);
    CHECK(!gt_kernel_stale("tile2d", params, 0, 0, 0, a) && gt_kernel_stale("tile2d", params, 0, 0, 0, hash));
    CHECK(!gt_kernel_stale("no_such_family", params, 0, 0, 0, hash)); /* not judged: refused elsewhere */
    free(src);
    gt_backend_default_params(&v, &q);
    char vp[256], key[320];
    gt_params_format(v, &q, vp, sizeof vp);
    snprintf(key, sizeof key, "cublas:%s", vp);
    gt_hash_hex(key, strlen(key), hash);
    CHECK(gt_kernel_id(v, &q, 0, 0, 0, a, &src, err, sizeof err) == 0 && !src && !strcmp(a, hash));
    CHECK(!gt_kernel_stale("cublas", vp, 1, 1, 0, hash) && !gt_kernel_stale("cublas", vp, 0, 0, 0, "0123456789abcdef"));
}

/* A batch runs in one launch, grid z over its matrices, for every point of a batched family that neither splits K
 * nor needs a workspace (each matrix in at most one GEMM's blocks: tf32x3wg's PT gives them more tiles each where
 * the batch fills the GPU); the others are refused for batches and still run single GEMMs. */
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
    /* per matrix at most one GEMM's blocks: a persistent point's each take more tiles when a batch fills the GPU */
    c->bad += many.grid[0] > one.grid[0] || many.grid[1] != one.grid[1] || many.grid[2] != 64 || many.ws_bytes;
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
