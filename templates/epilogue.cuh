// The epilogue of every family: the final value of a C element, and the guarded store of W consecutive results of
// one row, a vector access where the caller's alignment allows. With SPLITK > 1 the raw partial sums go to the
// slice's workspace instead (gt_splitk_reduce in common.cuh applies alpha and beta). beta == 0 never reads C.
// Compiled with every template (tests/test_nvrtc.c); results checked against cuBLAS by tests/test_gpu.c.
#ifndef GT_EPILOGUE_CUH
#define GT_EPILOGUE_CUH

#include "common.cuh"

// Final value of one C element (i, j), both in range.
__device__ __forceinline__ void gt_out(int M, int N, float *__restrict__ C, int ldc, float *__restrict__ ws, int i,
                                       int j, float acc, float alpha, float beta)
{
#if SPLITK > 1
    (void)C; (void)ldc; (void)alpha; (void)beta;
    ws[((size_t)blockIdx.z * M + i) * N + j] = acc;
#else
    (void)M; (void)N; (void)ws;
    float *c = C + (size_t)i * ldc + j;
    *c = beta == 0.0f ? alpha * acc : alpha * acc + beta * *c;
#endif
}

// W floats as one vector value (W = 2 or 4): the type, s * v, and r += beta * o per element, rounded once.
template <int W> struct gt_vec;
template <> struct gt_vec<2> {
    typedef float2 type;
    static __device__ __forceinline__ float2 scaled(float s, const float *v) { return make_float2(s * v[0], s * v[1]); }
    static __device__ __forceinline__ void split(float2 v, float *o) { o[0] = v.x, o[1] = v.y; }
    static __device__ __forceinline__ float2 join(const float *v) { return make_float2(v[0], v[1]); }
    static __device__ __forceinline__ void fma(float2 &r, float beta, float2 o)
    {
        r.x = fmaf(beta, o.x, r.x), r.y = fmaf(beta, o.y, r.y);
    }
};
template <> struct gt_vec<4> {
    typedef float4 type;
    static __device__ __forceinline__ float4 scaled(float s, const float *v)
    {
        return make_float4(s * v[0], s * v[1], s * v[2], s * v[3]);
    }
    static __device__ __forceinline__ void split(float4 v, float *o) { o[0] = v.x, o[1] = v.y, o[2] = v.z, o[3] = v.w; }
    static __device__ __forceinline__ float4 join(const float *v) { return make_float4(v[0], v[1], v[2], v[3]); }
    static __device__ __forceinline__ void fma(float4 &r, float beta, float4 o)
    {
        r.x = fmaf(beta, o.x, r.x), r.y = fmaf(beta, o.y, r.y), r.z = fmaf(beta, o.z, r.z), r.w = fmaf(beta, o.w, r.w);
    }
};

// The W floats at c (one W-wide access) = alpha x, plus beta c as fmaf(beta, c, alpha x) where beta != 0.
template <int W> __device__ __forceinline__ void gt_put_fma(float *c, const float *x, float alpha, float beta)
{
    typedef typename gt_vec<W>::type V;
    V r = gt_vec<W>::scaled(alpha, x);
    if (beta != 0.0f) gt_vec<W>::fma(r, beta, *(const V *)c);
    *(V *)c = r;
}

// The four floats at c (one float4 access) = alpha x where beta == 0, else alpha x + beta c as written, which
// --fmad=true contracts into one FMA of the compiler's choosing.
__device__ __forceinline__ void gt_put4_contract(float *c, const float *x, float alpha, float beta)
{
    float4 v = make_float4(x[0], x[1], x[2], x[3]);
    if (beta == 0.0f) {
        v.x *= alpha, v.y *= alpha, v.z *= alpha, v.w *= alpha;
    } else {
        const float4 o = *(const float4 *)c;
        v.x = alpha * v.x + beta * o.x;
        v.y = alpha * v.y + beta * o.y;
        v.z = alpha * v.z + beta * o.z;
        v.w = alpha * v.w + beta * o.w;
    }
    *(float4 *)c = v;
}

// How gt_store rounds alpha x + beta c where beta != 0, and stores split-K partials. The forms differ in results
// (which of the two products the FMA keeps exact) and in SASS, so each family keeps the one its kernels were
// validated and tuned with: changing a family's form changes its results (tests/perf/sass_diff.sh shows where).
enum {
    GT_EPI_FMA,      // fmaf(beta, c, alpha x) everywhere: the source fixes the rounding (tf32x3, tf32x3wg; the form
                     // for a new family)
    GT_EPI_FMA_VEC,  // fmaf(beta, c, alpha x) on the W-wide path; elsewhere (edges, unaligned C) gt_out's
                     // alpha x + beta c, contracted as the compiler chooses (multistage)
    GT_EPI_CONTRACT  // W = 4: gt_put4_contract, else gt_out; split-K partials as a float4 where N and ws allow (vec4,
                     // warptile)
};

