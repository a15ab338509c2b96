/* The typed GPU tuple of a recipe (docs/tuple.md).  The recipe parser
 * calls tuple_parse on the `tuple:` node.  A tuple is a set of typed
 * fields addressed by dotted paths ("driver.version", "gpu.arch"), each
 * checked against a fixed schema when parsed; the same paths are what
 * the rules (recipes/rules.h) and tuple_to_json use. */
#ifndef INGOT_TUPLE_H
#define INGOT_TUPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include "lib/err.h"
#include "lib/yamlx.h"

struct tuple;

enum tuple_type {
	TUPLE_STR,      /* free text (firmware revisions, paths, names) */
	TUPLE_VERSION,  /* dotted numeric, compared with lib/version.h */
	TUPLE_BOOL,
	TUPLE_ENUM,     /* one of a fixed set of words */
	TUPLE_LIST,     /* list of words from a fixed set (gpu.models, gpu.arch) */
};

struct tuple_value {
	char *path;            /* "driver.version" */
	enum tuple_type type;
	char *str;             /* STR, VERSION, ENUM */
	bool b;                /* BOOL */
	char **list;           /* LIST */
	size_t n_list;
	size_t line, column;   /* where the recipe declared it; 0 if derived or from JSON */
};

int tuple_parse(struct ydoc *d, yaml_node_t *node, struct tuple **out, ingot_error *e);
/* The manifest's "tuple" member back into a tuple (for verify/audit);
 * name is used in messages. */
int tuple_from_json(const json_t *j, const char *name, struct tuple **out, ingot_error *e);
/* The same, as declared: each field typed and checked by the schema, but
 * nothing required and nothing derived (the node check compares what a
 * manifest declares, and a tuple without gpu.models still has its other
 * fields compared). */
int tuple_from_json_declared(const json_t *j, const char *name, struct tuple **out, ingot_error *e);
void tuple_free(struct tuple *t);
/* Canonical JSON of the tuple for the manifest (new reference). */
json_t *tuple_to_json(const struct tuple *t);

/* Field access.  tuple_get returns NULL when the field is absent. */
size_t tuple_size(const struct tuple *t);
const struct tuple_value *tuple_at(const struct tuple *t, size_t i);
const struct tuple_value *tuple_get(const struct tuple *t, const char *path);
/* True when path is set, or (for a group such as "cuda") any field under it. */
bool tuple_has(const struct tuple *t, const char *path);
/* File the tuple came from (for messages). */
const char *tuple_file(const struct tuple *t);

/* Schema queries, for validating rules.  tuple_schema_type returns 0 and
 * the type (and the allowed words of ENUM/LIST fields, NULL-terminated)
 * for a leaf path, -ENOENT otherwise; tuple_schema_group is true for a
 * group path ("cuda", "firmware", "frameworks"). */
int tuple_schema_type(const char *path, enum tuple_type *type, const char *const **words);
bool tuple_schema_group(const char *path);

#endif
