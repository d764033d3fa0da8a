/* Family ozaki (kernels/ozaki.c) and its backend without a GPU: registration and class, parameter checks, the
 * moduli's constants, the workspace layout and the limits of applicability, NVRTC compiles of templates/ozaki.cu,
 * and the backend's description and replay rule; on a GPU, the backend alone against cuBLAS at the edges and on
 * rows with Inf or NaN. Tuned, validated against FP64 and served: loader_gpu_ozaki_winners_are_served_to_handles_
 * that_ask (tests/test_loader_gpu.c). Run: gt_tests ozaki */
#include "backend.h"
#include "compile.h"
#include "harness.h"
#include "measure.h"
#include "ozaki_family.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const gt_family *fam(void) { return gt_family_find("ozaki"); }

static gt_params nmod(int n)
{
    gt_params p;
    memset(&p, 0, sizeof p);
    p.v[GT_OZAKI_P_NMOD] = n, p.v[GT_OZAKI_P_REV] = GT_OZAKI_REV;
    return p;
}

/* Tallies the default space's points by (NMOD, PICK): ctx is int[2][5], NMOD 7..8 by PICK 0..4. */
static int count(const gt_family *f, const gt_params *p, void *ctx)
{
    (void)f;
    int(*seen)[5] = ctx;
    const int n = p->v[GT_OZAKI_P_NMOD], pick = p->v[GT_OZAKI_P_PICK];
    CHECK(n >= 7 && n <= 8 && pick >= 0 && pick <= 4 && p->v[GT_OZAKI_P_REV] == GT_OZAKI_REV);
    if (n >= 7 && n <= 8 && pick >= 0 && pick <= 4) seen[n - 7][pick]++;
    return 0;
}

GT_TEST(ozaki_is_registered_in_the_fp32_accurate_class_with_its_backend, GT_NEEDS_NONE)
{
    const gt_family *f = fam();
    CHECK(f != NULL);
    if (!f) return;
    CHECK(f->build == GT_BUILD_NONE && f->space == GT_SPACE_STATIC && f->backend && !strcmp(f->backend, "ozaki"));
    CHECK(f->math == GT_MATH_TF32X3 && gt_family_reference(f) == GT_REF_FP64 && !f->batched && !f->test_only);
    CHECK_MSG(gt_backend_find("ozaki") != NULL, "gt_tests links cuBLAS: the backend must be available");
    gt_limits l;
    gt_limits_for_arch("sm_90", &l);
    int seen[2][5] = {{0}};
    CHECK(gt_enumerate(f, &l, count, seen) == 10); /* NMOD 7 and 8, each with cuBLASLt's first five algorithms */
    for (int i = 0; i < 10; ++i)
        CHECK_MSG(seen[i / 5][i % 5] == 1, "NMOD=%d PICK=%d: %d", 7 + i / 5, i % 5, seen[i / 5][i % 5]);
    char text[64], want[64], err[128];
    gt_params p = nmod(8), q;
    gt_params_format(f, &p, text, sizeof text); /* PICK 0 is left out: rows stored before PICK read as what they ran */
    snprintf(want, sizeof want, "NMOD=8,REV=%d", GT_OZAKI_REV);
    CHECK_MSG(!strcmp(text, want), "%s", text);
    CHECK(gt_params_parse(f, text, &q, err, sizeof err) == 0 && !memcmp(&p, &q, sizeof p));
    p.v[GT_OZAKI_P_PICK] = 2;
    gt_params_format(f, &p, text, sizeof text);
    snprintf(want, sizeof want, "NMOD=8,REV=%d,PICK=2", GT_OZAKI_REV);
    CHECK_MSG(!strcmp(text, want), "%s", text);
    CHECK(gt_params_parse(f, text, &q, err, sizeof err) == 0 && !memcmp(&p, &q, sizeof p));
}

