/* The row validator of import and merge (see db/validate.h): text, timestamps, GPU models, sweeps, shapes, kernels,
 * timings, winners and trials, each refused with the field and the reason. Tested by tests/test_validate.c, and
 * through import and merge by tests/test_export.c and tests/test_cli_db.c. */
#include "validate.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Why the timing bounds (validate.h) are what they are:
 * - DBV_MAX_TFLOPS: the fastest FP32-accurate GEMM on any GPU today runs at a few hundred TFLOPS (split-TF32 or
 *   BF16x9 emulation on tensor cores: a B200's dense TF32 rate of ~1.1 PFLOPS over three products is ~370; FFMA
 *   peaks are under 100). 2000 leaves over 5x for GPUs to come and for timing noise, and still refuses every
 *   time that only an error or a forgery gives (1e-300 ms would be 5e299 TFLOPS).
 * - DBV_MIN_MS: a kernel launch takes microseconds, and 1 ns is two clock cycles of a 2 GHz GPU, so no time under
 *   it is ever measured; without this floor a tiny shape (1x1x1) could hold a time of 1e-200 ms within the TFLOPS
 *   ceiling, and nothing could ever displace it.
 * - DBV_MAX_MS: a run longer than --trial-timeout's largest value (a day) is killed, never stored.
 * - DBV_MAX_RATIO: tuned FP32-class kernels beat cuBLAS SGEMM by at most a few times; a ratio of 1000 only comes
 *   from a forged or corrupt baseline, which would make the serving model reuse that kernel everywhere near. */

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* The code point at s and its length in bytes (*len); -1 for bytes that are not UTF-8 (a stray continuation, an
 * overlong form, a surrogate, past U+10FFFF, or cut short by the end of the string). */
