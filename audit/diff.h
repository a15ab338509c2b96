/* What changed between two manifests: the review before a candidate
 * tuple moves lab -> canary -> ring.
 *
 * manifest_diff compares two typed manifests (manifest/typed.h) into a
 * struct manifest_diff; the text review and the JSON document (stable
 * field names, see docs/audit.md) are both written from it:
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

#include <stdbool.h>
#include <stdio.h>
#include <jansson.h>

#include "lib/err.h"
#include "manifest/typed.h"

/* One member that differs: its dotted path ("" for the value itself)
 * and the two values, NULL where absent (borrowed from the manifests). */
struct diff_change {
	char *field;
	const json_t *a, *b;
};
struct diff_changes {
	struct diff_change *v;
	size_t n, cap;
};

/* A list entry (an artifact by name, a file by path) as written
 * (borrowed), and for a changed one (b's side) what changed in it. */
struct diff_item {
	const char *key;
	const json_t *obj;
	struct diff_changes changes;
};
struct diff_items {
	struct diff_item *v;
	size_t n;
};
struct diff_list {
	const char *key;           /* "name" or "path" */
	struct diff_items added, removed, changed;
};

/* The tuple changes one component's version alone (audit/diff-unit.c). */
struct diff_warning {
	const char *field, *a, *b;
};

struct manifest_diff {
	struct diff_changes tuple, other;
	struct diff_list artifacts, files;
	bool identical;
	bool warned;
	struct diff_warning warning;
};

/* Compare a and b (named a_name and b_name in messages); *d borrows from
 * both, which must outlive it.  A duplicated artifact name or file path
 * is bad input (-EINVAL). */
int manifest_diff(const struct manifest *a, const struct manifest *b, const char *a_name,
		  const char *b_name, struct manifest_diff *d, ingot_error *e);
void manifest_diff_release(struct manifest_diff *d);

/* The JSON document of d (new reference; NULL: out of memory). */
json_t *manifest_diff_json(const struct manifest_diff *d);

/* Append a diff_change for every member that differs between two JSON
 * values (objects recursively, dotted paths under prefix; "" for none).
 * NULL stands for "absent". */
void diff_fields(struct diff_changes *list, const char *prefix, const json_t *a, const json_t *b);
void diff_changes_release(struct diff_changes *list);

/* audit/diff-unit.c: true and *w filled when the tuple changes exactly
 * one component's version (the rule's id and source: DIFF_UNIT_RULE_*). */
bool diff_tuple_unit_warning(const struct diff_changes *tuple_changes, struct diff_warning *w);
#define DIFF_UNIT_RULE_ID "tuple-one-component-alone"
#define DIFF_UNIT_RULE_SOURCE "tuple-facts.md, Operating model: candidate tuples move lab -> " \
	"canary -> ring as units; never upgrade one component alone"

/* Human-readable review of d; a_name/b_name label the sides. */
void manifest_diff_print(const struct manifest_diff *d, const char *a_name, const char *b_name, FILE *out);

#endif
