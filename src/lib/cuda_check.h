/* The one home of the checks on CUDA calls, for code that reports into its caller's message buffer: `err` of
 * `errlen` bytes, both in scope. On failure the buffer gets "<what>: <the API's text for the status>" and on_fail
 * runs (`return -1`, `goto fail`). Used by src/lib, tuner/ and src/preload (each may include src/lib's headers). */
#ifndef GT_CUDA_CHECK_H
#define GT_CUDA_CHECK_H

#include <cuda_runtime_api.h>
#include <stdio.h>

/* Any API whose calls return a status: call is evaluated once (it may be a status already in hand, checked after
 * a cleanup), ok is its success value, text(status) its message. */
#define GT_TRY_GEN(type, ok, text, call, what, on_fail)                                                          \
    do {                                                                                                         \
        const type gt_status_ = (call);                                                                          \
        if (gt_status_ != (ok)) {                                                                                \
            snprintf(err, errlen, "%s: %s", (what), text(gt_status_));                                           \
            on_fail;                                                                                             \
        }                                                                                                        \
    } while (0)

/* The CUDA runtime API (the only one gemmtune calls: a binary starts without a driver). */
#define GT_CUDA_CHECK(call, what, on_fail) GT_TRY_GEN(cudaError_t, cudaSuccess, cudaGetErrorString, call, what, on_fail)
/* The common forms: the call's own text says what failed. */
#define GT_CUDA_TRY(call) GT_CUDA_CHECK(call, #call, return -1)
#define GT_CUDA_TRY_GOTO(call) GT_CUDA_CHECK(call, #call, goto fail)

#endif
