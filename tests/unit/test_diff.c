/* Units for audit/diff.c and audit/mdoc.c: field paths, list matching,
 * envelopes carrying a manifest. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/diff.h"
#include "manifest/dsse.h"
#include "manifest/mdoc.h"
#include "manifest/typed.h"
#include "lib/base64.h"
#include "lib/cleanup.h"
#include "lib/json.h"

static json_t *parse(const char *s)
{
	json_error_t je;
	json_t *j = json_loads(s, 0, &je);
	if (!j)
		fail_msg("bad test JSON: %s", je.text);
	return j;
}

/* diff_fields as the JSON list the document carries. */
static void json_diff_fields(json_t *list, const char *prefix, const json_t *a, const json_t *b)
{
	struct diff_changes c = { 0 };

	diff_fields(&c, prefix, a, b);
	for (size_t i = 0; i < c.n; i++) {
		json_t *o = json_pack("{s:s}", "field", c.v[i].field);
		if (c.v[i].a)
			json_object_set(o, "a", (json_t *)c.v[i].a);
		if (c.v[i].b)
			json_object_set(o, "b", (json_t *)c.v[i].b);
		json_array_append_new(list, o);
	}
	diff_changes_release(&c);
}

/* manifest_diff of two documents as its JSON document in *out, and the
 * text review (sides "A" and "B") in *txt when txt is given. */
static int diff_docs(json_t *a, json_t *b, json_t **out, char **txt, ingot_error *e)
{
	_cleanup_manifest_ struct manifest *ma = manifest_decode("a.json", a, MANIFEST_REVIEW);
	_cleanup_manifest_ struct manifest *mb = manifest_decode("b.json", b, MANIFEST_REVIEW);
	struct manifest_diff d;
	size_t len = 0;
	int r = manifest_diff(ma, mb, "a.json", "b.json", &d, e);

	*out = NULL;
	if (r < 0)
		return r;
	*out = manifest_diff_json(&d);
	if (txt) {
		FILE *f = open_memstream(txt, &len);
		manifest_diff_print(&d, "A", "B", f);
		fclose(f);
	}
	manifest_diff_release(&d);
	return 0;
}

static const char base_manifest[] =
	"{\"schema\":\"ingot.manifest/v1\",\"recipe\":{\"name\":\"h100\"},\"serial\":1,"
	"\"tuple\":{\"driver\":{\"version\":\"580.95.05\",\"flavor\":\"open\"},\"cuda\":\"13.0\"},"
	"\"artifacts\":[{\"name\":\"drv\",\"sha256\":\"aa\"},{\"name\":\"base\",\"sha256\":\"bb\"}],"
	"\"files\":[{\"path\":\"/a\",\"type\":\"file\",\"mode\":\"0644\"},"
	"{\"path\":\"/b\",\"type\":\"dir\",\"mode\":\"0755\"}]}";

static void test_fields_nested(void **state)
{
	_cleanup_json_ json_t *a = parse("{\"x\":{\"y\":1,\"z\":[1]},\"k\":\"v\",\"gone\":true}");
	_cleanup_json_ json_t *b = parse("{\"x\":{\"y\":2,\"z\":[1]},\"k\":\"v\",\"new\":null}");
	_cleanup_json_ json_t *l = json_array();
	(void)state;

	json_diff_fields(l, "", a, b);
	assert_int_equal(json_array_size(l), 3);
	/* sorted by key: gone, new, x.y */
	json_t *c0 = json_array_get(l, 0), *c1 = json_array_get(l, 1), *c2 = json_array_get(l, 2);
	assert_string_equal(json_string_value(json_object_get(c0, "field")), "gone");
	assert_true(json_is_true(json_object_get(c0, "a")));
	assert_null(json_object_get(c0, "b"));
	assert_string_equal(json_string_value(json_object_get(c1, "field")), "new");
	assert_null(json_object_get(c1, "a"));
	assert_true(json_is_null(json_object_get(c1, "b")));
	assert_string_equal(json_string_value(json_object_get(c2, "field")), "x.y");
	assert_int_equal(json_integer_value(json_object_get(c2, "b")), 2);
}

static void test_identical(void **state)
{
	_cleanup_json_ json_t *a = parse(base_manifest), *b = parse(base_manifest), *d = NULL;
	ingot_error e = { 0 };
	(void)state;

	/* order of lists must not matter: reverse b's files */
	json_t *files = json_object_get(b, "files");
	json_t *f0 = json_incref(json_array_get(files, 0));
	json_array_remove(files, 0);
	json_array_append_new(files, f0);
	assert_int_equal(diff_docs(a, b, &d, NULL, &e), 0);
	assert_true(json_is_true(json_object_get(d, "identical")));
}

