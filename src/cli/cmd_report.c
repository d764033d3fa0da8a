/* gemmtune report: a text summary per GPU model, the per-shape winner vs cuBLAS table, the regret table of the
 * nearest-shape rule (db/regret.c), and with -o a gnuplot chart (SVG or PNG) of TFLOPS per shape.
 * Tested by tests/test_cli_db.c (text, regret numbers, a PNG and an SVG written through gnuplot). */
#include "cli.h"
#include "cli_db.h"
#include "db.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

static int same_model(const gt_winner *a, const gt_winner *b)
{
    return !strcmp(a->gpu_name, b->gpu_name) && a->cc_major == b->cc_major && a->cc_minor == b->cc_minor &&
           a->sm_count == b->sm_count;
}

static const char *shape_text(const gt_shape *s, char *buf, size_t n)
{
    snprintf(buf, n, "%dx%dx%d %s", s->m, s->n, s->k, gt_layout_name(s->ta, s->tb));
    return buf;
}

typedef struct {
    const gt_winner *model;
    int trials, ok;
} tcount;

static int count_trials(const gt_trial_row *t, void *ctx)
{
    tcount *c = ctx;
    if (strcmp(t->gpu_name, c->model->gpu_name) || t->cc_major != c->model->cc_major ||
        t->cc_minor != c->model->cc_minor || t->sm_count != c->model->sm_count)
        return 0;
    c->trials++;
    c->ok += !strcmp(t->status, "ok");
    return 0;
}

/* One paragraph per GPU model: shapes, trials, geometric-mean ratio to cuBLAS, best and worst shape. */
static int print_summary(gt_db *db, const wlist *l, const gt_winner_filter *f, char *err, size_t errlen)
{
    for (int i = 0; i < l->n; ++i) {
        if (i && same_model(&l->v[i], &l->v[i - 1])) continue;
        int shapes = 0, rated = 0, best = -1, worst = -1;
        double logsum = 0;
        for (int j = i; j < l->n && same_model(&l->v[j], &l->v[i]); ++j, ++shapes) {
            const gt_winner *w = &l->v[j];
            if (w->ratio <= 0) continue;
            rated++, logsum += log(w->ratio);
            if (best < 0 || w->ratio > l->v[best].ratio) best = j;
            if (worst < 0 || w->ratio < l->v[worst].ratio) worst = j;
        }
        tcount c = {&l->v[i], 0, 0};
        gt_winner_filter tf = *f;
        tf.gpu_name = l->v[i].gpu_name;
        if (gt_db_trials(db, &tf, count_trials, &c, err, errlen) < 0) return -1;
        char b1[64], b2[64];
        printf("%s (cc %d.%d, %d SMs): %d shape%s tuned, %d trials stored (%d ok)\n", l->v[i].gpu_name,
               l->v[i].cc_major, l->v[i].cc_minor, l->v[i].sm_count, shapes, shapes == 1 ? "" : "s", c.trials, c.ok);
        if (rated)
            printf("  vs cuBLAS: geometric mean %.3fx over %d shape%s; best %.3fx at %s, worst %.3fx at %s\n",
                   exp(logsum / rated), rated, rated == 1 ? "" : "s", l->v[best].ratio,
                   shape_text(&l->v[best].shape, b1, sizeof b1), l->v[worst].ratio,
                   shape_text(&l->v[worst].shape, b2, sizeof b2));
        else printf("  vs cuBLAS: no baseline stored\n");
    }
    return 0;
}

static void print_shapes(const wlist *l)
{
    char b[64];
    printf("\n%-24s %-20s %-44s %9s %9s %9s\n", "gpu", "shape", "winner", "TFLOPS", "cuBLAS", "ratio");
    for (int i = 0; i < l->n; ++i) {
        const gt_winner *w = &l->v[i];
        char fam[300], cub[32] = "n/a", rat[32] = "n/a";
        snprintf(fam, sizeof fam, "%s %s", w->family, w->params);
        if (w->cublas_tflops > 0) snprintf(cub, sizeof cub, "%.2f", w->cublas_tflops);
        if (w->ratio > 0) snprintf(rat, sizeof rat, "%.3fx", w->ratio);
        printf("%-24.24s %-20s %-44.44s %9.2f %9s %9s\n", w->gpu_name, shape_text(&w->shape, b, sizeof b), fam,
               w->tflops, cub, rat);
    }
}

