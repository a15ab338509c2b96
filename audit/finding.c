/* A finding on an audit row: one code and one line of escaped detail. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "audit/audit-private.h"
#include "lib/cleanup.h"
#include "lib/escape.h"
#include "lib/strbuf.h"

void audit_add_finding(json_t *row, const char *code, const char *fmt, ...)
{
	char buf[INGOT_ERR_MSG];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	/* Details quote what nodes wrote; keep them one line of plain text
	 * so a report cannot forge lines or terminal escapes in the table. */
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	strbuf_add_escaped(&sb, buf, strlen(buf));
	json_array_append_new(json_object_get(row, "findings"),
			      json_pack("{s:s,s:s}", "code", code, "detail", sb.buf));
}

void audit_add_drift(json_t *row, const char *field, json_t *expected, json_t *actual)
{
	json_array_append_new(json_object_get(row, "drift"), json_pack("{s:s,s:o,s:o}", "field", field,
								     "expected", expected, "actual", actual));
}
