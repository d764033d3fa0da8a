// Study for the ozaki family (issue 29): how fast each of cuBLASLt's int8 algorithms runs the family's products,
// NMOD matrices C_l^T (N x M, int32) = R_B,l^T R_A,l over Kp, both residue matrices k-contiguous (cuBLASLt's "TN"),
// as one strided-batched call, by each algorithm cuBLASLt's heuristic offers (the family's PICK is a rank in that list).
// M and N as given: the backend pads both to 16, since an odd one leaves a single, slow algorithm.
//   nvcc -O2 -std=c++17 -arch=sm_90 -Itests/perf tests/perf/int8_algos.cu -o build-b3/int8_algos -lcublasLt -lcublas
//   build-b3/int8_algos NMOD M N K [M N K ...]      env ALGOS=n (default 16), WS=MiB (default 32), REPS (10)
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_check.h"

__global__ void fill(signed char *x, size_t n, unsigned seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 15, h *= 2246822519u, h ^= h >> 13;
        x[i] = (signed char)(h & 0xff);
    }
}

static int cfg(const cublasLtMatmulAlgo_t &a, cublasLtMatmulAlgoConfigAttributes_t at)
{
    unsigned long long v = 0;
    size_t got = 0, size = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&a, at, nullptr, 0, &size) || size > sizeof v) return -1;
    if (cublasLtMatmulAlgoConfigGetAttribute(&a, at, &v, size, &got)) return -1;
    return (int)v;
}

int main(int argc, char **argv)
{
    if (argc < 5 || (argc - 2) % 3) {
        fprintf(stderr, "usage: %s NMOD M N K [M N K ...]\n", argv[0]);
        return 2;
    }
    const int nmod = atoi(argv[1]), want = getenv("ALGOS") ? atoi(getenv("ALGOS")) : 16;
    const int reps = getenv("REPS") ? atoi(getenv("REPS")) : 10;
    const size_t wsmax = (size_t)(getenv("WS") ? atoi(getenv("WS")) : 32) << 20;
    cublasLtHandle_t lt;
    CB(cublasLtCreate(&lt));
    void *ws;
    CK(cudaMalloc(&ws, wsmax ? wsmax : 1));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int a = 2; a + 2 < argc; a += 3) {
        const int m = atoi(argv[a]), n = atoi(argv[a + 1]), k = atoi(argv[a + 2]);
        const int kp = (k + 15) / 16 * 16, np = (n + 3) / 4 * 4;
        const size_t na = (size_t)nmod * m * kp, nb = (size_t)nmod * n * kp, nc = (size_t)nmod * m * np;
        signed char *ra, *rb;
        int *c;
        CK(cudaMalloc(&ra, na));
        CK(cudaMalloc(&rb, nb));
        CK(cudaMalloc(&c, nc * 4));
        fill<<<1024, 256>>>(ra, na, 1);
        fill<<<1024, 256>>>(rb, nb, 2);
        cublasLtMatmulDesc_t d;
        cublasLtMatrixLayout_t la, lb, lc;
        const cublasOperation_t t = CUBLAS_OP_T, nop = CUBLAS_OP_N;
        CB(cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32I, CUDA_R_32I));
        CB(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
        CB(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSB, &nop, sizeof nop));
        CB(cublasLtMatrixLayoutCreate(&la, CUDA_R_8I, kp, n, kp));
        CB(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8I, kp, m, kp));
        CB(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32I, n, m, np));
        cublasLtMatrixLayout_t l[] = {la, lb, lc};
        const long long stride[] = {(long long)n * kp, (long long)m * kp, (long long)m * np};
        for (int i = 0; i < 3; ++i) {
            CB(cublasLtMatrixLayoutSetAttribute(l[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &nmod, sizeof nmod));
            CB(cublasLtMatrixLayoutSetAttribute(l[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride[i],
                                                sizeof stride[i]));
        }
        cublasLtMatmulPreference_t pref;
        CB(cublasLtMatmulPreferenceCreate(&pref));
        CB(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsmax, sizeof wsmax));
        std::vector<cublasLtMatmulHeuristicResult_t> res(want);
        int got = 0;
        CB(cublasLtMatmulAlgoGetHeuristic(lt, d, la, lb, lc, lc, pref, want, res.data(), &got));
        const double ops = 2.0 * nmod * m * n * (double)kp;
        const int one = 1, zero = 0;
        double first = 0, best = 1e30;
        int besti = -1;
        for (int i = 0; i < got; ++i) {
            if (res[i].state != CUBLAS_STATUS_SUCCESS) continue;
            std::vector<float> ms;
            bool bad = false;
            for (int r = 0; r < reps + 3 && !bad; ++r) {
                CK(cudaEventRecord(e0));
                bad = cublasLtMatmul(lt, d, &one, rb, la, ra, lb, &zero, c, lc, c, lc, &res[i].algo, ws,
                                     res[i].workspaceSize, 0) != CUBLAS_STATUS_SUCCESS;
                CK(cudaEventRecord(e1));
                CK(cudaEventSynchronize(e1));
                float x;
                CK(cudaEventElapsedTime(&x, e0, e1));
                if (r >= 3) ms.push_back(x);
            }
            if (bad) {
                printf("  algo %2d: launch failed\n", i);
                continue;
            }
            std::sort(ms.begin(), ms.end());
            const double med = ms[ms.size() / 2];
            if (i == 0) first = med;
            if (med < best) best = med, besti = i;
            printf("  %dx%dx%d nmod %d heuristic %2d: id %3d tile %3d stages %3d splitk %2d swizzle %d cluster %3d "
                   "ws %8zu  %.3f ms  %.0f TOPS\n",
                   m, n, k, nmod, i, cfg(res[i].algo, CUBLASLT_ALGO_CONFIG_ID),
                   cfg(res[i].algo, CUBLASLT_ALGO_CONFIG_TILE_ID), cfg(res[i].algo, CUBLASLT_ALGO_CONFIG_STAGES_ID),
                   cfg(res[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM), cfg(res[i].algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING),
                   cfg(res[i].algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID), res[i].workspaceSize, med,
                   ops / med / 1e9);
        }
        printf("INT8 %dx%dx%d nmod %d: %d algorithms, first %.3f ms, best #%d %.3f ms (%.3fx)\n", m, n, k, nmod, got,
               first, besti, best, first / best);
        cublasLtMatmulPreferenceDestroy(pref);
        cublasLtMatrixLayoutDestroy(la);
        cublasLtMatrixLayoutDestroy(lb);
        cublasLtMatrixLayoutDestroy(lc);
        cublasLtMatmulDescDestroy(d);
        CK(cudaFree(ra));
        CK(cudaFree(rb));
        CK(cudaFree(c));
    }
    return 0;
}
