/* A stand-in cuBLASLt for the CPU tests of the preload library (see fake_cublaslt.h). Linked by
 * tests/preload/drive_fake_lt.c as libfakecublasLt.so; never runs anything on a GPU. The getters follow
 * cuBLASLt's contract: the exact size or CUBLAS_STATUS_INVALID_VALUE, and size 0 with no buffer asks the size. */
#include "fake_cublaslt.h"

#include <stdlib.h>
#include <string.h>

enum { NATTR = 64 };

typedef struct {
    size_t size[NATTR]; /* 0: not an attribute */
    unsigned char v[NATTR][8];
} object;

static fake_lt_record rec;
static cublasStatus_t status = CUBLAS_STATUS_SUCCESS;

void fake_lt_set_status(cublasStatus_t st) { status = st; }
const fake_lt_record *fake_lt_last(void) { return &rec; }
void fake_lt_reset(void) { memset(&rec, 0, sizeof rec); }

static void def(object *o, int attr, size_t size, long long value)
{
    o->size[attr] = size;
    memcpy(o->v[attr], &value, size); /* little-endian: the low bytes */
}

static cublasStatus_t get(const object *o, int attr, void *buf, size_t size, size_t *written)
{
    if (!o) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (attr < 0 || attr >= NATTR || !o->size[attr] || !written) return CUBLAS_STATUS_INVALID_VALUE;
    if (size == 0 && !buf) return *written = o->size[attr], CUBLAS_STATUS_SUCCESS;
    if (!buf || size != o->size[attr]) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(buf, o->v[attr], size);
    return *written = size, CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t set(object *o, int attr, const void *buf, size_t size)
{
    if (!o) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (attr < 0 || attr >= NATTR || !o->size[attr] || !buf || size != o->size[attr]) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(o->v[attr], buf, size);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *desc, cublasComputeType_t compute, cudaDataType_t scale)
{
    object *o = calloc(1, sizeof *o);
    if (!o) return CUBLAS_STATUS_ALLOC_FAILED;
    static const int ptrs[] = {8, 11, 17, 18, 19, 20, 21, 23, 24, 36, 38}, int64s[] = {10, 12, 13, 14},
                     zero32[] = {2, 3, 4, 5, 15, 31, 32, 33, 34, 35, 37, FAKE_LT_NEW_DESC_ATTR};
    for (size_t i = 0; i < sizeof ptrs / sizeof *ptrs; ++i) def(o, ptrs[i], sizeof(void *), 0);
    for (size_t i = 0; i < sizeof int64s / sizeof *int64s; ++i) def(o, int64s[i], 8, 0);
    for (size_t i = 0; i < sizeof zero32 / sizeof *zero32; ++i) def(o, zero32[i], 4, 0);
    def(o, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, 4, compute), def(o, CUBLASLT_MATMUL_DESC_SCALE_TYPE, 4, scale);
    def(o, CUBLASLT_MATMUL_DESC_FILL_MODE, 4, CUBLAS_FILL_MODE_FULL);
    def(o, CUBLASLT_MATMUL_DESC_EPILOGUE, 4, CUBLASLT_EPILOGUE_DEFAULT);
    def(o, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, 4, -1), def(o, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, 4, -1);
    def(o, CUBLASLT_MATMUL_DESC_FAST_ACCUM, 1, 0);
    *desc = (cublasLtMatmulDesc_t)o;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) { return free(desc), CUBLAS_STATUS_SUCCESS; }

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                                              const void *buf, size_t size)
{
    return set((object *)desc, attr, buf, size);
}

cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                                              void *buf, size_t size, size_t *written)
{
    return get((const object *)desc, attr, buf, size, written);
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *layout, cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld)
{
    object *o = calloc(1, sizeof *o);
    if (!o) return CUBLAS_STATUS_ALLOC_FAILED;
    def(o, CUBLASLT_MATRIX_LAYOUT_TYPE, 4, type), def(o, CUBLASLT_MATRIX_LAYOUT_ORDER, 4, CUBLASLT_ORDER_COL);
    def(o, CUBLASLT_MATRIX_LAYOUT_ROWS, 8, (long long)rows), def(o, CUBLASLT_MATRIX_LAYOUT_COLS, 8, (long long)cols);
    def(o, CUBLASLT_MATRIX_LAYOUT_LD, 8, ld), def(o, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, 4, 1);
    def(o, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, 8, 0), def(o, CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, 8, 0);
    def(o, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, 4, 0), def(o, FAKE_LT_NEW_LAYOUT_ATTR, 4, 0);
    *layout = (cublasLtMatrixLayout_t)o;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) { return free(layout), CUBLAS_STATUS_SUCCESS; }

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr,
                                                const void *buf, size_t size)
{
    return set((object *)layout, attr, buf, size);
}

cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attr,
                                                void *buf, size_t size, size_t *written)
{
    return get((const object *)layout, attr, buf, size, written);
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
