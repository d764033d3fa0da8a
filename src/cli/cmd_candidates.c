/* gemmtune candidates: list the legal candidates of each family (or count them) for an architecture, no GPU.
 * Tested by tests/test_families.c (runs build/gemmtune). */
#include "cli.h"
#include "options.h"
#include "term.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: gemmtune candidates [options]\n\n"
                 "Lists every legal candidate (family and parameters) of the default search space, as the tuner\n"
                 "would sweep it, without a GPU. --count prints one line per family and a total.\n\n");
    gt_cli_usage(out, GT_V_CANDIDATES);
    fprintf(out, "\nfamilies:");
    for (int i = 0; i < gt_family_count(); ++i) {
        const gt_family *f = gt_family_at(i);
        fprintf(out, " %s%s", f->name, f->test_only ? " (test only)" : "");
    }
    fprintf(out, "\n");
}

static int print_one(const gt_family *f, const gt_params *p, void *ctx)
{
    char buf[512];
    (void)ctx;
    gt_params_format(f, p, buf, sizeof buf);
    printf("%-10s %s\n", f->name, buf);
    return 0;
}

static int list(const gt_family *only, const gt_limits *lim, int count)
{
    int total = 0;
    for (int i = 0; i < gt_family_count(); ++i) {
        const gt_family *f = gt_family_at(i);
        if (only ? f != only : f->test_only) continue;
        int n = gt_enumerate(f, lim, count ? NULL : print_one, NULL);
        if (count) printf("%-10s %d\n", f->name, n);
        total += n;
    }
    if (count && !only) printf("%-10s %d\n", "total", total);
    return 0;
}

int gt_cmd_candidates(int argc, char **argv)
{
    char err[1024];
    gt_cli_args a;
    gt_cli_args_init(&a);
    int rc = gt_cli_parse(GT_V_CANDIDATES, argc, argv, &a, err, sizeof err);
    if (rc == 1) return gt_cli_args_free(&a), usage(stdout), 0;
    if (rc == 0 && a.npos) rc = -1, snprintf(err, sizeof err, "unexpected argument '%s'", a.pos[0]);
    const gt_family *only = NULL;
    gt_limits lim;
    char known[200];
    gt_arch_list(known, sizeof known);
    if (rc == 0 && a.family && !(only = gt_family_find(a.family)))
        rc = -1, snprintf(err, sizeof err, "unknown family '%s' (gemmtune candidates --help lists them)", a.family);
    if (rc == 0 && !gt_limits_for_arch(a.arch ? a.arch : GT_DEFAULT_ARCH, &lim))
        rc = -1, snprintf(err, sizeof err, "unknown architecture '%s' (want sm_XY or sm_XYZ, one of %s)",
                          a.arch ? a.arch : GT_DEFAULT_ARCH, known);
    int count = a.count;
    gt_cli_args_free(&a);
    if (rc < 0) return gt_term_printf(stderr, "gemmtune candidates: %s\n", err), 2;
    return list(only, &lim, count);
}
