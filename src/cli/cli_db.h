/* Argument helpers shared by the database verbs (query, export, import, merge, report): options with values,
 * the database path rule, and the --gpu/--shape/--layout/--family filter. Tested by tests/test_cli_db.c. */
#ifndef GT_CLI_DB_H
#define GT_CLI_DB_H

#include "db.h"

#include <stddef.h>

/* If argv[*i] is `name VALUE` or `name=VALUE`: 1 with *val set (and *i moved past the value); 0 when argv[*i] is
 * another option; -1 with a message in err when the value is missing. */
int gt_cli_opt(int argc, char **argv, int *i, const char *name, const char **val, char *err, size_t errlen);

/* The database path: opt (--db) when given, else gt_db_default_path. */
int gt_cli_db_path(const char *opt, char *buf, size_t n, char *err, size_t errlen);

/* The filter options shared by query, export and report. */
typedef struct {
    const char *gpu, *family;
    gt_shape shape;
    int has_shape;        /* --shape given */
    int has_layout;       /* --layout given: that layout only (and the layout of --shape; nn by default) */
    gt_winner_filter f;   /* points into this struct: valid while it lives */
} gt_cli_filter;

/* Consume --gpu, --shape MxNxK|N, --layout nn|nt|tn|tt, --family at argv[*i]: 1 consumed, 0 not a filter option,
 * -1 bad value (message in err). */
int gt_cli_filter_opt(gt_cli_filter *cf, int argc, char **argv, int *i, char *err, size_t errlen);

/* Fill cf->f from the parsed options (--shape takes --layout's layout, nn by default). 0 or -1 with err. */
int gt_cli_filter_done(gt_cli_filter *cf, char *err, size_t errlen);

/* Write text to path atomically (a temporary file next to it, then rename). 0 or -1 with err naming the path. */
int gt_cli_write_file(const char *path, const char *text, size_t n, char *err, size_t errlen);

/* Read a whole file (NUL-terminated, malloc'd). NULL with err naming the path. */
char *gt_cli_read_file(const char *path, size_t *n, char *err, size_t errlen);

#endif