static long utf8_next(const unsigned char *s, int *len)
{
    static const long least[] = {0, 0, 0x80, 0x800, 0x10000};
    const unsigned c = s[0];
    if (c < 0x80) return *len = 1, (long)c;
    const int n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
    if (!n || c > 0xF4) return -1;
    long cp = c & (0x7F >> n);
    for (int i = 1; i < n; ++i) {
        if ((s[i] & 0xC0) != 0x80) return -1;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if (cp < least[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
    return *len = n, cp;
}

/* C0, DEL and C1 controls, and the invisible format characters that change what a terminal shows: zero-width
 * characters and marks (U+200B..U+200F), line and paragraph separators and bidirectional embeddings and overrides
 * (U+2028..U+202E), word joiners, invisible operators and isolates (U+2060..U+2069), the byte-order mark and the
 * interlinear annotation characters. "NVIDIA H200" and a look-alike with a zero-width space are two GPU models. */
static int is_control(long cp, int log)
{
    if (log && (cp == '\n' || cp == '\t')) return 0;
    return cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x200B && cp <= 0x200F) ||
           (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2069) || cp == 0xFEFF ||
           (cp >= 0xFFF9 && cp <= 0xFFFB);
}

int dbv_text(const char *what, const char *s, size_t max, int may_be_empty, int log, char *err, size_t errlen)
{
    if (!s) return fail(err, errlen, "%s: missing", what);
    const size_t len = strlen(s);
    if (len > max) return fail(err, errlen, "%s: %zu bytes long, over the limit of %zu", what, len, max);
    if (!len && !may_be_empty) return fail(err, errlen, "%s: empty", what);
    for (size_t i = 0; i < len;) {
        int n = 1;
        const long cp = utf8_next((const unsigned char *)s + i, &n);
        if (cp < 0) return fail(err, errlen, "%s: byte %zu is not UTF-8 text", what, i);
        if (is_control(cp, log))
            return fail(err, errlen, "%s: byte %zu is a control character (U+%04lX), which text may not hold", what, i,
                        cp);
        i += (size_t)n;
    }
    return 0;
}

void dbv_clean_copy(char *out, size_t n, const char *in, int log)
{
    size_t o = 0;
    for (size_t i = 0; in && in[i];) {
        int len = 1;
        const long cp = utf8_next((const unsigned char *)in + i, &len);
        const int bad = cp < 0 || is_control(cp, log);
        const size_t put = bad ? 1 : (size_t)len;
        if (o + put >= n) break;
        if (bad) out[o] = '?';
        else memcpy(out + o, in + i, put);
        o += put;
        i += (size_t)len; /* 1 for a byte that is not UTF-8 */
    }
    out[o] = 0;
}

/* Optional text: NULL is absent; otherwise dbv_text, empty allowed. */
static int opt_text(const char *what, const char *s, size_t max, char *err, size_t errlen)
{
    return s ? dbv_text(what, s, max, 1, 0, err, errlen) : 0;
}

static int hex_text(const char *what, const char *s, size_t digits, char *err, size_t errlen)
{
    if (!s || strlen(s) != digits || strspn(s, "0123456789abcdef") != digits)
        return fail(err, errlen, "%s: want %zu lowercase hex digits", what, digits);
    return 0;
}

/* An integer field: absent, or in [lo, hi]. */
static int opt_int(const char *what, long long v, long long lo, long long hi, char *err, size_t errlen)
{
    if (v == DBV_ABSENT || (v >= lo && v <= hi)) return 0;
    return fail(err, errlen, "%s %lld: want %lld..%lld or null", what, v, lo, hi);
}

/* A real field: absent (NAN), or in [lo, hi] (infinities compare as they should). */
static int opt_real(const char *what, double v, double lo, double hi, char *err, size_t errlen)
{
    if (isnan(v) || (v >= lo && v <= hi)) return 0;
    return fail(err, errlen, "%s %g: want %g..%g or null", what, v, lo, hi);
}

/* 1 when s matches pattern, where 'd' stands for one digit and any other character for itself. */
static int matches(const char *s, const char *pattern)
{
    for (; *pattern; ++s, ++pattern)
        if (*pattern == 'd' ? (*s < '0' || *s > '9') : *s != *pattern) return 0;
    return 1;
}

int dbv_timestamp(const char *what, const char *s, char *err, size_t errlen)
{
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const char *want = "a UTC time YYYY-MM-DDTHH:MM:SS[.fraction]Z";
    if (!s || strlen(s) > DBV_TIME_MAX || !matches(s, "dddd-dd-ddTdd:dd:dd")) return fail(err, errlen, "%s: want %s", what, want);
    size_t frac = s[19] == '.' ? strspn(s + 20, "0123456789") : 0;
    const char *end = s + 19 + (frac ? frac + 1 : 0);
    if ((s[19] == '.' && (frac < 1 || frac > 9)) || strcmp(end, "Z")) return fail(err, errlen, "%s: want %s", what, want);
    struct tm tm = {.tm_year = atoi(s) - 1900, .tm_mon = atoi(s + 5) - 1, .tm_mday = atoi(s + 8),
                    .tm_hour = atoi(s + 11), .tm_min = atoi(s + 14), .tm_sec = atoi(s + 17)};
    const int y = tm.tm_year + 1900, leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (y < 1970 || tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 ||
        tm.tm_mday > mdays[tm.tm_mon] + (tm.tm_mon == 1 && leap) || tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 59)
        return fail(err, errlen, "%s: %s is not a date and time from 1970 on", what, s);
    if (timegm(&tm) > time(NULL) + 86400) return fail(err, errlen, "%s: %s is in the future", what, s);
    return 0;
}

int dbv_model_check(const dbv_model *m, gt_limits *lim, char *err, size_t errlen)
{
    gt_limits l;
    char known[200];
    if (dbv_text("gpu.name", m->name, DBV_NAME_MAX, 0, 0, err, errlen) < 0) return -1;
    if (m->cc_major < 0 || m->cc_major > 99 || m->cc_minor < 0 || m->cc_minor > 9 ||
        !gt_limits_for_cc((int)m->cc_major, (int)m->cc_minor, &l)) {
        gt_arch_list(known, sizeof known);
        return fail(err, errlen, "gpu: compute capability %lld.%lld is no architecture this gemmtune knows (%s)",
                    m->cc_major, m->cc_minor, known);
    }
    if (m->sm_count < 1 || m->sm_count > 4096)
        return fail(err, errlen, "gpu.sm_count %lld: want 1..4096", m->sm_count);
    l.sm_count = (int)m->sm_count;
    if (lim) *lim = l;
    return 0;
}

int dbv_gpu_check(const char *uuid, long long mem_bytes, long long l2_bytes, char *err, size_t errlen)
{
    if (dbv_text("gpu.uuid", uuid, DBV_UUID_MAX, 0, 0, err, errlen) < 0 ||
        opt_int("gpu.mem_bytes", mem_bytes, 0, 1LL << 50, err, errlen) < 0 ||
        opt_int("gpu.l2_bytes", l2_bytes, 0, 1LL << 50, err, errlen) < 0)
        return -1;
    return 0;
}

int dbv_sweep_check(const dbv_sweep *s, char *err, size_t errlen)
{
    if (hex_text("sweep.uid", s->uid, 32, err, errlen) < 0 ||
        dbv_timestamp("sweep.started_at", s->started_at, err, errlen) < 0 ||
        opt_text("sweep.host", s->host, DBV_HOST_MAX, err, errlen) < 0 ||
        opt_text("sweep.command", s->command, DBV_COMMAND_MAX, err, errlen) < 0 ||
        opt_text("sweep.gemmtune_version", s->version, DBV_VERSION_MAX, err, errlen) < 0 ||
        opt_text("gpu.nvidia_driver", s->nvidia_driver, DBV_DRIVER_MAX, err, errlen) < 0 ||
        dbv_text("sweep.origin", s->origin, DBV_ORIGIN_MAX, 0, 0, err, errlen) < 0)
        return -1;
    if (strcmp(s->origin, "local") && strncmp(s->origin, "merge:", 6) && strncmp(s->origin, "import:", 7))
        return fail(err, errlen, "sweep.origin: want 'local', 'merge:...' or 'import:...'");
    if (opt_int("gpu.driver_version", s->driver_version, 0, 1000000, err, errlen) < 0 ||
        opt_int("gpu.cuda_version", s->cuda_version, 0, 1000000, err, errlen) < 0 ||
        opt_int("gpu.nvrtc_version", s->nvrtc_version, 0, 1000000, err, errlen) < 0 ||
        opt_int("gpu.sm_clock_mhz", s->sm_clock_mhz, 0, 100000, err, errlen) < 0)
        return -1;
    return 0;
}

int dbv_shape_check(long long m, long long n, long long k, long long batch, const char *layout, gt_shape *out,
                    char *err, size_t errlen)
{
    const long long d[4] = {m, n, k, batch};
    static const char *const names[] = {"shape.m", "shape.n", "shape.k", "shape.batch"};
    for (int i = 0; i < 4; ++i)
        if (d[i] < 1 || d[i] > INT_MAX) return fail(err, errlen, "%s %lld: want 1..%d", names[i], d[i], INT_MAX);
    if (!layout || (strcmp(layout, "nn") && strcmp(layout, "nt") && strcmp(layout, "tn") && strcmp(layout, "tt")))
        return fail(err, errlen, "shape.layout: want one of nn, nt, tn, tt");
    *out = (gt_shape){(int)m, (int)n, (int)k, layout[0] == 't', layout[1] == 't', (int)batch};
    return 0;
}

/* The families a row may name, for the message that refuses another one. */
static void known_families(char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < gt_family_count() && used < n; ++i)
        if (!gt_family_at(i)->test_only)
            used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? ", " : "", gt_family_at(i)->name);
}

