/* gemmtune explain: which selection rule fires for a call and which kernel the loader would run (src/lib/gemmtune.h).
 * Runs the loader's own selection (src/lib/loader_select.c) on the stored winners; no kernel is loaded, and no GPU
 * is needed: the GPU is device --gpu N, a stored model (--gpu-model, --arch, or the only one stored), or one
 * described with --gpu-model/--cc/--sms. Tested by tests/test_loader.c (explain_*) and tests/test_cli_db.c. */
#include "cli.h"
#include "cli_db.h"
#include "device.h"
#include "loader.h"
#include "measure.h"
#include "options.h"
#include "term.h"

#include <cuda_runtime_api.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A message on stderr, data in it escaped (src/cli/term.h). Returns 0. */
static int say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gemmtune explain: ", stderr);
    gt_term_vprintf(stderr, fmt, ap);
    va_end(ap);
    return 0;
}

static void usage(FILE *out)
{
    const char *params;
    const gt_family *builtin = gt_family_builtin(&params);
    fprintf(out, "usage: gemmtune explain --shape MxNxK [options]\n\n"
                 "Says which rule of the runtime loader fires for a row-major call C[MxN] = op(A)[MxK] op(B)[KxN]\n"
                 "and which kernel it would run: exact (the winner stored for this shape), reuse (a tuned neighbour's,\n"
                 "where the serving model predicts it beats cuBLAS), cublas, or default (built-in %s),\n"
                 "with the reason no tuned kernel was served, and why a stored row for this very shape was passed\n"
                 "over. Needs no GPU. The GPU is, in\n"
                 "this order: the one described by --gpu-model NAME --cc X.Y --sms N; the stored model --gpu-model\n"
                 "names; the stored model of --arch's compute capability; CUDA device --gpu N; device 0 when this\n"
                 "machine has a GPU; else the database's only GPU model. The first line says which it used.\n\n",
            builtin ? builtin->name : "none");
    gt_cli_usage(out, GT_V_EXPLAIN);
}

/* 0, -1 after --help, or an exit status after a message. */
static int parse(int argc, char **argv, gt_cli_args *a, gemmtune_options *opt)
{
    char err[1024];
    int rc = gt_cli_parse(GT_V_EXPLAIN, argc, argv, a, err, sizeof err);
    if (rc == 1) return usage(stdout), -1;
    if (rc == 0 && a->npos) rc = -1, snprintf(err, sizeof err, "unexpected argument '%s'", a->pos[0]);
    if (rc == 0 && !a->shape.n) rc = -1, snprintf(err, sizeof err, "--shape MxNxK is required");
    if (rc == 0 && a->db && a->json) rc = -1, snprintf(err, sizeof err, "--db or --json, not both");
    if (rc == 0 && (a->cc || a->sms) && !(a->gpu_model && a->cc && a->sms))
        rc = -1, snprintf(err, sizeof err, "--gpu-model, --cc and --sms go together to describe a GPU");
    if (rc == 0 && (!!a->gpu.n + !!a->gpu_model + !!a->arch) > 1)
        rc = -1, snprintf(err, sizeof err, "name the GPU one way: --gpu N, --gpu-model NAME or --arch sm_XY");
    if (rc < 0) return say("%s\n", err), 2;
    gemmtune_options_init(opt);
    opt->db_path = a->db;
    opt->json_path = a->json;
    return 0;
}

/* The GPU described on the command line: limits from the arch table. */
static int described(const gt_cli_args *a, gt_device_id *dev, char *how, size_t howlen)
{
    int maj, min, n = 0;
    char known[200];
    if (sscanf(a->cc, "%d.%d%n", &maj, &min, &n) != 2 || a->cc[n] || maj < 0 || min < 0 || min > 9)
        return say("--cc '%s': want MAJOR.MINOR such as 9.0\n", a->cc), 2;
    gt_gpu_model m = {.cc_major = maj, .cc_minor = min, .sm_count = (int)a->sms};
    snprintf(m.name, sizeof m.name, "%s", a->gpu_model);
    gt_arch_list(known, sizeof known);
    if (!gt_device_id_of(&m, dev))
        return say("compute capability %s is no architecture this gemmtune knows (%s)\n", a->cc, known), 2;
    snprintf(how, howlen, "as described by --gpu-model, --cc and --sms");
    return 0;
}

