// Study (the vendor's candidates): how much faster than its heuristic's best is the best of cuBLASLt's whole
// FP32 configuration space? The family cublas (kernels/cublas.c, src/lib/backend_cublas.c) offers cublasSgemm and
// the first 15 algorithms of cuBLASLt's heuristic. Here, for each shape: every algorithm id cuBLASLt has for FP32
// (cublasLtMatmulAlgoGetIds, CUBLAS_COMPUTE_32F: never TF32), and for each every tile, stages, split-K (1, 2, 3,
// 4, 6, 8, 12, 16, with each reduction scheme it has), CTA swizzle and custom option it lists, that
// cublasLtMatmulAlgoCheck accepts with at most 32 MiB of workspace. Each is screened warm (the mean of 3 calls
// after one), then the 8 fastest, the heuristic's 16 and cublasSgemm (pedantic) are timed cold (median of 20,
// cold_timer.h), and the best of each group printed with its distance from cublasSgemm's result. Column-major, as
// cuBLAS: C (m x n) = op(A) op(B). On the GPU machine:
//   nvcc -O3 -arch=sm_90 -std=c++17 -o build-perf/lt_space tests/perf/lt_space.cu -lcublasLt -lcublas
//   build-perf/lt_space [SHAPE_INDEX]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cublasLt.h>
#include <cublas_v2.h>
#include <vector>

#include "cold_timer.h"

struct lt_shape {
    int m, n, k;
    bool ta;
    const char *name;
};

struct config {
    cublasLtMatmulAlgo_t algo;
    int id, tile, stages, splitk, red, swz, opt;
    size_t ws;
    float warm_us = 0, cold_us = 0;
    bool heuristic = false;
};

struct problem {
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t desc;
    cublasLtMatrixLayout_t la, lb, lc;
    const float *A, *B;
    float *C, *ws, *flush;
};

static bool run(problem &p, const config &c)
{
    const float one = 1.0f, zero = 0.0f;
    return cublasLtMatmul(p.lt, p.desc, &one, p.A, p.la, p.B, p.lb, &zero, p.C, p.lc, p.C, p.lc, &c.algo, p.ws, c.ws,
                          0) == CUBLAS_STATUS_SUCCESS;
}

// The mean µs of 3 back-to-back calls after one (a warm screen), or -1 if the call fails.
static float warm(problem &p, const config &c)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    if (!run(p, c)) return -1.0f;
    CK(cudaEventRecord(a));
    for (int i = 0; i < 3; ++i) run(p, c);
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    return cudaGetLastError() == cudaSuccess ? ms * 1000.0f / 3 : -1.0f;
}

template <class T> static std::vector<T> cap_list(const cublasLtMatmulAlgo_t &algo, cublasLtMatmulAlgoCapAttributes_t at)
{
    size_t bytes = 0;
    std::vector<T> v;
    if (cublasLtMatmulAlgoCapGetAttribute(&algo, at, nullptr, 0, &bytes) != CUBLAS_STATUS_SUCCESS || !bytes) return v;
    v.resize(bytes / sizeof(T));
    CB(cublasLtMatmulAlgoCapGetAttribute(&algo, at, v.data(), bytes, &bytes));
    return v;
}

template <class T> static T cap(const cublasLtMatmulAlgo_t &algo, cublasLtMatmulAlgoCapAttributes_t at)
{
    T v = 0;
    size_t bytes = 0;
    cublasLtMatmulAlgoCapGetAttribute(&algo, at, &v, sizeof v, &bytes);
    return v;
}

template <class T> static void set(cublasLtMatmulAlgo_t &algo, cublasLtMatmulAlgoConfigAttributes_t at, T v)
{
    CB(cublasLtMatmulAlgoConfigSetAttribute(&algo, at, &v, sizeof v));
}

template <class T> static T get(const cublasLtMatmulAlgo_t &algo, cublasLtMatmulAlgoConfigAttributes_t at)
{
    T v = 0;
    size_t bytes = 0;
    cublasLtMatmulAlgoConfigGetAttribute(&algo, at, &v, sizeof v, &bytes);
    return v;
}

