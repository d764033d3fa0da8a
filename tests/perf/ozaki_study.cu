// Study of templates/ozaki.cu (the INT8 route to FP32-accurate GEMM, issue 29), built by tests/perf/wgmma.sh as a
// GT_HOST_LAUNCH template of tests/perf/wgmma.cu: -DTEMPLATE='"ozaki_study.cu"' -DNMOD=8. The host sequence:
// norms of op(A)'s rows and op(B)'s columns, their scales and residues, NMOD INT8 GEMMs in one cuBLAS
// strided-batched call (both operands k-contiguous: cuBLAS's "TN"), then the reconstruction into C.
// env OZ_PHASES=1: the time of each step (CUDA events) for every 25th call; OZ_APART=1: each operand's residues in a
// launch of its own.
#include <cublas_v2.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "ozaki.cu"

#ifndef NMOD
#define NMOD 8
#endif
#define GT_HOST_LAUNCH 1

namespace oz {

constexpr int kMod[GT_OZ_MAXMOD] = {256, 255, 253, 251, 247, 241, 239, 233, 229, 227}; // pairwise coprime

gt_oz_consts consts(int n) // the first n moduli, as kernels/ozaki.c's gt_ozaki_consts_make
{
    gt_oz_consts c{};
    double bits = 0;
    for (int l = 0; l < n; ++l) {
        const int p = kMod[l];
        c.pd[l] = p, c.p[l] = (float)p, c.invp[l] = 1.0f / (float)p;
        const int p16 = (1 << 16) % p, p22 = (1 << 22) % p;
        c.pow16[l] = (float)(p16 > p / 2 ? p16 - p : p16), c.pow22[l] = (float)(p22 > p / 2 ? p22 - p : p22);
        bits += std::log2((double)p);
        int q[GT_OZ_MAXMOD + 1] = {1}, qinv = 0;
        for (int m = 0; m < l; ++m) q[m + 1] = q[m] * kMod[m] % p;
        for (int x = 1; x < p; ++x)
            if (q[l] * x % p == 1) qinv = x;
        for (int m = 0; m <= l && l > 0; ++m) c.w[m][l] = (float)(m < l ? q[m] * qinv % p : qinv);
    }
    c.bits = (int)std::floor((bits - 1.0) / 2.0 - 0.01); // ||A'_i|| ||B'_j|| < P / 2
    return c;
}

void *g_ws = nullptr;
size_t g_wsn = 0;
cublasHandle_t g_h = nullptr;
cudaEvent_t g_ev[6];
long g_calls = 0;

// K slices of the norms of rows x K, as kernels/ozaki.c's gt_ozaki_layout_make: about 1056 blocks, at most one for
// each 256 of K.
int slices(int rows, int K)
{
    const int rb = (rows + 31) / 32;
    return std::max(1, std::min((K + 255) / 256, (1056 + rb - 1) / rb));
}

} // namespace oz

void gt_host_launch(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb, float beta,
                    float *C, int ldc)
{
    using namespace oz;
    static const gt_oz_consts c = consts(NMOD);
    static const bool phases = getenv("OZ_PHASES") != nullptr;
    if (!g_h) {
        CB(cublasCreate(&g_h));
        for (auto &e : g_ev) CK(cudaEventCreate(&e));
    }
    const int Kp = (K + 15) / 16 * 16, Mp = (M + 15) / 16 * 16, Np = (N + 15) / 16 * 16; // as gt_ozaki_layout
    const size_t na = (size_t)NMOD * Mp * Kp, nb = (size_t)NMOD * Np * Kp, nc = (size_t)NMOD * Mp * Np * 4;
    const size_t npart = (8 * (size_t)(M + N) * ((K + 255) / 256) + 255) / 256 * 256;
    const size_t nsc = (4 * (size_t)(M + N) + 255) / 256 * 256; // the residues 256-byte aligned, as the backend's
    const size_t need = nc + npart + nsc + na + nb + 256;
    if (need > g_wsn) {
        CK(cudaFree(g_ws));
        CK(cudaMalloc(&g_ws, need));
        g_wsn = need;
    }
    int *cr = (int *)g_ws;
    double *part = (double *)((char *)g_ws + nc);
    int *es = (int *)((char *)part + npart), *et = es + M;
    signed char *ar = (signed char *)es + nsc, *br = ar + (na + 255) / 256 * 256;
    const bool timed = phases && ++g_calls % 25 == 0;
    if (timed) CK(cudaEventRecord(g_ev[0]));
    const int sa = slices(M, K), sb = slices(N, K), nna = (M + 31) / 32 * sa, nnb = (N + 31) / 32 * sb;
    const int kt = (Kp + 127) / 128, ra = kt * ((Mp + 31) / 32), rb = kt * ((Np + 31) / 32);
    const gt_oz_operand oa = {A, part, es, ar, lda, GT_TA, M, Mp, sa, (K + sa - 1) / sa};
    const gt_oz_operand ob = {B, part + (size_t)sa * M, et, br, ldb, !GT_TB, N, Np, sb, (K + sb - 1) / sb};
    gt_oz_norms<<<nna + nnb, dim3(32, 8)>>>(oa, ob, nna, K);
    gt_oz_scales<<<(M + 255) / 256 + (N + 255) / 256, 256>>>(oa, ob, (M + 255) / 256, c.bits);
    if (timed) CK(cudaEventRecord(g_ev[1]));
    if (getenv("OZ_APART")) { // the operands' residues in two launches
        gt_oz_residues<<<ra, dim3(32, 8)>>>(oa, oa, ra, K, Kp, c);
        gt_oz_residues<<<rb, dim3(32, 8)>>>(ob, ob, 0, K, Kp, c);
    } else {
        gt_oz_residues<<<ra + rb, dim3(32, 8)>>>(oa, ob, ra, K, Kp, c);
    }
    if (timed) CK(cudaEventRecord(g_ev[2]));
    const int one = 1, zero = 0;
    CB(cublasGemmStridedBatchedEx(g_h, CUBLAS_OP_T, CUBLAS_OP_N, Np, Mp, Kp, &one, br, CUDA_R_8I, Kp,
                                  (long long)Np * Kp, ar, CUDA_R_8I, Kp, (long long)Mp * Kp, &zero, cr, CUDA_R_32I, Np,
                                  (long long)Mp * Np, NMOD, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT));
    if (timed) CK(cudaEventRecord(g_ev[3]));
    gt_oz_reconstruct<<<dim3((N + 511) / 512, M), 256>>>(cr, Np, Mp, M, N, K, c, es, et, alpha, A, lda, GT_TA, B, ldb,
                                                       GT_TB, beta, C, ldc); // two columns a thread
    if (timed) {
        CK(cudaEventRecord(g_ev[4]));
        CK(cudaEventSynchronize(g_ev[4]));
        float t[4];
        for (int i = 0; i < 4; ++i) CK(cudaEventElapsedTime(&t[i], g_ev[i], g_ev[i + 1]));
        printf("PHASES %dx%dx%d NMOD %d: norms and scales %.3f residues %.3f int8 gemms %.3f reconstruct %.3f ms\n",
               M, N, K, NMOD, t[0], t[1], t[2], t[3]);
    }
}
