/* Validation and timing of one GEMM implementation against cuBLAS FP32 (pedantic). See measure.h.
 * Operands are generated on the device from a seed (fresh for every check), never zeros. */
#include "measure.h"
#include "compile.h"
#include "cuda_check.h"
#include "device.h"
#include "family.h"

#include <cublas_v2.h>
#include <dlfcn.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    float *p;
    size_t cap; /* floats */
} dbuf;

struct gt_measure {
    int device;
    cudaStream_t stream;
    cublasHandle_t cublas;
    cudaLibrary_t util;
    cudaKernel_t k_fill, k_set, k_abs, k_compare, k_same, k_scale, k_widen, k_compare64, k_code_flush;
    dbuf a, b, c, c0, ref, aa, ab, absprod, scratch;
    dbuf a64, b64, r64; /* FP64 copies of A, B and C0 (then the DGEMM result), in floats' worth of room */
    void *flush;
    size_t flush_bytes;
    unsigned *maxbits;
    cudaEvent_t ev[2];
    int sm_count;
    gt_shape timed;  /* the shape whose timing operands a, b, c hold, when timed_ready */
    int timed_ready;
};

#define CUBLAS_TRY(call)                                                                                       \
    GT_TRY_GEN(cublasStatus_t, CUBLAS_STATUS_SUCCESS, cublasGetStatusString, call, #call, return -1)

static int reserve(dbuf *b, size_t n, char *err, size_t errlen)
{
    if (b->cap >= n) return 0;
    if (b->p) cudaFree(b->p);
    b->p = NULL;
    b->cap = 0;
    GT_CUDA_TRY(cudaMalloc((void **)&b->p, n * sizeof(float)));
    b->cap = n;
    return 0;
}

static int load_util(gt_measure *m, const char *arch, char *err, size_t errlen)
{
    gt_cubin cb;
    const char *src = gt_template_text("measure.cu"); /* the helper kernels, embedded from templates/ */
    if (!src) {
        snprintf(err, errlen, "helper kernels: templates/measure.cu is not embedded");
        return -1;
    }
    if (gt_nvrtc_compile(src, arch, &cb, err, errlen) != 0) {
        gt_cubin_free(&cb);
        return -1;
    }
    cudaError_t e = cudaLibraryLoadData(&m->util, cb.data, NULL, NULL, 0, NULL, NULL, 0);
    gt_cubin_free(&cb);
    GT_CUDA_CHECK(e, "loading helper kernels", return -1);
    GT_CUDA_TRY(cudaLibraryGetKernel(&m->k_fill, m->util, "gt_fill"));
    GT_CUDA_TRY(cudaLibraryGetKernel(&m->k_set, m->util, "gt_set"));
    GT_CUDA_TRY(cudaLibraryGetKernel(&m->k_abs, m->util, "gt_abs"));
    GT_CUDA_TRY(cudaLibraryGetKernel(&m->k_compare, m->util, "gt_compare"));
    GT_CUDA_TRY(cudaLibraryGetKernel(&m->k_same, m->util, "gt_same"));
    GT_CUDA_TRY(cudaLibraryGetKernel(&m->k_scale, m->util, "gt_scale"));
    GT_CUDA_TRY(cudaLibraryGetKernel(&m->k_widen, m->util, "gt_widen"));
    GT_CUDA_TRY(cudaLibraryGetKernel(&m->k_compare64, m->util, "gt_compare64"));
    GT_CUDA_TRY(cudaLibraryGetKernel(&m->k_code_flush, m->util, "gt_code_flush"));
    return 0;
}

int gt_measure_device_count(char *why, size_t whylen)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaSuccess && n > 0) return n;
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL); /* CUDA's own text would suggest a driver upgrade */
    if (!h) snprintf(why, whylen, "no NVIDIA driver is installed (libcuda.so.1 not found), so this machine has no usable GPU");
    else if (e == cudaSuccess || e == cudaErrorNoDevice) snprintf(why, whylen, "the NVIDIA driver found no GPU");
    else if (e == cudaErrorInsufficientDriver)
        snprintf(why, whylen, "the NVIDIA driver is older than the CUDA runtime gemmtune was built with: update it");
    else snprintf(why, whylen, "%s", cudaGetErrorString(e));
    if (h) dlclose(h);
    return 0;
}

