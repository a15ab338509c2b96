/* The typed GPU tuple of a recipe (see README "Tuple").  Owned by the
 * rules part; the recipe parser calls tuple_parse on the `tuple:` node. */
#ifndef INGOT_TUPLE_H
#define INGOT_TUPLE_H

#include <jansson.h>
#include "lib/err.h"
#include "lib/yamlx.h"

struct tuple;
struct recipe;
struct tree;
struct store;

int tuple_parse(struct ydoc *d, yaml_node_t *node, struct tuple **out, ingot_error *e);
void tuple_free(struct tuple *t);
/* Canonical JSON of the tuple for the manifest (new reference). */
json_t *tuple_to_json(const struct tuple *t);
/* Check that artifacts really carry the versions the tuple declares. */
int tuple_check_artifacts(const struct recipe *r, struct tree *t, const struct store *s, ingot_error *e);

#endif