int dbv_kernel_check(const dbv_kernel *k, const gt_limits *lim, char *err, size_t errlen)
{
    char why[256] = "", canon[320];
    gt_params p;
    if (dbv_text("family", k->family, DBV_FAMILY_MAX, 0, 0, err, errlen) < 0 ||
        dbv_text("params", k->params, DBV_PARAMS_MAX, 1, 0, err, errlen) < 0 ||
        hex_text("source_hash", k->source_hash, 16, err, errlen) < 0 || opt_text("math", k->math, 15, err, errlen) < 0)
        return -1;
    const gt_family *f = gt_family_find(k->family);
    if (!f || f->test_only) {
        known_families(canon, sizeof canon);
        return fail(err, errlen, "family '%s' is unknown to this gemmtune (it knows %s)", k->family, canon);
    }
    if (k->math && strcmp(k->math, gt_math_name(f->math)))
        return fail(err, errlen, "math '%s', but family %s computes '%s'", k->math, f->name, gt_math_name(f->math));
    if (gt_params_parse(f, k->params, &p, why, sizeof why) < 0)
        return fail(err, errlen, "params '%s': %s", k->params, why);
    gt_params_format(f, &p, canon, sizeof canon);
    if (strcmp(canon, k->params))
        return fail(err, errlen, "params '%s' are not %s's canonical text (every parameter, in order: '%s')", k->params,
                    f->name, canon);
    if (lim && f->legal && !f->legal(&p, lim, why, sizeof why))
        return fail(err, errlen, "%s %s is not a legal kernel on sm_%d%d: %s", f->name, k->params, lim->cc_major,
                    lim->cc_minor, why[0] ? why : "its constraints reject it");
    return 0;
}