GT_TEST(ozaki_checks_its_parameters, GT_NEEDS_NONE)
{
    const gt_family *f = fam();
    gt_limits l, old;
    char why[256];
    gt_limits_for_arch("sm_90", &l);
    gt_limits_for_arch("sm_70", &old);
    for (int n = 2; n <= 9; ++n) {
        gt_params p = nmod(n);
        CHECK_MSG(f->legal(&p, &l, why, sizeof why), "NMOD=%d: %s", n, why);
    }
    gt_params p = nmod(1);
    CHECK(!f->legal(&p, &l, why, sizeof why) && strstr(why, "NMOD=1"));
    p = nmod(10); /* its scaled integers would pass 2^35 */
    CHECK(!f->legal(&p, &l, why, sizeof why) && strstr(why, "NMOD=10"));
    p = nmod(8), p.v[GT_OZAKI_P_REV] = 0;
    CHECK(!f->legal(&p, &l, why, sizeof why) && strstr(why, "REV=0"));
    p = nmod(8), p.v[GT_OZAKI_P_PICK] = -1;
    CHECK(!f->legal(&p, &l, why, sizeof why) && strstr(why, "PICK=-1"));
    char past[32];
    snprintf(past, sizeof past, "PICK=%d", GT_OZAKI_MAX_PICK + 1);
    p.v[GT_OZAKI_P_PICK] = GT_OZAKI_MAX_PICK + 1;
    CHECK(!f->legal(&p, &l, why, sizeof why) && strstr(why, past));
    p.v[GT_OZAKI_P_PICK] = GT_OZAKI_MAX_PICK;
    CHECK_MSG(f->legal(&p, &l, why, sizeof why), "%s", why);
    p = nmod(8);
    CHECK(!f->legal(&p, &old, why, sizeof why) && strstr(why, "sm_75"));
}

static int gcd(int a, int b) { return b ? gcd(b, a % b) : a; }

/* gt_oz_srem of templates/ozaki.cu, op for op (FP32 and fmaf are IEEE on both sides). */
static float srem(float x, float p, float invp)
{
    const float round = 12582912.0f, q = fmaf(x, invp, round) - round; /* 1.5 2^23, GT_OZ_ROUND */
    return fmaf(-q, p, x);
}

static float bits_float(int i) { return (union { int i; float f; }){.i = i}.f; }

/* gt_oz_residue_of of templates/ozaki.cu, op for op: the residue mod p_l of an int32 sum of products. */
static float residue_of(int raw, int l, const gt_ozaki_consts *c)
{
    if (l == 0) return bits_float(((raw & 0xff) ^ 0x80) | 0x4b000000) - 8388736.0f;
    const float lo = bits_float(((raw & 0xffff) ^ 0x8000) | 0x4b000000) - 8421376.0f;
    const float h = bits_float((((raw + 0x8000) >> 16) + 0x8000) | 0x4b000000) - 8421376.0f;
    return srem(fmaf(h, c->pow16[l], lo), c->p[l], c->invp[l]);
}

/* x mod p in p's symmetric range: [-128, 127] for 256, [-(p - 1) / 2, (p - 1) / 2] for an odd p. */
static long symmetric_mod(long x, long p)
{
    const long m = (x % p + p) % p;
    return m > (p - 1) / 2 ? m - p : m;
}

/* templates/ozaki.cu's digits of the integer whose residues mod the first n moduli are r (symmetric), op for op:
 * d_l = (r_l w[l][l] - sum over m < l of d_m w[m][l]) mod p_l, in FP32. */
static void garner(const gt_ozaki_consts *c, int n, const float *r, float *d)
{
    for (int l = 0; l < n; ++l) {
        float t = r[l];
        if (l > 0) {
            t *= c->w[l][l];
            for (int m = 0; m < l; ++m) t = fmaf(-d[m], c->w[m][l], t);
            t = srem(t, c->p[l], c->invp[l]);
        }
        d[l] = t;
    }
}

/* The rebuild's digits give back every integer of the moduli's symmetric range, its ends and random ones between,
 * for each moduli count: sum of d_l Q_l (exact, in 128 bits) is x, each digit in its modulus's symmetric range. */
