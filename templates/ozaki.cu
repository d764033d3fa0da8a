// Family ozaki (kernels/ozaki.c, run by src/lib/backend_ozaki.c): FP32-accurate GEMM from exact integer products
// on the INT8 tensor cores, the Ozaki scheme II (after Ozaki, Uchino and Imamura). C = alpha op(A) op(B) + beta C
// in four steps, each a kernel here but the third, which the backend runs in this order (tests/perf/ozaki_study.cu
// runs the same sequence outside gemmtune, with the time of each step):
// 1. gt_oz_norms, gt_oz_scales: row i of op(A) scaled by 2^s_i and column j of op(B) by 2^t_j, powers of two
//    chosen from the 2-norms so that |A'B'| <= ||A'_i|| ||B'_j|| < P / 2, P the product of the moduli; A' and B'
//    are the scaled values rounded to integers (the method's only rounding, relative to each row's norm).
// 2. gt_oz_residues: A' mod p and B' mod p for each modulus p, as int8 in p's symmetric range, k contiguous.
// 3. (cuBLASLt) one INT8 GEMM a modulus, int32 sums, in one strided-batched call: exact while K 128^2 < 2^31.
// 4. gt_oz_reconstruct: the residues of each element of A'B' combined by Garner's mixed radix (symmetric digits,
//    so the sign needs no comparison with P / 2), evaluated in FP64, scaled back by 2^-(s_i + t_j), then alpha and
//    beta (C not read where beta == 0). Where a row of op(A) or a column of op(B) holds Inf or NaN, which no
//    integer can stand for, that element is an FP32 dot product instead (IEEE semantics, as SGEMM's).
// Every sum has a fixed order and every product is exact, so C is the same bit for bit from run to run.
// An operand is seen as "rows x K", element (r, k) at X[r ld + k], or at X[k ld + r] when trans.

#ifndef NMOD
#define NMOD 8 // moduli: 7 to 9 (P = 2^55.7, 2^63.6, 2^71.4)
#endif
#define GT_OZ_MAXMOD 10           // moduli at most
#define GT_OZ_BAD (-0x7fffffff - 1) // the scale of a row or column with Inf or NaN

// The moduli in use and what Garner's recurrence needs of them (the host fills it).
struct gt_oz_consts {
    int p[GT_OZ_MAXMOD];                   // the first NMOD of 256, 255, 253, 251, 247, 241, ... (pairwise coprime)
    unsigned magic[GT_OZ_MAXMOD];          // floor(2^32 / p), for the remainders of small integers
    int inv[GT_OZ_MAXMOD][GT_OZ_MAXMOD];   // inv[m][l] = p_m^-1 mod p_l, m < l
    int pow12[GT_OZ_MAXMOD], pow16[GT_OZ_MAXMOD], pow24[GT_OZ_MAXMOD]; // 2^12, 2^16, 2^24 mod p
    int bits;                              // rows and columns are scaled to a 2-norm below 2^bits
};

// r in [0, p) to p's symmetric range ([-128, 127] for 256).
__device__ __forceinline__ int gt_oz_sym(int r, int p) { return r > (p - 1) / 2 ? r - p : r; }

// x mod p in [0, p), for -2^23 <= x < 2^24 and 128 <= p <= 256, in integer arithmetic only (conversions between
// int and float run at an eighth of the FMA rate): u = x + p 2^16 is positive and below 2^25, so Barrett's quotient
// with floor(2^32 / p) is floor(u / p) or one less.
__device__ __forceinline__ int gt_oz_mod(int x, int p, unsigned magic)
{
    const unsigned u = (unsigned)(x + (p << 16)), q = __umulhi(u, magic);
    const int r = (int)(u - q * (unsigned)p);
    return r >= p ? r - p : r;
}

// Partial sums of squares: part[z rows + r] = sum over k in slice z (kslice values) of X(r, k)^2, in FP64, for 32
// rows a block of 32 x 8 threads; the eight warps' sums are added in warp order (the bits never depend on timing).
extern "C" __global__ void gt_oz_norms(const float *X, int ld, int trans, int rows, int K, int kslice, double *part)
{
    __shared__ double red[8][32];
    const int tx = threadIdx.x, ty = threadIdx.y, r0 = blockIdx.x * 32;
    const int k0 = blockIdx.y * kslice, k1 = min(K, k0 + kslice);
    if (trans) { // lanes along r (coalesced), warps along k: red[warp][row]
        double s = 0;
        const int r = r0 + tx;
        if (r < rows)
            for (int k = k0 + ty; k < k1; k += 8) {
                const double v = X[(size_t)k * ld + r];
                s = fma(v, v, s);
            }
        red[ty][tx] = s;
    } else { // warp w takes rows w, w + 8, ..., lanes along k: red[0][row]
        for (int y = ty; y < 32; y += 8) {
            double s = 0;
            const int r = r0 + y;
            if (r < rows)
                for (int k = k0 + tx; k < k1; k += 32) {
                    const double v = X[(size_t)r * ld + k];
                    s = fma(v, v, s);
                }
            for (int o = 16; o; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
            if (tx == 0) red[0][y] = s;
        }
    }
    __syncthreads();
    if (ty == 0 && r0 + tx < rows) {
        double s = red[0][tx];
        for (int w = 1; trans && w < 8; ++w) s += red[w][tx];
        part[(size_t)blockIdx.y * rows + r0 + tx] = s;
    }
}

// e[r] = bits - ceil(log2 ||X_r||) (so that ||X_r 2^e[r]|| < 2^bits), the slices' sums added in order; 0 for a
// zero row. A row with Inf or NaN gets e = GT_OZ_BAD (its residues are zeros; gt_oz_reconstruct takes its own way).
extern "C" __global__ void gt_oz_scales(const double *part, int slices, int rows, int bits, int *e)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    double s = 0;
    for (int z = 0; z < slices; ++z) s += part[(size_t)z * rows + r];
    int ex = 0;
    frexp(sqrt(s), &ex);
    e[r] = isfinite(s) ? (s > 0 ? bits - ex : 0) : GT_OZ_BAD;
}

