/* Apply the rules to a tuple and report findings. */
#include "recipes/lint.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "recipes/recipe.h"
#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/xalloc.h"
#include "lib/yamlx.h"
#include "recipes/rules.h"
#include "recipes/tuple.h"

/* Built-in check (not data: it needs the recipe's artifact list). */
#define RULE_ARTIFACT "tuple-artifact-unknown"

static void finding_clear(struct lint_finding *f)
{
	free(f->rule);
	free(f->message);
	free(f->source);
	free(f->date);
	for (size_t i = 0; i < f->n_fields; i++)
		free(f->fields[i]);
	free(f->fields);
	free(f->where);
	free(f->rule_file);
}

void lint_report_free(struct lint_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		finding_clear(&r->v[i]);
	free(r->v);
	free(r->date);
	free(r->subject);
	free(r);
}

size_t lint_report_errors(const struct lint_report *r)
{
	size_t n = 0;
	for (size_t i = 0; r && i < r->n; i++)
		n += r->v[i].severity == LINT_ERROR;
	return n;
}

size_t lint_report_warnings(const struct lint_report *r)
{
	size_t n = 0;
	for (size_t i = 0; r && i < r->n; i++)
		n += r->v[i].severity == LINT_WARNING;
	return n;
}

static struct lint_finding *report_add(struct lint_report *rep)
{
	struct lint_finding *v = xrealloc(rep->v, (rep->n + 1) * sizeof(*v));
	rep->v = v;
	memset(&v[rep->n], 0, sizeof(*v));
	return &v[rep->n++];
}

/* "file:line:col" of the first field of the list the recipe declared. */
static char *where_of(const struct tuple *t, char *const *fields, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct tuple_value *v = tuple_get(t, fields[i]);
		if (v && v->line)
			return xasprintf("%s:%zu:%zu", tuple_file(t), v->line, v->column);
	}
	return NULL;
}

static void add_rule_finding(struct lint_report *rep, const struct rule *ru, const struct tuple *t)
{
	struct lint_finding *f = report_add(rep);
	f->severity = ru->severity == RULE_ERROR ? LINT_ERROR : LINT_WARNING;
	f->rule = xstrdup(ru->id);
	f->message = rule_format_message(ru, t, rep->date);
	f->source = xstrdup(ru->source);
	f->date = xstrdup(ru->date);
	f->rule_file = xasprintf("%s:%zu:%zu", ru->file, ru->line, ru->column);
	f->fields = xcalloc(ru->n_fields + 1, sizeof(char *));
	for (size_t i = 0; i < ru->n_fields; i++)
		f->fields[f->n_fields++] = xstrdup(ru->fields[i]);
	f->where = where_of(t, f->fields, f->n_fields);
}

static void add_artifact_findings(struct lint_report *rep, const struct tuple *t,
				 char *const *names, size_t n_names)
{
	for (size_t i = 0; i < tuple_size(t); i++) {
		const struct tuple_value *v = tuple_at(t, i);
		size_t len = strlen(v->path);
		bool found = false;
		struct lint_finding *f;

		if (len < 9 || strcmp(v->path + len - 9, ".artifact"))
			continue;
		for (size_t k = 0; k < n_names; k++)
			found |= !strcmp(names[k], v->str);
		if (found)
			continue;
		f = report_add(rep);
		f->severity = LINT_ERROR;
		f->rule = xstrdup(RULE_ARTIFACT);
		f->message = xasprintf("tuple.%s names artifact '%s', but the recipe has no artifact of that name; fix the name or add the artifact",
				       v->path, v->str);
		f->source = xstrdup("ingot: a tuple field's artifact must be one of the recipe's artifacts");
		f->date = xstrdup("2026-10-01");
		f->rule_file = xstrdup("(built in)");
		f->fields = xcalloc(1, sizeof(char *));
		f->fields[0] = xstrdup(v->path);
		f->n_fields = 1;
		f->where = where_of(t, f->fields, 1);
	}
}

static int today(char buf[11])
{
	time_t now = time(NULL);
	struct tm tm;
	if (!gmtime_r(&now, &tm) || strftime(buf, 11, "%Y-%m-%d", &tm) != 10)
		return -EINVAL;
	return 0;
}

/* The shared core: names = the recipe's artifact names, or NULL to skip
 * that check (a bare tuple has no recipe). */