GT_TEST(ozaki_garner_digits_rebuild_every_integer, GT_NEEDS_NONE)
{
    long bad = 0, tried = 0;
    for (int n = 2; n <= 9; ++n) {
        gt_ozaki_consts c;
        CHECK(gt_ozaki_consts_make(n, &c) == 0);
        __int128 P = 1;
        for (int l = 0; l < n; ++l) P *= (long)c.pd[l];
        const __int128 lo = -(P / 2) + (P % 2 == 0), hi = P / 2 - (P % 2 == 0); /* within the symmetric range */
        unsigned long long s = 88172645463325252ull;
        for (int t = 0; t < 20000; ++t) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            const unsigned long long s2 = s * 0x9e3779b97f4a7c15ull;
            __int128 x = t == 0 ? lo : t == 1 ? hi : t < 200 ? t - 100 : (__int128)(((unsigned __int128)s << 64 | s2) % (unsigned __int128)P);
            if (x > hi) x -= P;
            float r[GT_OZAKI_MAXMOD], d[GT_OZAKI_MAXMOD];
            for (int l = 0; l < n; ++l) {
                const long p = (long)c.pd[l];
                long v = (long)(((x % p) + p) % p);
                r[l] = (float)symmetric_mod(v, p);
            }
            garner(&c, n, r, d);
            __int128 y = 0, q = 1;
            int range = 1;
            for (int l = 0; l < n; ++l) {
                y += (__int128)(long)d[l] * q, q *= (long)c.pd[l];
                range &= d[l] == floorf(d[l]) && d[l] == (float)symmetric_mod((long)d[l], (long)c.pd[l]);
            }
            bad += y != x || !range, tried++;
        }
    }
    CHECK_MSG(bad == 0, "%ld of %ld integers rebuilt wrong", bad, tried);
}

/* What the kernels count on: coprime moduli in [128, 256], their inverses, the powers of two, a scale whose
 * products' sums stay below P / 2 while the scaled integers stay below 2^35. */
GT_TEST(ozaki_constants_are_the_moduli_s_arithmetic, GT_NEEDS_NONE)
{
    gt_ozaki_consts c;
    CHECK(gt_ozaki_consts_make(1, &c) == -1 && gt_ozaki_consts_make(10, &c) == -1);
    for (int n = 2; n <= 9; ++n) {
        CHECK(gt_ozaki_consts_make(n, &c) == 0);
        CHECK(c.pd[0] == 256.0); /* the residues kernel takes modulus 0's residue as the low byte */
        double bits = 0;
        for (int l = 0; l < n; ++l) {
            const int p = (int)c.pd[l];
            CHECK(p >= 128 && p <= 256 && c.p[l] == (float)p && c.invp[l] == 1.0f / (float)p);
            CHECK(fabsf(c.pow16[l]) <= 128.0f && fabsf(c.pow22[l]) <= 128.0f); /* 2^16, 2^22 mod p, symmetric */
            CHECK(((long)c.pow16[l] - (1L << 16)) % p == 0 && ((long)c.pow22[l] - (1L << 22)) % p == 0);
            bits += log2(p);
            long q = 1; /* Q_m mod p: the product of the moduli before m */
            for (int m = 0; m < l; ++m) {
                CHECK_MSG(gcd((int)c.pd[m], p) == 1, "%d and %d", (int)c.pd[m], p);
                CHECK_MSG(c.w[m][l] >= 0 && c.w[m][l] < p && (long)c.w[m][l] == q * (long)c.w[l][l] % p,
                          "w[%d][%d] mod %d", m, l, p);
                q = q * (long)c.pd[m] % p;
            }
            CHECK_MSG(l == 0 || q * (long)c.w[l][l] % p == 1, "w[%d][%d]: the inverse of %ld mod %d", l, l, q, p);
        }
        CHECK_MSG(2.0 * c.bits <= bits - 1.0 && 2.0 * (c.bits + 1) > bits - 1.02, "NMOD=%d: bits %d of P 2^%.2f", n,
                  c.bits, bits);
        CHECK(c.bits <= 35);
    }
}

/* The kernels' remainder (templates/ozaki.cu, gt_oz_srem, the same float operations): for every integer x with
 * |x| <= 2^22 and every odd modulus, the quotient rounded to nearest from x * (1 / p rounded) is exact, so one FMA
 * leaves the remainder in p's symmetric range, with no correction step; and the residues kernel's byte (the bits of
 * r + 1.5 2^23) is its two's complement. */
