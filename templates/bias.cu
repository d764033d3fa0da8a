// Bias broadcast for the cuBLAS drop-in's cublasLtMatmul BIAS epilogue (src/lib/bias.c): D[i + j*ld] = bias[i] for
// i < m, j < n (column-major; rows past m untouched). A thread per row, each block walking the columns blockIdx.y,
// blockIdx.y + gridDim.y, ...: a warp writes 32 consecutive rows of one column, so every store is coalesced, and
// bias[i] is read once per thread. Alone: nvcc -arch=sm_90 -cubin templates/bias.cu
#ifndef GT_BIAS_THREADS
#define GT_BIAS_THREADS 256 // threads per block, along the rows of D
#endif

extern "C" __global__ void __launch_bounds__(GT_BIAS_THREADS)
    gt_bias_broadcast(int m, int n, const float *__restrict__ bias, float *__restrict__ D, int ld)
{
    const int i = (int)blockIdx.x * GT_BIAS_THREADS + (int)threadIdx.x;
    if (i >= m) return;
    const float b = bias[i];
    for (int j = (int)blockIdx.y; j < n; j += (int)gridDim.y) D[i + (long long)j * ld] = b;
}
