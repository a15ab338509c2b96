#include "lib/err.h"

#include <string.h>

#include "lib/escape.h"
#include "lib/strbuf.h"

/* Messages carry names from outside (archive entries, manifest paths):
 * every %s argument is escaped (lib/escape.h) and, when the whole
 * message would not fit, the longest arguments are shortened in the
 * middle, so the reason written in the format itself is never cut off. */

#define SPAN_MIN  32    /* an argument is never shortened below this */

/* Shorten the longest arguments until the message fits max-1 bytes. */
static void fit(struct esc_fmt *m, size_t max)
{
	while (m->sb.len >= max) {
		size_t best = ESC_MAX_SPANS, excess = m->sb.len - (max - 1), want, got;

		for (size_t i = 0; i < m->nspans; i++)
			if (m->len[i] > SPAN_MIN && (best == ESC_MAX_SPANS || m->len[i] > m->len[best]))
				best = i;
		if (best == ESC_MAX_SPANS)
			break;
		want = m->len[best] > excess + 3 + SPAN_MIN ? m->len[best] - excess - 3 : SPAN_MIN;
		got = strbuf_shorten_span(&m->sb, m->off[best], m->len[best], want);
		if (got >= m->len[best])
			break;
		for (size_t i = 0; i < m->nspans; i++)
			if (m->off[i] > m->off[best])
				m->off[i] -= m->len[best] - got;
		m->len[best] = got;
	}
}

static void err_keep(ingot_error *e, struct esc_fmt *m)
{
	fit(m, sizeof(e->msg));
	if (m->sb.len >= sizeof(e->msg))
		strbuf_shorten_span(&m->sb, 0, m->sb.len, sizeof(e->msg) - 1);
	memcpy(e->msg, m->sb.buf, m->sb.len + 1);
	strbuf_release(&m->sb);
}

int ingot_vfail(ingot_error *e, int code, const char *fmt, va_list ap)
{
	int saved_errno = errno;

	if (code > 0)
		code = -code;
	if (code == 0)
		code = -EINVAL;
	if (e) {
		struct esc_fmt m = { .sb = STRBUF_INIT };

		e->code = code;
		errno = saved_errno;
		esc_vformat(&m, fmt, ap);
		err_keep(e, &m);
	}
	return code;
}

int ingot_fail(ingot_error *e, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	code = ingot_vfail(e, code, fmt, ap);
	va_end(ap);
	return code;
}

int ingot_fail_kind(ingot_error *e, int code, int kind, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	code = ingot_vfail(e, code, fmt, ap);
	va_end(ap);
	if (e)
		e->kind = kind;
	return code;
}

int ingot_set_kind(ingot_error *e, int code, int kind)
{
	if (e && !e->kind)
		e->kind = kind;
	return code;
}

int ingot_prefix(ingot_error *e, const char *fmt, ...)
{
	struct esc_fmt m = { .sb = STRBUF_INIT };
	size_t off;
	va_list ap;

	if (!e)
		return -EINVAL;
	va_start(ap, fmt);
	esc_vformat(&m, fmt, ap);
	va_end(ap);
	strbuf_addstr(&m.sb, ": ");
	/* The old message is already escaped; it may be shortened like a
	 * name when the prefix makes the whole too long. */
	off = m.sb.len;
	strbuf_addstr(&m.sb, e->msg);
	esc_add_span(&m, off);
	err_keep(e, &m);
	return e->code ? e->code : -EINVAL;
}

void ingot_error_clear(ingot_error *e)
{
	if (e) {
		e->code = 0;
		e->kind = 0;
		e->msg[0] = '\0';
	}
}
