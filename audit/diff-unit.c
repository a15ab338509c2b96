/* "Never upgrade one component alone": a candidate tuple is tested and
 * moves through the rings as a unit, so a diff whose tuple changes the
 * version of exactly one component (NCCL alone, the driver alone) is
 * warned about.  A rule over two tuples, which the version-chain rules
 * language (one tuple) cannot state; its id and source: audit/diff.h. */
#include "audit/diff.h"

#include <stdio.h>
#include <string.h>

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

bool diff_tuple_unit_warning(const struct diff_changes *tuple_changes, struct diff_warning *w)
{
	char first[128] = "", comp[128];
	const struct diff_change *only = NULL;
	size_t n = 0;

	for (size_t i = 0; i < tuple_changes->n; i++) {
		const struct diff_change *c = &tuple_changes->v[i];
		if (!component_of(c->field, comp, sizeof(comp)))
			continue;
		/* A component missing on one side was added or dropped: not an upgrade. */
		if (!json_is_string(c->a) || !json_is_string(c->b))
			return false;
		if (n && !strcmp(comp, first))
			continue;
		if (!n++) {
			snprintf(first, sizeof(first), "%s", comp);
			only = c;
		}
	}
	if (n != 1)
		return false;
	*w = (struct diff_warning){ only->field, json_string_value(only->a), json_string_value(only->b) };
	return true;
}
