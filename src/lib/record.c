/* The recorder: with gemmtune_options.record_path or $GEMMTUNE_RECORD, gemmtune_destroy writes every distinct
 * call shape the handle served without a kernel tuned for it (any rule but exact), with its call count, merged into
 * the file under an exclusive lock so several processes can share one file. Shapes are in gemmtune's row-major
 * convention, one per line, so `gemmtune tune --sizes @FILE` tunes exactly them:
 *     # gemmtune: calls without a tuned kernel ...
 *     1000x1000x1000:nn 1234
 * Tested by tests/test_loader.c (the file format and the merge) and tests/test_loader_gpu.c (the loop). */
#include "handle.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

typedef struct {
    gt_shape s;
    long long calls;
} entry;

typedef struct {
    entry *v;
    int n, cap;
} table;

static int add(table *t, const gt_shape *s, long long calls)
{
    for (int i = 0; i < t->n; ++i)
        if (gt_shape_equal(&t->v[i].s, s)) return t->v[i].calls += calls, 0;
    if (t->n == t->cap) {
        entry *grown = realloc(t->v, (size_t)(t->cap = t->cap ? 2 * t->cap : 64) * sizeof *grown);
        if (!grown) return -1;
        t->v = grown;
    }
    t->v[t->n++] = (entry){*s, calls};
    return 0;
}

/* The lines already in the file; lines that are not "MxNxK:layout count" are dropped (comments, damage). */
static int read_existing(FILE *f, table *t)
{
    char line[256], lay[3];
    while (fgets(line, sizeof line, f)) {
        gt_shape s = {0};
        long long calls = 0;
        if (line[0] == '#' || sscanf(line, "%dx%dx%d:%2s %lld", &s.m, &s.n, &s.k, lay, &calls) != 5) continue;
        if (s.m < 1 || s.n < 1 || s.k < 1 || calls < 0 || gt_layout_parse(lay, &s.ta, &s.tb)) continue;
        if (add(t, &s, calls)) return -1;
    }
    return 0;
}

static int collect(struct gemmtune_context *h, table *t)
{
    for (int b = 0; b < GT_NBUCKET; ++b)
        for (gt_plan *p = atomic_load(&h->buckets[b]); p; p = p->next) {
            long long calls = atomic_load(&p->calls);
            if (p->choice.rule != GT_RULE_EXACT && calls > 0 && p->call.shape.k > 0 && add(t, &p->call.shape, calls))
                return -1;
        }
    return 0;
}

static int write_all(FILE *f, const table *t, const char *path)
{
    fseek(f, 0, SEEK_SET);
    fprintf(f, "# gemmtune: calls served without a kernel tuned for their shape (row-major MxNxK:layout, calls).\n"
               "# Tune them: gemmtune tune --sizes @%s\n", path);
    for (int i = 0; i < t->n; ++i)
        fprintf(f, "%dx%dx%d:%s %lld\n", t->v[i].s.m, t->v[i].s.n, t->v[i].s.k,
                gt_layout_name(t->v[i].s.ta, t->v[i].s.tb), t->v[i].calls);
    fflush(f);
    return ferror(f) || ftruncate(fileno(f), ftell(f)) ? -1 : 0;
}

int gt_record_write(struct gemmtune_context *h, char *err, size_t errlen)
{
    table t = {0};
    if (collect(h, &t)) return snprintf(err, errlen, "out of memory"), -1;
    if (!t.n) return 0;
    int fd = open(h->record_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    FILE *f = fd >= 0 ? fdopen(fd, "r+") : NULL;
    int rc = -1;
    if (!f) snprintf(err, errlen, "%s: %s", h->record_path, strerror(errno));
    else if (flock(fd, LOCK_EX)) snprintf(err, errlen, "locking %s: %s", h->record_path, strerror(errno));
    else {
        table all = {0};
        for (int i = 0; i < t.n; ++i) add(&all, &t.v[i].s, 0); /* keep this process's order first */
        rc = read_existing(f, &all);
        for (int i = 0; rc == 0 && i < t.n; ++i) rc = add(&all, &t.v[i].s, t.v[i].calls);
        if (rc == 0 && (rc = write_all(f, &all, h->record_path))) snprintf(err, errlen, "writing %s: %s", h->record_path, strerror(errno));
        free(all.v);
    }
    if (f) fclose(f);
    else if (fd >= 0) close(fd);
    free(t.v);
    return rc;
}
