/* Family cublas: the vendor's own SGEMM as candidates, timed and validated like ours, so the loader never serves
 * a kernel slower than cuBLAS. Nothing is built (GT_BUILD_NONE); the runtime's "cublas" backend
 * (src/lib/backend_cublas.c) runs a candidate and, on the GPU, lists them per shape (GT_SPACE_DEVICE): cuBLAS's
 * default cublasSgemm, then the algorithms cuBLASLt's heuristic offers, then the fastest of the rest of
 * cuBLASLt's configuration space in a warm screen on the GPU (src/lib/lt_space.c), all in pure FP32 compute,
 * never TF32.
 * A cuBLASLt algorithm is stored as its configuration attributes, so it replays exactly, with the cuBLASLt version
 * it was found with (VER), which decides whether it is still valid. Tested by tests/test_vendor.c. */
#include "cublas_family.h"

#include <stdio.h>

enum {
    P_API = GT_CUBLAS_P_API, P_ALGO = GT_CUBLAS_P_ALGO, P_SPLITK = GT_CUBLAS_P_SPLITK, P_WSKB = GT_CUBLAS_P_WSKB,
    P_VER = GT_CUBLAS_P_VER, NP = GT_CUBLAS_NP
};

#define REJECT GT_REJECT

static int legal(const gt_params *p, const gt_limits *lim, char *why, size_t n)
{
    (void)lim;
    const int *v = p->v;
    if (v[P_API] != GT_CUBLAS_API_SGEMM && v[P_API] != GT_CUBLAS_API_LT) REJECT("API=%d: want 0 (cublasSgemm) or 1 (cuBLASLt)", v[P_API]);
    for (int i = P_ALGO; i < NP; ++i)
        if (v[i] < 0) REJECT("negative %s", gt_family_cublas.params[i].name);
    if (v[P_VER] < 1) REJECT("VER must name the cuBLAS version (cublasLtGetVersion)");
    if (v[P_WSKB] > 1024 * 1024) REJECT("WSKB=%d: workspace over 1 GiB", v[P_WSKB]);
    if (v[P_API] == GT_CUBLAS_API_SGEMM)
        for (int i = P_ALGO; i < P_VER; ++i)
            if (v[i]) REJECT("API=0 (cublasSgemm) takes no algorithm: %s must be 0", gt_family_cublas.params[i].name);
    if (v[P_API] == GT_CUBLAS_API_LT && v[P_SPLITK] < 1) REJECT("SPLITK must be >= 1");
    return 1;
}

/* Only the workspace matters: the library picks its own grid. */
static void launch(const gt_params *p, const gt_shape *s, int sms, gt_launch *out)
{
    (void)sms;
    (void)s;
    *out = (gt_launch){.splitk = 1, .ws_bytes = (size_t)p->v[P_WSKB] * 1024};
}

/* cuBLASLt's heuristic was asked for operands on 16-byte boundaries (the sweep's buffers); a call with less
 * alignment may not run that algorithm. Leading dimensions are the library's to judge: the backend's plan asks
 * cublasLtMatmulAlgoCheck with the call's own. cublasSgemm takes anything. */
static int applicable(const gt_params *p, const gt_call *c)
{
    return p->v[P_API] == GT_CUBLAS_API_SGEMM || (c->align_a >= 16 && c->align_b >= 16 && c->align_c >= 16);
}

const gt_family gt_family_cublas = {
    .name = "cublas",
    .batched = 1,
    .doc = "the vendor's SGEMM (pure FP32): cublasSgemm's choice, cuBLASLt's heuristic algorithms and the fastest "
           "of cuBLASLt's other configurations in a screen on the GPU, per shape",
    .build = GT_BUILD_NONE,
    .backend = "cublas",
    .vendor = 1,
    .space = GT_SPACE_DEVICE,
    .math = GT_MATH_FP32,
    .reference = GT_REF_CUBLAS_FP32,
    .nparams = NP,
    .params = {{"API", "0: cublasSgemm as cuBLAS chooses; 1: cuBLASLt with the algorithm below", 0, {0}},
               {"ALGO", "cuBLASLt algorithm id (CUBLASLT_ALGO_CONFIG_ID)", 0, {0}},
               {"TILE", "tile id (cublasLtMatmulTile_t)", 0, {0}},
               {"SPLITK", "K splits", 0, {0}},
               {"RED", "split-K reduction scheme (cublasLtReductionScheme_t)", 0, {0}},
               {"SWIZZLE", "CTA swizzling", 0, {0}},
               {"CUSTOM", "the algorithm's custom option", 0, {0}},
               {"STAGES", "stages id (cublasLtMatmulStages_t)", 0, {0}},
               {"INNER", "inner shape id", 0, {0}},
               {"CLUSTER", "thread-block cluster shape id", 0, {0}},
               {"WSKB", "workspace the algorithm was offered with, KiB", 0, {0}},
               {"VER", "cuBLASLt version it was found with (cublasLtGetVersion)", 0, {0}}},
    .legal = legal,
    .launch = launch,
    .applicable = applicable,
};
