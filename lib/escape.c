#include "lib/escape.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

size_t utf8_seq_len(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned c = s[0];
	size_t len;
	unsigned cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

bool utf8_valid(const char *s)
{
	size_t n = strlen(s), len;

	for (size_t i = 0; i < n; i += len)
		if ((len = utf8_seq_len(s + i, n - i)) == 0)
			return false;
	return true;
}

static void add_hex(struct strbuf *sb, unsigned char c)
{
	static const char hex[] = "0123456789abcdef";
	char esc[4] = { '\\', 'x', hex[c >> 4], hex[c & 15] };

	strbuf_add(sb, esc, sizeof(esc));
}

void strbuf_add_escaped(struct strbuf *sb, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	strbuf_grow(sb, n);
	while (i < n) {
		unsigned char c = p[i];
		size_t len;

		if (c == '\n' || c == '\t' || c == '\r') {
			strbuf_addch(sb, '\\');
			strbuf_addch(sb, c == '\n' ? 'n' : c == '\t' ? 't' : 'r');
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			add_hex(sb, c);
			i++;
		} else if ((len = utf8_seq_len(s + i, n - i)) == 0) {
			add_hex(sb, c);
			i++;
		} else if (len == 2 && c == 0xc2 && p[i + 1] <= 0x9f) {
			/* A C1 control (U+0080..U+009F; CSI is U+009B in some
			 * terminals) is valid UTF-8: escape both bytes. */
			add_hex(sb, c);
			add_hex(sb, p[i + 1]);
			i += 2;
		} else {
			strbuf_add(sb, p + i, len);
			i += len;
		}
	}
}

/* The largest cut point <= at that does not fall inside a UTF-8
 * sequence or a \xNN / \n escape written by strbuf_add_escaped. */
void strbuf_add_escaped_octal(struct strbuf *sb, const char *s, size_t n)
{
	strbuf_grow(sb, n);
	for (const unsigned char *p = (const unsigned char *)s; p < (const unsigned char *)s + n; p++) {
		if (*p == '\\')
			strbuf_add(sb, "\\\\", 2);
		else if (*p < 0x20 || *p >= 0x7f)
			strbuf_addf(sb, "\\%03o", *p);
		else
			strbuf_addch(sb, (char)*p);
	}
}

static size_t safe_cut_left(const char *b, size_t start, size_t at)
{
	while (at > start && ((unsigned char)b[at] & 0xc0) == 0x80)
		at--;
	for (size_t k = 1; k <= 3 && at >= start + k; k++) {
		if (b[at - k] == '\\' && (k == 1 || b[at - k + 1] == 'x')) {
			at -= k;
			break;
		}
	}
	return at;
}

static size_t safe_cut_right(const char *b, size_t at, size_t end)
{
	while (at < end && ((unsigned char)b[at] & 0xc0) == 0x80)
		at++;
	for (size_t k = 1; k <= 3 && at >= k; k++) {
		if (b[at - k] == '\\' && (k == 1 || b[at - k + 1] == 'x')) {
			size_t esc_end = at - k + (b[at - k + 1] == 'x' ? 4 : 2);
			if (esc_end > at && esc_end <= end)
				at = esc_end;
			break;
		}
	}
	return at;
}

size_t strbuf_shorten_span(struct strbuf *sb, size_t off, size_t len, size_t max)
{
	static const char dots[] = "...";
	size_t keep, head, tail_from, end = off + len;

	if (len <= max || max < sizeof(dots) - 1 + 2)
		return len;
	keep = max - (sizeof(dots) - 1);
	head = safe_cut_left(sb->buf, off, off + (keep + 1) / 2);
	tail_from = safe_cut_right(sb->buf, end - keep / 2, end);
	/* [off, head) + "..." + [tail_from, end) */
	memmove(sb->buf + head + sizeof(dots) - 1, sb->buf + tail_from, sb->len - tail_from + 1);
	memcpy(sb->buf + head, dots, sizeof(dots) - 1);
	sb->len -= tail_from - head - (sizeof(dots) - 1);
	return (head - off) + (sizeof(dots) - 1) + (end - tail_from);
}

/* printf with every %s argument escaped (and %m), recording where each
 * landed so a caller can shorten them. */
void esc_add_span(struct esc_fmt *m, size_t off)
{
	if (m->nspans < ESC_MAX_SPANS) {
		m->off[m->nspans] = off;
		m->len[m->nspans] = m->sb.len - off;
		m->nspans++;
	}
}

static void add_string(struct esc_fmt *m, const char *s, int prec, int width, int left)
{
	size_t off = m->sb.len, n;

	if (!s)
		s = "(null)";
	n = prec >= 0 ? strnlen(s, (size_t)prec) : strlen(s);
	if (width > 0 && left == 0)
		for (size_t k = n; k < (size_t)width; k++)
			strbuf_addch(&m->sb, ' ');
	strbuf_add_escaped(&m->sb, s, n);
	if (width > 0 && left)
		for (size_t k = n; k < (size_t)width; k++)
			strbuf_addch(&m->sb, ' ');
	esc_add_span(m, off);
}

/* One conversion other than %s, re-formatted by snprintf with any '*'
 * replaced by its number. */
static void add_number(struct esc_fmt *m, const char *flags, size_t nflags, int width,
		       int prec, const char *lenmod, char conv, va_list *ap)
{
	char spec[32], tmp[128];
	int n = snprintf(spec, sizeof(spec), "%%%.*s", (int)nflags, flags);

	if (width >= 0)
		n += snprintf(spec + n, sizeof(spec) - (size_t)n, "%d", width);
	if (prec >= 0)
		n += snprintf(spec + n, sizeof(spec) - (size_t)n, ".%d", prec);
	snprintf(spec + n, sizeof(spec) - (size_t)n, "%s%c", lenmod, conv);

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	switch (conv) {
	case 'd': case 'i':
		if (!strcmp(lenmod, "ll")) snprintf(tmp, sizeof(tmp), spec, va_arg(*ap, long long));
		else if (!strcmp(lenmod, "l")) snprintf(tmp, sizeof(tmp), spec, va_arg(*ap, long));
		else if (!strcmp(lenmod, "j")) snprintf(tmp, sizeof(tmp), spec, va_arg(*ap, intmax_t));
		else if (!strcmp(lenmod, "z")) snprintf(tmp, sizeof(tmp), spec, va_arg(*ap, ssize_t));
		else if (!strcmp(lenmod, "t")) snprintf(tmp, sizeof(tmp), spec, va_arg(*ap, ptrdiff_t));
		else snprintf(tmp, sizeof(tmp), spec, va_arg(*ap, int));
		break;
	case 'u': case 'o': case 'x': case 'X':
		if (!strcmp(lenmod, "ll")) snprintf(tmp, sizeof(tmp), spec, va_arg(*ap, unsigned long long));
		else if (!strcmp(lenmod, "l")) snprintf(tmp, sizeof(tmp), spec, va_arg(*ap, unsigned long));
		else if (!strcmp(lenmod, "j")) snprintf(tmp, sizeof(tmp), spec, va_arg(*ap, uintmax_t));
		else if (!strcmp(lenmod, "z")) snprintf(tmp, sizeof(tmp), spec, va_arg(*ap, size_t));
		else if (!strcmp(lenmod, "t")) snprintf(tmp, sizeof(tmp), spec, va_arg(*ap, ptrdiff_t));
		else snprintf(tmp, sizeof(tmp), spec, va_arg(*ap, unsigned int));
		break;
	case 'e': case 'E': case 'f': case 'F': case 'g': case 'G': case 'a': case 'A':
		if (!strcmp(lenmod, "L")) snprintf(tmp, sizeof(tmp), spec, va_arg(*ap, long double));
		else snprintf(tmp, sizeof(tmp), spec, va_arg(*ap, double));
		break;
	case 'c': {
		char c = (char)va_arg(*ap, int);
		strbuf_add_escaped(&m->sb, &c, 1);
		return;
	}
	case 'p':
		snprintf(tmp, sizeof(tmp), spec, va_arg(*ap, void *));
		break;
	default:
		/* Not a conversion ingot uses (%n never is): keep it visible. */
		snprintf(tmp, sizeof(tmp), "%%%c", conv);
		break;
	}
#pragma GCC diagnostic pop
	strbuf_addstr(&m->sb, tmp);
}

void esc_vformat(struct esc_fmt *m, const char *fmt, va_list ap)
{
	va_list aq;
	const char *p = fmt;
	int saved_errno = errno;

	va_copy(aq, ap);
	while (*p) {
		const char *pct = strchr(p, '%'), *flags, *q;
		char lenmod[3] = "";
		int width = -1, prec = -1, left;
		size_t nflags, nl = 0;

		if (!pct) {
			strbuf_addstr(&m->sb, p);
			break;
		}
		strbuf_add(&m->sb, p, (size_t)(pct - p));
		q = pct + 1;
		if (*q == '%') {
			strbuf_addch(&m->sb, '%');
			p = q + 1;
			continue;
		}
		flags = q;
		nflags = strspn(q, "-+ #0");
		left = memchr(flags, '-', nflags) != NULL;
		q += nflags;
		if (*q == '*') {
			width = va_arg(aq, int);
			if (width < 0) {
				left = 1;
				width = -width;
			}
			q++;
		} else if (isdigit((unsigned char)*q)) {
			width = (int)strtol(q, (char **)&q, 10);
		}
		if (*q == '.') {
			q++;
			if (*q == '*') {
				prec = va_arg(aq, int);
				q++;
			} else {
				prec = (int)strtol(q, (char **)&q, 10);
			}
		}
		while (nl < 2 && strchr("hljztL", *q) && *q)
			lenmod[nl++] = *q++;
		if (!*q)
			break;
		if (*q == 's')
			add_string(m, va_arg(aq, const char *), prec, width, left);
		else if (*q == 'm')
			add_string(m, strerror(saved_errno), -1, -1, 0);
		else
			add_number(m, flags, nflags, width, prec, lenmod, *q, &aq);
		p = q + 1;
	}
	va_end(aq);
}

void strbuf_addf_escaped(struct strbuf *sb, const char *fmt, ...)
{
	struct esc_fmt m = { .sb = *sb };
	va_list ap;

	va_start(ap, fmt);
	esc_vformat(&m, fmt, ap);
	va_end(ap);
	*sb = m.sb;
}
