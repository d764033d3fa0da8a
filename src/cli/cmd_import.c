/* gemmtune import: winners from an exported JSON file (docs/EXPORT.md) into the database, all or nothing.
 * Tested by tests/test_cli_db.c (round trip, bad files leave the database byte-identical). */
#include "cli.h"
#include "cli_db.h"
#include "db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out, "usage: gemmtune import FILE.json [--db PATH]\n\n"
                 "Adds the winners of an exported JSON file (gemmtune export --format json) to the database, creating\n"
                 "it if needed. A stored winner is replaced only by a faster one. A malformed file or one of another\n"
                 "format version is refused as a whole and the database is left as it was.\n");
}

int gt_cmd_import(int argc, char **argv)
{
    char err[1024], path[4096];
    const char *db_opt = NULL, *file = NULL, *v;
    int r;
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) return usage(stdout), 0;
    for (int i = 1; i < argc; ++i) {
        if ((r = gt_cli_opt(argc, argv, &i, "--db", &v, err, sizeof err)) != 0) {
            if (r < 0) goto usage_error;
            db_opt = v;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            snprintf(err, sizeof err, "unknown option '%s'", argv[i]);
            goto usage_error;
        } else if (file) {
            snprintf(err, sizeof err, "one FILE.json at a time (got '%s' and '%s')", file, argv[i]);
            goto usage_error;
        } else file = argv[i];
    }
    if (!file) {
        snprintf(err, sizeof err, "which file? usage: gemmtune import FILE.json [--db PATH]");
        goto usage_error;
    }
    /* read and check the file before the database is touched */
    char *text = gt_cli_read_file(file, NULL, err, sizeof err);
    gt_db *db = NULL;
    int imported = 0;
    if (!text || gt_cli_db_path(db_opt, path, sizeof path, err, sizeof err) < 0 ||
        gt_db_open(path, GT_DB_CREATE, &db, err, sizeof err) < 0 || gt_db_import_json(db, text, file, &imported, err, sizeof err) < 0) {
        fprintf(stderr, "gemmtune import: %s%s%s\n", text && db ? file : "", text && db ? ": " : "", err);
        gt_db_close(db);
        free(text);
        return 1;
    }
    gt_db_close(db);
    free(text);
    printf("imported %d winner%s from %s into %s\n", imported, imported == 1 ? "" : "s", file, path);
    return 0;
usage_error:
    fprintf(stderr, "gemmtune import: %s\n", err);
    return 2;
}
