#include "audit/diff.h"

#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/escape.h"
#include "lib/json.h"
#include "lib/strbuf.h"

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

void json_diff_fields(json_t *list, const char *prefix, const json_t *a, const json_t *b)
{
	if (a && b && json_equal((json_t *)a, (json_t *)b))
		return;
	if (!a && !b)
		return;
	if (json_is_object(a) && json_is_object(b)) {
		size_t na = json_object_size(a), nb = json_object_size(b), n = 0;
		_cleanup_free_ const char **keys = calloc(na + nb + 1, sizeof(*keys));
		const char *k;
		json_t *v;

		if (!keys)
			return;
		json_object_foreach((json_t *)a, k, v)
			keys[n++] = k;
		json_object_foreach((json_t *)b, k, v)
			if (!json_object_get(a, k))
				keys[n++] = k;
		qsort(keys, n, sizeof(*keys), cmp_str);
		for (size_t i = 0; i < n; i++) {
			_cleanup_free_ char *sub = NULL;
			if (asprintf(&sub, "%s%s%s", prefix, *prefix ? "." : "", keys[i]) < 0)
				return;
			json_diff_fields(list, sub, json_object_get(a, keys[i]), json_object_get(b, keys[i]));
		}
		return;
	}
	json_t *c = json_object();
	json_object_set_new(c, "field", json_string(prefix));
	if (a)
		json_object_set(c, "a", (json_t *)a);
	if (b)
		json_object_set(c, "b", (json_t *)b);
	json_array_append_new(list, c);
}

struct keyed {
	const char *key;
	json_t *obj;
};

static int cmp_keyed(const void *x, const void *y)
{
	return strcmp(((const struct keyed *)x)->key, ((const struct keyed *)y)->key);
}

/* Sorted view of a manifest list, refusing duplicate keys. */
static int keyed_list(const char *name, const char *list, const char *key, const json_t *arr,
		      struct keyed **out, size_t *n, ingot_error *e)
{
	size_t cnt = json_array_size(arr), i;
	struct keyed *v = calloc(cnt + 1, sizeof(*v));
	json_t *it;

	if (!v)
		return ingot_fail(e, -ENOMEM, "out of memory");
	json_array_foreach(arr, i, it) {
		v[i].key = json_string_value(json_object_get(it, key));
		v[i].obj = it;
		if (!v[i].key) {
			free(v);
			return ingot_fail(e, -EINVAL, "%s: %s[%zu]: field '%s': expected a string",
					  name, list, i, key);
		}
	}
	qsort(v, cnt, sizeof(*v), cmp_keyed);
	for (i = 1; i < cnt; i++)
		if (!strcmp(v[i - 1].key, v[i].key)) {
			int r = ingot_fail(e, -EINVAL, "%s: %s: %s \"%s\" appears twice, expected unique",
					   name, list, key, v[i].key);
			free(v);
			return r;
		}
	*out = v;
	*n = cnt;
	return 0;
}

/* Merge two sorted lists into {"added","removed","changed"}. */
static int diff_list(const json_t *a, const json_t *b, const char *a_name, const char *b_name,
		     const char *list, const char *key, json_t **out, ingot_error *e)
{
	_cleanup_free_ struct keyed *va = NULL, *vb = NULL;
	size_t na = 0, nb = 0, i = 0, j = 0;
	json_t *added = json_array(), *removed = json_array(), *changed = json_array();
	json_t *res = json_pack("{s:o,s:o,s:o}", "added", added, "removed", removed, "changed", changed);
	int r;

	r = keyed_list(a_name, list, key, json_object_get(a, list), &va, &na, e);
	if (r == 0)
		r = keyed_list(b_name, list, key, json_object_get(b, list), &vb, &nb, e);
	if (r < 0) {
		json_decref(res);
		return r;
	}
	while (i < na || j < nb) {
		int c = i == na ? 1 : j == nb ? -1 : strcmp(va[i].key, vb[j].key);
		if (c < 0) {
			json_array_append(removed, va[i++].obj);
		} else if (c > 0) {
			json_array_append(added, vb[j++].obj);
		} else {
			if (!json_equal(va[i].obj, vb[j].obj)) {
				json_t *ch = json_array();
				json_diff_fields(ch, "", va[i].obj, vb[j].obj);
				json_array_append_new(changed, json_pack("{s:s,s:o}", key, va[i].key,
									 "changes", ch));
			}
			i++, j++;
		}
	}
	*out = res;
	return 0;
}

