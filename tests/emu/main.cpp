// Driver for tests/emu/run.py: reads cases (geometry, shape, lds, misalignment, beta) from stdin, runs gt_gemm (and
// the split-K reduce) on the emulator and checks every C element, and that ldc padding is untouched, against doubles.
#include "emu.h"
#include TEMPLATE
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

template <class F> static void run_grid(uint3e grid, uint3e block, F f)
{
    gridDim = grid; blockDim = block;
    unsigned nt = block.x * block.y * block.z;
    std::barrier<> bar(nt);
    g_bar = &bar;
    std::vector<std::thread> th;
    for (unsigned t = 0; t < nt; ++t)
        th.emplace_back([&, t] {
            threadIdx = {t % block.x, (t / block.x) % block.y, t / (block.x * block.y)};
            for (unsigned bz = 0; bz < grid.z; ++bz)
                for (unsigned by = 0; by < grid.y; ++by)
                    for (unsigned bx = 0; bx < grid.x; ++bx) {
                        blockIdx = {bx, by, bz};
                        f();
                        bar.arrive_and_wait(); // shared memory is reused by the next block
                    }
        });
    for (auto &x : th) x.join();
}

// args: grid(3) block(3) splitk M N K lda ldb ldc misalignA misalignB misalignC beta
static int one(int *v);
int main()
{
    int v[20], fails = 0;
    for (;;) {
        for (int i = 0; i < 17; ++i) if (scanf("%d", &v[i]) != 1) return fails;
        if (one(v)) { fails++; for (int i = 0; i < 17; ++i) printf("%d ", v[i]); printf("\n"); }
    }
}
static int one(int *v)
{
    uint3e grid = {(unsigned)v[0], (unsigned)v[1], (unsigned)v[2]}, block = {(unsigned)v[3], (unsigned)v[4], (unsigned)v[5]};
    int sk = v[6], M = v[7], N = v[8], K = v[9], lda = v[10], ldb = v[11], ldc = v[12];
    int oa = v[13], ob = v[14], oc = v[15];
    float beta = v[16] ? 0.5f : 0.0f, alpha = 1.5f;
    std::mt19937 rng(M * 131 + N * 7 + K);
    std::uniform_real_distribution<float> d(-1, 1);
    int arows = GT_TA ? K : M, alen = GT_TA ? M : K, brows = GT_TB ? N : K, blen = GT_TB ? K : N;
    size_t asz = (size_t)(arows - 1) * lda + alen, bsz = (size_t)(brows - 1) * ldb + blen, csz = (size_t)(M - 1) * ldc + N;
    float *Ab = (float *)malloc((asz + oa) * 4), *Bb = (float *)malloc((bsz + ob) * 4), *Cb = (float *)malloc((csz + oc) * 4);
    float *A = Ab + oa, *B = Bb + ob, *C = Cb + oc;
    for (size_t i = 0; i < asz; ++i) A[i] = d(rng);
    for (size_t i = 0; i < bsz; ++i) B[i] = d(rng);
    for (size_t i = 0; i < csz; ++i) C[i] = beta == 0 ? NAN : d(rng);
    std::vector<float> C0(C, C + csz);
    float *ws = sk > 1 ? (float *)aligned_alloc(16, ((size_t)sk * M * N * 4 + 15) / 16 * 16) : nullptr;
    if (ws) for (size_t i = 0; i < (size_t)sk * M * N; ++i) ws[i] = NAN;
    run_grid(grid, block, [&] { gt_gemm(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, ws); });
#if SPLITK > 1
    run_grid({(unsigned)(((size_t)M * N + 255) / 256), 1, 1}, {256, 1, 1},
             [&] { gt_splitk_reduce(M, N, alpha, ws, beta, C, ldc); });
#endif
    int bad = 0;
    for (int i = 0; i < M; ++i) {
        for (int j = 0; j < ldc && (size_t)i * ldc + j < csz; ++j) {
            size_t o = (size_t)i * ldc + j;
            if (j >= N) {
                if (memcmp(&C[o], &C0[o], 4)) { if (bad++ < 5) printf("pad touched %d %d\n", i, j); }
                continue;
            }
            double ref = 0, mag = 0;
            for (int k = 0; k < K; ++k) {
                double a = GT_TA ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k];
                double b = GT_TB ? B[(size_t)j * ldb + k] : B[(size_t)k * ldb + j];
                ref += a * b; mag += fabs(a * b);
            }
            ref = alpha * ref + (beta != 0 ? beta * C0[o] : 0);
            if (!(fabs(C[o] - ref) <= 1e-5 * (mag + 1) * 4)) { if (bad++ < 5) printf("C(%d,%d)=%g want %g\n", i, j, C[o], ref); }
        }
    }
    free(Ab); free(Bb); free(Cb); free(ws);
    return bad != 0;
}
