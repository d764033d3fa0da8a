/* Argument and file helpers for the database verbs (see src/cli_db.h). Tested by tests/test_cli_db.c. */
#include "cli_db.h"
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int gt_cli_opt(int argc, char **argv, int *i, const char *name, const char **val, char *err, size_t errlen)
{
    size_t len = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, len)) return 0;
    if (a[len] == '=') {
        *val = a + len + 1;
        return 1;
    }
    if (a[len]) return 0;
    if (*i + 1 >= argc) {
        snprintf(err, errlen, "%s needs a value", name);
        return -1;
    }
    *val = argv[++*i];
    return 1;
}

int gt_cli_db_path(const char *opt, char *buf, size_t n, char *err, size_t errlen)
{
    if (!opt) return gt_db_default_path(buf, n, err, errlen);
    if (!*opt || strlen(opt) >= n) {
        snprintf(err, errlen, "bad --db '%s'", opt);
        return -1;
    }
    snprintf(buf, n, "%s", opt);
    return 0;
}

int gt_cli_filter_opt(gt_cli_filter *cf, int argc, char **argv, int *i, char *err, size_t errlen)
{
    const char *v;
    int r;
    if ((r = gt_cli_opt(argc, argv, i, "--gpu", &v, err, errlen)) != 0) return r < 0 ? -1 : (cf->gpu = v, 1);
    if ((r = gt_cli_opt(argc, argv, i, "--family", &v, err, errlen)) != 0) return r < 0 ? -1 : (cf->family = v, 1);
    if ((r = gt_cli_opt(argc, argv, i, "--layout", &v, err, errlen)) != 0) {
        if (r < 0) return -1;
        if (gt_layout_parse(v, &cf->shape.ta, &cf->shape.tb) < 0) {
            snprintf(err, errlen, "bad --layout '%s': want nn, nt, tn or tt", v);
            return -1;
        }
        cf->has_layout = 1;
        return 1;
    }
    if ((r = gt_cli_opt(argc, argv, i, "--shape", &v, err, errlen)) != 0) {
        gt_shape *list = NULL;
        if (r < 0) return -1;
        int n = gt_cli_parse_sizes(v, &list, err, errlen);
        if (n != 1) {
            if (n > 1) snprintf(err, errlen, "bad --shape '%s': want one MxNxK or N", v);
            else if (strstr(err, "--sizes")) snprintf(err, errlen, "bad --shape '%s': want MxNxK or N (N x N x N)", v);
            free(list);
            return -1;
        }
        cf->shape.m = list[0].m, cf->shape.n = list[0].n, cf->shape.k = list[0].k;
        cf->has_shape = 1;
        free(list);
        return 1;
    }
    return 0;
}

int gt_cli_filter_done(gt_cli_filter *cf, char *err, size_t errlen)
{
    memset(&cf->f, 0, sizeof cf->f);
    cf->f.gpu_name = cf->gpu;
    cf->f.family = cf->family;
    if (cf->has_shape) cf->f.shape = &cf->shape; /* layout nn unless --layout said otherwise */
    if (cf->has_layout) cf->f.layout = gt_layout_name(cf->shape.ta, cf->shape.tb);
    if (cf->gpu && !*cf->gpu) return snprintf(err, errlen, "bad --gpu '': want part of a GPU name"), -1;
    return 0;
}

int gt_cli_write_file(const char *path, const char *text, size_t n, char *err, size_t errlen)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp%d", path, (int)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    size_t put = fwrite(text, 1, n, f);
    int bad = put != n || fflush(f) != 0;
    int e = errno;
    if (fclose(f) != 0 && !bad) bad = 1, e = errno;
    if (bad || rename(tmp, path) < 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(bad ? e : errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}

char *gt_cli_read_file(const char *path, size_t *n, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, len = 0, got;
    char *buf = malloc(cap + 1);
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0)
        if ((len += got) == cap) {
            char *p = realloc(buf, (cap *= 2) + 1);
            if (!p) free(buf);
            buf = p;
        }
    int rerr = ferror(f);
    fclose(f);
    if (!buf || rerr) {
        snprintf(err, errlen, "cannot read %s: %s", path, buf ? "read error (is it a directory?)" : "out of memory");
        free(buf);
        return NULL;
    }
    buf[len] = 0;
    if (n) *n = len;
    return buf;
}
