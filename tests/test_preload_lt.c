/* cublasLtMatmul in the cuBLAS drop-in (src/preload/lt.c, lt_decide.c) and the bias broadcast it serves the BIAS
 * epilogue with (src/lib/bias.c): the serve-or-forward rules, the log line, the interposer in front of a stand-in
 * cuBLASLt (tests/preload/fake_cublaslt.c), the broadcast's template (NVRTC) and kernel (GPU). The full GPU check
 * is tests/preload/check_lt.c through run_check.sh.   Run: build/gt_tests --cpu preload_lt */
#include "bias.h"

#include <math.h>
#include "compile.h"
#include "family.h"
#include "fixture.h"
#include "harness.h"
#include "preload.h"

#include <ctype.h>
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- serve or forward ---- */

static const float one = 1.0f, zero = 0.0f, half = 0.5f;
static float Cmat[1], Dmat[1], bias_vec[1];

static gt_pl_lt_layout lay(uint64_t rows, uint64_t cols, int64_t ld)
{
    gt_pl_lt_layout l = {1, CUDA_R_32F, CUBLASLT_ORDER_COL, 1, rows, cols, ld, -1};
    return l;
}

/* D = alpha op(A) op(B) + beta C with C == D, every leading dimension pad above its minimum, alpha 1, beta 0. */
static gt_pl_lt_call lt_call(int ta, int tb, int m, int n, int k, int pad)
{
    gt_pl_lt_call c;
    memset(&c, 0, sizeof c);
    c.handle = 1;
    c.desc = (gt_pl_lt_desc){1, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUBLASLT_POINTER_MODE_HOST, ta, tb,
                             CUBLASLT_EPILOGUE_DEFAULT, NULL, -1, -1};
    c.a = ta == CUBLAS_OP_N ? lay(m, k, m + pad) : lay(k, m, k + pad);
    c.b = tb == CUBLAS_OP_N ? lay(k, n, k + pad) : lay(n, k, n + pad);
    c.c = c.d = lay(m, n, m + pad);
    c.alpha = &one, c.beta = &zero, c.C = c.D = Dmat;
    return c;
}

static gt_pl_config default_config(const char *numerics)
{
    gt_pl_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.enabled = 1, cfg.max_batch = GT_PL_DEFAULT_MAX_BATCH, cfg.numerics = numerics;
    return cfg;
}

static void expect(int line, const gt_pl_lt_call *c, gt_pl_reason want, const char *detail)
{
    gt_pl_config cfg = default_config(NULL);
    gt_pl_lt_plan p;
    gt_pl_reason r = gt_pl_lt_classify(c, &cfg, &p);
    if (r != want)
        gt_check_fail(__FILE__, line, "got %s, want %s (%s)", gt_pl_reason_text(r), gt_pl_reason_text(want), p.detail);
    else if (detail && !strstr(p.detail, detail))
        gt_check_fail(__FILE__, line, "detail '%s' lacks '%s'", p.detail, detail);
}

#define EXPECT(call, want) expect(__LINE__, &(call), (want), NULL)
#define EXPECT_DETAIL(call, want, detail) expect(__LINE__, &(call), (want), (detail))

GT_TEST(preload_lt_classify_serves_fp32_calls, GT_NEEDS_NONE)
{
    gt_pl_config cfg = default_config(NULL);
    static const int ops[] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};
    gt_pl_lt_plan p;
    for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
            gt_pl_lt_call c = lt_call(ops[a], ops[b], 7, 5, 3, 2);
            CHECK(gt_pl_lt_classify(&c, &cfg, &p) == GT_PL_SERVE);
            CHECK(p.call.api == GT_PL_LT && p.call.m == 7 && p.call.n == 5 && p.call.k == 3);
            CHECK(p.call.lda == (ops[a] == CUBLAS_OP_N ? 9 : 5) && p.call.ldb == (ops[b] == CUBLAS_OP_N ? 5 : 7));
            CHECK(p.call.ldc == 9 && p.call.transa == ops[a] && p.call.transb == ops[b]);
            CHECK(!p.bias && !p.copy_c && p.alpha == 1.0f && p.beta == 0.0f);
        }
    gt_pl_lt_call c = lt_call(CUBLAS_OP_T, CUBLAS_OP_N, 64, 32, 16, 0);
    c.desc.compute = CUBLAS_COMPUTE_32F_PEDANTIC, EXPECT(c, GT_PL_SERVE);
    /* the bias: D = bias first, then the GEMM with beta 1 */
    c = lt_call(CUBLAS_OP_T, CUBLAS_OP_N, 64, 32, 16, 0);
    c.desc.epilogue = CUBLASLT_EPILOGUE_BIAS, c.desc.bias = bias_vec;
    CHECK(gt_pl_lt_classify(&c, &cfg, &p) == GT_PL_SERVE && p.bias && !p.copy_c && p.beta == 1.0f);
    c.desc.bias_type = CUDA_R_32F, EXPECT(c, GT_PL_SERVE);
    /* C apart from D: copied first where beta != 0, not read where beta == 0 */
    c = lt_call(CUBLAS_OP_N, CUBLAS_OP_N, 64, 32, 16, 1);
    c.C = Cmat, c.c.ld = 70, c.beta = &half;
    CHECK(gt_pl_lt_classify(&c, &cfg, &p) == GT_PL_SERVE && p.copy_c && p.ldc_src == 70 && p.beta == 0.5f);
    CHECK(p.call.ldc == 65);
    c.beta = &zero;
    CHECK(gt_pl_lt_classify(&c, &cfg, &p) == GT_PL_SERVE && !p.copy_c && p.beta == 0.0f);
    c = lt_call(CUBLAS_OP_N, CUBLAS_OP_N, 64, 32, 16, 0), c.beta = &half; /* in place: beta C is D's own */
    CHECK(gt_pl_lt_classify(&c, &cfg, &p) == GT_PL_SERVE && !p.copy_c && p.beta == 0.5f);
}

