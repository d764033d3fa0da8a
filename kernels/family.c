/* Generic family helpers: enumeration over a default space, params text, layouts, rendering, hashing.
 * Tested by tests/test_kernels.c (make test). */
#include "family.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per-block limits of every architecture the CUDA toolkit targets or has targeted since sm_70, from the CUDA C
 * Programming Guide's technical specifications per compute capability (and, for sm_88 and sm_101, which it does
 * not list, the toolkit's cuda_occupancy.h): 1024 threads, 64 K registers (255 a thread) and 48 KiB of static
 * shared memory a block on all of them. They differ in the dynamic shared memory a block may opt in to: the SM's
 * shared memory less the 1 KiB the system keeps. sm_101 is Thor under CUDA 12.8/12.9 (CUDA 13 renamed it sm_110);
 * a database from then may still name it. */
static const struct {
    int major, minor, smem_optin_kib;
} archs[] = {
    {7, 0, 96},  {7, 2, 96},   {7, 5, 64},   {8, 0, 163},  {8, 6, 99},   {8, 7, 163}, {8, 8, 99},  {8, 9, 99},
    {9, 0, 227}, {10, 0, 227}, {10, 1, 227}, {10, 3, 227}, {11, 0, 227}, {12, 0, 99}, {12, 1, 99},
};

int gt_arch_parse(const char *arch, int *major, int *minor, char *suffix)
{
    const size_t digits = arch && !strncmp(arch, "sm_", 3) ? strspn(arch + 3, "0123456789") : 0;
    if ((digits != 2 && digits != 3) || arch[3] == '0') return -1;
    const char *end = arch + 3 + digits;
    if (*end && ((*end != 'a' && *end != 'f') || end[1])) return -1; /* one suffix letter at most, nothing after */
    const int cc = atoi(arch + 3);
    *major = cc / 10;
    *minor = cc % 10;
    if (suffix) *suffix = *end;
    return 0;
}

int gt_limits_for_cc(int major, int minor, gt_limits *out)
{
    for (size_t i = 0; i < sizeof archs / sizeof archs[0]; ++i) {
        if (archs[i].major != major || archs[i].minor != minor) continue;
        *out = (gt_limits){.cc_major = major,
                           .cc_minor = minor,
                           .max_threads_per_block = 1024,
                           .max_smem_per_block = 48 * 1024,
                           .max_smem_optin = archs[i].smem_optin_kib * 1024,
                           .max_regs_per_block = 65536,
                           .max_regs_per_thread = 255};
        return 1;
    }
    return 0;
}

int gt_limits_for_arch(const char *arch, gt_limits *out)
{
    int major, minor;
    return gt_arch_parse(arch, &major, &minor, NULL) == 0 && gt_limits_for_cc(major, minor, out);
}

void gt_arch_list(char *out, size_t n)
{
    size_t used = 0;
    if (n) out[0] = 0;
    for (size_t i = 0; i < sizeof archs / sizeof archs[0] && used < n; ++i)
        used += (size_t)snprintf(out + used, n - used, "%ssm_%d%d", i ? ", " : "", archs[i].major, archs[i].minor);
}

void gt_family_arch(const gt_family *f, const char *arch, char *out, size_t n)
{
    int major, minor;
    if (f && f->arch_specific && gt_arch_parse(arch, &major, &minor, NULL) == 0)
        snprintf(out, n, "sm_%d%da", major, minor); /* sm_90, sm_90a and sm_90f alike: that one arch's features */
    else snprintf(out, n, "%s", arch);
}

int gt_block_fits(long threads, long static_smem, long regs, const gt_limits *lim, char *why, size_t n)
{
    if (threads % 32 || threads < 64 || threads > lim->max_threads_per_block)
        GT_REJECT("%ld threads: not a whole number of warps in [64, %d]", threads, lim->max_threads_per_block);
    if (static_smem > lim->max_smem_per_block) GT_REJECT("%ld B static shared memory", static_smem);
    const long cap = lim->max_regs_per_block / threads;
    if (regs > lim->max_regs_per_thread || regs > cap)
        GT_REJECT("~%ld registers/thread over the cap of %ld", regs,
                  cap < lim->max_regs_per_thread ? cap : lim->max_regs_per_thread);
    return 1;
}