int dbv_ms_possible(const gt_shape *s, double ms)
{
    return isfinite(ms) && ms >= DBV_MIN_MS && ms <= DBV_MAX_MS && gt_tflops(s, ms) <= DBV_MAX_TFLOPS;
}

int dbv_row_possible(long long m, long long n, long long k, long long batch, double ms)
{
    if (m < 1 || m > INT_MAX || n < 1 || n > INT_MAX || k < 1 || k > INT_MAX || batch < 1 || batch > INT_MAX) return 0;
    const gt_shape s = {(int)m, (int)n, (int)k, 0, 0, (int)batch};
    return dbv_ms_possible(&s, ms);
}

int dbv_ms_check(const char *what, double ms, const gt_shape *s, char *err, size_t errlen)
{
    char dims[48];
    if (!isfinite(ms) || ms < DBV_MIN_MS || ms > DBV_MAX_MS)
        return fail(err, errlen, "%s %g: want a time of %g..%g ms", what, ms, DBV_MIN_MS, DBV_MAX_MS);
    if (gt_tflops(s, ms) > DBV_MAX_TFLOPS)
        return fail(err, errlen, "%s %g ms on %s is %.3g TFLOPS, over the %g that no GPU reaches in FP32-class math: "
                    "not a time a GPU can take", what, ms, gt_shape_dims(s, dims, sizeof dims), gt_tflops(s, ms),
                    DBV_MAX_TFLOPS);
    return 0;
}

int dbv_winner_check(const dbv_winner *w, gt_shape *shape, char *err, size_t errlen)
{
    gt_limits lim;
    if (dbv_model_check(&w->model, &lim, err, errlen) < 0 ||
        dbv_shape_check(w->m, w->n, w->k, w->batch ? w->batch : 1, w->layout, shape, err, errlen) < 0 ||
        dbv_kernel_check(&w->kernel, &lim, err, errlen) < 0 || dbv_ms_check("median_ms", w->median_ms, shape, err, errlen) < 0 ||
        opt_real("spread_pct", w->spread_pct, 0, 1e9, err, errlen) < 0)
        return -1;
    if (isnan(w->cublas_ms)) return 0;
    if (dbv_ms_check("cublas_ms", w->cublas_ms, shape, err, errlen) < 0) return -1;
    if (w->cublas_ms / w->median_ms > DBV_MAX_RATIO)
        return fail(err, errlen, "cublas_ms %g is %.3g times median_ms %g: no kernel is %g times as fast as cuBLAS on "
                    "the same GPU and shape", w->cublas_ms, w->cublas_ms / w->median_ms, w->median_ms, DBV_MAX_RATIO);
    return 0;
}

