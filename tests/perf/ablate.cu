// Times one compile-time variant of templates/multistage.cu against cuBLAS FP32 (pedantic) in one process,
// for the issue-7 analysis: build one binary per variant with -D flags (tests/perf/ablate.sh does), run it
// with shapes. Same method as gemmtune: operands uniform in [-1, 1), an L2 flush before every timed launch,
// CUDA events, median of alternating runs. Variants with GT_ABLATE set compute wrong results on purpose and
// skip validation; every other variant is checked against cuBLAS first, with the test toolkit's validator
// (tests/toolkit.h, the product's rule) on a bound cuBLAS computes from |A| and |B|.
//   ablate LABEL M N K [M N K ...]
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "toolkit.h"
#include "multistage.cu"
#ifndef GT_ABLATE // templates from before the hooks (REF=)
#define GT_ABLATE 0
#endif

#include "cuda_check.h"

__global__ void fill(float *p, size_t n, unsigned long long seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned long long z = seed + 0x9E3779B97F4A7C15ull * (i + 1);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        p[i] = (float)((z >> 40) * (1.0 / 16777216.0)) * 2.0f - 1.0f;
    }
}

__global__ void absolute(const float *x, float *y, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        y[i] = fabsf(x[i]);
}

// The toolkit's validator on C against cuBLAS's R, with the bound |A||B| from cuBLAS on absolute values
// (alpha 1, beta 0: no C term). Returns the worst scaled error, INFINITY when C fails.
static double validate(cublasHandle_t h, int M, int N, int K, const float *A, const float *B, const float *C,
                       const float *R)
{
    const size_t mn = (size_t)M * N;
    float *aa, *ab, *bd;
    const float one = 1.0f, zero = 0.0f;
    CK(cudaMalloc(&aa, sizeof(float) * M * K));
    CK(cudaMalloc(&ab, sizeof(float) * K * N));
    CK(cudaMalloc(&bd, sizeof(float) * mn));
    absolute<<<1024, 256>>>(A, aa, (size_t)M * K);
    absolute<<<1024, 256>>>(B, ab, (size_t)K * N);
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, ab, N, aa, K, &zero, bd, N);
    std::vector<float> c(mn), r(mn), bound(mn), c0(mn, 0.0f);
    CK(cudaMemcpy(c.data(), C, sizeof(float) * mn, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(r.data(), R, sizeof(float) * mn, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(bound.data(), bd, sizeof(float) * mn, cudaMemcpyDeviceToHost));
    cudaFree(aa), cudaFree(ab), cudaFree(bd);
    const gt_problem p = gt_problem_make(0, 0, 0, M, N, K, 0, 1.0f, 0.0f);
    gt_verdict v;
    const int ok = gt_validate_bound(&p, c0.data(), c.data(), r.data(), bound.data(), &v);
    if (!ok) {
        char text[512];
        gt_verdict_text(&p, &v, text, sizeof text);
        fprintf(stderr, "%s\n", text);
    }
    return ok ? v.worst : INFINITY;
}

static float median(std::vector<float> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main(int argc, char **argv)
{
    if (argc < 5 || (argc - 2) % 3) {
        fprintf(stderr, "usage: %s LABEL M N K [M N K ...]\n", argv[0]);
        return 2;
    }
    const char *label = argv[1];
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    const size_t flush_bytes = 2 * (size_t)prop.l2CacheSize;
    void *flush;
    CK(cudaMalloc(&flush, flush_bytes));
    cublasHandle_t h;
    cublasCreate(&h);
    cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH);
    const int smem = 4 * STAGES * BK * (BM + BN + 2 * PAD);
    CK(cudaFuncSetAttribute(gt_gemm, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, gt_gemm));
    for (int s = 2; s < argc; s += 3) {
        const int M = atoi(argv[s]), N = atoi(argv[s + 1]), K = atoi(argv[s + 2]);
        float *A, *B, *C, *R;
        CK(cudaMalloc(&A, sizeof(float) * M * K));
        CK(cudaMalloc(&B, sizeof(float) * K * N));
        CK(cudaMalloc(&C, sizeof(float) * M * N));
        CK(cudaMalloc(&R, sizeof(float) * M * N));
        fill<<<1024, 256>>>(A, (size_t)M * K, 1);
        fill<<<1024, 256>>>(B, (size_t)K * N, 2);
        const float alpha = 1.0f, beta = 0.0f;
        const dim3 grid((unsigned)(((M + BM - 1) / BM) * ((N + BN - 1) / BN)));
        auto ours = [&] { gt_gemm<<<grid, NT, smem>>>(M, N, K, alpha, A, K, B, N, beta, C, N, nullptr); };
        // Row-major C = A B is column-major C^T = B^T A^T.
        auto ref = [&] { cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, N, A, K, &beta, R, N); };
        ours();
        ref();
        CK(cudaDeviceSynchronize());
        const double worst = GT_ABLATE ? 0 : validate(h, M, N, K, A, B, C, R);
        cudaEvent_t e0, e1;
        cudaEventCreate(&e0);
        cudaEventCreate(&e1);
        std::vector<float> t_ours, t_ref;
        for (int i = 0; i < 45; ++i) {
            for (int side = 0; side < 2; ++side) {
                CK(cudaMemsetAsync(flush, i, flush_bytes));
                cudaEventRecord(e0);
                side ? ref() : ours();
                cudaEventRecord(e1);
                CK(cudaEventSynchronize(e1));
                float ms;
                cudaEventElapsedTime(&ms, e0, e1);
                if (i >= 5) (side ? t_ref : t_ours).push_back(ms);
            }
        }
        const float mo = median(t_ours), mr = median(t_ref);
        const double fl = 2.0 * M * N * K * 1e-9;
        const bool ok = GT_ABLATE || worst <= gt_tolerance(K);
        printf("%-22s %5dx%-5dx%-5d regs %3d  %8.3f ms %6.2f TFLOPS  cuBLAS %8.3f ms %6.2f  ratio %.3f  %s\n", label,
               M, N, K, fa.numRegs, mo, fl / mo, mr, fl / mr, mr / mo,
               GT_ABLATE ? "(ablation: not validated)" : ok ? "valid" : "WRONG");
        fflush(stdout);
        cudaFree(A), cudaFree(B), cudaFree(C), cudaFree(R);
    }
    return 0;
}
