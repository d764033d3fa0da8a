/* The plan's options and architecture, for tune (its sweep and --dry-run) and precompile (see cli_plan.h). */
#include "cli_plan.h"
#include "cli_db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_families(const char *text, gt_tune_opts *o, char **families, char *err, size_t errlen)
{
    char *copy = strdup(text), *save = NULL;
    if (!copy) return snprintf(err, errlen, "out of memory"), -1;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!gt_family_find(tok) || o->nfamilies == GT_CLI_MAX_FAMILIES) {
            snprintf(err, errlen, "unknown family '%s' (see gemmtune candidates --count)", tok);
            free(copy);
            return -1;
        }
        families[o->nfamilies++] = strdup(tok);
    }
    free(copy);
    o->families = (const char *const *)families;
    return o->nfamilies ? 0 : (snprintf(err, errlen, "empty --family list"), -1);
}

int gt_cli_plan_opts(const gt_cli_args *a, gt_tune_opts *o, char **families, char *err, size_t errlen)
{
    if (a->layout.n) memcpy(o->layouts, a->layout.v, sizeof o->layouts), o->nlayouts = a->layout.n;
    if (a->family && parse_families(a->family, o, families, err, errlen) < 0) return -1;
    if (a->math) {
        gt_math m;
        o->math = !strcmp(a->math, "all") ? -1 : gt_math_parse(a->math, &m) == 0 ? (int)m : GT_MATH_FP32;
    }
    if (a->jobs) o->jobs = (int)a->jobs;
    o->shape_layouts = a->sizes_with_layout;
    if (o->shape_layouts && a->layout.n)
        return snprintf(err, errlen, "--layout and sizes with their own layout (MxNxK:nn) do not go together"), -1;
    return 0;
}

int gt_cli_plan_arch(const char *opt, int gpu, char *arch, size_t n, int *sms, char *err, size_t errlen)
{
    char known[200], sfx = 0, why[400];
    int major, minor;
    gt_limits lim;
    gt_gpu_model m;
    *sms = 0;
    if (opt) {
        gt_arch_list(known, sizeof known);
        if (gt_arch_parse(opt, &major, &minor, &sfx) == 0 && sfx)
            return snprintf(err, errlen, "--arch %s: give the GPU's own architecture, sm_%d%d (a family that needs "
                            "sm_%d%da compiles for it by itself)", opt, major, minor, major, minor), -1;
        if (!gt_limits_for_arch(opt, &lim))
            return snprintf(err, errlen, "unknown architecture '%s' (want sm_XY or sm_XYZ, one of %s)", opt, known), -1;
        return snprintf(arch, n, "%s", opt), 0;
    }
    if (gt_cli_device_model(gpu, &m, why, sizeof why) < 0)
        return snprintf(err, errlen, "no GPU to ask for its architecture (%s): give --arch sm_XY, the architecture of "
                        "the GPUs that will tune (sm_90 for H100 and H200)", why), -1;
    *sms = m.sm_count;
    return snprintf(arch, n, "sm_%d%d", m.cc_major, m.cc_minor), 0;
}
