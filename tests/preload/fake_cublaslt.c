/* A stand-in cuBLASLt for the CPU tests of the preload library (see fake_cublaslt.h). Linked by
 * tests/preload/drive_fake_lt.c as libfakecublasLt.so; never runs anything on a GPU. The getters follow
 * cuBLASLt's contract: the exact size or CUBLAS_STATUS_INVALID_VALUE, and size 0 with no buffer asks the size. */
#include "fake_cublaslt.h"

#include <stdlib.h>
#include <string.h>

enum { NATTR = 64 };

/* Where a kind of object keeps each attribute: as cuBLASLt's semi-opaque objects do, all of an object's state lies
 * in the sizeof(cublasLtMatmulDescOpaque_t) or sizeof(cublasLtMatrixLayoutOpaque_t) bytes its handle points at,
 * the rest padding (the drop-in reads the state bytes to know a descriptor it has seen). size 0: not an
 * attribute. */
typedef struct {
    size_t size[NATTR], off[NATTR], used;
} kind;

static kind desc_kind, layout_kind;
static fake_lt_record rec;
static cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
static unsigned long long getters;

void fake_lt_set_status(cublasStatus_t st) { status = st; }
const fake_lt_record *fake_lt_last(void) { return &rec; }
void fake_lt_reset(void) { memset(&rec, 0, sizeof rec); }
unsigned long long fake_lt_getter_calls(void) { return getters; }

static void define(kind *k, int attr, size_t size) { k->size[attr] = size, k->off[attr] = k->used, k->used += size; }

/* cuBLASLt 13's attributes and sizes, and one of each kind that no cuBLASLt has (a newer version's). */
__attribute__((constructor)) static void define_kinds(void)
{
    desc_kind.used = 8; /* a descriptor's first word: its storage's format, as cuBLASLt 13 keeps it */
    static const int ptrs[] = {8, 11, 17, 18, 19, 20, 21, 23, 24, 36, 38}, int64s[] = {10, 12, 13, 14},
                     int32s[] = {0, 1, 2, 3, 4, 5, 6, 7, 15, 22, 26, 31, 32, 33, 34, 35, 37, FAKE_LT_NEW_DESC_ATTR};
    for (size_t i = 0; i < sizeof ptrs / sizeof *ptrs; ++i) define(&desc_kind, ptrs[i], sizeof(void *));
    for (size_t i = 0; i < sizeof int64s / sizeof *int64s; ++i) define(&desc_kind, int64s[i], 8);
    for (size_t i = 0; i < sizeof int32s / sizeof *int32s; ++i) define(&desc_kind, int32s[i], 4);
    define(&desc_kind, CUBLASLT_MATMUL_DESC_FAST_ACCUM, 1); /* 25; the int32s from COMPUTE_TYPE (0) to D_OUT_SCALE_MODE */
    static const int layout32[] = {CUBLASLT_MATRIX_LAYOUT_TYPE, CUBLASLT_MATRIX_LAYOUT_ORDER,
                                   CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE,
                                   FAKE_LT_NEW_LAYOUT_ATTR},
                     layout64[] = {CUBLASLT_MATRIX_LAYOUT_ROWS, CUBLASLT_MATRIX_LAYOUT_COLS, CUBLASLT_MATRIX_LAYOUT_LD,
                                   CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET};
    for (size_t i = 0; i < sizeof layout32 / sizeof *layout32; ++i) define(&layout_kind, layout32[i], 4);
    for (size_t i = 0; i < sizeof layout64 / sizeof *layout64; ++i) define(&layout_kind, layout64[i], 8);
    if (desc_kind.used > sizeof(cublasLtMatmulDescOpaque_t) || layout_kind.used > sizeof(cublasLtMatrixLayoutOpaque_t))
        abort(); /* the stand-in must keep the semi-opaque objects' contract */
}

static void put(const kind *k, void *o, int attr, long long value)
{
    memcpy((unsigned char *)o + k->off[attr], &value, k->size[attr]); /* little-endian: the low bytes */
}

