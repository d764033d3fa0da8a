// Study harness for one build of a gemmtune template (as the tuner renders it: -D for every tunable and the layout),
// outside the tuner: exact checks on integer data (every correct method is exact there, so an index or layout bug
// cannot hide), the error against cuBLAS DGEMM beside cuBLAS SGEMM's (pedantic) on uniform and wide inputs, and
// the time against SGEMM (CUDA events, cold L2, median of 20). Written for templates/tf32x3wg.cu; any template
// whose gt_gemm takes a flat grid of BM x BN tiles, NT threads and SMEM_BYTES of shared memory works.
//   nvcc -O2 -std=c++17 -arch=sm_90a -I templates -DTEMPLATE='"tf32x3wg.cu"' -DBM=128 ... tests/perf/wgmma.cu -lcublas
//   ./a.out [M N K ...]         (default 4096^3 8192^3; exit status 1 when a check fails)
// tests/perf/wgmma.sh builds the variants and runs them. A template that defines GT_NEEDS_AMAX (the 3xFP16 study,
// tests/perf/f16x3wg.cu) has its operands' row and column maxima computed into ws first, inside the timed launch.
// A template that defines GT_HOST_LAUNCH runs a host sequence of its own instead of gt_gemm's grid:
// gt_host_launch(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc) (tests/perf/blas3.cu, tests/perf/ozaki_study.cu).
// Built with -DGT_BATCHED=1, the timing runs a strided batch as the tuner launches one (grid z over it): BATCH=n
// (environment, a divisor of M) matrices of M / n rows each, A and C stacked, B one of its own per matrix, or with
// SHAREB=1 one B for all; A not transposed. The checks run one GEMM; SGEMM's time beside is the stacked
// GEMM's (one B): what separates a batch's cost from the same GEMM stacked.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_check.h"

// The layout, as the tuner renders it (a template that defines its own defaults keeps them; a host-launch study
// takes these).
#ifndef GT_TA
#define GT_TA 0
#endif
#ifndef GT_TB
#define GT_TB 0
#endif

#include TEMPLATE

