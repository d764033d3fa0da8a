/* gemmtune explain: which selection rule fires for a call and which kernel the loader would run (src/gemmtune.h).
 * Runs the loader's own selection (src/loader_select.c) on the stored winners; no kernel is loaded.
 * Tested by tests/test_loader.c (explain_*), which runs the built CLI. */
#include "cli.h"
#include "loader.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *shape, *layout, *gpu_name, *cc, *sms, *align, *fallback;
    const char *lda, *ldb, *ldc;
    gemmtune_options opt;
} args;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gemmtune explain --shape MxNxK [--layout nn|nt|tn|tt] [--gpu-name NAME --cc 9.0 --sms 132]\n"
            "                        [--db PATH | --json PATH] [--align BYTES] [--lda N --ldb N --ldc N]\n"
            "                        [--fallback default|cublas|none]\n\n"
            "Says which rule of the runtime loader fires for a row-major call C[MxN] = op(A)[MxK] op(B)[KxN]\n"
            "and which kernel it would run: exact, nearest (log distance |log2 m/m'| + |log2 n/n'| + |log2 k/k'|\n"
            "on the same GPU model), same_cc, default (built-in " GT_DEFAULT_FAMILY " " GT_DEFAULT_PARAMS "),\n"
            "or cublas. The GPU is the one described by --gpu-name/--cc/--sms (all three), else GPU 0.\n"
            "--align is the pointers' alignment in bytes (default 16); leading dimensions default to the minimum.\n");
}

static int parse(int argc, char **argv, args *a)
{
    memset(a, 0, sizeof *a);
    gemmtune_options_init(&a->opt);
    struct { const char *name; const char **dst; } opts[] = {
        {"--shape", &a->shape}, {"--layout", &a->layout}, {"--gpu-name", &a->gpu_name}, {"--cc", &a->cc},
        {"--sms", &a->sms}, {"--db", &a->opt.db_path}, {"--json", &a->opt.json_path}, {"--align", &a->align},
        {"--lda", &a->lda}, {"--ldb", &a->ldb}, {"--ldc", &a->ldc}, {"--fallback", &a->fallback}};
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return usage(stdout), 1;
        size_t j = 0;
        while (j < sizeof opts / sizeof opts[0] && strcmp(argv[i], opts[j].name)) ++j;
        if (j == sizeof opts / sizeof opts[0] || i + 1 == argc) {
            fprintf(stderr, "gemmtune explain: %s '%s'\n", i + 1 == argc && j < sizeof opts / sizeof opts[0]
                    ? "missing value after" : "unknown option", argv[i]);
            return usage(stderr), 2;
        }
        *opts[j].dst = argv[++i];
    }
    if (!a->shape) return fprintf(stderr, "gemmtune explain: --shape MxNxK is required\n"), 2;
    if (a->opt.db_path && a->opt.json_path) return fprintf(stderr, "gemmtune explain: --db or --json, not both\n"), 2;
    if ((a->gpu_name || a->cc || a->sms) && !(a->gpu_name && a->cc && a->sms))
        return fprintf(stderr, "gemmtune explain: --gpu-name, --cc and --sms go together\n"), 2;
    return 0;
}

/* The GPU from the flags (limits from the arch table), else from device 0. */
static int device_id(const args *a, gt_device_id *dev)
{
    memset(dev, 0, sizeof *dev);
    if (a->gpu_name) {
        int maj, min, n = 0;
        char arch[16], err[256];
        long sms;
        if (sscanf(a->cc, "%d.%d%n", &maj, &min, &n) != 2 || a->cc[n] || maj < 0 || min < 0 || min > 9)
            return fprintf(stderr, "gemmtune explain: --cc '%s': want MAJOR.MINOR such as 9.0\n", a->cc), 2;
        if (gt_cli_parse_int("--sms", a->sms, 100000, &sms, err, sizeof err))
            return fprintf(stderr, "gemmtune explain: %s\n", err), 2;
        snprintf(arch, sizeof arch, "sm_%d%d", maj, min);
        if (!gt_limits_for_arch(arch, &dev->lim))
            return fprintf(stderr, "gemmtune explain: compute capability %s is not supported (sm_70 and newer)\n",
                           a->cc), 2;
        snprintf(dev->name, sizeof dev->name, "%s", a->gpu_name);
        dev->lim.sm_count = (int)sms;
        return 0;
    }
    struct cudaDeviceProp p;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0 || cudaGetDeviceProperties(&p, 0) != cudaSuccess)
        return fprintf(stderr, "gemmtune explain: no GPU here: describe one with --gpu-name, --cc and --sms\n"), 1;
    snprintf(dev->name, sizeof dev->name, "%.127s", p.name);
    dev->lim = (gt_limits){p.major, p.minor, p.maxThreadsPerBlock, (int)p.sharedMemPerBlock,
                           (int)p.sharedMemPerBlockOptin, p.regsPerBlock, 255, p.multiProcessorCount};
    return 0;
}

