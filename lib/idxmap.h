/* An open-addressing hash index (linear probing) over the caller's own
 * array of entries: a slot holds an entry's index + 1, 0 when empty, so
 * entries stay in one flat array and adding one allocates nothing but
 * the occasional doubling.  The caller gives each entry's hash and says
 * whether entry i has a key; both are inlined where they are constant.
 * One owner, not thread-safe.  (lib/strmap.h is the one for string keys
 * it copies.) */
#ifndef INGOT_LIB_IDXMAP_H
#define INGOT_LIB_IDXMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"

struct idxmap {
	size_t *slots;
	size_t cap;     /* 0 or a power of two */
};

/* FNV-1a of a string key, the one lib/strmap.c uses too: keys here are
 * not chosen to collide (a bad spread costs probes, not results). */
static inline size_t idxmap_hash_str(const char *s)
{
	uint64_t h = 14695981039346656037ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (size_t)h;
}

typedef size_t (*idxmap_hash_fn)(const void *ctx, size_t i);
typedef bool (*idxmap_is_fn)(const void *ctx, size_t i, const void *key);

/* The slot of key: *slot is the index + 1 of the entry that has it, or 0
 * where it would go.  NULL while the index is empty (cap 0). */
static inline size_t *idxmap_find(const struct idxmap *m, size_t hash, idxmap_is_fn is,
				  const void *ctx, const void *key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = hash & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		size_t *s = &m->slots[i];
		if (!*s || is(ctx, *s - 1, key))
			return s;
	}
}

/* Index entries [0, n) again (distinct keys), e.g. after dropping some. */
static inline void idxmap_rebuild(struct idxmap *m, size_t n, idxmap_hash_fn hash, const void *ctx)
{
	if (!m->cap)
		return;
	memset(m->slots, 0, m->cap * sizeof(*m->slots));
	for (size_t k = 0; k < n; k++)
		for (size_t i = hash(ctx, k) & (m->cap - 1);; i = (i + 1) & (m->cap - 1))
			if (!m->slots[i]) {
				m->slots[i] = k + 1;
				break;
			}
}

/* Room for an entry beside the n indexed ones, at most half full: the
 * table doubles (from 4096 slots) and indexes [0, n) again. */
static inline void idxmap_reserve(struct idxmap *m, size_t n, idxmap_hash_fn hash, const void *ctx)
{
	if ((n + 1) * 2 <= m->cap)
		return;
	free(m->slots);
	m->cap = m->cap ? m->cap * 2 : 4096;
	m->slots = xcalloc(m->cap, sizeof(*m->slots));
	idxmap_rebuild(m, n, hash, ctx);
}

static inline void idxmap_free(struct idxmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->cap = 0;
}

#endif
