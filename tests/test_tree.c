/* The source tree's own claims: the comment that opens each C and CUDA file names files that exist (issue 27 item
 * 7 found thirteen that had moved). Reads the tree at gt_src_root(), no GPU. Run: build/gt_tests --cpu tree */
#include "harness.h"

#include <ctype.h>
#include <ftw.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int stale;

/* The opening comment of text: a block comment, or the leading // lines. */
static size_t opening(const char *text, const char **start)
{
    while (isspace((unsigned char)*text)) ++text;
    *start = text;
    if (!strncmp(text, "/*", 2)) {
        const char *end = strstr(text, "*/");
        return end ? (size_t)(end - text) : strlen(text);
    }
    const char *p = text;
    while (!strncmp(p, "//", 2)) p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p);
    return (size_t)(p - text);
}

static int exists(const char *pattern)
{
    glob_t g;
    int found = glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc > 0;
    globfree(&g);
    return found;
}

static int is_path_char(char c) { return isalnum((unsigned char)c) || strchr("_.*/-", c); }

/* Every token with a folder and a source file's extension ("src/lib/loader*.c"), relative to the root or to the
 * file's folder. */
static void check_paths(const char *file, const char *text, size_t n)
{
    static const char *const ext[] = {".c", ".h", ".cu", ".cuh", ".sql", ".md", ".sh", ".py", ".map", ".conf"};
    char dir[4096], tok[512], path[4700];
    snprintf(dir, sizeof dir, "%s", file);
    *strrchr(dir, '/') = '\0';
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && is_path_char(text[j])) ++j;
        size_t len = j - i;
        while (len && strchr(".-", text[i + len - 1])) --len; /* a sentence's full stop */
        if (len && len < sizeof tok && (i == 0 || !is_path_char(text[i - 1]))) {
            snprintf(tok, sizeof tok, "%.*s", (int)len, text + i);
            const char *dot = strrchr(tok, '.');
            int source = 0;
            for (size_t e = 0; dot && e < sizeof ext / sizeof ext[0]; ++e) source |= !strcmp(dot, ext[e]);
            if (source && strchr(tok, '/') && tok[0] != '/' && tok[0] != '.' && !strstr(tok, "//")) {
                snprintf(path, sizeof path, "%s/%s", gt_src_root(), tok);
                int ok = exists(path);
                snprintf(path, sizeof path, "%s/%s", dir, tok);
                if (!ok && !exists(path) && stale++ < 20)
                    CHECK_MSG(0, "%s: its opening comment names %s, which does not exist", file + strlen(gt_src_root())
                              + 1, tok);
            }
        }
        i = j > i ? j : i + 1;
    }
}

static int visit(const char *file, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb, (void)ftw;
    const char *dot = strrchr(file, '.');
    if (type != FTW_F || !dot || (strcmp(dot, ".c") && strcmp(dot, ".h") && strcmp(dot, ".cu") && strcmp(dot, ".cuh")))
        return 0;
    char text[8192];
    FILE *f = fopen(file, "r");
    size_t got = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    text[got] = '\0';
    const char *start;
    size_t n = opening(text, &start);
    check_paths(file, start, n);
    return 0;
}

GT_TEST(tree_opening_comments_name_files_that_exist, GT_NEEDS_NONE)
{
    static const char *const folders[] = {"src", "kernels", "db", "tuner", "templates", "tests", "docs"};
    char dir[4200];
    stale = 0;
    for (size_t i = 0; i < sizeof folders / sizeof folders[0]; ++i) {
        snprintf(dir, sizeof dir, "%s/%s", gt_src_root(), folders[i]);
        nftw(dir, visit, 16, FTW_PHYS);
    }
    CHECK_MSG(stale == 0, "%d stale paths", stale);
}
