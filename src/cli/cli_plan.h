/* What tune and precompile share: the options a sweep's plan is made of, and the architecture a plan is made for
 * (--arch, or asked of a GPU). Tested by tests/test_cli_plan.c (through build/gemmtune). */
#ifndef GT_CLI_PLAN_H
#define GT_CLI_PLAN_H

#include "options.h"
#include "tune.h"

#include <stddef.h>

#define GT_CLI_MAX_FAMILIES 64

/* --layout, --family (each name strdup'd into families[GT_CLI_MAX_FAMILIES]: the caller frees o->nfamilies of
 * them), --math, --jobs, and whether the --sizes items carry their own layouts, from a into o. 0, or -1 with err
 * (a bad argument: an unknown family, an empty list, --layout beside sizes with their own layout). */
int gt_cli_plan_opts(const gt_cli_args *a, gt_tune_opts *o, char **families, char *err, size_t errlen);

/* The architecture a plan is made for, into arch[n] ("sm_90"), with the GPU's SM count in *sms (0 when not asked):
 * opt (--arch) when given, else that of CUDA device gpu. 0, or -1 with err: opt is no known architecture or has a
 * suffix (a family's own arch comes from gt_family_arch), or there is no such GPU to ask (a bad argument: the
 * caller exits 2 and the message says to give --arch). */
int gt_cli_plan_arch(const char *opt, int gpu, char *arch, size_t n, int *sms, char *err, size_t errlen);

#endif
