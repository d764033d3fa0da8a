/* A kernel's identity (family.h: gt_source_id, gt_kernel_id, gt_kernel_stale): the one place an id is made, so the
 * cubin cache, the resume lookup, the stored winners and the export's drift check agree on what "the same kernel"
 * means. Tested by tests/test_kernels.c (kernel_id_*), no GPU. */
#include "family.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_HEADERS 64 /* distinct headers one kernel may include, transitively */

typedef struct {
    uint64_t h;
    char seen[MAX_HEADERS][128];
    int nseen;
    gt_header_fn header;
    void *ctx;
} id_state;

static void fnv(id_state *s, const char *p, size_t n)
{
    for (size_t i = 0; i < n; ++i) s->h = (s->h ^ (unsigned char)p[i]) * 1099511628211ull;
}

/* The name of an `#include "name"` line starting at p (a line start), into name; 0 when the line is not one.
 * `#include <...>` is the toolkit's (covered by the NVRTC version in the cubin cache's key), not ours. */
static int include_name(const char *p, char *name, size_t n)
{
    while (*p == ' ' || *p == '\t') ++p;
    if (*p++ != '#') return 0;
    while (*p == ' ' || *p == '\t') ++p;
    if (strncmp(p, "include", 7)) return 0;
    p += 7;
    while (*p == ' ' || *p == '\t') ++p;
    if (*p++ != '"') return 0;
    const char *end = strchr(p, '"'), *nl = strchr(p, '\n');
    if (!end || end == p || (nl && nl < end) || (size_t)(end - p) >= n) return 0;
    snprintf(name, n, "%.*s", (int)(end - p), p);
    return 1;
}

static int seen(const id_state *s, const char *name)
{
    for (int i = 0; i < s->nseen; ++i)
        if (!strcmp(s->seen[i], name)) return 1;
    return 0;
}

/* Every header text includes, depth first in order of first inclusion, each once: its name and text enter the
 * hash. A name with no text (NVRTC would not find it either) enters by name alone. An include inside a comment or
 * a disabled #if counts too: it can only make the id change more often than needed, never less. */
static void hash_includes(id_state *s, const char *text)
{
    char name[128];
    for (const char *line = text; line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        if (!include_name(line, name, sizeof name) || seen(s, name) || s->nseen == MAX_HEADERS) continue;
        snprintf(s->seen[s->nseen++], sizeof s->seen[0], "%s", name);
        const char *body = s->header(name, s->ctx);
        fnv(s, "\n//gemmtune header ", 19);
        fnv(s, name, strlen(name) + 1); /* the NUL ends the name */
        if (body) {
            fnv(s, body, strlen(body));
            hash_includes(s, body);
        }
    }
}

static const char *embedded_header(const char *name, void *ctx)
{
    (void)ctx;
    return gt_template_text(name);
}

void gt_source_id_with(const char *src, gt_header_fn header, void *ctx, char out[17])
{
    id_state s = {.h = 14695981039346656037ull, .header = header, .ctx = ctx};
    fnv(&s, src, strlen(src));
    hash_includes(&s, src);
    snprintf(out, 17, "%016llx", (unsigned long long)s.h);
}

void gt_source_id(const char *src, char out[17]) { gt_source_id_with(src, embedded_header, NULL, out); }

int gt_kernel_id_with(const gt_family *f, const gt_params *p, int ta, int tb, int batched, gt_header_fn header,
                      void *ctx, char id[17], char **src, char *err, size_t errlen)
{
    if (src) *src = NULL;
    if (f->build != GT_BUILD_NVRTC) { /* no source: named by what it replays */
        char params[256], key[320];
        gt_params_format(f, p, params, sizeof params);
        int len = snprintf(key, sizeof key, "%s:%s", f->name, params);
        gt_hash_hex(key, len < (int)sizeof key ? (size_t)len : sizeof key - 1, id);
        return 0;
    }
    char *text = gt_render(f, p, ta, tb, batched, err, errlen);
    if (!text) return -1;
    gt_source_id_with(text, header ? header : embedded_header, ctx, id);
    if (src) *src = text;
    else free(text);
    return 0;
}

int gt_kernel_id(const gt_family *f, const gt_params *p, int ta, int tb, int batched, char id[17], char **src,
                 char *err, size_t errlen)
{
    return gt_kernel_id_with(f, p, ta, tb, batched, NULL, NULL, id, src, err, errlen);
}

int gt_kernel_stale(const char *family, const char *params, int ta, int tb, int batched, const char *id)
{
    char err[256], now[17];
    const gt_family *f = family ? gt_family_find(family) : NULL;
    gt_params p;
    if (!f || f->build != GT_BUILD_NVRTC || !params || !id || gt_params_parse(f, params, &p, err, sizeof err))
        return 0; /* a family with no source replays what its params say: nothing it is built from can change */
    if (gt_kernel_id(f, &p, ta, tb, batched, now, NULL, err, sizeof err)) return 0;
    return strcmp(now, id) != 0;
}