static cublasStatus_t get(const kind *k, const void *o, int attr, void *buf, size_t size, size_t *written)
{
    ++getters;
    if (!o) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (attr < 0 || attr >= NATTR || !k->size[attr] || !written) return CUBLAS_STATUS_INVALID_VALUE;
    if (size == 0 && !buf) return *written = k->size[attr], CUBLAS_STATUS_SUCCESS;
    if (!buf || size != k->size[attr]) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(buf, (const unsigned char *)o + k->off[attr], size);
    return *written = size, CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t set(const kind *k, void *o, int attr, const void *buf, size_t size)
{
    if (!o) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (attr < 0 || attr >= NATTR || !k->size[attr] || !buf || size != k->size[attr]) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy((unsigned char *)o + k->off[attr], buf, size);
    return CUBLAS_STATUS_SUCCESS;
}

size_t cublasLtGetVersion(void) { return CUBLAS_VER_MAJOR * 10000 + 100; }

/* cuBLASLt 13 writes the storage's format into a descriptor's first word: 6 for a whole cublasLtMatmulDescOpaque_t
 * (Create's), less for the smaller storage cublasLtMatmulDescInit_internal also takes. */
enum { FAKE_LT_FULL_FORMAT = 6 };

static void set_format(void *desc, uint64_t format) { memcpy(desc, &format, sizeof format); }

enum { FAKE_LT_SMALL = 56 }; /* the least storage cuBLASLt 13's cublasLtMatmulDescInit_internal takes */

static void *garbage(size_t n);

/* A descriptor in storage under 256 bytes (an older header's cublasLtMatmulDescOpaque_t): format 1, and its state
 * in a whole descriptor on the heap, whose address is its second word. The descriptor whose state o holds. */
static void *state_of(const void *o)
{
    uint64_t format = 0;
    void *state = (void *)o;
    if (o) memcpy(&format, o, sizeof format);
    if (o && format != FAKE_LT_FULL_FORMAT) memcpy(&state, (const unsigned char *)o + 8, sizeof state);
    return state;
}

void fake_lt_small_free(cublasLtMatmulDesc_t desc)
{
    if (desc && state_of(desc) != (void *)desc) free(state_of(desc));
}

/* Every attribute's bytes (zero unless set below) and the format word; the bytes past the attributes are padding,
 * left as they were, as cuBLASLt 13 leaves them. Storage of 56 to 255 bytes holds format 1 and the address of its
 * state (state_of; fake_lt_small_free frees it), as a real cuBLASLt's smaller storage holds no state the drop-in
 * may read. */
cublasStatus_t cublasLtMatmulDescInit_internal(cublasLtMatmulDesc_t desc, size_t size, cublasComputeType_t compute,
                                               cudaDataType_t scale)
{
    if (!desc || size < FAKE_LT_SMALL) return CUBLAS_STATUS_INVALID_VALUE;
    if (size < sizeof(cublasLtMatmulDescOpaque_t)) {
        cublasLtMatmulDescOpaque_t *state = garbage(sizeof *state);
        if (!state) return CUBLAS_STATUS_ALLOC_FAILED;
        set_format(desc, 1), memcpy((unsigned char *)desc + 8, &state, sizeof state);
        return cublasLtMatmulDescInit_internal(state, sizeof *state, compute, scale);
    }
    memset(desc, 0, desc_kind.used);
    set_format(desc, FAKE_LT_FULL_FORMAT);
    put(&desc_kind, desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, compute);
    put(&desc_kind, desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, scale);
    put(&desc_kind, desc, CUBLASLT_MATMUL_DESC_FILL_MODE, CUBLAS_FILL_MODE_FULL);
    put(&desc_kind, desc, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_DEFAULT);
    put(&desc_kind, desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, -1);
    put(&desc_kind, desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, -1);
    return CUBLAS_STATUS_SUCCESS;
}

/* Heap garbage in a new object's padding, another for each object: two objects alike differ there, as they can. */
static void *garbage(size_t n)
{
    static unsigned char next;
    unsigned char *o = malloc(n);
    if (o) memset(o, ++next | 0x80, n);
    return o;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *desc, cublasComputeType_t compute, cudaDataType_t scale)
{
    cublasLtMatmulDescOpaque_t *o = garbage(sizeof *o);
    if (!o) return CUBLAS_STATUS_ALLOC_FAILED;
    *desc = o;
    return cublasLtMatmulDescInit_internal(o, sizeof *o, compute, scale);
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) { return free(desc), CUBLAS_STATUS_SUCCESS; }

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                                              const void *buf, size_t size)
{
    return set(&desc_kind, state_of(desc), attr, buf, size);
}

cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                                              void *buf, size_t size, size_t *written)
{
    return get(&desc_kind, state_of(desc), attr, buf, size, written);
}

cublasStatus_t cublasLtMatrixLayoutInit_internal(cublasLtMatrixLayout_t layout, size_t size, cudaDataType type,
                                                 uint64_t rows, uint64_t cols, int64_t ld)
{
    if (!layout || size < sizeof(cublasLtMatrixLayoutOpaque_t)) return CUBLAS_STATUS_INVALID_VALUE;
    memset(layout, 0, layout_kind.used);
    put(&layout_kind, layout, CUBLASLT_MATRIX_LAYOUT_TYPE, type);
    put(&layout_kind, layout, CUBLASLT_MATRIX_LAYOUT_ORDER, CUBLASLT_ORDER_COL);
    put(&layout_kind, layout, CUBLASLT_MATRIX_LAYOUT_ROWS, (long long)rows);
    put(&layout_kind, layout, CUBLASLT_MATRIX_LAYOUT_COLS, (long long)cols);
    put(&layout_kind, layout, CUBLASLT_MATRIX_LAYOUT_LD, ld);
    put(&layout_kind, layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, 1);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *layout, cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld)
{
    cublasLtMatrixLayoutOpaque_t *o = garbage(sizeof *o);
    if (!o) return CUBLAS_STATUS_ALLOC_FAILED;
    *layout = o;
    return cublasLtMatrixLayoutInit_internal(o, sizeof *o, type, rows, cols, ld);
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) { return free(layout), CUBLAS_STATUS_SUCCESS; }

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr,
                                                const void *buf, size_t size)
{
    return set(&layout_kind, layout, attr, buf, size);
}

cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr,
                                                void *buf, size_t size, size_t *written)
{
    return get(&layout_kind, layout, attr, buf, size, written);
}

const char *cublasLtGetStatusName(cublasStatus_t st)
{
    return st == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS" : "FAKE_CUBLASLT_ERROR";
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t desc, const void *alpha, const void *A,
                              cublasLtMatrixLayout_t Adesc, const void *B, cublasLtMatrixLayout_t Bdesc,
                              const void *beta, const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                              cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo, void *workspace,
                              size_t workspaceSize, cudaStream_t stream)
{
    rec.calls++;
    rec.handle = h, rec.desc = desc, rec.alpha = alpha, rec.A = A, rec.Adesc = Adesc, rec.B = B, rec.Bdesc = Bdesc;
    rec.beta = beta, rec.C = C, rec.Cdesc = Cdesc, rec.D = D, rec.Ddesc = Ddesc, rec.algo = algo;
    rec.workspace = workspace, rec.workspace_size = workspaceSize, rec.stream = stream;
    return h ? status : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t fake_lt_calls_itself(cublasLtHandle_t h, cublasLtMatmulDesc_t desc, const void *alpha, const void *A,
                                    cublasLtMatrixLayout_t Adesc, const void *B, cublasLtMatrixLayout_t Bdesc,
                                    const void *beta, const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                                    cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo, void *workspace,
                                    size_t workspaceSize, cudaStream_t stream)
{
    cublasStatus_t st = cublasLtMatmul(h, desc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo,
                                       workspace, workspaceSize, stream);
    __asm__ volatile("" ::: "memory"); /* no tail call: the return address must lie in this library */
    return st;
}
