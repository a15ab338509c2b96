/* Units for the v2 signed statement (manifest/dsse.c): statement_for_head,
 * envelope_statement_parse of both forms, manifest_read_signable (the
 * canonical fast path and the whole parse giving the same head) and
 * manifest_ref_load (digest, head agreement, missing file). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "manifest/dsse.h"
#include "helpers.h"

static char dir[64];
static json_t *manifest;   /* a whole manifest, two files */
static char *mpath;        /* it, canonical, in dir */
static uint8_t msha[32];

#define H64 "1111111111111111111111111111111111111111111111111111111111111111"
static const char manifest_json[] =
	"{\"schema\":\"ingot.manifest/v1\",\"ingot_version\":\"0.1.0\","
	"\"recipe\":{\"name\":\"h100\",\"version\":\"1\",\"file\":\"h100.yaml\",\"sha256\":\"" H64 "\"},"
	"\"epoch\":1,\"serial\":7,\"expires\":null,\"tuple\":null,\"artifacts\":[],"
	"\"files\":[{\"path\":\"/etc\",\"type\":\"dir\",\"mode\":\"0755\",\"uid\":0,\"gid\":0},"
	"{\"path\":\"/etc/x\",\"type\":\"file\",\"mode\":\"0644\",\"uid\":0,\"gid\":0,\"size\":1,\"sha256\":\"" H64 "\"}],"
	"\"image\":{\"file\":\"h100.sqfs\",\"sha256\":\"" H64 "\",\"size\":4096,\"compression\":\"zstd\","
	"\"level\":0,\"block_size\":131072},"
	"\"verity\":{\"file\":\"h100.verity\",\"format\":1,\"hash_algorithm\":\"sha256\","
	"\"data_block_size\":4096,\"hash_block_size\":4096,\"data_blocks\":1,\"hash_offset\":4096,"
	"\"salt\":\"33\",\"root_hash\":\"" H64 "\",\"uuid\":\"u\"},"
	"\"measurement\":{\"pcr\":15,\"event_type\":13,\"event_data\":\"ingot:v1\","
	"\"content_digest\":\"" H64 "\",\"digests\":{},\"predicted\":{}},"
	"\"sbom\":{\"file\":\"h100.spdx.json\",\"sha256\":\"" H64 "\"}}";

static json_t *head_of(const json_t *m)
{
	json_t *h = json_copy((json_t *)m);
	assert_non_null(h);
	assert_int_equal(json_object_del(h, "files"), 0);
	return h;
}

