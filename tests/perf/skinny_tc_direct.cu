// Study (issue 28, math class tf32x3): skinny3's products (three TF32 MMAs a pair, templates/skinny.cu with TC 1)
// with skinnyr's loads (templates/skinnyr.cu): the large operand straight from global memory into the MMA's A
// fragments, no shared-memory stage of it and no barrier in the K loop. Row-major, as the templates: C (S x L) =
// X (S x K) Y (K x L), Y along L (nn, or tn with X stored K x S).
//
// tcd_gemm: the tensor cores compute C transposed, a warp's 16 columns of L (MT tiles of the MMA's m16) by the NS
// n8 tiles of S; lane (g, t) loads Y(k + t, l + g), Y(k + t, l + g + 8), Y(k + t + 4, l + g), Y(k + t + 4, l + g + 8)
// for each step of 8 k's, P steps ahead in registers, and splits them into big and small TF32 parts at use. X's
// slice of K waits in shared memory in the B fragments' order (a lane's two k's of an n tile: one 8-byte read),
// split at use. big*small and small*big go into corr, big*big into chunk, both added into sum in FP32 every FOLD
// steps (skinny3's scheme: the tensor cores' accumulation truncates, the fold keeps FP32 accuracy). K slices meet
// in a workspace, added in slice order by a second kernel.
//
// Checked against FP64 (a double GEMM on the GPU): the error beside cuBLAS SGEMM pedantic's on the same inputs.
// Timed against cuBLAS SGEMM pedantic in one process, cold L2 (a 256 MiB memset before each run), median of 20.
// Build and run on the GPU machine:
//   nvcc -O3 -arch=sm_90 -std=c++17 -o build-perf/skinny_tc_direct tests/perf/skinny_tc_direct.cu -lcublas
//   build-perf/skinny_tc_direct [SHAPE_INDEX]
#include <cstdlib>
#include <type_traits>

#include "../../templates/tf32.cuh"
#include "skinny_study.h"

// v <- *p where ok (streamed, 256 bytes into L2), else v unchanged.
__device__ __forceinline__ void ld_y(float &v, const float *p, bool ok)
{
    asm volatile("{\n .reg .pred q;\n setp.ne.b32 q, %2, 0;\n @q ld.global.cs.L2::256B.f32 %0, [%1];\n}\n"
                 : "+f"(v)
                 : "l"(p), "r"((int)ok));
}

__device__ __forceinline__ void cp4(unsigned d, const float *src, int n)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(n));
}

// Where X(s, kk) of the slice waits: the B fragment of step kk / 8, n tile s / 8, lane (g = s % 8, t = kk % 4),
// half kk % 8 / 4 (b0 or b1): a lane's pair is 8 contiguous bytes, a warp's 256.
template <int NS> __device__ __forceinline__ int xat(int s, int kk)
{
    return (((kk / 8 * NS + s / 8) * 32 + s % 8 * 4 + kk % 4) * 2) + kk % 8 / 4;
}

