/* libgemmtune's ABI without a GPU (issue 27 item 3): gemmtune_options read by its size, the pre-0.3 layout served
 * FP32 only, a program linked against an unversioned libgemmtune.so.0 bound to the old entry points, the shared
 * library exporting gemmtune_* alone, one version number, and the header export's gemmtune_winner_row being
 * gemmtune.h's. Run: build/gt_tests --cpu abi */
#include "abi.h"
#include "db.h"
#include "fixture.h"
#include "harness.h"
#include "loader.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __SANITIZE_ADDRESS__ /* programs the tests link against this build's library need its sanitizers too */
#define SAN_FLAGS "-fsanitize=address,undefined"
#else
#define SAN_FLAGS ""
#endif

/* gemmtune_options as gemmtune.h 0.2 declared it, and as development builds of 0.3 did (math appended): no size. */
struct options_02 {
    const char *db_path, *json_path;
    int column_major;
    gemmtune_fallback fallback;
    int device;
    const char *arch, *record_path;
};
struct options_03_unsized {
    const char *db_path, *json_path;
    int column_major;
    gemmtune_fallback fallback;
    int device;
    const char *arch, *record_path;
    gemmtune_math math;
};
_Static_assert(sizeof(struct options_02) == sizeof(gt_options_v02), "the pre-0.3 layout");

GT_TEST(abi_old_layout_options_yield_fp32_and_defaults, GT_NEEDS_NONE)
{
    union {
        struct options_03_unsized o;
        unsigned char raw[sizeof(struct options_03_unsized) + 16];
    } u;
    memset(u.raw, 0xa5, sizeof u.raw);
    u.o.math = GEMMTUNE_MATH_TF32X3; /* a 0.3-development program asking for tf32x3, or garbage after a 0.2 one */
    gt_legacy_options_init((gt_options_v02 *)&u.o);
    CHECK(u.o.device == -1 && !u.o.db_path && !u.o.json_path && !u.o.column_major && !u.o.fallback && !u.o.arch &&
          !u.o.record_path);
    int intact = 1; /* the old init writes the 0.2 struct and not a byte past it */
    for (size_t i = sizeof(struct options_02); i < sizeof u.raw; ++i)
        intact &= i < offsetof(struct options_03_unsized, math) || i >= offsetof(struct options_03_unsized, math) +
                  sizeof u.o.math ? u.raw[i] == 0xa5 : 1;
    CHECK(intact && u.o.math == GEMMTUNE_MATH_TF32X3);
    u.o.db_path = "x.db", u.o.column_major = 1, u.o.fallback = GEMMTUNE_FALLBACK_NONE, u.o.device = 2;
    gemmtune_options full;
    gt_options_from_v02((const gt_options_v02 *)&u.o, &full);
    CHECK(full.size == sizeof full && !strcmp(full.db_path, "x.db") && full.column_major == 1 &&
          full.fallback == GEMMTUNE_FALLBACK_NONE && full.device == 2 && full.math == GEMMTUNE_MATH_FP32);
    gt_options_from_v02(NULL, &full);
    CHECK(full.device == -1 && full.math == GEMMTUNE_MATH_FP32 && !full.db_path);
    /* through the old create: whatever follows the struct is not read (7 is no gemmtune_math), the source is */
    char *missing = gt_tmp_path(".db");
    gemmtune_handle h = (gemmtune_handle)&u;
    u.o.db_path = missing, u.o.device = -1, u.o.math = (gemmtune_math)7;
    CHECK(gt_legacy_create(&h, (const gt_options_v02 *)&u.o) == GEMMTUNE_STATUS_DB_ERROR && !h);
    CHECK_MSG(strstr(gemmtune_last_error(), missing) != NULL, "%s", gemmtune_last_error());
    free(missing);
}

/* One winner per math class at 1024^3 nn (FP32 tile2d 1.0 ms, tf32x3-class test_split3 0.5 ms; tests/test_math.c
 * registers that family). */
