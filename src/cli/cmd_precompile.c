/* gemmtune precompile: fill a database's cubin cache with what a sweep would compile, on a machine with no GPU
 * (tuner/ahead.c plans the sweep for --arch; the sweep's compile pool compiles and caches), so that the sweep on a
 * GPU node compiles nothing. Tested by tests/test_cli_plan.c. */
#include "ahead.h"
#include "cli.h"
#include "cli_db.h"
#include "cli_plan.h"
#include "options.h"
#include "term.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gemmtune precompile [options]\n\n"
            "Compiles, with NVRTC and no GPU, every kernel a sweep (gemmtune tune) of the same sizes, layouts,\n"
            "families and math class would compile for GPUs of --arch, and stores the cubins in the database's\n"
            "cubin cache: the sweep then compiles nothing. Run it on CPU machines (a laptop, CI, a cluster's CPU\n"
            "nodes) before the GPUs tune (docs/CLUSTER.md). A kernel depends on the family's parameters, the\n"
            "layout, whether it runs a batch and, for multistage and tf32x3wg, whether the shape is whole tiles\n"
            "(a variant without edge code, faster to compile), so without --sizes the whole default space is\n"
            "compiled in both variants.\n\n"
            "A cached cubin is used only by the user who cached it: each carries a MAC under this user's key,\n"
            "$XDG_CONFIG_HOME/gemmtune/cache.key (~/.config/gemmtune/cache.key), made on first use. The GPU node\n"
            "trusts these cubins only when it reads the same key (the same user with a shared home, or the same\n"
            "XDG_CONFIG_HOME) and runs the same NVRTC (CUDA toolkit) version; otherwise it compiles them again.\n\n");
    gt_cli_usage(out, GT_V_PRECOMPILE);
    fprintf(out, "\nExit status: 0 done, 1 a kernel failed to compile or the database could not be written,\n"
                 "2 bad arguments (no --arch on a machine without a GPU, an unknown architecture, bad sizes).\n");
}

typedef struct {
    gt_cli_args a;
    char *families[GT_CLI_MAX_FAMILIES];
    char db[4096], arch[16];
    gt_shape any;
    gt_tune_opts o;
    int sms;
} pre_args;

/* The options into the plan's. 0, or -1 with err (a bad argument). */
static int to_opts(pre_args *p, char *err, size_t errlen)
{
    if (p->a.npos) return snprintf(err, errlen, "unexpected argument '%s'", p->a.pos[0]), -1;
    if (gt_cli_plan_opts(&p->a, &p->o, p->families, err, errlen) < 0) return -1;
    const int gpu = p->a.gpu.n ? p->a.gpu.v[0] : 0;
    if (gt_cli_plan_arch(p->a.arch, gpu, p->arch, sizeof p->arch, &p->sms, err, errlen) < 0) return -1;
    if (gt_cli_db_path(p->a.db, p->db, sizeof p->db, err, errlen) < 0) return -1;
    p->any = gt_ahead_any_shape();
    p->o.shapes = p->a.sizes.n ? p->a.sizes.v : &p->any;
    p->o.nshapes = p->a.sizes.n ? p->a.sizes.n : 1;
    p->o.db_path = p->db;
    return 0;
}

static void summary(const pre_args *p, const gt_ahead_summary *s)
{
    gt_term_printf(stdout, "precompiled for %s into %s\n", p->arch, p->db);
    if (p->a.sizes.n)
        printf("  %d candidates over %d (shape, layout) pair%s", s->candidates, s->shapes, s->shapes == 1 ? "" : "s");
    else
        printf("  %d candidates: the default space in %d layout%s (no batches; --sizes with a batch adds its kernels)",
               s->candidates, s->shapes, s->shapes == 1 ? "" : "s");
    printf(", %d distinct sources\n  %d compiled, %d already cached, %d failed, %.1f s (%d compile thread%s)\n",
           s->sources, s->compiled, s->cached, s->failed, s->seconds, p->o.jobs, p->o.jobs == 1 ? "" : "s");
    if (s->device) printf("  %d lists of candidates are asked of the GPU at run time: nothing to compile for them\n", s->device);
    for (int i = 0; i < s->failed && i < GT_AHEAD_ERRORS; ++i) gt_term_printf(stderr, "gemmtune: %s\n", s->errors[i]);
    if (s->failed > GT_AHEAD_ERRORS) fprintf(stderr, "gemmtune: ... and %d more\n", s->failed - GT_AHEAD_ERRORS);
}

int gt_cmd_precompile(int argc, char **argv)
{
    pre_args p = {0};
    char err[1024] = "";
    int rc = 2;
    gt_ahead_summary sum;
    gt_cli_args_init(&p.a);
    gt_tune_defaults(&p.o);
    const int c = gt_cli_parse(GT_V_PRECOMPILE, argc, argv, &p.a, err, sizeof err);
    if (c > 0) {
        usage(stdout);
        rc = 0;
    } else if (c < 0 || to_opts(&p, err, sizeof err) < 0) {
        gt_term_printf(stderr, "gemmtune precompile: %s\n", err);
    } else if (gt_db_check_writable(p.db, err, sizeof err) < 0 ||
               gt_ahead_run(&p.o, &(gt_ahead_opts){.arch = p.arch, .sms = p.sms, .compile = 1, .general = !p.a.sizes.n},
                            &sum, err, sizeof err) < 0) {
        gt_term_printf(stderr, "gemmtune precompile: %s\n", err);
        rc = 1;
    } else {
        summary(&p, &sum);
        rc = sum.failed ? 1 : 0;
    }
    gt_cli_args_free(&p.a);
    for (int i = 0; i < p.o.nfamilies; ++i) free(p.families[i]);
    return rc;
}
