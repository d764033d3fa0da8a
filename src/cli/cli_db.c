/* Helpers for the database verbs (see src/cli/cli_db.h). Tested by tests/test_cli_db.c. */
#include "cli_db.h"
#include "cli.h"
#include "device.h"
#include "measure.h"

#include <cuda_runtime_api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gt_cli_db_path(const char *opt, char *buf, size_t n, char *err, size_t errlen)
{
    if (!opt && gt_db_default_path(buf, n, err, errlen) < 0) return -1;
    if (opt && (!*opt || strlen(opt) >= n)) return snprintf(err, errlen, "bad --db '%s'", opt), -1;
    if (opt) snprintf(buf, n, "%s", opt);
    if (gt_cli_check_path(opt ? "--db" : "the database path", buf, err, errlen) < 0) return -1;
    return 0;
}

int gt_cli_open_reader(const gt_cli_args *a, gt_cli_filter *cf, char *path, size_t n, gt_db **db, char *err,
                       size_t errlen)
{
    *db = NULL;
    if (gt_cli_filter_from(a, cf, err, errlen) < 0 || gt_cli_db_path(a->db, path, n, err, errlen) < 0) return 2;
    return gt_db_open(path, GT_DB_READ, db, err, errlen) < 0 ? 1 : 0;
}

int gt_cli_device_model(int dev, gt_gpu_model *m, char *err, size_t errlen)
{
    char why[200];
    struct cudaDeviceProp p;
    int n = gt_measure_device_count(why, sizeof why);
    if (n == 0) return snprintf(err, errlen, "--gpu %d names a CUDA device of this machine, and it has none: %s", dev, why), -1;
    if (dev >= n || cudaGetDeviceProperties(&p, dev) != cudaSuccess)
        return snprintf(err, errlen, "--gpu %d: GPU %d does not exist: this machine has %d CUDA device%s (0..%d)", dev,
                        dev, n, n == 1 ? "" : "s", n - 1), -1;
    *m = gt_device_model(&p);
    return 0;
}

int gt_cli_filter_from(const gt_cli_args *a, gt_cli_filter *cf, char *err, size_t errlen)
{
    memset(cf, 0, sizeof *cf);
    if (a->layout.n) cf->shape.ta = a->layout.v[0] >> 1, cf->shape.tb = a->layout.v[0] & 1;
    if (a->shape.n) {
        cf->shape.m = a->shape.v[0].m, cf->shape.n = a->shape.v[0].n, cf->shape.k = a->shape.v[0].k;
        cf->shape.batch = a->shape.v[0].batch;
        cf->f.shape = &cf->shape; /* layout nn unless --layout said otherwise */
    }
    if (a->layout.n) cf->f.layout = gt_layout_name(cf->shape.ta, cf->shape.tb);
    cf->f.family = a->family;
    if (a->math && gt_math_set_parse(a->math, &cf->f.math) < 0)
        return snprintf(err, errlen, "bad --math '%s': want a math class or all", a->math), -1;
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
