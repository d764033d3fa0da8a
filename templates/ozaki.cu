// Family ozaki (kernels/ozaki.c, run by src/lib/backend_ozaki.c): FP32-accurate GEMM from exact integer products
// on the INT8 tensor cores, the Ozaki scheme II (after Ozaki, Uchino and Imamura). C = alpha op(A) op(B) + beta C
// in five steps, each a kernel here but the fourth, which the backend runs in this order (tests/perf/ozaki_study.cu
// runs the same sequence outside gemmtune, with the time of each step); the first three take both operands in one
// launch:
// 1. gt_oz_norms: the 2-norms of the rows of op(A) and the columns of op(B), in partial sums over K slices. Row i of
//    op(A) is scaled by 2^s_i and column j of op(B) by 2^t_j, powers of two chosen from the 2-norms so that |A'B'|
//    <= ||A'_i|| ||B'_j|| < P / 2, P the product of the moduli; A' and B' are the scaled values rounded to integers
//    (the method's only rounding, relative to each row's norm).
// 2. gt_oz_scales: the powers of two, from the norms' sums.
// 3. gt_oz_residues: A' mod p and B' mod p for each modulus p, as int8 in p's symmetric range, k contiguous.
// 4. (cuBLASLt) one INT8 GEMM a modulus, int32 sums, in one strided-batched call: exact while K 128^2 < 2^31.
// 5. gt_oz_reconstruct: the residues of each element of A'B' combined by Garner's mixed radix (symmetric digits,
//    so the sign needs no comparison with P / 2; each digit one remainder of a sum of weighted residues and the
//    digits before it, every term below 2^15 and the sum below 2^19, exact in FP32), evaluated in FP64, scaled
//    back by 2^-(s_i + t_j), then alpha and beta (C not read where beta == 0). Where a row of op(A) or a column of
//    op(B) holds Inf or NaN, which no integer can stand for, that element is an FP32 dot product instead (IEEE
//    semantics, as SGEMM's).
// Every sum has a fixed order and every product is exact, so C is the same bit for bit from run to run.
// An operand is seen as "rows x K", element (r, k) at X[r ld + k], or at X[k ld + r] when trans.

#ifndef NMOD
#define NMOD 8 // moduli: 7 to 9 (P = 2^55.7, 2^63.6, 2^71.4)
#endif
#define GT_OZ_MAXMOD 10           // moduli at most
#define GT_OZ_BAD (-0x7fffffff - 1) // the scale of a row or column with Inf or NaN

// The moduli in use and what Garner's recurrence needs of them (the host fills it: gt_ozaki_consts_make). Every
// residue is a float holding a small integer: FP32 arithmetic is exact on integers below 2^24 and issues at twice
// the integer rate, and the magic-number tricks below stand in for conversions (which run at an eighth of it).
struct gt_oz_consts {
    double pd[GT_OZ_MAXMOD];               // the first NMOD of 256, 255, 253, 251, 247, 241, ... (pairwise coprime)
    float p[GT_OZ_MAXMOD], invp[GT_OZ_MAXMOD]; // ... as floats, and 1 / p rounded
    float w[GT_OZ_MAXMOD][GT_OZ_MAXMOD];   // Garner's weights mod p_l: w[m][l] = Q_m / Q_l (m < l), w[l][l] = 1 / Q_l,
                                           // Q_m the product of the first m moduli
    float pow16[GT_OZ_MAXMOD];             // 2^16 mod p, in p's symmetric range
    float pow22[GT_OZ_MAXMOD];             // 2^22 mod p, in p's symmetric range (|pow22| <= 128)
    int bits;                              // rows and columns are scaled to a 2-norm below 2^bits
};

#define GT_OZ_ROUND 12582912.0f // 1.5 2^23: x + it - it is x rounded to an integer, for |x| < 2^22

// x minus p times the quotient x / p rounded to nearest (x * invp, invp = 1 / p rounded), for an integer-valued x:
// two exact FMAs. For an odd p and |x| <= 2^22 it is x's residue in p's symmetric range [-(p - 1) / 2, (p - 1) / 2],
// in three operations: the rounded quotient is exact (x invp is within 2^22 2^-32 = 2^-10 of x / p, and x / p, p odd,
// lies at least 1 / (2p) > 2^-9 from any half-integer).
__device__ __forceinline__ float gt_oz_srem(float x, float p, float invp)
{
    const float q = fmaf(x, invp, GT_OZ_ROUND) - GT_OZ_ROUND;
    return fmaf(-q, p, x);
}