void dbv_winner_label(const dbv_winner *w, char *out, size_t n)
{
    char name[DBV_NAME_MAX + 1], layout[3];
    dbv_clean_copy(name, sizeof name, w->model.name ? w->model.name : "?", 0);
    dbv_clean_copy(layout, sizeof layout, w->layout ? w->layout : "?", 0);
    if (w->batch > 1) snprintf(out, n, "(%s, %lldx%lldx%lldx%lld %s)", name, w->batch, w->m, w->n, w->k, layout);
    else snprintf(out, n, "(%s, %lldx%lldx%lld %s)", name, w->m, w->n, w->k, layout);
}

/* A trial's times: each absent or in range, in order; an ok trial's median present and possible on s. */
static int trial_times(const dbv_trial *t, const gt_shape *ok_on, char *err, size_t errlen)
{
    const double v[3] = {t->min_ms, t->median_ms, t->max_ms};
    static const char *const names[] = {"min_ms", "median_ms", "max_ms"};
    for (int i = 0; i < 3; ++i)
        if (!isnan(v[i]) && (!isfinite(v[i]) || v[i] < DBV_MIN_MS || v[i] > DBV_MAX_MS))
            return fail(err, errlen, "%s %g: want a time of %g..%g ms or null", names[i], v[i], DBV_MIN_MS, DBV_MAX_MS);
    if ((!isnan(v[0]) && !isnan(v[1]) && v[0] > v[1]) || (!isnan(v[1]) && !isnan(v[2]) && v[1] > v[2]) ||
        (!isnan(v[0]) && !isnan(v[2]) && v[0] > v[2]))
        return fail(err, errlen, "min_ms %g, median_ms %g, max_ms %g: not in order", v[0], v[1], v[2]);
    if (ok_on && isnan(v[1])) return fail(err, errlen, "median_ms: an ok trial has a time");
    return ok_on ? dbv_ms_check("median_ms", v[1], ok_on, err, errlen) : 0;
}

int dbv_trial_check(const dbv_trial *t, const gt_shape *s, const dbv_kernel *k, const gt_limits *lim, char *err,
                    size_t errlen)
{
    if (dbv_text("status", t->status, 31, 0, 0, err, errlen) < 0) return -1;
    const int st = gt_status_parse(t->status);
    if (st < 0) return fail(err, errlen, "status '%s' is none this gemmtune stores", t->status);
    if (t->message && dbv_text("message", t->message, DBV_MESSAGE_MAX, 1, 1, err, errlen) < 0) return -1;
    if (dbv_timestamp("created_at", t->created_at, err, errlen) < 0 ||
        trial_times(t, st == GT_ST_OK ? s : NULL, err, errlen) < 0 ||
        dbv_kernel_check(k, st == GT_ST_OK ? lim : NULL, err, errlen) < 0 ||
        opt_real("tflops", t->tflops, 0, DBV_MAX_TFLOPS, err, errlen) < 0 ||
        opt_real("rel_err", t->rel_err, 0, INFINITY, err, errlen) < 0 ||
        opt_real("compile_s", t->compile_s, 0, 86400, err, errlen) < 0 ||
        opt_int("regs", t->regs, 0, 255, err, errlen) < 0 ||
        opt_int("spill_bytes", t->spill_bytes, 0, INT_MAX, err, errlen) < 0 ||
        opt_int("reps", t->reps, 0, 1000000000, err, errlen) < 0)
        return -1;
    return 0;
}
