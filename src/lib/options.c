/* gemmtune_options: the defaults, a caller's sized struct read member by member, and the pre-0.3 layout (abi.h).
 * No database, no NVRTC: a table-only static link pulls this in. Tested by tests/test_abi.c. */
#include "abi.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static void defaults(gemmtune_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->size = sizeof *opt;
    opt->device = -1;
}

void GT_ABI_SIZED(gemmtune_options_init)(gemmtune_options *opt)
{
    if (opt) defaults(opt);
}

void gt_legacy_options_init(gt_options_v02 *opt)
{
    if (!opt) return;
    memset(opt, 0, sizeof *opt);
    opt->device = -1;
}

GT_ABI_VERSIONS(gemmtune_options_init, gt_legacy_options_init)

#define MEMBER(m) {offsetof(gemmtune_options, m), sizeof(((gemmtune_options *)0)->m)}
/* Every member after size, in order: a caller built against an older header has a prefix of them. */
static const struct {
    size_t at, len;
} members[] = {MEMBER(db_path), MEMBER(json_path), MEMBER(column_major), MEMBER(fallback), MEMBER(device),
               MEMBER(arch),    MEMBER(record_path), MEMBER(math)};

/* A size past 4 KiB is not a struct's: whatever the caller passed, it is not gemmtune_options. */
#define MAX_OPTIONS_SIZE 4096

gemmtune_status gt_options_resolve(const gemmtune_options *opt, gemmtune_options *out, char *err, size_t errlen)
{
    defaults(out);
    if (!opt) return GEMMTUNE_SUCCESS;
    const unsigned long size = opt->size;
    if (size < offsetof(gemmtune_options, db_path) || size > MAX_OPTIONS_SIZE) {
        snprintf(err, errlen, "options.size = %lu: initialise the options with gemmtune_options_init (size %zu)", size,
                 sizeof *out);
        return GEMMTUNE_STATUS_INVALID_VALUE;
    }
    const unsigned char *from = (const unsigned char *)opt;
    for (unsigned long i = sizeof *out; i < size; ++i)
        if (from[i]) {
            snprintf(err, errlen, "options from a newer gemmtune.h (%lu bytes) set a member this library (%zu bytes) "
                     "does not know: use the library of that header", size, sizeof *out);
            return GEMMTUNE_STATUS_INVALID_VALUE;
        }
    for (size_t m = 0; m < sizeof members / sizeof members[0]; ++m)
        if (members[m].at + members[m].len <= size)
            memcpy((unsigned char *)out + members[m].at, from + members[m].at, members[m].len);
    return GEMMTUNE_SUCCESS;
}

void gt_options_from_v02(const gt_options_v02 *opt, gemmtune_options *out)
{
    defaults(out);
    out->math = GEMMTUNE_MATH_FP32;
    if (!opt) return;
    out->db_path = opt->db_path;
    out->json_path = opt->json_path;
    out->column_major = opt->column_major;
    out->fallback = opt->fallback;
    out->device = opt->device;
    out->arch = opt->arch;
    out->record_path = opt->record_path;
}
