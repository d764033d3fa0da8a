/* Family ozaki: FP32-accurate GEMM from exact integer products on the INT8 tensor cores (the Ozaki scheme II):
 * each row of op(A) and column of op(B) scaled by a power of two and rounded to an integer, the integers' residues
 * modulo NMOD small coprime moduli multiplied as INT8 matrices (cuBLASLt, int32 sums: exact), and the product
 * rebuilt from its residues (Chinese remaindering, Garner's form) in FP64. The only rounding is the scaling's,
 * relative to each row's 2-norm; with NMOD 8 the error against FP64 measured 10 to 90 times below SGEMM's
 * (docs/BENCHMARKS.md). A member of the FP32-accurate class (validated against FP64 like tf32x3wg), served only to
 * handles that ask for it. Nothing of ours is tuned inside: the candidates are the moduli counts and which of
 * cuBLASLt's algorithms runs the products (its heuristic's first is up to 1.5x slower than its third). The kernels
 * around the integer products are templates/ozaki.cu; the runtime's "ozaki" backend (src/lib/backend_ozaki.c)
 * compiles them with NVRTC and runs the sequence. Tested by tests/test_ozaki.c. */
#include "ozaki_family.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define REJECT GT_REJECT

static const int moduli[GT_OZAKI_MAXMOD] = {256, 255, 253, 251, 247, 241, 239, 233, 229, 227}; /* pairwise coprime */

/* a^-1 mod p (p prime to a, at most 256), by search. */
static int inverse(int a, int p)
{
    for (int x = 1; x < p; ++x)
        if (a % p * x % p == 1) return x;
    return 0;
}

int gt_ozaki_consts_make(int nmod, gt_ozaki_consts *out)
{
    if (nmod < 2 || nmod > 9) return -1; /* 10 moduli would need scaled integers past 2^35 */
    gt_ozaki_consts c;
    memset(&c, 0, sizeof c);
    double bits = 0;
    for (int l = 0; l < nmod; ++l) {
        const int p = moduli[l];
        c.pd[l] = p, c.p[l] = (float)p, c.invp[l] = 1.0f / (float)p;
        const int p16 = (1 << 16) % p, p22 = (1 << 22) % p;
        c.pow16[l] = (float)(p16 > p / 2 ? p16 - p : p16), c.pow22[l] = (float)(p22 > p / 2 ? p22 - p : p22);
        bits += log2(p);
    }
    for (int l = 1; l < nmod; ++l) { /* Garner's weights mod p_l: Q_m Q_l^-1, Q_m = p_0 ... p_(m-1) */
        const int p = moduli[l];
        int q[GT_OZAKI_MAXMOD + 1] = {1};
        for (int m = 0; m < l; ++m) q[m + 1] = q[m] * moduli[m] % p;
        const int qinv = inverse(q[l], p);
        for (int m = 0; m <= l; ++m) c.w[m][l] = (float)(m < l ? q[m] * qinv % p : qinv);
    }
    c.bits = (int)floor((bits - 1.0) / 2.0 - 0.01); /* ||A'_i|| ||B'_j|| < 2^(2 bits) <= P / 2 */
    *out = c;
    return 0;
}

static size_t up256(size_t x) { return (x + 255) / 256 * 256; }

/* K slices of the norms of rows x K: enough blocks of 32 rows to make about 1056 (eight blocks of 256 threads on
 * each of 132 SMs: the norms wait on memory and need many loads in flight), at most one for each 256 of K. */
static int slices(int rows, int k)
{
    const int rb = (rows + 31) / 32, want = (1056 + rb - 1) / rb, most = (k + 255) / 256;
    return want < most ? (want > 1 ? want : 1) : (most > 1 ? most : 1);
}

void gt_ozaki_layout_make(int nmod, const gt_shape *s, size_t lt_bytes, gt_ozaki_layout *out)
{
    gt_ozaki_layout L;
    const size_t m = (size_t)s->m, n = (size_t)s->n;
    L.kp = (s->k + 15) / 16 * 16;
    L.mp = (s->m + 15) / 16 * 16;
    L.np = (s->n + 15) / 16 * 16;
    L.slices_a = slices(s->m, s->k), L.slices_b = slices(s->n, s->k);
    L.kslice_a = (s->k + L.slices_a - 1) / L.slices_a, L.kslice_b = (s->k + L.slices_b - 1) / L.slices_b;
    L.norms = (gt_ozaki_blocks){(s->m + 31) / 32 * L.slices_a, (s->n + 31) / 32 * L.slices_b}; /* 32 rows a block */
    L.scales = (gt_ozaki_blocks){(s->m + 255) / 256, (s->n + 255) / 256};                     /* a row a thread */
    L.residues = (gt_ozaki_blocks){(L.kp + 127) / 128 * ((L.mp + 31) / 32), (L.kp + 127) / 128 * ((L.np + 31) / 32)};
    L.prod = 0;
    L.part = up256((size_t)nmod * (size_t)L.mp * (size_t)L.np * 4);
    L.scale = L.part + up256(((size_t)L.slices_a * m + (size_t)L.slices_b * n) * 8);
    L.res_a = L.scale + up256((m + n) * 4);
    L.res_b = L.res_a + up256((size_t)nmod * (size_t)L.mp * (size_t)L.kp);
    L.lt = L.res_b + up256((size_t)nmod * (size_t)L.np * (size_t)L.kp);
    L.total = L.lt + up256(lt_bytes);
    *out = L;
}