GT_TEST(preload_lt_classify_forwards_what_gemmtune_does_not_compute, GT_NEEDS_NONE)
{
    const gt_pl_lt_call ok = lt_call(CUBLAS_OP_N, CUBLAS_OP_T, 64, 32, 16, 1);
    gt_pl_lt_call c;
    c = ok, c.a.type = CUDA_R_16F, EXPECT_DETAIL(c, GT_PL_LT_TYPES, "A: cudaDataType 2");
    c = ok, c.d.type = CUDA_R_16BF, EXPECT_DETAIL(c, GT_PL_LT_TYPES, "D:");
    c = ok, c.desc.scale_type = CUDA_R_64F, EXPECT_DETAIL(c, GT_PL_LT_TYPES, "scale");
    static const int computes[] = {CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_COMPUTE_32F_FAST_16F,
                                   CUBLAS_COMPUTE_32F_FAST_16BF, CUBLAS_COMPUTE_32F_EMULATED_16BFX9, CUBLAS_COMPUTE_64F};
    for (size_t i = 0; i < sizeof computes / sizeof *computes; ++i)
        c = ok, c.desc.compute = computes[i], EXPECT(c, GT_PL_LT_COMPUTE);
    static const unsigned epilogues[] = {CUBLASLT_EPILOGUE_RELU, CUBLASLT_EPILOGUE_RELU_BIAS, CUBLASLT_EPILOGUE_GELU,
                                         CUBLASLT_EPILOGUE_GELU_AUX_BIAS, CUBLASLT_EPILOGUE_RELU_AUX,
                                         CUBLASLT_EPILOGUE_DGELU_BGRAD, CUBLASLT_EPILOGUE_BGRADA,
                                         CUBLASLT_EPILOGUE_BGRADB};
    for (size_t i = 0; i < sizeof epilogues / sizeof *epilogues; ++i)
        c = ok, c.desc.epilogue = epilogues[i], c.desc.bias = bias_vec, EXPECT(c, GT_PL_LT_EPILOGUE);
    c = ok, c.desc.epilogue = CUBLASLT_EPILOGUE_BIAS, c.desc.bias = bias_vec, c.beta = &half;
    EXPECT(c, GT_PL_LT_BIAS_BETA);
    c.beta = &zero, c.desc.bias_type = CUDA_R_16F, EXPECT_DETAIL(c, GT_PL_LT_TYPES, "bias");
    c.desc.bias_type = -1, c.desc.bias = NULL, EXPECT(c, GT_PL_INVALID);
    c = ok, c.desc.pointer_mode = CUBLASLT_POINTER_MODE_DEVICE, EXPECT(c, GT_PL_DEVICE_POINTERS);
    c = ok, c.desc.pointer_mode = CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_HOST, EXPECT(c, GT_PL_DEVICE_POINTERS);
    c = ok, c.b.order = CUBLASLT_ORDER_ROW, EXPECT_DETAIL(c, GT_PL_LT_ORDER, "B:");
    c = ok, c.a.batch = c.b.batch = c.c.batch = c.d.batch = 4, EXPECT_DETAIL(c, GT_PL_LT_BATCH, "batch count 4");
    c = ok, c.desc.attr = CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET;
    EXPECT_DETAIL(c, GT_PL_LT_ATTRIBUTE, "CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET");
    c = ok, c.c.attr = 99, EXPECT_DETAIL(c, GT_PL_LT_ATTRIBUTE, "C: layout attribute 99");
    c = ok, c.alpha = &zero, EXPECT(c, GT_PL_ALPHA_ZERO);
    c = ok, c.a.cols = 0, c.b.cols = 0, EXPECT(c, GT_PL_K_ZERO);
    c = ok, c.c.cols = c.d.cols = 0, c.b.rows = 0, EXPECT(c, GT_PL_EMPTY);
    c = ok, c.a.rows = c.c.rows = c.d.rows = 1u << 31, c.a.ld = c.c.ld = c.d.ld = 1ll << 31;
    EXPECT(c, GT_PL_LT_RANGE);
    gt_pl_config tf32 = default_config("NVIDIA_TF32_OVERRIDE"), off = default_config(NULL);
    gt_pl_lt_plan p;
    CHECK(gt_pl_lt_classify(&ok, &tf32, &p) == GT_PL_ENV_NUMERICS && !strcmp(p.detail, "NVIDIA_TF32_OVERRIDE"));
    off.enabled = 0;
    CHECK(gt_pl_lt_classify(&ok, &off, &p) == GT_PL_OFF);
}

/* What cuBLASLt rejects goes to it, so that it answers with its own status. */
GT_TEST(preload_lt_classify_forwards_invalid_calls, GT_NEEDS_NONE)
{
    const gt_pl_lt_call ok = lt_call(CUBLAS_OP_T, CUBLAS_OP_N, 64, 32, 16, 0);
    gt_pl_lt_call c;
    c = ok, c.handle = 0, EXPECT(c, GT_PL_INVALID);
    c = ok, c.desc.ok = 0, EXPECT(c, GT_PL_INVALID);
    c = ok, c.b.ok = 0, EXPECT(c, GT_PL_INVALID);
    c = ok, c.alpha = NULL, EXPECT(c, GT_PL_INVALID);
    c = ok, c.beta = NULL, EXPECT(c, GT_PL_INVALID);
    c = ok, c.desc.transa = 3, EXPECT(c, GT_PL_INVALID); /* CUBLAS_OP_CONJG */
    c = ok, c.a.rows = 17, EXPECT(c, GT_PL_INVALID);     /* op(A) is m x k: A (transposed) is 16 x 64 */
    c = ok, c.b.cols = 33, EXPECT(c, GT_PL_INVALID);
    c = ok, c.c.rows = 63, c.c.ld = 64, EXPECT(c, GT_PL_INVALID);
    c = ok, c.d.ld = 63, c.c.ld = 63, EXPECT(c, GT_PL_INVALID); /* ld < rows */
    c = ok, c.c.ld = 80, EXPECT(c, GT_PL_INVALID);               /* in place with two layouts */
    c = ok, c.C = Cmat, c.c.ld = 80, EXPECT(c, GT_PL_SERVE);      /* apart: fine */
    c = ok, c.a.ld = -1, EXPECT(c, GT_PL_INVALID);
    c = ok, c.a.type = CUDA_R_16F, c.a.rows = 1, EXPECT(c, GT_PL_INVALID); /* arguments first */
}