static int print_regret_row(const gt_regret_row *r, void *ctx)
{
    (void)ctx;
    char b1[64], b2[64], pick[64] = "n/a", here[32] = "n/a", reg[48] = "n/a", cub[32] = "n/a";
    const gt_winner *w = &r->self;
    if (r->has_pick) snprintf(pick, sizeof pick, "%s", shape_text(&r->picked.shape, b2, sizeof b2));
    if (r->pick_ms > 0) snprintf(here, sizeof here, "%.4f", r->pick_ms);
    if (r->regret > 0) snprintf(reg, sizeof reg, "%+.1f%%", (r->regret - 1) * 100);
    if (!r->has_pick) snprintf(reg, sizeof reg, "n/a (no other shape)");
    else if (r->pick_ms < 0) snprintf(reg, sizeof reg, "n/a (not measured here)");
    if (w->cublas_ms > 0) snprintf(cub, sizeof cub, "%.4f", w->cublas_ms);
    printf("%-24.24s %-20s %10.4f  %-20s %-30.30s %10s  %-24s %10s\n", w->gpu_name, shape_text(&w->shape, b1, sizeof b1),
           w->median_ms, pick, r->has_pick ? r->picked.params : "", here, reg, cub);
    return 0;
}

static void print_regret_head(void)
{
    printf("\nregret of the nearest-shape rule: each tuned shape served by the nearest OTHER tuned shape's winner\n"
           "(same GPU model and layout, d = sum |log2 ratio| of m, n, k), timed on this shape when stored\n");
    printf("%-24s %-20s %10s  %-20s %-30s %10s  %-24s %10s\n", "gpu", "shape", "own ms", "nearest shape",
           "its winner", "here ms", "regret", "cuBLAS ms");
}

/* gnuplot datablock line: "label" winner_tflops cublas_tflops ratio (NaN when absent). */
static void data_line(FILE *p, const gt_winner *w, int multi_gpu)
{
    char label[200], b[64];
    shape_text(&w->shape, b, sizeof b);
    if (multi_gpu) snprintf(label, sizeof label, "%s\\n%s", b, w->gpu_name);
    else snprintf(label, sizeof label, "%s", b);
    for (char *c = label; *c; ++c)
        if (*c == '"') *c = '\'';
    fprintf(p, "\"%s\" %.6g %s%.6g %.6g\n", label, w->tflops, w->cublas_tflops > 0 ? "" : "NaN ",
            w->cublas_tflops > 0 ? w->cublas_tflops : 0, w->ratio > 0 ? w->ratio : 0);
}

static void gp_string(FILE *p, const char *s) /* a gnuplot single-quoted string: '' is a quote */
{
    fputc('\'', p);
    for (; *s; ++s) fprintf(p, *s == '\'' ? "''" : "%c", *s);
    fputc('\'', p);
}

static int plot(const wlist *l, const char *out, int png, char *err, size_t errlen)
{
    FILE *p = popen("gnuplot", "w");
    int multi = 0;
    for (int i = 1; i < l->n; ++i) multi |= !same_model(&l->v[i], &l->v[0]);
    if (!p) return snprintf(err, errlen, "cannot run gnuplot"), -1;
    fprintf(p, "set terminal %s size %d,720 font 'sans,10'\nset output ", png ? "pngcairo" : "svg",
            l->n > 12 ? 120 + 70 * l->n : 1100);
    gp_string(p, out);
    char title[300];
    if (multi) snprintf(title, sizeof title, "gemmtune: SGEMM TFLOPS per shape and GPU, tuned winner vs cuBLAS");
    else snprintf(title, sizeof title, "gemmtune: SGEMM TFLOPS per shape on %s, tuned winner vs cuBLAS", l->v[0].gpu_name);
    fprintf(p, "\nset title noenhanced\nset title ");
    gp_string(p, title);
    fprintf(p, "\n");
    fprintf(p, "set style data histogram\nset style histogram clustered gap 1\nset style fill solid 0.85 border -1\n"
               "set boxwidth 0.9\nset ylabel 'TFLOPS (2mnk / median time)'\nset yrange [0:*]\nset offsets 0,0,graph 0.12,0\n"
               "set grid ytics\nset key top left\nset xtics noenhanced rotate by 30 right\nset bmargin 8\n$data << EOD\n");
    for (int i = 0; i < l->n; ++i) data_line(p, &l->v[i], multi);
    fprintf(p, "EOD\nplot $data using 2:xtic(1) title 'gemmtune winner' lc rgb '#2f6fb3', "
               "'' using 3 title 'cuBLAS FP32' lc rgb '#b0b0b0', "
               "'' using 0:(($2>$3||$3!=$3)?$2:$3):(($4>0)?sprintf('%%.2fx',$4):'') with labels offset 0,0.8 "
               "font 'sans,9' notitle\n");
    int st = pclose(p);
    struct stat sb;
    if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || stat(out, &sb) < 0 || sb.st_size == 0) {
        if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
            snprintf(err, errlen, "gnuplot not found: install it (`make deps` installs gnuplot-nox)");
        else snprintf(err, errlen, "gnuplot could not write %s (see its message above)", out);
        return -1;
    }
    return 0;
}

