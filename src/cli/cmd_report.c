/* gemmtune report: a text summary per GPU model, the per-shape winner vs cuBLAS table, the regret table of the
 * serving rules (src/cli/regret.h), and with -o a gnuplot chart (SVG or PNG) of TFLOPS per shape.
 * Tested by tests/test_cli_db.c (text, regret numbers, a PNG and an SVG written through gnuplot). */
#include "cli.h"
#include "cli_db.h"
#include "db.h"
#include "files.h"
#include "options.h"
#include "regret.h"
#include "table.h"
#include "term.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
    gt_winner *v;
    int n, cap, oom;
} wlist;

static int push(const gt_winner *w, void *ctx)
{
    wlist *l = ctx;
    if (l->n == l->cap) {
        gt_winner *p = realloc(l->v, (l->cap = l->cap ? 2 * l->cap : 64) * sizeof *p);
        if (!p) return l->oom = 1;
        l->v = p;
    }
    l->v[l->n++] = *w;
    return 0;
}

static const char *shape_text(const gt_shape *s, char *buf, size_t n)
{
    char dims[48];
    snprintf(buf, n, "%s %s", gt_shape_dims(s, dims, sizeof dims), gt_layout_name(s->ta, s->tb));
    return buf;
}

typedef struct {
    int trials, ok;
} tcount;

static int count_trials(const gt_trial_row *t, void *ctx)
{
    tcount *c = ctx;
    c->trials++;
    c->ok += t->status == GT_ST_OK;
    return 0;
}

/* One paragraph per GPU model: shapes, trials, geometric-mean ratio to cuBLAS, best and worst shape. */
static int print_summary(gt_db *db, const wlist *l, const gt_winner_filter *f, char *err, size_t errlen)
{
    for (int i = 0; i < l->n; ++i) {
        if (i && gt_winner_same_model(&l->v[i], &l->v[i - 1])) continue;
        int shapes = 0, rated = 0, best = -1, worst = -1;
        double logsum = 0;
        for (int j = i; j < l->n && gt_winner_same_model(&l->v[j], &l->v[i]); ++j, ++shapes) {
            const gt_winner *w = &l->v[j];
            if (w->ratio <= 0) continue;
            rated++, logsum += log(w->ratio);
            if (best < 0 || w->ratio > l->v[best].ratio) best = j;
            if (worst < 0 || w->ratio < l->v[worst].ratio) worst = j;
        }
        tcount c = {0, 0};
        const gt_gpu_model model = gt_winner_model(&l->v[i]);
        gt_winner_filter tf = *f;
        tf.model = &model; /* exactly this model's trials */
        if (gt_db_trials(db, &tf, count_trials, &c, err, errlen) < 0) return -1;
        char b1[64], b2[64];
        gt_term_printf(stdout, "%s (cc %d.%d, %d SMs): %d shape%s tuned, %d trials stored (%d ok)\n", l->v[i].gpu_name,
                       l->v[i].cc_major, l->v[i].cc_minor, l->v[i].sm_count, shapes, shapes == 1 ? "" : "s", c.trials,
                       c.ok);
        if (rated)
            printf("  vs cuBLAS: geometric mean %.3fx over %d shape%s; best %.3fx at %s, worst %.3fx at %s\n",
                   exp(logsum / rated), rated, rated == 1 ? "" : "s", l->v[best].ratio,
                   shape_text(&l->v[best].shape, b1, sizeof b1), l->v[worst].ratio,
                   shape_text(&l->v[worst].shape, b2, sizeof b2));
        else printf("  vs cuBLAS: no baseline stored\n");
    }
    return 0;
}

static const gt_col shape_cols[] = {{"gpu", NULL, NULL},          {"shape", NULL, NULL},
                                     {"TFLOPS", NULL, "%.2f"},      {"cuBLAS", NULL, "%.2f"},
                                     {"ratio", NULL, "%.3fx"},      {"winner", NULL, NULL}};

/* The winner of each shape against cuBLAS; the kernel's parameters last and whole. */
static int print_shapes(const wlist *l)
{
    gt_table *t = gt_table_new(shape_cols, 6);
    char b[64], fam[300];
    for (int i = 0; t && i < l->n; ++i) {
        const gt_winner *w = &l->v[i];
        cJSON *o = gt_table_row(t);
        if (!o) break;
        snprintf(fam, sizeof fam, "%s %s", w->family, w->params);
        cJSON_AddStringToObject(o, "gpu", w->gpu_name);
        cJSON_AddStringToObject(o, "shape", shape_text(&w->shape, b, sizeof b));
        cJSON_AddNumberToObject(o, "TFLOPS", w->tflops);
        if (w->cublas_tflops > 0) cJSON_AddNumberToObject(o, "cuBLAS", w->cublas_tflops);
        if (w->ratio > 0) cJSON_AddNumberToObject(o, "ratio", w->ratio);
        cJSON_AddStringToObject(o, "winner", fam);
    }
    printf("\n");
    int rc = t && cJSON_GetArraySize(t->rows) == l->n ? gt_table_print(t, "table", stdout) : -1;
    gt_table_free(t);
    return rc;
}

