/* What changed between two manifests: the review before a candidate
 * tuple moves lab -> canary -> ring.
 *
 * The result is a JSON document (stable field names, see docs/audit.md):
 *   {"identical": bool,
 *    "tuple":     [{"field":"driver.version","a":..,"b":..}],   absent side omitted
 *    "artifacts": {"added":[entry],"removed":[entry],"changed":[{"name","changes":[..]}]},
 *    "files":     {"added":[entry],"removed":[entry],"changed":[{"path","changes":[..]}]},
 *    "other":     [{"field":"image.sha256","a":..,"b":..}],
 *    "summary":   {"tuple":N,"artifacts_added":N,...}}
 * Objects are compared member by member (dotted paths), arrays and
 * scalars as a whole; artifacts are matched by name, files by path. */
#ifndef INGOT_AUDIT_DIFF_H
#define INGOT_AUDIT_DIFF_H

#include <stdio.h>
#include <jansson.h>
#include "lib/err.h"

/* a and b are manifest objects (see manifest/mdoc.h to load them), named
 * a_name and b_name in messages.  A duplicated artifact name or file path
 * is bad input (-EINVAL). */
int manifest_diff(const json_t *a, const json_t *b, const char *a_name, const char *b_name,
		  json_t **out, ingot_error *e);

/* Append {"field","a","b"} for every member that differs between two
 * JSON values (objects recursively, dotted paths under prefix; "" for
 * none).  NULL stands for "absent". */
void json_diff_fields(json_t *list, const char *prefix, const json_t *a, const json_t *b);

/* Human-readable review of a diff document; a_name/b_name label the
 * sides. */
/* audit/diff-unit.c: *warning ({"rule","field","a","b","source"}) when the
 * tuple changes exactly one component's version; returns 1 then, else 0. */
int diff_tuple_unit_warning(const json_t *tuple_changes, json_t **warning);

void manifest_diff_print(const json_t *diff, const char *a_name, const char *b_name, FILE *out);

#endif
