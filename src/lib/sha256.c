/* SHA-256 and HMAC-SHA-256 (see sha256.h): FIPS 180-4 section 6.2, RFC 2104 section 2. Tested by tests/test_cache.c
 * (the FIPS 180-4 and RFC 4231 vectors). */
#include "sha256.h"

#include <string.h>

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

/* One 512-bit block (FIPS 180-4 6.2.2). */
static void block(uint32_t h[8], const unsigned char *p)
{
    uint32_t w[64], v[8];
    for (int t = 0; t < 16; ++t)
        w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 | (uint32_t)p[4 * t + 2] << 8 | p[4 * t + 3];
    for (int t = 16; t < 64; ++t) {
        const uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
        const uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    memcpy(v, h, sizeof v);
    for (int t = 0; t < 64; ++t) {
        const uint32_t e = v[4], a = v[0];
        const uint32_t t1 = v[7] + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & v[5]) ^ (~e & v[6])) + K[t] + w[t];
        const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & v[1]) ^ (a & v[2]) ^ (v[1] & v[2]));
        memmove(v + 1, v, 7 * sizeof v[0]);
        v[4] += t1;
        v[0] = t1 + t2;
    }
    for (int i = 0; i < 8; ++i) h[i] += v[i];
}

void gt_sha256_init(gt_sha256 *s)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof h0);
    s->bytes = 0;
    s->used = 0;
}

void gt_sha256_update(gt_sha256 *s, const void *data, size_t n)
{
    const unsigned char *p = data;
    s->bytes += n;
    if (s->used) {
        size_t take = 64 - s->used < n ? 64 - s->used : n;
        memcpy(s->buf + s->used, p, take);
        s->used += take, p += take, n -= take;
        if (s->used < 64) return;
        block(s->h, s->buf);
        s->used = 0;
    }
    for (; n >= 64; p += 64, n -= 64) block(s->h, p);
    memcpy(s->buf, p, n);
    s->used = n;
}

/* Padding (5.1.1): a 1 bit, zeros, the message length in bits as 64 bits big-endian. */
void gt_sha256_final(gt_sha256 *s, unsigned char out[GT_SHA256_BYTES])
{
    const uint64_t bits = s->bytes * 8;
    unsigned char pad[72] = {0x80};
    const size_t npad = (s->used < 56 ? 56 : 120) - s->used;
    for (int i = 0; i < 8; ++i) pad[npad + i] = (unsigned char)(bits >> (56 - 8 * i));
    gt_sha256_update(s, pad, npad + 8);
    for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 4; ++j) out[4 * i + j] = (unsigned char)(s->h[i] >> (24 - 8 * j));
    memset(s, 0, sizeof *s);
}

void gt_hmac_init(gt_hmac *m, const void *key, size_t keylen)
{
    unsigned char k[64] = {0}, ikey[64];
    if (keylen > 64) { /* a key longer than the block is hashed first */
        gt_sha256 s;
        gt_sha256_init(&s);
        gt_sha256_update(&s, key, keylen);
        gt_sha256_final(&s, k);
    } else if (keylen) {
        memcpy(k, key, keylen);
    }
    for (int i = 0; i < 64; ++i) ikey[i] = k[i] ^ 0x36, m->okey[i] = k[i] ^ 0x5c;
    gt_sha256_init(&m->inner);
    gt_sha256_update(&m->inner, ikey, 64);
    memset(k, 0, sizeof k);
    memset(ikey, 0, sizeof ikey);
}

void gt_hmac_update(gt_hmac *m, const void *data, size_t n) { gt_sha256_update(&m->inner, data, n); }

void gt_hmac_final(gt_hmac *m, unsigned char out[GT_SHA256_BYTES])
{
    unsigned char ih[GT_SHA256_BYTES];
    gt_sha256 o;
    gt_sha256_final(&m->inner, ih);
    gt_sha256_init(&o);
    gt_sha256_update(&o, m->okey, 64);
    gt_sha256_update(&o, ih, sizeof ih);
    gt_sha256_final(&o, out);
    memset(m, 0, sizeof *m);
}

int gt_equal_ct(const unsigned char *a, const unsigned char *b, size_t n)
{
    unsigned char d = 0;
    for (size_t i = 0; i < n; ++i) d |= a[i] ^ b[i];
    return d == 0;
}
