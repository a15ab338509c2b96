/* Small string helpers every part uses. */
#ifndef INGOT_LIB_STR_H
#define INGOT_LIB_STR_H

#include <stdbool.h>
#include <string.h>

/* The last component of a path: "a/b/c" -> "c", "c" -> "c". */
static inline const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static inline bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !memcmp(s + a - b, suffix, b);
}

/* The value of one hex digit (either case), or -1. */
static inline int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif
