/* gemmtune from a program: C = A B (row-major) through the tuned kernel, one element checked on the host.
 *   cc example.c $(pkg-config --cflags --libs gemmtune) -o example && ./example
 * Built and linked by tests/test_loader.c (loader_install_pkgconfig_example) against a temporary install. */
#include <gemmtune.h>

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    const int m = 300, n = 200, k = 500;
    gemmtune_handle h;
    gemmtune_status st = gemmtune_create(&h, NULL); /* winners from $GEMMTUNE_DB or the default database */
    if (st != GEMMTUNE_SUCCESS) {
        fprintf(stderr, "gemmtune_create: %s (%s)\n", gemmtune_status_string(st), gemmtune_last_error());
        return 1;
    }
    char why[512];
    gemmtune_explain(h, GEMMTUNE_OP_N, GEMMTUNE_OP_N, m, n, k, k, n, n, why, sizeof why);
    printf("%dx%dx%d: %s\n", m, n, k, why);

    float *A = malloc(sizeof(float) * m * k), *B = malloc(sizeof(float) * k * n), *C = malloc(sizeof(float) * m * n);
    for (int i = 0; i < m * k; ++i) A[i] = (float)(i % 7) - 3.0f;
    for (int i = 0; i < k * n; ++i) B[i] = (float)(i % 5) - 2.0f;
    float *dA, *dB, *dC;
    cudaMalloc((void **)&dA, sizeof(float) * m * k);
    cudaMalloc((void **)&dB, sizeof(float) * k * n);
    cudaMalloc((void **)&dC, sizeof(float) * m * n);
    cudaMemcpy(dA, A, sizeof(float) * m * k, cudaMemcpyHostToDevice);
    cudaMemcpy(dB, B, sizeof(float) * k * n, cudaMemcpyHostToDevice);

    /* C[m x n] = 1 * A[m x k] B[k x n] + 0 * C, leading dimensions k, n, n; NULL: the default stream */
    st = gemmtune_sgemm(h, NULL, GEMMTUNE_OP_N, GEMMTUNE_OP_N, m, n, k, 1.0f, dA, k, dB, n, 0.0f, dC, n);
    cudaError_t e = cudaMemcpy(C, dC, sizeof(float) * m * n, cudaMemcpyDeviceToHost);
    int bad = st != GEMMTUNE_SUCCESS || e != cudaSuccess;
    if (st != GEMMTUNE_SUCCESS) fprintf(stderr, "gemmtune_sgemm: %s (%s)\n", gemmtune_status_string(st), gemmtune_last_error());

    const int i = m - 1, j = n - 1; /* small integers: the sum is exact in FP32 */
    float want = 0.0f;
    for (int p = 0; p < k; ++p) want += A[i * k + p] * B[p * n + j];
    if (!bad && C[i * n + j] != want) bad = 1, fprintf(stderr, "C[%d][%d] = %g, want %g\n", i, j, C[i * n + j], want);
    printf("%s\n", bad ? "FAILED" : "ok");

    cudaFree(dA), cudaFree(dB), cudaFree(dC);
    free(A), free(B), free(C);
    gemmtune_destroy(h);
    return bad;
}