// The residue, in p_l's symmetric range, of an int32 sum of the products (|raw| <= 131056 2^14 < 2^31 - 2^15):
// modulus 0 (256) takes raw's low byte as a signed one; the others split raw = h 2^16 + lo with lo in [-2^15, 2^15)
// and h in [-2^15, 2^15], both to floats by their bits (no conversion), and reduce x = h (2^16 mod p, symmetric) +
// lo, |x| <= 2^15 127 + 2^15 = 2^22, by gt_oz_srem.
__device__ __forceinline__ float gt_oz_residue_of(int raw, int l, const gt_oz_consts &c)
{
    if (l == 0) return __int_as_float(((raw & 0xff) ^ 0x80) | 0x4b000000) - 8388736.0f; // 2^23 + 2^7
    const float lo = __int_as_float(((raw & 0xffff) ^ 0x8000) | 0x4b000000) - 8421376.0f; // 2^23 + 2^15
    const float h = __int_as_float((((raw + 0x8000) >> 16) + 0x8000) | 0x4b000000) - 8421376.0f;
    return gt_oz_srem(fmaf(h, c.pow16[l], lo), c.p[l], c.invp[l]);
}

// The low byte of the integer-valued float x (|x| < 2^22), in two's complement: the bits of x + 1.5 2^23.
__device__ __forceinline__ unsigned gt_oz_byte(float x) { return (unsigned)__float_as_int(x + GT_OZ_ROUND); }

// One operand as the norms and residues see it: rows x K, element (r, k) at X[r ld + k], or at X[k ld + r] when
// trans; its norms' K slices (slices of kslice values: kernels/ozaki.c), their partial sums part[z rows + r], its
// scales e and its residues out (NMOD x prow x ldo int8, rows from rows to prow zero). Host twin: gt_ozaki_operand.
struct gt_oz_operand {
    const float *X;
    double *part;
    int *e;
    signed char *out;
    int ld, trans, rows, prow, slices, kslice;
};

// The launches over both operands run op(A)'s blocks first (nba of them), then op(B)'s: each kernel below is a
// body for one operand (o, its block blk), inlined once for each, so that each reads its operand's fields from the
// kernel's parameters (an operand chosen at run time made the residues 7% slower on an H200).
#define GT_OZ_BOTH(body, ...)                                                                                          \
    ((int)blockIdx.x < nba ? body(a, (int)blockIdx.x, __VA_ARGS__) : body(b, (int)blockIdx.x - nba, __VA_ARGS__))

// The sum of X[at + k step]^2 for k = from, from + by, ... below to, in FP64, in that order; eight loads issued
// before their sums, so that each thread keeps eight in flight (the kernel waits on memory).
__device__ __forceinline__ double gt_oz_sumsq(const float *X, size_t at, size_t step, int from, int to, int by)
{
    double s = 0;
    int k = from;
    for (; k + 7 * by < to; k += 8 * by) {
        float v[8];
#pragma unroll
        for (int j = 0; j < 8; ++j) v[j] = X[at + (size_t)(k + j * by) * step];
#pragma unroll
        for (int j = 0; j < 8; ++j) s = fma((double)v[j], (double)v[j], s);
    }
    for (; k < to; k += by) {
        const double v = X[at + (size_t)k * step];
        s = fma(v, v, s);
    }
    return s;
}

// Partial sums of squares: part[z rows + r] = sum over k in slice z of X(r, k)^2, in FP64, for 32 rows a block of
// 32 x 8 threads, consecutive blocks on consecutive rows of one slice; the eight warps' sums are added in warp
// order (the bits never depend on timing).
__device__ __forceinline__ void gt_oz_norms_of(const gt_oz_operand &o, int blk, int K)
{
    __shared__ double red[8][32];
    const int rb = (o.rows + 31) / 32, tx = threadIdx.x, ty = threadIdx.y, r0 = blk % rb * 32, z = blk / rb;
    const int k0 = z * o.kslice, k1 = min(K, k0 + o.kslice);
    if (o.trans) { // lanes along r (coalesced), warps along k: red[warp][row]
        const int r = r0 + tx;
        red[ty][tx] = r < o.rows ? gt_oz_sumsq(o.X, r, o.ld, k0 + ty, k1, 8) : 0.0;
    } else { // warp w takes rows w, w + 8, ..., lanes along k: red[0][row]
        for (int y = ty; y < 32; y += 8) {
            const int r = r0 + y;
            double s = r < o.rows ? gt_oz_sumsq(o.X, (size_t)r * o.ld, 1, k0 + tx, k1, 32) : 0.0;
            for (int d = 16; d; d /= 2) s += __shfl_xor_sync(0xffffffffu, s, d);
            if (tx == 0) red[0][y] = s;
        }
    }
    __syncthreads();
    if (ty == 0 && r0 + tx < o.rows) {
        double s = red[0][tx];
        for (int w = 1; o.trans && w < 8; ++w) s += red[w][tx];
        o.part[(size_t)z * o.rows + r0 + tx] = s;
    }
}
extern "C" __global__ void gt_oz_norms(gt_oz_operand a, gt_oz_operand b, int nba, int K)
{
    GT_OZ_BOTH(gt_oz_norms_of, K);
}

