/* Helpers for the database verbs (see src/cli/cli_db.h). Tested by tests/test_cli_db.c. */
#include "cli_db.h"
#include "cli.h"
#include "measure.h"

#include <cuda_runtime_api.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

int gt_cli_open_reader(const gt_cli_args *a, gt_cli_filter *cf, char *path, size_t n, gt_db **db, char *err,
                       size_t errlen)
{
    *db = NULL;
    if (gt_cli_filter_from(a, cf, err, errlen) < 0 || gt_cli_db_path(a->db, path, n, err, errlen) < 0) return -1;
    return gt_db_open(path, GT_DB_READ, db, err, errlen) < 0 ? -1 : 0;
}

int gt_cli_device_model(int dev, gt_gpu_model *m, char *err, size_t errlen)
{
    char why[200];
    struct cudaDeviceProp p;
    int n = gt_measure_device_count(why, sizeof why);
    if (n == 0) return snprintf(err, errlen, "--gpu %d names a CUDA device of this machine, and it has none: %s", dev, why), -1;
    if (dev >= n || cudaGetDeviceProperties(&p, dev) != cudaSuccess)
        return snprintf(err, errlen, "GPU %d does not exist: this machine has %d CUDA device%s (0..%d)", dev, n,
                        n == 1 ? "" : "s", n - 1), -1;
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%.127s", p.name);
    m->cc_major = p.major, m->cc_minor = p.minor, m->sm_count = p.multiProcessorCount;
    return 0;
}

int gt_cli_filter_from(const gt_cli_args *a, gt_cli_filter *cf, char *err, size_t errlen)
{
    memset(cf, 0, sizeof *cf);
    if (a->layout.n) cf->shape.ta = a->layout.v[0] >> 1, cf->shape.tb = a->layout.v[0] & 1;
    if (a->shape.n) {
        cf->shape.m = a->shape.v[0].m, cf->shape.n = a->shape.v[0].n, cf->shape.k = a->shape.v[0].k;
        cf->f.shape = &cf->shape; /* layout nn unless --layout said otherwise */
    }
    if (a->layout.n) cf->f.layout = gt_layout_name(cf->shape.ta, cf->shape.tb);
    cf->f.family = a->family;
    cf->f.math = a->math;
    if (a->gpu_model && !*a->gpu_model) return snprintf(err, errlen, "bad --gpu-model '': want part of a GPU name"), -1;
    cf->f.gpu_name = a->gpu_model;
    if (a->gpu.n) {
        if (gt_cli_device_model(a->gpu.v[0], &cf->model, err, errlen) < 0) return -1;
        cf->f.model = &cf->model;
    }
    return 0;
}

int gt_cli_filter_any(const gt_cli_filter *cf)
{
    const gt_winner_filter *f = &cf->f;
    return f->gpu_name || f->shape || f->family || f->layout || f->model;
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