static char *two_class_db(void)
{
    char *path = gt_tmp_path(".db");
    const gt_gpu_info g = gt_fixture_gpu(0, 0);
    const gt_shape s = {1024, 1024, 1024, 0, 0};
    if (gt_fixture_winner(path, &g, &s, "tile2d", "BM=64,BN=64,BK=8,TM=4,TN=4", NULL, 1.0) ||
        gt_fixture_winner(path, &g, &s, "test_split3", "BX=32", NULL, 0.5))
        return free(path), NULL;
    return path;
}

/* The serving that follows: a pre-0.3 program gets FP32 winners even where $GEMMTUNE_MATH asks for tf32x3 (it never
 * chose), a sized struct gets what it sets, and one from a header that ends before math gets math's default. */
GT_TEST(abi_old_layout_is_served_fp32_only, GT_NEEDS_NONE)
{
    char *db = two_class_db(), err[512];
    if (!db) return;
    const char *saved = getenv("GEMMTUNE_MATH");
    char *keep = saved ? strdup(saved) : NULL;
    setenv("GEMMTUNE_MATH", "tf32x3", 1);
    struct options_02 old;
    gt_legacy_options_init((gt_options_v02 *)&old);
    old.db_path = db;
    gemmtune_options full, o;
    gt_options_from_v02((const gt_options_v02 *)&old, &full);
    gt_winner_set set;
    CHECK_MSG(gt_loader_winners(&full, &set, NULL, err, sizeof err) == GEMMTUNE_SUCCESS, "%s", err);
    CHECK_MSG(set.n == 1 && !strcmp(set.rows[0].family, "tile2d"), "%d rows, %s", set.n, set.n ? set.rows[0].family : "");
    gt_loader_set_free(&set);
    gemmtune_options_init(&o);
    o.db_path = db, o.math = GEMMTUNE_MATH_TF32X3;
    CHECK(gt_options_resolve(&o, &full, err, sizeof err) == GEMMTUNE_SUCCESS);
    CHECK(gt_loader_winners(&full, &set, NULL, err, sizeof err) == GEMMTUNE_SUCCESS && set.n == 1 &&
          !strcmp(set.rows[0].family, "test_split3"));
    gt_loader_set_free(&set);
    o.size = offsetof(gemmtune_options, math); /* built against a header without math: its default, from the env */
    CHECK(gt_options_resolve(&o, &full, err, sizeof err) == GEMMTUNE_SUCCESS && full.math == GEMMTUNE_MATH_ENV);
    setenv("GEMMTUNE_MATH", "fp32", 1);
    CHECK(gt_loader_winners(&full, &set, NULL, err, sizeof err) == GEMMTUNE_SUCCESS && set.n == 1 &&
          !strcmp(set.rows[0].family, "tile2d"));
    gt_loader_set_free(&set);
    keep ? setenv("GEMMTUNE_MATH", keep, 1) : unsetenv("GEMMTUNE_MATH");
    gt_fixture_rm(db);
    free(db), free(keep);
}