static const gt_col regret_cols[] = {
    {"gpu", NULL, NULL},          {"shape", NULL, NULL},           {"own_ms", "own ms", "%.4f"},
    {"served", NULL, NULL},       {"predicted", NULL, "%.3fx"},    {"here_ms", "here ms", "%.4f"},
    {"regret", NULL, NULL},       {"cublas_ms", "cuBLAS ms", "%.4f"}, {"kernel", "served kernel", NULL}};

/* What is served, as the table says it: "reuse of MxNxK ly (d=D)", "cuBLAS", or the rule's name. */
static const char *served_text(const gt_regret_row *r, char *buf, size_t n)
{
    char b[64];
    if (r->rule == GT_RULE_REUSE)
        snprintf(buf, n, "reuse of %s (d=%.3g)", shape_text(&r->picked.shape, b, sizeof b), r->distance);
    else if (r->rule == GT_RULE_CUBLAS) snprintf(buf, n, "cuBLAS");
    else snprintf(buf, n, "%s", gt_rule_name(r->rule));
    return buf;
}

static int add_regret_row(const gt_regret_row *r, void *ctx)
{
    char b[96], reg[48];
    const gt_winner *w = &r->self;
    cJSON *o = gt_table_row(ctx);
    if (!o) return 1;
    cJSON_AddStringToObject(o, "gpu", w->gpu_name);
    cJSON_AddStringToObject(o, "shape", shape_text(&w->shape, b, sizeof b));
    cJSON_AddNumberToObject(o, "own_ms", w->median_ms);
    cJSON_AddStringToObject(o, "served", served_text(r, b, sizeof b));
    if (r->rule == GT_RULE_REUSE) cJSON_AddNumberToObject(o, "predicted", r->predicted);
    if (r->served_ms > 0) cJSON_AddNumberToObject(o, "here_ms", r->served_ms);
    if (r->regret > 0) snprintf(reg, sizeof reg, "%+.1f%%", (r->regret - 1) * 100);
    else snprintf(reg, sizeof reg, "n/a (%s)", r->rule == GT_RULE_CUBLAS ? "no baseline" : "not measured here");
    cJSON_AddStringToObject(o, "regret", reg);
    if (w->cublas_ms > 0) cJSON_AddNumberToObject(o, "cublas_ms", w->cublas_ms);
    if (r->rule == GT_RULE_REUSE) {
        char *text = malloc(strlen(r->picked.family) + strlen(r->picked.params) + 2);
        if (text) sprintf(text, "%s %s", r->picked.family, r->picked.params);
        if (text) cJSON_AddStringToObject(o, "kernel", text);
        free(text);
    }
    return 0;
}

static int print_regret(gt_db *db, const gt_winner_filter *f, const gt_serve_model *model, char *err, size_t errlen)
{
    printf("\nregret of the serving rules: each tuned shape served as if it were not tuned, by the loader's rules over\n"
           "the other tuned shapes of its GPU model (a neighbour's kernel where the serving model predicts it beats\n"
           "cuBLAS, else cuBLAS), against its own optimum; timed on this shape when stored\n");
    gt_table *t = gt_table_new(regret_cols, 9);
    if (!t) return snprintf(err, errlen, "out of memory"), -1;
    int rc = gt_regret_walk(db, f, model, add_regret_row, t, err, errlen);
    if (rc == 0) rc = gt_table_print(t, "table", stdout);
    gt_table_free(t);
    return rc;
}

/* Database text as chart text: only letters, digits, blanks and -_.,:+/()[] pass; anything else (quotes, `, @, $,
 * #, %, \, control bytes, non-ASCII) becomes '?'. Gnuplot reads its script as commands, so what came from a
 * database must carry nothing it could act on, whatever quoting surrounds it. */
static const char *chart_text(const char *s, char *out, size_t n)
{
    static const char ok[] = " -_.,:+/()[]";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && o + 1 < n; ++p)
        out[o++] = (*p < 0x80 && (isalnum(*p) || strchr(ok, *p))) ? (char)*p : '?';
    out[o] = '\0';
    return out;
}

