/* The recorder: with gemmtune_options.record_path or $GEMMTUNE_RECORD, gemmtune_destroy writes every distinct
 * call shape the handle served without a kernel tuned for it (any rule but exact), with its call count, merged into
 * the file under an exclusive lock so several processes can share one file. Shapes are in gemmtune's row-major
 * convention, one per line, as `gemmtune tune --sizes @FILE` takes them (a strided batch with its count first); a
 * later version's key=value fields may follow, and are kept (docs/LOADER.md):
 *     # gemmtune: calls without a tuned kernel ...
 *     1000x1000x1000:nn 1234
 *     12x64x64x64:tn 40
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
    return gt_shape_equal(&a->shape, &b->shape) && !strcmp(a->extra, b->extra);
}

/* Add r's calls to its line (shape and fields), or append it. */
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

/* A key=value field, appended verbatim to r->extra. 0, or -1 when tok is no field. */
static int field(const char *tok, size_t len, gt_record_line *r)
{
    size_t key = strspn(tok, "abcdefghijklmnopqrstuvwxyz0123456789_");
    if (!key || key >= len || tok[key] != '=') return -1;
    size_t used = strlen(r->extra);
    if (used + len + 2 > sizeof r->extra) return -1;
    snprintf(r->extra + used, sizeof r->extra - used, "%s%.*s", used ? " " : "", (int)len, tok);
    return 0;
}

int gt_record_parse(const char *line, gt_record_line *r)
{
    char lay[3];
    int used = 0;
    const char *p;
    memset(r, 0, sizeof *r);
    if (gt_shape_parse_dims(line, 1L << 30, &r->shape, &p) < 0 || !memchr(line, 'x', (size_t)(p - line)) ||
        sscanf(p, ":%2s %lld%n", lay, &r->calls, &used) != 2)
        return -1; /* a comment, or no MxNxK:layout count */
    p += used;
    if (r->calls < 0 || gt_layout_parse(lay, &r->shape.ta, &r->shape.tb) || !strchr(" \t\r\n#", *p)) return -1;
    for (;;) {
        p += strspn(p, " \t\r\n");
        if (!*p || *p == '#') return 0;
        size_t len = strcspn(p, " \t\r\n#");
        if (field(p, len, r)) return -1;
        p += len;
    }
}

void gt_record_format(const gt_record_line *r, char *buf, size_t n)
{
    char dims[48];
    snprintf(buf, n, "%s:%s %lld%s%s\n", gt_shape_dims(&r->shape, dims, sizeof dims),
             gt_layout_name(r->shape.ta, r->shape.tb), r->calls, r->extra[0] ? " " : "", r->extra);
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
            const gt_record_line r = {.shape = p->call.shape, .calls = atomic_load(&p->calls)};
            if (p->choice.rule != GT_RULE_EXACT && r.calls > 0 && r.shape.k > 0 && add(t, &r)) return -1;
        }
    return 0;
}

static int write_all(FILE *f, const table *t, const char *path)
{
    fseek(f, 0, SEEK_SET);
    char line[400];
    fprintf(f, "# gemmtune: calls served without a kernel tuned for their shape (row-major MxNxK:layout, or "
               "BxMxNxK:layout for a batch of B, then the calls).\n# Tune them: gemmtune tune --sizes @%s\n", path);
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
