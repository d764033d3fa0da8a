/* The CLI's table printer (see src/cli/table.h). Tested by tests/test_cli.c. */
#include "table.h"
#include "term.h"

#include <stdlib.h>
#include <string.h>

gt_table *gt_table_new(const gt_col *cols, int ncols)
{
    gt_table *t = calloc(1, sizeof *t);
    if (!t || !(t->rows = cJSON_CreateArray())) {
        free(t);
        return NULL;
    }
    t->cols = cols;
    t->ncols = ncols;
    return t;
}

cJSON *gt_table_row(gt_table *t)
{
    cJSON *o = cJSON_CreateObject();
    if (o) cJSON_AddItemToArray(t->rows, o);
    return o;
}

void gt_table_free(gt_table *t)
{
    if (!t) return;
    cJSON_Delete(t->rows);
    free(t);
}

void gt_table_number(double v, char *buf, size_t n)
{
    for (int prec = 15; prec <= 17; ++prec) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
}

/* Cell text for the text table (table = 1) or CSV; *right = 1 for a number. */
static void cell(const cJSON *row, const gt_col *c, int table, char *buf, size_t n, int *right)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, c->key);
    *right = 0;
    if (cJSON_IsString(v)) gt_term_escape(v->valuestring, buf, n); /* data: never raw to a terminal */
    else if (cJSON_IsBool(v)) snprintf(buf, n, "%s", cJSON_IsTrue(v) ? (table ? "yes" : "true") : (table ? "" : "false"));
    else if (cJSON_IsNumber(v) && table) snprintf(buf, n, c->fmt ? c->fmt : "%g", v->valuedouble), *right = 1;
    else if (cJSON_IsNumber(v)) gt_table_number(v->valuedouble, buf, n);
    else snprintf(buf, n, "%s", table ? "n/a" : ""), *right = table && c->fmt; /* aligned as the column's numbers */
}

static int print_text(const gt_table *t, FILE *out)
{
    int *w = calloc((size_t)t->ncols, sizeof *w), right;
    char buf[8192];
    if (!w) return -1;
    for (int c = 0; c < t->ncols; ++c) w[c] = (int)strlen(t->cols[c].title ? t->cols[c].title : t->cols[c].key);
    for (const cJSON *r = t->rows->child; r; r = r->next)
        for (int c = 0; c < t->ncols; ++c) {
            cell(r, &t->cols[c], 1, buf, sizeof buf, &right);
            if ((int)strlen(buf) > w[c]) w[c] = (int)strlen(buf);
        }
    for (int c = 0; c < t->ncols; ++c) /* the last column is not padded: no trailing blanks */
        fprintf(out, "%-*s%s", c + 1 < t->ncols ? w[c] : 0, t->cols[c].title ? t->cols[c].title : t->cols[c].key,
                c + 1 < t->ncols ? "  " : "\n");
    for (const cJSON *r = t->rows->child; r; r = r->next)
        for (int c = 0; c < t->ncols; ++c) {
            cell(r, &t->cols[c], 1, buf, sizeof buf, &right);
            int pad = c + 1 < t->ncols || right ? w[c] : 0;
            fprintf(out, right ? "%*s%s" : "%-*s%s", pad, buf, c + 1 < t->ncols ? "  " : "\n");
        }
    free(w);
    return 0;
}

static void csv_field(const char *s, FILE *out)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; ++s) {
        if (*s == '"') fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static int print_csv(const gt_table *t, FILE *out)
{
    char buf[8192];
    int right;
    for (int c = 0; c < t->ncols; ++c) fprintf(out, "%s%s", t->cols[c].key, c + 1 < t->ncols ? "," : "\n");
    for (const cJSON *r = t->rows->child; r; r = r->next)
        for (int c = 0; c < t->ncols; ++c) {
            cell(r, &t->cols[c], 0, buf, sizeof buf, &right);
            csv_field(buf, out);
            fputc(c + 1 < t->ncols ? ',' : '\n', out);
        }
    return 0;
}

/* The rows with their members in column order and every column present (null when absent). */
static int print_json(const gt_table *t, FILE *out)
{
    cJSON *arr = cJSON_CreateArray();
    for (const cJSON *r = t->rows->child; arr && r; r = r->next) {
        cJSON *o = cJSON_CreateObject();
        for (int c = 0; o && c < t->ncols; ++c) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(r, t->cols[c].key);
            cJSON_AddItemToObject(o, t->cols[c].key, v ? cJSON_Duplicate(v, 1) : cJSON_CreateNull());
        }
        cJSON_AddItemToArray(arr, o);
    }
    char *text = arr ? cJSON_Print(arr) : NULL;
    cJSON_Delete(arr);
    if (!text) return -1;
    int rc = gt_term_json(out, text) < 0 || fputc('\n', out) == EOF ? -1 : 0;
    free(text);
    return rc;
}

int gt_table_print(const gt_table *t, const char *format, FILE *out)
{
    int rc = !strcmp(format, "table") ? print_text(t, out)
             : !strcmp(format, "csv") ? print_csv(t, out)
             : !strcmp(format, "json") ? print_json(t, out)
                                       : -1;
    return rc < 0 || ferror(out) ? -1 : 0;
}
