/* Helpers shared by the database verbs (query, export, import, merge, report): the database path rule and the
 * --gpu/--gpu-model/--shape/--layout/--family filter. Their files are read and written through db/files.h.
 * Tested by tests/test_cli_db.c. */
#ifndef GT_CLI_DB_H
#define GT_CLI_DB_H

#include "db.h"
#include "options.h"

#include <stddef.h>

/* The database path: opt (--db) when given, else gt_db_default_path. 0, or -1 with err (a bad argument: empty,
 * too long, a control character in it). */
int gt_cli_db_path(const char *opt, char *buf, size_t n, char *err, size_t errlen);

/* The filter of query, export and report. */
typedef struct {
    gt_shape shape;
    gt_gpu_model model;   /* --gpu N: the model of CUDA device N */
    gt_winner_filter f;   /* points into this struct: valid while it lives */
} gt_cli_filter;

/* Fill cf from --gpu N (the model of CUDA device N: needs that GPU), --gpu-model NAME, --shape (of --layout's
 * layout, nn by default), --layout and --family. 0, or -1 with err (a bad argument: no such device, an empty
 * name). */
int gt_cli_filter_from(const gt_cli_args *a, gt_cli_filter *cf, char *err, size_t errlen);

/* Where query, export and report start: the filter from the options, then the database --db names (or the
 * default) opened read-only, its path in path[n] for messages. 0, or the exit status with err and *db NULL:
 * 2 for a bad argument (the filter, the path), 1 when the database cannot be read. */
int gt_cli_open_reader(const gt_cli_args *a, gt_cli_filter *cf, char *path, size_t n, gt_db **db, char *err,
                       size_t errlen);

/* 1 when the filter narrows anything. */
int gt_cli_filter_any(const gt_cli_filter *cf);

/* The model of CUDA device dev (name, cc, SM count). 0, or -1 with err saying why there is none. */
int gt_cli_device_model(int dev, gt_gpu_model *m, char *err, size_t errlen);

#endif