/* The call: shape, layout, leading dimensions (default: minimal), alignment. */
static int make_call(const args *a, gt_call *c)
{
    gt_shape *s = NULL;
    char err[256];
    long v[4] = {16, 0, 0, 0};
    const char *txt[4] = {a->align, a->lda, a->ldb, a->ldc}, *names[4] = {"--align", "--lda", "--ldb", "--ldc"};
    memset(c, 0, sizeof *c);
    if (gt_cli_parse_sizes(a->shape, &s, err, sizeof err) != 1) {
        if (s) snprintf(err, sizeof err, "--shape takes one MxNxK");
        free(s);
        return fprintf(stderr, "gemmtune explain: %s\n", err), 2;
    }
    c->shape = *s;
    free(s);
    if (a->layout && gt_layout_parse(a->layout, &c->shape.ta, &c->shape.tb))
        return fprintf(stderr, "gemmtune explain: --layout '%s': want nn, nt, tn or tt\n", a->layout), 2;
    for (int i = 0; i < 4; ++i)
        if (txt[i] && gt_cli_parse_int(names[i], txt[i], 1L << 30, &v[i], err, sizeof err))
            return fprintf(stderr, "gemmtune explain: %s\n", err), 2;
    if (v[0] > 16 || (v[0] & (v[0] - 1)))
        return fprintf(stderr, "gemmtune explain: --align %ld: want 1, 2, 4, 8 or 16\n", v[0]), 2;
    const gt_shape *sh = &c->shape;
    c->lda = v[1] ? v[1] : (sh->ta ? sh->m : sh->k);
    c->ldb = v[2] ? v[2] : (sh->tb ? sh->k : sh->n);
    c->ldc = v[3] ? v[3] : sh->n;
    if (c->lda < (sh->ta ? sh->m : sh->k) || c->ldb < (sh->tb ? sh->k : sh->n) || c->ldc < sh->n)
        return fprintf(stderr, "gemmtune explain: a leading dimension is smaller than its row\n"), 2;
    c->align_a = c->align_b = c->align_c = (int)v[0];
    return 0;
}

static void print_choice(const gt_device_id *dev, const gt_call *c, const gt_winner_set *set, const gt_choice *ch)
{
    char line[1024];
    int model = 0;
    gt_gpu_model mine = {.cc_major = dev->lim.cc_major, .cc_minor = dev->lim.cc_minor, .sm_count = dev->lim.sm_count};
    snprintf(mine.name, sizeof mine.name, "%s", dev->name);
    for (int i = 0; i < set->n; ++i) {
        gt_gpu_model theirs = gt_winner_model(&set->rows[i]);
        model += gt_gpu_model_equal(&mine, &theirs);
    }
    printf("gpu:      %s (cc %d.%d, %d SMs)\n", dev->name, dev->lim.cc_major, dev->lim.cc_minor, dev->lim.sm_count);
    printf("call:     %dx%dx%d %s row-major, lda=%lld ldb=%lld ldc=%lld, %d-byte aligned\n", c->shape.m, c->shape.n,
           c->shape.k, gt_layout_name(c->shape.ta, c->shape.tb), c->lda, c->ldb, c->ldc, c->align_a);
    printf("winners:  %d stored, %d for this GPU model\n", set->n, model);
    gt_loader_describe(ch, set->rows, line, sizeof line);
    printf("rule:     %s\n", line);
    if (ch->row >= 0) {
        const gt_winner *w = &set->rows[ch->row];
        printf("tuned:    %dx%dx%d %s on %s: %.1f TFLOPS", w->shape.m, w->shape.n, w->shape.k,
               gt_layout_name(w->shape.ta, w->shape.tb), w->gpu_name, w->tflops);
        if (w->ratio > 0) printf(", %.2fx cuBLAS", w->ratio);
        printf("\n");
    }
    gt_loader_kernel_text(ch->family, &ch->params, line, sizeof line);
    printf("kernel:   %s\n", line);
}

int gt_cmd_explain(int argc, char **argv)
{
    args a;
    gt_device_id dev;
    gt_call call;
    gt_winner_set set;
    char err[1024];
    int rc = parse(argc, argv, &a);
    if (rc) return rc == 1 ? 0 : rc;
    if ((rc = device_id(&a, &dev)) || (rc = make_call(&a, &call))) return rc;
    if (a.fallback) {
        setenv("GEMMTUNE_FALLBACK", a.fallback, 1);
        a.opt.fallback = GEMMTUNE_FALLBACK_ENV;
    }
    gemmtune_fallback fb;
    if (gt_loader_fallback(a.opt.fallback, &fb, err, sizeof err))
        return fprintf(stderr, "gemmtune explain: %s\n", err), 2;
    gemmtune_status st = gt_loader_winners(&a.opt, &set, NULL, err, sizeof err);
    if (st) return fprintf(stderr, "gemmtune explain: %s\n", err), 1;
    gt_serve_model model;
    if (gt_serve_model_get(&model, err, sizeof err)) return fprintf(stderr, "gemmtune explain: %s\n", err), 2;
    gt_choice ch = gt_loader_select(set.rows, set.n, &dev, &call, fb, &model);
    print_choice(&dev, &call, &set, &ch);
    gt_loader_set_free(&set);
    return 0;
}
