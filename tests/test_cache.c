/* The cubin cache's trust without a GPU: SHA-256 and HMAC-SHA-256 against the vectors of FIPS 180-4 and RFC 4231,
 * the per-user key file (modes, owner, races, its own XDG folder), and a cached cubin used only when this user's
 * key verifies it (src/lib/trust.h, src/lib/cubin.c). Run: build/gt_tests --cpu cache */
#include "cubin.h"
#include "db.h"
#include "fixture.h"
#include "harness.h"
#include "sha256.h"
#include "trust.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void hex(const unsigned char *p, size_t n, char *out)
{
    for (size_t i = 0; i < n; ++i) sprintf(out + 2 * i, "%02x", p[i]);
}

static void sha_hex(const void *data, size_t n, size_t repeat, char out[65])
{
    unsigned char d[32];
    gt_sha256 s;
    gt_sha256_init(&s);
    for (size_t i = 0; i < repeat; ++i) gt_sha256_update(&s, data, n);
    gt_sha256_final(&s, d);
    hex(d, 32, out);
}

/* FIPS 180-4's examples (NIST's SHA256.pdf, SHA2_Additional.pdf): empty, one block, two blocks, a million 'a'. */
GT_TEST(cache_sha256_matches_fips_180_4_vectors, GT_NEEDS_NONE)
{
    static const struct { const char *msg; size_t repeat; const char *digest; } v[] = {
        {"", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrst"
         "nopqrstu", 1, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
        {"a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 1, /* 55 bytes: padding in the same block */
         "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 1, /* 56 bytes: padding spills a block */
         "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
    };
    char out[65];
    for (size_t i = 0; i < sizeof v / sizeof v[0]; ++i) {
        sha_hex(v[i].msg, strlen(v[i].msg), v[i].repeat, out);
        CHECK_MSG(!strcmp(out, v[i].digest), "vector %zu: %s, want %s", i, out, v[i].digest);
    }
    /* fed in uneven pieces, the same digest */
    const char *m = v[3].msg;
    unsigned char d[32];
    gt_sha256 s;
    gt_sha256_init(&s);
    for (size_t at = 0, step = 1; at < strlen(m); at += step, step = step * 2 + 1)
        gt_sha256_update(&s, m + at, at + step > strlen(m) ? strlen(m) - at : step);
    gt_sha256_final(&s, d);
    hex(d, 32, out);
    CHECK(!strcmp(out, v[3].digest));
}

/* RFC 4231's test cases 1, 2, 3, 4, 6 and 7 (5 is a truncated MAC); 6 and 7 have keys longer than a block. */
GT_TEST(cache_hmac_sha256_matches_rfc_4231_vectors, GT_NEEDS_NONE)
{
    unsigned char k1[20], k3[20], k4[25], k6[131], d3[50], d4[50];
    memset(k1, 0x0b, sizeof k1), memset(k3, 0xaa, sizeof k3), memset(k6, 0xaa, sizeof k6);
    memset(d3, 0xdd, sizeof d3), memset(d4, 0xcd, sizeof d4);
    for (int i = 0; i < 25; ++i) k4[i] = (unsigned char)(i + 1);
    const char *m7 = "This is a test using a larger than block-size key and a larger than block-size data. The key "
                     "needs to be hashed before being used by the HMAC algorithm.";
    const struct { const void *key; size_t klen; const void *data; size_t dlen; const char *mac; } v[] = {
        {k1, 20, "Hi There", 8, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
        {"Jefe", 4, "what do ya want for nothing?", 28,
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
        {k3, 20, d3, 50, "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
        {k4, 25, d4, 50, "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
        {k6, 131, "Test Using Larger Than Block-Size Key - Hash Key First", 54,
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
        {k6, 131, m7, strlen(m7), "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; ++i) {
        unsigned char mac[32];
        char out[65];
        gt_hmac m;
        gt_hmac_init(&m, v[i].key, v[i].klen);
        gt_hmac_update(&m, v[i].data, v[i].dlen);
        gt_hmac_final(&m, mac);
        hex(mac, 32, out);
        CHECK_MSG(!strcmp(out, v[i].mac), "RFC 4231 case %zu: %s, want %s", i < 4 ? i + 1 : i + 2, out, v[i].mac);
    }
}

/* Point $XDG_CONFIG_HOME at a fresh folder of this test; returns it (caller frees) and the key's path. */
static char *fresh_config(char path[4096])
{
    char err[256], *dir = gt_tmp_path("-config");
    setenv("XDG_CONFIG_HOME", dir, 1);
    CHECK(gt_trust_key_path(path, 4096, err, sizeof err) == 0);
    return dir;
}

GT_TEST(cache_key_file_is_private_and_made_once, GT_NEEDS_NONE)
{
    char *saved = strdup(getenv("XDG_CONFIG_HOME") ? getenv("XDG_CONFIG_HOME") : ""), path[4096], err[512];
    char *dir = fresh_config(path);
    unsigned char a[32], b[32];
    struct stat sb;
    CHECK(gt_trust_key(0, a, err, sizeof err) == -1 && stat(path, &sb) < 0); /* a reader makes none */
    CHECK_MSG(gt_trust_key(1, a, err, sizeof err) == 0, "%s", err);
    CHECK(stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && (sb.st_mode & 0777) == 0600 && sb.st_size == 32);
    char folder[4200];
    snprintf(folder, sizeof folder, "%s/gemmtune", dir);
    CHECK(stat(folder, &sb) == 0 && (sb.st_mode & 0777) == 0700);
    CHECK(gt_trust_key(1, b, err, sizeof err) == 0 && !memcmp(a, b, 32)); /* made once, then read */
    CHECK(gt_trust_key(0, b, err, sizeof err) == 0 && !memcmp(a, b, 32));
    CHECK(chmod(path, 0640) == 0 && gt_trust_key(1, b, err, sizeof err) == -1 && strstr(err, "mode 0600"));
    CHECK(chmod(path, 0600) == 0 && truncate(path, 31) == 0);
    CHECK(gt_trust_key(1, b, err, sizeof err) == -1 && strstr(err, "not 32 bytes"));
    char other[4200];
    snprintf(other, sizeof other, "%s.other", path); /* a link to a key someone else placed is not followed */
    CHECK(rename(path, other) == 0 && truncate(other, 32) == 0 && symlink(other, path) == 0);
    CHECK(gt_trust_key(0, b, err, sizeof err) == -1);
    setenv("XDG_CONFIG_HOME", "relative/ignored", 1); /* as for XDG_DATA_HOME: a relative one is ignored */
    char *home = strdup(getenv("HOME") ? getenv("HOME") : "");
    setenv("HOME", "/home/u", 1);
    CHECK(gt_trust_key_path(path, sizeof path, err, sizeof err) == 0 && !strcmp(path, "/home/u/.config/gemmtune/cache.key"));
    unsetenv("HOME");
    CHECK(gt_trust_key_path(path, sizeof path, err, sizeof err) == -1);
    if (*home) setenv("HOME", home, 1);
    setenv("XDG_CONFIG_HOME", saved, 1);
    free(home), free(saved), free(dir);
}

/* Cache entry helpers over an open db. */
static int get(gt_db *db, const char *hash, gt_cubin *c)
{
    char err[256];
    int found = -1;
    CHECK(gt_cubin_cache_get(db, hash, "sm_90", c, &found, err, sizeof err) == 0);
    return found;
}

static void sql(const char *path, const char *text)
{
    sqlite3 *h;
    CHECK(sqlite3_open(path, &h) == SQLITE_OK && sqlite3_exec(h, text, NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(h);
}

/* Issue 25 item 4: a cached cubin is used only when this user put it there. Tampered bytes, another user's key
 * (their database, a merged one), no MAC (a row from before schema 5, or one written around the cache) and no key
 * at all are misses; putting it again replaces the row. A read-only database makes no key and caches nothing. */
GT_TEST(cache_uses_only_cubins_this_user_put_there, GT_NEEDS_NONE)
{
    char *saved = strdup(getenv("XDG_CONFIG_HOME") ? getenv("XDG_CONFIG_HOME") : ""), path[4096], err[512];
    char *dir = fresh_config(path), *dbp = gt_tmp_path(".db");
    gt_db *db = NULL;
    unsigned char bytes[64];
    for (int i = 0; i < 64; ++i) bytes[i] = (unsigned char)(i * 5 + 1);
    gt_cubin put = {.data = bytes, .size = sizeof bytes, .regs = 40, .spill_bytes = 0}, got;
    CHECK(gt_db_open(dbp, GT_DB_CREATE, &db, err, sizeof err) == 0);
    CHECK_MSG(gt_cubin_cache_put(db, "00000000000000aa", "sm_90", &put, err, sizeof err) == 0, "%s", err);
    CHECK(get(db, "00000000000000aa", &got) == 1 && got.size == 64 && !memcmp(got.data, bytes, 64) && got.regs == 40);
    gt_cubin_free(&got);
    gt_db_close(db);
    sql(dbp, "UPDATE cubins SET cubin = zeroblob(64)"); /* tampered */
    CHECK(gt_db_open(dbp, GT_DB_WRITE, &db, err, sizeof err) == 0);
    CHECK(get(db, "00000000000000aa", &got) == 0 && !got.data && got.regs == -1);
    CHECK(gt_cubin_cache_put(db, "00000000000000aa", "sm_90", &put, err, sizeof err) == 0); /* replaced */
    CHECK(get(db, "00000000000000aa", &got) == 1);
    gt_cubin_free(&got);
    CHECK(get(db, "00000000000000ab", &got) == 0); /* the MAC covers the key fields: not another hash's */
    char mine[4200];
    snprintf(mine, sizeof mine, "%s", dir);
    free(dir);
    dir = fresh_config(path); /* another user: another key */
    unsigned char theirs[32];
    CHECK(gt_trust_key(1, theirs, err, sizeof err) == 0);
    CHECK(get(db, "00000000000000aa", &got) == 0);
    unlink(path); /* no key at all: nothing is trusted, and a read makes none */
    CHECK(get(db, "00000000000000aa", &got) == 0 && access(path, F_OK) < 0);
    setenv("XDG_CONFIG_HOME", mine, 1);
    CHECK(get(db, "00000000000000aa", &got) == 1);
    gt_cubin_free(&got);
    CHECK(gt_db_cubin_put(db, "00000000000000aa", "sm_90", 13000, "x", bytes, 64, 1, 0, NULL, err, sizeof err) == 0);
    gt_db_close(db);
    sql(dbp, "UPDATE cubins SET mac = NULL"); /* as before schema 5 */
    CHECK(gt_db_open(dbp, GT_DB_WRITE, &db, err, sizeof err) == 0);
    CHECK(get(db, "00000000000000aa", &got) == 0);
    gt_db_close(db);
    dir = (free(dir), fresh_config(path)); /* a reader of a database it may not write: no key made, nothing put */
    CHECK(gt_db_open(dbp, GT_DB_READ, &db, err, sizeof err) == 0 && gt_db_read_only(db));
    CHECK(gt_cubin_cache_put(db, "00000000000000ac", "sm_90", &put, err, sizeof err) == 0 && access(path, F_OK) < 0);
    gt_db_close(db);
    CHECK(gt_fixture_sql_int(dbp, "SELECT count(*) FROM cubins WHERE source_hash = '00000000000000ac'") == 0);
    setenv("XDG_CONFIG_HOME", saved, 1);
    gt_fixture_rm(dbp);
    free(saved), free(dir), free(dbp);
}
