#include "audit/diff.h"

#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/escape.h"
#include "lib/json.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"

static void add_change(struct diff_changes *l, const char *field, const json_t *a, const json_t *b)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 8;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = (struct diff_change){ xstrdup(field), a, b };
}

void diff_changes_release(struct diff_changes *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].field);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* Whether key is one of skip (NULL-terminated; skip itself may be NULL). */
static bool skipped(const char *key, const char *const *skip)
{
	for (; skip && *skip; skip++)
		if (!strcmp(key, *skip))
			return true;
	return false;
}

/* One member name and its value on each side (NULL where absent). */
struct side_member {
	const char *key;
	const json_t *a, *b;
};

static int cmp_member(const void *x, const void *y)
{
	return strcmp(((const struct side_member *)x)->key, ((const struct side_member *)y)->key);
}

/* o's members but skip's, sorted by name, each value on side a or b. */
static size_t sorted_members(const json_t *o, bool side_b, const char *const *skip, struct side_member *v)
{
	const char *k;
	json_t *x;
	size_t n = 0;

	json_object_foreach((json_t *)o, k, x)
		if (!skipped(k, skip))
			v[n++] = side_b ? (struct side_member){ k, NULL, x }
					: (struct side_member){ k, x, NULL };
	qsort(v, n, sizeof(*v), cmp_member);
	return n;
}

/* diff_fields, leaving out the members skip names of two objects: both
 * sides' members merged by name, in name order. */
static void diff_members(struct diff_changes *list, const char *prefix, const json_t *a, const json_t *b,
			 const char *const *skip)
{
	size_t na = json_object_size(a), nb = json_object_size(b), i = 0, j = 0;
	_cleanup_free_ struct side_member *va = xcalloc(na + 1, sizeof(*va));
	_cleanup_free_ struct side_member *vb = xcalloc(nb + 1, sizeof(*vb));

	na = sorted_members(a, false, skip, va);
	nb = sorted_members(b, true, skip, vb);
	while (i < na || j < nb) {
		int c = i == na ? 1 : j == nb ? -1 : strcmp(va[i].key, vb[j].key);
		struct side_member m = c < 0 ? va[i] : vb[j];
		_cleanup_free_ char *sub = NULL;

		if (!c)
			m.a = va[i].a;
		i += c <= 0;
		j += c >= 0;
		sub = xasprintf("%s%s%s", prefix, *prefix ? "." : "", m.key);
		diff_fields(list, sub, m.a, m.b);
	}
}

void diff_fields(struct diff_changes *list, const char *prefix, const json_t *a, const json_t *b)
{
	if (a && b && json_equal((json_t *)a, (json_t *)b))
		return;
	if (!a && !b)
		return;
	if (json_is_object(a) && json_is_object(b))
		diff_members(list, prefix, a, b, NULL);
	else
		add_change(list, prefix, a, b);
}

static int cmp_item(const void *x, const void *y)
{
	return strcmp(((const struct diff_item *)x)->key, ((const struct diff_item *)y)->key);
}

