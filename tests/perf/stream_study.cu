// Study (issue 28): how fast can a skinny kernel's pipeline read its large operand, with no arithmetic at all?
// Y is K x L, row-major with leading dimension ld (odd: rows start at any 4-byte boundary). A grid of (L / BL,
// 1, Z) blocks of 128 threads reads it as templates/skinny.cu does: each block a strip of BL columns over its
// slice of K, through a STAGES-deep cp.async pipeline of KC rows a stage (4-byte copies, or 16-byte ones where
// VEC and ld allow), each thread summing the floats it copied (so that nothing is optimized away). SHIFT: every row
// in the 16-byte pieces of memory that hold its columns (BL / 4 + 1 of them), stored as many floats into its row of
// shared memory as its first column lies past a 16-byte boundary, and read back a float at a time from there. LINE:
// 4-byte copies of whole 128-byte lines (a warp's 32 copies one line; the row's BL / 32 + 1 lines), the row stored
// as many floats in as its first column lies past a line. Extra shared memory caps the blocks a SM. Times: CUDA
// events, L2 flushed before each run, median of 20.
// Build and run on the GPU machine: nvcc -O3 -arch=sm_90 -o stream_study tests/perf/stream_study.cu && ./stream_study
#include <algorithm>
#include <cstdio>
#include <vector>

#define CHECK(x)                                                                                                   \
    do {                                                                                                           \
        cudaError_t e_ = (x);                                                                                      \
        if (e_ != cudaSuccess) {                                                                                   \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                                               \
            return 1;                                                                                              \
        }                                                                                                          \
    } while (0)

template <int B> __device__ __forceinline__ void cp_async(unsigned dst, const float *src)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(dst), "l"(src), "n"(B));
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

// Floats a row of a stage takes: BL, and room for its shift (SHIFT: up to 3, LINE: up to 31).
__host__ __device__ constexpr int row_floats(int bl, bool shift, bool line)
{
    return line ? bl + 32 : shift ? bl + 4 : bl;
}

template <int BL, int KC, int STAGES, bool VEC, bool SHIFT = false, bool LINE = false>
__global__ void __launch_bounds__(128) stream(const float *Y, int K, int L, int ld, float *out, unsigned mask)
{
    constexpr int P = row_floats(BL, SHIFT, LINE);
    const unsigned ym = (unsigned)((size_t)Y / 4 + blockIdx.x * BL);
    extern __shared__ float4 smem4[];
    float *s = (float *)smem4;
    const int l0 = blockIdx.x * BL, per = (K + gridDim.z - 1) / gridDim.z, k0 = blockIdx.z * per,
              k1 = min(K, k0 + per), chunks = (k1 - k0 + KC - 1) / KC;
    float acc = 0.0f;
    for (int c = 1 - STAGES; c < chunks; ++c) {
        if (c >= 0) {
            wait<STAGES - 2>();
            __syncthreads();
            const float *st = s + (c % STAGES) * KC * P;
            for (int i = threadIdx.x; i < KC * BL; i += 128) {
                // the shift computed by every variant (mask 0 unless SHIFT), so that they read alike
                const int k = i / BL, sh = (int)((ym + (unsigned)(k0 + c * KC + k) * (unsigned)ld) & mask);
                acc += st[k * P + sh + i % BL];
            }
        }
        const int next = c + STAGES - 1;
        if (LINE && next < chunks) {
            float *st = s + (next % STAGES) * KC * P;
            const int w = threadIdx.x / 32, lane = threadIdx.x % 32;
            for (int r = w; r < KC; r += 4) { // warp w: rows w, w + 4, ...; a line of the row a copy instruction
                const int k = k0 + next * KC + r, sh = (int)((ym + (unsigned)k * (unsigned)ld) & 31u);
                if (k >= k1 || l0 + BL > L) continue;
#pragma unroll
                for (int i = 0; i <= BL / 32; ++i) {
                    const int c = 32 * i + lane;
                    const float *src = Y + (size_t)k * ld + l0 - sh + c;
                    if (c >= sh && c < sh + BL) cp_async<4>((unsigned)__cvta_generic_to_shared(st + r * P + c), src);
                }
            }
        } else if (SHIFT && next < chunks) {
            float *st = s + (next % STAGES) * KC * P;
            // q < KC BL / 4: piece q % (BL / 4) of row q / (BL / 4); then thread r < KC the row's last piece, BL / 4
            for (int q = threadIdx.x; q < KC * (BL / 4) + KC; q += 128) {
                const bool last = q >= KC * (BL / 4);
                const int r = last ? q - KC * (BL / 4) : q / (BL / 4), p = last ? BL / 4 : q % (BL / 4);
                const int k = k0 + next * KC + r, sh = (int)((ym + (unsigned)k * (unsigned)ld) & 3u);
                if (k >= k1 || l0 + BL + 4 > L || (k == 0 && l0 == 0)) continue; // pieces inside Y only (a study)
                const float *src = Y + (size_t)k * ld + l0 - sh + 4 * p;
                cp_async<16>((unsigned)__cvta_generic_to_shared(st + r * P + 4 * p), src);
            }
        } else if (next < chunks) {
            float *st = s + (next % STAGES) * KC * P;
            for (int q = threadIdx.x; q < KC * BL / 4; q += 128) {
                const int k = k0 + next * KC + q / (BL / 4), l = l0 + 4 * (q % (BL / 4));
                if (k >= k1 || l + 3 >= L) continue;
                const float *src = Y + (size_t)k * ld + l;
                const unsigned d = (unsigned)__cvta_generic_to_shared(st + 4 * q);
                if (VEC) cp_async<16>(d, src);
                else cp_async<4>(d, src), cp_async<4>(d + 4, src + 1), cp_async<4>(d + 8, src + 2),
                    cp_async<4>(d + 12, src + 3);
            }
        }
        commit();
    }
    wait<0>();
    if (acc == 1234.5f) out[0] = acc; // never: keeps the sums
}

