// The one CPU emulator driver: runs one template (TEMPLATE, built by tests/emu/run.sh for one candidate
// GT_EMU_FAMILY / GT_EMU_PARAMS and one layout) on odd shapes, padded and rounded leading dimensions, misaligned
// operands, alpha and beta 0 (NaN C) / 0.5, with the launch geometry of the family's own launch(), and checks C
// with the test toolkit's validator (tests/toolkit.h: the product's rule). Operands are allocated to their exact
// extent, so ASan catches any access outside one. Prints one line per case; exits non-zero on any failure.
#include "emu.h"
#include "toolkit.h"
#include TEMPLATE

namespace {

// SMs the launch is sized for: a persistent (stream-K) grid of a few blocks, so that tiles are cut between blocks.
constexpr int EMU_SMS = 3;
const gt_family *fam;
gt_params prm;

// Leading dimension for x elements: x + pad, or with pad < 0 rounded up to a multiple of 4 (plus 4 for -2).
int ld_for(int x, int pad) { return pad >= 0 ? x + pad : (x + 3) / 4 * 4 + (pad == -2 ? 4 : 0); }

struct Case {
    int m, n, k, pad, off; // pad as in ld_for; off: floats added to every operand's address (breaks alignment)
    float alpha, beta;
};

// Every thread of the block runs fn for each block in turn; shared memory is poisoned before each block.
template <class F> void run_grid(const unsigned grid[3], const unsigned block[3], size_t smem, F fn)
{
    gridDim = {grid[0], grid[1], grid[2]};
    blockDim = {block[0], block[1], block[2]};
    const unsigned nt = block[0] * block[1] * block[2];
    std::vector<float4> dyn(smem / 16 + 1);
    emu_smem = dyn.data(), emu_smem_bytes = smem;
    std::barrier<> bar(nt);
    emu_bar = &bar;
    std::vector<std::thread> th;
    for (unsigned t = 0; t < nt; ++t)
        th.emplace_back([&, t] {
            threadIdx = {t % block[0], t / block[0] % block[1], t / (block[0] * block[1])};
            for (unsigned z = 0; z < grid[2]; ++z)
                for (unsigned y = 0; y < grid[1]; ++y)
                    for (unsigned x = 0; x < grid[0]; ++x) {
                        if (t == 0) std::fill((float *)dyn.data(), (float *)dyn.data() + smem / 4, NAN);
                        bar.arrive_and_wait();
                        blockIdx = {x, y, z};
                        fn();
                        emu_block_done();
                        bar.arrive_and_wait();
                    }
        });
    for (auto &x : th) x.join();
}

// gt_splitk_reduce has no barrier: run serially.
void run_reduce(const gt_launch &L, const gt_problem &p, float *ws, float *C)
{
#if SPLITK > 1 || GT_SPLITK_AT_LAUNCH
    blockDim = {L.rblock[0], 1, 1};
    for (unsigned x = 0; x < L.rgrid[0]; ++x)
        for (unsigned t = 0; t < L.rblock[0]; ++t) {
            blockIdx = {x, 0, 0}, threadIdx = {t, 0, 0};
            gt_splitk_reduce(p.m, p.n, p.alpha, ws, p.beta, C, p.ldc);
        }
#else
    (void)L, (void)p, (void)ws, (void)C;
#endif
}

// The family's launch for this shape, with the split-K sizes checked. Returns 0 when it is usable.
int geometry(const gt_problem &p, gt_launch *L)
{
    gt_shape s = {p.m, p.n, p.k, p.ta, p.tb};
    fam->launch(&prm, &s, EMU_SMS, L);
    const size_t mn = (size_t)p.m * p.n;
#if !GT_SPLITK_AT_LAUNCH // a template that reads the split from the launch has no SPLITK
    if (L->splitk != SPLITK) return printf("launch: splitk %d, template SPLITK %d\n", L->splitk, SPLITK), -1;
#endif
#if GT_SPLITK_AT_LAUNCH
    const size_t per = 4; // skinny's own gt_splitk_reduce: four elements a thread
#else
    const size_t per = 1;
#endif
    if (L->splitk > 1 && (L->ws_bytes < (size_t)L->splitk * mn * 4 || (size_t)L->rgrid[0] * L->rblock[0] * per < mn))
        return printf("launch: split-K workspace %zu B or reduce grid too small\n", L->ws_bytes), -1;
    return 0;
}

// Runs one case; returns 1 when it passes.
int run_case(const Case &c)
{
    gt_problem p = gt_problem_make(0, GT_TA, GT_TB, c.m, c.n, c.k, 0, c.alpha, c.beta);
    p.lda = ld_for(p.lda, c.pad), p.ldb = ld_for(p.ldb, c.pad), p.ldc = ld_for(p.ldc, c.pad);
    gt_launch L;
    gt_call call = {};
    call.shape.m = p.m, call.shape.n = p.n, call.shape.k = p.k, call.shape.ta = p.ta, call.shape.tb = p.tb;
    call.lda = p.lda, call.ldb = p.ldb, call.ldc = p.ldc;
    if (fam->applicable && !fam->applicable(&prm, &call))
        return printf("%dx%dx%d: not applicable to this candidate, skipped: ok\n", p.m, p.n, p.k), 1;
    if (geometry(p, &L)) return 0;
    const size_t na = gt_problem_elems(&p, 'A'), nb = gt_problem_elems(&p, 'B'), nc = gt_problem_elems(&p, 'C');
    std::vector<float> ab(na + c.off), bb(nb + c.off), cb(nc + c.off), c0(nc); // exact extents (plus offset)
    float *A = ab.data() + c.off, *B = bb.data() + c.off, *C = cb.data() + c.off;
    std::vector<float> ws(L.ws_bytes / 4, NAN);
    std::fill(ws.begin(), ws.begin() + L.ws_zero / 4, 0.0f); // as gt_kernel_launch does
    unsigned seed = 12345u + c.m * 7u + c.n * 13u + c.k;
    gt_problem_fill(&p, &seed, A, B, c0.data());
    std::copy(c0.begin(), c0.end(), C);
    emu_globals = {{(char *)A, (char *)(A + na)}, {(char *)B, (char *)(B + nb)}};
    float *W = ws.empty() ? nullptr : ws.data();
    run_grid(L.grid, L.block, L.smem,
             [&] { gt_gemm(p.m, p.n, p.k, p.alpha, A, p.lda, B, p.ldb, p.beta, C, p.ldc, W); });
    run_reduce(L, p, W, C);
    gt_verdict v;
    char text[512];
    const int ok = gt_validate(&p, A, B, c0.data(), C, nullptr, &v);
    gt_verdict_text(&p, &v, text, sizeof text);
    printf("%s off %d grid %u,%u,%u smem %u: %s\n", text, c.off, L.grid[0], L.grid[1], L.grid[2], L.smem,
           ok ? "ok" : "FAIL");
    return ok;
}

// Both emulators' cases: small and odd shapes with every ld variant (run.py), and multistage's edge, split and
// steady-loop shapes (the old driver): K whole and ragged, interior blocks with aligned ld; skinny shapes, small
// M or N with K long enough to split; one to sixteen rows against a K of whole and ragged chunks, with and without
// aligned ld (gemv).
const Case cases[] = {
    {1, 1, 1, 0, 0, 1.5f, 0.0f},       {1, 1, 1, 3, 1, 1.5f, 0.5f},       {1, 1, 1, -1, 2, 1.5f, 0.0f},
    {7, 13, 5, 0, 0, 1.5f, 0.5f},      {7, 13, 5, 3, 1, 1.5f, 0.0f},      {7, 13, 5, 4, 0, 1.5f, 0.5f},
    {7, 13, 5, -1, 0, 1.5f, 0.5f},     {7, 13, 5, -2, 0, 1.5f, 0.0f},     {7, 13, 5, -1, 2, 1.5f, 0.0f},
    {33, 70, 9, 0, 0, 1.5f, 0.0f},     {33, 70, 9, 1, 3, 2.0f, 0.0f},     {33, 70, 9, 4, 0, 1.5f, 0.5f},
    {33, 70, 9, -1, 0, 1.5f, 0.5f},    {33, 70, 9, -2, 2, 1.5f, 0.0f},    {127, 129, 131, 0, 0, 1.5f, 0.5f},
    {127, 129, 131, 1, 1, 1.0f, 0.0f}, {127, 129, 131, 3, 1, 1.5f, 0.5f}, {127, 129, 131, -1, 0, 1.5f, 0.5f},
    {127, 129, 131, -2, 2, 1.5f, 0.0f}, {260, 136, 17, 4, 0, 1.5f, 0.0f}, {130, 300, 40, 0, 2, -1.0f, 0.5f},
    {300, 260, 20, -1, 0, 1.5f, 0.5f}, {64, 64, 1000, 0, 0, 1.5f, 0.5f},  {300, 260, 333, 2, 0, 1.5f, 0.0f},
    {1100, 300, 24, 0, 0, 1.5f, 0.5f}, {512, 384, 200, 0, 0, 1.5f, 0.5f}, {520, 260, 203, 4, 0, 1.5f, 0.0f},
    {300, 33, 257, -1, 0, 1.5f, 0.5f}, {300, 33, 257, 1, 1, 1.5f, 0.0f}, {1025, 7, 400, 0, 0, 1.5f, 0.0f},
    {45, 303, 475, -1, 0, 1.5f, 0.5f},  {1, 260, 1030, 0, 0, 1.5f, 0.5f},  {2, 300, 1100, -1, 0, 1.5f, 0.0f},
    {4, 130, 1024, 0, 1, 1.5f, 0.0f},  {300, 7, 1100, 1, 0, 1.5f, 0.5f},  {260, 16, 600, 0, 0, 1.5f, 0.0f},
    {130, 2, 1025, 4, 0, 1.5f, 0.5f},  {4, 130, 1024, 0, 0, 1.5f, 0.5f},  {300, 8, 1024, 0, 0, 1.5f, 0.0f},
    {13, 200, 2048, 0, 0, 1.5f, 0.5f}, {300, 2, 1024, 0, 0, 1.5f, 0.0f},
};
} // namespace

// driver: every case;  driver M N K PAD OFF ALPHA BETA: that one case
int main(int argc, char **argv)
{
    emu_eager = getenv("EMU_EAGER") && *getenv("EMU_EAGER");
    char why[256];
    gt_limits lim;
    gt_limits_for_arch("sm_90", &lim);
    if (!(fam = gt_family_find(GT_EMU_FAMILY)) || gt_params_parse(fam, GT_EMU_PARAMS, &prm, why, sizeof why))
        return printf("%s %s: %s\n", GT_EMU_FAMILY, GT_EMU_PARAMS, fam ? why : "unknown family"), 2;
    if (!fam->legal(&prm, &lim, why, sizeof why)) printf("(not legal on sm_90: %s)\n", why);
    if (argc == 8)
        return !run_case({atoi(argv[1]), atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]),
                          (float)atof(argv[6]), (float)atof(argv[7])});
    const int n = (int)(sizeof cases / sizeof cases[0]);
    int fails = 0;
    for (int i = 0; i < n; ++i) fails += !run_case(cases[i]);
    printf("%d of %d cases failed\n", fails, n);
    return fails != 0;
}