static void items_release(struct diff_items *l)
{
	for (size_t i = 0; i < l->n; i++)
		diff_changes_release(&l->v[i].changes);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static void list_release(struct diff_list *l)
{
	items_release(&l->added);
	items_release(&l->removed);
	items_release(&l->changed);
}

void manifest_diff_release(struct manifest_diff *d)
{
	diff_changes_release(&d->tuple);
	diff_changes_release(&d->other);
	list_release(&d->artifacts);
	list_release(&d->files);
	memset(d, 0, sizeof(*d));
}

/* The lists a diff compares, as written (a null tuple is a value, which
 * the typed one is not). */
struct diff_side {
	const json_t *tuple, *artifacts, *files;
};

static struct diff_side diff_side(const struct manifest *m)
{
	json_t *tuple = NULL, *artifacts = NULL, *files = NULL;

	json_unpack(m->doc, "{s?o s?o s?o}", "tuple", &tuple, "artifacts", &artifacts, "files", &files);
	return (struct diff_side){ tuple, artifacts, files };
}

/* Sorted view of a manifest list, refusing duplicate keys. */
static int keyed_list(const char *name, const char *list, const char *key, const json_t *arr,
		      struct diff_items *out, ingot_error *e)
{
	size_t cnt = json_array_size(arr), i;
	_cleanup_free_ struct diff_item *v = xcalloc(cnt + 1, sizeof(*v));
	json_t *it;

	json_array_foreach(arr, i, it) {
		json_unpack(it, "{s?s}", key, &v[i].key);   /* NULL unless a string */
		v[i].obj = it;
		if (!v[i].key)
			return ingot_fail(e, -EINVAL, "%s: %s[%zu]: field '%s': expected a string",
					  name, list, i, key);
	}
	qsort(v, cnt, sizeof(*v), cmp_item);
	for (i = 1; i < cnt; i++)
		if (!strcmp(v[i - 1].key, v[i].key))
			return ingot_fail(e, -EINVAL, "%s: %s: %s \"%s\" appears twice, expected unique",
					  name, list, key, v[i].key);
	out->v = TAKE_PTR(v);
	out->n = cnt;
	return 0;
}

static void push_item(struct diff_items *l, const struct diff_item *it)
{
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = *it;
}

/* Merge two sorted lists into added, removed and changed. */
static int diff_list(const json_t *la, const json_t *lb, const char *a_name,
		     const char *b_name, const char *list, const char *key, struct diff_list *out,
		     ingot_error *e)
{
	struct diff_items va = { 0 }, vb = { 0 };
	size_t i = 0, j = 0;
	int r;

	out->key = key;
	if ((r = keyed_list(a_name, list, key, la, &va, e)) < 0 ||
	    (r = keyed_list(b_name, list, key, lb, &vb, e)) < 0)
		goto out;
	while (i < va.n || j < vb.n) {
		int c = i == va.n ? 1 : j == vb.n ? -1 : strcmp(va.v[i].key, vb.v[j].key);
		if (c < 0) {
			push_item(&out->removed, &va.v[i++]);
		} else if (c > 0) {
			push_item(&out->added, &vb.v[j++]);
		} else {
			if (!json_equal((json_t *)va.v[i].obj, (json_t *)vb.v[j].obj)) {
				struct diff_item ch = { va.v[i].key, vb.v[j].obj, { 0 } };
				diff_fields(&ch.changes, "", va.v[i].obj, vb.v[j].obj);
				push_item(&out->changed, &ch);
			}
			i++, j++;
		}
	}
out:
	free(va.v);
	free(vb.v);
	return r;
}

static size_t list_count(const struct diff_list *l)
{
	return l->added.n + l->removed.n + l->changed.n;
}

int manifest_diff(const struct manifest *a, const struct manifest *b, const char *a_name,
		  const char *b_name, struct manifest_diff *d, ingot_error *e)
{
	static const char *const lists[] = { "tuple", "artifacts", "files", NULL };
	struct diff_side sa, sb;
	int r;

	memset(d, 0, sizeof(*d));
	if (!json_is_object(a->doc) || !json_is_object(b->doc))
		return ingot_fail(e, -EINVAL, "manifest: expected two JSON objects");
	sa = diff_side(a);
	sb = diff_side(b);
	diff_fields(&d->tuple, "", sa.tuple, sb.tuple);
	/* A tuple that is null on one side and an object on the other shows
	 * as one whole-value change under the empty path; name it. */
	for (size_t i = 0; i < d->tuple.n; i++)
		if (!*d->tuple.v[i].field) {
			free(d->tuple.v[i].field);
			d->tuple.v[i].field = xstrdup("tuple");
		}
	if ((r = diff_list(sa.artifacts, sb.artifacts, a_name, b_name, "artifacts", "name",
			   &d->artifacts, e)) < 0 ||
	    (r = diff_list(sa.files, sb.files, a_name, b_name, "files", "path", &d->files, e)) < 0) {
		manifest_diff_release(d);
		return r;
	}
	/* Everything else (recipe, serial, image, verity, measurement...). */
	if (!json_equal(a->doc, b->doc))
		diff_members(&d->other, "", a->doc, b->doc, lists);
	d->identical = !d->tuple.n && !list_count(&d->artifacts) && !list_count(&d->files) && !d->other.n;
	d->warned = diff_tuple_unit_warning(&d->tuple, &d->warning);
	return 0;
}

/* ---- the JSON document ------------------------------------------------- */

static json_t *changes_json(const struct diff_changes *l)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < l->n; i++) {
		json_t *c = json_pack("{s:s}", "field", l->v[i].field);
		if (!c || (l->v[i].a && json_object_set(c, "a", (json_t *)l->v[i].a) < 0) ||
		    (l->v[i].b && json_object_set(c, "b", (json_t *)l->v[i].b) < 0) ||
		    json_array_append_new(arr, c) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

static json_t *objs_json(const struct diff_items *l)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < l->n; i++)
		if (json_array_append(arr, (json_t *)l->v[i].obj) < 0) {
			json_decref(arr);
			return NULL;
		}
	return arr;
}

