// Study (issue 29's anchor "three cuBLAS TF32 GEMMs on split operands"), built by tests/perf/wgmma.sh as a
// GT_HOST_LAUNCH template of tests/perf/wgmma.cu: each operand split once into TF32 parts (big = rn(x), small =
// rn(x - big)) by a kernel of ours, then cuBLAS's own TF32 tensor-core GEMMs:
//   C = alpha [A_big | A_small] [B_small; B_big] + beta C      (the two small products: one GEMM over 2K)
//   C = alpha A_big(:, chunk) B_big(chunk, :) + 1 C             (the big product, CH k-values a call; CH 0: all K)
// Within one call the tensor cores sum their products with truncation; between calls cuBLAS adds C in FP32 with
// rounding, so CH is the fold interval of tf32x3wg's KC. Never part of the product: a study of whether the vendor's
// TF32 kernels, fed split operands, are faster and as accurate as SGEMM.
#include <cublas_v2.h>

#ifndef CH
#define CH 0 // k-values per call of the big product (0: one call over K)
#endif
#define GT_HOST_LAUNCH 1

namespace b3 {

__device__ __forceinline__ float tf32(float x)
{
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return __uint_as_float(r);
}

// The logical rows x cols matrix X (element (r, c) at X[r ld + c], or X[c ld + r] when trans) split into big and
// small parts, row-major with leading dimension dld, through a 32 x 32 tile in shared memory (both sides
// coalesced); columns from cols to pcols are written as zeros.
__global__ void split(const float *X, int ld, int trans, int rows, int cols, int pcols, float *big, float *small,
                      int dld)
{
    __shared__ float t[32][33];
    const int r0 = blockIdx.y * 32, c0 = blockIdx.x * 32, tx = threadIdx.x;
    for (int y = threadIdx.y; y < 32; y += blockDim.y) {
        if (trans) {
            const int r = r0 + tx, c = c0 + y;
            t[tx][y] = r < rows && c < cols ? X[(size_t)c * ld + r] : 0.0f;
        } else {
            const int r = r0 + y, c = c0 + tx;
            t[y][tx] = r < rows && c < cols ? X[(size_t)r * ld + c] : 0.0f;
        }
    }
    __syncthreads();
    for (int y = threadIdx.y; y < 32; y += blockDim.y) {
        const int r = r0 + y, c = c0 + tx;
        if (r >= rows || c >= pcols) continue;
        const float v = t[y][tx], b = tf32(v);
        big[(size_t)r * dld + c] = b;
        small[(size_t)r * dld + c] = tf32(v - b);
    }
}

float *g_a = nullptr, *g_b = nullptr;
size_t g_an = 0, g_bn = 0;
cublasHandle_t g_h = nullptr;

void grow(float *&p, size_t &have, size_t want)
{
    if (want <= have) return;
    CK(cudaFree(p));
    CK(cudaMalloc(&p, want * sizeof(float)));
    have = want;
}

// Column-major cuBLAS on row-major data: C^T (N x M) = B^T A^T, every operand stored as split() wrote it.
void gemm(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb, float beta, float *C,
          int ldc)
{
    CB(cublasGemmEx(g_h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, CUDA_R_32F, ldb, A, CUDA_R_32F, lda, &beta, C,
                    CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
}

} // namespace b3

// A: [A_big | A_small], M x 2Kp; B: [B_small; B_big], 2Kp x N (row-major); Kp = K rounded up to CH.
void gt_host_launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb, float beta,
                    float *C, int ldc)
{
    using namespace b3;
    if (!g_h) {
        CB(cublasCreate(&g_h));
        CB(cublasSetMathMode(g_h, CUBLAS_TF32_TENSOR_OP_MATH));
    }
    const int ch = CH > 0 && CH < K ? CH : K, Kp = (K + ch - 1) / ch * ch;
    grow(g_a, g_an, (size_t)M * 2 * Kp);
    grow(g_b, g_bn, (size_t)2 * Kp * N);
    const dim3 tb(32, 8);
    split<<<dim3((Kp + 31) / 32, (M + 31) / 32), tb>>>(A, lda, GT_TA, M, K, Kp, g_a, g_a + Kp, 2 * Kp);
    // B (K x N) into rows Kp.. (big) and 0.. (small) of [B_small; B_big]; rows K..Kp of each part are zero once
    // (split writes only rows < K: the pad rows are cleared here, their columns are all N).
    split<<<dim3((N + 31) / 32, (K + 31) / 32), tb>>>(B, ldb, GT_TB, K, N, N, g_b + (size_t)Kp * N, g_b, N);
    if (Kp > K) {
        CK(cudaMemsetAsync(g_b + (size_t)K * N, 0, (size_t)(Kp - K) * N * 4));
        CK(cudaMemsetAsync(g_b + (size_t)(Kp + K) * N, 0, (size_t)(Kp - K) * N * 4));
    }
    gemm(M, N, 2 * Kp, alpha, g_a, 2 * Kp, g_b, N, beta, C, ldc);
    for (int k = 0; k < Kp; k += ch)
        gemm(M, N, ch, alpha, g_a + k, 2 * Kp, g_b + (size_t)(Kp + k) * N, N, 1.0f, C, ldc);
}
