/* Text from outside (archive entry names, manifest paths, recipe
 * strings) must never reach a terminal or a log raw: a newline forges a
 * second line, ESC starts a terminal control sequence.  These helpers
 * make such text printable and bound its length. */
#ifndef INGOT_ESCAPE_H
#define INGOT_ESCAPE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "lib/strbuf.h"

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0 when
 * the bytes there are not one: overlong forms, surrogates and code points
 * above U+10FFFF are invalid, as in RFC 3629. */
size_t utf8_seq_len(const char *s, size_t n);

/* Whether the NUL-terminated s is valid UTF-8 throughout. */
bool utf8_valid(const char *s);

/* Append s (n bytes) with C0 controls, DEL, C1 controls and bytes that
 * are not valid UTF-8 written as \n, \t, \r or \xNN.  Valid printable
 * UTF-8 passes unchanged, so the result is idempotent. */
void strbuf_add_escaped(struct strbuf *sb, const char *s, size_t n);

/* The ls -b form, for listings that must stay ASCII and
 * byte-exact (`ingot inspect`): a backslash doubled, every byte below
 * 0x20 or from 0x7f up as \ooo octal, everything else unchanged. */
void strbuf_add_escaped_octal(struct strbuf *sb, const char *s, size_t n);

/* Shorten sb->buf[off, off+len) to at most max bytes by replacing its
 * middle with "...", never splitting a UTF-8 sequence or an escape;
 * returns the new length of that span. */
size_t strbuf_shorten_span(struct strbuf *sb, size_t off, size_t len, size_t max);

/* printf-style formatting where every %s argument (and %m) is escaped;
 * the formats themselves are ingot's own text.  The spans record where
 * the first ESC_MAX_SPANS arguments landed in sb. */
#define ESC_MAX_SPANS 16
struct esc_fmt {
	struct strbuf sb;
	size_t off[ESC_MAX_SPANS], len[ESC_MAX_SPANS];
	size_t nspans;
};
void esc_vformat(struct esc_fmt *m, const char *fmt, va_list ap);
/* Record sb[off, end) as one argument span. */
void esc_add_span(struct esc_fmt *m, size_t off);

/* strbuf_addf for text that carries names: every %s argument escaped. */
void strbuf_addf_escaped(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));


#endif