GT_TEST(preload_lt_attribute_roles_names_and_log, GT_NEEDS_NONE)
{
    CHECK(gt_pl_lt_desc_role(CUBLASLT_MATMUL_DESC_TRANSA) == GT_PL_LT_FIELD);
    CHECK(gt_pl_lt_desc_role(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE) == GT_PL_LT_FIELD);
    CHECK(gt_pl_lt_desc_role(CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE) == GT_PL_LT_IGNORED);
    static const int must[] = {CUBLASLT_MATMUL_DESC_TRANSC, CUBLASLT_MATMUL_DESC_FILL_MODE,
                               CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET,
                               CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                               CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, 77};
    for (size_t i = 0; i < sizeof must / sizeof *must; ++i) CHECK(gt_pl_lt_desc_role(must[i]) == GT_PL_LT_DEFAULT);
    CHECK(gt_pl_lt_layout_role(CUBLASLT_MATRIX_LAYOUT_LD) == GT_PL_LT_FIELD);
    CHECK(gt_pl_lt_layout_role(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET) == GT_PL_LT_IGNORED);
    CHECK(gt_pl_lt_layout_role(CUBLASLT_MATRIX_LAYOUT_BATCH_MODE) == GT_PL_LT_DEFAULT);
    CHECK(gt_pl_lt_layout_role(CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET) == GT_PL_LT_DEFAULT);
    char name[96];
    gt_pl_lt_attr_name(0, CUBLASLT_MATMUL_DESC_FAST_ACCUM, name, sizeof name);
    CHECK_MSG(!strcmp(name, "CUBLASLT_MATMUL_DESC_FAST_ACCUM"), "%s", name);
    gt_pl_lt_attr_name(0, 9, name, sizeof name);
    CHECK_MSG(!strcmp(name, "matmul attribute 9"), "%s", name);
    gt_pl_lt_attr_name(1, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, name, sizeof name);
    CHECK_MSG(!strcmp(name, "CUBLASLT_MATRIX_LAYOUT_BATCH_MODE"), "%s", name);
    for (int r = 0; r < GT_PL_NREASONS; ++r)
        CHECK_MSG(strlen(gt_pl_reason_text((gt_pl_reason)r)) > 5 && strcmp(gt_pl_reason_text((gt_pl_reason)r),
                  "unknown reason"), "reason %d", r);
    /* the log line names the entry point, the compute type and the epilogue */
    gt_pl_config cfg = default_config(NULL);
    gt_pl_lt_call c = lt_call(CUBLAS_OP_T, CUBLAS_OP_N, 512, 64, 256, 0);
    c.desc.epilogue = CUBLASLT_EPILOGUE_BIAS, c.desc.bias = bias_vec;
    gt_pl_lt_plan p;
    CHECK(gt_pl_lt_classify(&c, &cfg, &p) == GT_PL_SERVE);
    char line[256];
    gt_pl_format(line, sizeof line, &p.call, "served by exact: x");
    CHECK_MSG(!strcmp(line, "gemmtune: 512x64x256 tn served by exact: x [cublasLtMatmul lda=256 ldb=256 ldc=512 "
                            "compute=68 epilogue=bias]\n"), "%s", line);
    c.desc.epilogue = CUBLASLT_EPILOGUE_GELU;
    gt_pl_lt_classify(&c, &cfg, &p);
    gt_pl_format(line, sizeof line, &p.call, "forwarded");
    CHECK_MSG(strstr(line, "epilogue=32]"), "%s", line);
    CHECK(gt_pl_key(&p.call, GT_PL_SERVE) != gt_pl_key(&p.call, GT_PL_LT_EPILOGUE));
}

/* ---- the interposer in front of a stand-in cuBLASLt ---- */


static void preload_prefix(char *buf, size_t n) { gt_fixture_preload_env(buf, n, ""); }

#define DRIVE_LT "CUDA_VISIBLE_DEVICES= " GT_BUILD "/tests/drive_fake_lt"

/* Without a GPU every call ends at cuBLASLt, but each takes its own path through the interposer: the arguments and
 * status that reach the stand-in are exactly the program's, and the log says where each went. A servable call
 * gets as far as the serving path (the current device), which proves it was judged servable. */
GT_TEST(preload_lt_interposer_with_a_stand_in_cublaslt, GT_NEEDS_NONE)
{
    char pre[4400], cmd[16384], *plain = NULL, *with = NULL, *log = gt_tmp_path(".log");
    preload_prefix(pre, sizeof pre);
    int rc = gt_run(DRIVE_LT " 2>/dev/null", &plain);
    CHECK_MSG(rc == 0 && plain && strstr(plain, "inside_cublaslt: status=0 reached=1 same=1") &&
              !strstr(plain, "same=0") && !strstr(plain, "reached=0"), "%d:\n%s", rc, plain);
    snprintf(cmd, sizeof cmd, "%s GEMMTUNE_PRELOAD_LOG=%s " DRIVE_LT " 2>/dev/null", pre, log);
    rc = gt_run(cmd, &with);
    CHECK_MSG(rc == 0 && with && plain && !strcmp(plain, with), "%s ->\n%s\nwithout the preload:\n%s", cmd, with, plain);
    char *text = gt_fixture_text(log);
    static const char *const want[] = {
        "64x32x16 nn forwarded to cuBLASLt: no usable current CUDA device",
        "48x32x16 tn forwarded to cuBLASLt: no usable current CUDA device",
        "[cublasLtMatmul lda=17 ldb=18 ldc=48 compute=68 epilogue=bias]",
        "48x24x16 nn forwarded to cuBLASLt: no usable current CUDA device",
        "40x24x8 nt forwarded to cuBLASLt: no usable current CUDA device",
        "72x8x8 nn forwarded to cuBLASLt: no usable current CUDA device",
        "60x32x16 nn forwarded to cuBLASLt: cuBLASLt compute type is not pure FP32: cublasComputeType_t 77",
        "61x32x16 nn forwarded to cuBLASLt: cuBLASLt matrix, scale or bias type is not CUDA_R_32F: A:",
        "62x32x16 nn forwarded to cuBLASLt: cuBLASLt matrix, scale or bias type is not CUDA_R_32F: scale",
        "63x32x16 nn forwarded to cuBLASLt: cuBLASLt epilogue other than DEFAULT or BIAS",
        "65x32x16 nn forwarded to cuBLASLt: cuBLASLt epilogue other than DEFAULT or BIAS",
        "66x32x16 nn forwarded to cuBLASLt: BIAS epilogue with beta != 0",
        "67x32x16 nn forwarded to cuBLASLt: cuBLASLt matrix, scale or bias type is not CUDA_R_32F: bias",
        "68x32x16 nn forwarded to cuBLASLt: device pointer mode",
        "69x32x16 nn forwarded to cuBLASLt: matrix layout not column-major",
        "70x32x16 nn forwarded to cuBLASLt: batched cuBLASLt call",
        "71x32x16 nn forwarded to cuBLASLt: cuBLASLt attribute that gemmtune does not serve: "
        "CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET",
        "73x32x16 nn forwarded to cuBLASLt: cuBLASLt attribute that gemmtune does not serve: matmul attribute 50",
        "74x32x16 nn forwarded to cuBLASLt: cuBLASLt attribute that gemmtune does not serve: B: "
        "CUBLASLT_MATRIX_LAYOUT_BATCH_MODE",
        "75x32x16 nn forwarded to cuBLASLt: cuBLASLt attribute that gemmtune does not serve: C: layout attribute 20",
        "76x32x16 nn forwarded to cuBLASLt: alpha == 0",
        "77x32x0 nn forwarded to cuBLASLt: k == 0",
        "78x32x16 nn forwarded to cuBLASLt: invalid arguments (cuBLAS reports them) -> FAKE_CUBLASLT_ERROR",
        "79x32x16 nn forwarded to cuBLASLt: invalid arguments",
        "80x32x16 nn forwarded to cuBLASLt: invalid arguments",
        "81x32x16 nn forwarded to cuBLASLt: invalid arguments",
        "24x24x24 nn forwarded to cuBLASLt: cuBLASLt compute type is not pure FP32: cublasComputeType_t 77 -> "
        "FAKE_CUBLASLT_ERROR",
        "0 calls served by gemmtune, 26 forwarded to cuBLAS",
        ": descriptors kept by their state bytes (201 of 256)"}; /* the stand-in's state: 201 bytes */
    for (size_t i = 0; i < sizeof want / sizeof want[0]; ++i)
        CHECK_MSG(text && strstr(text, want[i]), "log lacks '%s':\n%s", want[i], text ? text : "(none)");
    /* cuBLAS's and cuBLASLt's own calls of cublasLtMatmul went straight through: no line, not counted */
    CHECK_MSG(text && !strstr(text, "20x20x20"), "%s", text);
    unlink(log);
    free(plain), free(with), free(text), free(log);
}

