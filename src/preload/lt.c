/* cublasLtMatmul, exported by libgemmtune_cublas.so (PyTorch's nn.Linear with a bias calls it). A call that
 * gemmtune computes exactly (lt_decide.c) runs through the thread's gemmtune handle on the call's stream, after
 * writing the bias or C into D where the call has one; every other call, and every call gemmtune fails, goes
 * untouched to the real cuBLASLt, whose status comes back unchanged. Docs: docs/PRELOAD.md. Tests:
 * tests/test_preload_lt.c (CPU, a stand-in cuBLASLt), tests/preload/check_lt.c (GPU). */
#include "bias.h"
#include "preload.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define GT_EXPORT __attribute__((visibility("default")))
#define GT_STR_(x) #x
#define GT_STR(x) GT_STR_(x)

/* The real cuBLASLt, typed after cublasLt.h's prototypes. */
static struct {
    __typeof__(cublasLtMatmul) *matmul;
    __typeof__(cublasLtMatmulDescGetAttribute) *desc_get;
    __typeof__(cublasLtMatrixLayoutGetAttribute) *layout_get;
    __typeof__(cublasLtMatmulDescSetAttribute) *desc_set;          /* for the masks only */
    __typeof__(cublasLtMatrixLayoutSetAttribute) *layout_set;
    __typeof__(cublasLtGetStatusName) *status_name; /* optional: for the log */
} lt;

static const char *const lt_sonames[] = {"libcublasLt.so." GT_STR(CUBLAS_VER_MAJOR), "libcublasLt.so.12",
                                         "libcublasLt.so.11", NULL};
static const char *const cublas_sonames[] = {"libcublas.so." GT_STR(CUBLAS_VER_MAJOR), "libcublas.so.12",
                                             "libcublas.so.11", NULL};

/* As interpose.c's: the next definition, else one loaded outside the global scope, found by its soname. */
static void *find(const char *name, const char *const *sonames)
{
    void *p = dlsym(RTLD_NEXT, name);
    for (; !p && *sonames; ++sonames) {
        void *lib = dlopen(*sonames, RTLD_NOW | RTLD_NOLOAD);
        if (lib) p = dlsym(lib, name), dlclose(lib);
    }
    return p;
}

/* ---- the attributes a served call must leave at their defaults ---- */

enum { MAX_ATTR = 128, ATTR_BYTES = 32 };

/* Every attribute number below MAX_ATTR that the runtime cuBLASLt answers for a fresh object and that
 * lt_decide.c gives the role GT_PL_LT_DEFAULT, with the fresh object's value: so an attribute this build does
 * not know (a newer cuBLASLt's) is compared too. */
typedef struct {
    int n, unreadable; /* unreadable: an attribute that could not be read or kept (its number), else -1 */
    int id[MAX_ATTR];
    size_t size[MAX_ATTR];
    unsigned char value[MAX_ATTR][ATTR_BYTES];
} defaults;

static defaults desc_default[2]; /* of fresh descriptors: [0] CUBLAS_COMPUTE_32F, [1] CUBLAS_COMPUTE_32F_PEDANTIC */
static defaults layout_default;

/* Whether descriptors may be kept by their bytes (the table below, "descriptors read before"): the running cuBLASLt
 * is of this build's major version, whose descriptors take sizeof(cublasLtMatmulDescOpaque_t) and
 * sizeof(cublasLtMatrixLayoutOpaque_t) bytes, and its Init functions were found to learn the masks. desc_format:
 * the first word of a fresh descriptor, which cuBLASLt 13 sets by the storage a descriptor was made in
 * (cublasLtMatmulDescInit_internal takes 56 bytes and up: 1 for 56, ... 6 for 256); a descriptor whose first word
 * differs, made in smaller storage by a program built against an older header, is read through the getters, only
 * its first word read before that. desc_state, layout_state: the bytes that are state, not padding (below). */
static int memo_ok;
static uint64_t desc_format;

/* Where an object's state lies: its first `words` words (past them, padding only), and in each the bits that are
 * state (mask: all of a word's, but where Init leaves padding in it). */
typedef struct {
    int words;
    uint64_t mask[32];
} state_bytes;
static state_bytes desc_state, layout_state;

static cublasStatus_t get(int layout, void *obj, int attr, void *buf, size_t size, size_t *written)
{
    if (layout)
        return lt.layout_get((cublasLtMatrixLayout_t)obj, (cublasLtMatrixLayoutAttribute_t)attr, buf, size, written);
    return lt.desc_get((cublasLtMatmulDesc_t)obj, (cublasLtMatmulDescAttributes_t)attr, buf, size, written);
}

