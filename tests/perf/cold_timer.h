// The skinny studies' timer (tests/perf/skinny_*.cu, lt_space.cu): f's median time in µs
// over 20 runs after 3 untimed ones, each run after a 256 MiB memset of flush (a cold L2), CUDA events around f
// alone.
#pragma once
#include <algorithm>
#include <vector>

#include "cuda_check.h"

// timed_with: the same with flush() in place of the memset (a study's other way to a cold L2).
template <class F, class Flush> static float timed_with(F f, Flush flush)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> t;
    for (int r = 0; r < 3; ++r) f();
    for (int r = 0; r < 20; ++r) {
        flush(r);
        CK(cudaEventRecord(a));
        f();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms * 1000.0f);
    }
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

template <class F> static float timed(F f, float *flush)
{
    return timed_with(f, [&](int r) { CK(cudaMemset(flush, r, 256u << 20)); });
}
