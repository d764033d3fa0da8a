// The CPU emulator for family ozaki (no GPU): templates/ozaki.cu's kernels, built for NMOD moduli, run by
// tests/emu/emu.h in the backend's sequence (src/lib/backend_ozaki.c: norms, scales, residues, the INT8 products,
// the rebuild) with the backend's own layout and constants (kernels/ozaki.c), the products here as exact integer
// loops over the padded sides. Odd shapes in every layout, padded leading dimensions, alpha and beta 0 over a NaN C
// and beta 0.5: each element within 1e-6 of |alpha| ||A_i|| ||B_j|| + |beta c| of the FP64 product (the method
// rounds relative to the row's and column's 2-norms; a wrong index errs by the whole), every padding row's residues
// zero, no write past C's window. Exits non-zero on any failure.
//   tests/emu/run.sh ozaki        (builds this with ASan and UBSan for 7, 8 and 9 moduli and runs each)
#include "emu.h"

#include <cstdint>

// What ozaki.cu needs beyond the gt_gemm templates' subset.
struct alignas(8) int2 {
    int x, y;
};
inline float __int_as_float(int i)
{
    float f;
    memcpy(&f, &i, 4);
    return f;
}
inline double __longlong_as_double(long long i)
{
    double d;
    memcpy(&d, &i, 8);
    return d;
}
inline int __float_as_int(float f)
{
    int i;
    memcpy(&i, &f, 4);
    return i;
}
// CUDA's byte permute: byte b of the result is byte (s >> 4b) & 7 of the 8 bytes y:x.
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s)
{
    const uint64_t v = (uint64_t)y << 32 | x;
    unsigned r = 0;
    for (int b = 0; b < 4; ++b) r |= (unsigned)(v >> 8 * (s >> 4 * b & 7) & 0xff) << 8 * b;
    return r;
}
using std::isfinite;
// A double butterfly for blocks of several warps (every thread of the block calls it together): slots by the
// thread's place in the block, so a lane's partner (lane ^ off, off < 32) is in its own warp.
inline double emu_shfl_d[1024];
inline double __shfl_xor_sync(unsigned, double v, int off)
{
    const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    emu_shfl_d[t] = v;
    emu_bar->arrive_and_wait();
    const double r = emu_shfl_d[t ^ (unsigned)off];
    emu_bar->arrive_and_wait();
    return r;
}

extern "C" {
#include "ozaki_family.h"
}

#include "ozaki.cu"

namespace {

static_assert(sizeof(gt_ozaki_consts) == sizeof(gt_oz_consts), "kernels/ozaki_family.h and templates/ozaki.cu");
static_assert(sizeof(gt_ozaki_operand) == sizeof(gt_oz_operand), "kernels/ozaki_family.h and templates/ozaki.cu");

// Every thread of the block runs fn for each block in turn (as tests/emu/driver.cpp's).
template <class F> void run_grid(unsigned gx, unsigned gy, unsigned bx, unsigned by, F fn)
{
    gridDim = {gx, gy, 1};
    blockDim = {bx, by, 1};
    const unsigned nt = bx * by;
    std::barrier<> bar(nt);
    emu_bar = &bar;
    std::vector<std::thread> th;
    for (unsigned t = 0; t < nt; ++t)
        th.emplace_back([&, t] {
            threadIdx = {t % bx, t / bx, 0};
            for (unsigned y = 0; y < gy; ++y)
                for (unsigned x = 0; x < gx; ++x) {
                    bar.arrive_and_wait();
                    blockIdx = {x, y, 0};
                    fn();
                    bar.arrive_and_wait();
                }
        });
    for (auto &x : th) x.join();
}

struct Case {
    int m, n, k, ta, tb, pad;
    float alpha, beta;
};

unsigned rng = 12345;
float uniform()
{
    rng = rng * 1664525u + 1013904223u;
    return (float)(rng >> 8) / 8388608.0f - 1.0f;
}

int run(const Case &cs)
{
    const int M = cs.m, N = cs.n, K = cs.k;
    const int lda = (cs.ta ? M : K) + cs.pad, ldb = (cs.tb ? K : N) + cs.pad, ldc = N + cs.pad;
    std::vector<float> A((size_t)(cs.ta ? K : M) * lda), B((size_t)(cs.tb ? N : K) * ldb), C((size_t)M * ldc);
    for (auto &x : A) x = std::ldexp(uniform(), (int)(rng >> 3) % 17 - 8); // values of several sizes
    for (auto &x : B) x = std::ldexp(uniform(), (int)(rng >> 3) % 17 - 8);
    for (auto &x : C) x = cs.beta == 0.0f ? NAN : uniform();
    const std::vector<float> C0 = C;
    auto a = [&](int i, int k) { return (double)(cs.ta ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k]); };
    auto b = [&](int k, int j) { return (double)(cs.tb ? B[(size_t)j * ldb + k] : B[(size_t)k * ldb + j]); };