/* The device's stream, pedantic cuBLAS handle, events and reduction word. 0, or -1 with the failing call in err
 * (a cuBLAS failure leaves no CUDA error to ask for afterwards). */
static int setup(gt_measure *m, int device, struct cudaDeviceProp *prop, char *err, size_t errlen)
{
    GT_CUDA_TRY(cudaSetDevice(device));
    GT_CUDA_TRY(cudaGetDeviceProperties(prop, device));
    GT_CUDA_TRY(cudaStreamCreateWithFlags(&m->stream, cudaStreamNonBlocking));
    CUBLAS_TRY(cublasCreate(&m->cublas));
    CUBLAS_TRY(cublasSetMathMode(m->cublas, CUBLAS_PEDANTIC_MATH));
    CUBLAS_TRY(cublasSetStream(m->cublas, m->stream));
    GT_CUDA_TRY(cudaEventCreate(&m->ev[0]));
    GT_CUDA_TRY(cudaEventCreate(&m->ev[1]));
    GT_CUDA_TRY(cudaMalloc((void **)&m->maxbits, sizeof(unsigned)));
    return 0;
}

int gt_measure_open(int device, gt_measure **out, char *err, size_t errlen)
{
    gt_measure *m = calloc(1, sizeof *m);
    struct cudaDeviceProp prop;
    char arch[16];
    *out = NULL;
    if (!m) return snprintf(err, errlen, "out of memory"), -1;
    m->device = device;
    char why[200];
    int ndev = gt_measure_device_count(why, sizeof why);
    if (ndev == 0) {
        snprintf(err, errlen, "no CUDA device is available: %s", why);
        free(m);
        return -1;
    }
    if (device < 0 || device >= ndev) {
        snprintf(err, errlen, "GPU %d does not exist: this machine has %d CUDA device%s (0..%d)", device, ndev,
                 ndev == 1 ? "" : "s", ndev - 1);
        free(m);
        return -1;
    }
    if (setup(m, device, &prop, why, sizeof why)) {
        snprintf(err, errlen, "setting up GPU %d: %s", device, why);
        goto fail;
    }
    m->sm_count = prop.multiProcessorCount;
    /* Twice the L2 so one pass of writes evicts every operand line. */
    m->flush_bytes = 2 * (size_t)(prop.l2CacheSize > 0 ? prop.l2CacheSize : 64 << 20);
    snprintf(arch, sizeof arch, "sm_%d%d", prop.major, prop.minor);
    GT_CUDA_CHECK(cudaMalloc(&m->flush, m->flush_bytes), "allocating the L2 flush buffer", goto fail);
    if (load_util(m, arch, err, errlen) != 0) goto fail;
    *out = m;
    return 0;
fail:
    gt_measure_close(m);
    return -1;
}

void gt_measure_close(gt_measure *m)
{
    if (!m) return;
    dbuf *bufs[] = {&m->a, &m->b, &m->c, &m->c0, &m->ref, &m->aa, &m->ab, &m->absprod, &m->scratch,
                    &m->a64, &m->b64, &m->r64};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; ++i)
        if (bufs[i]->p) cudaFree(bufs[i]->p);
    if (m->flush) cudaFree(m->flush);
    if (m->maxbits) cudaFree(m->maxbits);
    if (m->util) cudaLibraryUnload(m->util);
    if (m->ev[0]) cudaEventDestroy(m->ev[0]);
    if (m->ev[1]) cudaEventDestroy(m->ev[1]);
    if (m->cublas) cublasDestroy(m->cublas);
    if (m->stream) cudaStreamDestroy(m->stream);
    free(m);
}

