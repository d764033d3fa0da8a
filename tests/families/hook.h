/* The test-only family test_hook (tests/families/hook.c): a plain GEMM whose kernel reads its operands from the
 * parameters its launch hook appends, not from gt_gemm's own. What the hook passes, for the tests that check it
 * (tests/test_kernels.c on the CPU, tests/test_gpu.c on a GPU); tests/families/test_hook.cu has the same layout. */
#ifndef GT_TEST_HOOK_H
#define GT_TEST_HOOK_H

#define GT_TEST_HOOK_MAGIC 0x600dcafeu /* the hook's second parameter: the kernel poisons C without it */

/* The hook's first parameter: the call as the hook saw it. */
typedef struct {
    const float *A, *B;
    float *C;
    long long lda, ldb, ldc;
    unsigned long long stream; /* not read by the kernel: the CPU test checks the hook was given the call's */
    int m, n, k;
} gt_test_hook_view;

#endif
