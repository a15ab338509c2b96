/* git-style growable string.  Always NUL-terminated; buf is never NULL:
 * an empty strbuf (STRBUF_INIT, strbuf_init, after release or detach)
 * points at strbuf_slopbuf, a shared "" that is never written (alloc 0
 * says so), so callers read sb.buf without a guard. */
#ifndef INGOT_STRBUF_H
#define INGOT_STRBUF_H

#include <stddef.h>
#include <stdarg.h>

struct strbuf {
	size_t alloc;
	size_t len;
	char *buf;
};

extern char strbuf_slopbuf[];
#define STRBUF_INIT { 0, 0, strbuf_slopbuf }

void strbuf_init(struct strbuf *sb, size_t hint);
void strbuf_release(struct strbuf *sb);
char *strbuf_detach(struct strbuf *sb, size_t *len);
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
void strbuf_reset(struct strbuf *sb);
void strbuf_setlen(struct strbuf *sb, size_t len);

static inline void strbuf_cleanup(struct strbuf *sb) { strbuf_release(sb); }
#define _cleanup_strbuf_ __attribute__((cleanup(strbuf_cleanup)))

#endif
