/* Printing data to a terminal as text only (see src/cli/term.h). Tested by tests/test_cli.c. */
#include "term.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The code point of the UTF-8 sequence at s in *cp and its length, or 0 when it is not valid UTF-8 (overlong, a
 * surrogate, past U+10FFFF, cut short). */
static size_t utf8_next(const unsigned char *s, unsigned *cp)
{
    static const unsigned min[5] = {0, 0, 0x80, 0x800, 0x10000};
    size_t len = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;
    if (s[0] >= 0xf5) len = 0;
    if (!len) return 0;
    unsigned v = s[0] & (0x7f >> len);
    for (size_t i = 1; i < len; ++i) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        v = v << 6 | (s[i] & 0x3f);
    }
    if (v < min[len] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
    *cp = v;
    return len;
}

/* Code points a terminal may act on, or that reorder what it shows. */
static int is_unsafe(unsigned cp)
{
    return (cp >= 0x80 && cp <= 0x9f) || cp == 0x61c || cp == 0x200e || cp == 0x200f ||
           (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

size_t gt_term_escape(const char *s, char *out, size_t n)
{
    size_t o = 0;
    char piece[12];
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        unsigned cp = 0;
        size_t len = *p < 0x80 ? 1 : utf8_next(p, &cp);
        if (*p >= 0x20 && *p < 0x7f) snprintf(piece, sizeof piece, "%c", *p);
        else if (*p == '\n' || *p == '\t' || *p == '\r')
            snprintf(piece, sizeof piece, "\\%c", *p == '\n' ? 'n' : *p == '\t' ? 't' : 'r');
        else if (*p < 0x80 || !len) snprintf(piece, sizeof piece, "\\x%02x", *p), len = 1;
        else if (is_unsafe(cp)) snprintf(piece, sizeof piece, "\\u%04x", cp);
        else snprintf(piece, sizeof piece, "%.*s", (int)len, (const char *)p);
        for (const char *q = piece; *q; ++q, ++o)
            if (o + 1 < n) out[o] = *q;
        p += len;
    }
    if (n) out[o < n ? o : n - 1] = '\0';
    return o;
}

int gt_term_vprintf(FILE *f, const char *fmt, va_list ap)
{
    char small[1024], *text = small, esc_small[2048], *esc = esc_small;
    va_list again;
    va_copy(again, ap);
    int len = vsnprintf(small, sizeof small, fmt, ap);
    if (len >= 0 && (size_t)len >= sizeof small && (text = malloc((size_t)len + 1)))
        vsnprintf(text, (size_t)len + 1, fmt, again);
    va_end(again);
    if (len < 0 || !text) return -1;
    int nl = len > 0 && text[len - 1] == '\n';
    if (nl) text[len - 1] = '\0';
    size_t need = gt_term_escape(text, esc, sizeof esc_small);
    if (need >= sizeof esc_small && (esc = malloc(need + 1))) gt_term_escape(text, esc, need + 1);
    int rc = esc && fprintf(f, "%s%s", esc, nl ? "\n" : "") >= 0 ? 0 : -1;
    if (esc != esc_small) free(esc);
    if (text != small) free(text);
    return rc;
}

int gt_term_printf(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = gt_term_vprintf(f, fmt, ap);
    va_end(ap);
    return rc;
}

int gt_term_json(FILE *f, const char *json)
{
    for (const unsigned char *p = (const unsigned char *)json; *p;) {
        unsigned cp = 0;
        size_t len = *p < 0x80 ? 1 : utf8_next(p, &cp);
        if (*p < 0x80) fputc(*p, f);
        else if (!len) fprintf(f, "\\u%04x", *p), len = 1; /* read as Latin-1: the value stays printable */
        else if (is_unsafe(cp)) fprintf(f, "\\u%04x", cp);
        else fwrite(p, 1, len, f);
        p += len;
    }
    return ferror(f) ? -1 : 0;
}