static json_t *list_json(const struct diff_list *l)
{
	json_t *changed = json_array();

	for (size_t i = 0; changed && i < l->changed.n; i++)
		if (json_array_append_new(changed, json_pack("{s:s,s:o}", l->key, l->changed.v[i].key, "changes",
							     changes_json(&l->changed.v[i].changes))) < 0) {
			json_decref(changed);
			return NULL;
		}
	return json_pack("{s:o,s:o,s:o}", "added", objs_json(&l->added), "removed", objs_json(&l->removed),
			 "changed", changed);
}

json_t *manifest_diff_json(const struct manifest_diff *d)
{
	_cleanup_json_ json_t *res = json_pack("{s:b,s:o,s:o,s:o,s:o}", "identical", d->identical,
					       "tuple", changes_json(&d->tuple), "other", changes_json(&d->other),
					       "artifacts", list_json(&d->artifacts), "files", list_json(&d->files));

	if (!res)
		return NULL;
	if (d->warned && json_object_set_new(res, "warnings", json_pack("[{s:s,s:s,s:s,s:s,s:s}]",
		"rule", DIFF_UNIT_RULE_ID, "field", d->warning.field, "a", d->warning.a, "b", d->warning.b,
		"source", DIFF_UNIT_RULE_SOURCE)) < 0)
		return NULL;
	if (json_object_set_new(res, "summary", json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
		"tuple", (json_int_t)d->tuple.n,
		"artifacts_added", (json_int_t)d->artifacts.added.n,
		"artifacts_removed", (json_int_t)d->artifacts.removed.n,
		"artifacts_changed", (json_int_t)d->artifacts.changed.n,
		"files_added", (json_int_t)d->files.added.n,
		"files_removed", (json_int_t)d->files.removed.n,
		"files_changed", (json_int_t)d->files.changed.n,
		"other", (json_int_t)d->other.n)) < 0)
		return NULL;
	return TAKE_PTR(res);
}

/* ---- the text review --------------------------------------------------- */

/* sha1 and longer digests: 40+ hex digits. */
static int is_long_hex(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");
	return n >= 40 && !s[n];
}

/* A value for the text review: strings bare, digests shortened the way
 * git shortens object names, anything else as compact JSON. */
static void add_text(struct strbuf *sb, const char *s)
{
	if (is_long_hex(s))
		strbuf_addf_escaped(sb, "%.16s..", s);
	else
		strbuf_add_escaped(sb, s, strlen(s));
}

static void add_value(struct strbuf *sb, const json_t *v)
{
	if (!v) {
		strbuf_addstr(sb, "(absent)");
	} else if (json_is_string(v)) {
		add_text(sb, json_string_value(v));
	} else {
		_cleanup_free_ char *c = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS);
		strbuf_addstr(sb, c ? c : "?");
	}
}

static void add_changes(struct strbuf *sb, const struct diff_changes *changes)
{
	for (size_t i = 0; i < changes->n; i++) {
		if (i)
			strbuf_addstr(sb, "; ");
		strbuf_addf_escaped(sb, "%s ", changes->v[i].field);
		add_value(sb, changes->v[i].a);
		strbuf_addstr(sb, " -> ");
		add_value(sb, changes->v[i].b);
	}
}

static void add_file_entry(struct strbuf *sb, const json_t *f)
{
	struct manifest_entry en;

	manifest_entry_decode(f, &en);
	strbuf_addf_escaped(sb, " (%s", en.type ? en.type : "?");
	if (en.mode_text)
		strbuf_addf_escaped(sb, " %s", en.mode_text);
	if (en.sha256_hex) {
		strbuf_addstr(sb, " sha256 ");
		add_text(sb, en.sha256_hex);
	}
	if (en.target) {
		strbuf_addstr(sb, " -> ");
		add_text(sb, en.target);
	}
	strbuf_addch(sb, ')');
}