/* The drop-in reads a call's descriptors through cuBLASLt's getters once, and again only when their bytes change:
 * the same descriptors, or others of the same bytes, cost no getter; a changed attribute of the descriptor or of a
 * layout is read, and forwards; a descriptor in smaller storage (its first word says so) is read on every call,
 * never as 256 bytes; and a model's 48 Linear layers, whose descriptors differ in their bias pointers, all stay. */
GT_TEST(preload_lt_reads_a_descriptor_once_until_it_changes, GT_NEEDS_NONE)
{
    char pre[4400], cmd[16384], *out = NULL, *sum = gt_tmp_path(".summary"), *log = gt_tmp_path(".log");
    unsigned long long g[11] = {0};
    int st[11];
    preload_prefix(pre, sizeof pre);
    snprintf(cmd, sizeof cmd, "%s GEMMTUNE_PRELOAD_SUMMARY=%s GEMMTUNE_PRELOAD_LOG=%s " DRIVE_LT " memo 2>/dev/null",
             pre, sum, log);
    int rc = gt_run(cmd, &out);
    for (int i = 0; i < 11; ++i) {
        char want[32];
        snprintf(want, sizeof want, "memo call %d:", i);
        const char *at = out ? strstr(out, want) : NULL;
        st[i] = -1;
        if (at) (void)sscanf(at + strlen(want), " status=%d getters=%llu", &st[i], &g[i]);
        CHECK_MSG(rc == 0 && st[i] == 0, "call %d: %s ->\n%s", i, cmd, out);
    }
    /* the descriptor's fields and its attributes against a fresh one's, each layout's fields and few attributes */
    CHECK_MSG(g[0] >= 30 && g[0] <= 120, "a new call's descriptors: %llu getters", g[0]);
    CHECK_MSG(g[1] == 0 && g[2] == 0 && g[3] == 0, "the same bytes again: %llu %llu %llu getters", g[1], g[2], g[3]);
    CHECK_MSG(g[4] >= 8 && g[4] < g[0], "the changed descriptor: %llu getters (all: %llu)", g[4], g[0]);
    CHECK_MSG(g[5] >= 6 && g[5] < g[4], "the changed layout: %llu getters (the descriptor: %llu)", g[5], g[4]);
    CHECK_MSG(g[6] >= 20 && g[7] == g[6], "smaller storage: %llu then %llu getters", g[6], g[7]);
    CHECK_MSG(g[8] == 0 && g[9] == 0 && g[10] == 0, "the copy again: %llu %llu %llu getters", g[8], g[9], g[10]);
    unsigned long long layers[2] = {0, 0};
    const char *at = out ? strstr(out, "memo layers pass 0:") : NULL;
    const int got = at ? sscanf(at, "memo layers pass 0: getters=%llu memo layers pass 1: getters=%llu", &layers[0],
                                &layers[1]) : 0;
    CHECK_MSG(got == 2 && layers[0] >= 48 * 6 && layers[1] == 0, "48 layers' descriptors: %llu getters, then %llu",
              layers[0], layers[1]);
    /* the summary counts each reason (the log has one line per call and reason): calls 4 and 5 forwarded for an
     * attribute, and the repeats' one changes each decided again: the descriptor's attribute, C given as D and the
     * NULL handle, C's layout row-major, beta 1 with a BIAS epilogue */
    char *text = gt_fixture_text(sum);
    static const char *const reasons[] = {"cuBLASLt attribute that gemmtune does not serve\t3",
                                          "invalid arguments (cuBLAS reports them)\t2",
                                          "matrix layout not column-major (CUBLASLT_ORDER_COL)\t1",
                                          "BIAS epilogue with beta != 0\t1",
                                          /* call 9 alone, on call 8's objects unchanged: neither 8's verdict nor 10's */
                                          "alpha == 0 (A and B are not read)\t1"};
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; ++i) {
        char want[160];
        snprintf(want, sizeof want, "\tcublasLtMatmul\tforwarded\t%s\n", reasons[i]);
        CHECK_MSG(text && strstr(text, want), "summary lacks '%s':\n%s", reasons[i], text ? text : "(none)");
    }
    /* the log's last line. Repeats of the last call: memo calls 1, 2, 9, 10 and repeats 1-5, 11, 12. Read through the
     * getters: 3 objects of the first call (its A and D layouts alike), 4 of memo call 0, 1 each of memo calls 4-7,
     * 48 layers' descriptors, the repeats' C layout new and row-major, the BIAS descriptor: 62. Of 121 calls, the
     * 110 others' objects: 4 each (C's layout D's) but 5 in repeats 0 and 6-9: 445. */
    char *lines = gt_fixture_text(log);
    const char *tail = lines ? strstr(lines, " calls repeated their thread's last call") : NULL;
    unsigned long long r[3] = {0, 0, 0};
    while (tail && tail > lines && isdigit((unsigned char)tail[-1])) --tail; /* back to the count */
    const int got_r = tail ? sscanf(tail, "%llu calls repeated their thread's last call; the others' descriptors and "
                                          "layouts: %llu found read before, %llu read through",
                                    &r[0], &r[1], &r[2]) : 0;
    CHECK_MSG(got_r == 3 && r[0] == 11 && r[1] + r[2] == 445 && r[2] == 62, "%s", lines ? lines : "(no log)");
    unlink(sum), unlink(log);
    free(out), free(text), free(sum), free(lines), free(log);
}

/* What the drop-in's descriptor table assumes of the cuBLASLt installed here (no GPU needed for descriptors), with
 * the state bytes as lt.c learns them, those an Init writes alike into storage of 0x00 and of 0xff: every attribute
 * that takes a new value changes those bytes and no others; two descriptors made alike agree on them (Create leaves
 * padding as the heap had it); and a descriptor made in smaller storage, as an older header's
 * cublasLtMatmulDescInit makes it, has another first word than Create's. Fails on a cuBLASLt for which the table
 * would be wrong, before any program is served by it. */
static int state_holds_every_attribute(int layout, const uint64_t *mask, uint64_t *obj, int words, int *changed)
{
    int bad = 0;
    *changed = 0;
    for (int a = 0; a < 64; ++a) {
        unsigned char v[64];
        uint64_t before[32];
        size_t size = 0, w = 0;
        if ((layout ? cublasLtMatrixLayoutGetAttribute((cublasLtMatrixLayout_t)obj, a, NULL, 0, &size)
                    : cublasLtMatmulDescGetAttribute((cublasLtMatmulDesc_t)obj, a, NULL, 0, &size)) ||
            !size || size > sizeof v ||
            (layout ? cublasLtMatrixLayoutGetAttribute((cublasLtMatrixLayout_t)obj, a, v, size, &w)
                    : cublasLtMatmulDescGetAttribute((cublasLtMatmulDesc_t)obj, a, v, size, &w)))
            continue;
        memcpy(before, obj, 8 * (size_t)words);
        for (size_t i = 0; i < size; ++i) v[i] ^= 0xff; /* another value: taken or refused */
        if (layout ? cublasLtMatrixLayoutSetAttribute((cublasLtMatrixLayout_t)obj, a, v, size)
                   : cublasLtMatmulDescSetAttribute((cublasLtMatmulDesc_t)obj, a, v, size))
            continue;
        ++*changed;
        int inside = 0, outside = 0;
        for (int i = 0; i < words; ++i)
            inside |= ((before[i] ^ obj[i]) & mask[i]) != 0, outside |= ((before[i] ^ obj[i]) & ~mask[i]) != 0;
        if (!inside || outside) {
            bad = 1;
            printf("    %s attribute %d: %s\n", layout ? "layout" : "matmul", a,
                   outside ? "changed bytes Init does not write" : "changed no state byte");
        }
        memcpy(obj, before, 8 * (size_t)words);
    }
    return bad;
}

GT_TEST(preload_lt_descriptors_are_their_bytes_in_this_cublaslt, GT_NEEDS_NONE)
{
    _Alignas(16) uint64_t d0[32], d1[32], l0[8], l1[8], dmask[32], lmask[8];
    memset(d0, 0, sizeof d0), memset(d1, 0xff, sizeof d1), memset(l0, 0, sizeof l0), memset(l1, 0xff, sizeof l1);
    CHECK(cublasLtMatmulDescInit_internal((cublasLtMatmulDesc_t)d0, sizeof d0, CUBLAS_COMPUTE_32F, CUDA_R_32F) == 0 &&
          cublasLtMatmulDescInit_internal((cublasLtMatmulDesc_t)d1, sizeof d1, CUBLAS_COMPUTE_32F, CUDA_R_32F) == 0 &&
          cublasLtMatrixLayoutInit_internal((cublasLtMatrixLayout_t)l0, sizeof l0, CUDA_R_32F, 1, 1, 1) == 0 &&
          cublasLtMatrixLayoutInit_internal((cublasLtMatrixLayout_t)l1, sizeof l1, CUDA_R_32F, 1, 1, 1) == 0);
    for (int i = 0; i < 32; ++i) dmask[i] = ~(d0[i] ^ d1[i]);
    for (int i = 0; i < 8; ++i) lmask[i] = ~(l0[i] ^ l1[i]);
    int nd = 0, nl = 0;
    CHECK(!state_holds_every_attribute(0, dmask, d0, 32, &nd) && !state_holds_every_attribute(1, lmask, l0, 8, &nl));
    CHECK_MSG(nd >= 20 && nl >= 5, "attributes set: %d of a descriptor, %d of a layout", nd, nl);
    cublasLtMatmulDesc_t c1 = NULL, c2 = NULL;
    void *junk = malloc(256);
    if (junk) memset(junk, 0x5a, 256), free(junk); /* the heap as a program may leave it */
    CHECK(cublasLtMatmulDescCreate(&c1, CUBLAS_COMPUTE_32F, CUDA_R_32F) == 0 &&
          cublasLtMatmulDescCreate(&c2, CUBLAS_COMPUTE_32F, CUDA_R_32F) == 0);
    int same = c1 && c2;
    for (int i = 0; same && i < 32; ++i) {
        uint64_t a, b;
        memcpy(&a, (const char *)c1 + 8 * i, 8), memcpy(&b, (const char *)c2 + 8 * i, 8);
        same = ((a ^ b) & dmask[i]) == 0 && ((a ^ d0[i]) & dmask[i]) == 0;
    }
    CHECK_MSG(same, "Create's descriptors and Init's differ in their state bytes");
    uint64_t *small = calloc(1, 256);
    CHECK(small && cublasLtMatmulDescInit_internal((cublasLtMatmulDesc_t)small, 96, CUBLAS_COMPUTE_32F, CUDA_R_32F) == 0);
    CHECK_MSG(small && small[0] != d0[0], "a descriptor in 96 bytes has a 256-byte one's first word");
    CHECK(dmask[0] == ~0ull && (size_t)cublasLtGetVersion() / 10000 == CUBLAS_VER_MAJOR);
    free(small);
    if (c1) cublasLtMatmulDescDestroy(c1);
    if (c2) cublasLtMatmulDescDestroy(c2);
}

GT_TEST(preload_lt_switch_off_and_numerics_override, GT_NEEDS_NONE)
{
    char pre[4400], cmd[16384], *plain = NULL, *with = NULL, *log = gt_tmp_path(".log");
    preload_prefix(pre, sizeof pre);
    gt_run(DRIVE_LT " 2>/dev/null", &plain);
    snprintf(cmd, sizeof cmd, "%s GEMMTUNE_PRELOAD=off GEMMTUNE_PRELOAD_LOG=%s " DRIVE_LT " 2>/dev/null", pre, log);
    int rc = gt_run(cmd, &with);
    char *text = gt_fixture_text(log);
    CHECK_MSG(rc == 0 && with && plain && !strcmp(plain, with), "%s ->\n%s", cmd, with);
    CHECK_MSG(text && !strstr(text, "[cublasLtMatmul") && strstr(text, "0 calls served by gemmtune, 0 forwarded"),
              "%s", text);
    free(with), free(text);
    unlink(log);
    snprintf(cmd, sizeof cmd, "%s NVIDIA_TF32_OVERRIDE=1 GEMMTUNE_PRELOAD_LOG=%s " DRIVE_LT " 2>/dev/null", pre, log);
    rc = gt_run(cmd, &with);
    text = gt_fixture_text(log);
    CHECK_MSG(rc == 0 && with && plain && !strcmp(plain, with), "%s ->\n%s", cmd, with);
    CHECK_MSG(text && strstr(text, "64x32x16 nn forwarded to cuBLASLt: FP32 numerics overridden by the environment: "
                                   "NVIDIA_TF32_OVERRIDE"), "%s", text);
    unlink(log);
    free(plain), free(with), free(text), free(log);
}

/* A call with a pass over D is served only where the stored times say the kernel still wins with the pass and its
 * read of D: a 768 x 8192 bias costs 2 x 25 MB / 2 TB/s + a launch, 28.2 us; a 1 x 16384 one about the launch. */
GT_TEST(preload_lt_pass_must_pay_for_itself, GT_NEEDS_NONE)
{
    const double bias = gt_pl_lt_pass_ms(768, 8192, 0), copy = gt_pl_lt_pass_ms(768, 8192, 1);
    CHECK_MSG(fabs(bias - (0.003 + 8.0 * 768 * 8192 / 2e9)) < 1e-12 && fabs(copy - (0.003 + 12.0 * 768 * 8192 / 2e9)) < 1e-12,
              "%g %g", bias, copy);
    CHECK(fabs(gt_pl_lt_pass_ms(1, 16384, 0) - 0.003 - 131072 / 2e9) < 1e-12 && gt_pl_lt_pass_ms(-1, 5, 0) == 0.003);
    CHECK(gt_pl_lt_pass_pays(0.44, 0.80, bias));    /* tf32x3 at 1.8x: pays */
    CHECK(!gt_pl_lt_pass_pays(0.78, 0.80, bias));   /* an FP32 winner 2.6% ahead: the pass and the margin eat it */
    CHECK(gt_pl_lt_pass_pays(0.75, 0.80, bias) && !gt_pl_lt_pass_pays(0.76, 0.80, bias));
    CHECK(!gt_pl_lt_pass_pays(0.091, 0.095, 0.003)); /* a skinny winner 4.4% ahead of a 95 us call: 3 us + 2% */
    CHECK(gt_pl_lt_pass_pays(0.080, 0.095, 0.003));
    CHECK(!gt_pl_lt_pass_pays(-1, 0.8, bias) && !gt_pl_lt_pass_pays(0.4, 0, bias) && !gt_pl_lt_pass_pays(0.4, 0.8, -1));
}

/* ---- the bias broadcast ---- */

GT_TEST(preload_lt_bias_template_compiles, GT_NEEDS_NVRTC)
{
    const char *tmpl = gt_template_text("bias.cu");
    CHECK(tmpl != NULL);
    if (!tmpl) return;
    gt_cubin cb;
    char err[512] = "";
    int rc = gt_nvrtc_compile(tmpl, "sm_90", &cb, err, sizeof err);
    CHECK_MSG(rc == 0 && cb.size > 0, "%s", err);
    gt_cubin_free(&cb);
}

/* D padded (ld > m), with more columns than gridDim.y holds: every column is the bias, the padding untouched. */
GT_TEST(preload_lt_gpu_bias_broadcast, GT_NEEDS_GPU)
{
    const int m = 37, n = 70000, ld = 40;
    const size_t nd = (size_t)ld * n;
    float *hD = malloc(nd * sizeof *hD), hb[37], *dD = NULL, *db = NULL;
    for (int i = 0; i < m; ++i) hb[i] = (float)i - 11.5f;
    for (size_t e = 0; e < nd; ++e) hD[e] = -777.0f;
    char err[512] = "";
    CHECK(cudaMalloc((void **)&dD, nd * sizeof *hD) == cudaSuccess && cudaMalloc((void **)&db, sizeof hb) == cudaSuccess);
    cudaMemcpy(dD, hD, nd * sizeof *hD, cudaMemcpyHostToDevice);
    cudaMemcpy(db, hb, sizeof hb, cudaMemcpyHostToDevice);
    int dev = 0;
    cudaGetDevice(&dev);
    int rc = gt_bias_broadcast(dev, NULL, m, n, db, dD, ld, err, sizeof err);
    CHECK_MSG(rc == 0, "%s", err);
    CHECK(gt_bias_broadcast(dev, NULL, m, n, db, dD, m - 1, err, sizeof err) == -1); /* ld < m */
    cudaMemcpy(hD, dD, nd * sizeof *hD, cudaMemcpyDeviceToHost);
    size_t bad = 0;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < ld; ++i) bad += hD[i + (size_t)j * ld] != (i < m ? hb[i] : -777.0f);
    CHECK_MSG(bad == 0, "%zu wrong elements", bad);
    cudaFree(dD), cudaFree(db), free(hD);
}

/* The fused bias (kernels/family.h: bias_epilogue) against the pass it replaces, through a column-major handle as
 * the drop-in's: each family that has one (tf32x3wg in every layout; gemv and skinny in the layouts they take, both
 * sides, skinny's K slices met in a cluster) served for each case by an exact table row, gt_loader_sgemm_bias's D
 * bit for bit the broadcast's then gemmtune_sgemm's at beta 1, with edges in every dimension and ld > m; a split
 * through a workspace fuses nothing and is refused. Then a Linear layer's shape timed both ways (printed, not
 * judged). */
static float *dev_random(size_t n, unsigned seed)
{
    float *h = malloc(n * sizeof *h), *d = NULL;
    for (size_t i = 0; i < n; ++i) h[i] = (float)((seed = seed * 1103515245u + 12345u) >> 8) / 16777216.0f - 0.5f;
    if (cudaMalloc((void **)&d, n * sizeof *h) == cudaSuccess) cudaMemcpy(d, h, n * sizeof *h, cudaMemcpyHostToDevice);
    free(h);
    return d;
}

typedef struct {
    int m, n, k, ta, tb;
    const char *family, *params;
    int tight; /* lda, ldb and ldd the matrices' own heights (a whole-tile variant's calls); else each padded */
} bias_case;

/* A handle serving params exactly on the case's shape (the row in the loader's row-major terms: n x m, B first). */
static gemmtune_handle bias_handle(const bias_case *c)
{
    struct cudaDeviceProp prop;
    int dev = 0;
    cudaGetDevice(&dev);
    cudaGetDeviceProperties(&prop, dev);
    const char *lays[4] = {"nn", "nt", "tn", "tt"};
    gemmtune_winner_row r = {prop.name, prop.major, prop.minor, prop.multiProcessorCount, c->n, c->m, c->k,
                             lays[c->tb * 2 + c->ta], c->family, c->params, 0, 0, NULL, 0, NULL, 1};
    gemmtune_options o;
    gemmtune_options_init(&o);
    o.column_major = 1, o.fallback = GEMMTUNE_FALLBACK_NONE, o.math = GEMMTUNE_MATH_TF32X3;
    gemmtune_handle h = NULL;
    return gemmtune_create_from_table(&h, &r, 1, &o) == GEMMTUNE_SUCCESS ? h : NULL;
}

/* The loader's fuses_bias for these arguments (gt_loader_facts_of), -1 where it answers none. */
static int fuses(gemmtune_handle h, int ta, int tb, int m, int n, int k, const float *A, int lda, const float *B, int ldb,
                 const float *C, int ldc)
{
    gt_loader_facts f;
    return gt_loader_facts_of(h, NULL, ta, tb, m, n, k, A, lda, B, ldb, C, ldc, &f) ? -1 : f.fuses_bias;
}

/* The elements of D (its padding rows too) whose bits differ between the fused call and the pass's; (size_t)-1 when
 * the setup failed. Each way's fastest of reps runs in *fused_ms, *pass_ms. The bias starts a float past its
 * allocation: a bias may start at any float, so no kernel may read it in wider pieces. */
static size_t bias_run(const bias_case *c, int reps, double *fused_ms, double *pass_ms)
{
    const int pad = !c->tight, lda = (c->ta ? c->k : c->m) + 3 * pad, ldb = (c->tb ? c->n : c->k) + pad,
              ldd = c->m + 5 * pad;
    const size_t na = (size_t)lda * (c->ta ? c->m : c->k), nb = (size_t)ldb * (c->tb ? c->k : c->n),
                 nd = (size_t)ldd * c->n;
    float *A = dev_random(na, 1), *B = dev_random(nb, 2), *bias0 = dev_random((size_t)c->m + 1, 3), *D1 = NULL,
          *D2 = NULL, *bias = bias0 ? bias0 + 1 : NULL;
    char err[512] = "";
    size_t diff = (size_t)-1;
    gemmtune_handle h = bias_handle(c);
    cudaEvent_t e[3];
    for (int i = 0; i < 3; ++i) cudaEventCreate(&e[i]);
    int dev = 0;
    cudaGetDevice(&dev);
    if (!h || !A || !B || !bias || cudaMalloc((void **)&D1, nd * 4) || cudaMalloc((void **)&D2, nd * 4)) goto out;
    cudaMemset(D1, 0x7f, nd * 4), cudaMemset(D2, 0x7f, nd * 4); /* the padding rows must match too */
    CHECK_MSG(fuses(h, c->ta, c->tb, c->m, c->n, c->k, A, lda, B, ldb, D1, ldd) == 1,
              "%s %dx%dx%d: not fused", c->family, c->m, c->n, c->k);
    for (int r = 0; r < reps; ++r) {
        cudaEventRecord(e[0], NULL);
        CHECK(gt_loader_sgemm_bias(h, NULL, c->ta, c->tb, c->m, c->n, c->k, 1.5f, A, lda, B, ldb, bias, D1, ldd) ==
              GEMMTUNE_SUCCESS);
        cudaEventRecord(e[1], NULL);
        CHECK_MSG(gt_bias_broadcast(dev, NULL, c->m, c->n, bias, D2, ldd, err, sizeof err) == 0, "%s", err);
        CHECK(gemmtune_sgemm(h, NULL, c->ta, c->tb, c->m, c->n, c->k, 1.5f, A, lda, B, ldb, 1.0f, D2, ldd) ==
              GEMMTUNE_SUCCESS);
        cudaEventRecord(e[2], NULL);
        cudaEventSynchronize(e[2]);
        float f = 0, p = 0;
        cudaEventElapsedTime(&f, e[0], e[1]), cudaEventElapsedTime(&p, e[1], e[2]);
        if (r == 0 || f < *fused_ms) *fused_ms = f;
        if (r == 0 || p < *pass_ms) *pass_ms = p;
    }
    float *h1 = malloc(nd * 4), *h2 = malloc(nd * 4);
    cudaMemcpy(h1, D1, nd * 4, cudaMemcpyDeviceToHost), cudaMemcpy(h2, D2, nd * 4, cudaMemcpyDeviceToHost);
    diff = 0;
    for (size_t i = 0; i < nd; ++i) diff += memcmp(&h1[i], &h2[i], 4) != 0;
    free(h1), free(h2);
out:
    CHECK_MSG(cudaGetLastError() == cudaSuccess && h, "%dx%dx%d: setup or launch failed", c->m, c->n, c->k);
    for (int i = 0; i < 3; ++i) cudaEventDestroy(e[i]);
    cudaFree(A), cudaFree(B), cudaFree(bias0), cudaFree(D1), cudaFree(D2);
    gemmtune_destroy(h);
    return diff;
}

