/* cuBLASLt's configuration space (src/lib/lt_space.c) without a GPU: its enumeration against a stand-in cuBLASLt
 * whose algorithms, capabilities and checks are the test's own, so the count of every kind of configuration is
 * known. The real library's space on a GPU: tests/test_gpu.c (gpu_vendor_candidates_reach_past_the_heuristic).
 * Run: gt_tests lt_space */
#include "harness.h"
#include "lt_space.h"

#include <string.h>

/* The stand-in's algorithms. 1: tiles 10 and 11, stages 5 and 6, of which the pairs (10, 5) and (11, 6) run the
 * call; split-K with the COMPUTE_TYPE and OUTPUT_TYPE reductions, where 16 splits need more workspace than allowed;
 * swizzle; options 0 to 2. 2: needs 256-byte operands. 3: lists no tiles, stages, split-K or swizzle; it runs plain.
 * 4: like 3 but lists 100 custom options. */
enum { SLOT_ID, SLOT_TILE, SLOT_SPLIT, SLOT_RED, SLOT_SWIZZLE, SLOT_OPTION, SLOT_STAGES };
static int ids[] = {1, 2, 3, 4};
static long checks;

static cublasStatus_t get_ids(cublasLtHandle_t h, cublasComputeType_t ct, cudaDataType_t s, cudaDataType_t a,
                              cudaDataType_t b, cudaDataType_t c, cudaDataType_t d, int want, int out[], int *got)
{
    (void)h, (void)ct, (void)s, (void)a, (void)b, (void)c, (void)d;
    *got = 0;
    for (int i = 0; i < 4 && i < want; ++i) out[(*got)++] = ids[i];
    return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t init(cublasLtHandle_t h, cublasComputeType_t ct, cudaDataType_t s, cudaDataType_t a,
                           cudaDataType_t b, cudaDataType_t c, cudaDataType_t d, int id, cublasLtMatmulAlgo_t *algo)
{
    (void)h, (void)ct, (void)s, (void)a, (void)b, (void)c, (void)d;
    memset(algo, 0, sizeof *algo);
    algo->data[SLOT_ID] = (uint64_t)id;
    return CUBLAS_STATUS_SUCCESS;
}

/* A capability of the algorithm's id: a list (bytes needed when size is 0) or one 32-bit value. */
static cublasStatus_t cap(const cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoCapAttributes_t at, void *buf,
                          size_t size, size_t *written)
{
    const int id = (int)algo->data[SLOT_ID];
    const unsigned tiles[] = {10, 11}, stages[] = {5, 6};
    const unsigned *list = at == CUBLASLT_ALGO_CAP_TILE_IDS ? tiles : at == CUBLASLT_ALGO_CAP_STAGES_IDS ? stages : NULL;
    if (list) {
        *written = id == 1 ? sizeof tiles : 0;
        if (size && id == 1) memcpy(buf, list, sizeof tiles);
        return CUBLAS_STATUS_SUCCESS;
    }
    int v = 0;
    if (at == CUBLASLT_ALGO_CAP_SPLITK_SUPPORT) v = id == 1;
    else if (at == CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK) v = id == 1 ? 2 | 4 : 0;
    else if (at == CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT) v = id == 1;
    else if (at == CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX) v = id == 1 ? 2 : id == 4 ? 100 : 0;
    else if (at == CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_A_BYTES) v = id == 2 ? 256 : 16;
    else if (at >= CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_B_BYTES && at <= CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_D_BYTES) v = 4;
    if (size < sizeof v) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(buf, &v, sizeof v), *written = sizeof v;
    return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t set(cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoConfigAttributes_t at, const void *buf,
                          size_t size)
{
    const int slot = at == CUBLASLT_ALGO_CONFIG_TILE_ID           ? SLOT_TILE
                     : at == CUBLASLT_ALGO_CONFIG_SPLITK_NUM       ? SLOT_SPLIT
                     : at == CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME ? SLOT_RED
                     : at == CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING    ? SLOT_SWIZZLE
                     : at == CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION    ? SLOT_OPTION
                     : at == CUBLASLT_ALGO_CONFIG_STAGES_ID        ? SLOT_STAGES
                                                                   : -1;
    uint32_t v;
    if (slot < 0 || size != sizeof v) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(&v, buf, sizeof v);
    algo->data[slot] = v;
    return CUBLAS_STATUS_SUCCESS;
}

/* Runs the call where the model above says so; 16 splits need 64 MiB of workspace, the rest 1 MiB. */
static cublasStatus_t check(cublasLtHandle_t h, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
                            cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                            const cublasLtMatmulAlgo_t *algo, cublasLtMatmulHeuristicResult_t *r)
{
    (void)h, (void)desc, (void)a, (void)b, (void)c, (void)d;
    const uint64_t *v = algo->data;
    checks++;
    memset(r, 0, sizeof *r);
    r->workspaceSize = v[SLOT_SPLIT] == 16 ? (size_t)64 << 20 : (size_t)1 << 20;
    if (v[SLOT_ID] == 1) {
        const int pair = (v[SLOT_TILE] == 10 && v[SLOT_STAGES] == 5) || (v[SLOT_TILE] == 11 && v[SLOT_STAGES] == 6);
        return pair ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
    }
    return v[SLOT_SPLIT] == 1 && v[SLOT_SWIZZLE] == 0 ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
}

static gt_cublas_fns stand_in(void)
{
    gt_cublas_fns f;
    memset(&f, 0, sizeof f);
    f.cublasLtMatmulAlgoGetIds = get_ids, f.cublasLtMatmulAlgoInit = init;
    f.cublasLtMatmulAlgoCapGetAttribute = cap, f.cublasLtMatmulAlgoConfigSetAttribute = set;
    f.cublasLtMatmulAlgoCheck = check;
    return f;
}

static int count_where(const gt_lt_config *v, int n, int slot, uint64_t value)
{
    int k = 0;
    for (int i = 0; i < n; ++i) k += v[i].algo.data[slot] == value;
    return k;
}

/* Algorithm 1: its two pairs that run plain, each with 2 swizzles x 3 options unsplit and 6 split counts x 2
 * reductions x 2 x 3 split (16 splits over the workspace limit): 156. Algorithm 2 never (256-byte operands),
 * algorithm 3 its plain form, algorithm 4 its options 0 to 7 only. A pair that fails plain is tried no further. */
GT_TEST(lt_space_lists_every_configuration_that_runs, GT_NEEDS_NONE)
{
    const gt_cublas_fns f = stand_in();
    const gt_lt_call c = {0};
    static gt_lt_config v[512];
    checks = 0;
    const int n = gt_lt_space(&f, &c, (size_t)32 << 20, v, 512);
    CHECK_MSG(n == 156 + 1 + 8, "%d configurations", n);
    CHECK(count_where(v, n, SLOT_ID, 1) == 156 && count_where(v, n, SLOT_ID, 2) == 0);
    CHECK(count_where(v, n, SLOT_ID, 3) == 1 && count_where(v, n, SLOT_ID, 4) == 8);
    CHECK(count_where(v, n, SLOT_SPLIT, 16) == 0 && count_where(v, n, SLOT_RED, 1) == 0);
    CHECK(count_where(v, n, SLOT_TILE, 10) == 78 && count_where(v, n, SLOT_STAGES, 6) == 78);
    int unsplit_red = 0, ws_ok = 1, unscreened = 1;
    for (int i = 0; i < n; ++i) {
        unsplit_red += v[i].algo.data[SLOT_SPLIT] == 1 && v[i].algo.data[SLOT_RED] != 0;
        ws_ok &= v[i].ws == (size_t)1 << 20, unscreened &= v[i].us < 0;
    }
    CHECK(unsplit_red == 0 && ws_ok && unscreened);
    /* algorithm 1: 4 plain pair checks and 2 x 90 variant checks (16 splits among them); 3: 1 + 1 (its plain form
     * again among its variants); 4: 1 + 8; algorithm 2 none */
    CHECK_MSG(checks == 4 + 180 + 2 + 9, "%ld checks", checks);
}

GT_TEST(lt_space_stops_at_its_cap_and_without_the_functions, GT_NEEDS_NONE)
{
    gt_cublas_fns f = stand_in();
    const gt_lt_call c = {0};
    gt_lt_config v[16];
    CHECK(gt_lt_space(&f, &c, (size_t)32 << 20, v, 10) == 10);
    CHECK(gt_lt_space(&f, &c, (size_t)32 << 20, v, 0) == 0);
    f.cublasLtMatmulAlgoGetIds = NULL; /* a cuBLASLt without it: no space, the heuristic's list alone */
    CHECK(gt_lt_space(&f, &c, (size_t)32 << 20, v, 16) == 0);
    f = stand_in(), f.cublasLtMatmulAlgoCapGetAttribute = NULL;
    CHECK(gt_lt_space(&f, &c, (size_t)32 << 20, v, 16) == 0);
}
