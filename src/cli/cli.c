/* Argument helpers shared by the verbs: sizes, GPU lists, layouts, integers, durations, paths, and the GPU-memory
 * check of a sweep. Tested in tests/test_cli.c. */
#include "cli.h"
#include "files.h"
#include "term.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GT_MAX_DIM 1048576

int gt_cli_parse_sizes(const char *text, gt_shape **out, char *err, size_t errlen)
{
    int cap = 8, n = 0;
    gt_shape *v = malloc(cap * sizeof *v);
    const char *s = text;
    if (!text || !*text) goto bad;
    while (v) {
        const char *end;
        if (n == cap) v = realloc(v, (cap *= 2) * sizeof *v);
        if (!v || gt_shape_parse_dims(s, GT_MAX_DIM, &v[n], &end) < 0 || (*end && *end != ',')) goto bad;
        n++, s = end;
        if (!*s) {
            *out = v;
            return n;
        }
        s++;
    }
bad:
    snprintf(err, errlen, "bad --sizes '%s': want a comma list of N (N x N x N), MxNxK, or BxMxNxK (a batch of B "
             "products), each size 1..%d", text ? text : "", GT_MAX_DIM);
    free(v);
    return -1;
}

/* One item "N", "MxNxK", "BxMxNxK" or any with ":layout"; *lay is -1 without one. 0, or -1 on a bad item. */
static int parse_item(const char *item, gt_shape *s, int *lay)
{
    char buf[128], *colon;
    gt_shape *one = NULL;
    char err[64];
    snprintf(buf, sizeof buf, "%s", item);
    *lay = -1;
    if ((colon = strchr(buf, ':'))) {
        int ta, tb;
        if (gt_layout_parse(colon + 1, &ta, &tb)) return -1;
        *lay = ta * 2 + tb;
        *colon = '\0';
    }
    if (strchr(buf, ',') || gt_cli_parse_sizes(buf, &one, err, sizeof err) != 1) return free(one), -1;
    *s = *one;
    free(one);
    if (*lay >= 0) s->ta = *lay >> 1, s->tb = *lay & 1;
    return 0;
}

/* After "MxNxK:layout" on a record file's line: the call count (into *calls; left as it is without one) and any
 * key=value fields (docs/LOADER.md), skipped: tuning takes the shape and its layout. Stays on the line. */
static char *skip_record_fields(char *s, double *calls)
{
    for (int first = 1;; first = 0) {
        char *t = s + strspn(s, " \t");
        size_t len = strcspn(t, ", \t\r\n#"), key = strspn(t, "abcdefghijklmnopqrstuvwxyz0123456789_");
        int count = first && len && strspn(t, "0123456789") == len, field = key && key < len && t[key] == '=';
        if (!count && !field) return s;
        if (count) *calls = strtod(t, NULL);
        s = t + len;
    }
}

typedef struct {
    gt_shape s;
    double work; /* calls x 2 m n k batch: the FLOPs the program spent on the shape */
    int at;      /* place in the file */
} weighed;

static int heavier_first(const void *a, const void *b)
{
    const weighed *x = a, *y = b;
    if (x->work != y->work) return x->work > y->work ? -1 : 1;
    return x->at - y->at;
}

/* A record file's shapes, heaviest first (calls x FLOPs, the file's order among equals), so that a sweep with a
 * --budget spends it where the program spends its time. Unchanged unless every item has a call count. */
static int order_by_work(gt_shape *v, const double *calls, int n)
{
    for (int i = 0; i < n; ++i)
        if (!(calls[i] > 0)) return 0;
    weighed *w = malloc((size_t)n * sizeof *w);
    if (!w) return -1;
    for (int i = 0; i < n; ++i)
        w[i] = (weighed){v[i], calls[i] * 2.0 * v[i].m * v[i].n * v[i].k * gt_shape_batch(&v[i]), i};
    qsort(w, (size_t)n, sizeof *w, heavier_first);
    for (int i = 0; i < n; ++i) v[i] = w[i].s;
    free(w);
    return 0;
}

/* Items of a list text (commas, spaces or newlines between them; '#' to the end of a line is a comment; after an
 * item with a layout, a plain number is the recorder's call count and key=value its fields, skipped). */