static bool PRUNE = true; // skip a tile and stages pair whose plain configuration (no split, swizzle, option) fails
static long checks;       // cublasLtMatmulAlgoCheck calls

// Every configuration of algorithm id that cublasLtMatmulAlgoCheck accepts within 32 MiB of workspace.
static void enumerate(problem &p, int id, std::vector<config> &out)
{
    cublasLtMatmulAlgo_t base;
    if (cublasLtMatmulAlgoInit(p.lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, id,
                               &base) != CUBLAS_STATUS_SUCCESS)
        return;
    auto tiles = cap_list<uint32_t>(base, CUBLASLT_ALGO_CAP_TILE_IDS);
    auto stages = cap_list<uint32_t>(base, CUBLASLT_ALGO_CAP_STAGES_IDS);
    if (tiles.empty()) tiles.push_back(CUBLASLT_MATMUL_TILE_UNDEFINED);
    if (stages.empty()) stages.push_back(CUBLASLT_MATMUL_STAGES_UNDEFINED);
    const int splitk = cap<int32_t>(base, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT);
    const uint32_t redmask = cap<uint32_t>(base, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK);
    const uint32_t swz = cap<uint32_t>(base, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT);
    const int optmax = cap<int32_t>(base, CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX);
    // A configuration with the given attributes, if cublasLtMatmulAlgoCheck accepts it within 32 MiB.
    auto check = [&](uint32_t tile, uint32_t st, int sk, uint32_t red, uint32_t sw, int opt, config &c) {
        c.algo = base;
        set<uint32_t>(c.algo, CUBLASLT_ALGO_CONFIG_TILE_ID, tile);
        set<uint32_t>(c.algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, st);
        set<int32_t>(c.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, sk);
        set<uint32_t>(c.algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, red);
        set<uint32_t>(c.algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, sw);
        set<uint32_t>(c.algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, (uint32_t)opt);
        cublasLtMatmulHeuristicResult_t r;
        ++checks;
        if (cublasLtMatmulAlgoCheck(p.lt, p.desc, p.la, p.lb, p.lc, p.lc, &c.algo, &r) != CUBLAS_STATUS_SUCCESS ||
            r.workspaceSize > (32u << 20))
            return false;
        c.id = id, c.tile = (int)tile, c.stages = (int)st, c.splitk = sk, c.red = (int)red;
        c.swz = (int)sw, c.opt = opt, c.ws = r.workspaceSize;
        return true;
    };
    for (uint32_t tile : tiles)
        for (uint32_t st : stages) {
            config c;
            if (PRUNE && !check(tile, st, 1, 0, 0, 0, c)) continue; // the pair itself does not run this shape
            for (int sk : {1, 2, 3, 4, 6, 8, 12, 16}) {
                if (sk > 1 && !splitk) continue;
                for (uint32_t red = 0; red <= 4; red = red ? red * 2 : 1) {
                    if ((sk == 1) != (red == 0) || (red && !(redmask & red))) continue;
                    for (uint32_t sw = 0; sw <= swz; ++sw)
                        for (int opt = 0; opt <= optmax; ++opt)
                            if (check(tile, st, sk, red, sw, opt, c)) out.push_back(c);
                }
            }
        }
}

