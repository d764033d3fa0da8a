/* NVRTC compiles rendered candidates to sm_90 cubins without a GPU; resources are parsed from ptxas -v. */
#include "family.h"
#include "harness.h"
#include "compile.h"

#include <stdlib.h>
#include <string.h>

GT_TEST(nvrtc_compiles_a_tile2d_candidate, GT_NEEDS_NVRTC)
{
    const gt_family *f = gt_family_find("tile2d");
    gt_params p = {{64, 64, 8, 8, 8}};
    char err[512];
    char *src = gt_render(f, &p, 0, 0, err, sizeof err);
    gt_cubin c;
    int rc = gt_nvrtc_compile(src, "sm_90", &c, err, sizeof err);
    CHECK_MSG(rc == 0, "%s", err);
    CHECK(c.size > 1000 && c.data && !memcmp(c.data, "\177ELF", 4));
    CHECK_MSG(c.regs > 16 && c.regs <= 255, "regs %d", c.regs);
    CHECK(c.spill_bytes == 0);
    CHECK(c.seconds > 0);
    CHECK(gt_nvrtc_version() >= 12000);
    gt_cubin_free(&c);
    free(src);
}

GT_TEST(nvrtc_reports_compile_errors, GT_NEEDS_NVRTC)
{
    gt_cubin c;
    char err[512];
    int rc = gt_nvrtc_compile("extern \"C\" __global__ void gt_gemm() { undeclared_thing(); }", "sm_90", &c, err,
                              sizeof err);
    CHECK(rc == 1);
    CHECK(c.log && strstr(c.log, "undeclared_thing"));
    CHECK(c.data == NULL);
    gt_cubin_free(&c);
    rc = gt_nvrtc_compile("extern \"C\" __global__ void gt_gemm() {}", "sm_bogus", &c, err, sizeof err);
    CHECK(rc != 0);
    gt_cubin_free(&c);
}

typedef struct {
    int ok, fail, spills;
    int ta, tb;
} compile_ctx;

static int compile_one(const gt_family *f, const gt_params *p, void *vctx)
{
    compile_ctx *c = vctx;
    char err[512], name[256];
    char *src = gt_render(f, p, c->ta, c->tb, err, sizeof err);
    gt_cubin cb;
    if (src && gt_nvrtc_compile(src, "sm_90", &cb, err, sizeof err) == 0) {
        c->ok++;
        if (cb.spill_bytes > 0) c->spills++;
    } else {
        gt_params_format(f, p, name, sizeof name);
        printf("    %s %s %s: %s\n", f->name, name, gt_layout_name(c->ta, c->tb), err);
        c->fail++;
    }
    gt_cubin_free(&cb);
    free(src);
    return 0;
}

/* The bar: every candidate of every family's default space compiles for sm_90 with zero failures. */
GT_TEST(nvrtc_compiles_every_default_candidate, GT_NEEDS_NVRTC)
{
    gt_limits l;
    gt_limits_for_arch("sm_90", &l);
    for (int i = 0; i < gt_family_count(); ++i) {
        const gt_family *f = gt_family_at(i);
        if (f->test_only) continue;
        compile_ctx c = {0};
        gt_enumerate(f, &l, compile_one, &c);
        printf("    %-10s %4d compiled, %d failed, %d with spills\n", f->name, c.ok, c.fail, c.spills);
        CHECK_MSG(c.fail == 0 && c.ok > 0, "%s: %d of %d failed", f->name, c.fail, c.ok + c.fail);
    }
}