static void test_changes(void **state)
{
	_cleanup_json_ json_t *a = parse(base_manifest), *b = parse(base_manifest), *d = NULL;
	ingot_error e = { 0 };
	char *txt = NULL;
	(void)state;

	json_object_set_new(json_object_get(json_object_get(b, "tuple"), "driver"), "flavor",
			    json_string("proprietary"));
	json_object_set_new(json_array_get(json_object_get(b, "files"), 1), "mode", json_string("0700"));
	json_array_remove(json_object_get(b, "artifacts"), 1);
	json_array_append_new(json_object_get(b, "artifacts"), parse("{\"name\":\"extra\"}"));
	assert_int_equal(diff_docs(a, b, &d, &txt, &e), 0);
	assert_false(json_is_true(json_object_get(d, "identical")));

	json_t *t = json_object_get(d, "tuple");
	assert_int_equal(json_array_size(t), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(t, 0), "field")),
			    "driver.flavor");
	json_t *arts = json_object_get(d, "artifacts");
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(json_object_get(arts, "added"), 0), "name")), "extra");
	assert_string_equal(json_string_value(json_object_get(
		json_array_get(json_object_get(arts, "removed"), 0), "name")), "base");
	json_t *fc = json_object_get(json_object_get(d, "files"), "changed");
	assert_int_equal(json_array_size(fc), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(fc, 0), "path")), "/b");

	assert_non_null(strstr(txt, "  ~ driver.flavor: open -> proprietary\n"));
	assert_non_null(strstr(txt, "  ~ /b: mode 0755 -> 0700\n"));
	assert_non_null(strstr(txt, "  - base (? sha256"));
	free(txt);
}

static void test_null_tuple(void **state)
{
	_cleanup_json_ json_t *a = parse(base_manifest), *b = parse(base_manifest), *d = NULL;
	ingot_error e = { 0 };
	(void)state;

	json_object_set_new(b, "tuple", json_null());
	assert_int_equal(diff_docs(a, b, &d, NULL, &e), 0);
	json_t *t = json_object_get(d, "tuple");
	assert_int_equal(json_array_size(t), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(t, 0), "field")), "tuple");
}

static void test_duplicate_path(void **state)
{
	_cleanup_json_ json_t *a = parse(base_manifest), *b = parse(base_manifest), *d = NULL;
	ingot_error e = { 0 };
	(void)state;

	json_array_append_new(json_object_get(b, "files"), parse("{\"path\":\"/a\"}"));
	assert_int_equal(diff_docs(a, b, &d, NULL, &e), -EINVAL);
	assert_string_equal(e.msg, "b.json: files: path \"/a\" appears twice, expected unique");
	assert_null(d);
}

/* A trimmed manifest (as a reviewer writes one by hand): the review
 * level wants schema, recipe, artifacts[].name and files[].path, and
 * full types for what is there. */
static const char review_manifest[] =
	"{\"schema\":\"ingot.manifest/v1\",\"recipe\":{\"name\":\"h100\"},\"serial\":1,"
	"\"tuple\":{\"cuda\":\"13.0\"},\"artifacts\":[{\"name\":\"drv\"}],"
	"\"files\":[{\"path\":\"/a\",\"type\":\"file\",\"mode\":\"0644\"}]}";

static void test_envelope(void **state)
{
	_cleanup_json_ json_t *m = parse(review_manifest);
	_cleanup_json_ json_t *st = json_pack("{s:s,s:[],s:s,s:O}", "_type",
		"https://in-toto.io/Statement/v1", "subject", "predicateType",
		MANIFEST_PREDICATE_TYPE, "predicate", m);
	_cleanup_free_ char *body = json_compact(st, NULL);
	_cleanup_free_ char *b64 = base64_encode(body, strlen(body), NULL);
	_cleanup_json_ json_t *env = json_pack("{s:s,s:s,s:[{s:s,s:s}]}", "payloadType",
		ENVELOPE_PAYLOAD_TYPE, "payload", b64, "signatures", "keyid", "00", "sig", "AA==");
	_cleanup_mdoc_ struct mdoc d = { 0 };
	ingot_error e = { 0 };
	(void)state;

	assert_int_equal(mdoc_from_json("env.json", env, &d, &e), 0);
	assert_true(json_equal(d.manifest->doc, m));
	assert_non_null(d.envelope);
	mdoc_free(&d);

	json_object_set_new(env, "payload", json_string("not base64!"));
	assert_int_equal(mdoc_from_json("env.json", env, &d, &e), -EINVAL);
	assert_string_equal(e.msg, "env.json: payload: expected strict standard base64 or its URL-safe form");

	json_object_set_new(env, "payload", json_string(b64));
	json_object_set_new(env, "payloadType", json_string("text/plain"));
	assert_int_equal(mdoc_from_json("env.json", env, &d, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "env.json: payloadType: expected"));
}

static void test_shape(void **state)
{
	_cleanup_json_ json_t *m = parse(review_manifest);
	ingot_error e = { 0 };
	(void)state;

	assert_int_equal(manifest_check_level("m", m, MANIFEST_REVIEW, &e), 0);
	/* What review lets through, the full check still refuses. */
	assert_int_equal(manifest_check("m", m, &e), -EINVAL);
	json_array_append_new(json_object_get(m, "files"), json_integer(3));
	assert_int_equal(manifest_check_level("m", m, MANIFEST_REVIEW, &e), -EINVAL);
	assert_string_equal(e.msg, "m: files[1]: expected an object, got an integer");
	json_array_remove(json_object_get(m, "files"), 1);
	json_object_set_new(m, "tuple", json_string("x"));
	assert_int_equal(manifest_check_level("m", m, MANIFEST_REVIEW, &e), -EINVAL);
	assert_string_equal(e.msg, "m: tuple: expected an object or null, got \"x\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields_nested),
		cmocka_unit_test(test_identical),
		cmocka_unit_test(test_changes),
		cmocka_unit_test(test_null_tuple),
		cmocka_unit_test(test_duplicate_path),
		cmocka_unit_test(test_envelope),
		cmocka_unit_test(test_shape),
	};
	return cmocka_run_group_tests_name("diff", tests, NULL, NULL);
}
