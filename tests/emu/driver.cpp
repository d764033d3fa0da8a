// Runs the emulated multistage template (built by tests/emu/run.sh with one config and layout) on odd shapes,
// padded leading dimensions, misaligned pointers and NaN-filled C, against a double-precision reference.
#include "shim.h"
#include <thread>
#include "ms_emu.cu"
extern "C" {
#include "family.h"
const char *gt_template_text(const char *n) { (void)n; return 0; }
extern const gt_family gt_family_multistage;
}
static float frand(unsigned &s) { s = s * 1664525u + 1013904223u; return ((s >> 8) & 0xffff) / 32768.0f - 1.0f; }

// One test case: shape, layout from the compile, ld padding, pointer offsets (floats) to break 16 B alignment.
static int run_case(int M, int N, int K, int pad, int off, float alpha, float beta)
{
    const int lda = (GT_TA ? M : K) + pad, ldb = (GT_TB ? K : N) + pad, ldc = N + pad;
    const size_t na = (size_t)(GT_TA ? K : M) * lda, nb = (size_t)(GT_TB ? N : K) * ldb, nc = (size_t)M * ldc;
    // exact-size allocations (plus the offset) so ASan catches any access outside an operand
    float *ab = (float *)malloc((na + off) * 4), *bb = (float *)malloc((nb + off) * 4), *cb = (float *)malloc((nc + off) * 4);
    float *A = ab + off, *B = bb + off, *C = cb + off;
    unsigned seed = 12345u + M * 7 + N * 13 + K;
    for (size_t i = 0; i < na; ++i) A[i] = frand(seed);
    for (size_t i = 0; i < nb; ++i) B[i] = frand(seed);
    for (size_t i = 0; i < nc; ++i) C[i] = beta == 0.0f ? NAN : frand(seed);
    std::vector<float> C0(C, C + nc);
    gt_params p = {{BM, BN, BK, WM, WN, WNITER, TM, TN, STAGES, MINB, RASTER, SPLITK}};
    char why[200];
    gt_limits lim; gt_limits_for_arch("sm_90", &lim);
    static int said; if (!said++ && !gt_family_multistage.legal(&p, &lim, why, sizeof why)) printf("  (not legal: %s)\n", why);
    gt_shape sh = {M, N, K, GT_TA, GT_TB};
    gt_launch L; gt_family_multistage.launch(&p, &sh, &L);
    assert(L.block[0] == NT && L.block[1] == 1 && L.grid[1] == 1);
    float *ws = L.ws_bytes ? (float *)malloc(L.ws_bytes) : nullptr;
    if (ws) for (size_t i = 0; i < L.ws_bytes / 4; ++i) ws[i] = NAN;
    emu_globals = {{(char *)A, (char *)(A + na)}, {(char *)B, (char *)(B + nb)}};
    blockDim = {L.block[0], 1, 1}; gridDim = {L.grid[0], L.grid[1], L.grid[2]};
    emu_smem_bytes = L.smem;
    for (unsigned z = 0; z < L.grid[2]; ++z)
        for (unsigned x = 0; x < L.grid[0]; ++x) {
            emu_smem = (float4 *)aligned_alloc(16, (L.smem + 15) / 16 * 16);
            for (size_t i = 0; i < L.smem / 4; ++i) ((float *)emu_smem)[i] = NAN;
            std::barrier<> bar(L.block[0]); emu_bar = &bar;
            std::vector<std::thread> th;
            for (unsigned t = 0; t < L.block[0]; ++t)
                th.emplace_back([=] { threadIdx = {t, 0, 0}; blockIdx = {x, 0, z}; emu_cur.clear(); emu_groups.clear();
                    gt_gemm(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, ws);
                    if (!emu_cur.empty()) { fprintf(stderr, "uncommitted cp.async at exit\n"); abort(); }
                    for (auto &g : emu_groups) if (!g.empty()) { fprintf(stderr, "unwaited cp.async at exit\n"); abort(); } });
            for (auto &t : th) t.join();
            free(emu_smem);
        }
#if SPLITK > 1
    for (unsigned x = 0; x < L.rgrid[0]; ++x)
        for (unsigned t = 0; t < L.rblock[0]; ++t) { blockIdx = {x, 0, 0}; threadIdx = {t, 0, 0}; blockDim = {L.rblock[0], 1, 1};
            gt_splitk_reduce(M, N, alpha, ws, beta, C, ldc); }
#endif
    int bad = 0;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N + pad; ++j) {
            float got = C[(size_t)i * ldc + j];
            if (j >= N) { // padding columns must be untouched
                if (memcmp(&got, &C0[(size_t)i * ldc + j], 4)) { if (bad++ < 5) printf("  pad (%d,%d) touched\n", i, j); }
                continue;
            }
            double ref = 0, mag = 0;
            for (int k = 0; k < K; ++k) {
                double a = GT_TA ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k];
                double b = GT_TB ? B[(size_t)j * ldb + k] : B[(size_t)k * ldb + j];
                ref += a * b; mag += fabs(a * b);
            }
            ref *= alpha; mag *= fabs(alpha);
            if (beta != 0.0f) { ref += beta * (double)C0[(size_t)i * ldc + j]; mag += fabs(beta * C0[(size_t)i * ldc + j]); }
            if (!(fabs(got - ref) <= 1e-5 * mag + 1e-6)) { if (bad++ < 5) printf("  C(%d,%d)=%g want %g\n", i, j, got, ref); }
        }
    printf("%s %dx%dx%d pad=%d off=%d alpha=%g beta=%g grid=%u,%u smem=%u: %s\n", gt_layout_name(GT_TA, GT_TB), M, N, K,
           pad, off, alpha, beta, L.grid[0], L.grid[2], L.smem, bad ? "FAIL" : "ok");
    free(ab); free(bb); free(cb); free(ws);
    return bad != 0;
}

int main(int argc, char **argv)
{
    emu_eager = getenv("EMU_EAGER") && *getenv("EMU_EAGER");
    int fails = 0;
    if (argc > 1) { // single case: M N K pad off alpha beta
        return run_case(atoi(argv[1]), atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), atof(argv[6]), atof(argv[7]));
    }
    fails += run_case(1, 1, 1, 0, 0, 1.5f, 0.0f);
    fails += run_case(7, 13, 5, 0, 0, 1.5f, 0.5f);
    fails += run_case(7, 13, 5, 3, 1, 1.5f, 0.0f);
    fails += run_case(127, 129, 131, 0, 0, 1.5f, 0.5f);
    fails += run_case(127, 129, 131, 1, 1, 1.0f, 0.0f);
    fails += run_case(260, 136, 17, 4, 0, 1.5f, 0.0f);
    fails += run_case(130, 300, 40, 0, 2, -1.0f, 0.5f);
    fails += run_case(64, 64, 1000, 0, 0, 1.5f, 0.5f);
    fails += run_case(300, 260, 333, 2, 0, 1.5f, 0.0f);
    fails += run_case(1100, 300, 24, 0, 0, 1.5f, 0.5f);
    fails += run_case(33, 70, 9, 1, 3, 2.0f, 0.0f);
    // Interior blocks with aligned ld: the steady (unpredicated, branch-free) tile loop, K whole and ragged.
    fails += run_case(512, 384, 200, 0, 0, 1.5f, 0.5f);
    fails += run_case(520, 260, 203, 4, 0, 1.5f, 0.0f);
    printf("%d failed\n", fails);
    return fails != 0;
}
