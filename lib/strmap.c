#include "lib/strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/idxmap.h"
#include "lib/xalloc.h"

static struct strmap_slot *find(const struct strmap *m, const char *key, size_t h)
{
	size_t i = h & (m->cap - 1);
	for (;; i = (i + 1) & (m->cap - 1)) {
		struct strmap_slot *s = &m->slots[i];
		if (!s->key || (s->hash == h && !strcmp(s->key, key)))
			return s;
	}
}

void *strmap_get(const struct strmap *m, const char *key)
{
	if (!m->cap)
		return NULL;
	struct strmap_slot *s = find(m, key, idxmap_hash_str(key));
	return s->key ? s->value : NULL;
}

/* Load at most 1/2, so probes stay short and find() always meets an empty slot. */
static void grow(struct strmap *m)
{
	struct strmap old = *m;

	m->cap = old.cap ? old.cap * 2 : 16;
	m->slots = xcalloc(m->cap, sizeof(*m->slots));
	for (size_t i = 0; i < old.cap; i++)
		if (old.slots[i].key)
			*find(m, old.slots[i].key, old.slots[i].hash) = old.slots[i];
	free(old.slots);
}

void **strmap_put(struct strmap *m, const char *key, int *created)
{
	size_t h = idxmap_hash_str(key);
	struct strmap_slot *s;

	if ((m->n + 1) * 2 > m->cap)
		grow(m);
	s = find(m, key, h);
	if (created)
		*created = !s->key;
	if (!s->key) {
		*s = (struct strmap_slot){ .key = xstrdup(key), .hash = h };
		m->n++;
	}
	return &s->value;
}

void strmap_free(struct strmap *m, void (*free_value)(void *))
{
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->slots[i].key)
			continue;
		if (free_value)
			free_value(m->slots[i].value);
		free(m->slots[i].key);
	}
	free(m->slots);
	*m = (struct strmap)STRMAP_INIT;
}