int manifest_diff(const json_t *a, const json_t *b, const char *a_name, const char *b_name,
		  json_t **out, ingot_error *e)
{
	_cleanup_json_ json_t *res = json_object();
	_cleanup_json_ json_t *rest_a = NULL, *rest_b = NULL;
	json_t *tuple = json_array(), *other = json_array(), *arts = NULL, *files = NULL;
	static const char *const lists[] = { "tuple", "artifacts", "files" };
	int r;

	if (!json_is_object(a) || !json_is_object(b))
		return ingot_fail(e, -EINVAL, "manifest: expected two JSON objects");
	json_object_set_new(res, "tuple", tuple);
	json_object_set_new(res, "other", other);

	json_diff_fields(tuple, "", json_object_get(a, "tuple"), json_object_get(b, "tuple"));
	/* A tuple that is null on one side and an object on the other shows
	 * as one whole-value change under the empty path; name it. */
	for (size_t i = 0; i < json_array_size(tuple); i++) {
		json_t *c = json_array_get(tuple, i);
		if (!strcmp(json_string_value(json_object_get(c, "field")), ""))
			json_object_set_new(c, "field", json_string("tuple"));
	}

	r = diff_list(a, b, a_name, b_name, "artifacts", "name", &arts, e);
	if (r < 0)
		return r;
	json_object_set_new(res, "artifacts", arts);
	r = diff_list(a, b, a_name, b_name, "files", "path", &files, e);
	if (r < 0)
		return r;
	json_object_set_new(res, "files", files);

	/* Everything else (recipe, serial, image, verity, measurement...). */
	rest_a = json_deep_copy(a);
	rest_b = json_deep_copy(b);
	for (size_t i = 0; i < ARRAY_SIZE(lists); i++) {
		json_object_del(rest_a, lists[i]);
		json_object_del(rest_b, lists[i]);
	}
	json_diff_fields(other, "", rest_a, rest_b);

	size_t n_art = json_array_size(json_object_get(arts, "added")) +
		       json_array_size(json_object_get(arts, "removed")) +
		       json_array_size(json_object_get(arts, "changed"));
	size_t n_files = json_array_size(json_object_get(files, "added")) +
			 json_array_size(json_object_get(files, "removed")) +
			 json_array_size(json_object_get(files, "changed"));
	int identical = !json_array_size(tuple) && !n_art && !n_files && !json_array_size(other);
	json_object_set_new(res, "identical", json_boolean(identical));
	json_t *unit = NULL;
	if (diff_tuple_unit_warning(tuple, &unit) > 0)
		json_object_set_new(res, "warnings", json_pack("[o]", unit));
	json_object_set_new(res, "summary", json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
		"tuple", (json_int_t)json_array_size(tuple),
		"artifacts_added", (json_int_t)json_array_size(json_object_get(arts, "added")),
		"artifacts_removed", (json_int_t)json_array_size(json_object_get(arts, "removed")),
		"artifacts_changed", (json_int_t)json_array_size(json_object_get(arts, "changed")),
		"files_added", (json_int_t)json_array_size(json_object_get(files, "added")),
		"files_removed", (json_int_t)json_array_size(json_object_get(files, "removed")),
		"files_changed", (json_int_t)json_array_size(json_object_get(files, "changed")),
		"other", (json_int_t)json_array_size(other)));
	*out = TAKE_PTR(res);
	return 0;
}

/* sha1 and longer digests: 40+ hex digits. */
static int is_long_hex(const char *s)
{
	size_t n = strspn(s, "0123456789abcdef");
	return n >= 40 && !s[n];
}

/* A value for the text review: strings bare, digests shortened the way
 * git shortens object names, anything else as compact JSON. */
static void add_value(struct strbuf *sb, const json_t *v)
{
	if (!v) {
		strbuf_addstr(sb, "(absent)");
	} else if (json_is_string(v)) {
		const char *s = json_string_value(v);
		if (is_long_hex(s))
			strbuf_addf_escaped(sb, "%.16s..", s);
		else
			strbuf_add_escaped(sb, s, strlen(s));
	} else {
		_cleanup_free_ char *c = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS);
		strbuf_addstr(sb, c ? c : "?");
	}
}

static void add_changes(struct strbuf *sb, const json_t *changes)
{
	size_t i;
	json_t *c;

	json_array_foreach(changes, i, c) {
		if (i)
			strbuf_addstr(sb, "; ");
		strbuf_addf_escaped(sb, "%s ", json_string_value(json_object_get(c, "field")));
		add_value(sb, json_object_get(c, "a"));
		strbuf_addstr(sb, " -> ");
		add_value(sb, json_object_get(c, "b"));
	}
}

static void add_file_entry(struct strbuf *sb, const json_t *f)
{
	const char *type = json_string_value(json_object_get(f, "type"));
	const char *mode = json_string_value(json_object_get(f, "mode"));
	json_t *sha = json_object_get(f, "sha256"), *target = json_object_get(f, "target");

	strbuf_addf_escaped(sb, " (%s", type ? type : "?");
	if (mode)
		strbuf_addf_escaped(sb, " %s", mode);
	if (sha) {
		strbuf_addstr(sb, " sha256 ");
		add_value(sb, sha);
	}
	if (target) {
		strbuf_addstr(sb, " -> ");
		add_value(sb, target);
	}
	strbuf_addch(sb, ')');
}

