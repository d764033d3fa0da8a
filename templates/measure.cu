// The tuner's helper kernels (tuner/measure.c): operand generation, the validation's error and bitwise checks, the
// FP64 reference's inputs. Not a family: compiled once per worker with NVRTC for the device's arch, embedded like
// the templates. Alone: nvcc -arch=sm_90 -cubin templates/measure.cu   (tests: tests/test_gpu.c, tests/test_nvrtc.c)

// A grid-stride loop's first index for this thread, and its stride.
__device__ __forceinline__ unsigned long long first_index()
{
    return blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
}
__device__ __forceinline__ unsigned long long grid_stride() { return (unsigned long long)gridDim.x * blockDim.x; }

// p[i] uniform in [-1, 1) from a hash of seed and i.
extern "C" __global__ void gt_fill(float *p, unsigned long long n, unsigned long long seed)
{
    for (unsigned long long i = first_index(); i < n; i += grid_stride()) {
        unsigned long long z = seed + 0x9E3779B97F4A7C15ull * (i + 1);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        p[i] = (float)((z >> 40) * (1.0 / 16777216.0)) * 2.0f - 1.0f;
    }
}

extern "C" __global__ void gt_set(float *p, unsigned long long n, float v)
{
    for (unsigned long long i = first_index(); i < n; i += grid_stride()) p[i] = v;
}

extern "C" __global__ void gt_abs(const float *s, float *d, unsigned long long n)
{
    for (unsigned long long i = first_index(); i < n; i += grid_stride()) d[i] = fabsf(s[i]);
}

// err = |c - r| / (|alpha| absprod + |beta c0|), maximized into *maxbits (as float bits: non-negative floats order
// like their bits); NaN or Inf, or padding changed from c0, count as +inf.
extern "C" __global__ void gt_compare(const float *c, const float *r, const float *ab, const float *c0, int M, int N,
                                      int ldc, float alpha, float beta, unsigned *maxbits)
{
    float worst = 0.0f;
    const unsigned long long total = (unsigned long long)M * ldc;
    for (unsigned long long e = first_index(); e < total; e += grid_stride()) {
        const int i = (int)(e / ldc), j = (int)(e % ldc);
        const float v = c[e];
        float x;
        if (j >= N) {
            x = (__float_as_uint(v) == __float_as_uint(c0[e])) ? 0.0f : __int_as_float(0x7f800000);
        } else {
            const float bound =
                fabsf(alpha) * ab[(unsigned long long)i * N + j] + (beta != 0.0f ? fabsf(beta * c0[e]) : 0.0f);
            x = fabsf(v - r[e]) / fmaxf(bound, 1e-30f);
            if (!(x <= 3.0e38f)) x = __int_as_float(0x7f800000);
        }
        worst = fmaxf(worst, x);
    }
    atomicMax(maxbits, __float_as_uint(worst));
}

// Wide-range inputs: p[i] *= 2^e, e in [-20, 20] from a hash of the element (mode 1) or of its row (mode 2).
extern "C" __global__ void gt_scale(float *p, unsigned long long n, unsigned long long ld, int mode,
                                    unsigned long long seed)
{
    for (unsigned long long i = first_index(); i < n; i += grid_stride()) {
        unsigned long long z = seed ^ (0x9E3779B97F4A7C15ull * ((mode == 2 ? i / ld : i) + 7));
        z = (z ^ (z >> 31)) * 0xBF58476D1CE4E5B9ull;
        z ^= z >> 29;
        p[i] = ldexpf(p[i], (int)(z % 41) - 20);
    }
}

extern "C" __global__ void gt_widen(const float *s, double *d, unsigned long long n)
{
    for (unsigned long long i = first_index(); i < n; i += grid_stride()) d[i] = s[i];
}

// gt_compare against an FP64 reference, the error computed in FP64.
extern "C" __global__ void gt_compare64(const float *c, const double *r, const float *ab, const float *c0, int M,
                                        int N, int ldc, float alpha, float beta, unsigned *maxbits)
{
    float worst = 0.0f;
    const unsigned long long total = (unsigned long long)M * ldc;
    for (unsigned long long e = first_index(); e < total; e += grid_stride()) {
        const int i = (int)(e / ldc), j = (int)(e % ldc);
        if (j >= N) continue;
        const double bound = fabs((double)alpha) * ab[(unsigned long long)i * N + j] +
                             (beta != 0.0f ? fabs((double)beta * c0[e]) : 0.0);
        const double x = fabs((double)c[e] - r[e]) / fmax(bound, 1e-300);
        worst = fmaxf(worst, x <= 3.0e38 ? (float)x : __int_as_float(0x7f800000));
    }
    atomicMax(maxbits, __float_as_uint(worst));
}

// *diff |= 1 when a and b differ in any bit of n words (NaN payloads and -0 included).
extern "C" __global__ void gt_same(const unsigned *a, const unsigned *b, unsigned long long n, unsigned *diff)
{
    for (unsigned long long i = first_index(); i < n; i += grid_stride())
        if (a[i] != b[i]) {
            atomicOr(diff, 1u);
            return;
        }
}

// Straight-line code larger than an SM's instruction caches (4,096 FFMAs: 64 KiB), run before each timed call on
// every SM. The call then fetches its own code from memory, as it does in a program, where other kernels run
// between its calls. Timed back to back, a kernel keeps its code cached through the L2 flush (a memset's code is
// small), and kernels with long loops ran 4-14% faster than among other kernels (docs/BENCHMARKS.md, 2026-11-29,
// twenty-eighth session).
extern "C" __global__ void gt_code_flush(float *sink, float x)
{
    float a = x + threadIdx.x, b = a + 1.0f, c = a + 2.0f, d = a + 3.0f;
#pragma unroll
    for (int i = 0; i < 1024; ++i) {
        a = fmaf(a, 1.0001f, b);
        b = fmaf(b, 1.0001f, c);
        c = fmaf(c, 1.0001f, d);
        d = fmaf(d, 1.0001f, a);
    }
    if (a + b + c + d == 1234.5f) *sink = a; // never: keeps the chain
}
