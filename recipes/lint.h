/* ingot lint: a recipe's tuple against the version-chain rules. */
#ifndef INGOT_LINT_H
#define INGOT_LINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <jansson.h>
#include "lib/err.h"

struct recipe;
struct tuple;

enum lint_severity { LINT_ERROR, LINT_WARNING };

struct lint_finding {
	char *rule;                 /* rule id */
	enum lint_severity severity;
	char *message;              /* placeholders filled from the tuple */
	char *source;               /* where the fact comes from */
	char *date;                 /* when the source was checked */
	char **fields; size_t n_fields;  /* tuple fields the rule reads */
	char *where;                /* "recipe.yaml:LINE:COL" of the first declared field, or NULL */
	char *rule_file;            /* "recipes/rules/cuda.yaml:LINE:COL" of the rule */
};

struct lint_report {
	struct lint_finding *v;
	size_t n;
	size_t rules;               /* rules evaluated */
	char *date;                 /* date the rules were evaluated at */
	char *subject;              /* recipe file or tuple name */
	bool has_tuple;
};

/* date: YYYY-MM-DD, or NULL for today (UTC).  A recipe without a tuple
 * gets an empty report.  Fails (-errno, e filled) only when the rules
 * cannot be loaded or the date is malformed; findings are not failures. */
int lint_recipe(const struct recipe *r, const char *rules_dir, const char *date,
		struct lint_report **out, ingot_error *e);
/* Same for a bare tuple (e.g. a node's probed tuple or a manifest's). */
int lint_tuple(const struct tuple *t, const char *rules_dir, const char *date,
	       struct lint_report **out, ingot_error *e);
/* Only the `tuple:` section of a recipe file: what `ingot lint` reads,
 * so a recipe whose artifacts are not generated yet can be linted. */
int lint_recipe_file(const char *path, const char *rules_dir, const char *date,
		     struct lint_report **out, ingot_error *e);

/* The tuple of a built image's manifest (<name>.manifest.json), so a
 * pool can be re-checked against today's rules (support windows end). */
int lint_manifest_file(const char *path, const char *rules_dir, const char *date,
		       struct lint_report **out, ingot_error *e);

size_t lint_report_errors(const struct lint_report *r);
size_t lint_report_warnings(const struct lint_report *r);
/* {"subject","date","rules","errors","warnings","findings":[{"rule","severity",
 *  "fields","message","source","source_date","where","rule_file"}]} */
json_t *lint_report_to_json(const struct lint_report *r);
/* Text (one line per finding, then a summary) or canonical JSON. */
int lint_report_print(const struct lint_report *r, FILE *f, bool json);
void lint_report_free(struct lint_report *r);

/* $INGOT_RULES; else <dir of /proc/self/exe>/../recipes/rules or
 * ../../recipes/rules when it exists (build trees); else
 * /usr/local/share/ingot/rules.  Returns buf. */
const char *lint_default_rules_dir(char *buf, size_t n);

#endif