static void add_artifact_entry(struct strbuf *sb, const json_t *a)
{
	json_t *jkind = NULL, *sha = NULL;
	const char *kind;

	json_unpack((json_t *)a, "{s?o s?o}", "kind", &jkind, "sha256", &sha);
	kind = json_string_value(jkind);

	strbuf_addf_escaped(sb, " (%s", kind ? kind : "?");
	if (sha) {
		strbuf_addstr(sb, " sha256 ");
		add_value(sb, sha);
	}
	strbuf_addch(sb, ')');
}

static void print_list(struct strbuf *sb, const struct diff_list *l, const char *title,
		       void (*entry)(struct strbuf *, const json_t *))
{
	if (!list_count(l))
		return;
	strbuf_addf_escaped(sb, "%s:\n", title);
	for (size_t i = 0; i < l->removed.n; i++) {
		strbuf_addf_escaped(sb, "  - %s", l->removed.v[i].key);
		entry(sb, l->removed.v[i].obj);
		strbuf_addch(sb, '\n');
	}
	for (size_t i = 0; i < l->added.n; i++) {
		strbuf_addf_escaped(sb, "  + %s", l->added.v[i].key);
		entry(sb, l->added.v[i].obj);
		strbuf_addch(sb, '\n');
	}
	for (size_t i = 0; i < l->changed.n; i++) {
		strbuf_addf_escaped(sb, "  ~ %s: ", l->changed.v[i].key);
		add_changes(sb, &l->changed.v[i].changes);
		strbuf_addch(sb, '\n');
	}
}

static void print_fields(struct strbuf *sb, const struct diff_changes *list, const char *title)
{
	size_t n_meas = 0;

	if (!list->n)
		return;
	strbuf_addf_escaped(sb, "%s:\n", title);
	for (size_t i = 0; i < list->n; i++) {
		const struct diff_change *c = &list->v[i];
		/* The measurement follows from the image, verity root and the
		 * rest of the manifest; one line says it moved (--json has it all). */
		if (!strncmp(c->field, "measurement.", 12)) {
			n_meas++;
			continue;
		}
		strbuf_addf_escaped(sb, "  ~ %s: ", c->field);
		add_value(sb, c->a);
		strbuf_addstr(sb, " -> ");
		add_value(sb, c->b);
		strbuf_addch(sb, '\n');
	}
	if (n_meas)
		strbuf_addf_escaped(sb, "  ~ measurement: %zu field%s (event data, digests, predicted PCRs) follow the changes above\n",
			    n_meas, n_meas == 1 ? "" : "s");
}

void manifest_diff_print(const struct manifest_diff *d, const char *a_name, const char *b_name, FILE *out)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	strbuf_init(&sb, 4096);
	strbuf_addf_escaped(&sb, "--- %s\n+++ %s\n", a_name, b_name);
	if (d->identical) {
		strbuf_addstr(&sb, "identical\n");
		fputs(sb.buf, out);
		return;
	}
	print_fields(&sb, &d->tuple, "tuple");
	print_list(&sb, &d->artifacts, "artifacts", add_artifact_entry);
	print_list(&sb, &d->files, "files", add_file_entry);
	print_fields(&sb, &d->other, "other");
	if (d->warned)
		strbuf_addf(&sb, "warning: %s changes alone (%s -> %s): never upgrade one component "
			    "alone; test and promote the tuple as a unit [%s; %s]\n",
			    d->warning.field, d->warning.a, d->warning.b, DIFF_UNIT_RULE_ID, DIFF_UNIT_RULE_SOURCE);
	strbuf_addf_escaped(&sb, "summary: tuple %zu changed; artifacts %zu added, %zu removed, %zu changed; "
		    "files %zu added, %zu removed, %zu changed; other %zu changed\n",
		    d->tuple.n, d->artifacts.added.n, d->artifacts.removed.n, d->artifacts.changed.n,
		    d->files.added.n, d->files.removed.n, d->files.changed.n, d->other.n);
	fputs(sb.buf, out);
}