int gt_block_fits_dynamic(long threads, int minb, long dyn_smem, long regs, const gt_limits *lim, char *why,
                          size_t n)
{
    if (threads % 32 || threads < 64 || threads > lim->max_threads_per_block)
        GT_REJECT("%ld threads: not a whole number of warps in [64, %d]", threads, lim->max_threads_per_block);
    if (dyn_smem > lim->max_smem_optin) GT_REJECT("%ld B dynamic shared memory over %d", dyn_smem, lim->max_smem_optin);
    const long cap = lim->max_regs_per_block / (threads * (minb > 0 ? minb : 1));
    const long lim_regs = cap < lim->max_regs_per_thread ? cap : lim->max_regs_per_thread;
    if (regs > lim_regs) GT_REJECT("~%ld registers/thread over the cap of %ld", regs, lim_regs);
    return 1;
}

int gt_blocks_per_sm(int threads, int regs, long smem, const gt_limits *lim)
{
    enum { THREADS_PER_SM = 2048, BLOCKS_PER_SM = 32 };
    if (threads <= 0) return 1;
    regs = (regs + 7) / 8 * 8;
    int r = THREADS_PER_SM / threads;
    if (regs > 0 && lim->max_regs_per_block / (threads * regs) < r) r = lim->max_regs_per_block / (threads * regs);
    if (smem > 0 && lim->max_smem_optin / smem < r) r = (int)(lim->max_smem_optin / smem);
    if (r > BLOCKS_PER_SM) r = BLOCKS_PER_SM;
    return r > 0 ? r : 1;
}

int gt_skinny_slices(const gt_shape *s, int small, int fill, int warps, int step, long blocks, int sms)
{
    const long steps = gt_cdiv(s->k, step), traffic = s->k / (4L * small);
    long z = (long long)fill * (sms > 0 ? sms : 1) / ((long long)blocks * warps);
    z = z < steps / 2 ? z : steps / 2;
    z = z < traffic ? z : traffic;
    z = z < 64 ? z : 64;
    return gt_shape_batch(s) > 1 || z < 1 ? 1 : (int)z;
}

void gt_skinny_workspace(const gt_shape *s, int z, gt_launch *out)
{
    if (z <= 1) return;
    const size_t mn = (size_t)s->m * (size_t)s->n, slice = (mn + 3) / 4 * 4;
    out->ws_bytes = (64 + (size_t)z * slice) * sizeof(float);
    out->rgrid[0] = gt_cdiv((long long)mn, 4 * 256);
    out->rgrid[1] = out->rgrid[2] = 1;
    out->rblock[0] = 256;
    out->rblock[1] = out->rblock[2] = 1;
}

void gt_launch_tiles(const gt_shape *s, int bm, int bn, unsigned threads, unsigned smem, int splitk, int flat,
                     gt_launch *out)
{
    const unsigned rows = gt_cdiv(s->m, bm), cols = gt_cdiv(s->n, bn);
    *out = (gt_launch){.grid = {flat ? rows * cols : cols, flat ? 1 : rows, (unsigned)splitk},
                       .block = {threads, 1, 1},
                       .smem = smem,
                       .splitk = splitk};
    if (splitk > 1) {
        const size_t mn = (size_t)s->m * (size_t)s->n;
        out->ws_bytes = (size_t)splitk * mn * sizeof(float);
        out->rgrid[0] = gt_cdiv((long long)mn, 256);
        out->rgrid[1] = out->rgrid[2] = 1;
        out->rblock[0] = 256;
        out->rblock[1] = out->rblock[2] = 1;
    }
}

void gt_launch_stream_k(const gt_shape *s, int bm, int bn, int bk, int per_sm, int sms, gt_launch *out)
{
    const long long tiles = (long long)gt_cdiv(s->m, bm) * gt_cdiv(s->n, bn), iters = gt_cdiv(s->k, bk);
    long long g = sms > 0 ? (long long)sms * per_sm : tiles;
    if (g > tiles * iters) g = tiles * iters;
    const long long skt = tiles % g == 0 ? 0 : tiles < 2 * g ? tiles : g + tiles % g;
    out->grid[0] = (unsigned)g;
    out->grid[1] = out->grid[2] = 1;
    out->ws_bytes = out->ws_zero = 0;
    if (skt == 0) return;
    out->ws_zero = (size_t)(tiles + 63) / 64 * 64 * sizeof(float); /* GT_SK_COUNTERS */
    out->ws_bytes = out->ws_zero + (size_t)2 * g * bm * bn * sizeof(float);
}