/* gnuplot datablock line: "label" winner_tflops cublas_tflops ratio (NaN when absent); the GPU model joins the label
 * when the chart holds several. */
static void data_line(FILE *p, const gt_winner *w, int multi)
{
    char b[64], name[130];
    fprintf(p, "\"%s%s%s\" %.6g %s%.6g %.6g\n", shape_text(&w->shape, b, sizeof b), multi ? "  " : "",
            multi ? chart_text(w->gpu_name, name, sizeof name) : "", w->tflops, w->cublas_tflops > 0 ? "" : "NaN ",
            w->cublas_tflops > 0 ? w->cublas_tflops : 0, w->ratio > 0 ? w->ratio : 0);
}

/* The gnuplot script of the chart into *script (malloc'd). Horizontal bars, one pair per shape, first shape on top:
 * the shape labels are horizontal text beside the axis (no rotated text, which SVG renderers place differently),
 * however many shapes there are. The image goes to gnuplot's standard output: no path is ever in the script. */
static int chart_script(const wlist *l, int png, char **script, size_t *len)
{
    char name[130];
    int multi = 0;
    for (int i = 1; i < l->n; ++i) multi |= !gt_winner_same_model(&l->v[i], &l->v[0]);
    FILE *p = open_memstream(script, len);
    if (!p) return -1;
    fprintf(p, "set terminal %s size 1100,%d font 'sans,10'\nset output\nset title noenhanced\nset title ",
            png ? "pngcairo" : "svg", 150 + 34 * l->n);
    if (multi) fprintf(p, "'gemmtune: SGEMM TFLOPS per shape and GPU, tuned winner vs cuBLAS'");
    else fprintf(p, "'gemmtune: SGEMM TFLOPS per shape on %s (cc %d.%d, %d SMs), tuned winner vs cuBLAS'",
                 chart_text(l->v[0].gpu_name, name, sizeof name), l->v[0].cc_major, l->v[0].cc_minor, l->v[0].sm_count);
    fprintf(p, "\nset style fill solid 0.85 border -1\nset xlabel 'TFLOPS (2mnk / median time)'\nset xrange [0:*]\n"
               "set offsets 0, graph 0.1, 0, 0\nset yrange [%d.5:-0.5]\nset ytics noenhanced nomirror scale 0\n"
               "set grid xtics\nset key below center horizontal\nset bmargin 6\n$data << EOD\n", l->n - 1);
    for (int i = 0; i < l->n; ++i) data_line(p, &l->v[i], multi);
    fprintf(p, "EOD\nplot $data using (0):0:(0):2:($0-0.38):($0):ytic(1) with boxxyerror title 'gemmtune winner' "
               "lc rgb '#2f6fb3', '' using (0):0:(0):3:($0):($0+0.38) with boxxyerror title 'cuBLAS FP32' "
               "lc rgb '#b0b0b0', '' using (($2>$3||$3!=$3)?$2:$3):0:(($4>0)?sprintf('%%.2fx',$4):'') with labels left "
               "offset 0.6,0 font 'sans,9' notitle\n");
    return fclose(p) == 0 ? 0 : -1;
}

#define CHART_MAX (256u << 20) /* bytes of image taken from gnuplot */

/* Run gnuplot on script (from an unlinked temporary file, its standard input) and take its standard output, the
 * image, into *img (malloc'd, at most CHART_MAX bytes). 0, or -1 with err. */
