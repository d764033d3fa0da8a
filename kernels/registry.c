/* Family registry: the generated table (build/gen/families.inc, one line per family file in kernels/) in a stable
 * order: the families that state a place (gt_family.order, the seeds' optimisation path) by it, then the rest by
 * name; then families a program registers itself (the tests' deliberately broken ones), in the order registered.
 * Tested by tests/test_kernels.c (registry_*). */
#include "family.h"

#include <limits.h>
#include <string.h>

#define GT_FAMILY(name) extern const gt_family gt_family_##name;
#include "families.inc"
#undef GT_FAMILY
#define GT_FAMILY(name) &gt_family_##name,
static const gt_family *const table[] = {
#include "families.inc"
};
#undef GT_FAMILY

enum { NFAM = (int)(sizeof table / sizeof table[0]), MAX_EXTRA = 8 };

/* Written only before main (constructors), read after: no lock. */
static const gt_family *extra[MAX_EXTRA];
static int nextra;

/* A family's place: the one its descriptor states, else after every stated one. */
static int rank(const gt_family *f) { return f->order > 0 ? f->order : INT_MAX; }

static int before(const gt_family *a, const gt_family *b)
{
    int ra = rank(a), rb = rank(b);
    return ra != rb ? ra < rb : strcmp(a->name, b->name) < 0;
}

int gt_family_register(const gt_family *f)
{
    if (nextra == MAX_EXTRA || gt_family_find(f->name)) return -1;
    extra[nextra++] = f;
    return 0;
}

int gt_family_count(void) { return NFAM + nextra; }

/* The i-th family in stable order; a selection over the small table, so no shared mutable state. */
const gt_family *gt_family_at(int i)
{
    if (i >= NFAM && i < NFAM + nextra) return extra[i - NFAM];
    if (i < 0 || i >= NFAM) return NULL;
    for (int c = 0; c < NFAM; ++c) {
        int below = 0;
        for (int o = 0; o < NFAM; ++o) below += before(table[o], table[c]);
        if (below == i) return table[c];
    }
    return NULL;
}

const gt_family *gt_family_builtin(const char **params)
{
    for (int i = 0; i < gt_family_count(); ++i) {
        const gt_family *f = gt_family_at(i);
        if (f->builtin_params && !f->test_only) return *params = f->builtin_params, f;
    }
    return NULL;
}

const gt_family *gt_family_find(const char *name)
{
    for (int i = 0; name && i < NFAM; ++i)
        if (!strcmp(table[i]->name, name)) return table[i];
    for (int i = 0; name && i < nextra; ++i)
        if (!strcmp(extra[i]->name, name)) return extra[i];
    return NULL;
}