int gt_family_params_for_call(const gt_family *f, const gt_params *p, const gt_call *call, const gt_limits *lim,
                              gt_params *out)
{
    gt_launch L;
    char why[8];
    gt_params q = *p;
    if (f->applicable && !f->applicable(&q, call)) { /* its variant for this call, where the family has one */
        if (f->specialize) (void)f->specialize(&q, call);
        if (!memcmp(&q, p, sizeof q) || !f->legal(&q, lim, why, 0) || !f->applicable(&q, call)) return 0;
    }
    if (!gt_family_launch(f, &q, &call->shape, lim->sm_count, &L)) return 0;
    *out = q;
    return 1;
}

int gt_call_whole_tiles(const gt_call *c, int tile_m, int tile_n)
{
    const long long lds[3] = {c->lda, c->ldb, c->ldc}, strides[3] = {c->stride_a, c->stride_b, c->stride_c};
    const int aligns[3] = {c->align_a, c->align_b, c->align_c};
    if (tile_m < 1 || tile_n < 1 || c->shape.m % tile_m || c->shape.n % tile_n) return 0;
    for (int i = 0; i < 3; ++i)
        if (lds[i] % 4 || aligns[i] < 16 || (gt_shape_batch(&c->shape) > 1 && strides[i] % 4)) return 0;
    return 1;
}

int gt_splitk_workspace_fits(int splitk, const gt_shape *s)
{
    return splitk <= 1 || (size_t)splitk * (size_t)s->m * (size_t)s->n * sizeof(float) <= GT_SPLITK_WS_CAP;
}

int gt_family_launch(const gt_family *f, const gt_params *p, const gt_shape *s, int sms, gt_launch *out)
{
    const int batch = gt_shape_batch(s);
    f->launch(p, s, sms, out);
    if (batch == 1) return 1;
    if (!f->batched || (f->build == GT_BUILD_NVRTC && (out->grid[2] > 1 || out->splitk > 1 || out->ws_bytes)))
        return 0;
    if (f->build == GT_BUILD_NVRTC) out->grid[2] = batch < GT_BATCH_PER_LAUNCH ? (unsigned)batch : GT_BATCH_PER_LAUNCH;
    return 1;
}

void gt_family_work(const gt_family *f, const gt_params *p, const gt_shape *s, const gt_launch *L, gt_work *out)
{
    memset(out, 0, sizeof *out);
    if (f->work) {
        f->work(p, out);
        return;
    }
    out->tile_m = gt_param_get(f, p, "BM", 0);
    out->tile_n = gt_param_get(f, p, "BN", 0);
    const double blocks = (double)L->grid[0] * L->grid[1] * L->grid[2] / (L->splitk > 1 ? L->splitk : 1);
    if (out->tile_m <= 0 || out->tile_n <= 0) /* the whole of C over the blocks, as a square */
        out->tile_m = out->tile_n = (int)ceil(sqrt((double)s->m * s->n * gt_shape_batch(s) / (blocks > 0 ? blocks : 1)));
    const double threads = (double)L->block[0] * L->block[1] * L->block[2];
    const double r = (double)out->tile_m * out->tile_n / (threads > 0 ? threads : 1);
    const double regs = 28 + 1.25 * r + 4 * sqrt(r);
    out->regs = regs < 255 ? (int)regs : 255;
}

int gt_launch_extra_add(gt_launch_extra *x, const void *value, size_t size, size_t align)
{
    if (!align || align > 64 || (align & (align - 1)) || x->nextra >= GT_LAUNCH_MAX_EXTRA) return -1;
    const size_t end = x->nextra ? (size_t)x->offset[x->nextra - 1] + x->size[x->nextra - 1] : 0;
    const size_t at = (end + align - 1) & ~(align - 1);
    if (size > GT_LAUNCH_EXTRA_BYTES || at > GT_LAUNCH_EXTRA_BYTES - size) return -1;
    memcpy(x->bytes + at, value, size);
    x->offset[x->nextra] = (unsigned)at;
    x->size[x->nextra++] = (unsigned)size;
    return 0;
}

