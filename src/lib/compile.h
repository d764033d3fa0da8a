/* Run-time compilation of rendered CUDA source to a cubin with NVRTC. Needs no GPU: only an arch string,
 * so it is tested on CPU machines (tests/test_nvrtc.c). Thread-safe: every call owns its program. */
#ifndef GT_COMPILE_H
#define GT_COMPILE_H

#include <stddef.h>

typedef struct {
    unsigned char *data; /* cubin image, malloc'd */
    size_t size;
    int regs;            /* registers per thread of gt_gemm, -1 if ptxas did not say */
    int spill_bytes;     /* spill stores + loads of gt_gemm in bytes, -1 if unknown */
    int stack_bytes;     /* stack frame of gt_gemm */
    double seconds;      /* wall time of the compile */
    char *log;           /* NVRTC + ptxas log, malloc'd, may be NULL */
} gt_cubin;

/* Compile src for arch ("sm_90"). Returns 0 on success; 1 when the source does not compile (the log says why,
 * also in out->log); -1 when NVRTC itself failed (err says why). out is always safe to gt_cubin_free. A virtual
 * arch ("compute_90") is a check of the source alone (the CPU tests' pass over every default candidate), never
 * loaded: it stops before ptxas, at NVRTC's fastest optimization level (-Ofc=max: its front end, whatever a params
 * value can break there, in an eighth of the time), out->data holds the PTX, and registers and spills are unknown
 * (-1). */
int gt_nvrtc_compile(const char *src, const char *arch, gt_cubin *out, char *err, size_t errlen);
/* A compiler with gt_nvrtc_compile's contract (the tuner's compile pool takes one; its tests give a fake). */
typedef int (*gt_compile_fn)(const char *src, const char *arch, gt_cubin *out, char *err, size_t errlen);

void gt_cubin_free(gt_cubin *c);

/* NVRTC version as major*1000 + minor*10 (13000 for 13.0). */
int gt_nvrtc_version(void);

/* The option string a compile uses, for cache keys ("--gpu-architecture=sm_90 ..."). */
const char *gt_nvrtc_options(void);

#endif
