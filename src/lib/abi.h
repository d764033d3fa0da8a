/* How libgemmtune.so tells the options layouts apart (src/lib/libgemmtune.map; docs/LOADER.md, "ABI"): the three
 * entry points that take gemmtune_options exist in two versions there, GEMMTUNE_0.2 for programs built before
 * the options had a size (gt_options_v02), GEMMTUNE_0.3 (the default) for the sized struct. The files defining them
 * are compiled a second time for the shared library with GT_SHARED_SYMVER, which renames the sized definition
 * and binds both under the public name; everywhere else (the static library, the CLI, the tests, the preload) the
 * sized definition has the public name itself. Tested by tests/test_abi.c. */
#ifndef GT_ABI_H
#define GT_ABI_H

#include "gemmtune.h"

#include <stddef.h>

/* The options as programs built against gemmtune.h before 0.3 lay them out: no size. (Builds of the header in
 * development of 0.3 had math after record_path; it is not read, so both are served FP32 only.) */
typedef struct {
    const char *db_path, *json_path;
    int column_major;
    gemmtune_fallback fallback;
    int device;
    const char *arch, *record_path;
} gt_options_v02;

#ifdef GT_SHARED_SYMVER
#define GT_ABI_SIZED(name) gt_sized_##name
#define GT_ABI_VERSIONS(name, legacy)                                                                               \
    __asm__(".symver gt_sized_" #name ", " #name "@@GEMMTUNE_0.3\n\t.symver " #legacy ", " #name "@GEMMTUNE_0.2");
#else
#define GT_ABI_SIZED(name) name
#define GT_ABI_VERSIONS(name, legacy)
#endif

/* The caller's options, of whatever size, as the full struct of this build: opt NULL gives the defaults; members
 * wholly within opt->size are copied, the others keep their defaults; bytes past this build's struct must be 0 (a
 * newer header's members left at their defaults). Returns GEMMTUNE_SUCCESS, or GEMMTUNE_STATUS_INVALID_VALUE with a
 * message in err (size 0: not initialised; a newer member set). */
gemmtune_status gt_options_resolve(const gemmtune_options *opt, gemmtune_options *out, char *err, size_t errlen);

/* The pre-0.3 layout as the full struct: its members copied, math FP32 (such a program never chose a class, and
 * whatever follows its struct is not its own). opt NULL gives the defaults with math FP32. Cannot fail. */
void gt_options_from_v02(const gt_options_v02 *opt, gemmtune_options *out);

/* A table row as programs built before 0.3 lay it out: no batch. */
typedef struct {
    const char *gpu_name;
    int cc_major, cc_minor, sm_count, m, n, k;
    const char *layout, *family, *params;
    double tflops, ratio_vs_cublas;
    const unsigned char *cubin;
    unsigned long cubin_size;
    const char *cubin_arch;
} gt_winner_row_v02;

/* The pre-0.3 entry points (GEMMTUNE_0.2 in the shared library): init writes sizeof(gt_options_v02) bytes only;
 * create_from_table reads rows of gt_winner_row_v02 (each one GEMM). */
void gt_legacy_options_init(gt_options_v02 *opt);
gemmtune_status gt_legacy_create(gemmtune_handle *handle, const gt_options_v02 *opt);
gemmtune_status gt_legacy_create_from_table(gemmtune_handle *handle, const gt_winner_row_v02 *rows, int nrows,
                                            const gt_options_v02 *opt);

#endif