template <int NS, int MT, int WARPS, int P, int MINB, bool XT, int FOLD, bool XPRE = false>
__global__ void __launch_bounds__(32 * WARPS, MINB)
    tcd_gemm(const float *__restrict__ X, const float *__restrict__ Y, float *__restrict__ ws, int S, int L, int K,
             int ldx, int ldy, int per)
{
    extern __shared__ float4 sm4[];
    float *xs = (float *)sm4;
    const int k0 = blockIdx.z * per, n = max(0, min(K, k0 + per) - k0), steps = (n + 7) / 8;
    const int rounded = (steps + P - 1) / P * P; // steps added: whole P (zeros past n)
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int l0 = (blockIdx.x * WARPS + warp) * 16 * MT;
    // X's slice into the fragments' order, 4-byte copies, zeros past S and n.
    const unsigned xs_s = (unsigned)__cvta_generic_to_shared(xs);
    if (XPRE) { // split once here: a lane's b0, b1 big then small, one 16-byte read at use
        unsigned *xu = (unsigned *)xs;
        for (int i = threadIdx.x; i < rounded * 8 * NS * 8; i += 32 * WARPS) {
            const int s = XT ? i % (NS * 8) : i / (rounded * 8), kk = XT ? i / (NS * 8) : i % (rounded * 8);
            const float v = s < S && kk < n ? (XT ? X[(size_t)(k0 + kk) * ldx + s] : X[(size_t)s * ldx + k0 + kk]) : 0.0f;
            const int at = xat<NS>(s, kk), f = at / 2, h = at % 2;
            gt_tf32_split(v, xu[4 * f + h], xu[4 * f + 2 + h]);
        }
    } else if (XT) {
        for (int i = threadIdx.x; i < rounded * 8 * NS * 8; i += 32 * WARPS) {
            const int s = i % (NS * 8), kk = i / (NS * 8);
            const bool in = s < S && kk < n;
            cp4(xs_s + 4 * xat<NS>(s, kk), in ? X + (size_t)(k0 + kk) * ldx + s : X, in ? 4 : 0);
        }
    } else {
        for (int kk = threadIdx.x; kk < rounded * 8; kk += 32 * WARPS)
#pragma unroll 4
            for (int s = 0; s < NS * 8; ++s) {
                const bool in = s < S && kk < n;
                cp4(xs_s + 4 * xat<NS>(s, kk), in ? X + (size_t)s * ldx + k0 + kk : X, in ? 4 : 0);
            }
    }
    asm volatile("cp.async.commit_group;\n" ::);
    // The lane's Y: step p's a0..a3 of m16 tile m, P steps ahead.
    float y[P][MT][4];
    const float *yp = Y + (size_t)(k0 + t) * ldy + l0 + g;
    bool ok[MT][2];
#pragma unroll
    for (int m = 0; m < MT; ++m) ok[m][0] = l0 + 16 * m + g < L, ok[m][1] = l0 + 16 * m + g + 8 < L;
    auto load = [&](int p, int step, auto tail_c) {
        constexpr bool tail = decltype(tail_c)::value;
        const int k = 8 * step + t;
#pragma unroll
        for (int m = 0; m < MT; ++m) {
            const float *q = yp + (size_t)8 * step * ldy + 16 * m;
            if (tail) y[p][m][0] = y[p][m][1] = y[p][m][2] = y[p][m][3] = 0.0f;
            ld_y(y[p][m][0], q, ok[m][0] && (!tail || k < n));
            ld_y(y[p][m][1], q + 8, ok[m][1] && (!tail || k < n));
            ld_y(y[p][m][2], q + 4 * (size_t)ldy, ok[m][0] && (!tail || k + 4 < n));
            ld_y(y[p][m][3], q + 4 * (size_t)ldy + 8, ok[m][1] && (!tail || k + 4 < n));
        }
    };
#pragma unroll
    for (int p = 0; p < P; ++p) load(p, p, std::true_type{});
    asm volatile("cp.async.wait_group 0;\n" ::);
    __syncthreads();
    float sum[MT][NS][4], chunk[MT][NS][4], corr[MT][NS][4];
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int j = 0; j < NS; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) sum[m][j][e] = chunk[m][j][e] = corr[m][j][e] = 0.0f;
    const float2 *xf = (const float2 *)xs + lane;
    auto fold = [&] {
#pragma unroll
        for (int m = 0; m < MT; ++m)
#pragma unroll
            for (int j = 0; j < NS; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    sum[m][j][e] += chunk[m][j][e] + corr[m][j][e];
                    chunk[m][j][e] = corr[m][j][e] = 0.0f;
                }
    };
    // P steps from kb: each consumes the step loaded P steps ago and loads the one P steps on.
    auto steps_p = [&](int kb, auto tail) {
#pragma unroll
        for (int p = 0; p < P; ++p) {
            unsigned a[MT][2][4];
#pragma unroll
            for (int m = 0; m < MT; ++m)
#pragma unroll
                for (int e = 0; e < 4; ++e) gt_tf32_split(y[p][m][e], a[m][0][e], a[m][1][e]);
#pragma unroll
            for (int j = 0; j < NS; ++j) {
                unsigned bb[2], bs[2];
                if (XPRE) {
                    const uint4 xv = ((const uint4 *)xs)[((kb + p) * NS + j) * 32 + lane];
                    bb[0] = xv.x, bb[1] = xv.y, bs[0] = xv.z, bs[1] = xv.w;
                } else {
                    const float2 xv = xf[((kb + p) * NS + j) * 32];
                    gt_tf32_split(xv.x, bb[0], bs[0]);
                    gt_tf32_split(xv.y, bb[1], bs[1]);
                }
#pragma unroll
                for (int m = 0; m < MT; ++m) {
                    gt_mma_tf32(corr[m][j], a[m][0], bs);
                    gt_mma_tf32(corr[m][j], a[m][1], bb);
                    gt_mma_tf32(chunk[m][j], a[m][0], bb);
                }
            }
            load(p, kb + p + P, tail);
            if ((kb + p + 1) % FOLD == 0) fold();
        }
    };
    int kb = 0;
