/* gemmtune merge: other machines' databases combined into this one with their provenance (sweeps.origin);
 * idempotent, all or nothing: every source is checked before anything is merged. Tested by tests/test_cli_db.c. */
#include "cli.h"
#include "cli_db.h"
#include "db.h"
#include "options.h"
#include "term.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: gemmtune merge OTHER.db... [options]\n\n"
                 "Adds the sweeps, trials and baselines of other gemmtune databases (other machines, the shards of a\n"
                 "cluster job: docs/CLUSTER.md) to this one, creating it if needed. Merged sweeps keep where they came\n"
                 "from (v_sweeps.origin, host). For a shape tuned on several machines with the same GPU model the\n"
                 "faster verified winner stays. Merging the same file again changes nothing. Compiled kernels are not\n"
                 "taken: they are compiled here when needed. All or nothing: every OTHER.db must be whole (SQLite's\n"
                 "integrity check) and every row of it valid (docs/EXPORT.md's rules), or nothing is merged and the\n"
                 "message names the file at fault. Every OTHER.db is only read: it may belong to another user, and\n"
                 "nothing is created beside it.\n\n");
    gt_cli_usage(out, GT_V_MERGE);
}

int gt_cmd_merge(int argc, char **argv)
{
    char err[1024], path[4096];
    int version;
    gt_cli_args a;
    gt_db *db = NULL;
    gt_cli_args_init(&a);
    int rc = gt_cli_parse(GT_V_MERGE, argc, argv, &a, err, sizeof err);
    if (rc == 1) return gt_cli_args_free(&a), usage(stdout), 0;
    if (rc == 0 && !a.npos) rc = -1, snprintf(err, sizeof err, "nothing to merge: usage: gemmtune merge OTHER.db... [--db PATH]");
    for (int i = 0; rc == 0 && i < a.npos; ++i) rc = gt_cli_check_path("OTHER.db", a.pos[i], err, sizeof err);
    if (rc == 0) rc = gt_cli_db_path(a.db, path, sizeof path, err, sizeof err);
    if (rc < 0) {
        gt_term_printf(stderr, "gemmtune merge: %s\n", err);
        return gt_cli_args_free(&a), 2;
    }
    for (int i = 0; rc == 0 && i < a.npos; ++i) /* all sources readable before the first is merged */
        if (gt_db_probe(a.pos[i], &version, err, sizeof err) < 0) {
            rc = -1;
            if (!strncmp(err, "no database at", 14))
                snprintf(err + strlen(err), sizeof err - strlen(err), ", one of the databases to merge: check its path");
        }
    if (rc == 0 && gt_db_open(path, GT_DB_CREATE, &db, err, sizeof err) < 0) rc = -1;
    gt_merge_stats *st = rc == 0 ? calloc((size_t)a.npos, sizeof *st) : NULL;
    if (rc == 0 && (!st || gt_db_merge_all(db, (const char *const *)a.pos, a.npos, st, err, sizeof err) < 0)) {
        if (!st) snprintf(err, sizeof err, "out of memory");
        rc = -1;
    }
    for (int i = 0; rc == 0 && i < a.npos; ++i)
        gt_term_printf(stdout, "merged %s: %d sweeps, %d trials, %d baselines, %d winners added or replaced\n",
                       a.pos[i], st[i].sweeps, st[i].trials, st[i].baselines, st[i].winners);
    if (rc < 0) gt_db_discard(db); /* a database this merge created is removed again */
    else gt_db_close(db);
    free(st);
    gt_cli_args_free(&a);
    if (rc < 0) gt_term_printf(stderr, "gemmtune merge: %s\n", err);
    return rc < 0 ? 1 : 0;
}
