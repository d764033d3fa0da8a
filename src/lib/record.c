/* The recorder: with gemmtune_options.record_path or $GEMMTUNE_RECORD, gemmtune_destroy writes every distinct
 * call shape the handle served without a kernel tuned for it (any rule but exact), with its call count, merged into
 * the file under an exclusive lock so several processes can share one file. Shapes are in gemmtune's row-major
 * convention, one per line, so `gemmtune tune --sizes @FILE` tunes exactly them; key=value fields may follow
 * (batch=B, the matrices per call; docs/LOADER.md), and an old file (none) reads the same:
 *     # gemmtune: calls without a tuned kernel ...
 *     1000x1000x1000:nn 1234
 *     64x64x64:tn 40 batch=12
 * The file must be a regular file of at most GT_FILE_MAX_TEXT bytes (db/files.h): anything else is refused and left
 * as it is. Tested by tests/test_loader.c (the lines, the refusals, and `tune --sizes` reading them) and
 * tests/test_loader_gpu.c (the loop, the merge). */
#include "files.h"
#include "handle.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

typedef struct {
    gt_record_line *v;
    int n, cap;
} table;

static int same_key(const gt_record_line *a, const gt_record_line *b)
{
    return !memcmp(&a->shape, &b->shape, sizeof a->shape) && a->batch == b->batch && !strcmp(a->extra, b->extra);
}

/* Add r's calls to its line (shape, batch and fields), or append it. */
static int add(table *t, const gt_record_line *r)
{
    for (int i = 0; i < t->n; ++i)
        if (same_key(&t->v[i], r)) return t->v[i].calls += r->calls, 0;
    if (t->n == t->cap) {
        gt_record_line *grown = realloc(t->v, (size_t)(t->cap = t->cap ? 2 * t->cap : 64) * sizeof *grown);
        if (!grown) return -1;
        t->v = grown;
    }
    t->v[t->n++] = *r;
    return 0;
}

/* "batch=B" (B >= 1), or any other key=value appended verbatim to r->extra. 0, or -1 when tok is no field. */
static int field(const char *tok, size_t len, gt_record_line *r)
{
    size_t key = strspn(tok, "abcdefghijklmnopqrstuvwxyz0123456789_");
    if (!key || key >= len || tok[key] != '=') return -1;
    if (key == 5 && !strncmp(tok, "batch", 5)) {
        char *end;
        long b = strtol(tok + 6, &end, 10);
        return end == tok + len && end > tok + 6 && b >= 1 && b <= 1 << 30 ? (r->batch = (int)b, 0) : -1;
    }
    size_t used = strlen(r->extra);
    if (used + len + 2 > sizeof r->extra) return -1;
    snprintf(r->extra + used, sizeof r->extra - used, "%s%.*s", used ? " " : "", (int)len, tok);
    return 0;
}

int gt_record_parse(const char *line, gt_record_line *r)
{
    char lay[3];
    int used = 0;
    memset(r, 0, sizeof *r);
    r->batch = 1;
    if (line[0] == '#' || sscanf(line, "%dx%dx%d:%2s %lld%n", &r->shape.m, &r->shape.n, &r->shape.k, lay, &r->calls,
                                 &used) != 5)
        return -1;
    if (r->shape.m < 1 || r->shape.n < 1 || r->shape.k < 1 || r->calls < 0 ||
        gt_layout_parse(lay, &r->shape.ta, &r->shape.tb) || !strchr(" \t\r\n#", line[used]))
        return -1;
    for (const char *p = line + used;;) {
        p += strspn(p, " \t\r\n");
        if (!*p || *p == '#') return 0;
        size_t len = strcspn(p, " \t\r\n#");
        if (field(p, len, r)) return -1;
        p += len;
    }
}

void gt_record_format(const gt_record_line *r, char *buf, size_t n)
{
    char batch[32] = "";
    if (r->batch > 1) snprintf(batch, sizeof batch, " batch=%d", r->batch);
    snprintf(buf, n, "%dx%dx%d:%s %lld%s%s%s\n", r->shape.m, r->shape.n, r->shape.k,
             gt_layout_name(r->shape.ta, r->shape.tb), r->calls, batch, r->extra[0] ? " " : "", r->extra);
}

/* The lines already in the file (its text); comments and damaged lines are dropped. */
static int read_existing(const char *text, table *t)
{
    char line[512];
    gt_record_line r;
    for (const char *p = text; *p; p += strcspn(p, "\n"), p += *p == '\n') {
        snprintf(line, sizeof line, "%.*s", (int)strcspn(p, "\n"), p);
        if (gt_record_parse(line, &r) == 0 && add(t, &r)) return -1;
    }
    return 0;
}

static int collect(struct gemmtune_context *h, table *t)
{
    for (int b = 0; b < GT_NBUCKET; ++b)
        for (gt_plan *p = atomic_load(&h->buckets[b]); p; p = p->next) {
            const gt_record_line r = {.shape = p->call.shape, .batch = 1, .calls = atomic_load(&p->calls)};
            if (p->choice.rule != GT_RULE_EXACT && r.calls > 0 && r.shape.k > 0 && add(t, &r)) return -1;
        }
    return 0;
}

static int write_all(FILE *f, const table *t, const char *path)
{
    fseek(f, 0, SEEK_SET);
    char line[400];
    fprintf(f, "# gemmtune: calls served without a kernel tuned for their shape (row-major MxNxK:layout, calls, "
               "then key=value fields: batch=B).\n# Tune them: gemmtune tune --sizes @%s\n", path);
    for (int i = 0; i < t->n; ++i) {
        gt_record_format(&t->v[i], line, sizeof line);
        fputs(line, f);
    }
    fflush(f);
    return ferror(f) || ftruncate(fileno(f), ftell(f)) ? -1 : 0;
}

int gt_record_write(struct gemmtune_context *h, char *err, size_t errlen)
{
    table t = {0};
    if (collect(h, &t)) return snprintf(err, errlen, "out of memory"), -1;
    if (!t.n) return 0;
    /* a regular file only (a FIFO or a device would hang or feed the read forever), read to a bounded size */
    int fd = gt_file_open_regular(h->record_path, O_RDWR | O_CREAT, 0644, err, errlen);
    FILE *f = fd >= 0 ? fdopen(fd, "r+") : NULL;
    int rc = -1;
    if (fd >= 0 && !f) snprintf(err, errlen, "%s: %s", h->record_path, strerror(errno));
    else if (f && flock(fd, LOCK_EX)) snprintf(err, errlen, "locking %s: %s", h->record_path, strerror(errno));
    else if (f) {
        table all = {0};
        char *text = gt_file_read_fd(fd, h->record_path, GT_FILE_MAX_TEXT, NULL, err, errlen);
        for (int i = 0; i < t.n; ++i) { /* keep this process's order first */
            gt_record_line none = t.v[i];
            none.calls = 0;
            add(&all, &none);
        }
        rc = text ? read_existing(text, &all) : -1; /* too big or unreadable: left as it is */
        for (int i = 0; rc == 0 && i < t.n; ++i) rc = add(&all, &t.v[i]);
        if (rc == 0 && (rc = write_all(f, &all, h->record_path))) snprintf(err, errlen, "writing %s: %s", h->record_path, strerror(errno));
        free(text);
        free(all.v);
    }
    if (f) fclose(f);
    else if (fd >= 0) close(fd);
    free(t.v);
    return rc;
}
