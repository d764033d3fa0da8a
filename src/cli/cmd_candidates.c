/* gemmtune candidates: list the legal candidates of each family (or count them) for an architecture, no GPU.
 * Tested by tests/test_families.c (runs build/gemmtune). */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: gemmtune candidates [--family F] [--arch sm_XY] [--count] [--help]\n\n"
                 "Lists every legal candidate (family and parameters) of the default search space, as the tuner\n"
                 "would sweep it, without a GPU. --count prints one line per family and a total.\n"
                 "  --family F   only family F; test-only families (never swept) are listed only when named\n"
                 "  --arch A     device limits of architecture A (default %s)\n"
                 "  --count      counts instead of the list\n\nfamilies:",
            GT_DEFAULT_ARCH);
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
    const char *family = NULL, *arch = GT_DEFAULT_ARCH;
    int count = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--count")) {
            count = 1;
        } else if ((!strcmp(a, "--family") || !strcmp(a, "--arch")) && i + 1 < argc) {
            *(a[2] == 'f' ? &family : &arch) = argv[++i];
        } else {
            fprintf(stderr, "gemmtune candidates: %s '%s'\n\n",
                    strcmp(a, "--family") && strcmp(a, "--arch") ? "unknown argument" : "missing value after", a);
            usage(stderr);
            return 2;
        }
    }
    const gt_family *only = NULL;
    if (family && !(only = gt_family_find(family))) {
        fprintf(stderr, "gemmtune candidates: unknown family '%s' (gemmtune candidates --help lists them)\n", family);
        return 2;
    }
    gt_limits lim;
    if (!gt_limits_for_arch(arch, &lim)) {
        fprintf(stderr, "gemmtune candidates: unknown architecture '%s' (want sm_XY, sm_70 or newer)\n", arch);
        return 2;
    }
    return list(only, &lim, count);
}