GT_TEST(ozaki_residue_in_three_operations_is_exact_to_2_22, GT_NEEDS_NONE)
{
    gt_ozaki_consts c;
    CHECK(gt_ozaki_consts_make(9, &c) == 0);
    for (int l = 1; l < 9; ++l) {
        const int p = (int)c.pd[l];
        long bad = 0;
        for (int x = -(1 << 22); x <= (1 << 22); ++x) {
            const float r = srem((float)x, c.p[l], c.invp[l]);
            const long want = symmetric_mod(x, p);
            const unsigned byte = (unsigned)(union { float f; int i; }){.f = r + 12582912.0f}.i & 0xff;
            bad += r != (float)want || byte != ((unsigned)want & 0xff);
        }
        CHECK_MSG(p % 2 == 1 && bad == 0, "modulus %d: %ld remainders out of range", p, bad);
    }
}

/* The rebuild's first step (gt_oz_residue_of, op for op): the residue of an int32 sum of products in each modulus's
 * symmetric range, over every sum the products can make: the ends (K at GT_OZAKI_MAX_K, every product 128^2 or
 * -128 127), every value near zero and near each multiple of 2^15, and random ones. */
GT_TEST(ozaki_residue_of_an_int32_sum_is_exact, GT_NEEDS_NONE)
{
    gt_ozaki_consts c;
    CHECK(gt_ozaki_consts_make(9, &c) == 0);
    const long top = (long)GT_OZAKI_MAX_K * 128 * 128, bottom = -(long)GT_OZAKI_MAX_K * 128 * 127;
    CHECK(top < (1L << 31) - (1L << 15));
    long bad = 0, tried = 0;
    unsigned long long s = 0x2545f4914f6cdd1dull;
    for (long i = 0; i < 3000000; ++i) {
        long raw;
        if (i < 100000) raw = i - 50000;
        else if (i < 200000) raw = top - (i - 100000);
        else if (i < 300000) raw = bottom + (i - 200000);
        else if (i < 1300000) raw = ((i - 300000) / 16 - 31250) * 32768 + (long)((i - 300000) % 16) - 8;
        else s ^= s << 13, s ^= s >> 7, s ^= s << 17, raw = bottom + (long)(s % (unsigned long long)(top - bottom + 1));
        if (raw > top || raw < bottom) continue;
        for (int l = 0; l < 9; ++l) bad += residue_of((int)raw, l, &c) != (float)symmetric_mod(raw, (long)c.pd[l]);
        tried++;
    }
    CHECK_MSG(bad == 0 && tried > 2900000, "%ld of %ld sums' residues wrong", bad, tried);
}

GT_TEST(ozaki_workspace_layout_and_limits, GT_NEEDS_NONE)
{
    const gt_family *f = fam();
    gt_ozaki_layout L;
    const gt_shape s = {777, 1531, 2049, 1, 0, 0};
    gt_ozaki_layout_make(8, &s, 1000, &L);
    CHECK(L.kp == 2064 && L.mp == 784 && L.np == 1536); /* the products' sides padded to 16 */
    const size_t at[] = {L.prod, L.part, L.scale, L.res_a, L.res_b, L.lt, L.total};
    for (int i = 0; i < 7; ++i) CHECK(at[i] % 256 == 0 && (i == 0 || at[i] > at[i - 1]));
    CHECK(L.part - L.prod >= (size_t)8 * 784 * 1536 * 4 && L.res_b - L.res_a >= (size_t)8 * 784 * 2064);
    CHECK(L.lt - L.res_b >= (size_t)8 * 1536 * 2064 && L.total - L.lt >= 1000);
    CHECK(L.scale - L.part >= ((size_t)L.slices_a * 777 + (size_t)L.slices_b * 1531) * 8);
    CHECK(L.res_a - L.scale >= (777 + 1531) * 4);
    CHECK(L.slices_a >= 1 && L.kslice_a * L.slices_a >= 2049 && L.kslice_b * L.slices_b >= 2049);
    CHECK((L.slices_a - 1) * L.kslice_a < 2049 && (L.slices_b - 1) * L.kslice_b < 2049); /* no empty slice */
    /* The launches over both operands: 32 rows a block of the norms and residues (128 k of the latter), a row a
     * thread of the scales' 256; the norms' slices as many as K allows (256 deep) up to about 1056 blocks an
     * operand. */
    CHECK(L.slices_a == 9 && L.slices_b == 9 && L.norms.a == 25 * 9 && L.norms.b == 48 * 9);
    CHECK(L.scales.a == 4 && L.scales.b == 6 && L.residues.a == 17 * 25 && L.residues.b == 17 * 48);
    gt_ozaki_layout_make(8, &(gt_shape){777, 1531, 65536, 1, 0, 0}, 0, &L);
    CHECK(L.slices_a == 43 && L.slices_b == 22 && L.norms.a == 25 * 43 && L.norms.b == 48 * 22);
    gt_params p = nmod(8);
    gt_launch lw;
    f->launch(&p, &s, GT_TEST_SMS, &lw);
    gt_ozaki_layout_make(8, &s, 0, &L);
    CHECK(lw.ws_bytes == L.total && lw.splitk == 1);
    gt_call c = gt_call_tight(&(gt_shape){8192, 8192, 8192, 0, 0, 0});
    CHECK(f->applicable(&p, &c));
    c = gt_call_tight(&(gt_shape){64, 64, GT_OZAKI_MAX_K + 1, 0, 0, 0}); /* int32 sums no longer exact */
    CHECK(!f->applicable(&p, &c));
    c = gt_call_tight(&(gt_shape){30000, 30000, 30000, 0, 0, 0}); /* 29 GB of workspace */
    CHECK(!f->applicable(&p, &c));
    c = gt_call_tight(&(gt_shape){GT_OZAKI_MAX_SIDE + 1, 1, 1, 0, 0, 0});
    CHECK(!f->applicable(&p, &c));
}