// The heuristic's list (up to 16), as the family cublas asks for it.
static void heuristic(problem &p, std::vector<config> &out)
{
    cublasLtMatmulPreference_t pref;
    CB(cublasLtMatmulPreferenceCreate(&pref));
    const size_t ws = 32u << 20;
    CB(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    cublasLtMatmulHeuristicResult_t res[16];
    int got = 0;
    CB(cublasLtMatmulAlgoGetHeuristic(p.lt, p.desc, p.la, p.lb, p.lc, p.lc, pref, 16, res, &got));
    for (int i = 0; i < got; ++i) {
        if (res[i].state != CUBLAS_STATUS_SUCCESS) continue;
        config c;
        c.algo = res[i].algo, c.heuristic = true, c.ws = res[i].workspaceSize;
        c.id = get<int32_t>(c.algo, CUBLASLT_ALGO_CONFIG_ID);
        c.tile = (int)get<uint32_t>(c.algo, CUBLASLT_ALGO_CONFIG_TILE_ID);
        c.stages = (int)get<uint32_t>(c.algo, CUBLASLT_ALGO_CONFIG_STAGES_ID);
        c.splitk = get<int32_t>(c.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM);
        c.red = (int)get<uint32_t>(c.algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME);
        c.swz = (int)get<uint32_t>(c.algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING);
        c.opt = (int)get<uint32_t>(c.algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION);
        out.push_back(c);
    }
    cublasLtMatmulPreferenceDestroy(pref);
}

// The largest |C - R| over the largest |R| (inf on NaN).
static double rel_diff(const float *c_dev, const float *r_dev, size_t n)
{
    std::vector<float> c(n), r(n);
    CK(cudaMemcpy(c.data(), c_dev, n * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(r.data(), r_dev, n * 4, cudaMemcpyDeviceToHost));
    double e = 0, m = 0;
    for (size_t i = 0; i < n; ++i) {
        if (!std::isfinite(c[i])) return INFINITY;
        e = std::max(e, (double)std::fabs(c[i] - r[i])), m = std::max(m, (double)std::fabs(r[i]));
    }
    return e / m;
}

static void print(const char *what, const config &c, float sgemm_us, double diff)
{
    printf("  %-22s algo %3d tile %3d stages %3d split-K %2d red %d swizzle %d option %d ws %6zu KiB  %8.1f us  x "
           "cublasSgemm %.3f  diff %.1e\n",
           what, c.id, c.tile, c.stages, c.splitk, c.red, c.swz, c.opt, c.ws >> 10, c.cold_us, sgemm_us / c.cold_us,
           diff);
}

// probe: one configuration of shape 2 (777x1531x2049) timed cold with workspaces of other sizes and places, beside
// cublasSgemm, then interleaved with it run by run (as gemmtune bench times): `lt_space probe ALGO TILE STAGES SPLITK
// RED SWIZZLE OPTION`.
static int probe(problem &p, cublasHandle_t h, char **argv, float *R)
{
    const int m = 1531, n = 777, k = 2049;
    cublasLtMatmulAlgo_t base;
    CB(cublasLtMatmulAlgoInit(p.lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                              atoi(argv[2]), &base));
    config c;
    c.algo = base;
    set<uint32_t>(c.algo, CUBLASLT_ALGO_CONFIG_TILE_ID, (uint32_t)atoi(argv[3]));
    set<uint32_t>(c.algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, (uint32_t)atoi(argv[4]));
    set<int32_t>(c.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, atoi(argv[5]));
    set<uint32_t>(c.algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, (uint32_t)atoi(argv[6]));
    set<uint32_t>(c.algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, (uint32_t)atoi(argv[7]));
    set<uint32_t>(c.algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, (uint32_t)atoi(argv[8]));
    CB(cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CB(cublasLtMatrixLayoutCreate(&p.la, CUDA_R_32F, m, k, m));
    CB(cublasLtMatrixLayoutCreate(&p.lb, CUDA_R_32F, k, n, k));
    CB(cublasLtMatrixLayoutCreate(&p.lc, CUDA_R_32F, m, n, m));
    cublasLtMatmulHeuristicResult_t r;
    CB(cublasLtMatmulAlgoCheck(p.lt, p.desc, p.la, p.lb, p.lc, p.lc, &c.algo, &r));
    const float one = 1.0f, zero = 0.0f;
    float *big;
    CK(cudaMalloc(&big, 64u << 20));
    const float sg = timed([&] { CB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, p.A, m, p.B, k, &zero, R, m)); },
                           p.flush);
    printf("probe: cublasSgemm %.1f us; configuration needs %zu bytes\n", sg, r.workspaceSize);
    for (int round = 0; round < 2; ++round)
        for (int place = 0; place < 5; ++place) {
            void *ws = place == 0 ? (void *)p.ws : (char *)big + (place == 1 ? 0 : place == 2 ? 256 : place == 3 ? (16u << 20) : 4096);
            size_t size = place == 0 ? (32u << 20) : r.workspaceSize;
            float *A = (float *)p.A + (place == 4 ? 4 : 0);
            c.ws = size;
            const float us = timed([&] {
                cublasLtMatmul(p.lt, p.desc, &one, A, p.la, p.B, p.lb, &zero, p.C, p.lc, p.C, p.lc, &c.algo, ws, size, 0);
            }, p.flush);
            printf("  ws %s: %.1f us (x cublasSgemm %.3f)\n",
                   place == 0 ? "32 MiB, own buffer" : place == 1 ? "exact, at a fresh buffer" : place == 2 ? "exact, +256 B"
                   : place == 3 ? "exact, +16 MiB" : "exact, fresh, A 16 bytes off", us, sg / us);
        }
    // interleaved with cublasSgemm run by run, as gemmtune bench times them: each after a flush, alternating
    std::vector<float> a_us, b_us;
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int r = 0; r < 40; ++r)
        for (int side = 0; side < 2; ++side) {
            CK(cudaMemset(p.flush, r, 256u << 20));
            CK(cudaEventRecord(e0));
            if (side) CB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, p.A, m, p.B, k, &zero, R, m));
            else cublasLtMatmul(p.lt, p.desc, &one, p.A, p.la, p.B, p.lb, &zero, p.C, p.lc, p.C, p.lc, &c.algo, p.ws,
                                32u << 20, 0);
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            (side ? b_us : a_us).push_back(ms * 1000.0f);
        }
    std::sort(a_us.begin(), a_us.end());
    std::sort(b_us.begin(), b_us.end());
    printf("  interleaved with cublasSgemm: %.1f us against %.1f (x %.3f)\n", a_us[20], b_us[20], b_us[20] / a_us[20]);
    return 0;
}