static int lint_run(const struct tuple *t, const char *subject, char *const *names, size_t n_names,
		    bool check_names, const char *rules_dir, const char *date,
		    struct lint_report **out, ingot_error *e)
{
	struct lint_report *rep;
	struct ruleset *rs = NULL;
	char dbuf[11], dirbuf[PATH_MAX];
	int r;

	*out = NULL;
	if (!date) {
		if (today(dbuf) < 0)
			return ingot_fail(e, -EINVAL, "lint: cannot determine today's date");
		date = dbuf;
	}
	if (!rules_date_valid(date))
		return ingot_fail(e, -EINVAL, "lint: --date: expected YYYY-MM-DD, got '%s'", date);
	if (!rules_dir)
		rules_dir = lint_default_rules_dir(dirbuf, sizeof(dirbuf));
	/* Load the rules even without a tuple: a broken rule set must not
	 * pass unnoticed because one recipe happens to have no tuple. */
	if ((r = rules_load_dir(rules_dir, &rs, e)) < 0)
		return r;
	rep = xcalloc(1, sizeof(*rep));
	rep->date = xstrdup(date);
	rep->subject = xstrdup(subject);
	rep->has_tuple = t != NULL;
	if (t) {
		for (size_t i = 0; i < rs->n; i++) {
			rep->rules++;
			if (cond_eval(rs->v[i].cond, t, date))
				add_rule_finding(rep, &rs->v[i], t);
		}
		if (check_names)
			add_artifact_findings(rep, t, names, n_names);
	}
	ruleset_free(rs);
	*out = rep;
	return 0;
}

int lint_tuple(const struct tuple *t, const char *rules_dir, const char *date,
	       struct lint_report **out, ingot_error *e)
{
	return lint_run(t, tuple_file(t), NULL, 0, false, rules_dir, date, out, e);
}

int lint_recipe(const struct recipe *r, const char *rules_dir, const char *date,
		struct lint_report **out, ingot_error *e)
{
	_cleanup_free_ char **names = xcalloc(r->n_artifacts + 1, sizeof(char *));
	for (size_t i = 0; i < r->n_artifacts; i++)
		names[i] = r->artifacts[i].name;
	return lint_run(r->tuple, r->file ? r->file : "recipe", names, r->n_artifacts, true,
			rules_dir, date, out, e);
}

int lint_recipe_file(const char *path, const char *rules_dir, const char *date,
		     struct lint_report **out, ingot_error *e)
{
	_cleanup_ydoc_ struct ydoc d = { 0 };
	_cleanup_free_ char **names = NULL;
	struct tuple *t = NULL;
	yaml_node_t *root, *tn, *arts, *it;
	size_t n = 0;
	int r;

	*out = NULL;
	if ((r = ydoc_load(&d, path, e)) < 0)
		return r;
	root = ydoc_root(&d);
	if ((r = ydoc_expect_map(&d, root, "recipe", e)) < 0)
		return r;
	/* Artifact names, so the tuple's `artifact:` references can be checked. */
	arts = ydoc_get(&d, root, "artifacts");
	if (arts && arts->type == YAML_SEQUENCE_NODE) {
		names = xcalloc((size_t)(arts->data.sequence.items.top - arts->data.sequence.items.start) + 1,
				sizeof(char *));
		ydoc_seq_foreach(&d, arts, it) {
			yaml_node_t *nm = ydoc_get(&d, it, "name");
			if (nm && nm->type == YAML_SCALAR_NODE)
				names[n++] = (char *)nm->data.scalar.value;
		}
	}
	tn = ydoc_get(&d, root, "tuple");
	if (tn && (r = tuple_parse(&d, tn, &t, e)) < 0)
		return r;
	r = lint_run(t, path, names, n, true, rules_dir, date, out, e);
	tuple_free(t);
	return r;
}

int lint_manifest_file(const char *path, const char *rules_dir, const char *date,
		       struct lint_report **out, ingot_error *e)
{
	_cleanup_json_ json_t *m = NULL;
	struct tuple *t = NULL;
	json_t *tj;
	int r;

