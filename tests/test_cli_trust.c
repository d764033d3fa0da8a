/* A database is data, never code, through the built CLI: text from a database (put there with SQL, as a hostile
 * file would hold it) never runs in report's gnuplot, never reaches a terminal raw, never ends a comment in an
 * exported header; outputs are written where asked and never replace a device or FIFO; inputs that are not regular
 * files are refused, never waited on; bad arguments exit 2. Fixture databases from tests/fixture.c. */
#include "compile.h"
#include "cubin.h"
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

#define run(...) gt_runf(&out, __VA_ARGS__)

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

static int has_gnuplot(void)
{
    if (gt_run("command -v gnuplot", NULL) == 0) return 1;
    gt_skip("gnuplot is not installed (make deps installs gnuplot-nox)");
    return 0;
}

/* GPU names that try gnuplot's every way to run a command: a new line starting with '!', system() after breaking
 * out of a quoted string, a backquote, a macro; the chart must be drawn and nothing run. */
GT_TEST(cli_report_runs_nothing_a_database_holds, GT_NEEDS_NONE)
{
    if (!has_gnuplot()) return;
    char *dir = gt_tmp_path("_rep"), db[600], f[6][700], name[2][1600];
    CHECK(mkdir(dir, 0700) == 0);
    snprintf(db, sizeof db, "%s/hostile.db", dir);
    for (int i = 0; i < 6; ++i) snprintf(f[i], sizeof f[i], "%s/ran%d", dir, i);
    snprintf(name[0], sizeof name[0], "X\n!touch %s\n`touch %s`\x1b[31m", f[0], f[1]);
    snprintf(name[1], sizeof name[1], "Y' . system('touch %s') . '\"\n!touch %s\n@m", f[2], f[3]);
    CHECK(gt_fixture_db(db, 0, 0, 1.0) == 0 && gt_fixture_db(db, 2, 0, 1.1) == 0);
    CHECK(sql_set(db, "UPDATE gpu_models SET name = ?1 WHERE name = 'NVIDIA H200'", name[0]) == 0);
    CHECK(sql_set(db, "UPDATE gpu_models SET name = ?1 WHERE name LIKE 'NVIDIA A100%'", name[1]) == 0);
    static const char *const how[] = {"", "--gpu-model X", "--gpu-model Y"}; /* both in the labels; each in a title */
    for (int i = 0; i < 3; ++i) {
        CHECK_MSG(run(GT_CLI " report --db %s %s -o %s/chart%d.svg", db, how[i], dir, i) == 0, "%s", out);
        CHECK_MSG(!strchr(out, '\x1b'), "raw escape in: %s", out);
        char svg[700];
        snprintf(svg, sizeof svg, "%s/chart%d.svg", dir, i);
        size_t n;
        char *text = (char *)gt_fixture_slurp(svg, &n);
        CHECK(text && strstr(text, "<svg") && strstr(text, "1024x1024x1024 nn"));
        free(text);
    }
    CHECK(run(GT_CLI " report --db %s --gpu-model Y -o %s/chart.png", db, dir) == 0);
    for (int i = 0; i < 4; ++i) CHECK_MSG(!exists(f[i]), "the database's text ran: %s exists", f[i]);
    /* an -o path with a new line in it is refused before anything is drawn or written */
    CHECK(run(GT_CLI " report --db %s -o \"$(printf '%s/x\\n!touch %s\\n.svg')\"", db, dir, f[4]) == 2 &&
          strstr(out, "control character"));
    CHECK(!exists(f[4]));
    CHECK(run("ls -A %s | wc -l", dir) == 0 && atoi(out) == 5); /* the database and the four charts */
    run("rm -rf %s", dir);
    free(dir);
}

/* The readers print database text with its control bytes escaped: in the table, CSV, JSON, --trials, --sweeps,
 * --gpus, report's text and explain. */