#pragma unroll 1
    for (; 8 * (kb + 2 * P) <= n; kb += P) steps_p(kb, std::false_type{});
#pragma unroll 1
    for (; kb < rounded; kb += P) steps_p(kb, std::true_type{});
    fold();
    float *slice = ws + (size_t)blockIdx.z * (((size_t)S * L + 3) / 4 * 4);
#pragma unroll
    for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int j = 0; j < NS; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int s = 8 * j + 2 * t + e % 2, l = l0 + 16 * m + g + 8 * (e / 2);
                if (s < S && l < L) slice[(size_t)s * L + l] = sum[m][j][e];
            }
}

template <int NS, int MT, int WARPS, int P, int MINB, int FOLD, bool XPRE = false>
static void variant(const shape &s, bufs &b, float cub, double cub_err)
{
    if (s.S > 8 * NS || s.S <= 8 * NS - 8) return;
    auto kern = s.xt ? tcd_gemm<NS, MT, WARPS, P, MINB, true, FOLD, XPRE> : tcd_gemm<NS, MT, WARPS, P, MINB, false, FOLD, XPRE>;
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, kern));
    const int bl = WARPS * 16 * MT, gx = (s.L + bl - 1) / bl;
    study_best best;
    auto smem = [](int per) { return (size_t)per * NS * 8 * 4 * (XPRE ? 2 : 1); };
    study_slices(s, b, kern, {8, 12, 16, 20, 24, 32}, 0, 8 * P, smem, 200 * 1024, gx, 32 * WARPS,
                 [&] { return err64(s, b.C, b.D); }, best);
    printf("%-16s NS=%d MT=%d W=%d P=%d MINB=%d FOLD=%d XPRE=%d regs=%3d spill=%3zu  best %6.1f us (main %5.1f, z %2d)  x "
           "cuBLAS %.3f  err %.2e (cuBLAS %.2e, x%.2f)\n",
           s.name, NS, MT, WARPS, P, MINB, FOLD, (int)XPRE, fa.numRegs, fa.localSizeBytes, best.us, best.main_us,
           best.z, cub / best.us, best.err, cub_err, best.err / cub_err);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const shape shapes[] = {
        {33, 8191, 4097, false, "33x8191x4097 nn"}, {33, 8191, 4097, true, "33x8191x4097 tn"},
        {50, 4492, 6473, false, "50x4492x6473 nn"}, {50, 4492, 6473, true, "50x4492x6473 tn"},
        {16, 16384, 4096, false, "16x16384x4096 nn"}, {64, 4096, 4096, false, "64x4096x4096 nn"},
        {32, 4096, 4096, false, "32x4096x4096 nn"},
    };
    bufs b;
    study_each(shapes, argc, argv, b, [&](const shape &s) {
        const double cub_err = study_reference(s, b);
        const float cub = timed([&] { cublas_run(s, b); }, b.flush);
        printf("%-16s cuBLAS %.1f us, err %.2e\n", s.name, cub, cub_err);
        variant<2, 2, 8, 4, 2, 4>(s, b, cub, cub_err);
        variant<2, 2, 8, 4, 2, 4, true>(s, b, cub, cub_err);
        variant<4, 1, 8, 4, 2, 4>(s, b, cub, cub_err);
        variant<4, 1, 8, 4, 2, 4, true>(s, b, cub, cub_err);
        variant<4, 2, 8, 4, 1, 4, true>(s, b, cub, cub_err);
        variant<5, 1, 8, 4, 2, 4>(s, b, cub, cub_err);
        variant<5, 1, 8, 4, 2, 4, true>(s, b, cub, cub_err);
        variant<5, 2, 8, 4, 1, 4>(s, b, cub, cub_err);
        variant<5, 2, 8, 4, 1, 4, true>(s, b, cub, cub_err);
        variant<5, 2, 4, 4, 2, 4, true>(s, b, cub, cub_err);
        variant<5, 2, 8, 2, 1, 4, true>(s, b, cub, cub_err);
        variant<7, 1, 8, 4, 2, 4, true>(s, b, cub, cub_err);
        variant<7, 1, 8, 2, 2, 4, true>(s, b, cub, cub_err);
        variant<7, 2, 8, 2, 1, 4, true>(s, b, cub, cub_err);
        variant<7, 2, 4, 4, 1, 4, true>(s, b, cub, cub_err);
        variant<8, 1, 8, 4, 1, 4, true>(s, b, cub, cub_err);
        variant<8, 2, 4, 2, 1, 4, true>(s, b, cub, cub_err);
    });
    return 0;
}
