/* The plan ahead of the GPU through the CLI (issue 30): gemmtune precompile fills the cubin cache and a second run
 * compiles nothing; tune --dry-run's shards partition its whole list, and --shard auto names its Slurm task; both
 * refuse bad arguments with exit 2.
 * Run: build/gt_tests --cpu cli_precompile cli_tune_dry_run */
#include "family.h"
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

GT_TEST(cli_precompile_and_dry_run_reject_bad_arguments, GT_NEEDS_NONE)
{
    static const struct {
        const char *args, *says;
        int no_gpu; /* only where there is no GPU to ask */
    } cases[] = {
        {"precompile --arch sm_99", "unknown architecture 'sm_99'", 0},
        {"precompile --arch 90", "unknown architecture '90'", 0},
        {"precompile --arch sm_90a", "give the GPU's own architecture, sm_90", 0},
        {"precompile --arch sm_90 --sizes 0", "bad --sizes item '0'", 0},
        {"precompile --arch sm_90 --sizes @/nonexistent/sizes", "cannot read", 0},
        {"precompile --arch sm_90 --family nope", "unknown family 'nope'", 0},
        {"precompile --arch sm_90 --math fp64", "unknown --math 'fp64'", 0},
        {"precompile --arch sm_90 --strategy random", "an option of tune, not of precompile", 0},
        {"precompile --arch sm_90 extra", "unexpected argument 'extra'", 0},
        {"precompile --arch sm_90 --sizes 64:tn --layout nn", "do not go together", 0},
        {"tune --arch sm_90 --sizes 64", "--arch goes with --dry-run", 0},
        {"tune --dry-run --arch sm_99 --sizes 64", "unknown architecture 'sm_99'", 0},
        {"precompile", "give --arch sm_XY", 1},
        {"tune --dry-run --sizes 64", "give --arch sm_XY", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        if (cases[i].no_gpu && gt_test_gpu_count() > 0) continue;
        char *out = NULL, *db = gt_tmp_path(".db");
        int rc = gt_runf(&out, GT_CLI " %s --db %s", cases[i].args, db);
        CHECK_MSG(rc == 2 && strstr(out, cases[i].says), "'%s': exit %d: %s", cases[i].args, rc, out);
        CHECK_MSG(access(db, F_OK) != 0, "'%s' created the database", cases[i].args);
        free(out);
        free(db);
    }
}

/* One family whose whole default space compiles in well under a second. */
GT_TEST(cli_precompile_fills_the_cache_then_compiles_nothing, GT_NEEDS_NVRTC)
{
    char *out = NULL, *db = gt_tmp_path(".db"), want[128];
    gt_limits l;
    gt_limits_for_arch("sm_90", &l);
    const int n = gt_enumerate(gt_family_find("coalesced"), &l, NULL, NULL);
    int rc = gt_runf(&out, GT_CLI " precompile --arch sm_90 --family coalesced --jobs 2 --db %s", db);
    snprintf(want, sizeof want, "%d compiled, 0 already cached, 0 failed", n);
    CHECK_MSG(rc == 0 && strstr(out, want), "exit %d, want '%s': %s", rc, want, out);
    rc = gt_runf(&out, GT_CLI " precompile --arch sm_90 --family coalesced --db %s", db);
    snprintf(want, sizeof want, "0 compiled, %d already cached, 0 failed", n);
    CHECK_MSG(rc == 0 && strstr(out, want), "again: exit %d, want '%s': %s", rc, want, out);
    /* what a sweep of any shape would look up is there; the dry run writes nothing */
    rc = gt_runf(&out, GT_CLI " tune --dry-run --arch sm_90 --family coalesced --sizes 100x200x300 --db %s", db);
    snprintf(want, sizeof want, "%d cubins cached, 0 to compile", n);
    CHECK_MSG(rc == 0 && strstr(out, want) && !strstr(out, "to compile  "), "dry run: exit %d: %s", rc, out);
    /* another layout is other sources: compiled, the first ones kept */
    rc = gt_runf(&out, GT_CLI " precompile --arch sm_90 --family coalesced --layout nn,tt --db %s", db);
    snprintf(want, sizeof want, "%d compiled, %d already cached", n, n);
    CHECK_MSG(rc == 0 && strstr(out, want), "tt: exit %d, want '%s': %s", rc, want, out);
    free(out);
    free(db);
}

typedef struct {
    char **v;
    int n;
} lines;

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The candidate lines of a dry run, each prefixed with its shape's header, sorted; the lines of families whose
 * candidates are asked of the GPU are counted in *device instead. */
static void candidates_of(const char *out, lines *l, int *device)
{
    char shape[128] = "", line[512];
    for (const char *p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        snprintf(line, sizeof line, "%.*s", (int)strcspn(p, "\n"), p);
        if (line[0] && line[0] != ' ' && strstr(line, " candidate"))
            snprintf(shape, sizeof shape, "%.*s", (int)strcspn(line, ":"), line);
        else if (strstr(line, "asked of the GPU at run time)"))
            ++*device;
        else if (!strncmp(line, "  ", 2) && strncmp(line, "  family ", 9)) {
            l->v = realloc(l->v, (size_t)(l->n + 1) * sizeof *l->v);
            l->v[l->n] = malloc(strlen(shape) + strlen(line) + 2);
            sprintf(l->v[l->n++], "%s|%s", shape, line);
        }
    }
    qsort(l->v, (size_t)l->n, sizeof *l->v, cmp_str);
}

static void free_lines(lines *l)
{
    for (int i = 0; i < l->n; ++i) free(l->v[i]);
    free(l->v);
}

/* tune --dry-run without a GPU: shards 0/3, 1/3 and 2/3 list disjoint parts whose union is the unsharded list
 * (the vendor's line, asked of the GPU, in each); no database is created. */
GT_TEST(cli_tune_dry_run_shards_partition_the_plan, GT_NEEDS_NONE)
{
    const char *plan = "--family naive,cublas --sizes 64,32x48x16,4x64x64x64 --layout nn,tn";
    char *out = NULL, *db = gt_tmp_path(".db");
    lines whole = {0}, parts = {0};
    int device = 0;
    int rc = gt_runf(&out, GT_CLI " tune --dry-run --arch sm_90 %s --db %s", plan, db);
    CHECK_MSG(rc == 0 && strstr(out, "6 (shape, layout) pairs"), "exit %d: %s", rc, out);
    candidates_of(out, &whole, &device);
    CHECK_MSG(device == 6 && whole.n > 6 * 48 / 2, "%d candidates, %d vendor lines", whole.n, device);
    for (int i = 0; i < 3; ++i) {
        device = 0;
        rc = gt_runf(&out, GT_CLI " tune --dry-run --arch sm_90 %s --shard %d/3 --db %s", plan, i, db);
        CHECK_MSG(rc == 0 && strstr(out, "shard"), "%d/3: exit %d: %s", i, rc, out);
        candidates_of(out, &parts, &device);
        CHECK_MSG(device == 6, "%d/3: %d vendor lines", i, device);
    }
    qsort(parts.v, (size_t)parts.n, sizeof *parts.v, cmp_str);
    int same = parts.n == whole.n;
    for (int i = 0; same && i < whole.n; ++i) same = !strcmp(whole.v[i], parts.v[i]);
    CHECK_MSG(same, "the shards list %d candidates together, the whole %d, or others", parts.n, whole.n);
    CHECK(access(db, F_OK) != 0);
    free_lines(&whole);
    free_lines(&parts);
    free(out);
    free(db);
}

/* tune --dry-run --shard auto inside a Slurm array task names its part and where it came from, as the sweep's first
 * line does (tests/cluster/slurm.sh checks every task of a real array by it); without Slurm's variables it is refused. */
GT_TEST(cli_tune_dry_run_shard_auto_names_the_slurm_task, GT_NEEDS_NONE)
{
    const char *plan = "tune --dry-run --arch sm_90 --family naive --sizes 64 --shard auto";
    char *out = NULL, *db = gt_tmp_path(".db");
    int rc = gt_runf(&out, "env -u SLURM_PROCID SLURM_ARRAY_TASK_ID=6 SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_MIN=2 "
                           "SLURM_ARRAY_TASK_MAX=6 SLURM_ARRAY_TASK_STEP=2 " GT_CLI " %s --db %s", plan, db);
    CHECK_MSG(rc == 0 && strstr(out, "shard 2/3 (Slurm job array: task 6 of 3 tasks from 2)\n"), "exit %d: %s", rc, out);
    rc = gt_runf(&out, "env -u SLURM_ARRAY_TASK_ID -u SLURM_PROCID " GT_CLI " %s --db %s", plan, db);
    CHECK_MSG(rc == 2 && strstr(out, "no Slurm job array or task rank"), "outside Slurm: exit %d: %s", rc, out);
    CHECK(access(db, F_OK) != 0);
    free(out);
    free(db);
}

/* Issue 30: a shape plans multistage's variant without edge code (EVEN=1: half the compile) for the tiles it is a
 * whole number of (at 1024, all but the 96-wide), once per variant (an EDGE=1 point's is EDGE=0's); a shape of
 * partial tiles plans the points as the space lists them. */
GT_TEST(cli_tune_dry_run_plans_whole_tile_variants, GT_NEEDS_NONE)
{
    char *out = NULL, *db = gt_tmp_path(".db");
    lines l = {0};
    int device = 0, even[2] = {0, 0}, all[2] = {0, 0};
    int rc = gt_runf(&out, GT_CLI " tune --dry-run --arch sm_90 --family multistage --sizes 1024,1000 --db %s", db);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out);
    candidates_of(out, &l, &device);
    for (int i = 0; i < l.n; ++i) {
        const int at = strncmp(l.v[i], "1024x", 5) != 0; /* 0: 1024^3, 1: 1000^3 */
        all[at]++;
        even[at] += strstr(l.v[i], "EVEN=1") != NULL;
        CHECK_MSG(!strstr(l.v[i], "EVEN=1") || !strstr(l.v[i], "EDGE=1"), "%s", l.v[i]);
    }
    CHECK_MSG(even[0] > all[0] / 2 && even[1] == 0 && all[0] < all[1], "1024: %d of %d EVEN; 1000: %d of %d", even[0],
              all[0], even[1], all[1]);
    free_lines(&l);
    free(out);
    free(db);
}