static void probe(int layout, void *fresh, defaults *d)
{
    d->n = 0, d->unreadable = fresh ? -1 : MAX_ATTR; /* no fresh object (out of memory): nothing is served */
    for (int a = 0; fresh && a < MAX_ATTR; ++a) {
        size_t size = 0, w = 0;
        if ((layout ? gt_pl_lt_layout_role(a) : gt_pl_lt_desc_role(a)) != GT_PL_LT_DEFAULT) continue;
        if (get(layout, fresh, a, NULL, 0, &size) != CUBLAS_STATUS_SUCCESS || !size) continue; /* not one of its */
        if (size > ATTR_BYTES || get(layout, fresh, a, d->value[d->n], size, &w) != CUBLAS_STATUS_SUCCESS ||
            w != size) {
            if (d->unreadable < 0) d->unreadable = a;
            continue;
        }
        d->id[d->n] = a, d->size[d->n++] = size;
    }
}

/* The first attribute of obj that differs from its default (or cannot be read), else -1. */
static int first_changed(int layout, void *obj, const defaults *d)
{
    unsigned char buf[ATTR_BYTES];
    if (d->unreadable >= 0) return d->unreadable;
    for (int i = 0; i < d->n; ++i) {
        size_t w = 0;
        if (get(layout, obj, d->id[i], buf, d->size[i], &w) != CUBLAS_STATUS_SUCCESS || w != d->size[i] ||
            memcmp(buf, d->value[i], d->size[i]))
            return d->id[i];
    }
    return -1;
}

/* ---- finding the real cuBLASLt ---- */

static pthread_mutex_t resolve_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int resolved;

/* The bytes of a descriptor that are its state: those its Init writes (the same in storage filled with 0x00 and
 * with 0xff; Create leaves the others as the heap had them: padding, which two descriptors alike need not share),
 * and those any attribute's setter changes (every byte of its value flipped). obj0 and obj1 are `words` words of
 * storage for an object Init made in each. */
static void learn_mask(int layout, uint64_t *obj0, uint64_t *obj1, int words, state_bytes *st)
{
    uint64_t *mask = st->mask;
    for (int i = 0; i < words; ++i) mask[i] = ~(obj0[i] ^ obj1[i]);
    for (int a = 0; a < MAX_ATTR; ++a) {
        unsigned char v[ATTR_BYTES];
        size_t size = 0, w = 0;
        if (get(layout, obj0, a, NULL, 0, &size) != CUBLAS_STATUS_SUCCESS || !size || size > sizeof v ||
            get(layout, obj0, a, v, size, &w) != CUBLAS_STATUS_SUCCESS || w != size)
            continue;
        uint64_t before[32];
        memcpy(before, obj0, 8 * (size_t)words);
        for (size_t b = 0; b < size; ++b) v[b] ^= 0xff;
        const cublasStatus_t set = layout ? lt.layout_set((cublasLtMatrixLayout_t)obj0, a, v, size)
                                          : lt.desc_set((cublasLtMatmulDesc_t)obj0, a, v, size);
        for (int i = 0; set == CUBLAS_STATUS_SUCCESS && i < words; ++i) mask[i] |= before[i] ^ obj0[i];
        memcpy(obj0, before, 8 * (size_t)words); /* the next attribute from Init's state again */
    }
    st->words = 0;
    for (int i = 0; i < words; ++i)
        if (mask[i]) st->words = i + 1;
    st->words += st->words & 1; /* whole pairs for memo_same's 16-byte steps (a pair's last mask may be 0) */
}

