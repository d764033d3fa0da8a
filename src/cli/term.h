/* What the CLI prints of data (GPU names, kernel parameters, messages and paths read from a database, a file or
 * the command line) reaches a terminal as text only: no byte of it can move the cursor, recolour, retitle or
 * answer back. Tested by tests/test_cli.c. */
#ifndef GT_CLI_TERM_H
#define GT_CLI_TERM_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* s made printable into out[n] (cut short, NUL-terminated, when n is too small): a newline, tab or carriage return
 * as \n \t \r, every other control byte (C0, DEL) and every byte that is not valid UTF-8 as \xNN, and the C1 controls
 * and bidirectional overrides (U+0080..U+009F, U+061C, U+200E/F, U+202A..U+202E, U+2066..U+2069) as \uNNNN; the
 * rest, other UTF-8 text included, as it is. Returns the length of the whole escaped text, as snprintf does. */
size_t gt_term_escape(const char *s, char *out, size_t n);

/* fprintf, with the formatted text passed through gt_term_escape except for one final newline: for a line that
 * carries data. Returns 0, or -1 on a write error or out of memory. */
int gt_term_printf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int gt_term_vprintf(FILE *f, const char *fmt, va_list ap);

/* JSON text (cJSON's, whose control bytes are already \u-escaped) written to f with the C1 controls, bidirectional
 * overrides and bytes that are not valid UTF-8 escaped as \uNNNN too: the same JSON value where the text was valid
 * UTF-8. Returns 0 or -1 on a write error. */
int gt_term_json(FILE *f, const char *json);

#endif