int main(int argc, char **argv)
{
    const lt_shape shapes[] = {
        {1024, 1024, 1024, false, "1024^3 nn"},       {2048, 2048, 2048, false, "2048^3 nn"},
        {1531, 777, 2049, false, "777x1531x2049"},    {1023, 1031, 1021, true, "1031x1023x1021 t"},
        {5000, 3000, 700, false, "3000x5000x700"},    {8191, 33, 4097, false, "33x8191x4097"},
        {96, 10240, 10240, false, "10240x96x10240"},  {4096, 4096, 4096, false, "4096^3 nn"},
    };
    const int only = argc > 1 ? atoi(argv[1]) : -1; // "probe" reads as 0: shape 0 alone, unless probing
    const size_t maxe = (size_t)10240 * 10240;
    float *A, *B, *C, *R, *ws, *flush;
    CK(cudaMalloc(&A, maxe * 4));
    CK(cudaMalloc(&B, maxe * 4));
    CK(cudaMalloc(&C, (size_t)8192 * 8192 * 4));
    CK(cudaMalloc(&R, (size_t)8192 * 8192 * 4));
    CK(cudaMalloc(&ws, 32u << 20));
    CK(cudaMalloc(&flush, 256u << 20));
    {
        std::vector<float> h(maxe);
        unsigned x = 12345;
        for (auto &v : h) x = x * 1664525u + 1013904223u, v = (float)((x >> 8) & 0xffff) / 65536.0f - 0.5f;
        CK(cudaMemcpy(A, h.data(), maxe * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(B, h.data() + 777, (maxe - 777) * 4, cudaMemcpyHostToDevice));
    }
    cublasHandle_t h;
    CB(cublasCreate(&h));
    CB(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH));
    problem p;
    p.A = A, p.B = B, p.C = C, p.ws = ws, p.flush = flush;
    CB(cublasLtCreate(&p.lt));
    int ids[512], nids = 0;
    CB(cublasLtMatmulAlgoGetIds(p.lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                                512, ids, &nids));
    printf("cuBLASLt %zu: %d FP32 algorithm ids\n", cublasLtGetVersion(), nids);
    if (argc > 8 && !strcmp(argv[1], "probe")) return probe(p, h, argv, R);
    for (int si = 0; si < (int)(sizeof shapes / sizeof shapes[0]); ++si) {
        if (only >= 0 && si != only) continue;
        const lt_shape &s = shapes[si];
        const cublasOperation_t opa = s.ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = CUBLAS_OP_N;
        const int lda = s.ta ? s.k : s.m;
        CB(cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
        CB(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa));
        CB(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb));
        CB(cublasLtMatrixLayoutCreate(&p.la, CUDA_R_32F, s.ta ? s.k : s.m, s.ta ? s.m : s.k, lda));
        CB(cublasLtMatrixLayoutCreate(&p.lb, CUDA_R_32F, s.k, s.n, s.k));
        CB(cublasLtMatrixLayoutCreate(&p.lc, CUDA_R_32F, s.m, s.n, s.m));
        const float one = 1.0f, zero = 0.0f;
        auto sgemm = [&] { CB(cublasSgemm(h, opa, opb, s.m, s.n, s.k, &one, A, lda, B, s.k, &zero, R, s.m)); };
        sgemm();
        CK(cudaDeviceSynchronize());
        const float sgemm_us = timed(sgemm, flush);
        std::vector<config> all, heur;
        for (int pass = 0; pass < 2; ++pass) { // unpruned, then pruned: what the pruning loses, and saves
            PRUNE = pass == 1, checks = 0, all.clear();
            const auto t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < nids; ++i) enumerate(p, ids[i], all);
            const double s_enum = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            printf("%s: %s enumeration: %ld checks, %zu valid, %.2f s\n", s.name, PRUNE ? "pruned" : "full", checks,
                   all.size(), s_enum);
        }
        heuristic(p, heur);
        const size_t valid = all.size();
        cudaEvent_t t0, t1;
        CK(cudaEventCreate(&t0));
        CK(cudaEventCreate(&t1));
        CK(cudaEventRecord(t0));
        for (auto &c : all) c.warm_us = warm(p, c);
        CK(cudaEventRecord(t1));
        CK(cudaEventSynchronize(t1));
        float screen_ms;
        CK(cudaEventElapsedTime(&screen_ms, t0, t1));
        all.erase(std::remove_if(all.begin(), all.end(), [](const config &c) { return c.warm_us <= 0; }), all.end());
        std::sort(all.begin(), all.end(), [](const config &a, const config &b) { return a.warm_us < b.warm_us; });
        if (all.size() > 8) all.resize(8);
        config best_all, best_heur;
        best_all.cold_us = best_heur.cold_us = 1e30f;
        double diff_all = 0, diff_heur = 0;
        for (auto *group : {&all, &heur})
            for (auto &c : *group) {
                CK(cudaMemset(C, 0xff, (size_t)s.m * s.n * 4));
                if (!run(p, c)) continue;
                CK(cudaDeviceSynchronize());
                const double d = rel_diff(C, R, (size_t)s.m * s.n);
                c.cold_us = timed([&] { run(p, c); }, flush);
                config &best = c.heuristic ? best_heur : best_all;
                if (d < 1e-5 && c.cold_us < best.cold_us) best = c, (c.heuristic ? diff_heur : diff_all) = d;
            }
        printf("%s: cublasSgemm %.1f us; %zu configurations valid, screened in %.1f s; heuristic %zu\n", s.name,
               sgemm_us, valid, screen_ms / 1000.0f, heur.size());
        print("heuristic's best", best_heur, sgemm_us, diff_heur);
        print("whole space's best", best_all, sgemm_us, diff_all);
        fflush(stdout);
        cublasLtMatrixLayoutDestroy(p.la), cublasLtMatrixLayoutDestroy(p.lb), cublasLtMatrixLayoutDestroy(p.lc);
        cublasLtMatmulDescDestroy(p.desc);
    }
    return 0;
}