// C(i, j..j+W-1) from the products x[0..W) (row i from column j; any of them may lie past M or N). vc: C and ldc
// allow W-wide accesses (GT_VEC_OK(W, C, ldc)). Written in each family's order, and x a copy where a family passed
// values (tf32x3, vec4, warptile): ptxas's register allocation, in the main loop too, follows the order of the
// PTX, so any other order changes the kernels (tests/perf/sass_diff.sh).
template <int W, int FORM>
__device__ __forceinline__ void gt_store(int M, int N, float *__restrict__ C, int ldc, float *__restrict__ ws, int i,
                                         int j, const float *x, float alpha, float beta, bool vc)
{
    static_assert((W == 2 || W == 4) && (FORM != GT_EPI_CONTRACT || W == 4), "W: 2 or 4 (GT_EPI_CONTRACT: 4)");
    if (i >= M) return;
#if SPLITK > 1
    (void)vc;
    float *w = ws + ((size_t)blockIdx.z * M + i) * N + j;
    if (FORM == GT_EPI_CONTRACT && (N & 3) == 0 && (((unsigned long long)ws & 15ull) == 0) && j + 3 < N) {
        *(float4 *)w = make_float4(x[0], x[1], x[2], x[3]);
        return;
    }
#else
    if constexpr (FORM == GT_EPI_FMA) {
        float *c = C + (size_t)i * ldc + j;
        if (vc && j + W - 1 < N) return gt_put_fma<W>(c, x, alpha, beta);
        if (j < N) c[0] = beta == 0.0f ? alpha * x[0] : fmaf(beta, c[0], alpha * x[0]);
        if (j + 1 < N) c[1] = beta == 0.0f ? alpha * x[1] : fmaf(beta, c[1], alpha * x[1]);
        if constexpr (W > 2) if (j + 2 < N) c[2] = beta == 0.0f ? alpha * x[2] : fmaf(beta, c[2], alpha * x[2]);
        if constexpr (W > 2) if (j + 3 < N) c[3] = beta == 0.0f ? alpha * x[3] : fmaf(beta, c[3], alpha * x[3]);
        return;
    }
    if (vc && j + W - 1 < N) {
        if constexpr (FORM == GT_EPI_FMA_VEC) gt_put_fma<W>(C + (size_t)i * ldc + j, x, alpha, beta);
        else gt_put4_contract(C + (size_t)i * ldc + j, x, alpha, beta);
        return;
    }
#endif
    if constexpr (FORM == GT_EPI_FMA_VEC) { // multistage's loop (unrolled statements change its SASS)
#pragma unroll
        for (int n = 0; n < W; ++n)
            if (j + n < N) gt_out(M, N, C, ldc, ws, i, j + n, x[n], alpha, beta);
        return;
    }
    if (j < N) gt_out(M, N, C, ldc, ws, i, j, x[0], alpha, beta);
    if (j + 1 < N) gt_out(M, N, C, ldc, ws, i, j + 1, x[1], alpha, beta);
    if constexpr (W > 2) if (j + 2 < N) gt_out(M, N, C, ldc, ws, i, j + 2, x[2], alpha, beta);
    if constexpr (W > 2) if (j + 3 < N) gt_out(M, N, C, ldc, ws, i, j + 3, x[3], alpha, beta);
}

// Where beta != 0, a tile's C values are read before any of them is written: a store to C may alias any later load
// of C as far as the compiler knows (ldc is a run-time value), so value by value each load waits for the store
// before it, one memory latency per step of the epilogue. gt_fetch_c reads the W values of row i from column j (0
// past M or N) that gt_store_c then writes as fmaf(beta, old, alpha x): gt_store<W, GT_EPI_FMA>'s rounding.
template <int W>
__device__ __forceinline__ void gt_fetch_c(int M, int N, const float *__restrict__ C, int ldc, int i, int j, bool vc,
                                           float *old)
{
    typedef typename gt_vec<W>::type V;
    const float *c = C + (size_t)i * ldc + j;
    if (i < M && vc && j + W - 1 < N) {
        gt_vec<W>::split(*(const V *)c, old);
        return;
    }
#pragma unroll
    for (int n = 0; n < W; ++n) old[n] = i < M && j + n < N ? c[n] : 0.0f;
}

template <int W>
__device__ __forceinline__ void gt_store_c(int M, int N, float *__restrict__ C, int ldc, int i, int j, const float *x,
                                           const float *old, float alpha, float beta, bool vc)
{
    typedef typename gt_vec<W>::type V;
    if (i >= M) return;
    float r[W];
#pragma unroll
    for (int n = 0; n < W; ++n) r[n] = fmaf(beta, old[n], alpha * x[n]);
    float *c = C + (size_t)i * ldc + j;
    if (vc && j + W - 1 < N) {
        *(V *)c = gt_vec<W>::join(r);
        return;
    }
#pragma unroll
    for (int n = 0; n < W; ++n)
        if (j + n < N) c[n] = r[n];
}

#endif
