/* One candidate rendered and compiled exactly as the product does (gt_render, gt_nvrtc_compile for the family's
 * arch), for tests/perf/sass_diff.sh, which links this against each tree's libgemmtune.a and diffs the SASS.
 * Usage: sass_cubin FAMILY PARAMS LAYOUT OUT.cubin [ARCH]; prints "regs spill_bytes stack_bytes" on success and
 * leaves the rendered source beside the cubin (OUT.cubin.cu), for a look at the PTX: nvcc -ptx -I templates. */
#include "compile.h"
#include "family.h"

#include <stdio.h>
#include <stdlib.h>

/* A tree from before batches renders without the batched flag: one GEMM's source either way. */
#ifdef GT_BATCH_PER_LAUNCH
#define RENDER(f, p, ta, tb, err, n) gt_render(f, p, ta, tb, 0, err, n)
#else
#define RENDER(f, p, ta, tb, err, n) gt_render(f, p, ta, tb, err, n)
#endif

int main(int argc, char **argv)
{
    char err[512], arch[32];
    gt_params p;
    int ta, tb;
    if (argc < 5) {
        fprintf(stderr, "usage: sass_cubin FAMILY PARAMS LAYOUT OUT.cubin [ARCH]\n");
        return 2;
    }
    const gt_family *f = gt_family_find(argv[1]);
    if (!f || gt_params_parse(f, argv[2], &p, err, sizeof err) != 0 || gt_layout_parse(argv[3], &ta, &tb) != 0) {
        fprintf(stderr, "sass_cubin: bad family, params or layout: %s %s %s\n", argv[1], argv[2], argv[3]);
        return 2;
    }
    gt_family_arch(f, argc > 5 ? argv[5] : "sm_90", arch, sizeof arch);
    char *src = RENDER(f, &p, ta, tb, err, sizeof err);
    if (!src) {
        fprintf(stderr, "sass_cubin: %s\n", err);
        return 1;
    }
    char srcpath[4096];
    snprintf(srcpath, sizeof srcpath, "%s.cu", argv[4]);
    FILE *sf = fopen(srcpath, "w");
    if (sf) fputs(src, sf), fclose(sf);
    gt_cubin cb;
    int rc = gt_nvrtc_compile(src, arch, &cb, err, sizeof err);
    free(src);
    FILE *out = rc == 0 ? fopen(argv[4], "wb") : NULL;
    if (rc != 0) fprintf(stderr, "sass_cubin: %s\n", err);
    else if (!out || fwrite(cb.data, 1, cb.size, out) != cb.size) rc = 1, fprintf(stderr, "sass_cubin: cannot write %s\n", argv[4]);
    else printf("%d %d %d\n", cb.regs, cb.spill_bytes, cb.stack_bytes);
    if (out && fclose(out) != 0) rc = 1;
    gt_cubin_free(&cb);
    return rc == 0 ? 0 : 1;
}
