/* The version-chain rules on what the node runs: the manifest's tuple
 * with every probed field put in place of the declared one, linted like
 * a recipe.  A node that drifted from its tuple may also have left the
 * tested chain (e.g. CUDA now newer than the driver supports); this says
 * which rule, in the rules' own words. */
#include "verify/checks.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/version.h"
#include "recipes/lint.h"
#include "recipes/tuple.h"
#include "recipes/tuple-fields.h"

/* The tuple with probed values in place (new reference).  A declared
 * field whose node fact was unreadable keeps its declared value and is
 * listed in unread (*first_unread: the first, for the summary): the
 * rules on it were not made for this node. */
static json_t *probed_tuple(const json_t *tuple, const struct node_probe *p, json_t *changed,
			    json_t *unread, const struct probe_fact **first_unread)
{
	json_t *t = json_deep_copy(tuple);
	for (size_t i = 0; t && i < tuple_fields_n; i++) {
		const struct tuple_field *o = &tuple_fields[i];
		if (o->rules == RULES_NONE)
			continue;
		/* The tuple's JSON spells groups as the YAML does ("fabric-manager"). */
		const char *dot = strchr(o->path, '.');
		const char *key = dot ? dot + 1 : NULL;
		char group[64];
		snprintf(group, sizeof(group), "%.*s",
			 dot ? (int)(dot - o->path) : (int)strlen(o->path), o->path);
		const struct probe_fact *f = probe_find(p, o->probe);
		const char *v = f ? f->value : NULL;
		char buf[128];
		/* Only fields the manifest's vendor world has (parent): a stray
		 * probe value must not invent a component. */
		json_t *parent = key ? json_object_get(t, group) : t;
		const char *member = key ? key : group;
		const json_t *declared = json_object_get(parent, member);
		if (f && f->unreadable && declared) {
			json_array_append_new(unread, json_pack("{s:s, s:s}", "field", o->probe,
								"source", f->source));
			if (!*first_unread)
				*first_unread = f;
		}
		if (o->rules != RULES_PROBED || !v || strchr(v, ','))
			continue;   /* absent or ambiguous: keep the declared value */
		if (o->how == MATCH_VERSION || o->how == MATCH_PREFIX) {
			if (!version_upstream(v, buf, sizeof(buf)))
				continue;
			v = buf;
		}
		if (!parent)
			continue;
		const char *old = json_string_value(declared);
		if (old && !strcmp(old, v))
			continue;
		/* Record before replacing: set_new frees the old value. */
		json_array_append_new(changed, json_pack("{s:s, s:o, s:s}", "field", o->probe,
			"manifest", old ? json_string(old) : json_null(), "node", v));
		json_object_set_new(parent, member, json_string(v));
		/* The branch follows the driver ("R580"); let the tuple derive it
		 * again rather than contradict the probed version. */
		if (!strcmp(group, "driver") && !strcmp(member, "version"))
			json_object_del(parent, "branch");
	}
	return t;
}

void check_rules(const struct verify_opts *o, const struct manifest *m, const struct node_probe *p,
		 struct verify_report *r)
{
	const json_t *tuple = m->tuple;
	struct tuple *t = NULL;
	struct lint_report *rep = NULL;
	char dirbuf[PATH_MAX];
	ingot_error e = { 0 };

	if (!json_is_object(tuple)) {
		report_set(r, CHECK_RULES, ST_SKIP, "manifest has no tuple");
		return;
	}
	json_t *changed = json_array(), *unread = json_array();
	const struct probe_fact *u = NULL;
	json_t *probed = probed_tuple(tuple, p, changed, unread, &u);
	const char *dir = o->rules_dir ? o->rules_dir : lint_default_rules_dir(dirbuf, sizeof(dirbuf));
	if (!probed || tuple_from_json(probed, "probed tuple", &t, &e) < 0) {
		report_set(r, CHECK_RULES, ST_ERROR, "%s", e.msg[0] ? e.msg : "out of memory");
		goto out;
	}
	if (lint_tuple(t, dir, o->date, &rep, &e) < 0) {
		report_set(r, CHECK_RULES, ST_ERROR, "%s", e.msg);
		goto out;
	}
	size_t errors = lint_report_errors(rep), warnings = lint_report_warnings(rep);
	const struct lint_finding *first = NULL;
	for (size_t i = 0; i < rep->n; i++) {
		const struct lint_finding *f = &rep->v[i];
		if (!first || (f->severity == LINT_ERROR && first->severity != LINT_ERROR))
			first = f;
		report_evidence(r, CHECK_RULES, "%s %s: %s (source: %s)",
				f->severity == LINT_ERROR ? "error" : "warning", f->rule, f->message,
				f->source ? f->source : "?");
	}
	r->checks[CHECK_RULES].details = json_pack("{s:o, s:O, s:O, s:s}", "findings",
		lint_report_to_json(rep), "probed_fields", changed, "unreadable_fields", unread,
		"rules_dir", dir);
	if (errors)
		report_set(r, CHECK_RULES, ST_FAIL, "%s: %s", first->rule, first->message);
	else if (u)
		/* Rules that held for a declared value the node could not show
		 * were not made for this node. */
		report_set(r, CHECK_RULES, ST_ERROR, "not made: rules ran on the declared %s, "
			   "unreadable on the node (%s)", u->key, u->source);
	else if (warnings)
		report_set(r, CHECK_RULES, ST_WARN, "%s: %s", first->rule, first->message);
	else
		report_set(r, CHECK_RULES, ST_PASS, "%zu rules hold for the probed tuple", rep->rules);
out:
	lint_report_free(rep);
	tuple_free(t);
	json_decref(probed);
	json_decref(changed);
	json_decref(unread);
}