GT_TEST(ozaki_template_compiles_for_sm_90, GT_NEEDS_NVRTC)
{
    const char *tmpl = gt_template_text("ozaki.cu");
    CHECK(tmpl != NULL);
    if (!tmpl) return;
    for (int n = 7; n <= 9; ++n) {
        char *src = malloc(strlen(tmpl) + 32), err[1024] = "";
        sprintf(src, "#define NMOD %d\n%s", n, tmpl);
        gt_cubin cb;
        const int rc = gt_nvrtc_compile(src, "sm_90", &cb, err, sizeof err);
        CHECK_MSG(rc == 0 && cb.size > 0, "NMOD=%d: %s", n, err);
        gt_cubin_free(&cb);
        free(src);
    }
}

GT_TEST(ozaki_backend_describes_and_replays_its_own_revision_only, GT_NEEDS_NONE)
{
    const gt_backend *be = gt_backend_find("ozaki");
    CHECK(be != NULL);
    if (!be) return;
    char text[256], rev[32], why[256] = "";
    gt_params p = nmod(8);
    p.v[GT_OZAKI_P_PICK] = 3;
    be->describe(fam(), &p, text, sizeof text);
    snprintf(rev, sizeof rev, "revision %d", GT_OZAKI_REV);
    CHECK_MSG(strstr(text, "8 INT8 products") && strstr(text, "rank 3") && strstr(text, rev), "%s", text);
    CHECK(be->replayable(fam(), &p, why, sizeof why));
    p.v[GT_OZAKI_P_REV] = GT_OZAKI_REV - 1; /* an older revision's timing */
    snprintf(rev, sizeof rev, "revision %d", GT_OZAKI_REV - 1);
    CHECK_MSG(!be->replayable(fam(), &p, why, sizeof why) && strstr(why, rev), "%s", why);
}

/* ---- on a GPU: the backend alone, against cuBLAS FP32 ---- */

typedef struct {
    const gt_backend *be;
    gt_backend_ctx *ctx;
    gt_params p;
    gt_measure *m;
} oz_run;

/* One call through the backend: a plan for the call's arguments, the measure's scratch as workspace, the run,
 * the plan released (cuBLASLt reads its descriptors when the call is enqueued). */
static int run_backend(void *vctx, const gt_args *a, cudaStream_t stream, char *err, size_t errlen)
{
    oz_run *r = vctx;
    gt_call call = {{a->m, a->n, a->k, a->ta, a->tb, 1}, a->lda, a->ldb, a->ldc, 4, 4, 4, 0, 0, 0};
    gt_backend_plan *plan = NULL;
    if (r->be->plan(r->ctx, fam(), &r->p, &call, &plan, err, errlen) != GT_ST_OK) return -1;
    void *ws = gt_measure_scratch(r->m, r->be->workspace(plan), err, errlen);
    const int rc = ws ? r->be->run(r->ctx, plan, a, ws, stream, err, errlen) : -1;
    r->be->release(plan);
    return rc;
}

