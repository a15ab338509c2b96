#include "lib/err.h"

#include <stdio.h>
#include <string.h>

int ingot_vfail(ingot_error *e, int code, const char *fmt, va_list ap)
{
	if (code > 0)
		code = -code;
	if (code == 0)
		code = -EINVAL;
	if (e) {
		e->code = code;
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
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

int ingot_fail_status(ingot_error *e, int code, int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	code = ingot_vfail(e, code, fmt, ap);
	va_end(ap);
	if (e)
		e->status = status;
	return code;
}

int ingot_prefix(ingot_error *e, const char *fmt, ...)
{
	char old[INGOT_ERR_MSG];
	va_list ap;
	int n;

	if (!e)
		return -EINVAL;
	memcpy(old, e->msg, sizeof(old));
	va_start(ap, fmt);
	n = vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(e->msg))
		snprintf(e->msg + n, sizeof(e->msg) - (size_t)n, ": %.*s",
			 (int)(sizeof(e->msg) - (size_t)n), old);
	return e->code ? e->code : -EINVAL;
}

void ingot_error_clear(ingot_error *e)
{
	if (e) {
		e->code = 0;
		e->status = 0;
		e->msg[0] = '\0';
	}
}
