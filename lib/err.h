/* One error type for all of ingot: a negative errno-style code plus a
 * one-line human message.  Library code fills it and returns the code;
 * only the CLI prints it and picks an exit status (from the code, or from
 * the kind through its table, cli/exit.c). */
#ifndef INGOT_ERR_H
#define INGOT_ERR_H

#include <errno.h>
#include <stdarg.h>

#define INGOT_ERR_MSG 1024

typedef struct ingot_error {
	int code;                 /* negative errno, or 0 */
	int kind;                 /* what failed, when a caller needs more than the code: a value
				   * of the failing part's kind enum (keys/envelope.h, ops/promote.h;
				   * their ranges do not overlap), 0 = unset */
	char msg[INGOT_ERR_MSG];  /* "file:line:col: field: expected X, got Y" */
} ingot_error;

/* Record an error and return -abs(code) (EINVAL if code is 0), so callers
 * can write `return ingot_fail(e, -EINVAL, "...")`.  e may be NULL. */
int ingot_fail(ingot_error *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int ingot_vfail(ingot_error *e, int code, const char *fmt, va_list ap);

/* Like ingot_fail but also sets the kind of failure. */
int ingot_fail_kind(ingot_error *e, int code, int kind, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Keep e's message and return code; set the kind unless an inner call
 * already named a more precise one. */
int ingot_set_kind(ingot_error *e, int code, int kind);

/* Prefix the existing message: "prefix: old message". */
int ingot_prefix(ingot_error *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

void ingot_error_clear(ingot_error *e);

#endif