// out[l][r][k] = rint(X(r, k) 2^e[r]) mod p_l in p_l's symmetric range, for every modulus l; ldo k's a row, rows x
// ldo a modulus, zeros from K to ldo. A block of 32 x 8 threads takes 32 rows by 128 k through shared memory
// (t[k][r]: both layouts read coalesced), then each thread four rows by four consecutive k, one 4-byte store a row
// and modulus. The scaled integer v (|v| < 2^bits <= 2^35) is v_h 2^24 + v_m 2^12 + v_l, so its residues come from
// 32-bit arithmetic.
extern "C" __global__ void gt_oz_residues(const float *X, int ld, int trans, int rows, int K, const int *e,
                                          gt_oz_consts c, signed char *out, int ldo)
{
    __shared__ float t[128][33];
    const int r0 = blockIdx.y * 32, k0 = blockIdx.x * 128, tx = threadIdx.x, ty = threadIdx.y;
    if (trans) {
        for (int kk = ty; kk < 128; kk += 8) {
            const int r = r0 + tx, k = k0 + kk;
            t[kk][tx] = r < rows && k < K ? X[(size_t)k * ld + r] : 0.0f;
        }
    } else {
        for (int y = ty; y < 32; y += 8)
            for (int j = 0; j < 4; ++j) {
                const int r = r0 + y, k = k0 + tx + 32 * j;
                t[tx + 32 * j][y] = r < rows && k < K ? X[(size_t)r * ld + k] : 0.0f;
            }
    }
    __syncthreads();
    for (int y = ty; y < 32; y += 8) {
        const int r = r0 + y, k = k0 + 4 * tx;
        if (r >= rows || k >= ldo) continue;
        const int er = e[r];
        const double s = er == GT_OZ_BAD ? 0.0 : ldexp(1.0, er);
        int vh[4], vm[4], vl[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const long long v = __double2ll_rn((double)t[4 * tx + j][y] * s);
            vh[j] = (int)(v >> 24), vm[j] = (int)((v >> 12) & 0xfff), vl[j] = (int)(v & 0xfff);
        }
#pragma unroll
        for (int l = 0; l < NMOD; ++l) {
            char4 o;
            signed char b[4];
#pragma unroll
            for (int j = 0; j < 4; ++j)
                b[j] = (signed char)gt_oz_sym(
                    gt_oz_mod(vh[j] * c.pow24[l] + vm[j] * c.pow12[l] + vl[j], c.p[l], c.magic[l]), c.p[l]);
            o.x = b[0], o.y = b[1], o.z = b[2], o.w = b[3];
            *(char4 *)(out + ((size_t)l * rows + r) * ldo + k) = o; // ldo is a multiple of 4, k too
        }
    }
}

// sum over k of op(A)(i, k) op(B)(k, j) in FP32, in order: for the elements whose row or column is not finite.
__device__ float gt_oz_dot(const float *A, int lda, int ta, const float *B, int ldb, int tb, int i, int j, int K)
{
    float s = 0.0f;
    for (int k = 0; k < K; ++k)
        s = fmaf(A[ta ? (size_t)k * lda + i : (size_t)i * lda + k], B[tb ? (size_t)j * ldb + k : (size_t)k * ldb + j], s);
    return s;
}

// C(i, j) = alpha x 2^-(s_i + t_j) + beta C(i, j), x the integer whose residue mod p_l is cr[l][i][j] (ldr a row,
// M x ldr a modulus); where row i or column j is not finite, x 2^-(s_i + t_j) is gt_oz_dot's instead.
extern "C" __global__ void gt_oz_reconstruct(const int *cr, int ldr, int M, int N, int K, gt_oz_consts c,
                                             const int *es, const int *et, float alpha, const float *A, int lda,
                                             int ta, const float *B, int ldb, int tb, float beta, float *C, int ldc)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= N) return;
    for (int i = blockIdx.y; i < M; i += gridDim.y) { // rows past gridDim.y's limit: the grid walks them
        int raw[NMOD], d[NMOD];
#pragma unroll
        for (int l = 0; l < NMOD; ++l) raw[l] = cr[((size_t)l * M + i) * ldr + j]; // all loads in flight at once
#pragma unroll
        for (int l = 0; l < NMOD; ++l) { // raw = h 2^16 + (raw & 0xffff), |h| <= 2^15
            int t = gt_oz_mod((raw[l] >> 16) * c.pow16[l] + (raw[l] & 0xffff), c.p[l], c.magic[l]);
#pragma unroll
            for (int m = 0; m < l; ++m) t = gt_oz_mod((t - d[m]) * c.inv[m][l], c.p[l], c.magic[l]);
            d[l] = gt_oz_sym(t, c.p[l]);
        }
        double x = d[NMOD - 1];
#pragma unroll
        for (int l = NMOD - 2; l >= 0; --l) x = fma(x, (double)c.p[l], (double)d[l]);
        const bool bad = es[i] == GT_OZ_BAD || et[j] == GT_OZ_BAD;
        const float v = bad ? alpha * gt_oz_dot(A, lda, ta, B, ldb, tb, i, j, K)
                            : (float)(alpha * ldexp(x, -(es[i] + et[j])));
        float *out = C + (size_t)i * ldc + j;
        *out = beta == 0.0f ? v : fmaf(beta, *out, v);
    }
}