GT_TEST(abi_sized_options_read_member_by_member, GT_NEEDS_NONE)
{
    char err[512];
    gemmtune_options o, full;
    memset(&o, 0x5a, sizeof o);
    gemmtune_options_init(&o);
    CHECK(o.size == sizeof o && o.device == -1 && !o.db_path && o.math == GEMMTUNE_MATH_ENV);
    CHECK(gt_options_resolve(NULL, &full, err, sizeof err) == GEMMTUNE_SUCCESS && full.size == sizeof full &&
          full.device == -1);
    o.db_path = "a.db", o.device = 3, o.math = GEMMTUNE_MATH_TF32X3;
    CHECK(gt_options_resolve(&o, &full, err, sizeof err) == GEMMTUNE_SUCCESS && !strcmp(full.db_path, "a.db") &&
          full.device == 3 && full.math == GEMMTUNE_MATH_TF32X3);
    o.size = offsetof(gemmtune_options, math) + 2; /* a member cut in two is not the caller's: its default */
    CHECK(gt_options_resolve(&o, &full, err, sizeof err) == GEMMTUNE_SUCCESS && full.math == GEMMTUNE_MATH_ENV &&
          full.device == 3 && full.size == sizeof full);
    o.size = offsetof(gemmtune_options, device); /* device and what follows: defaults */
    CHECK(gt_options_resolve(&o, &full, err, sizeof err) == GEMMTUNE_SUCCESS && full.device == -1 &&
          !strcmp(full.db_path, "a.db"));
    gemmtune_options zero = {0}; /* never initialised */
    CHECK(gt_options_resolve(&zero, &full, err, sizeof err) == GEMMTUNE_STATUS_INVALID_VALUE &&
          strstr(err, "gemmtune_options_init"));
    gemmtune_handle h;
    CHECK(gemmtune_create(&h, &zero) == GEMMTUNE_STATUS_INVALID_VALUE && !h &&
          strstr(gemmtune_last_error(), "options.size = 0"));
    CHECK(gemmtune_create_from_table(&h, NULL, 0, &zero) == GEMMTUNE_STATUS_INVALID_VALUE && !h);
    struct {
        gemmtune_options o;
        long newer[2]; /* members of a newer header */
    } big;
    memset(&big, 0, sizeof big);
    gemmtune_options_init(&big.o);
    big.o.size = sizeof big;
    CHECK(gt_options_resolve(&big.o, &full, err, sizeof err) == GEMMTUNE_SUCCESS); /* left at their defaults */
    big.newer[1] = 1;
    CHECK(gt_options_resolve(&big.o, &full, err, sizeof err) == GEMMTUNE_STATUS_INVALID_VALUE && strstr(err, "newer"));
}

/* Run a shell command; the output is checked by the caller (freed here on the next call). */
static char *out;
#define sh(...) gt_runf(&out, __VA_ARGS__)

GT_TEST(abi_shared_library_exports_gemmtune_alone, GT_NEEDS_NONE)
{
    CHECK(sh("nm -D --defined-only " GT_BUILD "/libgemmtune.so") == 0);
    int n = 0, bad = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n"), ++n) {
        const char *name = strrchr(line, ' ') ? strrchr(line, ' ') + 1 : line;
        const int ok = !strncmp(name, "gemmtune_", 9) || !strncmp(name, "GEMMTUNE_", 9); /* functions, versions */
        if (!ok && bad++ < 5) CHECK_MSG(0, "libgemmtune.so exports %s", name);
    }
    CHECK_MSG(n >= 10 && !bad, "%d symbols, %d not gemmtune_*", n, bad);
    /* every function of gemmtune.h is there, the three taking options in both layouts */
    static const char *const want[] = {
        "gemmtune_options_init@@GEMMTUNE_0.3", "gemmtune_options_init@GEMMTUNE_0.2", "gemmtune_create@@GEMMTUNE_0.3",
        "gemmtune_create@GEMMTUNE_0.2", "gemmtune_create_from_table@@GEMMTUNE_0.3",
        "gemmtune_create_from_table@GEMMTUNE_0.2", "gemmtune_destroy@@GEMMTUNE_0.2", "gemmtune_sgemm@@GEMMTUNE_0.2",
        "gemmtune_explain@@GEMMTUNE_0.2", "gemmtune_status_string@@GEMMTUNE_0.2", "gemmtune_last_error@@GEMMTUNE_0.2",
        "gemmtune_sgemm_strided_batched@@GEMMTUNE_0.3", "gemmtune_explain_strided_batched@@GEMMTUNE_0.3",
        "gemmtune_runs_own_kernel@@GEMMTUNE_0.3", "gemmtune_kernel_times@@GEMMTUNE_0.3"};
    CHECK(sh("nm -D --defined-only " GT_BUILD "/libgemmtune.so") == 0);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; ++i) {
        char needle[96];
        snprintf(needle, sizeof needle, " %s\n", want[i]);
        CHECK_MSG(strstr(out, needle), "missing %s", want[i]);
    }
    CHECK(sh("grep -c '^[a-z][a-z_ ]*[*]*gemmtune_[a-z_]*(' " GT_ROOT "/src/lib/gemmtune.h") == 0);
    CHECK_MSG(atoi(out) == 12, "gemmtune.h declares %d functions; this test knows 12: add the new one to want[] and to "
              "src/lib/libgemmtune.map", atoi(out));
    CHECK(sh("objdump -p " GT_BUILD "/libgemmtune.so") == 0 && strstr(out, "SONAME               libgemmtune.so.0\n"));
    char version[32];
    snprintf(version, sizeof version, "%d.%d.%d", GEMMTUNE_VERSION_MAJOR, GEMMTUNE_VERSION_MINOR,
             GEMMTUNE_VERSION_PATCH);
    CHECK_MSG(!strcmp(version, GT_VERSION), "gemmtune.h says %s, the build %s", version, GT_VERSION);
}

