/* SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104), written from the specifications for the cubin cache's MAC
 * (src/lib/trust.c). Plain C, no allocation. Tested against the specifications' vectors by tests/test_cache.c. */
#ifndef GT_SHA256_H
#define GT_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define GT_SHA256_BYTES 32

typedef struct {
    uint32_t h[8];
    uint64_t bytes;        /* message length so far */
    unsigned char buf[64]; /* a partial block */
    size_t used;
} gt_sha256;

/* Start, feed any number of times, finish into out[32]. Cannot fail. */
void gt_sha256_init(gt_sha256 *s);
void gt_sha256_update(gt_sha256 *s, const void *data, size_t n);
void gt_sha256_final(gt_sha256 *s, unsigned char out[GT_SHA256_BYTES]);

/* HMAC-SHA-256 in steps: key of any length (hashed first when longer than a block). Cannot fail. */
typedef struct {
    gt_sha256 inner;
    unsigned char okey[64]; /* key XOR opad */
} gt_hmac;

void gt_hmac_init(gt_hmac *m, const void *key, size_t keylen);
void gt_hmac_update(gt_hmac *m, const void *data, size_t n);
void gt_hmac_final(gt_hmac *m, unsigned char out[GT_SHA256_BYTES]);

/* 1 when a and b (n bytes) are equal, taking the same time wherever they differ. */
int gt_equal_ct(const unsigned char *a, const unsigned char *b, size_t n);

#endif