/* Both masks, from objects Init makes in this library's own storage; 0 where an Init or a setter is missing. */
static int learn_masks(void)
{
    __typeof__(cublasLtMatmulDescInit_internal) *di =
        (__typeof__(di))find("cublasLtMatmulDescInit_internal", lt_sonames);
    __typeof__(cublasLtMatrixLayoutInit_internal) *li =
        (__typeof__(li))find("cublasLtMatrixLayoutInit_internal", lt_sonames);
    if (!di || !li || !lt.desc_set || !lt.layout_set) return 0;
    _Alignas(16) uint64_t d0[32], d1[32], l0[8], l1[8];
    memset(d0, 0, sizeof d0), memset(d1, 0xff, sizeof d1), memset(l0, 0, sizeof l0), memset(l1, 0xff, sizeof l1);
    if (di((cublasLtMatmulDesc_t)d0, sizeof d0, CUBLAS_COMPUTE_32F, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS ||
        di((cublasLtMatmulDesc_t)d1, sizeof d1, CUBLAS_COMPUTE_32F, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS ||
        li((cublasLtMatrixLayout_t)l0, sizeof l0, CUDA_R_32F, 1, 1, 1) != CUBLAS_STATUS_SUCCESS ||
        li((cublasLtMatrixLayout_t)l1, sizeof l1, CUDA_R_32F, 1, 1, 1) != CUBLAS_STATUS_SUCCESS)
        return 0;
    learn_mask(0, d0, d1, 32, &desc_state);
    learn_mask(1, l0, l1, 8, &layout_state);
    /* Init's storage is Create's, and the format is state */
    return d0[0] == desc_format && desc_state.mask[0] == ~0ull && layout_state.words > 0;
}

/* Whether descriptors are kept by their state bytes (memo_ok, desc_format; the masks learnt), for cuBLASLt version v
 * whose two fresh descriptors (compute types 32F and 32F_PEDANTIC) began with the words first; the log says which. */
static void choose_memo(size_t v, const uint64_t first[2])
{
    desc_format = first[0];
    memo_ok = v / 10000 == CUBLAS_VER_MAJOR && first[0] == first[1] && learn_masks();
    int state = 0; /* bytes of a descriptor that hold state */
    for (int i = 0; memo_ok && i < 32 * 8; ++i) state += ((const unsigned char *)desc_state.mask)[i] != 0;
    char line[300];
    if (memo_ok)
        snprintf(line, sizeof line, "gemmtune: cuBLASLt %zu: descriptors kept by their state bytes (%d of 256)\n", v,
                 state);
    else
        snprintf(line, sizeof line, "gemmtune: cuBLASLt %zu: descriptors read through its getters on every call (%s)\n",
                 v, v / 10000 != CUBLAS_VER_MAJOR ? "not the major version gemmtune was built against"
                                                  : "its descriptors' state bytes could not be told");
    gt_pl_log_line(line);
}

static void probe_defaults(void)
{
    __typeof__(cublasLtMatmulDescCreate) *dc = (__typeof__(dc))find("cublasLtMatmulDescCreate", lt_sonames);
    __typeof__(cublasLtMatmulDescDestroy) *dd = (__typeof__(dd))find("cublasLtMatmulDescDestroy", lt_sonames);
    __typeof__(cublasLtMatrixLayoutCreate) *lc = (__typeof__(lc))find("cublasLtMatrixLayoutCreate", lt_sonames);
    __typeof__(cublasLtMatrixLayoutDestroy) *ld = (__typeof__(ld))find("cublasLtMatrixLayoutDestroy", lt_sonames);
    __typeof__(cublasLtGetVersion) *version = (__typeof__(version))find("cublasLtGetVersion", lt_sonames);
    static const cublasComputeType_t compute[2] = {CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_32F_PEDANTIC};
    uint64_t first[2] = {0, 1};
    for (int i = 0; i < 2; ++i) {
        cublasLtMatmulDesc_t d = NULL;
        if (dc && dd && dc(&d, compute[i], CUDA_R_32F) != CUBLAS_STATUS_SUCCESS) d = NULL;
        probe(0, d, &desc_default[i]);
        if (d) memcpy(&first[i], d, sizeof first[i]), dd(d);
    }
    choose_memo(version ? version() : 0, first);
    cublasLtMatrixLayout_t l = NULL;
    if (lc && ld && lc(&l, CUDA_R_32F, 1, 1, 1) != CUBLAS_STATUS_SUCCESS) l = NULL;
    probe(1, l, &layout_default);
    if (l) ld(l);
}

static void resolve_locked(void)
{
    lt.matmul = (__typeof__(lt.matmul))find("cublasLtMatmul", lt_sonames);
    lt.desc_get = (__typeof__(lt.desc_get))find("cublasLtMatmulDescGetAttribute", lt_sonames);
    lt.layout_get = (__typeof__(lt.layout_get))find("cublasLtMatrixLayoutGetAttribute", lt_sonames);
    lt.status_name = (__typeof__(lt.status_name))find("cublasLtGetStatusName", lt_sonames);
    lt.desc_set = (__typeof__(lt.desc_set))find("cublasLtMatmulDescSetAttribute", lt_sonames);
    lt.layout_set = (__typeof__(lt.layout_set))find("cublasLtMatrixLayoutSetAttribute", lt_sonames);
    if (!lt.matmul || !lt.desc_get || !lt.layout_get) return;
    probe_defaults();
    atomic_store_explicit(&resolved, 1, memory_order_release);
}

/* The real cuBLASLt, found on the first call (a program may load it late: Python does). One atomic load once
 * found; 0 while it is not. */
static int resolve(void)
{
    if (atomic_load_explicit(&resolved, memory_order_acquire)) return 1;
    pthread_mutex_lock(&resolve_lock);
    if (!atomic_load_explicit(&resolved, memory_order_relaxed)) resolve_locked();
    pthread_mutex_unlock(&resolve_lock);
    return atomic_load_explicit(&resolved, memory_order_acquire);
}

/* ---- calls from inside cuBLAS ---- */

/* cuBLAS itself calls cublasLtMatmul through its PLT (behind cublasSgemmBatched, the _64 entry points, ...): such
 * a call is cuBLAS's implementation, not the program's, and goes straight through, as a call from inside an
 * intercepted one does. Told by the caller's object; a program has few call sites, so the verdicts are kept in a
 * small lock-free table of (return address << 1 | inside), filled front to back. */
enum { SITES = 64 };
static _Atomic uint64_t sites[SITES];

static const void *object_of(const void *addr)
{
    Dl_info info;
    return addr && dladdr(addr, &info) ? info.dli_fbase : NULL;
}

static int inside_cublas(uintptr_t ret)
{
    const uint64_t key = (uint64_t)ret << 1;
    int i = 0;
    for (; i < SITES; ++i) {
        const uint64_t e = atomic_load_explicit(&sites[i], memory_order_acquire);
        if (!e) break;
        if ((e & ~1ull) == key) return (int)(e & 1);
    }
    const void *caller = object_of((const void *)ret);
    const int in = caller && (caller == object_of((const void *)lt.matmul) ||
                              caller == object_of(find("cublasSgemm_v2", cublas_sonames)));
    for (; i < SITES; ++i) {
        uint64_t empty = 0;
        if (atomic_compare_exchange_strong(&sites[i], &empty, key | (uint64_t)in) || (empty & ~1ull) == key) break;
    }
    return in;
}

/* ---- reading a call ---- */

static int get_exact(int layout, void *obj, int attr, void *buf, size_t size)
{
    size_t w = 0;
    return get(layout, obj, attr, buf, size, &w) == CUBLAS_STATUS_SUCCESS && w == size;
}

static void read_desc(cublasLtMatmulDesc_t d, gt_pl_lt_desc *out)
{
    int32_t v[5] = {0}; /* compute, scale type, pointer mode, transa, transb */
    static const int ids[5] = {CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, CUBLASLT_MATMUL_DESC_SCALE_TYPE,
                               CUBLASLT_MATMUL_DESC_POINTER_MODE, CUBLASLT_MATMUL_DESC_TRANSA,
                               CUBLASLT_MATMUL_DESC_TRANSB};
    memset(out, 0, sizeof *out);
    out->attr = -1, out->bias_type = -1;
    if (!d) return;
    for (int i = 0; i < 5; ++i)
        if (!get_exact(0, d, ids[i], &v[i], sizeof v[i])) return;
    if (!get_exact(0, d, CUBLASLT_MATMUL_DESC_EPILOGUE, &out->epilogue, sizeof out->epilogue)) return;
    out->compute = v[0], out->scale_type = v[1], out->pointer_mode = v[2], out->transa = v[3], out->transb = v[4];
    if (out->epilogue == CUBLASLT_EPILOGUE_BIAS) {
        void *bias = NULL;
        int32_t bt = -1; /* an older cuBLASLt without CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE: D's type */
        if (!get_exact(0, d, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias)) return;
        if (!get_exact(0, d, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt)) bt = -1;
        out->bias = bias, out->bias_type = bt;
    }
    out->ok = 1;
    /* the others only where the call could be served: a forwarded one pays no more getters */
    if (out->compute == CUBLAS_COMPUTE_32F || out->compute == CUBLAS_COMPUTE_32F_PEDANTIC)
        out->attr = first_changed(0, d, &desc_default[out->compute == CUBLAS_COMPUTE_32F_PEDANTIC]);
}

static void read_layout(cublasLtMatrixLayout_t l, gt_pl_lt_layout *out)
{
    uint32_t type = 0;
    int32_t order = 0, batch = 0;
    uint64_t rows = 0, cols = 0;
    int64_t ld = 0;
    memset(out, 0, sizeof *out);
    out->attr = -1;
    if (!l || !get_exact(1, l, CUBLASLT_MATRIX_LAYOUT_TYPE, &type, sizeof type) ||
        !get_exact(1, l, CUBLASLT_MATRIX_LAYOUT_ORDER, &order, sizeof order) ||
        !get_exact(1, l, CUBLASLT_MATRIX_LAYOUT_ROWS, &rows, sizeof rows) ||
        !get_exact(1, l, CUBLASLT_MATRIX_LAYOUT_COLS, &cols, sizeof cols) ||
        !get_exact(1, l, CUBLASLT_MATRIX_LAYOUT_LD, &ld, sizeof ld) ||
        !get_exact(1, l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch))
        return;
    out->ok = 1, out->type = (int)type, out->order = order, out->batch = batch;
    out->rows = rows, out->cols = cols, out->ld = ld;
    out->attr = first_changed(1, l, &layout_default);
}

/* ---- descriptors read before ---- */

/* cuBLASLt's descriptors are semi-opaque (cublasLt.h): a matmul descriptor's whole state lies in the 256 bytes of
 * a cublasLtMatmulDescOpaque_t, a layout's in the 64 of a cublasLtMatrixLayoutOpaque_t (cublasLt*Init sets one up
 * in storage of that size that the caller owns and never hands back). So two descriptors whose state bytes (the
 * masks) are the same answer every getter alike, and the thread keeps what it read (the fields and the first
 * changed attribute) by those bytes: a call whose descriptors it has seen costs a hash and a compare each, not some
 * sixty getters of 10-15 ns. State that differs in any byte, even only in a bias pointer, is read again. A call
 * that is the thread's last call again (the same objects, their state words unchanged) costs one compare of those
 * words, and with the same scalars, C and D, takes that call's verdict too (gt_pl_lt_last): a loop over one GEMM
 * pays no hash and no classification. */
_Static_assert(sizeof(cublasLtMatmulDescOpaque_t) == sizeof(((gt_pl_lt_memo_entry *)0)->key), "desc bytes");
_Static_assert(sizeof(cublasLtMatrixLayoutOpaque_t) == 8 * 8, "layout bytes");

/* Word i of an object's storage. */
static inline uint64_t word(const void *obj, int i)
{
    uint64_t w;
    memcpy(&w, (const unsigned char *)obj + 8 * i, sizeof w);
    return w;
}

/* The set of nsets that an object of these state words falls in: the masked words' exclusive-or, mixed. It only
 * spreads descriptors over the sets (two that differ in one word, as two layers' bias pointers, land apart), and
 * a call pays it on every descriptor not seen in its last call: four independent chains of xors, no copy. */
static unsigned memo_set(const void *obj, const state_bytes *st, unsigned nsets)
{
    uint64_t h[4] = {0, 0, 0, 0};
    for (int i = 0; i < st->words; ++i) h[i & 3] ^= word(obj, i) & st->mask[i];
    const uint64_t x = h[0] ^ (h[1] << 16 | h[1] >> 48) ^ (h[2] << 32 | h[2] >> 32) ^ (h[3] << 48 | h[3] >> 16);
    return (unsigned)(((x ^ x >> 29) * 0x9e3779b97f4a7c15ull) >> 40) % nsets;
}

/* Whether key holds obj's state words, masked, of its first n words (st->words rounded up to whole pairs, or a
 * constant that covers them: masks past st->words are 0): two words a step. */
typedef uint64_t gt_u64x2 __attribute__((vector_size(16)));
static inline int memo_same_n(const uint64_t *key, const void *obj, const state_bytes *st, int n)
{
    gt_u64x2 d = {0, 0};
#pragma GCC unroll 16
    for (int i = 0; i < n; i += 2) {
        gt_u64x2 w, k, m;
        memcpy(&w, (const unsigned char *)obj + 8 * i, sizeof w);
        memcpy(&k, key + i, sizeof k), memcpy(&m, st->mask + i, sizeof m);
        d |= k ^ (w & m);
    }
    return (d[0] | d[1]) == 0;
}

static int memo_same(const uint64_t *key, const void *obj, const state_bytes *st)
{
    return memo_same_n(key, obj, st, st->words);
}

/* key <- obj's state words, masked (as the table keys them). */
static void memo_copy(uint64_t *key, const void *obj, const state_bytes *st)
{
    for (int i = 0; i < st->words; ++i) key[i] = word(obj, i) & st->mask[i];
}

/* The way of the set that holds what was read of an object of these state words (*hit 1), else the one to fill
 * (its key filled already): an unused one, or the set's next victim in turn. */
static gt_pl_lt_memo_entry *memo_entry(gt_pl_lt_memo_entry (*sets)[GT_PL_LT_WAYS], unsigned char *victim,
                                       unsigned nsets, const void *obj, const state_bytes *st, int *hit)
{
    *hit = 0;
    const unsigned s = memo_set(obj, st, nsets);
    gt_pl_lt_memo_entry *set = sets[s], *e = NULL;
    for (int w = 0; w < GT_PL_LT_WAYS; ++w) {
        if (set[w].used && memo_same(set[w].key, obj, st)) return *hit = 1, &set[w];
        if (!set[w].used && !e) e = &set[w];
    }
    if (!e) victim[s] = (unsigned char)((victim[s] + 1) % GT_PL_LT_WAYS), e = &set[victim[s]];
    e->used = 0; /* until the caller has read the object into it: a call nested in the getters finds nothing here */
    memo_copy(e->key, obj, st);
    return e;
}

/* What the getters answer for obj, a descriptor (layout 0) or a layout (1), into out's member of that kind: from
 * the thread's table where it holds obj's state (returns 1), else read through the getters (0) and kept there. A
 * descriptor of another version, or in smaller storage (its first word says so), is always read. */
static int table_read(int layout, void *obj, gt_pl_lt_memo *m, gt_pl_lt_read *out)
{
    int hit = 0;
    gt_pl_lt_memo_entry *e = NULL;
    if (m && memo_ok && obj && (layout || word(obj, 0) == desc_format))
        e = layout ? memo_entry(m->layout, m->victim_layout, GT_PL_LT_LAYOUT_SETS, obj, &layout_state, &hit)
                   : memo_entry(m->desc, m->victim_desc, GT_PL_LT_DESC_SETS, obj, &desc_state, &hit);
    if (hit) *out = e->v;
    else if (layout) read_layout((cublasLtMatrixLayout_t)obj, &out->layout);
    else read_desc((cublasLtMatmulDesc_t)obj, &out->desc);
    if (e && !hit) e->v = *out, e->used = 1;
    return hit;
}

/* One more of how descriptors were read (GT_PL_LT_REPEAT, ...), for the log's last line; by the owning thread. */
static void tally(gt_pl_lt_memo *m, int what, unsigned long long n)
{
    if (m) atomic_store_explicit(&m->reads[what], atomic_load_explicit(&m->reads[what], memory_order_relaxed) + n,
                                 memory_order_relaxed);
}

/* Whether the call names the objects of the thread's last call with the same state words (the format word first:
 * a descriptor in smaller storage is never read as 32 words). */
static int same_as_last(const gt_pl_lt_last *L, void *const obj[5])
{
    if (!L->valid) return 0;
    for (int i = 0; i < 5; ++i)
        if (obj[i] != L->obj[i]) return 0;
    if (word(obj[0], 0) != desc_format || !memo_same_n(L->desc_words, obj[0], &desc_state, 32)) return 0;
    for (int i = 0; i < 4; ++i) /* whole objects, a constant count: the compares unroll */
        if (!memo_same_n(L->layout_words[i], obj[i + 1], &layout_state, 8)) return 0;
    return 1;
}

/* The call's objects, their state words and what was read of them, as the thread's last call (not yet classified),
 * where the table may key on them all: a whole descriptor and four layouts. */
static void keep_last(gt_pl_lt_last *L, void *const obj[5], const gt_pl_lt_call *call)
{
    const gt_pl_lt_layout *const l[4] = {&call->a, &call->b, &call->c, &call->d};
    L->classified = 0;
    L->valid = obj[0] && obj[1] && obj[2] && obj[3] && obj[4] && word(obj[0], 0) == desc_format;
    if (!L->valid) return;
    memcpy(L->obj, obj, sizeof L->obj);
    memo_copy(L->desc_words, obj[0], &desc_state);
    for (int i = 0; i < 4; ++i) memo_copy(L->layout_words[i], obj[i + 1], &layout_state);
    L->desc = call->desc;
    for (int i = 0; i < 4; ++i) L->layout[i] = *l[i];
}

/* The call's descriptor and layouts (obj: desc, then A's, B's, C's and D's layout) as the getters would answer:
 * the last call's where it names the same objects unchanged, else through the table, and then kept as the last
 * call where the table may key on them all. */
static int read_call(gt_pl_lt_memo *m, void *const obj[5], gt_pl_lt_call *call)
{
    gt_pl_lt_layout *const l[4] = {&call->a, &call->b, &call->c, &call->d};
    gt_pl_lt_last *L = m && memo_ok ? &m->last : NULL;
    if (L && same_as_last(L, obj)) {
        call->desc = L->desc;
        for (int i = 0; i < 4; ++i) *l[i] = L->layout[i];
        return tally(m, GT_PL_LT_REPEAT, 1), 1;
    }
    gt_pl_lt_read v;
    int hits = table_read(0, obj[0], m, &v), objects = 1;
    call->desc = v.desc;
    for (int i = 0; i < 4; ++i)
        if (i == 2 && obj[3] == obj[4]) continue; /* C's layout is D's: read once */
        else hits += table_read(1, obj[i + 1], m, &v), *l[i] = v.layout, ++objects;
    if (obj[3] == obj[4]) call->c = call->d;
    tally(m, GT_PL_LT_TABLE, (unsigned long long)hits);
    tally(m, GT_PL_LT_GETTERS, (unsigned long long)(objects - hits));
    if (L) keep_last(L, obj, call);
    return 0;
}

/* Whether the call's scalars hold the bits the last verdict read (plan->scalars): read only then, when the same
 * descriptor, state for state, said they are FP32 on the host. */
static int same_scalars(const gt_pl_lt_plan *p, const gt_pl_lt_call *call)
{
    uint32_t a, b;
    memcpy(&a, call->alpha, sizeof a), memcpy(&b, call->beta, sizeof b);
    return a == p->alpha_bits && b == p->beta_bits;
}

/* gt_pl_lt_classify's verdict, or the thread's last call's where this one is that call again: the same objects in
 * the same state (same: read_call's answer), the same handle's presence, scalar pointers, C and D, and the same
 * scalar values where that verdict read them. */
static gt_pl_reason classify(gt_pl_lt_memo *m, int same, const gt_pl_lt_call *call, gt_pl_lt_plan *plan)
{
    gt_pl_lt_last *L = m && memo_ok ? &m->last : NULL;
    if (L && same && L->classified && L->handle == call->handle && L->alpha == call->alpha &&
        L->beta == call->beta && L->C == call->C && L->D == call->D &&
        (!L->plan.scalars || same_scalars(&L->plan, call)))
        return *plan = L->plan, L->reason;
    const gt_pl_reason r = gt_pl_lt_classify(call, gt_pl_cfg(), plan);
    if (L && L->valid) {
        L->handle = call->handle, L->alpha = call->alpha, L->beta = call->beta, L->C = call->C, L->D = call->D;
        L->reason = r, L->plan = *plan, L->classified = 1;
    }
    return r;
}

/* ---- serving ---- */

typedef struct {
    const gt_pl_lt_plan *p;
    const float *A, *B, *C, *bias;
    float *D;
} operands;

/* Whether cuBLASLt's own call, the bias or C fused into its stores, is the cheaper way to a call with a pass over D,
 * from the loader's facts (one lookup of the call's plan): GT_PL_LT_FUSED where gemmtune would only run cuBLAS (plus
 * the pass), GT_PL_LT_PASS where the winner stored for the shape, its stored time with the pass added, does not beat
 * cuBLAS's stored time there by the tuner's margin; else GT_PL_SERVE, also where no time is stored for the shape (a
 * neighbour's winner the serving model expects to win, or the built-in kernel a program asked for with
 * GEMMTUNE_FALLBACK=default: the loader's own judgment stands). *fused: the kernel adds the bias itself. */
static gt_pl_reason fused_is_cheaper(gemmtune_handle h, cudaStream_t s, const operands *o, int *fused)
{
    const gt_pl_lt_plan *p = o->p;
    const gt_pl_call *c = &p->call;
    gt_loader_facts f;
    const int rc = gt_loader_facts_of(h, (void *)s, gt_pl_op(c->transa), gt_pl_op(c->transb), c->m, c->n, c->k, o->A,
                                      c->lda, o->B, c->ldb, o->D, c->ldc, &f);
    if (rc == -2) return GT_PL_DEVICE_CHANGED;
    if (rc || !f.own) return GT_PL_LT_FUSED;
    *fused = p->bias && f.fuses_bias; /* a kernel that adds the bias in its epilogue: no pass over D */
    if (f.times && !gt_pl_lt_pass_pays(f.kernel_ms, f.cublas_ms, *fused ? 0.0 : gt_pl_lt_pass_ms(c->m, c->n, p->copy_c)))
        return GT_PL_LT_PASS;
    return GT_PL_SERVE;
}

/* D = C or D = bias first (both on the stream, so before the GEMM), then the GEMM into D. Either step failing
 * leaves the call to cuBLASLt, which then writes all of D itself: C is never written, and with a bias beta is 0,
 * so cuBLASLt does not read D. The caller's algo and workspace are cuBLASLt's business: gemmtune ignores them
 * (split-K kernels use the handle's own workspace). */
static gt_pl_reason run(gemmtune_handle h, cudaStream_t s, int dev, const void *ctx, gt_pl_outcome *out)
{
    const operands *o = ctx;
    const gt_pl_lt_plan *p = o->p;
    const gt_pl_call *c = &p->call;
    gt_pl_reason r = GT_PL_SERVE;
    const int pass = p->bias || p->copy_c; /* the bias or C into D first, unless the kernel adds the bias */
    int cur = -1, fused = 0;
    ++gt_pl_depth;
    if (pass && (r = fused_is_cheaper(h, s, o, &fused)) != GT_PL_SERVE) return --gt_pl_depth, r;
    if (fused) {
        gemmtune_status st = gt_loader_sgemm_bias(h, (void *)s, gt_pl_op(c->transa), gt_pl_op(c->transb), c->m, c->n,
                                                  c->k, p->alpha, o->A, c->lda, o->B, c->ldb, o->bias, o->D, c->ldc);
        if (st != GEMMTUNE_SUCCESS) r = gt_pl_failed(st, out); /* D untouched but by the kernel: cuBLASLt may retry */
        return --gt_pl_depth, r;
    }
    if (pass && (cudaGetDevice(&cur) != cudaSuccess || cur != dev))
        return (void)cudaGetLastError(), --gt_pl_depth, GT_PL_DEVICE_CHANGED; /* nothing on another device's stream */
    if (p->bias) {
        const int rc = gt_bias_broadcast(dev, (void *)s, c->m, c->n, o->bias, o->D, c->ldc, out->detail,
                                         sizeof out->detail);
        r = rc == 0 ? GT_PL_SERVE : rc > 0 ? GT_PL_CAPTURE : GT_PL_LT_PREPARE;
    } else if (p->copy_c) {
        cudaError_t e = cudaMemcpy2DAsync(o->D, (size_t)c->ldc * sizeof(float), o->C, (size_t)p->ldc_src * sizeof(float),
                                          (size_t)c->m * sizeof(float), (size_t)c->n, cudaMemcpyDeviceToDevice, s);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            snprintf(out->detail, sizeof out->detail, "cudaMemcpy2DAsync C to D: %s", cudaGetErrorString(e));
            r = GT_PL_LT_PREPARE;
        }
    }
    if (r == GT_PL_SERVE) {
        gemmtune_status st = gemmtune_sgemm(h, (void *)s, gt_pl_op(c->transa), gt_pl_op(c->transb), c->m, c->n, c->k,
                                            p->alpha, o->A, c->lda, o->B, c->ldb, p->beta, o->D, c->ldc);
        if (st != GEMMTUNE_SUCCESS) r = gt_pl_failed(st, out);
        if (r == GT_PL_DEVICE_CHANGED && pass) r = GT_PL_GEMMTUNE; /* D was written: no retry */
    }
    --gt_pl_depth;
    return r;
}

/* Only a program that calls cublasLtMatmul with no cuBLASLt loaded gets here. Said once. */
static cublasStatus_t no_real(void)
{
    static _Atomic int said;
    static const char m[] = "gemmtune: libgemmtune_cublas.so: no cuBLASLt in this process to forward to; "
                            "returning CUBLAS_STATUS_NOT_INITIALIZED\n";
    if (!atomic_exchange(&said, 1)) (void)!write(STDERR_FILENO, m, sizeof m - 1);
    return CUBLAS_STATUS_NOT_INITIALIZED;
}

#define GT_LT_ARGS                                                                                                \
    handle, desc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo, workspace, workspaceSizeInBytes, stream

GT_EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void *alpha,
                                        const void *A, cublasLtMatrixLayout_t Adesc, const void *B,
                                        cublasLtMatrixLayout_t Bdesc, const void *beta, const void *C,
                                        cublasLtMatrixLayout_t Cdesc, void *D, cublasLtMatrixLayout_t Ddesc,
                                        const cublasLtMatmulAlgo_t *algo, void *workspace,
                                        size_t workspaceSizeInBytes, cudaStream_t stream)
{
    const uintptr_t ret = (uintptr_t)__builtin_return_address(0);
    cublasStatus_t st;
    if (!resolve()) return no_real();
    if (gt_pl_depth > 0 || !gt_pl_cfg()->enabled || inside_cublas(ret)) {
        ++gt_pl_depth;
        st = lt.matmul(GT_LT_ARGS);
        --gt_pl_depth;
        return st;
    }
    gt_pl_lt_call call = {.handle = handle != NULL, .alpha = alpha, .beta = beta, .C = C, .D = D};
    gt_pl_outcome out; /* not zeroed whole: its texts are over a kilobyte, and only their first byte matters here */
    out.reason = GT_PL_SERVE, out.t = gt_pl_thread_get(), out.fresh = 2, out.detail[0] = out.explain[0] = '\0';
    void *const obj[5] = {desc, Adesc, Bdesc, Cdesc, Ddesc};
    gt_pl_lt_memo *memo = gt_pl_thread_memo(out.t);
    gt_pl_lt_plan plan;
    out.reason = classify(memo, read_call(memo, obj, &call), &call, &plan);
    if (out.reason == GT_PL_SERVE) {
        const operands o = {&plan, A, B, C, call.desc.bias, D};
        out.reason = gt_pl_serve(&plan.call, stream, run, &o, &out);
    } else
        snprintf(out.detail, sizeof out.detail, "%s", plan.detail); /* the type, attribute or layout at fault */
    if (out.reason == GT_PL_SERVE) st = CUBLAS_STATUS_SUCCESS;
    else {
        ++gt_pl_depth;
        st = lt.matmul(GT_LT_ARGS);
        --gt_pl_depth;
    }
    return gt_pl_finish(&plan.call, &out, st, lt.status_name);
}