static void add_artifact_entry(struct strbuf *sb, const json_t *a)
{
	const char *kind = json_string_value(json_object_get(a, "kind"));
	json_t *sha = json_object_get(a, "sha256");

	strbuf_addf_escaped(sb, " (%s", kind ? kind : "?");
	if (sha) {
		strbuf_addstr(sb, " sha256 ");
		add_value(sb, sha);
	}
	strbuf_addch(sb, ')');
}

static void print_list(struct strbuf *sb, const json_t *sect, const char *title, const char *key,
		       void (*entry)(struct strbuf *, const json_t *))
{
	json_t *added = json_object_get(sect, "added"), *removed = json_object_get(sect, "removed");
	json_t *changed = json_object_get(sect, "changed"), *it;
	size_t i;

	if (!json_array_size(added) && !json_array_size(removed) && !json_array_size(changed))
		return;
	strbuf_addf_escaped(sb, "%s:\n", title);
	json_array_foreach(removed, i, it) {
		strbuf_addf_escaped(sb, "  - %s", json_string_value(json_object_get(it, key)));
		entry(sb, it);
		strbuf_addch(sb, '\n');
	}
	json_array_foreach(added, i, it) {
		strbuf_addf_escaped(sb, "  + %s", json_string_value(json_object_get(it, key)));
		entry(sb, it);
		strbuf_addch(sb, '\n');
	}
	json_array_foreach(changed, i, it) {
		strbuf_addf_escaped(sb, "  ~ %s: ", json_string_value(json_object_get(it, key)));
		add_changes(sb, json_object_get(it, "changes"));
		strbuf_addch(sb, '\n');
	}
}

static void print_fields(struct strbuf *sb, const json_t *list, const char *title)
{
	size_t i, n_meas = 0;
	json_t *c;

	if (!json_array_size(list))
		return;
	strbuf_addf_escaped(sb, "%s:\n", title);
	json_array_foreach(list, i, c) {
		const char *f = json_string_value(json_object_get(c, "field"));
		/* The measurement follows from the image, verity root and the
		 * rest of the manifest; one line says it moved (--json has it all). */
		if (!strncmp(f, "measurement.", 12)) {
			n_meas++;
			continue;
		}
		strbuf_addf_escaped(sb, "  ~ %s: ", f);
		add_value(sb, json_object_get(c, "a"));
		strbuf_addstr(sb, " -> ");
		add_value(sb, json_object_get(c, "b"));
		strbuf_addch(sb, '\n');
	}
	if (n_meas)
		strbuf_addf_escaped(sb, "  ~ measurement: %zu field%s (event data, digests, predicted PCRs) follow the changes above\n",
			    n_meas, n_meas == 1 ? "" : "s");
}

void manifest_diff_print(const json_t *diff, const char *a_name, const char *b_name, FILE *out)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	json_t *s = json_object_get(diff, "summary");

	strbuf_init(&sb, 4096);
	strbuf_addf_escaped(&sb, "--- %s\n+++ %s\n", a_name, b_name);
	if (json_is_true(json_object_get(diff, "identical"))) {
		strbuf_addstr(&sb, "identical\n");
		fputs(sb.buf, out);
		return;
	}
	print_fields(&sb, json_object_get(diff, "tuple"), "tuple");
	print_list(&sb, json_object_get(diff, "artifacts"), "artifacts", "name", add_artifact_entry);
	print_list(&sb, json_object_get(diff, "files"), "files", "path", add_file_entry);
	print_fields(&sb, json_object_get(diff, "other"), "other");
	json_t *w = json_array_get(json_object_get(diff, "warnings"), 0);
	if (w)
		strbuf_addf(&sb, "warning: %s changes alone (%s -> %s): never upgrade one component "
			    "alone; test and promote the tuple as a unit [%s; %s]\n",
			    json_string_value(json_object_get(w, "field")),
			    json_string_value(json_object_get(w, "a")),
			    json_string_value(json_object_get(w, "b")),
			    json_string_value(json_object_get(w, "rule")),
			    json_string_value(json_object_get(w, "source")));
#define N(k) json_integer_value(json_object_get(s, k))
	strbuf_addf_escaped(&sb, "summary: tuple %lld changed; artifacts %lld added, %lld removed, %lld changed; "
		    "files %lld added, %lld removed, %lld changed; other %lld changed\n",
		    N("tuple"), N("artifacts_added"), N("artifacts_removed"), N("artifacts_changed"),
		    N("files_added"), N("files_removed"), N("files_changed"), N("other"));
#undef N
	fputs(sb.buf, out);
}