/* What a program built against gemmtune.h 0.2 does: its struct has no size, and it was linked against the
 * unversioned libgemmtune.so.0 of its day (a stand-in here). Run against this library, it must bind to the
 * GEMMTUNE_0.2 entry points: init writes no byte past its struct, and create reads none (7 there is no math). */
static const char old_stub[] =
    "void gemmtune_options_init(void *o) { (void)o; }\n"
    "int gemmtune_create(void **h, const void *o) { (void)h, (void)o; return 0; }\n"
    "const char *gemmtune_last_error(void) { return \"\"; }\n";
static const char old_program[] =
    "#include <stdio.h>\n#include <string.h>\n"
    "typedef struct { const char *db_path, *json_path; int column_major, fallback, device; const char *arch, "
    "*record_path; } options_02;\n"
    "void gemmtune_options_init(options_02 *o);\nint gemmtune_create(void **h, const options_02 *o);\n"
    "const char *gemmtune_last_error(void);\n"
    "int main(int argc, char **argv) {\n"
    "  union { options_02 o; unsigned char raw[sizeof(options_02) + 16]; } u;\n"
    "  memset(u.raw, 0xa5, sizeof u.raw);\n"
    "  gemmtune_options_init(&u.o);\n"
    "  int intact = 1;\n"
    "  for (size_t i = sizeof(options_02); i < sizeof u.raw; ++i) intact &= u.raw[i] == 0xa5;\n"
    "  int seven = 7;\n  memcpy(u.raw + sizeof(options_02), &seven, sizeof seven);\n"
    "  u.o.db_path = argc > 1 ? argv[1] : \"\";\n"
    "  void *h = 0;\n  int st = gemmtune_create(&h, &u.o);\n"
    "  printf(\"device=%d intact=%d status=%d: %s\\n\", u.o.device, intact, st, gemmtune_last_error());\n"
    "  return 0;\n}\n";

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) fputs(text, f), fclose(f);
}

