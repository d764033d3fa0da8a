/* NVRTC compile of rendered source to cubin, with ptxas's resource report parsed for registers and spills. */
#include "compile.h"
#include "family.h"

#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Fixed options: IEEE FP32 (no fast math, no flush to zero), FMA contraction as cuBLAS does it. */
static const char *const base_opts[] = {"--std=c++17", "--fmad=true", "--ptxas-options=-v", "-default-device"};
enum { NBASE = (int)(sizeof base_opts / sizeof base_opts[0]) };

const char *gt_nvrtc_options(void) { return "--std=c++17 --fmad=true -default-device"; }

int gt_nvrtc_version(void)
{
    int major = 0, minor = 0;
    if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return 0;
    return major * 1000 + minor * 10;
}

void gt_cubin_free(gt_cubin *c)
{
    if (!c) return;
    free(c->data);
    free(c->log);
    memset(c, 0, sizeof *c);
}

/* ptxas -v prints one block per kernel; take the numbers that follow "Function properties for gt_gemm". */
static void parse_resources(gt_cubin *c)
{
    c->regs = c->spill_bytes = -1;
    c->stack_bytes = 0;
    if (!c->log) return;
    const char *s = strstr(c->log, "Function properties for gt_gemm");
    if (!s) s = c->log;
    const char *st = strstr(s, "bytes stack frame");
    if (st) {
        const char *b = st; /* back over "   0 " to the frame size's first digit */
        while (b > s && b[-1] == ' ') --b;
        while (b > s && b[-1] >= '0' && b[-1] <= '9') --b;
        int frame = 0, stores = 0, loads = 0;
        if (sscanf(b, " %d bytes stack frame, %d bytes spill stores, %d bytes spill loads", &frame, &stores,
                   &loads) == 3) {
            c->stack_bytes = frame;
            c->spill_bytes = stores + loads;
        }
    }
    const char *u = strstr(s, "Used ");
    if (u) sscanf(u, "Used %d registers", &c->regs);
}

int gt_nvrtc_compile(const char *src, const char *arch, gt_cubin *out, char *err, size_t errlen)
{
    const char *hdr_src[16], *hdr_name[16], *opts[NBASE + 2];
    int nh = 0, rc = -1;
    char archopt[64];
    nvrtcProgram prog = NULL;
    nvrtcResult r;
    double t0 = gt_now_s();

    memset(out, 0, sizeof *out);
    out->regs = out->spill_bytes = -1;
    for (int i = 0; gt_template_text_name(i) && nh < 16; ++i) {
        const char *name = gt_template_text_name(i);
        size_t len = strlen(name);
        if (len > 4 && !strcmp(name + len - 4, ".cuh")) {
            hdr_name[nh] = name;
            hdr_src[nh++] = gt_template_text(name);
        }
    }
    snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch);
    for (int i = 0; i < NBASE; ++i) opts[i] = base_opts[i];
    opts[NBASE] = archopt;
    const int check_only = !strncmp(arch, "compute_", 8), nopts = NBASE + 1 + check_only; /* compile.h says why */
    opts[NBASE + 1] = "-Ofc=max";

    if ((r = nvrtcCreateProgram(&prog, src, "gemmtune.cu", nh, hdr_src, hdr_name)) != NVRTC_SUCCESS) {
        snprintf(err, errlen, "nvrtcCreateProgram: %s", nvrtcGetErrorString(r));
        return -1;
    }
    nvrtcResult cr = nvrtcCompileProgram(prog, nopts, opts);
    size_t loglen = 0;
    if (nvrtcGetProgramLogSize(prog, &loglen) == NVRTC_SUCCESS && loglen > 1 && (out->log = malloc(loglen)))
        nvrtcGetProgramLog(prog, out->log);
    if (cr != NVRTC_SUCCESS) {
        snprintf(err, errlen, "compile failed: %.200s", out->log ? out->log : nvrtcGetErrorString(cr));
        rc = 1;
        goto done;
    }
    if (check_only) { /* PTX only */
        if ((r = nvrtcGetPTXSize(prog, &out->size)) != NVRTC_SUCCESS || !(out->data = malloc(out->size)) ||
            (r = nvrtcGetPTX(prog, (char *)out->data)) != NVRTC_SUCCESS) {
            snprintf(err, errlen, "nvrtcGetPTX: %s", nvrtcGetErrorString(r));
            goto done;
        }
    } else if ((r = nvrtcGetCUBINSize(prog, &out->size)) != NVRTC_SUCCESS || !(out->data = malloc(out->size)) ||
               (r = nvrtcGetCUBIN(prog, (char *)out->data)) != NVRTC_SUCCESS) {
        snprintf(err, errlen, "nvrtcGetCUBIN: %s", nvrtcGetErrorString(r));
        goto done;
    }
    parse_resources(out);
    rc = 0;
done:
    out->seconds = gt_now_s() - t0;
    nvrtcDestroyProgram(&prog);
    return rc;
}