/* The indexing of every step at the edges: shapes 1, 7, 127, 1025 and primes, every layout, ld > dim, alpha and
 * beta, beta 0 over a NaN C, 7 moduli (the space's fewest) and 9 (the most that are legal): within the FP32
 * tolerance of cuBLAS, the same bits run to run (every other algorithm rank gives the same bits: below).
 * (Whether it is as accurate as SGEMM against FP64 is the sweep's verdict per shape: short K on wide inputs is
 * not, and loader_gpu_ozaki_winners_are_served_to_handles_that_ask shows it refused there.) */
GT_TEST(ozaki_gpu_matches_cublas_at_the_edges, GT_NEEDS_GPU)
{
    char err[512] = "";
    oz_run r = {.be = gt_backend_find("ozaki")};
    CHECK(r.be && gt_measure_open(0, &r.m, err, sizeof err) == 0 && r.be->open(&r.ctx, err, sizeof err) == 0);
    if (!r.ctx) {
        gt_measure_close(r.m);
        return;
    }
    static const int dims[][3] = {{1, 1, 1}, {7, 13, 5}, {127, 129, 131}, {1025, 7, 257}, {3, 1031, 2}, {300, 200, 513}};
    int checks = 0, bad = 0;
    for (int n = 7; n <= 9; n += 2)
        for (size_t d = 0; d < sizeof dims / sizeof dims[0]; ++d)
            for (int lay = 0; lay < 4; ++lay)
                for (int v = 0; v < 2; ++v) {
                    r.p = nmod(n);
                    gt_check_spec sp = {.s = {dims[d][0], dims[d][1], dims[d][2], lay >> 1, lay & 1, 1},
                                        .pad_a = 3 * v, .pad_b = 2 * v, .pad_c = 5 * v, .alpha = v ? -2.0f : 1.5f,
                                        .beta = v ? 0.5f : 0.0f, .seed = 77 + checks, .inputs = GT_INPUTS_UNIFORM};
                    double e = -1;
                    int same = 0;
                    checks++;
                    if (gt_measure_check(r.m, &sp, run_backend, &r, &e, &same, err, sizeof err) ||
                        !(e <= gt_tolerance(sp.s.k)) || !same) {
                        bad++;
                        printf("    NMOD=%d %dx%dx%d %s v%d: error %.3g, same %d %s\n", n, sp.s.m, sp.s.n, sp.s.k,
                               gt_layout_name(sp.s.ta, sp.s.tb), v, e, same, err);
                    }
                }
    printf("    %d checks, %d wrong\n", checks, bad);
    CHECK(bad == 0);
    r.be->close(r.ctx);
    gt_measure_close(r.m);
}

/* A row of op(A) with Inf and one with NaN: those rows of C are what FP32 arithmetic gives them (Inf or NaN, as
 * SGEMM), the others the exact method's values. */
GT_TEST(ozaki_gpu_rows_with_inf_or_nan_follow_ieee, GT_NEEDS_GPU)
{
    enum { M = 4, N = 3, K = 5 };
    float hA[M * K], hB[K * N], hC[M * N], want[M * N];
    for (int i = 0; i < M * K; ++i) hA[i] = (float)(i % 7) - 3.0f;
    for (int i = 0; i < K * N; ++i) hB[i] = (float)(i % 5) - 1.5f;
    hA[1 * K + 2] = INFINITY, hA[2 * K + 0] = NAN;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float s = 0;
            for (int k = 0; k < K; ++k) s = fmaf(hA[i * K + k], hB[k * N + j], s);
            want[i * N + j] = s;
        }
    char err[512] = "";
    oz_run r = {.be = gt_backend_find("ozaki"), .p = nmod(8)};
    float *dA = NULL, *dB = NULL, *dC = NULL;
    CHECK(cudaMalloc((void **)&dA, sizeof hA) == cudaSuccess && cudaMalloc((void **)&dB, sizeof hB) == cudaSuccess &&
          cudaMalloc((void **)&dC, sizeof hC) == cudaSuccess);
    cudaMemcpy(dA, hA, sizeof hA, cudaMemcpyHostToDevice);
    cudaMemcpy(dB, hB, sizeof hB, cudaMemcpyHostToDevice);
    CHECK(gt_measure_open(0, &r.m, err, sizeof err) == 0 && r.be->open(&r.ctx, err, sizeof err) == 0);
    gt_args a = {.m = M, .n = N, .k = K, .alpha = 1.0f, .beta = 0.0f, .A = dA, .B = dB, .C = dC, .lda = K, .ldb = N,
                 .ldc = N, .batch = 1};
    CHECK_MSG(r.ctx && run_backend(&r, &a, 0, err, sizeof err) == 0, "%s", err);
    CHECK(cudaMemcpy(hC, dC, sizeof hC, cudaMemcpyDeviceToHost) == cudaSuccess);
    for (int e = 0; e < M * N; ++e)
        CHECK_MSG(isnan(want[e]) ? isnan(hC[e]) : hC[e] == want[e], "C[%d] = %g, FP32 gives %g", e, hC[e], want[e]);
    if (r.ctx) r.be->close(r.ctx);
    gt_measure_close(r.m);
    cudaFree(dA), cudaFree(dB), cudaFree(dC);
}