GT_TEST(cli_readers_print_no_raw_control_bytes, GT_NEEDS_NONE)
{
    char *db = gt_tmp_path(".db");
    CHECK(gt_fixture_db(db, 0, 0, 1.0) == 0);
    CHECK(sql_set(db, "UPDATE gpu_models SET name = ?1", "E\x1b[31mRED\x1b]0;title\x07\xc2\x9b" "2J") == 0);
    CHECK(sql_set(db, "UPDATE sweeps SET host = ?1, command = ?1", "h\x1b[2J\r\x08") == 0);
    CHECK(sql_set(db, "UPDATE trials SET message = ?1 WHERE status != 'ok'", "m\x1b[1A\x1b[2K") == 0);
    static const struct {
        const char *args, *shows;
    } cases[] = {
        {"query", "\\x1b[31mRED"}, {"query --format csv", "\\x1b[31mRED"}, {"query --format json", "\\u001b[31mRED"},
        {"query --trials", "m\\x1b[1A"}, {"query --trials --format csv", "m\\x1b[1A"},
        {"query --sweeps", "h\\x1b[2J\\r\\x08"}, {"query --sweeps --format json", "\\u009b2J"},
        {"query --gpus", "\\x1b]0;title\\x07\\u009b2J"}, {"report", "\\x1b[31mRED"},
        {"explain --shape 1000 --gpu-model E", "\\x1b[31mRED"}, {"export", "\\u001b[31mRED"},
        {"export --format header", "\\033[31mRED"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        int rc = run(GT_CLI " %s --db %s", cases[i].args, db);
        CHECK_MSG(rc == 0 && strstr(out, cases[i].shows), "%s -> %d: %s", cases[i].args, rc, out);
        CHECK_MSG(!strpbrk(out, "\x1b\x07\x08\r") && !strstr(out, "\xc2\x9b"), "%s printed a raw control byte",
                  cases[i].args);
    }
    gt_fixture_rm(db);
    free(db);
}

static int cache_fake_cubin(const gt_winner *w, void *ctx)
{
    char err[256], arch[16];
    snprintf(arch, sizeof arch, "sm_%d%d", w->cc_major, w->cc_minor);
    const gt_cubin fake = {.data = (unsigned char *)"\x7f" "ELF0123", .size = 8, .regs = 32};
    return gt_cubin_cache_put(ctx, w->source_hash, arch, &fake, err, sizeof err) < 0; /* this user's: trusted */
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

/* export -o (and report -o): a regular file replaced with its mode kept; a symlink to /dev/null, a FIFO and
 * /dev/stdout written through and never replaced; a symlink to nothing refused; a failing chart leaves no file. */
GT_TEST(cli_outputs_replace_only_regular_files, GT_NEEDS_NONE)
{
    char *dir = gt_tmp_path("_out"), db[600], want[600], p[600];
    struct stat sb;
    CHECK(mkdir(dir, 0700) == 0);
    snprintf(db, sizeof db, "%s/w.db", dir);
    snprintf(want, sizeof want, "%s/want.json", dir);
    CHECK(gt_fixture_db(db, 0, 0, 1.0) == 0 && run(GT_CLI " export --db %s -o %s", db, want) == 0);
    snprintf(p, sizeof p, "%s/mine.json", dir);
    CHECK(gt_fixture_write(p, "old", 3) == 0 && chmod(p, 0604) == 0);
    CHECK(run(GT_CLI " export --db %s -o %s", db, p) == 0 && gt_fixture_same_bytes(p, want));
    CHECK(stat(p, &sb) == 0 && (sb.st_mode & 0777) == 0604);
    snprintf(p, sizeof p, "%s/null", dir);
    CHECK(symlink("/dev/null", p) == 0 && run(GT_CLI " export --db %s -o %s", db, p) == 0);
    CHECK(lstat(p, &sb) == 0 && S_ISLNK(sb.st_mode) && stat("/dev/null", &sb) == 0 && S_ISCHR(sb.st_mode));
    snprintf(p, sizeof p, "%s/fifo", dir);
    CHECK(mkfifo(p, 0600) == 0);
    CHECK(run("cat %s > %s/from-fifo & " GT_CLI " export --db %s -o %s; wait", p, dir, db, p) == 0);
    CHECK(lstat(p, &sb) == 0 && S_ISFIFO(sb.st_mode));
    snprintf(p, sizeof p, "%s/from-fifo", dir);
    CHECK(gt_fixture_same_bytes(p, want));
    snprintf(p, sizeof p, "%s/from-stdout", dir);
    CHECK(run(GT_CLI " export --db %s -o /dev/stdout | cat > %s", db, p) == 0 && gt_fixture_same_bytes(p, want));
    snprintf(p, sizeof p, "%s/dangling", dir);
    CHECK(symlink("nowhere/x.json", p) == 0);
    CHECK(run(GT_CLI " export --db %s -o %s", db, p) == 1 && strstr(out, "symbolic link to nothing"));
    /* report: gnuplot draws the chart then fails; nothing is written */
    int plot = run("command -v gnuplot") == 0;
    if (plot) {
        char real[600];
        snprintf(real, sizeof real, "%.*s", (int)strcspn(out, "\n"), out);
        CHECK(run("mkdir %s/bin && printf '#!/bin/sh\\n%s \"$@\"\\nexit 1\\n' > %s/bin/gnuplot && chmod +x "
                  "%s/bin/gnuplot", dir, real, dir, dir) == 0);
        CHECK(run("PATH=%s/bin:$PATH " GT_CLI " report --db %s -o %s/r.svg", dir, db, dir) == 1);
        snprintf(p, sizeof p, "%s/r.svg", dir);
        CHECK_MSG(!exists(p), "a failed chart left %s", p);
    }
    CHECK_MSG(run("ls -A %s", dir) == 0 && !strcmp(out, plot ? "bin\ndangling\nfifo\nfrom-fifo\nfrom-stdout\nmine.json\n"
                                                               "null\nw.db\nwant.json\n"
                                                             : "dangling\nfifo\nfrom-fifo\nfrom-stdout\nmine.json\n"
                                                               "null\nw.db\nwant.json\n"), "%s", out);
    run("rm -rf %s", dir);
    free(dir);
}

/* Inputs that are not regular files are refused at once: import's JSON, --sizes @FILE, explain --json (the loader),
 * a --db. Each under a 20 s timeout, which a reader that waited on the FIFO or read /dev/zero forever would hit. */
GT_TEST(cli_inputs_refuse_fifos_devices_and_folders, GT_NEEDS_NONE)
{
    char *dir = gt_tmp_path("_in"), fifo[600];
    CHECK(mkdir(dir, 0700) == 0);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    CHECK(mkfifo(fifo, 0600) == 0);
    static const struct {
        const char *args;
        int rc;
        const char *says;
    } cases[] = {
        {"import %s --db %s/x.db", 1, "a FIFO"},
        {"import /dev/zero --db %2$s/x.db", 1, "a character device"},
        {"import %2$s --db %2$s/x.db", 1, "a directory"},
        {"bench --sizes @%s", 2, "a FIFO"},
        {"tune --sizes @/dev/zero --db %2$s/x.db", 2, "a character device"},
        {"explain --shape 64 --json %s", 1, "a FIFO"},
        {"explain --shape 64 --json /dev/zero", 1, "a character device"},
        {"query --db %s", 1, "not a regular file"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        char args[1400], cmd[1600];
        snprintf(args, sizeof args, cases[i].args, fifo, dir);
        snprintf(cmd, sizeof cmd, "timeout 20 " GT_CLI " %s", args);
        int rc = run("%s", cmd);
        CHECK_MSG(rc == cases[i].rc && strstr(out, cases[i].says), "%s -> %d:\n%s", args, rc, out);
    }
    CHECK(run("ls -A %s", dir) == 0 && !strcmp(out, "fifo\n")); /* no database made */
    run("rm -rf %s", dir);
    free(dir);
}

/* Bad arguments exit 2, runtime failures 1. */
GT_TEST(cli_bad_arguments_exit_2, GT_NEEDS_NONE)
{
    char *db = gt_tmp_path(".db"), *json = gt_tmp_path(".json");
    CHECK(gt_fixture_db(db, 0, 0, 1.0) == 0 && run(GT_CLI " export --db %s -o %s", db, json) == 0);
    static const struct {
        const char *args, *says;
    } cases[] = {
        {"query --db %s --gpu-model ''", "--gpu-model"},
        {"export --db %s --gpu-model ''", "--gpu-model"},
        {"report --db %s --gpu-model ''", "--gpu-model"},
        {"query --db %s --family ''", "--family"},
        {"query --db '' %.0s", "--db"},
        {"export --db '' %.0s", "--db"},
        {"report --db '' %.0s", "--db"},
        {"import --db '' %s", "--db"},
        {"merge --db '' %s", "--db"},
        {"explain --db '' --shape 64 %.0s", "--db"},
        {"explain --json '' --shape 64 %.0s", "--json"},
        {"bench --db '' %.0s", "--db"},
        {"tune --db '' %.0s", "--db"},
        {"export --db %s -o ''", "-o"},
        {"query --db %s --gpu 999", "--gpu 999"},
        {"explain --db %s --shape 64 --gpu 999", "--gpu 999"},
        {"export --db %1$s -o \"$(printf '%1$s\\ny.json')\"", "control character"},
        {"query --db \"$(printf '%s\\033[2J')\"", "control character"},
        {"import --db \"$(printf '%s\\r')\" x.json", "control character"},
        {"merge \"$(printf 'a\\nb.db')\" --db %s", "control character"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        char args[1400];
        snprintf(args, sizeof args, cases[i].args, db);
        int rc = run(GT_CLI " %s", args);
        CHECK_MSG(rc == 2 && strstr(out, cases[i].says) && !strchr(out, '\x1b'), "%s -> %d:\n%s", args, rc, out);
    }
    CHECK(run("GEMMTUNE_DB=\"$(printf '%s\\nx')\" " GT_CLI " query", db) == 2 && strstr(out, "control character"));
    CHECK(run(GT_CLI " query --db %s.missing", db) == 1 && strstr(out, "no database at")); /* runtime: 1 */
    gt_fixture_rm(db), unlink(json);
    free(db), free(json);
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
