/* Tiny test harness: GT_TEST(name, needs) defines a test that registers itself; CHECK records failures.
 * Runner: tests/main.c (`build/gt_tests --cpu | --gpu | --all [substring...]`). */
#ifndef GT_HARNESS_H
#define GT_HARNESS_H

#include <stdio.h>

typedef enum { GT_NEEDS_NONE, GT_NEEDS_NVRTC, GT_NEEDS_GPU } gt_needs;

typedef struct gt_test {
    const char *name, *file;
    gt_needs needs;
    void (*fn)(void);
    struct gt_test *next;
} gt_test;

void gt_test_register(gt_test *t);
void gt_check_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Mark the running test skipped, with the reason printed. Return from the test after calling it. */
void gt_skip(const char *why);
/* Number of CUDA devices, 0 when there is no GPU or no driver. */
int gt_test_gpu_count(void);
/* A fresh temporary path "/tmp/gt_test_XXXXXX<suffix>" (file not created); caller frees. */
char *gt_tmp_path(const char *suffix);
/* Run a shell command, capturing stdout+stderr into a malloc'd string (may be NULL); returns the exit status. */
int gt_run(const char *cmd, char **output);

#define GT_TEST(fn, needs_)                                                                  \
    static void fn(void);                                                                    \
    static gt_test fn##_entry = {#fn, __FILE__, needs_, fn, NULL};                           \
    __attribute__((constructor)) static void fn##_register(void) { gt_test_register(&fn##_entry); } \
    static void fn(void)

#define CHECK(cond) \
    do { if (!(cond)) gt_check_fail(__FILE__, __LINE__, "%s", #cond); } while (0)
#define CHECK_MSG(cond, ...) \
    do { if (!(cond)) gt_check_fail(__FILE__, __LINE__, __VA_ARGS__); } while (0)

/* Path of the built CLI for tests that run it. */
#define GT_CLI GT_BUILD_DIR "/gemmtune"

#endif
