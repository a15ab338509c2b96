/* Placeholder until the rules part lands: refuses tuples rather than
 * silently ignoring them. */
#include "recipes/tuple.h"

int tuple_parse(struct ydoc *d, yaml_node_t *node, struct tuple **out, ingot_error *e)
{
	*out = NULL;
	return ydoc_fail(d, node, e, "tuple: not supported by this build");
}

void tuple_free(struct tuple *t) { (void)t; }
json_t *tuple_to_json(const struct tuple *t) { (void)t; return json_null(); }
int tuple_check_artifacts(const struct recipe *r, struct tree *t, const struct store *s, ingot_error *e)
{
	(void)r; (void)t; (void)s; (void)e;
	return 0;
}