/* cuBLASLt's algorithms for the products (PICK) all sum exactly: every rank the list offers gives C bit for bit as
 * its first does, on an uneven shape and wide inputs; a rank past the list's end is refused, never run. */
GT_TEST(ozaki_gpu_every_algorithm_gives_the_same_bits, GT_NEEDS_GPU)
{
    enum { M = 1000, N = 1100, K = 1201 };
    const size_t na = (size_t)M * K, nb = (size_t)K * N, nc = (size_t)M * N;
    float *h = malloc((na + nb + 2 * nc) * sizeof *h), *hC = h + na + nb, *first = hC + nc;
    float *dA = NULL, *dB = NULL, *dC = NULL;
    char err[512] = "";
    oz_run r = {.be = gt_backend_find("ozaki")};
    CHECK(h && cudaMalloc((void **)&dA, na * 4) == cudaSuccess && cudaMalloc((void **)&dB, nb * 4) == cudaSuccess &&
          cudaMalloc((void **)&dC, nc * 4) == cudaSuccess);
    CHECK(gt_measure_open(0, &r.m, err, sizeof err) == 0 && r.be->open(&r.ctx, err, sizeof err) == 0);
    if (!h || !r.ctx) goto out;
    unsigned x = 12345;
    for (size_t i = 0; i < na + nb; ++i) {
        x = x * 1664525u + 1013904223u;
        h[i] = ldexpf((float)(x >> 8) / 16777216.0f - 0.5f, (int)(x % 41) - 20); /* wide: 2^-20 .. 2^20 */
    }
    cudaMemcpy(dA, h, na * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(dB, h + na, nb * 4, cudaMemcpyHostToDevice);
    gt_args a = {.m = M, .n = N, .k = K, .alpha = 1.0f, .beta = 0.0f, .A = dA, .B = dB, .C = dC, .lda = K, .ldb = N,
                 .ldc = N, .batch = 1};
    int ran = 0, refused = 0;
    for (int pick = 0; pick <= GT_OZAKI_MAX_PICK; ++pick) {
        r.p = nmod(8), r.p.v[GT_OZAKI_P_PICK] = pick;
        cudaMemset(dC, 0xff, nc * 4); /* NaN */
        if (run_backend(&r, &a, 0, err, sizeof err) != 0) {
            CHECK_MSG(pick > 0 && strstr(err, "rank"), "PICK=%d: %s", pick, err);
            refused++;
            continue;
        }
        CHECK(cudaMemcpy(ran ? hC : first, dC, nc * 4, cudaMemcpyDeviceToHost) == cudaSuccess);
        CHECK_MSG(!ran || !memcmp(hC, first, nc * 4), "PICK=%d: C differs from PICK=0's", pick);
        ran++;
    }
    printf("    %d of cuBLASLt's algorithms ran, %d ranks past its list refused\n", ran, refused);
    CHECK_MSG(ran >= 2, "only %d algorithm(s): the test compared nothing", ran);
out:
    if (r.ctx) r.be->close(r.ctx);
    gt_measure_close(r.m);
    cudaFree(dA), cudaFree(dB), cudaFree(dC);
    free(h);
}
