/* gemmtune merge: other machines' databases combined into this one with their provenance (sweeps.origin);
 * idempotent. Every source is checked before anything is merged. Tested by tests/test_cli_db.c. */
#include "cli.h"
#include "cli_db.h"
#include "db.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: gemmtune merge OTHER.db... [--db PATH]\n\n"
                 "Adds the sweeps, trials, baselines and cubins of other gemmtune databases (other machines) to this\n"
                 "one, creating it if needed. Merged sweeps keep where they came from (v_sweeps.origin, host). For a\n"
                 "shape tuned on several machines with the same GPU model the faster verified winner stays. Merging\n"
                 "the same file again changes nothing. The other files are only read.\n");
}

int gt_cmd_merge(int argc, char **argv)
{
    char err[1024], path[4096];
    const char *db_opt = NULL, *v;
    int r, nsrc = 0, version;
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) return usage(stdout), 0;
    for (int i = 1; i < argc; ++i) {
        if ((r = gt_cli_opt(argc, argv, &i, "--db", &v, err, sizeof err)) != 0) {
            if (r < 0) goto usage_error;
            db_opt = v;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            snprintf(err, sizeof err, "unknown option '%s'", argv[i]);
            goto usage_error;
        } else nsrc++;
    }
    if (!nsrc) {
        snprintf(err, sizeof err, "nothing to merge: usage: gemmtune merge OTHER.db... [--db PATH]");
        goto usage_error;
    }
    for (int i = 1; i < argc; ++i) { /* all sources readable before the first is merged */
        if (!strcmp(argv[i], "--db") && ++i) continue;
        if (!strncmp(argv[i], "--db=", 5)) continue;
        if (gt_db_probe(argv[i], &version, err, sizeof err) < 0) {
            fprintf(stderr, "gemmtune merge: %s\n", err);
            return 1;
        }
    }
    gt_db *db;
    if (gt_cli_db_path(db_opt, path, sizeof path, err, sizeof err) < 0 || gt_db_open(path, GT_DB_CREATE, &db, err, sizeof err) < 0) {
        fprintf(stderr, "gemmtune merge: %s\n", err);
        return 1;
    }
    for (int i = 1; i < argc; ++i) {
        gt_merge_stats st;
        if (!strcmp(argv[i], "--db") && ++i) continue;
        if (!strncmp(argv[i], "--db=", 5)) continue;
        if (gt_db_merge(db, argv[i], &st, err, sizeof err) < 0) {
            fprintf(stderr, "gemmtune merge: %s\n", err);
            gt_db_close(db);
            return 1;
        }
        printf("merged %s: %d sweeps, %d trials, %d baselines, %d winners, %d cubins added or replaced\n", argv[i],
               st.sweeps, st.trials, st.baselines, st.winners, st.cubins);
    }
    gt_db_close(db);
    return 0;
usage_error:
    fprintf(stderr, "gemmtune merge: %s\n", err);
    return 2;
}