static void uuid_text(const unsigned char *u, char *out, size_t n)
{
    snprintf(out, n, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
             u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* The SM clock now, through NVML when the driver ships it (loaded at run time: no build dependency). 0 if unknown. */
static int sm_clock_now(const char *uuid)
{
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return 0;
    int (*init)(void) = (int (*)(void))dlsym(h, "nvmlInit_v2");
    int (*by_uuid)(const char *, void **) = (int (*)(const char *, void **))dlsym(h, "nvmlDeviceGetHandleByUUID");
    int (*clock)(void *, int, unsigned *) = (int (*)(void *, int, unsigned *))dlsym(h, "nvmlDeviceGetClockInfo");
    int (*shutdown)(void) = (int (*)(void))dlsym(h, "nvmlShutdown");
    void *dev = NULL;
    unsigned mhz = 0;
    if (init && by_uuid && clock && shutdown && init() == 0) {
        if (by_uuid(uuid, &dev) != 0 || clock(dev, 1 /* NVML_CLOCK_SM */, &mhz) != 0) mhz = 0;
        shutdown();
    }
    dlclose(h);
    return (int)mhz;
}

/* The NVIDIA driver's version ("580.159.04"): NVML when the driver ships it, else the kernel module's own line in
 * /proc/driver/nvidia/version; "" when neither answers. */
static void nvidia_driver(char *out, size_t n)
{
    out[0] = 0;
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    int (*init)(void) = h ? (int (*)(void))dlsym(h, "nvmlInit_v2") : NULL;
    int (*version)(char *, unsigned) = h ? (int (*)(char *, unsigned))dlsym(h, "nvmlSystemGetDriverVersion") : NULL;
    int (*shutdown)(void) = h ? (int (*)(void))dlsym(h, "nvmlShutdown") : NULL;
    if (init && version && shutdown && init() == 0) {
        if (version(out, (unsigned)n) != 0) out[0] = 0;
        shutdown();
    }
    if (h) dlclose(h);
    FILE *f = out[0] ? NULL : fopen("/proc/driver/nvidia/version", "r");
    char line[512], *at, *save = NULL; /* "NVRM version: NVIDIA UNIX [Open] Kernel Module [for x86_64]  580.159.04  ..." */
    if (f && fgets(line, sizeof line, f) && (at = strstr(line, "Kernel Module")))
        for (char *t = strtok_r(at, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save))
            if (strchr(t, '.') && strspn(t, "0123456789.") == strlen(t)) {
                snprintf(out, n, "%s", t);
                break;
            }
    if (f) fclose(f);
}

int gt_measure_gpu_info(gt_measure *m, gt_gpu_info *gpu, gt_limits *lim, char *err, size_t errlen)
{
    struct cudaDeviceProp p;
    GT_CUDA_TRY(cudaGetDeviceProperties(&p, m->device));
    memset(gpu, 0, sizeof *gpu);
    snprintf(gpu->name, sizeof gpu->name, "%.127s", p.name);
    gpu->cc_major = p.major;
    gpu->cc_minor = p.minor;
    gpu->sm_count = p.multiProcessorCount;
    uuid_text((const unsigned char *)p.uuid.bytes, gpu->uuid, sizeof gpu->uuid);
    gpu->mem_bytes = (long long)p.totalGlobalMem;
    gpu->l2_bytes = p.l2CacheSize;
    cudaDriverGetVersion(&gpu->driver_version);
    cudaRuntimeGetVersion(&gpu->cuda_version);
    nvidia_driver(gpu->nvidia_driver, sizeof gpu->nvidia_driver);
    gpu->nvrtc_version = gt_nvrtc_version();
    int khz = 0;
    gpu->sm_clock_mhz = sm_clock_now(gpu->uuid);
    if (!gpu->sm_clock_mhz && cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, m->device) == cudaSuccess)
        gpu->sm_clock_mhz = khz / 1000; /* the rated clock, when NVML cannot say the current one */
    *lim = gt_device_limits(&p); /* the loader's limits, from the same properties */
    return 0;
}

/* Launch a grid-stride helper kernel over n elements. */
static int util(gt_measure *m, cudaKernel_t k, void **args, size_t n, char *err, size_t errlen)
{
    unsigned blocks = (unsigned)((n + 255) / 256);
    if (blocks > 8u * (unsigned)m->sm_count) blocks = 8u * (unsigned)m->sm_count;
    if (blocks == 0) blocks = 1;
    GT_CUDA_TRY(cudaLaunchKernel((const void *)k, (dim3){blocks, 1, 1}, (dim3){256, 1, 1}, args, 0, m->stream));
    return 0;
}

static int fill(gt_measure *m, float *p, size_t n, unsigned long long seed, char *err, size_t errlen)
{
    unsigned long long nn = n;
    void *args[] = {&p, &nn, &seed};
    return util(m, m->k_fill, args, n, err, errlen);
}

static int set(gt_measure *m, float *p, size_t n, float v, char *err, size_t errlen)
{
    unsigned long long nn = n;
    void *args[] = {&p, &nn, &v};
    return util(m, m->k_set, args, n, err, errlen);
}

/* GT_INPUTS_WIDE / GT_INPUTS_ROWS: scale the uniform values of an operand stored with leading dimension ld. */
static int scale(gt_measure *m, float *p, size_t n, size_t ld, int mode, unsigned long long seed, char *err,
                 size_t errlen)
{
    unsigned long long nn = n, l = ld ? ld : 1;
    void *args[] = {&p, &nn, &l, &mode, &seed};
    return mode == GT_INPUTS_UNIFORM ? 0 : util(m, m->k_scale, args, n, err, errlen);
}

static int widen(gt_measure *m, const float *s, double *d, size_t n, char *err, size_t errlen)
{
    unsigned long long nn = n;
    void *args[] = {&s, &d, &nn};
    return util(m, m->k_widen, args, n, err, errlen);
}

static int absval(gt_measure *m, const float *s, float *d, size_t n, char *err, size_t errlen)
{
    unsigned long long nn = n;
    void *args[] = {&s, &d, &nn};
    return util(m, m->k_abs, args, n, err, errlen);
}

int gt_measure_cublas_run(void *ctx, const gt_args *a, cudaStream_t stream, char *err, size_t errlen)
{
    gt_measure *m = ctx;
    (void)stream;
    /* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands and m, n. */
    cublasOperation_t ob = a->tb ? CUBLAS_OP_T : CUBLAS_OP_N, oa = a->ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    if (a->batch > 1)
        CUBLAS_TRY(cublasSgemmStridedBatched(m->cublas, ob, oa, a->n, a->m, a->k, &a->alpha, a->B, a->ldb, a->sb,
                                             a->A, a->lda, a->sa, &a->beta, a->C, a->ldc, a->sc, a->batch));
    else
        CUBLAS_TRY(cublasSgemm(m->cublas, ob, oa, a->n, a->m, a->k, &a->alpha, a->B, a->ldb, a->A, a->lda, &a->beta,
                               a->C, a->ldc));
    return 0;
}

float *gt_measure_scratch(gt_measure *m, size_t bytes, char *err, size_t errlen)
{
    return reserve(&m->scratch, (bytes + 3) / 4, err, errlen) == 0 ? m->scratch.p : NULL;
}

/* Operand geometry of a check: every leading dimension, and the elements of one matrix of A, B and C (a batch's
 * strides: its matrices lie back to back, so C of a batch is one (batch m) x ldc matrix to the compare kernels)
 * and of the whole batch. */
typedef struct {
    int lda, ldb, ldc, batch;
    size_t sa, sb, sc, na, nb, nc;
} geom;

static geom geometry(const gt_shape *s, int pad_a, int pad_b, int pad_c)
{
    geom g;
    g.lda = (s->ta ? s->m : s->k) + pad_a;
    g.ldb = (s->tb ? s->k : s->n) + pad_b;
    g.ldc = s->n + pad_c;
    g.batch = gt_shape_batch(s);
    g.sa = (size_t)(s->ta ? s->k : s->m) * g.lda;
    g.sb = (size_t)(s->tb ? s->n : s->k) * g.ldb;
    g.sc = (size_t)s->m * g.ldc;
    g.na = g.sa * g.batch, g.nb = g.sb * g.batch, g.nc = g.sc * g.batch;
    return g;
}

static gt_args args_for(gt_measure *m, const gt_shape *s, const geom *g, float alpha, float beta, float *c)
{
    return (gt_args){.m = s->m, .n = s->n, .k = s->k, .ta = s->ta, .tb = s->tb, .alpha = alpha, .beta = beta,
                     .A = m->a.p, .B = m->b.p, .C = c, .lda = g->lda, .ldb = g->ldb, .ldc = g->ldc,
                     .batch = g->batch, .sa = (long long)g->sa, .sb = (long long)g->sb, .sc = (long long)g->sc};
}

/* Fresh operands: A and B uniform in [-1, 1); C0 random when beta != 0, NaN when beta == 0. */
static int make_operands(gt_measure *m, const gt_check_spec *sp, const geom *g, char *err, size_t errlen)
{
    const gt_shape *s = &sp->s;
    const size_t na = g->na, nb = g->nb, nc = g->nc;
    m->timed_ready = 0;
    if (reserve(&m->a, na, err, errlen) || reserve(&m->b, nb, err, errlen) || reserve(&m->c, nc, err, errlen) ||
        reserve(&m->c0, nc, err, errlen) || reserve(&m->ref, nc, err, errlen) || reserve(&m->aa, na, err, errlen) ||
        reserve(&m->ab, nb, err, errlen) || reserve(&m->absprod, (size_t)s->m * s->n * g->batch, err, errlen))
        return -1;
    if (fill(m, m->a.p, na, sp->seed * 3 + 1, err, errlen) || fill(m, m->b.p, nb, sp->seed * 3 + 2, err, errlen) ||
        scale(m, m->a.p, na, (size_t)g->lda, sp->inputs, sp->seed * 5 + 1, err, errlen) ||
        scale(m, m->b.p, nb, (size_t)g->ldb, sp->inputs, sp->seed * 5 + 2, err, errlen))
        return -1;
    if (sp->beta != 0.0f ? fill(m, m->c0.p, nc, sp->seed * 3 + 3, err, errlen) : set(m, m->c0.p, nc, NAN, err, errlen))
        return -1;
    GT_CUDA_TRY(cudaMemcpyAsync(m->c.p, m->c0.p, nc * 4, cudaMemcpyDeviceToDevice, m->stream));
    GT_CUDA_TRY(cudaMemcpyAsync(m->ref.p, m->c0.p, nc * 4, cudaMemcpyDeviceToDevice, m->stream));
    if (absval(m, m->a.p, m->aa.p, na, err, errlen) || absval(m, m->b.p, m->ab.p, nb, err, errlen)) return -1;
    return 0;
}

/* A reduction helper into m->maxbits (its last argument), zeroed first: *out gets the word it leaves. */
static int util_word(gt_measure *m, cudaKernel_t k, void **args, size_t n, unsigned *out, char *err, size_t errlen)
{
    GT_CUDA_TRY(cudaMemsetAsync(m->maxbits, 0, sizeof(unsigned), m->stream));
    if (util(m, k, args, n, err, errlen)) return -1;
    GT_CUDA_TRY(cudaMemcpyAsync(out, m->maxbits, sizeof *out, cudaMemcpyDeviceToHost, m->stream));
    GT_CUDA_TRY(cudaStreamSynchronize(m->stream));
    return 0;
}

/* *same = 1 when run() on the check's inputs again (C restored from C0) gives C bit for bit. */
static int rerun_same(gt_measure *m, const gt_args *first, gt_run_fn run, void *ctx, int *same, char *err,
                      size_t errlen)
{
    const size_t nc = (size_t)first->m * first->ldc * (first->batch > 1 ? first->batch : 1);
    gt_args again = *first;
    again.C = m->ref.p;
    GT_CUDA_TRY(cudaMemcpyAsync(m->ref.p, m->c0.p, nc * 4, cudaMemcpyDeviceToDevice, m->stream));
    if (run(ctx, &again, m->stream, err, errlen)) return -1;
    const float *a = first->C, *b = again.C;
    unsigned long long n = nc;
    void *args[] = {&a, &b, &n, &m->maxbits};
    unsigned diff = 1;
    if (util_word(m, m->k_same, args, nc, &diff, err, errlen)) return -1;
    *same = diff == 0;
    return 0;
}

static int dgemm(gt_measure *m, const gt_check_spec *sp, const geom *g, char *err, size_t errlen);

/* One check's runs on fresh operands: |A||B| (each element's error bound) and the cuBLAS FP32 pedantic reference
 * into m->ref, with fp64 also DGEMM into m->r64, then run() into m->c with *runargs. */
static int check_runs(gt_measure *m, const gt_check_spec *sp, const geom *g, int fp64, gt_run_fn run, void *ctx,
                      gt_args *runargs, char *err, size_t errlen)
{
    const gt_shape *s = &sp->s;
    if (make_operands(m, sp, g, err, errlen)) return -1;
    gt_args absargs = args_for(m, s, g, 1.0f, 0.0f, m->absprod.p);
    absargs.A = m->aa.p;
    absargs.B = m->ab.p;
    absargs.ldc = s->n;
    absargs.sc = (long long)s->m * s->n;
    gt_args refargs = args_for(m, s, g, sp->alpha, sp->beta, m->ref.p);
    *runargs = args_for(m, s, g, sp->alpha, sp->beta, m->c.p);
    if (gt_measure_cublas_run(m, &absargs, m->stream, err, errlen) ||
        gt_measure_cublas_run(m, &refargs, m->stream, err, errlen) || (fp64 && dgemm(m, sp, g, err, errlen)))
        return -1;
    GT_CUDA_TRY(cudaStreamSynchronize(m->stream));
    if (run(ctx, runargs, m->stream, err, errlen)) return -1;
    GT_CUDA_TRY(cudaStreamSynchronize(m->stream));
    return 0;
}

int gt_measure_check(gt_measure *m, const gt_check_spec *sp, gt_run_fn run, void *ctx, double *rel_err, int *same,
                     char *err, size_t errlen)
{
    const gt_shape *s = &sp->s;
    geom g = geometry(s, sp->pad_a, sp->pad_b, sp->pad_c);
    gt_args runargs;
    *rel_err = INFINITY;
    if (check_runs(m, sp, &g, 0, run, ctx, &runargs, err, errlen)) return -1;
    const float *c = m->c.p, *r = m->ref.p, *ab = m->absprod.p, *c0 = m->c0.p;
    int M = s->m * g.batch, N = s->n, ldc = g.ldc; /* a batch's matrices, stacked */
    float alpha = sp->alpha, beta = sp->beta;
    unsigned *mb = m->maxbits;
    void *args[] = {&c, &r, &ab, &c0, &M, &N, &ldc, &alpha, &beta, &mb};
    unsigned bits = 0;
    if (util_word(m, m->k_compare, args, (size_t)M * ldc, &bits, err, errlen)) return -1;
    float worst;
    memcpy(&worst, &bits, sizeof worst);
    *rel_err = worst;
    return same ? rerun_same(m, &runargs, run, ctx, same, err, errlen) : 0;
}

/* The worst of gt_compare64 over C against the FP64 result in m->r64. */
static int worst64(gt_measure *m, const float *c, const gt_check_spec *sp, int ldc, double *out, char *err,
                   size_t errlen)
{
    const double *r = (const double *)m->r64.p;
    const float *ab = m->absprod.p, *c0 = m->c0.p;
    int M = sp->s.m * gt_shape_batch(&sp->s), N = sp->s.n; /* a batch's matrices, stacked */
    float alpha = sp->alpha, beta = sp->beta;
    void *args[] = {&c, &r, &ab, &c0, &M, &N, &ldc, &alpha, &beta, &m->maxbits};
    unsigned bits = 0;
    if (util_word(m, m->k_compare64, args, (size_t)M * ldc, &bits, err, errlen)) return -1;
    float worst;
    memcpy(&worst, &bits, sizeof worst);
    *out = worst;
    return 0;
}

/* C64 = alpha op(A) op(B) + beta C0 in FP64 (cuBLAS DGEMM on the widened operands), into m->r64. */
static int dgemm(gt_measure *m, const gt_check_spec *sp, const geom *g, char *err, size_t errlen)
{
    const gt_shape *s = &sp->s;
    const size_t na = g->na, nb = g->nb, nc = g->nc;
    if (reserve(&m->a64, 2 * na, err, errlen) || reserve(&m->b64, 2 * nb, err, errlen) ||
        reserve(&m->r64, 2 * nc, err, errlen))
        return -1;
    double *A = (double *)m->a64.p, *B = (double *)m->b64.p, *C = (double *)m->r64.p;
    const double alpha = sp->alpha, beta = sp->beta;
    if (widen(m, m->a.p, A, na, err, errlen) || widen(m, m->b.p, B, nb, err, errlen) ||
        widen(m, m->c0.p, C, nc, err, errlen))
        return -1;
    cublasOperation_t ob = s->tb ? CUBLAS_OP_T : CUBLAS_OP_N, oa = s->ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    CUBLAS_TRY(cublasDgemmStridedBatched(m->cublas, ob, oa, s->n, s->m, s->k, &alpha, B, g->ldb, (long long)g->sb, A,
                                         g->lda, (long long)g->sa, &beta, C, g->ldc, (long long)g->sc, g->batch));
    return 0;
}

int gt_measure_check_fp64(gt_measure *m, const gt_check_spec *sp, gt_run_fn run, void *ctx, double *rel_err,
                          double *fp32_err, char *err, size_t errlen)
{
    geom g = geometry(&sp->s, sp->pad_a, sp->pad_b, sp->pad_c);
    gt_args runargs;
    *rel_err = *fp32_err = INFINITY;
    if (check_runs(m, sp, &g, 1, run, ctx, &runargs, err, errlen)) return -1;
    return worst64(m, m->c.p, sp, g.ldc, rel_err, err, errlen) ||
                   worst64(m, m->ref.p, sp, g.ldc, fp32_err, err, errlen)
               ? -1
               : 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Timing operands: random A, B, C with tight leading dimensions, kept while the shape repeats (checks refill). */
static int timing_operands(gt_measure *m, const gt_shape *s, const geom *g, char *err, size_t errlen)
{
    const size_t na = g->na, nb = g->nb, nc = g->nc;
    if (m->timed_ready && gt_shape_equal(&m->timed, s)) return 0;
    if (reserve(&m->a, na, err, errlen) || reserve(&m->b, nb, err, errlen) || reserve(&m->c, nc, err, errlen) ||
        fill(m, m->a.p, na, 12345, err, errlen) || fill(m, m->b.p, nb, 12346, err, errlen) ||
        fill(m, m->c.p, nc, 12347, err, errlen))
        return -1;
    m->timed = *s;
    m->timed_ready = 1;
    return 0;
}

/* Evict the SMs' instruction caches (gt_code_flush on every SM), then L2 (a memset of twice its size): the next
 * call starts as a call in a program does, its code and operands in device memory alone. */
static int flush_caches(gt_measure *m, int i, char *err, size_t errlen)
{
    float x = 1.0f;
    void *args[] = {&m->flush, &x}; /* the flush buffer: a write there would never be read */
    const dim3 grid = {2 * (unsigned)m->sm_count, 1, 1}, block = {128, 1, 1}; /* a warp per scheduler */
    GT_CUDA_CHECK(cudaLaunchKernel((const void *)m->k_code_flush, grid, block, args, 0, m->stream), "timing",
                  return -1);
    GT_CUDA_CHECK(cudaMemsetAsync(m->flush, i & 0xff, m->flush_bytes, m->stream), "timing", return -1);
    return 0;
}

/* One launch between two events; flush the caches first to start cold (flush_caches). */
static int timed_launch(gt_measure *m, gt_run_fn run, void *ctx, const gt_args *a, int flush, int i, float *ms,
                        char *err, size_t errlen)
{
    if (flush && flush_caches(m, i, err, errlen)) return -1;
    GT_CUDA_CHECK(cudaEventRecord(m->ev[0], m->stream), "timing", return -1);
    if (run(ctx, a, m->stream, err, errlen)) return -1;
    GT_CUDA_CHECK(cudaEventRecord(m->ev[1], m->stream), "timing", return -1);
    GT_CUDA_CHECK(cudaEventSynchronize(m->ev[1]), "timing", return -1);
    GT_CUDA_CHECK(cudaEventElapsedTime(ms, m->ev[0], m->ev[1]), "timing", return -1);
    return 0;
}

int gt_measure_time(gt_measure *m, const gt_shape *s, gt_run_fn run, void *ctx, int warmup, int reps,
                    double cutoff_ms, double *median_ms, double *min_ms, double *max_ms, char *err, size_t errlen)
{
    geom g = geometry(s, 0, 0, 0);
    err[0] = '\0';
    if (reps < 1) reps = 1;
    if (cutoff_ms > 0 && warmup < 1) warmup = 1; /* the first launch may load the module: never judge it */
    double *t = calloc((size_t)reps, sizeof *t), total = 0;
    if (!t) return snprintf(err, errlen, "out of memory"), -1;
    int rc = -1;
    if (timing_operands(m, s, &g, err, errlen)) goto out;
    gt_args a = args_for(m, s, &g, 1.0f, 0.0f, m->c.p);
    for (int i = 0; i < warmup + reps; ++i) {
        float ms = 0;
        /* Timed runs evict A, B and C from L2 first, so each reads them from device memory as a cold call would. */
        if (timed_launch(m, run, ctx, &a, i >= warmup, i, &ms, err, errlen)) goto out;
        if (i == 1 && cutoff_ms > 0 && ms > cutoff_ms) {
            *median_ms = *min_ms = *max_ms = ms;
            rc = 1;
            goto out;
        }
        if (i < warmup) continue;
        t[i - warmup] = ms;
        /* A slow candidate stops early: three runs already rank it, and the sweep has better uses for time. */
        total += ms;
        if (i - warmup >= 2 && total > 2000.0) reps = i - warmup + 1;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    *median_ms = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
    *min_ms = t[0];
    *max_ms = t[reps - 1];
    rc = 0;
out:
    free(t);
    return rc;
}

int gt_measure_time_interleaved(gt_measure *m, const gt_shape *s, float beta, int n, const gt_run_fn *run,
                                void *const *ctx, int warmup, int reps, double *medians, double *mins, double *maxs,
                                char *err, size_t errlen)
{
    geom g = geometry(s, 0, 0, 0);
    err[0] = '\0';
    if (reps < 1) reps = 1;
    double *t = calloc((size_t)n * (size_t)reps, sizeof *t);
    if (!t) return snprintf(err, errlen, "out of memory"), -1;
    int rc = timing_operands(m, s, &g, err, errlen);
    gt_args a = args_for(m, s, &g, 1.0f, beta, m->c.p);
    for (int r = 0; rc == 0 && r < warmup + reps; ++r)
        for (int i = 0; rc == 0 && i < n; ++i) {
            float ms = 0;
            rc = timed_launch(m, run[i], ctx[i], &a, r >= warmup, r * n + i, &ms, err, errlen);
            if (r >= warmup) t[(size_t)i * reps + (r - warmup)] = ms;
        }
    for (int i = 0; rc == 0 && i < n; ++i) {
        double *v = t + (size_t)i * reps;
        qsort(v, (size_t)reps, sizeof *v, cmp_double);
        medians[i] = reps % 2 ? v[reps / 2] : 0.5 * (v[reps / 2 - 1] + v[reps / 2]);
        if (mins) mins[i] = v[0];
        if (maxs) maxs[i] = v[reps - 1];
    }
    free(t);
    return rc;
}