static int run_gnuplot(const char *script, size_t len, char **img, size_t *n, char *err, size_t errlen)
{
    extern char **environ;
    int out[2] = {-1, -1}, st = 0;
    pid_t pid = -1;
    FILE *in = tmpfile();
    posix_spawn_file_actions_t fa;
    *img = NULL;
    if (!in || fwrite(script, 1, len, in) != len || fflush(in) || fseek(in, 0, SEEK_SET) || pipe2(out, O_CLOEXEC) < 0) {
        if (in) fclose(in);
        return snprintf(err, errlen, "cannot hand gnuplot its script: %s", strerror(errno)), -1;
    }
    char *argv[] = {"gnuplot", NULL};
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fileno(in), 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    int sp = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    fclose(in);
    close(out[1]);
    if (sp != 0) {
        close(out[0]);
        return snprintf(err, errlen, "gnuplot not found (%s): install it (`make deps` installs gnuplot-nox)",
                        strerror(sp)), -1;
    }
    char why[300] = "";
    *img = gt_file_read_fd(out[0], "gnuplot's output", CHART_MAX, n, why, sizeof why);
    close(out[0]); /* a gnuplot still writing (an image too big) gets SIGPIPE */
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (*img && *n > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
    free(*img), *img = NULL;
    if (why[0]) return snprintf(err, errlen, "%s", why), -1;
    return snprintf(err, errlen, "gnuplot could not draw the chart (see its message above)"), -1;
}

/* The chart, drawn by gnuplot and written to out by gt_file_write: nothing is left there when it fails. */
static int plot(const wlist *l, const char *out, int png, char *err, size_t errlen)
{
    char *script = NULL, *img = NULL;
    size_t len = 0, n = 0;
    if (chart_script(l, png, &script, &len) < 0) return free(script), snprintf(err, errlen, "out of memory"), -1;
    int rc = run_gnuplot(script, len, &img, &n, err, errlen);
    free(script);
    if (rc == 0) rc = gt_file_write(out, img, n, err, errlen);
    free(img);
    return rc;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: gemmtune report [options]\n\n"
                 "Prints a summary per GPU model (shapes, trials, ratio to cuBLAS), the winner of each shape against\n"
                 "cuBLAS, and a regret table: for each tuned shape, its own optimum against what the library would\n"
                 "serve it if the shape were not tuned (a tuned neighbour's kernel where the serving model predicts a\n"
                 "win, else cuBLAS), and cuBLAS. Needs no GPU; only reads the database.\n\n");
    gt_cli_usage(out, GT_V_REPORT);
}

/* -o must name an SVG or a PNG. */
static int chart_kind(const char *out, int *png, char *err, size_t errlen)
{
    const char *dot = out ? strrchr(out, '.') : NULL;
    if (!out) return 0;
    if (!dot || (strcmp(dot, ".svg") && strcmp(dot, ".png")))
        return snprintf(err, errlen, "-o %s: want a .svg or .png file name", out), -1;
    *png = !strcmp(dot, ".png");
    return 0;
}

/* Summary, shapes and regret tables, then the chart. 0 or -1 with err. */
static int report(gt_db *db, const char *path, const gt_cli_filter *cf, const char *out, int png, char *err,
                  size_t errlen)
{
    wlist l = {0};
    gt_serve_model model; /* the regret table's: checked before anything is printed */
    int rc = gt_serve_model_get(&model, err, errlen);
    if (rc == 0) rc = gt_db_winners(db, &cf->f, push, &l, err, errlen);
    if (rc == 0 && l.oom) rc = -1, snprintf(err, errlen, "out of memory");
    if (rc == 0 && !l.n)
        rc = -1, snprintf(err, errlen, "no winners stored in %.900s%s", path,
                          gt_cli_filter_any(cf) ? " match the filters" : "");
    if (rc == 0) {
        gt_term_printf(stdout, "gemmtune report: %s\n", path), printf("\n");
        rc = print_summary(db, &l, &cf->f, err, errlen);
    }
    if (rc == 0 && (print_shapes(&l) < 0 || print_regret(db, &cf->f, &model, err, errlen) < 0))
        rc = -1, snprintf(err + strlen(err), errlen - strlen(err), "%s", err[0] ? "" : "cannot write the output");
    if (rc == 0 && out) {
        fflush(stdout);
        rc = plot(&l, out, png, err, errlen);
        if (rc == 0) printf("\n"), gt_term_printf(stdout, "chart: %s\n", out);
    } else if (rc == 0) printf("\n(add -o report.svg or -o report.png for the chart)\n");
    free(l.v);
    return rc;
}

int gt_cmd_report(int argc, char **argv)
{
    char err[1024] = "", path[4096];
    int png = 0;
    gt_cli_args a;
    gt_cli_filter cf;
    gt_db *db = NULL;
    gt_cli_args_init(&a);
    int rc = gt_cli_parse(GT_V_REPORT, argc, argv, &a, err, sizeof err);
    if (rc == 1) return gt_cli_args_free(&a), usage(stdout), 0;
    if (rc == 0 && a.npos) rc = -1, snprintf(err, sizeof err, "unexpected argument '%s'", a.pos[0]);
    if (rc == 0) rc = chart_kind(a.out, &png, err, sizeof err);
    if (rc < 0) {
        gt_term_printf(stderr, "gemmtune report: %s\n", err);
        return gt_cli_args_free(&a), 2;
    }
    rc = gt_cli_open_reader(&a, &cf, path, sizeof path, &db, err, sizeof err);
    if (rc == 0 && report(db, path, &cf, a.out, png, err, sizeof err) < 0) rc = 1;
    gt_db_close(db);
    gt_cli_args_free(&a);
    if (rc) gt_term_printf(stderr, "gemmtune report: %s\n", err);
    return rc;
}
