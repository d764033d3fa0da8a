/* One candidate timed alone, for a study or a profiler (ncu -k regex:gt_ ./time_kernel ...): renders and compiles
 * FAMILY's kernel at PARAMS for LAYOUT, launches it on M x N x K (tight ld's, random inputs, alpha 1, beta 0) as
 * the loader does (gt_kernel_launch: gt_gemm, then any reduce), and prints the median of REPS calls, each after an
 * L2 flush (CUDA events around the call alone). It checks nothing: the tuner and the GPU tests do. `make` builds it
 * as build/time_kernel (carried to a GPU machine with build/, libcjson.so.1 in build/lib).
 * Usage: time_kernel FAMILY PARAMS LAYOUT M N K [REPS [BETWEEN]]. BETWEEN runs another kernel after each call, after
 * a flush of its own, as the sweep's paired re-timing runs cuBLAS (what differs between the two timings):
 *   cublas  cuBLAS SGEMM (pedantic) on the same shape, into another C;
 *   spin    a dependent FMA chain over every SM for about as long (the clocks);
 *   smem    a short kernel that takes all of an SM's shared memory (the carveout);
 *   code    a short kernel of 64 KiB of straight-line code (the instruction caches). */
#include "compile.h"
#include "family.h"
#include "kernel.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>
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

/* The kernels BETWEEN names but cublas, compiled by NVRTC. */
static const char between_src[] =
    "extern \"C\" __global__ void tk_spin(float *o, int iters) {\n"
    "  float a = threadIdx.x, b = 1.0001f;\n"
    "  for (int i = 0; i < iters; ++i) { a = fmaf(a, b, 0.5f); b = fmaf(b, 0.99999f, 1e-6f); }\n"
    "  if (a == 1234.5f) o[0] = a; }\n"
    "extern \"C\" __global__ void tk_smem(float *o) {\n"
    "  extern __shared__ float s[];\n"
    "  s[threadIdx.x] = threadIdx.x; __syncthreads();\n"
    "  if (s[(threadIdx.x + 1) % blockDim.x] < 0.f) o[0] = 1.f; }\n"
    "extern \"C\" __global__ void tk_code(float *o, float x) {\n"
    "  float a = x + threadIdx.x;\n"
    "  #pragma unroll\n"
    "  for (int i = 0; i < 4096; ++i) a = fmaf(a, 1.0001f, (float)(i & 7));\n"
    "  if (a == 1234.5f) o[0] = a; }\n";

enum { TK_NONE, TK_CUBLAS, TK_SPIN, TK_SMEM, TK_CODE, TK_KINDS };

/* Each BETWEEN: its name and its kernel in between_src (none for none and cublas). */
static const struct {
    const char *name, *kernel;
} kinds[TK_KINDS] = {{"none", NULL}, {"cublas", NULL}, {"spin", "tk_spin"}, {"smem", "tk_smem"}, {"code", "tk_code"}};

typedef struct {
    int kind; /* TK_* */
    unsigned sms;
    cublasHandle_t h;
    cudaKernel_t k;
    float *out, *c2; /* the kernels' sink; cuBLAS's C */
} between;

static int between_init(between *b, const char *name, const char *arch, int sms, size_t c_bytes)
{
    memset(b, 0, sizeof *b);
    b->sms = (unsigned)sms;
    for (b->kind = 0; b->kind < TK_KINDS && strcmp(kinds[b->kind].name, name); ++b->kind) {}
    if (b->kind == TK_KINDS) return fprintf(stderr, "time_kernel: BETWEEN is none, cublas, spin, smem or code\n"), -1;
    if (b->kind == TK_CUBLAS &&
        (cublasCreate(&b->h) != CUBLAS_STATUS_SUCCESS || cublasSetMathMode(b->h, CUBLAS_PEDANTIC_MATH) ||
         cudaMalloc((void **)&b->c2, c_bytes) != cudaSuccess))
        return fprintf(stderr, "time_kernel: cuBLAS\n"), -1;
    if (!kinds[b->kind].kernel) return 0;
    gt_cubin cb = {0};
    cudaLibrary_t lib;
    char err[1024] = "";
    if (gt_nvrtc_compile(between_src, arch, &cb, err, sizeof err) ||
        cudaLibraryLoadData(&lib, cb.data, NULL, NULL, 0, NULL, NULL, 0) != cudaSuccess ||
        cudaLibraryGetKernel(&b->k, lib, kinds[b->kind].kernel) != cudaSuccess ||
        cudaMalloc((void **)&b->out, 4) != cudaSuccess)
        return fprintf(stderr, "time_kernel: the BETWEEN kernel: %s\n", err), -1;
    if (b->kind == TK_SMEM && cudaFuncSetAttribute((const void *)b->k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   227 * 1024) != cudaSuccess)
        return fprintf(stderr, "time_kernel: 227 KiB of shared memory refused\n"), -1;
    return 0;
}

/* The kernel between two timed calls (nothing for none). */
static void between_run(between *b, const gt_args *a, int ta, int tb)
{
    int iters = 20000;
    float x = 1.f;
    void *spin[] = {&b->out, &iters}, *one[] = {&b->out}, *code[] = {&b->out, &x};
    const float alpha = 1, beta = 0;
    const void *k = (const void *)b->k;
    switch (b->kind) {
    case TK_CUBLAS:
        cublasSgemm(b->h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, a->n, a->m, a->k, &alpha,
                    a->B, a->ldb, a->A, a->lda, &beta, b->c2, a->n);
        break;
    case TK_SPIN: cudaLaunchKernel(k, (dim3){4 * b->sms, 1, 1}, (dim3){256, 1, 1}, spin, 0, NULL); break;
    case TK_SMEM: cudaLaunchKernel(k, (dim3){b->sms, 1, 1}, (dim3){1024, 1, 1}, one, 227 * 1024, NULL); break;
    case TK_CODE: cudaLaunchKernel(k, (dim3){2 * b->sms, 1, 1}, (dim3){256, 1, 1}, code, 0, NULL); break;
    }
}

int main(int argc, char **argv)
{
    char err[1024], arch[32];
    gt_params p;
    int ta, tb;
    if (argc < 7) return fprintf(stderr, "usage: time_kernel FAMILY PARAMS LAYOUT M N K [REPS [BETWEEN]]\n"), 2;
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
    between bw;
    if (between_init(&bw, argc > 8 ? argv[8] : "none", arch, prop.multiProcessorCount, (size_t)m * n * 4)) return 1;
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
        if (bw.kind != TK_NONE) {
            cudaMemsetAsync(flush, (r + 128) & 0xff, flush_bytes, NULL);
            between_run(&bw, &a, ta, tb);
        }
    }
    qsort(ms, reps, sizeof *ms, cmp_float);
    const char *bname = argc > 8 ? argv[8] : NULL;
    printf("%s%s%s %s %s %s %dx%dx%d: %.1f us (median of %d; min %.1f, max %.1f), grid %ux%ux%u, %d regs, "
           "reduce early %d\n",
           bname ? "between " : "", bname ? bname : "", bname ? ": " : "", argv[1], argv[2], argv[3], m, n, k,
           ms[reps / 2] * 1e3, reps, ms[0] * 1e3, ms[reps - 1] * 1e3, L.grid[0], L.grid[1], L.grid[2],
           gt_kernel_regs(kern), gt_kernel_reduce_waits(kern));
    return 0;
}