// e[r] = bits - ceil(log2 ||X_r||) (so that ||X_r 2^e[r]|| < 2^bits), a row a thread, the slices' sums added in
// order; 0 for a zero row. A row with Inf or NaN gets GT_OZ_BAD (its
// residues are zeros; gt_oz_reconstruct takes its own way).
__device__ __forceinline__ void gt_oz_scales_of(const gt_oz_operand &o, int blk, int bits)
{
    const int r = blk * blockDim.x + threadIdx.x;
    if (r >= o.rows) return;
    double s = 0;
    int z = 0;
    for (; z + 8 <= o.slices; z += 8) { // eight loads in flight, then their sum in order
        double v[8];
#pragma unroll
        for (int j = 0; j < 8; ++j) v[j] = o.part[(size_t)(z + j) * o.rows + r];
#pragma unroll
        for (int j = 0; j < 8; ++j) s += v[j];
    }
    for (; z < o.slices; ++z) s += o.part[(size_t)z * o.rows + r];
    int ex = 0;
    frexp(sqrt(s), &ex);
    o.e[r] = isfinite(s) ? (s > 0 ? bits - ex : 0) : GT_OZ_BAD;
}
extern "C" __global__ void gt_oz_scales(gt_oz_operand a, gt_oz_operand b, int nba, int bits)
{
    GT_OZ_BOTH(gt_oz_scales_of, bits);
}

// out[l][r][k] = rint(X(r, k) 2^e[r]) mod p_l in p_l's symmetric range, for every modulus l; ldo k's a row, prow x
// ldo a modulus, zeros from K to ldo and in rows rows to prow (the products' padding). A block of 32 x 8 threads
// takes 32 rows by 128 k (consecutive blocks along k) through shared memory (t[k][r]: both layouts read
// coalesced), then each thread four rows by four consecutive k, one 4-byte store a row and modulus. The scaled
// integer v (|v| < 2^bits <= 2^35, a float rounded to an integer: scaling by a power of two is exact) is v_h 2^22 +
// v_r with |v_r| <= 2^21, so x = v_h (2^22 mod p) + v_r, the middle term in p's symmetric range (|x| <= 2^21 +
// (2^13 + 1/2) 128 < 2^22: exact in FP32), is v mod p, made a residue in range by gt_oz_srem; modulus 0 is 256
// (kernels/ozaki.c), whose residue is x's low byte itself. (Before revision 6: v rounded in FP64 and split at 2^24,
// the remainder corrected either way: 28% more instructions.)
__device__ __forceinline__ void gt_oz_residues_of(const gt_oz_operand &o, int blk, int K, int ldo,
                                                  const gt_oz_consts &c)
{
    __shared__ float t[128][33];
    const int kt = (ldo + 127) / 128, r0 = blk / kt * 32, k0 = blk % kt * 128, tx = threadIdx.x, ty = threadIdx.y;
    if (o.trans) {
        for (int kk = ty; kk < 128; kk += 8) {
            const int r = r0 + tx, k = k0 + kk;
            t[kk][tx] = r < o.rows && k < K ? o.X[(size_t)k * o.ld + r] : 0.0f;
        }
    } else {
        for (int y = ty; y < 32; y += 8)
            for (int j = 0; j < 4; ++j) {
                const int r = r0 + y, k = k0 + tx + 32 * j;
                t[tx + 32 * j][y] = r < o.rows && k < K ? o.X[(size_t)r * o.ld + k] : 0.0f;
            }
    }
    __syncthreads();
    for (int y = ty; y < 32; y += 8) {
        const int r = r0 + y, k = k0 + 4 * tx;
        if (r >= o.prow || k >= ldo) continue;
        const int er = r < o.rows ? o.e[r] : GT_OZ_BAD; // a padding row: zeros
        // 2^er as two float factors, each in the float range (|er| < 190), so that X(r, k) 2^er is exact in FP32
        const float s1 = er == GT_OZ_BAD ? 0.0f : __int_as_float((127 + er / 2) << 23);
        const float s2 = er == GT_OZ_BAD ? 0.0f : __int_as_float((127 + er - er / 2) << 23);
        float vh[4], vr[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const float v = rintf(t[4 * tx + j][y] * s1 * s2); // a float of 24 bits: exact, |v| < 2^35
            const float h = rintf(v * 0x1p-22f);
            vh[j] = h, vr[j] = fmaf(-h, 0x1p22f, v);
        }
#pragma unroll
        for (int l = 0; l < NMOD; ++l) {
            unsigned bt[4];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const float x = fmaf(vh[j], c.pow22[l], vr[j]);
                bt[j] = gt_oz_byte(l == 0 ? x : gt_oz_srem(x, c.p[l], c.invp[l]));
            }
            *(unsigned *)(o.out + ((size_t)l * o.prow + r) * ldo + k) = // ldo is a multiple of 4, k too
                __byte_perm(__byte_perm(bt[0], bt[1], 0x0040), __byte_perm(bt[2], bt[3], 0x0040), 0x5410);
        }
    }
}
extern "C" __global__ void gt_oz_residues(gt_oz_operand a, gt_oz_operand b, int nba, int K, int ldo, gt_oz_consts c)
{
    GT_OZ_BOTH(gt_oz_residues_of, K, ldo, c);
}