/* A stored model as the device: its name and SM count, limits from its compute capability's table. */
static int from_row(const gt_winner *w, gt_device_id *dev)
{
    const gt_gpu_model m = gt_winner_model(w);
    if (!gt_device_id_of(&m, dev))
        return say("%s has compute capability %d.%d, which this gemmtune has no limits "
                       "for\n", w->gpu_name, w->cc_major, w->cc_minor), 1;
    return 0;
}

/* The distinct stored models whose name contains name (NULL: any) and whose cc is cc (< 0: any); a model whose
 * whole name is name wins alone. Their first rows go to first[]; *list names them all. Returns how many. */
static int models(const gt_winner_set *set, const char *name, int cc, int *first, char *list, size_t listlen)
{
    int n = 0, exact = -1;
    size_t used = 0;
    list[0] = 0;
    for (int i = 0; i < set->n; ++i) {
        const gt_winner *w = &set->rows[i];
        int seen = 0;
        for (int j = 0; j < n && !seen; ++j) seen = gt_winner_same_model(&set->rows[first[j]], w);
        if (seen || (name && !strcasestr(w->gpu_name, name)) || (cc >= 0 && w->cc_major * 10 + w->cc_minor != cc))
            continue;
        if (name && !strcasecmp(w->gpu_name, name)) exact = i;
        if (used < listlen)
            used += (size_t)snprintf(list + used, listlen - used, "%s%s (cc %d.%d, %d SMs)", n ? "; " : "",
                                     w->gpu_name, w->cc_major, w->cc_minor, w->sm_count);
        first[n++] = i;
    }
    if (exact >= 0) first[0] = exact, n = 1;
    return n;
}

/* CUDA device n of this machine. */
static int device(int n, gt_device_id *dev, char *how, size_t howlen)
{
    struct cudaDeviceProp p;
    char err[400];
    gt_gpu_model m;
    if (gt_cli_device_model(n, &m, err, sizeof err) < 0 || cudaGetDeviceProperties(&p, n) != cudaSuccess)
        return say("%s\n", err), 1;
    snprintf(dev->name, sizeof dev->name, "%s", m.name);
    dev->lim = gt_device_limits(&p);
    snprintf(how, howlen, "CUDA device %d of this machine", n);
    return 0;
}

/* The GPU to explain for (see usage). 0, or an exit status after a message. */
static int choose_gpu(const gt_cli_args *a, const gt_winner_set *set, gt_device_id *dev, char *how, size_t howlen)
{
    int *first = calloc((size_t)set->n + 1, sizeof *first), n, cc = -1, maj, min;
    char list[1500], why[200];
    memset(dev, 0, sizeof *dev);
    if (a->gpu_model && a->cc) return free(first), described(a, dev, how, howlen);
    if (a->arch && (gt_arch_parse(a->arch, &maj, &min, NULL) < 0 || !gt_limits_for_arch(a->arch, &dev->lim))) {
        gt_arch_list(list, sizeof list);
        return free(first), say("unknown architecture '%s' (want sm_XY or sm_XYZ, one of %s)\n", a->arch, list), 2;
    }
    if (a->arch) cc = maj * 10 + min;
    if (a->gpu.n) return free(first), device(a->gpu.v[0], dev, how, howlen) ? 2 : 0; /* no such device: bad --gpu */
    if (!a->gpu_model && !a->arch && gt_measure_device_count(why, sizeof why) > 0)
        return free(first), device(0, dev, how, howlen);
    n = models(set, a->gpu_model, cc, first, list, sizeof list);
    int rc = 0;
    if (n == 1) {
        rc = from_row(&set->rows[first[0]], dev);
        snprintf(how, howlen, "%s", a->gpu_model ? "the stored model --gpu-model names"
                                    : a->arch    ? "the only stored model of that architecture"
                                                 : "no GPU here: the only GPU model in the database");
    } else if (n == 0 && a->arch) {
        snprintf(dev->name, sizeof dev->name, "unnamed %s GPU", a->arch);
        snprintf(how, howlen, "no stored model of %s: only the fallback can apply", a->arch);
    } else if (n == 0) {
        rc = 1;
        if (a->gpu_model) say("no stored GPU model matches '%s'\n", a->gpu_model);
        else say("no GPU here (%s), and the database holds no winners: describe a GPU "
                             "with --gpu-model NAME --cc X.Y --sms N, or --arch sm_XY\n", why);
    } else if (a->gpu_model || a->arch) {
        rc = 2;
        say("%d stored GPU models match: %s; name one with --gpu-model NAME\n", n, list);
    } else {
        rc = 1;
        say("no GPU here (%s), and the database holds %d GPU models: %s; name one with "
                "--gpu-model NAME\n", why, n, list);
    }
    free(first);
    return rc;
}