enum { MAX_TEMPLATES = 8 };
static struct {
    const char *name, *text;
} registered[MAX_TEMPLATES];
static int nregistered;

const char *gt_embedded_template(const char *name);
const char *gt_embedded_template_name(int i);

int gt_template_register(const char *name, const char *text)
{
    if (nregistered == MAX_TEMPLATES) return -1;
    registered[nregistered].name = name;
    registered[nregistered++].text = text;
    return 0;
}

const char *gt_template_text(const char *name)
{
    const char *t = name ? gt_embedded_template(name) : NULL;
    for (int i = 0; !t && name && i < nregistered; ++i)
        if (!strcmp(registered[i].name, name)) t = registered[i].text;
    return t;
}

const char *gt_template_text_name(int i)
{
    int n = 0;
    while (gt_embedded_template_name(n)) ++n;
    if (i < n) return i >= 0 ? gt_embedded_template_name(i) : NULL;
    return i - n < nregistered ? registered[i - n].name : NULL;
}

/* Odometer over the value lists: the last param varies fastest, so order is stable across runs. */
int gt_enumerate(const gt_family *f, const gt_limits *lim, gt_enum_fn fn, void *ctx)
{
    int idx[GT_MAX_PARAMS] = {0}, count = 0;
    char why[128];
    if (f->space != GT_SPACE_STATIC) return 0; /* its candidates exist only on a GPU, per shape */
    for (;;) {
        gt_params p;
        memset(&p, 0, sizeof p);
        for (int i = 0; i < f->nparams; ++i) p.v[i] = f->params[i].values[idx[i]];
        if (f->legal(&p, lim, why, 0) && (!f->in_space || f->in_space(&p, why, 0))) { /* no reason formatted */
            ++count;
            if (fn && fn(f, &p, ctx)) return count;
        }
        int i = f->nparams - 1;
        while (i >= 0 && ++idx[i] == f->params[i].nvalues) idx[i--] = 0;
        if (i < 0) return count;
    }
}

int gt_params_format(const gt_family *f, const gt_params *p, char *buf, size_t n)
{
    size_t used = 0;
    if (n) buf[0] = '\0';
    for (int i = 0; i < f->nparams; ++i) {
        if (f->params[i].optional && p->v[i] == f->params[i].values[0]) continue;
        int w = snprintf(buf + used, used < n ? n - used : 0, "%s%s=%d", used ? "," : "", f->params[i].name, p->v[i]);
        if (w > 0) used += (size_t)w;
    }
    return (int)(used < n ? used : (n ? n - 1 : 0));
}

static int param_index(const gt_family *f, const char *name, size_t len)
{
    for (int i = 0; i < f->nparams; ++i)
        if (strlen(f->params[i].name) == len && !strncmp(f->params[i].name, name, len)) return i;
    return -1;
}

int gt_params_parse(const gt_family *f, const char *text, gt_params *p, char *err, size_t errlen)
{
    int seen[GT_MAX_PARAMS] = {0};
    const char *s = text;
    memset(p, 0, sizeof *p);
    while (*s) {
        const char *eq = strchr(s, '=');
        if (!eq) goto bad;
        int i = param_index(f, s, (size_t)(eq - s));
        if (i < 0) {
            snprintf(err, errlen, "family %s has no parameter '%.*s'", f->name, (int)(eq - s), s);
            return -1;
        }
        char *end;
        long v = strtol(eq + 1, &end, 10);
        if (end == eq + 1 || (*end && *end != ',') || v < -1000000 || v > 1000000) goto bad;
        p->v[i] = (int)v;
        seen[i] = 1;
        s = *end ? end + 1 : end;
    }
    for (int i = 0; i < f->nparams; ++i)
        if (!seen[i] && f->params[i].optional) {
            p->v[i] = f->params[i].values[0];
        } else if (!seen[i]) {
            snprintf(err, errlen, "parameters '%s' lack %s", text, f->params[i].name);
            return -1;
        }
    return 0;
bad:
    snprintf(err, errlen, "malformed parameters '%s' (want NAME=INT,NAME=INT,...)", text);
    return -1;
}