    gt_ozaki_consts hc;
    gt_ozaki_layout L;
    const gt_shape s = {M, N, K, cs.ta, cs.tb, 1};
    if (gt_ozaki_consts_make(NMOD, &hc)) return printf("NMOD=%d: no constants\n", NMOD), 1;
    gt_ozaki_layout_make(NMOD, &s, 0, &L);
    gt_oz_consts c;
    memcpy(&c, &hc, sizeof c);
    std::vector<unsigned char> ws(L.total);
    memset(ws.data(), 0x5a, ws.size()); // poison: the kernels must write every byte they read back
    int *prod = (int *)(ws.data() + L.prod), *es = (int *)(ws.data() + L.scale), *et = es + M;
    double *part = (double *)(ws.data() + L.part), *partb = part + (size_t)L.slices_a * M;
    signed char *ra = (signed char *)(ws.data() + L.res_a), *rb = (signed char *)(ws.data() + L.res_b);
    const int kp = L.kp, mp = L.mp, np = L.np, ntb = !cs.tb;

    const gt_oz_operand oa = {A.data(), part, es, ra, lda, cs.ta, M, mp, L.slices_a, L.kslice_a};
    const gt_oz_operand ob = {B.data(), partb, et, rb, ldb, ntb, N, np, L.slices_b, L.kslice_b};
    run_grid(L.norms.a + L.norms.b, 1, 32, 8, [&] { gt_oz_norms(oa, ob, L.norms.a, K); });
    run_grid(L.scales.a + L.scales.b, 1, 256, 1, [&] { gt_oz_scales(oa, ob, L.scales.a, c.bits); });
    run_grid(L.residues.a + L.residues.b, 1, 32, 8, [&] { gt_oz_residues(oa, ob, L.residues.a, K, kp, c); });
    int bad_pad = 0;
    for (int l = 0; l < NMOD; ++l) {
        for (int i = M; i < mp; ++i)
            for (int k = 0; k < kp; ++k) bad_pad += ra[((size_t)l * mp + i) * kp + k] != 0;
        for (int j = N; j < np; ++j)
            for (int k = 0; k < kp; ++k) bad_pad += rb[((size_t)l * np + j) * kp + k] != 0;
        for (int i = 0; i < mp; ++i) // the products, C^T = R_B^T R_A, exact in int32
            for (int j = 0; j < np; ++j) {
                int32_t sum = 0;
                for (int k = 0; k < kp; ++k)
                    sum += (int32_t)ra[((size_t)l * mp + i) * kp + k] * rb[((size_t)l * np + j) * kp + k];
                prod[((size_t)l * mp + i) * np + j] = sum;
            }
    }
    const float alpha = cs.alpha, beta = cs.beta;
    run_grid((N + 256 * GT_OZAKI_RC - 1) / (256 * GT_OZAKI_RC), M, 256, 1, [&] {
        gt_oz_reconstruct(prod, np, mp, M, N, K, c, es, et, alpha, A.data(), lda, cs.ta, B.data(), ldb, cs.tb, beta,
                          C.data(), ldc);
    });

    double worst = 0;
    int bad = 0;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < ldc; ++j) {
            const float got = C[(size_t)i * ldc + j];
            if (j >= N) { // padding: untouched
                bad += memcmp(&got, &C0[(size_t)i * ldc + j], 4) != 0;
                continue;
            }
            double ref = 0, na = 0, nb = 0; // the method's error is relative to the row's and column's 2-norms
            for (int k = 0; k < K; ++k) ref += a(i, k) * b(k, j), na += a(i, k) * a(i, k), nb += b(k, j) * b(k, j);
            const double c0 = beta == 0.0f ? 0.0 : (double)C0[(size_t)i * ldc + j];
            ref = alpha * ref + beta * c0;
            const double mag = std::fabs(alpha) * std::sqrt(na * nb) + std::fabs(beta * c0) + 1e-300;
            const double e = std::fabs(got - ref) / mag;
            if (!(e <= 1e-6)) bad++;
            worst = std::isfinite(e) && e > worst ? e : (std::isfinite(e) ? worst : INFINITY);
        }
    printf("  NMOD=%d %4dx%4dx%4d %c%c pad %d alpha %g beta %g: worst %.3g, %d wrong, %d padding residues set\n", NMOD,
           M, N, K, cs.ta ? 't' : 'n', cs.tb ? 't' : 'n', cs.pad, alpha, beta, worst, bad, bad_pad);
    return bad || bad_pad;
}

} // namespace

int main()
{
    static const int dims[][3] = {{1, 1, 1}, {7, 13, 5}, {33, 17, 40}, {20, 35, 300}};
    int failed = 0, cases = 0;
    for (const auto &d : dims)
        for (int lay = 0; lay < 4; ++lay)
            for (int v = 0; v < 2; ++v) {
                const Case cs = {d[0], d[1], d[2], lay >> 1, lay & 1, 3 * v, v ? -2.0f : 1.5f, v ? 0.5f : 0.0f};
                failed += run(cs), cases++;
            }
    printf("ozaki emulator, NMOD=%d: %d cases, %d failed\n", NMOD, cases, failed);
    return failed != 0;
}