GT_TEST(abi_old_binary_binds_to_the_old_entry_points, GT_NEEDS_NONE)
{
    char *dir = gt_tmp_path("_abi"), path[4200];
    CHECK(sh("mkdir -p %s/stub %s/real && ln -s " GT_BUILD "/libgemmtune.so %s/real/libgemmtune.so.0", dir, dir,
             dir) == 0);
    snprintf(path, sizeof path, "%s/stub.c", dir);
    write_text(path, old_stub);
    snprintf(path, sizeof path, "%s/old.c", dir);
    write_text(path, old_program);
    CHECK_MSG(sh("cd %s && cc -shared -fPIC -Wl,-soname,libgemmtune.so.0 -o stub/libgemmtune.so stub.c && cc " SAN_FLAGS
                 " old.c -Lstub -lgemmtune -o old", dir) == 0, "%s", out);
    CHECK_MSG(sh("LD_LIBRARY_PATH=%s/real %s/old %s/missing.db", dir, dir, dir) == 0 &&
              strstr(out, "device=-1 intact=1 status=2: database ") && strstr(out, "missing.db"), "%s", out);
    /* a program built against this header binds to GEMMTUNE_0.3 and would refuse an older library */
    snprintf(path, sizeof path, "%s/new.c", dir);
    write_text(path, "#include <gemmtune.h>\nint main(void) { gemmtune_options o; gemmtune_options_init(&o);\n"
                     "  gemmtune_handle h; return gemmtune_create(&h, &o) == GEMMTUNE_STATUS_INVALID_VALUE; }\n");
    CHECK_MSG(sh("cd %s && cc " SAN_FLAGS " -I" GT_ROOT "/src/lib new.c " GT_BUILD "/libgemmtune.so -o new && "
                 "objdump -T new", dir) == 0 && strstr(out, "(GEMMTUNE_0.3) gemmtune_create\n") &&
                  strstr(out, "(GEMMTUNE_0.3) gemmtune_options_init\n"), "%s", out);
    sh("rm -rf %s", dir);
    free(dir);
}

/* The header export writes gemmtune.h's own definition of gemmtune_winner_row, so the two agree and a program may
 * include both, in either order. */
GT_TEST(abi_exported_header_agrees_with_gemmtune_h, GT_NEEDS_NONE)
{
    char err[512], *text = NULL, *dir = gt_tmp_path("_hdr"), path[4200];
    gt_db *db = NULL;
    CHECK(gt_db_open(":memory:", GT_DB_CREATE, &db, err, sizeof err) == 0);
    CHECK(db && gt_db_export_header(db, NULL, NULL, NULL, &text, err, sizeof err) == 0 && text);
    gt_db_close(db);
    snprintf(path, sizeof path, "%s/src/lib/gemmtune.h", gt_src_root());
    size_t n;
    char *h = (char *)gt_fixture_slurp(path, &n);
    const char *a = h ? strstr(h, "#ifndef GEMMTUNE_WINNER_ROW_DEFINED") : NULL, *b = a ? strstr(a, "#endif\n") : NULL;
    CHECK(a && b && text);
    if (a && b && text) {
        char *block = strndup(a, (size_t)(b + 7 - a));
        CHECK_MSG(strstr(text, block) != NULL, "the exported header's gemmtune_winner_row is not gemmtune.h's:\n%s",
                  block);
        free(block);
    }
    CHECK(sh("mkdir -p %s", dir) == 0);
    snprintf(path, sizeof path, "%s/winners.h", dir);
    write_text(path, text ? text : "");
    static const char *const orders[2] = {"#include \"winners.h\"\n#include <gemmtune.h>\n",
                                          "#include <gemmtune.h>\n#include \"winners.h\"\n"};
    for (int i = 0; i < 2; ++i) {
        char src[600];
        snprintf(src, sizeof src, "%sint f(void);\nint f(void) { gemmtune_handle h; return gemmtune_create_from_table("
                 "&h, gemmtune_winners, gemmtune_winners_count, 0) + (gemmtune_winner_find(\"x\", 1, 1, 1, \"nn\") != 0"
                 "); }\n", orders[i]);
        snprintf(path, sizeof path, "%s/use%d.c", dir, i);
        write_text(path, src);
    }
    CHECK_MSG(sh("cd %s && cc -std=c11 -Wall -Wextra -Werror -fsyntax-only -I" GT_ROOT "/src/lib use0.c use1.c", dir) ==
                  0, "%s", out);
    sh("rm -rf %s", dir);
    free(text), free(h), free(dir), free(out);
    out = NULL;
}