static int parse_items(char *text, gt_shape **out, double **calls, int *n, int *cap, int *with, int *without,
                       const char *where, char *err, size_t errlen)
{
    int line = 1;
    for (char *s = text; *s;) {
        if (*s == '#') s += strcspn(s, "\n");
        if (*s == '\n') ++line;
        if (*s == ',' || *s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') { ++s; continue; }
        if (!*s) break;
        size_t len = strcspn(s, ", \t\r\n#");
        char item[128];
        snprintf(item, sizeof item, "%.*s", (int)(len < 127 ? len : 127), s);
        s += len;
        int lay;
        if (*n == *cap) {
            *cap = *cap ? 2 * *cap : 16;
            gt_shape *g = realloc(*out, (size_t)*cap * sizeof *g);
            if (g) *out = g;
            double *c = g ? realloc(*calls, (size_t)*cap * sizeof *c) : NULL;
            if (!c) return snprintf(err, errlen, "out of memory"), -1;
            *calls = c;
        }
        if (parse_item(item, &(*out)[*n], &lay) == 0) {
            ++*(lay >= 0 ? with : without);
            (*calls)[*n] = 0;
            if (lay >= 0) s = skip_record_fields(s, &(*calls)[*n]);
            ++*n;
            continue;
        }
        if (where)
            return snprintf(err, errlen, "%s:%d: bad size '%s': want N, MxNxK or BxMxNxK, optionally with :layout",
                            where, line, item), -1;
        return snprintf(err, errlen, "bad --sizes item '%s': want N, MxNxK or BxMxNxK (a batch of B products), "
                        "optionally :layout (nn, nt, tn, tt), or @FILE", item), -1;
    }
    return 0;
}

static char *slurp(const char *path, char *err, size_t errlen)
{
    char msg[900];
    char *text = gt_file_read(path, GT_FILE_MAX_TEXT, NULL, msg, sizeof msg);
    if (!text) snprintf(err, errlen, "size list: %s", msg);
    return text;
}

int gt_cli_parse_size_list(const char *text, gt_shape **out, int *with_layout, char *err, size_t errlen)
{
    int n = 0, cap = 0, with = 0, without = 0, rc;
    *out = NULL;
    *with_layout = 0;
    if (!text || !*text) return snprintf(err, errlen, "empty --sizes"), -1;
    char *buf = text[0] == '@' ? slurp(text + 1, err, errlen) : strdup(text);
    if (!buf) return -1;
    double *calls = NULL;
    rc = parse_items(buf, out, &calls, &n, &cap, &with, &without, text[0] == '@' ? text + 1 : NULL, err, errlen);
    if (!rc && text[0] == '@' && order_by_work(*out, calls, n)) rc = (snprintf(err, errlen, "out of memory"), -1);
    free(calls);
    free(buf);
    if (!rc && !n) rc = (snprintf(err, errlen, "%s holds no sizes", text[0] == '@' ? text + 1 : "--sizes"), -1);
    if (!rc && with && without)
        rc = (snprintf(err, errlen, "--sizes mixes items with a layout (MxNxK:nn) and items without: give every item "
                       "one, or none and use --layouts"), -1);
    if (rc) {
        free(*out);
        *out = NULL;
        return -1;
    }
    *with_layout = with > 0;
    return n;
}

int gt_cli_check_path(const char *what, const char *path, char *err, size_t errlen)
{
    for (const unsigned char *p = (const unsigned char *)path; *p; ++p)
        if (*p < 0x20 || *p == 0x7f) {
            char shown[600];
            gt_term_escape(path, shown, sizeof shown);
            return snprintf(err, errlen, "%s '%s' holds a control character (byte 0x%02x): refused", what, shown, *p),
                   -1;
        }
    return 0;
}

int gt_cli_parse_gpus(const char *text, int *ids, int max, char *err, size_t errlen)
{
    int n = 0;
    const char *s = text;
    while (s && *s && n < max) {
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (end == s || errno || v < 0 || v > 1023 || (*end && *end != ',')) break;
        for (int i = 0; i < n; ++i)
            if (ids[i] == v) goto bad;
        ids[n++] = (int)v;
        if (!*end) return n;
        s = end + 1;
    }
bad:
    snprintf(err, errlen, "bad --gpu '%s': want a device index or a comma list of distinct indices", text ? text : "");
    return -1;
}

int gt_cli_parse_layouts(const char *text, int *lay, int max, char *err, size_t errlen)
{
    int n = 0;
    const char *s = text;
    while (s && *s && n < max) {
        char two[3] = {s[0], s[0] ? s[1] : 0, 0};
        int ta, tb;
        if (gt_layout_parse(two, &ta, &tb) < 0 || (s[2] && s[2] != ',')) break;
        for (int i = 0; i < n; ++i)
            if (lay[i] == ta * 2 + tb) goto bad;
        lay[n++] = ta * 2 + tb;
        if (!s[2]) return n;
        s += 3;
    }
bad:
    snprintf(err, errlen, "bad --layouts '%s': want a comma list of distinct nn, nt, tn, tt", text ? text : "");
    return -1;
}

int gt_cli_parse_int(const char *opt, const char *text, long max, long *out, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    long v = text ? strtol(text, &end, 10) : 0;
    if (!text || end == text || *end || errno || v < 1 || v > max) {
        snprintf(err, errlen, "bad %s '%s': want an integer 1..%ld", opt, text ? text : "", max);
        return -1;
    }
    *out = v;
    return 0;
}

int gt_cli_parse_duration(const char *text, double *seconds, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    double v = text ? strtod(text, &end) : 0;
    double unit = 1;
    if (text && end != text && !errno) {
        if (!strcmp(end, "") || !strcmp(end, "s")) unit = 1;
        else if (!strcmp(end, "m")) unit = 60;
        else if (!strcmp(end, "h")) unit = 3600;
        else unit = 0;
        if (unit > 0 && v > 0 && v * unit <= 30 * 86400.0) {
            *seconds = v * unit;
            return 0;
        }
    }
    snprintf(err, errlen, "bad duration '%s': want a positive number with s, m or h (e.g. 90s, 30m, 8h)",
             text ? text : "");
    return -1;
}

/* What a sweep of one shape holds on the GPU (tuner/measure.c): A and B with their absolute values for the error
 * bound, C with its initial copy, the cuBLAS reference and |A||B| (all FP32, with a little leading-dimension
 * padding in the checks), the 2 x L2 flush buffer, and a reserve for the CUDA context, cuBLAS and split-K
 * workspaces (these are capped at 512 MiB by the families). */
#define GT_MEM_RESERVE (1024.0 * 1024 * 1024)
double gt_cli_sweep_bytes(const gt_shape *s, long long l2_bytes)
{
    const double m = s->m, n = s->n, k = s->k, pad = 64;
    const double floats = gt_shape_batch(s) * (2 * (m * (k + pad) + k * (n + pad)) + 4 * m * (n + pad));
    return 4 * floats + 2.0 * (double)(l2_bytes > 0 ? l2_bytes : 64 << 20) + GT_MEM_RESERVE;
}

int gt_cli_check_memory(const char *gpu, long long mem_bytes, long long l2_bytes, const gt_shape *shapes, int n,
                        char *msg, size_t msglen)
{
    const double gib = 1024.0 * 1024 * 1024;
    int big = 0;
    for (int i = 1; i < n; ++i)
        if (gt_cli_sweep_bytes(&shapes[i], l2_bytes) > gt_cli_sweep_bytes(&shapes[big], l2_bytes)) big = i;
    const gt_shape *s = &shapes[big];
    double need = gt_cli_sweep_bytes(s, l2_bytes), have = (double)mem_bytes;
    /* the largest N x N x N that fits: 32 N (N + 64) bytes of matrices on top of the fixed part */
    double fixed = gt_cli_sweep_bytes(&(gt_shape){0, 0, 0, 0, 0}, l2_bytes);
    long square = have > fixed ? (long)((-2048.0 + sqrt(2048.0 * 2048.0 + 128.0 * (have - fixed))) / 64.0) : 0;
    while (square > 0 && gt_cli_sweep_bytes(&(gt_shape){(int)square, (int)square, (int)square, 0, 0}, l2_bytes) > have)
        square--;
    char dims[48];
    gt_shape_dims(s, dims, sizeof dims);
    if (mem_bytes <= 0) {
        snprintf(msg, msglen, "memory: %s did not report its memory; the largest shape, %s, needs %.1f GiB", gpu, dims,
                 need / gib);
        return 0;
    }
    if (need > have) {
        snprintf(msg, msglen, "shape %s needs %.1f GiB of GPU memory (A, B and C, their validation copies, the "
                 "L2 flush buffer and a 1 GiB reserve) but %s has %.1f GiB: square shapes fit up to about %ld x %ld "
                 "x %ld; nothing was run", dims, need / gib, gpu, have / gib, square, square, square);
        return -1;
    }
    snprintf(msg, msglen, "memory: %s has %.1f GiB; the largest shape, %s, needs %.1f GiB (square shapes fit "
             "up to about %ld x %ld x %ld)", gpu, have / gib, dims, need / gib, square, square, square);
    return 0;
}
