/* The one out-of-memory rule, git's: an allocation that fails ends the
 * process, here and only here (xalloc_die), with one line on stderr.  No
 * input makes ingot allocate without bound (every reader has a limit),
 * so running out is the machine's state, not an error to report per
 * call: code that uses these has no "out of memory" path to get wrong. */
#ifndef INGOT_LIB_XALLOC_H
#define INGOT_LIB_XALLOC_H

#include <stddef.h>

_Noreturn void xalloc_die(void);
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* A new string printed like printf (git's xstrfmt). */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
