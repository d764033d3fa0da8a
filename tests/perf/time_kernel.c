/* One candidate timed alone, for a study or a profiler (ncu -k regex:gt_ ./time_kernel ...): renders and compiles
 * FAMILY's kernel at PARAMS for LAYOUT, launches it on M x N x K (tight ld's, random inputs, alpha 1, beta 0) as
 * the loader does (gt_kernel_launch: gt_gemm, then any reduce), and prints the median of REPS calls, each after an
 * L2 flush (CUDA events around the call alone). It checks nothing: the tuner and the GPU tests do. `make` builds it
 * as build/time_kernel (carried to a GPU machine with build/, libcjson.so.1 in build/lib).
 * Usage: time_kernel FAMILY PARAMS LAYOUT M N K [REPS]. */
#include "compile.h"
#include "family.h"
#include "kernel.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* count floats at *d, uniform in [-0.5, 0.5). */
static int random_buffer(float **d, size_t count, unsigned seed)
{
    float *h = malloc(count * sizeof *h);
    if (!h || cudaMalloc((void **)d, count * sizeof *h) != cudaSuccess) return free(h), -1;
    for (size_t i = 0; i < count; ++i) h[i] = (float)rand_r(&seed) / RAND_MAX - 0.5f;
    const int rc = cudaMemcpy(*d, h, count * sizeof *h, cudaMemcpyHostToDevice) == cudaSuccess ? 0 : -1;
    free(h);
    return rc;
}

int main(int argc, char **argv)
{
    char err[1024], arch[32];
    gt_params p;
    int ta, tb;
    if (argc < 7) return fprintf(stderr, "usage: time_kernel FAMILY PARAMS LAYOUT M N K [REPS]\n"), 2;
    const gt_family *f = gt_family_find(argv[1]);
    const int m = atoi(argv[4]), n = atoi(argv[5]), k = atoi(argv[6]), reps = argc > 7 ? atoi(argv[7]) : 20;
    if (!f || gt_params_parse(f, argv[2], &p, err, sizeof err) || gt_layout_parse(argv[3], &ta, &tb) || m < 1 ||
        n < 1 || k < 1 || reps < 1 || reps > 1000)
        return fprintf(stderr, "time_kernel: bad family, params, layout, shape or reps\n"), 2;
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return fprintf(stderr, "time_kernel: no GPU\n"), 1;
    char dev_arch[16];
    snprintf(dev_arch, sizeof dev_arch, "sm_%d%d", prop.major, prop.minor);
    gt_family_arch(f, dev_arch, arch, sizeof arch);
    const gt_shape s = {.m = m, .n = n, .k = k, .ta = ta, .tb = tb};
    gt_launch L;
    gt_cubin cb = {0};
    gt_kernel *kern = NULL;
    char *src = gt_render(f, &p, ta, tb, 0, err, sizeof err);
    if (!src || gt_nvrtc_compile(src, arch, &cb, err, sizeof err)) return fprintf(stderr, "time_kernel: %s\n", err), 1;
    if (!gt_family_launch(f, &p, &s, prop.multiProcessorCount, &L))
        return fprintf(stderr, "time_kernel: %s cannot run this shape in one launch\n", argv[1]), 1;
    if (gt_kernel_load(cb.data, cb.size, L.smem, f, &p, &kern, err, sizeof err))
        return fprintf(stderr, "time_kernel: %s\n", err), 1;
    free(src);
    float *A, *B, *C, *ws = NULL, *flush;
    const size_t flush_bytes = 256u << 20;
    if (random_buffer(&A, (size_t)m * k, 1) || random_buffer(&B, (size_t)k * n, 2) ||
        cudaMalloc((void **)&C, (size_t)m * n * 4) != cudaSuccess ||
        (L.ws_bytes && cudaMalloc((void **)&ws, L.ws_bytes) != cudaSuccess) ||
        cudaMalloc((void **)&flush, flush_bytes) != cudaSuccess)
        return fprintf(stderr, "time_kernel: out of GPU memory\n"), 1;
    const gt_args a = {.m = m, .n = n, .k = k, .alpha = 1, .beta = 0, .A = A, .B = B, .C = C,
                       .lda = ta ? m : k, .ldb = tb ? k : n, .ldc = n, .ws = ws};
    cudaEvent_t t0, t1;
    cudaEventCreate(&t0), cudaEventCreate(&t1);
    float *ms = malloc(reps * sizeof *ms);
    for (int r = -3; r < reps; ++r) { /* three warm-up calls */
        cudaMemsetAsync(flush, r & 0xff, flush_bytes, NULL);
        cudaEventRecord(t0, NULL);
        if (gt_kernel_launch(kern, &L, NULL, &a, err, sizeof err)) return fprintf(stderr, "time_kernel: %s\n", err), 1;
        cudaEventRecord(t1, NULL);
        if (cudaEventSynchronize(t1) != cudaSuccess) return fprintf(stderr, "time_kernel: the call failed\n"), 1;
        if (r >= 0) cudaEventElapsedTime(&ms[r], t0, t1);
    }
    qsort(ms, reps, sizeof *ms, cmp_float);
    printf("%s %s %s %dx%dx%d: %.1f us (median of %d; min %.1f, max %.1f), grid %ux%ux%u, %d regs, reduce early %d\n",
           argv[1], argv[2], argv[3], m, n, k, ms[reps / 2] * 1e3, reps, ms[0] * 1e3, ms[reps - 1] * 1e3, L.grid[0],
           L.grid[1], L.grid[2], gt_kernel_regs(kern), gt_kernel_reduce_waits(kern));
    return 0;
}