typedef struct {
    gt_cli_filter cf;
    const char *db, *out;
    int png;
} ropts;

static int parse(int argc, char **argv, ropts *o, char *err, size_t errlen)
{
    const char *v;
    int r;
    memset(o, 0, sizeof *o);
    for (int i = 1; i < argc; ++i) {
        if ((r = gt_cli_filter_opt(&o->cf, argc, argv, &i, err, errlen)) != 0) {
            if (r < 0) return -1;
        } else if ((r = gt_cli_opt(argc, argv, &i, "--db", &v, err, errlen)) != 0) {
            if (r < 0) return -1;
            o->db = v;
        } else if ((r = gt_cli_opt(argc, argv, &i, "-o", &v, err, errlen)) != 0 ||
                   (r = gt_cli_opt(argc, argv, &i, "--output", &v, err, errlen)) != 0) {
            if (r < 0) return -1;
            o->out = v;
        } else return snprintf(err, errlen, "unknown option '%s'", argv[i]), -1;
    }
    if (o->out) {
        const char *dot = strrchr(o->out, '.');
        if (!dot || (strcmp(dot, ".svg") && strcmp(dot, ".png")))
            return snprintf(err, errlen, "-o %s: want a .svg or .png file name", o->out), -1;
        o->png = !strcmp(dot, ".png");
    }
    return gt_cli_filter_done(&o->cf, err, errlen);
}

static void usage(FILE *out)
{
    fprintf(out, "usage: gemmtune report [-o FILE.svg|FILE.png] [--gpu NAME] [--shape S] [--layout L] [--family F]\n"
                 "                       [--db PATH]\n\n"
                 "Prints a summary per GPU model (shapes, trials, ratio to cuBLAS), the winner of each shape against\n"
                 "cuBLAS, and a regret table: for each tuned shape, its own optimum against what the exported table\n"
                 "would run for it by the nearest-shape rule if the shape were not in it, and cuBLAS.\n"
                 "  -o FILE   also plot TFLOPS per shape, winner vs cuBLAS, with gnuplot (.svg or .png)\n");
}

int gt_cmd_report(int argc, char **argv)
{
    char err[1024], path[4096];
    ropts o;
    gt_db *db;
    wlist l = {0};
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) return usage(stdout), 0;
    if (parse(argc, argv, &o, err, sizeof err) < 0) {
        fprintf(stderr, "gemmtune report: %s\n", err);
        return 2;
    }
    if (gt_cli_db_path(o.db, path, sizeof path, err, sizeof err) < 0 || gt_db_open(path, GT_DB_READ, &db, err, sizeof err) < 0) {
        fprintf(stderr, "gemmtune report: %s\n", err);
        return 1;
    }
    int rc = gt_db_winners(db, &o.cf.f, push, &l, err, sizeof err);
    if (rc == 0 && l.oom) rc = -1, snprintf(err, sizeof err, "out of memory");
    if (rc == 0 && !l.n) rc = -1, snprintf(err, sizeof err, "no winners stored in %.900s%s", path,
                                           o.cf.f.gpu_name || o.cf.f.shape || o.cf.f.family || o.cf.f.layout
                                               ? " match the filters" : "");
    if (rc == 0) {
        printf("gemmtune report: %s\n\n", path);
        rc = print_summary(db, &l, &o.cf.f, err, sizeof err);
    }
    if (rc == 0) {
        print_shapes(&l);
        print_regret_head();
        rc = gt_db_regret(db, &o.cf.f, print_regret_row, NULL, err, sizeof err);
    }
    gt_db_close(db);
    if (rc == 0 && o.out) {
        fflush(stdout);
        rc = plot(&l, o.out, o.png, err, sizeof err);
        if (rc == 0) printf("\nchart: %s\n", o.out);
    } else if (rc == 0) printf("\n(add -o report.svg or -o report.png for the chart)\n");
    free(l.v);
    if (rc < 0) fprintf(stderr, "gemmtune report: %s\n", err);
    return rc < 0 ? 1 : 0;
}
