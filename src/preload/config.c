/* The preload library's environment (docs/PRELOAD.md), parsed once at load through a getenv-like function so
 * the CPU tests can feed it a table, and the check of the winners' source it names (stat only):
 * build/gt_tests --cpu preload_config preload_source */
#include "preload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

static int one_of(const char *v, const char *const *words)
{
    for (; *words; ++words)
        if (!strcasecmp(v, *words)) return 1;
    return 0;
}

static const char *const yes_words[] = {"1", "on", "yes", "true", "enabled", NULL};
static const char *const no_words[] = {"0", "off", "no", "false", "disabled", NULL};

/* A value we do not understand turns the interposer off: the program then gets exactly cuBLAS, which is what
 * it was written for, and the warning says why. */
static void parse_switch(const char *v, gt_pl_config *cfg)
{
    cfg->enabled = 1;
    if (!v || !*v || one_of(v, yes_words)) return;
    cfg->enabled = 0;
    if (!one_of(v, no_words))
        snprintf(cfg->warning, sizeof cfg->warning,
                 "GEMMTUNE_PRELOAD=%.100s: expected on or off; passing every call to cuBLAS", v);
}

static void parse_log(const char *v, gt_pl_config *cfg)
{
    cfg->log = GT_PL_LOG_NONE;
    if (!v || !*v || one_of(v, no_words)) return;
    if (one_of(v, yes_words) || !strcasecmp(v, "stderr")) {
        cfg->log = GT_PL_LOG_STDERR;
        return;
    }
    if (strlen(v) >= sizeof cfg->log_path) {
        cfg->log = GT_PL_LOG_STDERR;
        snprintf(cfg->warning, sizeof cfg->warning, "GEMMTUNE_PRELOAD_LOG: path longer than %zu bytes; "
                 "logging to stderr", sizeof cfg->log_path - 1);
        return;
    }
    cfg->log = GT_PL_LOG_FILE;
    snprintf(cfg->log_path, sizeof cfg->log_path, "%s", v);
}

static void parse_batch(const char *v, gt_pl_config *cfg)
{
    cfg->max_batch = GT_PL_DEFAULT_MAX_BATCH;
    if (!v || !*v) return;
    char *end = NULL;
    long n = strtol(v, &end, 10);
    if (end == v || *end || n < 0 || n > GT_PL_DEFAULT_MAX_BATCH) {
        snprintf(cfg->warning, sizeof cfg->warning, "GEMMTUNE_PRELOAD_BATCH=%.100s: expected a count from 0 to "
                 "%d; serving every batch", v, GT_PL_DEFAULT_MAX_BATCH);
        return;
    }
    cfg->max_batch = (int)n;
}

/* NVIDIA_TF32_OVERRIDE=0 only forbids TF32; any other value, like CUBLAS_EMULATE_SINGLE_PRECISION, asks the
 * NVIDIA libraries for other FP32 numerics than gemmtune's, so those calls stay cuBLAS's. */
static const char *numerics_override(gt_pl_getenv_fn get)
{
    static const char *const names[] = {"NVIDIA_TF32_OVERRIDE", "CUBLAS_EMULATE_SINGLE_PRECISION"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
        const char *v = get(names[i]);
        if (v && *v && strcmp(v, "0") != 0) return names[i];
    }
    return NULL;
}

void gt_pl_config_parse(gt_pl_getenv_fn get, gt_pl_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    parse_batch(get("GEMMTUNE_PRELOAD_BATCH"), cfg);
    parse_log(get("GEMMTUNE_PRELOAD_LOG"), cfg);
    const char *sum = get("GEMMTUNE_PRELOAD_SUMMARY");
    if (sum && *sum && strlen(sum) < sizeof cfg->summary_path)
        snprintf(cfg->summary_path, sizeof cfg->summary_path, "%s", sum);
    parse_switch(get("GEMMTUNE_PRELOAD"), cfg); /* last: its warning matters most */
    const char *json = get("GEMMTUNE_JSON");
    if (json && *json) {
        if (strlen(json) < sizeof cfg->json_path) snprintf(cfg->json_path, sizeof cfg->json_path, "%s", json);
        else {
            cfg->enabled = 0;
            snprintf(cfg->warning, sizeof cfg->warning, "GEMMTUNE_JSON: path longer than %zu bytes; passing "
                     "every call to cuBLAS", sizeof cfg->json_path - 1);
        }
    }
    const char *fb = get("GEMMTUNE_FALLBACK");
    cfg->fallback_from_env = fb && *fb;
    cfg->numerics = numerics_override(get);
}

/* A database named but not made yet is the start of the loop (record, then tune into it): a notice. Anything else
 * that is not a regular file is refused before the loader opens it: a FIFO would block the program in open(),
 * /dev/zero would be read without end. */
gt_pl_source_state gt_pl_source_check(const gt_pl_config *cfg, const char *db_env, char *note, size_t n)
{
    static const char rest[] = "every GEMM goes to cuBLAS (GEMMTUNE_RECORD still records the shapes)";
    const int json = cfg->json_path[0] != '\0';
    const char *path = json ? cfg->json_path : db_env && *db_env ? db_env : NULL, *var = json ? "GEMMTUNE_JSON" : "GEMMTUNE_DB";
    struct stat st;
    note[0] = '\0';
    if (!path) return GT_PL_SOURCE_READ;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT && !json) snprintf(note, n, "no database at %s=%.900s yet: %s", var, path, rest);
        else snprintf(note, n, "%s=%.900s cannot be read (%s): %s", var, path, strerror(errno), rest);
        return GT_PL_SOURCE_NONE;
    }
    if (S_ISREG(st.st_mode)) return GT_PL_SOURCE_READ;
    snprintf(note, n, "%s=%.900s is not a regular file: %s", var, path, rest);
    return GT_PL_SOURCE_NONE;
}

int gt_pl_record_check(const char *path, char *note, size_t n)
{
    struct stat st;
    note[0] = '\0';
    if (!path || !*path || stat(path, &st) != 0 || S_ISREG(st.st_mode)) return 0;
    snprintf(note, n, "GEMMTUNE_RECORD=%.900s is not a regular file: not recording", path);
    return -1;
}