GT_TEST(preload_lt_gpu_bias_epilogue_equals_the_pass, GT_NEEDS_GPU)
{
    static const char *const P = "BM=128,BN=128,BK=32,STAGES=3,KC=128,PF=1,MINB=1",
                              *P2 = "BM=128,BN=64,BK=32,STAGES=2,KC=32,PF=1,MINB=1",
                              *CT = "BM=128,BN=112,BK=32,STAGES=3,KC=128,PF=1,MINB=1,CT=1", /* bias along rows */
                              *EV = "BM=128,BN=128,BK=32,STAGES=3,KC=128,PF=1,MINB=1,EVEN=1"; /* whole tiles only */
    /* gemv and skinny, column-major: the small side is n (SIDE 0: M of the loader's row-major terms) or m (SIDE 1);
     * gemv takes the layouts whose large operand runs along K (ta 1 with SIDE 0, tb 0 with SIDE 1) */
    static const char *const G1 = "SIDE=0,SR=1,RW=2,WARPS=8,KW=4,U=2,XS=0",
                              *G8 = "SIDE=0,SR=8,RW=2,WARPS=8,KW=1,U=4,XS=1",
                              *GS = "SIDE=1,SR=4,RW=1,WARPS=8,KW=1,U=4,XS=1",
                              *S0 = "SIDE=0,SR=8,TL=4,WARPS=4,KC=16,STAGES=3,FILL=32,RG=4,CL=8",
                              *S1 = "SIDE=1,SR=8,TL=4,WARPS=4,KC=16,STAGES=3,FILL=8,RG=4,CL=8";
    /* skinny3 (the tf32x3 class) puts its sums as skinny does; K short enough for one slice: no workspace */
    static const char *const T0 = "SIDE=0,SR=8,TL=1,WARPS=4,KC=16,STAGES=3,FILL=8,RG=1,CL=1,TC=1",
                              *T1 = "SIDE=1,SR=40,TL=1,WARPS=4,KC=32,STAGES=3,FILL=8,RG=1,CL=1,TC=1";
    const bias_case cases[] = {
        {131, 67, 45, 0, 0, "tf32x3wg", P},     {129, 200, 300, 1, 0, "tf32x3wg", P2},
        {77, 129, 1025, 0, 1, "tf32x3wg", P},   {250, 131, 64, 1, 1, "tf32x3wg", P2},
        {1, 7, 127, 0, 1, "tf32x3wg", P},       {768, 512, 256, 1, 0, "tf32x3wg", P},
        {131, 67, 45, 0, 0, "tf32x3wg", CT},    {77, 229, 1025, 1, 1, "tf32x3wg", CT},
        {1, 7, 127, 0, 1, "tf32x3wg", CT},      {1031, 1, 777, 1, 0, "gemv", G1},
        {300, 1, 4097, 1, 1, "gemv", G1},       {1025, 7, 1000, 1, 0, "gemv", G8},
        {129, 8, 257, 1, 1, "gemv", G8},        {3, 1031, 999, 0, 0, "gemv", GS},
        {4, 300, 513, 1, 0, "gemv", GS},        {3072, 8, 768, 1, 0, "skinny", S0},
        {1027, 5, 4099, 0, 1, "skinny", S0},    {7, 2000, 1500, 0, 0, "skinny", S1},
        {8, 515, 4096, 1, 1, "skinny", S1},     {768, 512, 256, 1, 0, "tf32x3wg", EV, 1},
        {512, 384, 320, 0, 1, "tf32x3wg", EV, 1}, {3072, 8, 63, 1, 0, "skinny3", T0},
        {1027, 5, 47, 0, 1, "skinny3", T0},     {33, 1000, 150, 0, 0, "skinny3", T1},
        {40, 515, 100, 1, 1, "skinny3", T1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        double f = 0, p = 0;
        const size_t d = bias_run(&cases[i], 1, &f, &p);
        CHECK_MSG(d == 0, "%s %dx%dx%d ta %d tb %d: %zu elements differ", cases[i].family, cases[i].m, cases[i].n,
                  cases[i].k, cases[i].ta, cases[i].tb, d);
    }
    bias_case split = {256, 256, 4096, 1, 0, "tf32x3wg", "BM=128,BN=128,BK=32,STAGES=3,KC=128,PF=1,MINB=1,SPLITK=4"};
    gemmtune_handle h = bias_handle(&split);
    float *A = dev_random(4096 * 256, 4), *D = dev_random(256 * 256, 5);
    CHECK(h && fuses(h, 1, 0, 256, 256, 4096, A, 4096, A, 4096, D, 256) == 0);
    CHECK(h && gt_loader_sgemm_bias(h, NULL, 1, 0, 256, 256, 4096, 1.0f, A, 4096, A, 4096, D, D, 256) ==
               GEMMTUNE_STATUS_INVALID_VALUE);
    gemmtune_destroy(h);
    /* skinny's K slices through a workspace: nothing fused */
    bias_case sksplit = {4096, 8, 4096, 1, 0, "skinny", "SIDE=0,SR=8,TL=4,WARPS=4,KC=32,STAGES=3,FILL=8,RG=4"};
    h = bias_handle(&sksplit);
    CHECK(h && fuses(h, 1, 0, 4096, 8, 4096, A, 4096, A, 4096, D, 4096) == 0);
    gemmtune_destroy(h), cudaFree(A), cudaFree(D);
    const bias_case linear[] = {{3072, 8192, 768, 1, 0, "tf32x3wg", P}, /* fc1 of a 768-wide transformer, as */
                                {4096, 1, 4096, 1, 0, "gemv", G1},       /* cuBLASLt gets it; batch 1 and 8 */
                                {4096, 8, 4096, 1, 0, "gemv", G8}};
    for (size_t i = 0; i < sizeof linear / sizeof linear[0]; ++i) {
        double f = 0, p = 0;
        CHECK(bias_run(&linear[i], 10, &f, &p) == 0);
        printf("    %s %dx%dx%d (column-major, tn): fused %.1f us, bias pass + beta 1 %.1f us\n", linear[i].family,
               linear[i].m, linear[i].n, linear[i].k, 1e3 * f, 1e3 * p);
    }
}

/* cublasLtMatmul served against cuBLASLt itself on every case of tests/preload/check_lt.c (no winners: the loader's
 * built-in kernel serves every servable call). The full check, with GEMMTUNE_PRELOAD=off, is run_check.sh. Then
 * the same cases with no fallback: a call with a bias or C that the loader would give to cuBLAS stays with
 * cuBLASLt's fused call, and its log line says why the loader chose cuBLAS. */
GT_TEST(preload_lt_gpu_served_calls_match_cublaslt, GT_NEEDS_GPU)
{
    char pre[4400], cmd[16384], *out = NULL, *dir = gt_tmp_path("_preload_lt");
    preload_prefix(pre, sizeof pre);
    snprintf(cmd, sizeof cmd, "mkdir -p %s/ref %s/served %s/xdg && " GT_BUILD "/check_lt run %s/ref && "
             "XDG_DATA_HOME=%s/xdg GEMMTUNE_DB= GEMMTUNE_FALLBACK=default GEMMTUNE_PRELOAD_LOG=%s/served.log %s "
             GT_BUILD "/check_lt run %s/served && " GT_BUILD "/check_lt compare %s/ref %s/served && "
             "grep -c 'served by default.*epilogue=bias' %s/served.log",
             dir, dir, dir, dir, dir, dir, pre, dir, dir, dir, dir);
    int rc = gt_run(cmd, &out);
    CHECK_MSG(rc == 0 && strstr(out, ", 0 failed"), "%s ->\n%s", cmd, out);
    free(out);
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/fused && XDG_DATA_HOME=%s/xdg GEMMTUNE_DB= GEMMTUNE_PRELOAD_LOG=%s/fused.log %s " GT_BUILD
             "/check_lt run %s/fused >/dev/null && " GT_BUILD "/check_lt compare %s/ref %s/fused && "
             "grep 'bias or C fused in, is cheaper (the loader: ' %s/fused.log | head -1",
             dir, dir, dir, pre, dir, dir, dir, dir);
    rc = gt_run(cmd, &out);
    CHECK_MSG(rc == 0 && strstr(out, ", 0 failed") && strstr(out, "(the loader: "), "%s ->\n%s", cmd, out);
    const char *line = out ? strstr(out, "gemmtune:") : NULL; /* the log line grep found */
    if (line && strstr(line, "(the loader: ")) printf("    %s", line);
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    gt_run(cmd, NULL);
    free(dir);
}
