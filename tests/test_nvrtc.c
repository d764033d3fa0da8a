/* NVRTC compiles rendered candidates to sm_90 cubins without a GPU; resources are parsed from ptxas -v. */
#include "family.h"
#include "harness.h"
#include "compile.h"
#include "toolkit.h"

#include <stdlib.h>
#include <string.h>

GT_TEST(nvrtc_compiles_a_tile2d_candidate, GT_NEEDS_NVRTC)
{
    const gt_family *f = gt_family_find("tile2d");
    gt_params p = {{64, 64, 8, 8, 8}};
    char err[512];
    char *src = gt_render(f, &p, 0, 0, 0, err, sizeof err);
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

/* The tuner's helper kernels are a template file, compiled as the worker compiles them (tuner/measure.c). */
GT_TEST(nvrtc_compiles_the_helper_kernels, GT_NEEDS_NVRTC)
{
    static const char *const kernels[] = {"gt_fill",  "gt_set",       "gt_abs",  "gt_compare",
                                          "gt_scale", "gt_compare64", "gt_same", "gt_widen", "gt_code_flush"};
    const char *src = gt_template_text("measure.cu");
    CHECK(src != NULL);
    if (!src) return;
    gt_cubin c;
    char err[512];
    CHECK_MSG(gt_nvrtc_compile(src, "sm_90", &c, err, sizeof err) == 0, "%s", err);
    for (size_t i = 0; c.data && i < sizeof kernels / sizeof kernels[0]; ++i) /* each name, NUL-terminated */
        CHECK_MSG(memmem(c.data, c.size, kernels[i], strlen(kernels[i]) + 1), "no %s in the cubin", kernels[i]);
    /* gt_code_flush must outgrow the SMs' instruction caches (64 KiB measured enough on an H200): its code, not
     * folded away, makes the cubin at least that large */
    CHECK_MSG(c.size > 64 * 1024, "helper cubin %zu bytes: gt_code_flush's straight-line code is gone", c.size);
    gt_cubin_free(&c);
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

/* Per family: compiled, failed, with spills, max registers; every candidate's resources go to a TSV file. */
static void report(const gt_compile_job *jobs, int n, FILE *tsv)
{
    for (int i = 0; i < gt_family_count(); ++i) {
        const gt_family *f = gt_family_at(i);
        int ok = 0, fail = 0, spills = 0, maxregs = 0;
        for (int k = 0; k < n; ++k) {
            const gt_compile_job *j = &jobs[k];
            if (j->f != f) continue;
            char name[256];
            gt_params_format(f, &j->p, name, sizeof name);
            if (j->rc == 0) ok++, spills += j->spill_bytes > 0, maxregs = j->regs > maxregs ? j->regs : maxregs;
            else fail++, printf("    %s %s: %s\n", f->name, name, j->err);
            if (tsv) fprintf(tsv, "%s\t%s\t%d\t%d\t%d\t%.2f\n", f->name, name, j->rc, j->regs, j->spill_bytes, j->seconds);
        }
        if (f->test_only || f->build != GT_BUILD_NVRTC) continue;
        if (maxregs > 0)
            printf("    %-10s %4d compiled, %d failed, %d with spills, max %d registers\n", f->name, ok, fail, spills,
                   maxregs);
        else printf("    %-10s %4d compiled, %d failed\n", f->name, ok, fail); /* PTX: no registers yet */
        CHECK_MSG(fail == 0 && ok > 0, "%s: %d of %d failed", f->name, fail, ok + fail);
    }
}

/* The bar: every candidate of every family's default space compiles for sm_90 with zero failures (the
 * longest CPU test: minutes, with a progress line every 10 s). Every candidate goes through NVRTC's front end to
 * PTX for compute_90 at its fastest optimization level (what a params value can break: the template's arithmetic,
 * static asserts, array and shared memory sizes; an eighth of a full compile's time), and a spread sixteenth of
 * them, every family's first and last among them, through the product's own compile to sm_90 SASS (what the
 * optimizer, the templates' inline PTX and register budgets can break, alike for a family's points; each family's
 * own test compiles its key points to SASS in every layout): CI has ten minutes. GT_SAMPLE (make asan) compiles its
 * sample to SASS alone. Resources of the SASS sample in <build>/nvrtc_candidates.tsv. */
GT_TEST(nvrtc_compiles_every_default_candidate, GT_NEEDS_NVRTC)
{
    int n;
    gt_compile_job *jobs = gt_compile_default_space("sm_90", &n);
    const int sampled = gt_sample_wanted(n) > 0; /* then the sample goes to SASS alone */
    n = gt_sample_jobs(jobs, n, gt_sample_wanted(n));
    if (!sampled) {
        gt_compile_all(jobs, n, "compute_90", "default candidates to PTX");
        report(jobs, n, NULL);
    }
    const int m = sampled ? n : gt_sample_jobs(jobs, n, n / 16);
    gt_compile_all(jobs, m, "sm_90", "of them to SASS");
    char path[4200];
    snprintf(path, sizeof path, "%s/nvrtc_candidates.tsv", gt_build_dir());
    FILE *tsv = fopen(path, "w");
    if (tsv) fprintf(tsv, "family\tparams\trc\tregs\tspill_bytes\tseconds\n");
    report(jobs, m, tsv);
    if (tsv) fclose(tsv);
    free(jobs);
}

static int first_batchable(const gt_family *f, const gt_params *p, void *ctx)
{
    gt_launch L;
    if (!gt_family_launch(f, p, &(gt_shape){256, 256, 256, 0, 0, 8}, GT_TEST_SMS, &L)) return 0;
    *(gt_params *)ctx = *p;
    return 1;
}

/* Issue 26: every built family renders a batch's kernel (GT_BATCHED: the strides after ws, grid z over the batch)
 * that NVRTC compiles, with no spills, in a layout with both operands transposed; one GEMM's render does not name
 * GT_BATCHED at all, so its source (and id) is what it was before batches existed; a split-K point cannot be
 * rendered for a batch. */
GT_TEST(nvrtc_compiles_every_family_for_a_batch, GT_NEEDS_NVRTC)
{
    char err[512], arch[20];
    int families = 0;
    for (int i = 0; i < gt_family_count(); ++i) {
        const gt_family *f = gt_family_at(i);
        gt_limits lim;
        gt_params p;
        if (f->test_only || f->build != GT_BUILD_NVRTC) continue;
        gt_family_arch(f, "sm_90", arch, sizeof arch);
        if (!gt_limits_for_arch(arch, &lim) || gt_enumerate(f, &lim, first_batchable, &p) < 1) {
            CHECK_MSG(0, "%s: no point runs a batch", f->name);
            continue;
        }
        char *one = gt_render(f, &p, 1, 1, 0, err, sizeof err), *many = gt_render(f, &p, 1, 1, 1, err, sizeof err);
        CHECK(one && many && !strstr(one, "GT_BATCHED 1") && strstr(many, "#define GT_BATCHED 1\n"));
        gt_cubin c;
        int rc = many ? gt_nvrtc_compile(many, arch, &c, err, sizeof err) : -1;
        CHECK_MSG(rc == 0 && c.spill_bytes == 0, "%s batched: %s (spills %d)", f->name, err, rc ? -1 : c.spill_bytes);
        if (rc == 0) gt_cubin_free(&c), families++;
        free(one), free(many);
    }
    CHECK(families >= 10);
    const gt_family *ms = gt_family_find("multistage");
    gt_params split;
    CHECK(ms && gt_params_parse(ms, "BM=64,BN=128,BK=8,WM=64,WN=64,WNITER=2,TM=4,TN=4,STAGES=3,MINB=1,RASTER=1,SPLITK=4",
                                &split, err, sizeof err) == 0);
    char *src = gt_render(ms, &split, 0, 0, 1, err, sizeof err);
    gt_cubin c;
    CHECK(src && gt_nvrtc_compile(src, "sm_90", &c, err, sizeof err) != 0 && strstr(err, "split-K"));
    gt_cubin_free(&c);
    free(src);
}
