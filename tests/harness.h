/* Tiny test harness: GT_TEST(name, needs) defines a test that registers itself; CHECK records failures.
 * Runner: tests/main.c (`build/gt_tests --cpu | --gpu | --all [substring...]`, from any directory). */
#ifndef GT_HARNESS_H
#define GT_HARNESS_H

/* SMs of the GPU the tests' launch geometry is for (an H100 or H200); a persistent grid is correct on any GPU. */
#define GT_TEST_SMS 132

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
/* A fresh path "<run dir>/<n><suffix>" (nothing created there). The run dir is this run's own temporary folder,
 * removed with all it holds when gt_tests exits, so a test may leave its files behind. Caller frees. */
char *gt_tmp_path(const char *suffix);
/* This run's temporary folder (also $TMPDIR for every command a test starts). */
const char *gt_tmp_dir(void);
/* Run a shell command, capturing stdout+stderr into a malloc'd string (may be NULL); returns the exit status. */
int gt_run(const char *cmd, char **output);
/* gt_run of a printf-style command line: *out (the previous output, freed first) receives its output, never NULL. */
int gt_runf(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* For a long test: "    <done>/<total> <what>, <failed> failed, <s> s" every 10 s ($GT_PROGRESS_S) of the running
 * test (the first after 10 s, so a short test prints none), so a slow run never looks hung. Thread-safe. */
void gt_progress(int done, int total, int failed, const char *what);

/* Absolute paths found from /proc/self/exe, never from the working directory: the folder holding gt_tests (the
 * build), and the source tree above it (the folder with tests/harness.h). */
const char *gt_build_dir(void);
const char *gt_src_root(void);

/* The same three for the shell commands given to gt_run (quoted; the runner exports them). */
#define GT_CLI "\"$GT_TEST_CLI\""     /* the built CLI beside gt_tests */
#define GT_ROOT "\"$GT_TEST_ROOT\""   /* the source tree */
#define GT_BUILD "\"$GT_TEST_BUILD\"" /* the build folder */

#define GT_TEST(fn, needs_)                                                                  \
    static void fn(void);                                                                    \
    static gt_test fn##_entry = {#fn, __FILE__, needs_, fn, NULL};                           \
    __attribute__((constructor)) static void fn##_register(void) { gt_test_register(&fn##_entry); } \
    static void fn(void)

#define CHECK(cond) \
    do { if (!(cond)) gt_check_fail(__FILE__, __LINE__, "%s", #cond); } while (0)
#define CHECK_MSG(cond, ...) \
    do { if (!(cond)) gt_check_fail(__FILE__, __LINE__, __VA_ARGS__); } while (0)

#endif
