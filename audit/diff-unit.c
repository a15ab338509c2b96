/* "Never upgrade one component alone": a candidate tuple is tested and
 * moves through the rings as a unit, so a diff whose tuple changes the
 * version of exactly one component (NCCL alone, the driver alone) is
 * warned about.  A rule over two tuples, which the version-chain rules
 * language (one tuple) cannot state; its id and source are kept here. */
#include "audit/diff.h"

#include <string.h>

#include <stdio.h>

#define UNIT_RULE_ID "tuple-one-component-alone"
#define UNIT_RULE_SOURCE "tuple-facts.md, Operating model: candidate tuples move lab -> " \
	"canary -> ring as units; never upgrade one component alone"

/* The component a changed tuple field belongs to, or NULL for fields that
 * are not a component's version (artifact names, flags, models). */
static size_t component_of(const char *field, char *out, size_t n)
{
	const char *dot = strchr(field, '.');
	size_t len = dot ? (size_t)(dot - field) : strlen(field);

	if (!strncmp(field, "firmware.", 9)) {        /* each firmware is its own */
		snprintf(out, n, "%s", field);
		return 1;
	}
	if (!dot || strcmp(dot, ".version") || len >= n)
		return 0;
	snprintf(out, n, "%.*s", (int)len, field);
	return 1;
}

int diff_tuple_unit_warning(const json_t *tuple_changes, json_t **warning)
{
	char first[128] = "", comp[128];
	const json_t *c, *only = NULL;
	size_t i, n = 0;

	*warning = NULL;
	json_array_foreach(tuple_changes, i, c) {
		const char *f = json_string_value(json_object_get(c, "field"));
		if (!f || !component_of(f, comp, sizeof(comp)))
			continue;
		/* A component missing on one side was added or dropped: not an upgrade. */
		if (!json_is_string(json_object_get(c, "a")) || !json_is_string(json_object_get(c, "b")))
			return 0;
		if (n && !strcmp(comp, first))
			continue;
		if (!n++) {
			snprintf(first, sizeof(first), "%s", comp);
			only = c;
		}
	}
	if (n != 1)
		return 0;
	*warning = json_pack("{s:s,s:s,s:s,s:s,s:s}", "rule", UNIT_RULE_ID,
			     "field", json_string_value(json_object_get(only, "field")),
			     "a", json_string_value(json_object_get(only, "a")),
			     "b", json_string_value(json_object_get(only, "b")),
			     "source", UNIT_RULE_SOURCE);
	return *warning ? 1 : -ENOMEM;
}