static int legal(const gt_params *p, const gt_limits *lim, char *why, size_t n)
{
    gt_ozaki_consts c;
    if (gt_ozaki_consts_make(p->v[GT_OZAKI_P_NMOD], &c)) REJECT("NMOD=%d: want 2 to 9 moduli", p->v[GT_OZAKI_P_NMOD]);
    if (p->v[GT_OZAKI_P_REV] < 1) REJECT("REV=%d: want the revision of templates/ozaki.cu (1 ..)", p->v[GT_OZAKI_P_REV]);
    if (p->v[GT_OZAKI_P_PICK] < 0 || p->v[GT_OZAKI_P_PICK] > GT_OZAKI_MAX_PICK)
        REJECT("PICK=%d: want a rank in cuBLASLt's heuristic list, 0 to %d", p->v[GT_OZAKI_P_PICK], GT_OZAKI_MAX_PICK);
    if (lim->cc_major * 10 + lim->cc_minor < 75) REJECT("INT8 tensor-core GEMMs in cuBLASLt need sm_75 or later");
    return 1;
}

/* The library's kernels pick their own grids; the workspace is the backend's (it adds cuBLASLt's). */
static void launch(const gt_params *p, const gt_shape *s, int sms, gt_launch *out)
{
    (void)sms;
    gt_ozaki_layout L;
    gt_ozaki_layout_make(p->v[GT_OZAKI_P_NMOD], s, 0, &L);
    *out = (gt_launch){.splitk = 1, .ws_bytes = L.total};
}

/* Any pointers, leading dimensions and layout; K within the int32 sums' exactness, M and N within the kernels'
 * grids, and a workspace under GT_OZAKI_WS_CAP. */
static int applicable(const gt_params *p, const gt_call *c)
{
    const gt_shape *s = &c->shape;
    gt_ozaki_layout L;
    if (s->k > GT_OZAKI_MAX_K || s->m > GT_OZAKI_MAX_SIDE || s->n > GT_OZAKI_MAX_SIDE) return 0;
    gt_ozaki_layout_make(p->v[GT_OZAKI_P_NMOD], s, 0, &L);
    return L.total <= GT_OZAKI_WS_CAP;
}

const gt_family gt_family_ozaki = {
    .name = "ozaki",
    .doc = "FP32 accuracy from exact INT8 tensor-core products of residues (Ozaki scheme II), per moduli count",
    .build = GT_BUILD_NONE,
    .backend = "ozaki",
    .space = GT_SPACE_STATIC,
    .screen_full = 1, /* scaling, residues and the rebuild do not shrink with a proxy's K: 2.8x slower at K 512 */
    .exact_only = 1,  /* 7 moduli pass against FP64 at K 4096 and fail at K 2048 on wide inputs */
    .math = GT_MATH_TF32X3,
    .reference = GT_REF_FP64,
    .nparams = GT_OZAKI_NP,
    /* The default space, from issue 29's sweeps on an H100: 9 moduli never won (8 passed wherever 9 did, 20%
     * faster), nor did cuBLASLt's sixth algorithm; rank 2 won the large squares, 1 and 3 the smaller shapes. */
    .params = {{"NMOD", "moduli: INT8 products per GEMM (7: 2^55.7 of range, 8: 2^63.6; 2 to 9 are legal)", 2, {7, 8}},
               {"REV", "revision of templates/ozaki.cu the candidate was timed with (GT_OZAKI_REV)", 1,
                {GT_OZAKI_REV}},
               {"PICK",
                "rank in cuBLASLt's heuristic list of the algorithm that runs the INT8 products (0: its first); every "
                "one sums exactly, so they differ in speed alone",
                5, {0, 1, 2, 3, 4}, .optional = 1}},
    .legal = legal,
    .launch = launch,
    .applicable = applicable,
};