int gt_param_get(const gt_family *f, const gt_params *p, const char *name, int def)
{
    int i = param_index(f, name, strlen(name));
    return i < 0 ? def : p->v[i];
}

int gt_layout_parse(const char *text, int *ta, int *tb)
{
    if (!text || strlen(text) != 2) return -1;
    char a = (char)tolower((unsigned char)text[0]), b = (char)tolower((unsigned char)text[1]);
    if ((a != 'n' && a != 't') || (b != 'n' && b != 't')) return -1;
    *ta = a == 't';
    *tb = b == 't';
    return 0;
}

const char *gt_math_name(gt_math m)
{
#define NAME_(id, name, ref, doc) name,
    static const char *names[GT_MATH_COUNT] = {GT_MATH_CLASSES(NAME_)};
#undef NAME_
    return (unsigned)m < GT_MATH_COUNT ? names[m] : NULL;
}

gt_reference gt_family_reference(const gt_family *f)
{
#define REF_(id, name, ref, doc) ref,
    static const gt_reference least[GT_MATH_COUNT] = {GT_MATH_CLASSES(REF_)};
#undef REF_
    const gt_reference own = f->reference, cls = (unsigned)f->math < GT_MATH_COUNT ? least[f->math] : GT_REF_FP64;
    return own > cls ? own : cls;
}

int gt_math_parse(const char *text, gt_math *out)
{
    for (int m = 0; text && m < GT_MATH_COUNT; ++m)
        if (!strcmp(text, gt_math_name((gt_math)m))) return *out = (gt_math)m, 0;
    return -1;
}

int gt_math_set_parse(const char *text, unsigned *set)
{
    gt_math m;
    if (text && !strcmp(text, "all")) return *set = GT_MATH_ALL, 0;
    if (gt_math_parse(text, &m) < 0) return -1;
    *set = GT_MATH_BIT(m);
    return 0;
}

const char *gt_math_set_name(unsigned set, char *buf, size_t n)
{
    size_t len = 0;
    if (n) buf[0] = '\0';
    if ((set & GT_MATH_ALL) == GT_MATH_ALL) return snprintf(buf, n, "all"), buf;
    for (int m = 0; m < GT_MATH_COUNT; ++m)
        if ((set & GT_MATH_BIT(m)) && len < n)
            len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? "," : "", gt_math_name((gt_math)m));
    return buf;
}

const char *gt_layout_name(int ta, int tb)
{
    static const char *names[] = {"nn", "nt", "tn", "tt"};
    return names[(ta ? 2 : 0) + (tb ? 1 : 0)];
}

char *gt_render(const gt_family *f, const gt_params *p, int ta, int tb, int batched, char *err, size_t errlen)
{
    const char *tpl = f->build == GT_BUILD_NVRTC ? gt_template_text(f->template_name) : NULL;
    if (!tpl) {
        if (f->build != GT_BUILD_NVRTC) snprintf(err, errlen, "family %s has no template: it is not built", f->name);
        else snprintf(err, errlen, "template %s of family %s is not embedded", f->template_name, f->name);
        return NULL;
    }
    size_t cap = strlen(tpl) + 64 * (size_t)(f->nparams + 4);
    char *out = malloc(cap);
    if (!out) {
        snprintf(err, errlen, "out of memory rendering %s", f->name);
        return NULL;
    }
    size_t used = (size_t)snprintf(out, cap, "// gemmtune family %s\n#define GT_TA %d\n#define GT_TB %d\n%s", f->name,
                                   ta ? 1 : 0, tb ? 1 : 0, batched ? "#define GT_BATCHED 1\n" : "");
    for (int i = 0; i < f->nparams; ++i)
        if (!f->params[i].launch_only)
            used += (size_t)snprintf(out + used, cap - used, "#define %s %d\n", f->params[i].name, p->v[i]);
    memcpy(out + used, tpl, strlen(tpl) + 1);
    return out;
}

void gt_hash_hex(const char *text, size_t len, char out[17])
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < len; ++i) {
        h ^= (unsigned char)text[i];
        h *= 1099511628211ull;
    }
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}