	*out = NULL;
	if ((r = json_read_file(path, &m, e)) < 0)
		return r;
	tj = json_object_get(m, "tuple");
	if (!json_is_object(m) || !tj)
		return ingot_fail(e, -EINVAL, "%s: expected a manifest with a \"tuple\" member", path);
	if (!json_is_null(tj) && (r = tuple_from_json(tj, path, &t, e)) < 0)
		return r;
	r = lint_run(t, path, NULL, 0, false, rules_dir, date, out, e);
	tuple_free(t);
	return r;
}

json_t *lint_report_to_json(const struct lint_report *r)
{
	json_t *fs = json_array();
	json_t *root = json_pack("{s:s, s:s, s:I, s:I, s:I, s:b, s:o}", "subject", r->subject,
				 "date", r->date, "rules", (json_int_t)r->rules,
				 "errors", (json_int_t)lint_report_errors(r),
				 "warnings", (json_int_t)lint_report_warnings(r),
				 "tuple", r->has_tuple, "findings", fs);
	if (!root)
		return NULL;
	for (size_t i = 0; i < r->n; i++) {
		const struct lint_finding *f = &r->v[i];
		json_t *fields = json_array();
		json_t *o = json_pack("{s:s, s:s, s:o, s:s, s:s, s:s, s:s}", "rule", f->rule,
				      "severity", f->severity == LINT_ERROR ? "error" : "warning",
				      "fields", fields, "message", f->message, "source", f->source,
				      "source_date", f->date, "rule_file", f->rule_file);
		if (!o || json_array_append_new(fs, o) < 0)
			goto fail;
		for (size_t k = 0; k < f->n_fields; k++)
			if (json_array_append_new(fields, json_string(f->fields[k])) < 0)
				goto fail;
		if (json_object_set_new(o, "where", f->where ? json_string(f->where) : json_null()) < 0)
			goto fail;
	}
	return root;
fail:
	json_decref(root);
	return NULL;
}

int lint_report_print(const struct lint_report *r, FILE *f, bool json)
{
	if (json) {
		_cleanup_json_ json_t *j = lint_report_to_json(r);
		_cleanup_free_ char *s = j ? json_canonical(j, NULL) : NULL;
		if (!s)
			return -ENOMEM;
		return fputs(s, f) < 0 ? -EIO : 0;
	}
	for (size_t i = 0; i < r->n; i++) {
		const struct lint_finding *fi = &r->v[i];
		fprintf(f, "%s: %s [%s]", fi->where ? fi->where : r->subject,
			fi->severity == LINT_ERROR ? "error" : "warning", fi->rule);
		for (size_t k = 0; k < fi->n_fields; k++)
			fprintf(f, "%s%s", k ? ", " : " (", fi->fields[k]);
		fprintf(f, "%s: %s\n    source: %s (checked %s)\n", fi->n_fields ? ")" : "",
			fi->message, fi->source, fi->date);
	}
	if (!r->has_tuple)
		fprintf(f, "%s: no tuple: section, nothing to check\n", r->subject);
	fprintf(f, "lint: %zu error%s, %zu warning%s (%zu rules, date %s)\n",
		lint_report_errors(r), lint_report_errors(r) == 1 ? "" : "s",
		lint_report_warnings(r), lint_report_warnings(r) == 1 ? "" : "s", r->rules, r->date);
	return ferror(f) ? -EIO : 0;
}

static bool is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *lint_default_rules_dir(char *buf, size_t n)
{
	const char *env = getenv("INGOT_RULES");
	char exe[PATH_MAX];
	ssize_t len;

	if (env && *env) {
		snprintf(buf, n, "%s", env);
		return buf;
	}
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len > 0) {
		char *slash;
		exe[len] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			/* build/ingot -> ../recipes/rules; build/tests/x -> ../../recipes/rules */
			static const char *const rel[] = { "../recipes/rules", "../../recipes/rules" };
			for (size_t i = 0; i < ARRAY_SIZE(rel); i++) {
				char cand[PATH_MAX], real[PATH_MAX];
				if ((size_t)snprintf(cand, sizeof(cand), "%s/%s", exe, rel[i]) >= sizeof(cand) ||
				    !is_dir(cand))
					continue;
				/* messages name rule files: keep them free of "x/../" */
				snprintf(buf, n, "%s", realpath(cand, real) ? real : cand);
				return buf;
			}
		}
	}
	snprintf(buf, n, "/usr/local/share/ingot/rules");
	return buf;
}
