/* A database is data, never code, through the built CLI: text from a database (put there with SQL, as a hostile
 * file would hold it) never ends a comment in an exported header; readers and writers agree on a path.
 * Fixture databases from tests/fixture.c. */
#include "compile.h"
#include "db.h"
#include "fixture.h"
#include "harness.h"

#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *out; /* output of the last run() */

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
    char cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    free(out);
    out = NULL;
    int rc = gt_run(cmd, &out);
    if (!out) out = strdup("");
    return rc;
}

static int exists(const char *path)
{
    struct stat sb;
    return lstat(path, &sb) == 0;
}

/* Run sql on the database at path with value bound to ?1 (any bytes go in as they are). 0 or -1. */
static int sql_set(const char *path, const char *sql, const char *value)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_open(path, &h) == SQLITE_OK && sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK &&
                     sqlite3_bind_text(st, 1, value, -1, SQLITE_TRANSIENT) == SQLITE_OK && sqlite3_step(st) == SQLITE_DONE
                 ? 0
                 : -1;
    if (rc) printf("    %s: %s\n", sql, sqlite3_errmsg(h));
    sqlite3_finalize(st);
    sqlite3_close(h);
    return rc;
}

static int cache_fake_cubin(const gt_winner *w, void *ctx)
{
    char err[256], arch[16];
    snprintf(arch, sizeof arch, "sm_%d%d", w->cc_major, w->cc_minor);
    return gt_db_cubin_put(ctx, w->source_hash, arch, gt_nvrtc_version(), gt_nvrtc_options(),
                           (const unsigned char *)"\x7f" "ELF0123", 8, 32, 0, err, sizeof err) < 0;
}

/* A kernel's text in the comment above an embedded cubin cannot end the comment and become code. */
GT_TEST(cli_export_header_comment_holds_no_code, GT_NEEDS_NONE)
{
    char *db = gt_tmp_path(".db"), *h = gt_tmp_path(".h"), err[256];
    gt_db *d;
    CHECK(gt_fixture_db(db, 0, 0, 1.0) == 0 && gt_db_open(db, GT_DB_WRITE, &d, err, sizeof err) == 0);
    CHECK(gt_db_winners(d, NULL, cache_fake_cubin, d, err, sizeof err) == 0);
    gt_db_close(d);
    CHECK(sql_set(db, "UPDATE candidates SET params = ?1, family = 'tile2d */ int pwned; /*'",
                  "BM=64 */ int pwned2; /*\n#include </etc/passwd>") == 0);
    int rc = run(GT_CLI " export --db %s --format header --with-cubin -o %s", db, h);
    if (rc == 0) {
        size_t n;
        char *text = (char *)gt_fixture_slurp(h, &n);
        CHECK(text && strstr(text, "gemmtune_cubin_0") && !strstr(text, "\n#include </etc"));
        free(text);
        CHECK_MSG(run("cc -std=c11 -Wall -Wextra -Werror -fsyntax-only -x c %s", h) == 0, "%s", out);
        /* with the comments gone, the text is left only inside string literals: no line has it outside quotes */
        CHECK_MSG(run("cc -E -P -x c %s | grep -c '^[^\"]*pwned'", h) == 1 && atoi(out) == 0, "%s", out);
    } else CHECK_MSG(!exists(h), "refused (%s), yet %s was written", out, h);
    gt_fixture_rm(db), unlink(h);
    free(db), free(h);
}

/* A --db that starts with // names the same file to readers (an SQLite URI) as to writers (a path). */
GT_TEST(cli_db_paths_with_two_slashes_agree, GT_NEEDS_NONE)
{
    char *db = gt_tmp_path(".db"), *json = gt_tmp_path(".json");
    CHECK(gt_fixture_db(db, 0, 0, 1.0) == 0 && run(GT_CLI " export --db %s -o %s", db, json) == 0);
    CHECK(db[0] == '/');
    CHECK_MSG(run(GT_CLI " query --db /%s", db) == 0 && strstr(out, "NVIDIA H200"), "%s", out);
    CHECK_MSG(run(GT_CLI " report --db /%s", db) == 0 && strstr(out, "regret"), "%s", out);
    CHECK_MSG(run(GT_CLI " explain --db /%s --shape 1024", db) == 0 && strstr(out, "rule:     "), "%s", out);
    char merged[700];
    snprintf(merged, sizeof merged, "%s.merged", db);
    CHECK_MSG(run(GT_CLI " merge --db /%s /%s", merged, db) == 0 && strstr(out, "1 sweeps"), "%s", out);
    CHECK_MSG(run(GT_CLI " import --db /%s /%s", merged, json) == 0, "%s", out);
    gt_fixture_rm(db), gt_fixture_rm(merged), unlink(json);
    free(db), free(json);
}
