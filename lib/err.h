/* One error type for all of ingot: a negative errno-style code plus a
 * one-line human message.  Library code fills it and returns the code;
 * only the CLI prints it and picks an exit status. */
#ifndef INGOT_ERR_H
#define INGOT_ERR_H

#include <errno.h>
#include <stdarg.h>

#define INGOT_ERR_MSG 1024

typedef struct ingot_error {
	int code;                 /* negative errno, or 0 */
	int status;               /* optional command-specific exit status, 0 = unset */
	char msg[INGOT_ERR_MSG];  /* "file:line:col: field: expected X, got Y" */
} ingot_error;

/* Record an error and return -abs(code) (EINVAL if code is 0), so callers
 * can write `return ingot_fail(e, -EINVAL, "...")`.  e may be NULL. */
int ingot_fail(ingot_error *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int ingot_vfail(ingot_error *e, int code, const char *fmt, va_list ap);

/* Like ingot_fail but also sets a command-level exit status. */
int ingot_fail_status(ingot_error *e, int code, int status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Prefix the existing message: "prefix: old message". */
int ingot_prefix(ingot_error *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

void ingot_error_clear(ingot_error *e);

#endif
