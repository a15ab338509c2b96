/* A string-keyed hash table (open addressing, linear probing): lookups
 * in constant time where a list would be scanned once per item, e.g. the
 * audit's AKs, enrolments and nonces over 100,000 reports.  Keys are
 * copied; values are the caller's.  Not thread-safe: one owner. */
#ifndef INGOT_LIB_STRMAP_H
#define INGOT_LIB_STRMAP_H

#include <stddef.h>

struct strmap_slot {
	char *key;      /* NULL: empty */
	size_t hash;
	void *value;
};

struct strmap {
	struct strmap_slot *slots;
	size_t cap;     /* 0 or a power of two */
	size_t n;
};

#define STRMAP_INIT { 0 }

/* The value stored under key, or NULL (also for a NULL value). */
void *strmap_get(const struct strmap *m, const char *key);
/* The value slot of key, created (value NULL) if absent; *created (may be
 * NULL) says which.  Valid until the next strmap_put. */
void **strmap_put(struct strmap *m, const char *key, int *created);
/* Frees the keys and the table, and each value with free_value (may be NULL). */
void strmap_free(struct strmap *m, void (*free_value)(void *));

#define strmap_foreach(m, s) \
	for ((s) = (m)->slots; (m)->slots && (s) < (m)->slots + (m)->cap; (s)++) \
		if ((s)->key)

#endif