/* The call: shape, layout, leading dimensions (default: minimal), alignment. */
static int make_call(const gt_cli_args *a, gt_call *c)
{
    memset(c, 0, sizeof *c);
    c->shape = a->shape.v[0];
    if (a->layout.n) c->shape.ta = a->layout.v[0] >> 1, c->shape.tb = a->layout.v[0] & 1;
    long align = a->align ? a->align : 16;
    if (align & (align - 1)) return say("--align %ld: want 1, 2, 4, 8 or 16\n", align), 2;
    const gt_shape *sh = &c->shape;
    c->lda = a->lda ? a->lda : (sh->ta ? sh->m : sh->k);
    c->ldb = a->ldb ? a->ldb : (sh->tb ? sh->k : sh->n);
    c->ldc = a->ldc ? a->ldc : sh->n;
    if (c->lda < (sh->ta ? sh->m : sh->k) || c->ldb < (sh->tb ? sh->k : sh->n) || c->ldc < sh->n)
        return say("a leading dimension is smaller than its row\n"), 2;
    c->align_a = c->align_b = c->align_c = (int)align;
    return 0;
}

/* Why a stored row cannot serve this call on this device (as the loader's selection judges it); 0 when it can. */
static int unusable(const gt_winner *w, const gt_device_id *dev, const gt_call *call, char *why, size_t n)
{
    const gt_family *f = gt_family_find(w->family);
    gt_params p;
    char msg[256] = "";
    if (!f) return snprintf(why, n, "family '%s' is unknown to this gemmtune", w->family), 1;
    if (gt_params_parse(f, w->params, &p, msg, sizeof msg)) return snprintf(why, n, "its parameters: %s", msg), 1;
    if (f->legal && !f->legal(&p, &dev->lim, msg, sizeof msg))
        return snprintf(why, n, "not a legal kernel on this GPU: %s", msg), 1;
    if (!gt_family_params_for_call(f, &p, call, &dev->lim, &p)) /* as stored, or its variant for the call */
        return snprintf(why, n, "cannot run this call (pointer alignment %d bytes, lda=%lld ldb=%lld ldc=%lld%s)",
                        call->align_a, call->lda, call->ldb, call->ldc, f->specialize ? ", or its tiles" : ""), 1;
    return 0;
}

/* What the rule line alone does not say: a stored row for this very shape that was passed over, or that this GPU
 * model has no shape tuned in the call's layout. */
static void print_notes(const gt_device_id *dev, const gt_call *c, const gt_winner_set *set, const gt_choice *ch)
{
    char why[400], lays[16] = "";
    int model = 0, in_layout = 0, seen[4] = {0};
    for (int i = 0; i < set->n; ++i) {
        const gt_winner *w = &set->rows[i];
        if (!gt_winner_on_device(w, dev)) continue;
        model++;
        seen[w->shape.ta * 2 + w->shape.tb] = 1;
        in_layout += w->shape.ta == c->shape.ta && w->shape.tb == c->shape.tb;
        if (ch->rule != GT_RULE_EXACT && w->shape.m == c->shape.m && w->shape.n == c->shape.n &&
            w->shape.k == c->shape.k && w->shape.ta == c->shape.ta && w->shape.tb == c->shape.tb &&
            unusable(w, dev, c, why, sizeof why))
            gt_term_printf(stdout, "skipped:  the stored winner of this very shape, %s %s: %s\n", w->family,
                           w->params, why);
    }
    for (int l = 0; l < 4; ++l)
        if (seen[l]) snprintf(lays + strlen(lays), sizeof lays - strlen(lays), "%s%s", lays[0] ? ", " : "",
                              gt_layout_name(l >> 1, l & 1));
    if (!model) printf("note:     no winner is stored for this GPU model\n");
    else if (!in_layout)
        gt_term_printf(stdout, "note:     no tuned shape in layout %s for this GPU model; tuned layouts: %s\n",
                       gt_layout_name(c->shape.ta, c->shape.tb), lays);
}

static void print_choice(const gt_device_id *dev, const char *how, const gt_call *c, const gt_winner_set *set,
                         const gt_choice *ch)
{
    char line[1024];
    int model = 0;
    for (int i = 0; i < set->n; ++i) model += gt_winner_on_device(&set->rows[i], dev);
    gt_term_printf(stdout, "gpu:      %s (cc %d.%d, %d SMs): %s\n", dev->name, dev->lim.cc_major, dev->lim.cc_minor,
                   dev->lim.sm_count, how);
    char dims[48];
    printf("call:     %s %s row-major, lda=%lld ldb=%lld ldc=%lld, %d-byte aligned\n",
           gt_shape_dims(&c->shape, dims, sizeof dims), gt_layout_name(c->shape.ta, c->shape.tb), c->lda, c->ldb, c->ldc,
           c->align_a);
    printf("winners:  %d stored, %d for this GPU model\n", set->n, model);
    gt_loader_describe(ch, set->rows, line, sizeof line);
    gt_term_printf(stdout, "rule:     %s\n", line);
    print_notes(dev, c, set, ch);
    if (ch->row >= 0) {
        const gt_winner *w = &set->rows[ch->row];
        gt_term_printf(stdout, "tuned:    %s %s on %s: %.1f TFLOPS", gt_shape_dims(&w->shape, dims, sizeof dims),
                       gt_layout_name(w->shape.ta, w->shape.tb), w->gpu_name, w->tflops);
        if (w->ratio > 0) printf(", %.2fx cuBLAS", w->ratio);
        printf("\n");
    }
    gt_loader_kernel_text(ch->family, &ch->params, line, sizeof line);
    gt_term_printf(stdout, "kernel:   %s\n", line);
}

int gt_cmd_explain(int argc, char **argv)
{
    gt_cli_args a;
    gemmtune_options opt;
    gt_device_id dev;
    gt_call call;
    gt_winner_set set = {0};
    gemmtune_fallback fb;
    char err[1024], how[200];
    gt_cli_args_init(&a);
    int rc = parse(argc, argv, &a, &opt);
    if (rc < 0) return gt_cli_args_free(&a), 0; /* --help */
    if (rc == 0 && (rc = make_call(&a, &call)) == 0 && a.fallback) {
        setenv("GEMMTUNE_FALLBACK", a.fallback, 1);
        opt.fallback = GEMMTUNE_FALLBACK_ENV;
    }
    if (rc == 0 && gt_loader_fallback(opt.fallback, &fb, err, sizeof err))
        rc = 2, say("%s\n", err);
    if (rc == 0 && gt_loader_winners(&opt, &set, NULL, err, sizeof err))
        rc = 1, say("%s\n", err);
    gt_serve_model model;
    if (rc == 0 && gt_serve_model_get(&model, err, sizeof err))
        rc = 2, say("%s\n", err);
    if (rc == 0 && (rc = choose_gpu(&a, &set, &dev, how, sizeof how)) == 0) {
        gt_choice ch = gt_loader_select(set.rows, set.n, &dev, &call, fb, &model);
        print_choice(&dev, how, &call, &set, &ch);
    }
    gt_loader_set_free(&set);
    gt_cli_args_free(&a);
    return rc;
}
