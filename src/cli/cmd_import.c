/* gemmtune import: winners from an exported JSON file (docs/EXPORT.md) into the database, all or nothing.
 * Tested by tests/test_cli_db.c (round trip, bad files leave the database byte-identical). */
#include "cli.h"
#include "cli_db.h"
#include "db.h"
#include "files.h"
#include "options.h"
#include "term.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: gemmtune import FILE.json [options]\n\n"
                 "Adds the winners of an exported JSON file (gemmtune export --format json) to the database, creating\n"
                 "it if needed. A stored winner is replaced only by a faster one; the closing line counts the rows\n"
                 "imported and those skipped (already stored, or slower than the stored winner). Every row must name\n"
                 "a kernel this gemmtune can run (a known family, legal parameters for the row's compute capability).\n"
                 "A malformed file, one of another format version, or one bad row refuses the file as a whole, and\n"
                 "the database is left as it was (not even created). docs/EXPORT.md lists what a row must be.\n\n");
    gt_cli_usage(out, GT_V_IMPORT);
}

int gt_cmd_import(int argc, char **argv)
{
    char err[1024], path[4096];
    gt_cli_args a;
    gt_cli_args_init(&a);
    int rc = gt_cli_parse(GT_V_IMPORT, argc, argv, &a, err, sizeof err);
    if (rc == 1) return gt_cli_args_free(&a), usage(stdout), 0;
    if (rc == 0 && a.npos != 1)
        rc = -1, snprintf(err, sizeof err, a.npos ? "one FILE.json at a time (got '%s' and '%s')"
                                                  : "which file? usage: gemmtune import FILE.json [--db PATH]",
                          a.npos ? a.pos[0] : "", a.npos ? a.pos[1] : "");
    const char *file = rc == 0 ? a.pos[0] : NULL, *db_opt = a.db;
    gt_cli_args_free(&a); /* file and db_opt point into argv */
    if (rc == 0 && (gt_cli_check_path("FILE.json", file, err, sizeof err) < 0 ||
                    gt_cli_db_path(db_opt, path, sizeof path, err, sizeof err) < 0))
        rc = -1;
    if (rc < 0) {
        gt_term_printf(stderr, "gemmtune import: %s\n", err);
        return 2;
    }
    /* read and check the whole file before the database is opened, so a refused file leaves it as it was */
    int nrows = 0;
    char *text = gt_file_read(file, GT_FILE_MAX_JSON, NULL, err, sizeof err);
    if (!text || gt_db_check_json(text, &nrows, err, sizeof err) < 0) {
        gt_term_printf(stderr, "gemmtune import: %s%s%s (nothing imported)\n", text ? file : "", text ? ": " : "", err);
        free(text);
        return 1;
    }
    gt_db *db = NULL;
    gt_import_stats st;
    if (gt_db_open(path, GT_DB_CREATE, &db, err, sizeof err) < 0 ||
        gt_db_import_json_stats(db, text, file, &st, err, sizeof err) < 0) {
        /* the file was checked whole above: a failure now is the database's, or a row against what it holds */
        const int row = !strncmp(err, "winners[", 8);
        gt_term_printf(stderr, "gemmtune import: %s%s%s\n", row ? file : "", row ? ": " : "", err);
        gt_db_discard(db); /* a database this import created is removed again, WAL and all */
        free(text);
        return 1;
    }
    gt_db_close(db);
    free(text);
    gt_term_printf(stdout, "imported %d winner%s of %d from %s into %s", st.imported, st.imported == 1 ? "" : "s",
                   st.rows, file, path);
    if (st.already || st.slower)
        printf("; skipped %d already stored and %d slower than the stored winner of their GPU model and shape",
               st.already, st.slower);
    printf("\n");
    return 0;
}