namespace {

struct Prob {
    int M, N, K, lda, ldb, ldc;
};

Prob make(int M, int N, int K, int pad)
{
    return {M, N, K, (GT_TA ? M : K) + pad, (GT_TB ? K : N) + pad, N + pad};
}
size_t a_elems(const Prob &p) { return (size_t)p.lda * (GT_TA ? p.K : p.M); }
size_t b_elems(const Prob &p) { return (size_t)p.ldb * (GT_TB ? p.N : p.K); }
size_t c_elems(const Prob &p) { return (size_t)p.ldc * p.M; }

unsigned rng = 12345;
float urand() { return (rng = rng * 1664525u + 1013904223u) / 4294967296.0f * 2.0f - 1.0f; }

// kind 0: integers in [-8, 8] (exact everywhere); 1: uniform [-1, 1]; 2: uniform times 2^e, e in [-20, 20]
void fill(std::vector<float> &x, int kind)
{
    for (auto &v : x) {
        const float u = urand();
        v = kind == 0 ? std::round(u * 8.0f) : kind == 1 ? u : std::ldexp(u, (int)std::lround(urand() * 20.0f));
    }
}

// With SPLITK > 1: grid z over the K slices, their partial sums in a workspace (grown as needed), then
// gt_splitk_reduce, as the tuner launches it (gt_launch_tiles).
float *g_ws = nullptr;
size_t g_ws_elems = 0;

// A -DGT_BATCHED=1 build's timing runs (timing()): BATCH matrices, SHAREB one B for all; the checks run one GEMM.
int g_batch = 1;
bool g_shareb = false;

#ifdef GT_NEEDS_AMAX
// The maxima of the rows of the rows x cols matrix X into out: element (r, c) at X[r * ld + c] when rowc.
void amax(const float *X, int ld, int rows, int cols, bool rowc, unsigned *out)
{
    if (rowc) gt_amax_rowc<<<dim3((rows + 7) / 8, (cols + 1023) / 1024), 256>>>(X, ld, rows, cols, out);
    else gt_amax_colc<<<dim3((rows + 255) / 256, (cols + 63) / 64), 256>>>(X, ld, rows, cols, out);
}
#endif

#ifndef GT_HOST_LAUNCH
// The BM x BN tiles of an M x N product: with CT (tf32x3wg) the blocks tile Cᵀ, N rows by M columns.
unsigned tile_count(int M, int N)
{
#if defined(CT) && CT
    const int r = N, c = M;
#else
    const int r = M, c = N;
#endif
    return (unsigned)((r + BM - 1) / BM) * (unsigned)((c + BN - 1) / BN);
}
#endif

void launch(const Prob &p, float alpha, const float *A, const float *B, float beta, float *C)
{
#ifdef GT_HOST_LAUNCH
    return gt_host_launch(p.M, p.N, p.K, alpha, A, p.lda, B, p.ldb, beta, C, p.ldc);
#else
    const size_t mn = (size_t)p.M * p.N;
#ifdef GT_NEEDS_AMAX
    if ((size_t)(p.M + p.N) > g_ws_elems) {
        CK(cudaFree(g_ws));
        CK(cudaMalloc(&g_ws, (p.M + p.N) * sizeof(float)));
        g_ws_elems = p.M + p.N;
    }
    CK(cudaMemsetAsync(g_ws, 0, (p.M + p.N) * sizeof(float)));
    amax(A, p.lda, p.M, p.K, !GT_TA, (unsigned *)g_ws);
    amax(B, p.ldb, p.N, p.K, GT_TB, (unsigned *)g_ws + p.M);
#endif
    if (SPLITK > 1 && SPLITK * mn > g_ws_elems) {
        CK(cudaFree(g_ws));
        CK(cudaMalloc(&g_ws, SPLITK * mn * sizeof(float)));
        g_ws_elems = SPLITK * mn;
    }
#if GT_BATCHED // g_batch matrices of M / g_batch rows, A and C stacked, B one per matrix (g_shareb: one for all)
    const int mb = p.M / g_batch;
    gt_gemm<<<dim3(tile_count(mb, p.N), 1, g_batch), NT, SMEM_BYTES>>>(
        mb, p.N, p.K, alpha, A, p.lda, B, p.ldb, beta, C, p.ldc, g_ws, (long long)mb * p.lda,
        g_shareb ? 0LL : (long long)b_elems(p), (long long)mb * p.ldc);
#else
    gt_gemm<<<dim3(tile_count(p.M, p.N), 1, SPLITK), NT, SMEM_BYTES>>>(p.M, p.N, p.K, alpha, A, p.lda, B, p.ldb, beta,
                                                                        C, p.ldc, g_ws);
#endif
#if SPLITK > 1
    gt_splitk_reduce<<<(unsigned)((mn + 255) / 256), 256>>>(p.M, p.N, alpha, g_ws, beta, C, p.ldc);
#endif
#endif
}

// Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
template <class T>
void blas(cublasHandle_t h, const Prob &p, T alpha, const T *A, const T *B, T beta, T *C)
{
    const cublasOperation_t ob = GT_TB ? CUBLAS_OP_T : CUBLAS_OP_N, oa = GT_TA ? CUBLAS_OP_T : CUBLAS_OP_N;
    if constexpr (sizeof(T) == 4)
        CB(cublasSgemm(h, ob, oa, p.N, p.M, p.K, &alpha, B, p.ldb, A, p.lda, &beta, C, p.ldc));
    else CB(cublasDgemm(h, ob, oa, p.N, p.M, p.K, &alpha, B, p.ldb, A, p.lda, &beta, C, p.ldc));
}

template <class T> T *dev(const std::vector<T> &h)
{
    T *d;
    CK(cudaMalloc(&d, h.size() * sizeof(T)));
    CK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}
template <class T> std::vector<T> host(const T *d, size_t n)
{
    std::vector<T> h(n);
    CK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
}

struct Err {
    double worst; // max |c - ref| / (|alpha| |A||B| + |beta c0|) over C
    long bad;     // NaN, or differing when exact
    double e2;    // sum of (c - ref)^2, for the normwise error ||C - C64||_F / ||C64||_F
};

// Our kernel and SGEMM against DGEMM on the same inputs. exact: integer data, every element must match.
bool check(cublasHandle_t h, const Prob &p, int kind, float alpha, float beta, bool verbose)
{
    std::vector<float> A(a_elems(p)), B(b_elems(p)), C0(c_elems(p));
    fill(A, kind), fill(B, kind), fill(C0, kind == 0 ? 0 : 1);
    if (beta == 0.0f) std::fill(C0.begin(), C0.end(), NAN);
    std::vector<double> Ad(A.begin(), A.end()), Bd(B.begin(), B.end()), C0d(C0.begin(), C0.end());
    std::vector<double> Aa(Ad), Ba(Bd);
    for (auto &v : Aa) v = std::fabs(v);
    for (auto &v : Ba) v = std::fabs(v);
    float *dA = dev(A), *dB = dev(B), *dC = dev(C0), *dS = dev(C0);
    double *dAd = dev(Ad), *dBd = dev(Bd), *dR = dev(C0d), *dAa = dev(Aa), *dBa = dev(Ba);
    std::vector<double> zeros(c_elems(p), 0.0);
    double *dBound = dev(zeros);
    launch(p, alpha, dA, dB, beta, dC);
    CK(cudaGetLastError());
    blas<float>(h, p, alpha, dA, dB, beta, dS);
    blas<double>(h, p, alpha, dAd, dBd, beta, dR);
    blas<double>(h, p, std::fabs((double)alpha), dAa, dBa, 0.0, dBound);
    CK(cudaDeviceSynchronize());
    auto c = host(dC, c_elems(p)), s = host(dS, c_elems(p));
    auto r = host(dR, c_elems(p)), b = host(dBound, c_elems(p));
    Err ours{0, 0, 0}, sg{0, 0, 0};
    double r2 = 0;
    long shown = 0;
    for (int i = 0; i < p.M; ++i)
        for (int j = 0; j < p.N; ++j) {
            const size_t x = (size_t)i * p.ldc + j;
            const double den = b[x] + (beta == 0.0f ? 0.0 : std::fabs(beta * C0[x])) + 1e-300;
            r2 += r[x] * r[x];
            for (int w = 0; w < 2; ++w) {
                const double v = w ? s[x] : c[x];
                Err &e = w ? sg : ours;
                const bool wrong = std::isnan(v) || (kind == 0 && v != r[x]);
                e.bad += wrong;
                if (!std::isnan(v)) e.worst = std::max(e.worst, std::fabs(v - r[x]) / den);
                if (!std::isnan(v)) e.e2 += (v - r[x]) * (v - r[x]);
                if (!w && wrong && verbose && shown++ < 5)
                    printf("    C(%d,%d) = %.9g, DGEMM %.9g\n", i, j, v, r[x]);
            }
        }
    // the padding of C past N must be untouched
    long pad = 0;
    for (int i = 0; i < p.M; ++i)
        for (int j = p.N; j < p.ldc; ++j) {
            const size_t x = (size_t)i * p.ldc + j;
            pad += !(c[x] == C0[x] || (std::isnan(c[x]) && std::isnan(C0[x])));
        }
    const bool ok = ours.bad == 0 && pad == 0 && (kind == 0 || ours.worst <= std::max(sg.worst, 4 * 0x1p-24));
    const double nr = std::sqrt(r2) + 1e-300;
    printf("  %-5s %5dx%5dx%5d a=%g b=%g  err %.3g (SGEMM %.3g)  norm %.3g (SGEMM %.3g)  bad %ld pad %ld  %s\n",
           kind == 0 ? "int" : kind == 1 ? "unif" : "wide", p.M, p.N, p.K, alpha, beta, ours.worst, sg.worst,
           std::sqrt(ours.e2) / nr, std::sqrt(sg.e2) / nr, ours.bad, pad, ok ? "ok" : "FAIL");
    for (void *q : {(void *)dA, (void *)dB, (void *)dC, (void *)dS, (void *)dAd, (void *)dBd, (void *)dR,
                    (void *)dAa, (void *)dBa, (void *)dBound})
        CK(cudaFree(q));
    return ok;
}

float median(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Median time of ours and of SGEMM, alternating, cold L2 (a 256 MiB memset before each run).
void timing(cublasHandle_t h, int M, int N, int K)
{
    const Prob p = make(M, N, K, getenv("PAD") ? atoi(getenv("PAD")) : 0);
#if GT_BATCHED
    g_batch = getenv("BATCH") ? atoi(getenv("BATCH")) : 1;
#endif
    g_shareb = getenv("SHAREB") != nullptr;
    if (g_batch < 1 || M % g_batch || (g_batch > 1 && GT_TA)) {
        fprintf(stderr, "BATCH=%d: a divisor of M = %d, with A not transposed\n", g_batch, M);
        exit(2);
    }
    std::vector<float> A(a_elems(p)), B(b_elems(p) * (g_shareb ? 1 : g_batch));
    fill(A, 1), fill(B, 1);
    float *dA = dev(A), *dB = dev(B), *dC, *flush;
    CK(cudaMalloc(&dC, c_elems(p) * 4));
    const size_t fb = (size_t)256 << 20;
    CK(cudaMalloc(&flush, fb));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    cublasHandle_t h32; // TF32 tensor-core SGEMM: the rate the three products share
    CB(cublasCreate(&h32));
    CB(cublasSetMathMode(h32, CUBLAS_TF32_TENSOR_OP_MATH));
    std::vector<float> t[3];
    for (int it = 0; it < 25; ++it)
        for (int w = 0; w < 3; ++w) {
            CK(cudaMemsetAsync(flush, it, fb));
            CK(cudaEventRecord(e0));
            if (w) blas<float>(w == 1 ? h : h32, p, 1.0f, dA, dB, 0.0f, dC);
            else launch(p, 1.0f, dA, dB, 0.0f, dC);
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            if (it >= 5) t[w].push_back(ms);
        }
    CK(cudaGetLastError());
    const double fl = 2.0 * M * N * K, ours = median(t[0]), sg = median(t[1]), tf = median(t[2]);
    printf("TIME %dx%dx%d pad %d ours %.3f ms %.1f TFLOPS  SGEMM %.3f ms %.1f TFLOPS  x%.3f  (TF32 %.1f TFLOPS)\n", M,
           N, K, p.lda - (GT_TA ? M : K), ours, fl / ours / 1e9, sg, fl / sg / 1e9, sg / ours, fl / tf / 1e9);
    CB(cublasDestroy(h32));
    for (void *q : {(void *)dA, (void *)dB, (void *)dC, (void *)flush}) CK(cudaFree(q));
    g_batch = 1;
}

} // namespace

int main(int argc, char **argv)
{
    setvbuf(stdout, nullptr, _IOLBF, 0); // a line at a time: a hang killed by timeout keeps what came before
    cublasHandle_t h;
    CB(cublasCreate(&h));
    CB(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH));
#ifdef GT_HOST_LAUNCH
    printf("host launch, layout %c%c\n", GT_TA ? 't' : 'n', GT_TB ? 't' : 'n');
#else
    CK(cudaFuncSetAttribute(gt_gemm, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES));
    printf("BM=%d BN=%d BK=%d STAGES=%d SPLITK=%d layout %c%c, %d threads, %d B shared\n", BM, BN, BK, STAGES, SPLITK,
           GT_TA ? 't' : 'n', GT_TB ? 't' : 'n', NT, SMEM_BYTES);
#endif
    bool ok = true;
    const bool only_time = getenv("ONLY_TIME") != nullptr; // no checks: for profilers
    const bool only_big = getenv("ONLY_BIG") != nullptr;   // only the checks and times of the shapes asked for
    const int shapes[][3] = {{1, 1, 1}, {7, 13, 5}, {64, 64, 32}, {128, 128, 256}, {127, 129, 131},
                             {197, 259, 1025}, {300, 200, 17}};
    for (auto &s : shapes) {
        if (only_time || only_big) break;
        ok &= check(h, make(s[0], s[1], s[2], 3), 0, 1.5f, 0.5f, true);
        ok &= check(h, make(s[0], s[1], s[2], 0), 0, 1.0f, 0.0f, true);
    }
    for (int kind = 1; kind <= 2 && !only_time && !only_big; ++kind) {
        ok &= check(h, make(512, 384, 4096, 1), kind, 1.0f, 0.0f, true);
        ok &= check(h, make(1024, 1024, 2048, 0), kind, 1.0f, 0.0f, true);
    }
    std::vector<int> dims;
    for (int i = 1; i < argc; ++i) dims.push_back(atoi(argv[i]));
    if (dims.empty()) dims = {4096, 4096, 4096, 8192, 8192, 8192};
    for (size_t i = 0; i + 2 < dims.size(); i += 3) {
        for (int kind = 1; kind <= 2 && !only_time; ++kind)
            ok &= check(h, make(dims[i], dims[i + 1], dims[i + 2], 0), kind, 1.0f, 0.0f, false);
        timing(h, dims[i], dims[i + 1], dims[i + 2]);
    }
    printf("%s\n", ok ? "ALL OK" : "SOME CHECK FAILED");
    return ok ? 0 : 1;
}