static int setup(void **state)
{
	ingot_error e = { 0 };
	(void)state;
	if (th_mkdtemp(dir, sizeof(dir), "statement") < 0)
		return -1;
	manifest = json_loads(manifest_json, JSON_REJECT_DUPLICATES, NULL);
	mpath = th_path(dir, "h100.manifest.json");
	if (!manifest || json_write_file(mpath, manifest, 0644, &e) < 0 ||
	    sha256_file(mpath, msha, NULL, &e) < 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	json_decref(manifest);
	free(mpath);
	th_rmtree(dir);
	return 0;
}

/* The statement's compact bytes, parsed back at level. */
static int roundtrip(const json_t *st, enum manifest_level level, json_t **m, struct manifest_ref *ref,
		     ingot_error *e)
{
	size_t len;
	_cleanup_free_ char *p = json_compact(st, &len);
	assert_non_null(p);
	return envelope_statement_parse("env", (const uint8_t *)p, len, level, NULL, m, ref, e);
}

static void test_build_and_parse(void **state)
{
	_cleanup_json_ json_t *h = head_of(manifest), *st = NULL, *m = NULL;
	struct manifest_ref ref;
	ingot_error e = { 0 };
	char hex[65];
	(void)state;

	assert_int_equal(statement_for_head("h", h, "h100.manifest.json", msha, &st, &e), 0);
	assert_string_equal(json_string_value(json_object_get(st, "predicateType")),
			    MANIFEST_HEAD_PREDICATE_TYPE);
	assert_int_equal(json_array_size(json_object_get(st, "subject")), 3);
	assert_null(json_object_get(json_object_get(st, "predicate"), "files"));
	assert_int_equal(roundtrip(st, MANIFEST_FULL, &m, &ref, &e), 0);
	assert_true(json_equal(m, h));
	assert_string_equal(ref.name, "h100.manifest.json");
	hex_encode(msha, 32, hex);
	assert_string_equal(ref.sha256, hex);
	assert_int_equal(ref.subject, 2);
	json_decref(m);
	m = NULL;
	/* review level reads the subjects too (the file list is found by them) */
	assert_int_equal(roundtrip(st, MANIFEST_REVIEW, &m, &ref, &e), 0);
	assert_string_equal(ref.name, "h100.manifest.json");
}

static void test_v1_still_parsed(void **state)
{
	_cleanup_json_ json_t *st = NULL, *m = NULL;
	struct manifest_ref ref;
	ingot_error e = { 0 };
	(void)state;

	assert_int_equal(statement_for_manifest("m", manifest, &st, &e), 0);
	assert_int_equal(json_array_size(json_object_get(st, "subject")), 2);
	assert_int_equal(roundtrip(st, MANIFEST_FULL, &m, &ref, &e), 0);
	assert_true(json_equal(m, manifest));
	assert_string_equal(ref.name, "");
}

static void test_head_refused(void **state)
{
	_cleanup_json_ json_t *st = NULL;
	ingot_error e = { 0 };
	(void)state;

	/* files[] in a head */
	assert_int_equal(statement_for_head("h", manifest, "h100.manifest.json", msha, &st, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "files: expected none"));
	/* a name that leaves the directory */
	_cleanup_json_ json_t *h = head_of(manifest);
	assert_int_equal(statement_for_head("h", h, "../x.json", msha, &st, &e), -EINVAL);
	assert_int_equal(statement_for_head("h", h, "..", msha, &st, &e), -EINVAL);
	assert_int_equal(statement_for_head("h", h, "", msha, &st, &e), -EINVAL);
	assert_null(st);
}

/* Statement st changed by f, parsed: the error. */
static void expect_parse_error(json_t *st, const char *needle)
{
	_cleanup_json_ json_t *m = NULL;
	ingot_error e = { 0 };
	assert_true(roundtrip(st, MANIFEST_FULL, &m, NULL, &e) < 0);
	if (!strstr(e.msg, needle))
		fail_msg("expected '%s' in '%s'", needle, e.msg);
}

static void test_subjects_checked(void **state)
{
	_cleanup_json_ json_t *h = head_of(manifest);
	ingot_error e = { 0 };
	(void)state;

	for (int i = 0; i < 5; i++) {
		_cleanup_json_ json_t *st = NULL;
		assert_int_equal(statement_for_head("h", h, "h100.manifest.json", msha, &st, &e), 0);
		json_t *subj = json_object_get(st, "subject");
		switch (i) {
		case 0:
			json_object_set_new(json_object_get(json_array_get(subj, 0), "digest"), "sha256",
					    json_string("2222222222222222222222222222222222222222222222222222222222222222"));
			expect_parse_error(st, "statement.subject[0].digest.sha256");
			break;
		case 1:
			json_array_remove(subj, 2);
			expect_parse_error(st, "expected an array of three entries");
			break;
		case 2:
			json_object_set_new(json_array_get(subj, 2), "name", json_string("a/b.json"));
			expect_parse_error(st, "statement.subject[2].name");
			break;
		case 3:
			json_object_set_new(json_object_get(json_array_get(subj, 2), "digest"), "sha256",
					    json_string("XYZ"));
			expect_parse_error(st, "statement.subject[2].digest.sha256: expected 64");
			break;
		case 4:
			json_object_set_new(json_object_get(st, "predicate"), "files", json_array());
			expect_parse_error(st, "files: expected none");
			break;
		}
	}
}

static void test_signable_paths_agree(void **state)
{
	_cleanup_json_ json_t *env = NULL, *fast = NULL, *slow = NULL, *want = head_of(manifest);
	_cleanup_free_ char *flat = th_path(dir, "flat.json"), *txt = json_dumps(manifest, JSON_COMPACT);
	ingot_error e = { 0 };
	uint8_t d1[32], d2[32], want2[32];
	(void)state;

	/* canonical: files[] cut from the bytes */
	assert_int_equal(manifest_read_signable(mpath, &env, &fast, d1, &e), 0);
	assert_null(env);
	assert_true(json_equal(fast, want));
	assert_memory_equal(d1, msha, 32);
	/* any other layout: parsed whole, the same head */
	assert_int_equal(write_file_atomic(flat, txt, strlen(txt), 0644, &e), 0);
	assert_int_equal(manifest_read_signable(flat, &env, &slow, d2, &e), 0);
	assert_true(json_equal(slow, want));
	sha256_buf(txt, strlen(txt), want2);
	assert_memory_equal(d2, want2, 32);
}

static void test_signable_refuses(void **state)
{
	_cleanup_free_ char *p = th_path(dir, "bad.manifest.json");
	_cleanup_free_ char *buf = NULL;
	_cleanup_json_ json_t *env = NULL, *head = NULL, *m = json_deep_copy(manifest);
	ingot_error e = { 0 };
	uint8_t d[32];
	(void)state;

	/* a canonical manifest whose head is bad is refused on the fast path */
	json_object_set_new(json_object_get(m, "image"), "sha256", json_string("nothex"));
	assert_int_equal(json_write_file(p, m, 0644, &e), 0);
	assert_int_equal(manifest_read_signable(p, &env, &head, d, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "image.sha256"));
	assert_null(head);
}

static void test_ref_load(void **state)
{
	_cleanup_json_ json_t *h = head_of(manifest), *st = NULL, *m = NULL, *full = NULL;
	_cleanup_free_ char *env = th_path(dir, "h100.manifest.dsse.json");
	_cleanup_free_ char *copy = th_path(dir, "copy.json");
	struct manifest_ref ref;
	ingot_error e = { 0 };
	size_t len;
	(void)state;

	assert_int_equal(statement_for_head("h", h, "h100.manifest.json", msha, &st, &e), 0);
	assert_int_equal(roundtrip(st, MANIFEST_FULL, &m, &ref, &e), 0);
	/* beside the envelope: digest only, then whole */
	assert_int_equal(manifest_ref_load(env, NULL, &ref, m, MANIFEST_FULL, NULL, &e), 0);
	if (manifest_ref_load(env, NULL, &ref, m, MANIFEST_FULL, &full, &e) < 0)
		fail_msg("%s", e.msg);
	assert_true(json_equal(full, manifest));
	/* one byte changed: the digest, naming the file and the signed field */
	_cleanup_free_ uint8_t *bytes = th_slurp(mpath, &len);
	bytes[len - 3] ^= 1;
	assert_int_equal(write_file_atomic(copy, bytes, len, 0644, &e), 0);
	assert_int_equal(manifest_ref_load(env, copy, &ref, m, MANIFEST_FULL, NULL, &e), -EILSEQ);
	assert_non_null(strstr(e.msg, "copy.json: sha256: expected "));
	assert_non_null(strstr(e.msg, "statement.subject[2].digest.sha256"));
	/* missing */
	ingot_error_clear(&e);
	assert_int_equal(manifest_ref_load(env, "/nonexistent/x.json", &ref, m, MANIFEST_FULL, NULL, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "the file list"));
	/* the bound file must hold the signed head */
	json_t *other = json_copy(manifest);
	json_object_set_new(other, "serial", json_integer(8));
	assert_int_equal(json_write_file(copy, other, 0644, &e), 0);
	json_decref(other);
	assert_int_equal(sha256_file(copy, msha, NULL, &e), 0);
	hex_encode(msha, 32, ref.sha256);
	json_decref(full);
	full = NULL;
	assert_int_equal(manifest_ref_load(env, copy, &ref, m, MANIFEST_FULL, &full, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "serial: expected the member signed"));
	assert_null(full);
	assert_int_equal(sha256_file(mpath, msha, NULL, &e), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_build_and_parse),
		cmocka_unit_test(test_v1_still_parsed),
		cmocka_unit_test(test_head_refused),
		cmocka_unit_test(test_subjects_checked),
		cmocka_unit_test(test_signable_paths_agree),
		cmocka_unit_test(test_signable_refuses),
		cmocka_unit_test(test_ref_load),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
