/* One printer for every table the CLI prints, as an aligned text table, CSV or JSON: the rows are cJSON objects,
 * so JSON output is cJSON's own and the three formats cannot disagree. Tested by tests/test_cli.c. */
#ifndef GT_CLI_TABLE_H
#define GT_CLI_TABLE_H

#include <cjson/cJSON.h>
#include <stdio.h>

/* A column: the row member it shows, its header in the text table, how a number looks there. */
typedef struct {
    const char *key;   /* JSON member and CSV header */
    const char *title; /* text-table header; NULL: key */
    const char *fmt;   /* text-table format of a number ("%.4f"); NULL: "%g". Text is left-aligned, numbers right;
                          n/a in a column with a fmt is right-aligned like its numbers */
} gt_col;

typedef struct {
    const gt_col *cols;
    int ncols;
    cJSON *rows; /* array of objects; members that are absent or null show as n/a (text), empty (CSV), null */
} gt_table;

/* A table with these columns and no rows; NULL when out of memory. */
gt_table *gt_table_new(const gt_col *cols, int ncols);
/* Append an empty row and return it, to fill with cJSON_Add*ToObject; NULL when out of memory. */
cJSON *gt_table_row(gt_table *t);
void gt_table_free(gt_table *t);

/* Write t to out as "table" (aligned columns, a header line; true shows as yes, false as nothing), "csv" (a header
 * line, RFC 4180 quoting, numbers as the shortest text that reads back exactly) or "json" (the array of row objects,
 * members in column order). Text is data and never reaches out raw: in a table and CSV its control bytes are
 * escaped by gt_term_escape (src/cli/term.h), and JSON escapes them as \uNNNN. Nothing is ever cut short.
 * Returns 0, or -1 on a bad format or a write error. */
int gt_table_print(const gt_table *t, const char *format, FILE *out);

/* The shortest decimal text that reads back as exactly v. Cannot fail. */
void gt_table_number(double v, char *buf, size_t n);

#endif
