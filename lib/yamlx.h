/* libyaml document helpers with positioned errors.  Every error reads
 * "FILE:LINE:COL: FIELD: expected X, got Y" (1-based line and column). */
#ifndef INGOT_YAMLX_H
#define INGOT_YAMLX_H

#include <stdbool.h>
#include <stdint.h>
#include <yaml.h>
#include "lib/err.h"

#define YDOC_MAX_BYTES (16u << 20)

struct ydoc {
	yaml_document_t doc;
	char *file;   /* name used in messages */
	bool loaded;
};

int ydoc_load(struct ydoc *d, const char *path, ingot_error *e);
int ydoc_load_buf(struct ydoc *d, const char *name, const char *buf, size_t len, ingot_error *e);
void ydoc_free(struct ydoc *d);
static inline void ydoc_freep(struct ydoc *d) { ydoc_free(d); }
#define _cleanup_ydoc_ __attribute__((cleanup(ydoc_freep)))

yaml_node_t *ydoc_root(struct ydoc *d);
yaml_node_t *ydoc_node(struct ydoc *d, int id);

/* "file:line:col: " + message; returns -EINVAL. */
int ydoc_fail(struct ydoc *d, const yaml_node_t *n, ingot_error *e, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* "mapping", "sequence", "string", ... for messages. */
const char *ydoc_kind(const yaml_node_t *n);

int ydoc_expect_map(struct ydoc *d, yaml_node_t *n, const char *field, ingot_error *e);
int ydoc_expect_seq(struct ydoc *d, yaml_node_t *n, const char *field, ingot_error *e);

/* Look up key in a mapping node; NULL if absent. */
yaml_node_t *ydoc_get(struct ydoc *d, yaml_node_t *map, const char *key);
/* As ydoc_get, but absence is an error "missing required field". */
int ydoc_need(struct ydoc *d, yaml_node_t *map, const char *key, const char *what,
	      yaml_node_t **out, ingot_error *e);
/* Refuse keys not in allowed (NULL-terminated) and duplicated keys. */
int ydoc_check_keys(struct ydoc *d, yaml_node_t *map, const char *what,
		    const char *const *allowed, ingot_error *e);

/* Scalars.  A quoted or plain scalar is a string; ints/bools are parsed
 * from plain scalars with range checks. */
int ydoc_str(struct ydoc *d, yaml_node_t *n, const char *field, const char **out, ingot_error *e);
int ydoc_uint(struct ydoc *d, yaml_node_t *n, const char *field, uint64_t min, uint64_t max,
	      uint64_t *out, ingot_error *e);
int ydoc_bool(struct ydoc *d, yaml_node_t *n, const char *field, bool *out, ingot_error *e);

/* Iterate mapping pairs / sequence items. */
#define ydoc_map_foreach(d, map, kvar, vvar) \
	for (yaml_node_pair_t *_p = (map)->data.mapping.pairs.start; \
	     _p < (map)->data.mapping.pairs.top && \
	     ((kvar) = ydoc_node((d), _p->key), (vvar) = ydoc_node((d), _p->value), 1); _p++)
#define ydoc_seq_foreach(d, seq, ivar) \
	for (yaml_node_item_t *_i = (seq)->data.sequence.items.start; \
	     _i < (seq)->data.sequence.items.top && ((ivar) = ydoc_node((d), *_i), 1); _i++)

#endif
