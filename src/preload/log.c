/* The preload log: one line per new (call signature, outcome), deduplicated by a lock-free set so logging adds
 * no lock to the warm path. No CUDA: tested on the CPU (build/gt_tests --cpu preload_log). */
#include "preload.h"

#include <cublas_api.h>
#include <errno.h>
#include <fcntl.h>
#include <cublasLt.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* O_NONBLOCK makes the open itself return at once whatever path names (a FIFO's open would wait for a reader);
 * fstat then keeps what appending lines to is harmless: a regular file, or a character device (a terminal,
 * /dev/null), which are given back blocking writes so that no line is dropped. */
static int appendable(const struct stat *st) { return S_ISREG(st->st_mode) || S_ISCHR(st->st_mode); }

int gt_pl_log_open(const char *path, char *why, size_t n)
{
    static const char other[] = "is not a regular file or a terminal";
    struct stat st;
    if (stat(path, &st) == 0 && !appendable(&st)) return snprintf(why, n, "%s", other), -1; /* said before opening */
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0644);
    if (fd < 0) return snprintf(why, n, "cannot be opened (%s)", strerror(errno)), -1;
    if (fstat(fd, &st) || !appendable(&st)) { /* it changed since */
        snprintf(why, n, "%s", other);
        close(fd);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

uint64_t gt_pl_key(const gt_pl_call *c, int outcome)
{
    const int64_t f[] = {c->api,   c->transa, c->transb, c->m,       c->n,    c->k,    c->lda, c->ldb,
                         c->ldc,   c->atype,  c->btype,  c->ctype,   c->compute, c->algo, c->batch, outcome};
    uint64_t h = 0x243f6a8885a308d3ull;
    for (size_t i = 0; i < sizeof f / sizeof f[0]; ++i) h = mix(h, (uint64_t)f[i]);
    return h ? h : 1;
}

/* Open addressing with linear probing; a slot goes from 0 to a key once (CAS) and never back. */
int gt_pl_seen_insert(gt_pl_seen *s, uint64_t key)
{
    unsigned i = (unsigned)(key ^ (key >> 32)) % GT_PL_SEEN_SLOTS;
    for (unsigned probes = 0; probes < GT_PL_SEEN_SLOTS; ++probes, i = (i + 1) % GT_PL_SEEN_SLOTS) {
        uint64_t cur = atomic_load_explicit(&s->slot[i], memory_order_acquire);
        if (cur == key) return 0;
        if (cur != 0) continue;
        uint64_t empty = 0;
        if (atomic_compare_exchange_strong(&s->slot[i], &empty, key)) return 1;
        if (empty == key) return 0; /* another thread inserted the same key here */
    }
    int was = atomic_exchange(&s->full, 1);
    return was ? 0 : -1;
}

static char op_letter(int op)
{
    return op == CUBLAS_OP_N ? 'n' : op == CUBLAS_OP_T ? 't' : op == CUBLAS_OP_C ? 'c' : '?';
}

const char *gt_pl_api_name(gt_pl_api a)
{
    static const char *const names[GT_PL_NAPI] = {"cublasSgemm_v2", "cublasGemmEx", "cublasSgemmStridedBatched",
                                                  "cublasLtMatmul"};
    return (unsigned)a < GT_PL_NAPI ? names[a] : "?";
}

size_t gt_pl_summary_format(const gt_pl_counts *c, int pid, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int a = 0; a < GT_PL_NAPI; ++a)
        for (int r = 0; r < GT_PL_NREASONS; ++r) {
            if (!c->n[a][r] || used + 1 >= n) continue;
            int w = snprintf(buf + used, n - used, "gemmtune-summary\t%d\t%s\t%s\t%s\t%llu\n", pid,
                             gt_pl_api_name((gt_pl_api)a), r == GT_PL_SERVE ? "served" : "forwarded",
                             r == GT_PL_SERVE ? "" : gt_pl_reason_text((gt_pl_reason)r), c->n[a][r]);
            if (w < 0 || (size_t)w >= n - used) { /* a line that does not fit is left out whole */
                buf[used] = '\0';
                break;
            }
            used += (size_t)w;
        }
    return used;
}

/* cublasLtEpilogue_t: the two that are served by name, the others by number. */
static void epilogue_name(int e, char *buf, size_t n)
{
    if (e == CUBLASLT_EPILOGUE_DEFAULT || e == CUBLASLT_EPILOGUE_BIAS)
        snprintf(buf, n, "%s", e == CUBLASLT_EPILOGUE_DEFAULT ? "default" : "bias");
    else snprintf(buf, n, "%d", e);
}

size_t gt_pl_format(char *buf, size_t n, const gt_pl_call *c, const char *verdict)
{
    if (!n) return 0;
    int w = snprintf(buf, n, "gemmtune: %dx%dx%d %c%c %s [%s lda=%d ldb=%d ldc=%d", c->m, c->n, c->k,
                     op_letter(c->transa), op_letter(c->transb), verdict, gt_pl_api_name(c->api), c->lda, c->ldb, c->ldc);
    if (w >= 0 && (size_t)w < n && c->api == GT_PL_STRIDED)
        w += snprintf(buf + w, n - (size_t)w, " batch=%d", c->batch);
    if (w >= 0 && (size_t)w < n && c->api == GT_PL_GEMMEX)
        w += snprintf(buf + w, n - (size_t)w, " compute=%d algo=%d", c->compute, c->algo);
    if (w >= 0 && (size_t)w < n && c->api == GT_PL_LT) {
        char e[16];
        epilogue_name(c->algo, e, sizeof e);
        w += snprintf(buf + w, n - (size_t)w, " compute=%d epilogue=%s", c->compute, e);
    }
    if (w >= 0 && (size_t)w < n) w += snprintf(buf + w, n - (size_t)w, "]\n");
    if (w < 0) w = 0;
    if ((size_t)w >= n) { /* truncated: keep the line a line */
        w = (int)n - 1;
        if (w > 0) buf[w - 1] = '\n';
    }
    return (size_t)w;
}