template <int BL, int KC, int STAGES, bool VEC, bool SHIFT = false, bool LINE = false>
static int run(const char *name, const float *Y, int K, int L, int ld, float *out, float *flush, int per_sm, int sms)
{
    const int smem_data = STAGES * KC * row_floats(BL, SHIFT, LINE) * 4, cap = 227 * 1024 / per_sm - 1024;
    if (smem_data > cap) return 0;
    const int smem = std::max(smem_data, cap);
    auto k = stream<BL, KC, STAGES, VEC, SHIFT, LINE>;
    CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    const int tiles = (L + BL - 1) / BL;
    const int z = std::max(1, std::min(64, per_sm * sms / tiles));
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<float> t;
    for (int r = 0; r < 23; ++r) {
        CHECK(cudaMemset(flush, r, 256u << 20));
        CHECK(cudaEventRecord(a));
        k<<<dim3(tiles, 1, z), 128, smem>>>(Y, K, L, ld, out, LINE ? 31u : SHIFT ? 3u : 0u);
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, a, b));
        if (r >= 3) t.push_back(ms);
    }
    CHECK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    const double us = 1e3 * t[t.size() / 2], bytes = 4.0 * K * L;
    printf("%-6s ld %5d BL %3d KC %2d STAGES %d per_sm %d z %2d  %7.1f us  %5.2f TB/s\n", name, ld, BL, KC, STAGES,
           per_sm, z, us, bytes / us / 1e6);
    return 0;
}

template <int BL, int KC, int STAGES>
static void sweep(const float *Y, int K, int L, int ld, float *out, float *flush, int sms)
{
    for (int per_sm : {2, 3, 4, 6, 8}) {
        if (ld % 4 == 0) run<BL, KC, STAGES, true>("vec16", Y, K, L, ld, out, flush, per_sm, sms);
        run<BL, KC, STAGES, false>("4-byte", Y, K, L, ld, out, flush, per_sm, sms);
        run<BL, KC, STAGES, false, true>("shift", Y, K, L, ld, out, flush, per_sm, sms);
        run<BL, KC, STAGES, false, false, true>("line", Y, K, L, ld, out, flush, per_sm, sms);
    }
}

int main()
{
    int sms;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    float *Y, *out, *flush;
    CHECK(cudaMalloc(&Y, 4ull * 4100 * 8200));
    CHECK(cudaMemset(Y, 0, 4ull * 4100 * 8200));
    CHECK(cudaMalloc(&out, 4));
    CHECK(cudaMalloc(&flush, 256u << 20));
    const int shapes[2][3] = {{4097, 8191, 8191}, {4096, 8192, 8192}}; // K, L, ld
    for (const auto &s : shapes) {
        sweep<128, 16, 3>(Y, s[0], s[1], s[2], out, flush, sms);
        sweep<128, 16, 4>(Y, s[0], s[1], s[2], out, flush, sms);
        sweep<128, 32, 4>(Y, s[0], s[1], s[2], out, flush, sms);
        sweep<256, 16, 3>(Y, s[0], s[1], s[2], out, flush, sms);
        sweep<256, 16, 4>(Y, s[0], s[1], s[2], out, flush, sms);
        sweep<512, 8, 4>(Y, s[0], s[1], s[2], out, flush, sms);
        sweep<512, 16, 4>(Y, s[0], s[1], s[2], out, flush, sms);
        sweep<64, 32, 4>(Y, s[0], s[1], s[2], out, flush, sms);
    }
    return 0;
}