// 2^e as a double, for -1022 <= e <= 1023 (the scales' sums stay within +-400): exact, and cheaper than ldexp.
__device__ __forceinline__ double gt_oz_pow2(int e) { return __longlong_as_double((long long)(1023 + e) << 52); }

// sum over k of op(A)(i, k) op(B)(k, j) in FP32, in order: for the elements whose row or column is not finite.
__device__ float gt_oz_dot(const float *A, int lda, int ta, const float *B, int ldb, int tb, int i, int j, int K)
{
    float s = 0.0f;
    for (int k = 0; k < K; ++k)
        s = fmaf(A[ta ? (size_t)k * lda + i : (size_t)i * lda + k], B[tb ? (size_t)j * ldb + k : (size_t)k * ldb + j], s);
    return s;
}

// C(i, j) = alpha x 2^-(s_i + t_j) + beta C(i, j), x the integer whose residue mod p_l is cr[l][i][j] (ldr a row,
// a multiple of 4; mp x ldr a modulus, mp >= M); where row i or column j is not finite, x 2^-(s_i + t_j) is gt_oz_dot's
// instead. A thread takes two consecutive columns (the host's GT_OZAKI_RC), each modulus's pair in one 8-byte load,
// all of them in flight at once (the kernel waits on memory more than on its arithmetic); column N, where N is odd,
// is read, not used. Four blocks an SM (64 registers, no spills): on an H200 faster than four columns a thread at
// 128 registers or one at 56 (docs/BENCHMARKS.md, twenty-first session).
extern "C" __global__ void __launch_bounds__(256, 4)
gt_oz_reconstruct(const int *cr, int ldr, int mp, int M, int N, int K, gt_oz_consts c, const int *es, const int *et,
                  float alpha, const float *A, int lda, int ta, const float *B, int ldb, int tb, float beta, float *C,
                  int ldc)
{
    const int j0 = 2 * (blockIdx.x * blockDim.x + threadIdx.x);
    if (j0 >= N) return;
    for (int i = blockIdx.y; i < M; i += gridDim.y) { // rows past gridDim.y's limit: the grid walks them
        int2 raw[NMOD];
#pragma unroll
        for (int l = 0; l < NMOD; ++l) raw[l] = *(const int2 *)(cr + ((size_t)l * mp + i) * ldr + j0);
#pragma unroll
        for (int q = 0; q < 2; ++q) {
            const int j = j0 + q;
            if (j >= N) break;
            float d[NMOD];
#pragma unroll
            for (int l = 0; l < NMOD; ++l) {
                // d_l = (r_l - sum over m < l of d_m Q_m) / Q_l mod p_l, r_l the residue: one remainder of a sum
                // below 2^19, every term below 2^15 (|d_m| <= 128, 0 <= w < 256)
                float t = gt_oz_residue_of(q == 0 ? raw[l].x : raw[l].y, l, c);
                if (l > 0) {
                    t *= c.w[l][l];
#pragma unroll
                    for (int m = 0; m < l; ++m) t = fmaf(-d[m], c.w[m][l], t);
                    t = gt_oz_srem(t, c.p[l], c.invp[l]);
                }
                d[l] = t;
            }
            double x = d[NMOD - 1];
#pragma unroll
            for (int l = NMOD - 2; l >= 0; --l) x = fma(x, c.pd[l], (double)d[l]);
            const bool bad = es[i] == GT_OZ_BAD || et[j] == GT_OZ_BAD;
            const float v = bad ? alpha * gt_oz_dot(A, lda, ta, B, ldb, tb, i, j, K)
                                : (float)(alpha * (x * gt_oz_pow2(-(es[i] + et[j]))));
            float *out = C + (size_t)i * ldc + j;
            *out = beta == 0.0f ? v : fmaf(beta, *out, v);
        }
    }
}
