#include "image/inspect-doc.h"

#include <string.h>

#include "manifest/mdoc.h"
#include "lib/cleanup.h"
#include "lib/xalloc.h"
#include "lib/json.h"
#include "lib/strbuf.h"

static json_t *get_path(const json_t *j, const char *a, const char *b)
{
	json_t *v = json_object_get(j, a);
	return b ? json_object_get(v, b) : v;
}

static void set_copy(json_t *dst, const char *key, json_t *v)
{
	json_object_set(dst, key, v ? v : json_null());
}

/* The summary as JSON (new reference). */
static json_t *describe(const struct mdoc *d)
{
	const json_t *m = d->manifest->doc;   /* shown as written, member by member */
	json_t *r = json_object(), *signers = json_array(), *sig;
	size_t i;

	json_object_set_new(r, "kind", json_string(d->envelope ? "envelope" : "manifest"));
	set_copy(r, "recipe", get_path(m, "recipe", "name"));
	set_copy(r, "version", get_path(m, "recipe", "version"));
	set_copy(r, "serial", get_path(m, "serial", NULL));
	set_copy(r, "expires", get_path(m, "expires", NULL));
	set_copy(r, "tuple", get_path(m, "tuple", NULL));
	set_copy(r, "image", get_path(m, "image", "file"));
	set_copy(r, "image_sha256", get_path(m, "image", "sha256"));
	set_copy(r, "image_size", get_path(m, "image", "size"));
	set_copy(r, "verity_root", get_path(m, "verity", "root_hash"));
	set_copy(r, "content_digest", get_path(m, "measurement", "content_digest"));
	set_copy(r, "pcr", get_path(m, "measurement", "pcr"));
	set_copy(r, "predicted_sha256", get_path(json_object_get(m, "measurement"), "predicted", "sha256"));
	json_object_set_new(r, "artifacts", json_integer((json_int_t)json_array_size(json_object_get(m, "artifacts"))));
	json_object_set_new(r, "files", json_integer((json_int_t)json_array_size(json_object_get(m, "files"))));
	if (d->envelope) {
		json_array_foreach(json_object_get(d->envelope, "signatures"), i, sig) {
			json_t *k = json_object_get(sig, "keyid");
			json_array_append_new(signers, json_string(json_is_string(k) ? json_string_value(k) : ""));
		}
		json_object_set_new(r, "signatures", signers);
		set_copy(r, "subject", json_object_get(json_array_get(json_object_get(d->statement, "subject"), 0), "name"));
	} else {
		json_decref(signers);
	}
	return r;
}

static void add_scalar(struct strbuf *sb, const char *label, const json_t *v)
{
	strbuf_addf(sb, "%-16s ", label);
	if (!v || json_is_null(v)) {
		strbuf_addstr(sb, "-");
	} else if (json_is_string(v)) {
		strbuf_addstr(sb, json_string_value(v));
	} else {
		_cleanup_free_ char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS);
		strbuf_addstr(sb, s ? s : "?");
	}
	strbuf_addch(sb, '\n');
}

/* Tuple members as dotted "driver.version  580.95.05" lines. */
static void add_tuple(struct strbuf *sb, const char *prefix, const json_t *t)
{
	const char *k;
	json_t *v;
	size_t n = json_object_size(t), i = 0;
	_cleanup_free_ const char **keys = xcalloc(n + 1, sizeof(*keys));

	json_object_foreach((json_t *)t, k, v)
		keys[i++] = k;
	for (i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (strcmp(keys[j], keys[i]) < 0) {
				const char *x = keys[i];
				keys[i] = keys[j];
				keys[j] = x;
			}
	for (i = 0; i < n; i++) {
		_cleanup_free_ char *sub = NULL;
		v = json_object_get(t, keys[i]);
		sub = xasprintf("%s%s%s", prefix, *prefix ? "." : "", keys[i]);
		if (json_is_object(v)) {
			add_tuple(sb, sub, v);
		} else {
			_cleanup_free_ char *label = xasprintf("  %s", sub);
			add_scalar(sb, label, v);
		}
	}
}

int inspect_document(const char *path, FILE *out, int json, ingot_error *e)
{
	_cleanup_mdoc_ struct mdoc d = { 0 };
	_cleanup_json_ json_t *r = NULL;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int rc;

	rc = mdoc_load(path, &d, e);
	if (rc < 0)
		return rc;
	r = describe(&d);
	if (json) {
		_cleanup_free_ char *s = json_canonical(r, NULL);
		if (!s)
			return ingot_fail(e, -ENOMEM, "%s: out of memory", path);
		strbuf_addstr(&sb, s);
	} else {
		static const char *const keys[] = { "kind", "recipe", "version", "serial", "expires",
			"image", "image_sha256", "image_size", "verity_root", "content_digest",
			"pcr", "predicted_sha256", "artifacts", "files" };
		for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
			add_scalar(&sb, keys[i], json_object_get(r, keys[i]));
		if (d.envelope) {
			json_t *sigs = json_object_get(r, "signatures"), *k;
			size_t i;
			add_scalar(&sb, "subject", json_object_get(r, "subject"));
			strbuf_addf(&sb, "%-16s %zu (not verified; use ingot verify-manifest)\n",
				    "signatures", json_array_size(sigs));
			json_array_foreach(sigs, i, k)
				strbuf_addf(&sb, "  keyid          %s\n", json_string_value(k));
		}
		json_t *t = json_object_get(r, "tuple");
		if (json_is_object(t)) {
			strbuf_addstr(&sb, "tuple\n");
			add_tuple(&sb, "", t);
		} else {
			add_scalar(&sb, "tuple", t);
		}
	}
	if (fputs(sb.buf, out) == EOF || fflush(out) != 0)
		return ingot_fail(e, -EIO, "%s: cannot write the description", path);
	return 0;
}
