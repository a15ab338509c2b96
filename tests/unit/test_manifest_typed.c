/* The typed manifest (manifest/typed.h): what it decodes, and that a
 * hostile document is refused with one line naming the file and field. */
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
#include "manifest/typed.h"

#define FIXTURE "tests/fixtures/envelope-v1/demo.manifest.json"
#define HEX(c) c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c \
	       c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c c

static json_t *fixture(void)
{
	json_error_t je;
	json_t *m = json_load_file(FIXTURE, 0, &je);

	if (!m)
		fail_msg("%s: %s", FIXTURE, je.text);
	return m;
}

/* A boot object as builder/uki.c writes it (the members read). */
static void add_boot(json_t *m, bool secure_boot)
{
	json_t *b = json_pack("{s:{s:s},s:s,s:{s:{s:s}},s:{s:{s:s}}}", "uki", "authenticode_sha256", HEX("a"),
			      "linux_authenticode_sha256", HEX("b"), "pcr11", "predicted", "sha256", HEX("c"),
			      "pcr15", "predicted", "sha256", HEX("d"));
	if (secure_boot)
		json_object_set_new(b, "secure_boot", json_pack("{s:s}", "signer_cert_sha256", HEX("e")));
	json_object_set_new(m, "boot", b);
}

static void test_decode(void **state)
{
	_cleanup_json_ json_t *doc = fixture();
	_cleanup_manifest_ struct manifest *m = NULL;
	struct manifest_entry f;
	ingot_error e = { 0 };
	size_t i = 0;
	(void)state;

	json_object_set_new(doc, "expires", json_string("2030-01-01T00:00:00Z"));
	add_boot(doc, true);
	if (manifest_parse("a.manifest.json", doc, MANIFEST_FULL, &m, &e) < 0)
		fail_msg("%s", e.msg);
	assert_string_equal(m->recipe.name, "demo");
	assert_int_equal(m->recipe.sha256[31], 0x11);
	assert_int_equal(m->serial, 1);
	assert_int_equal(m->epoch, 0);
	assert_true(m->have & MF_EXPIRES);
	assert_int_equal(m->expires, 1893456000);
	assert_null(m->tuple);
	assert_int_equal(m->image.size, 4096);
	assert_int_equal(m->image.sha256[0], 0x22);
	assert_string_equal(m->image.sha256_hex, HEX("2"));
	assert_int_equal(m->verity.data_block_size, 4096);
	assert_string_equal(m->verity.hash_algorithm, "sha256");
	assert_int_equal(m->verity.salt_len, 1);
	assert_int_equal(m->verity.salt[0], 0x33);
	assert_int_equal(m->verity.root_hash[5], 0x44);
	assert_int_equal(m->measurement.pcr, 15);
	assert_int_equal(m->measurement.content_digest[0], 0x55);
	assert_false(m->have & MF_PREDICTED);   /* predicted: {} */
	assert_true(m->have & MF_SBOM);
	assert_int_equal(m->sbom.sha256[0], 0x77);
	assert_true(m->have & MF_BOOT);
	assert_int_equal(m->boot.have, MB_UKI | MB_LINUX | MB_PCR11 | MB_PCR15 | MB_SECURE_BOOT | MB_BOOT | MB_IMAGE);
	assert_int_equal(m->boot.uki[0], 0xaa);
	assert_int_equal(m->boot.linux_app[0], 0xbb);
	assert_int_equal(m->boot.pcr11[0], 0xcc);
	assert_int_equal(m->boot.pcr15[31], 0xdd);
	assert_string_equal(manifest_boot_pcr15(m), HEX("d"));
	assert_int_equal(m->boot.signer[0], 0xee);

	assert_int_equal(m->n_files, json_array_size(json_object_get(doc, "files")));
	assert_int_equal(manifest_next_entry(m, &i, &f), 1);
	assert_string_equal(f.path, "/etc");
	assert_string_equal(f.type, "dir");
	assert_int_equal(f.mode, 0755);
	assert_false(f.has_sha256);
	assert_int_equal(manifest_next_entry(m, &i, &f), 1);
	assert_string_equal(f.path, "/etc/motd");
	assert_int_equal(f.size, 3);
	assert_true(f.has_sha256);
	assert_int_equal(f.sha256[0], 0x66);
	while (manifest_next_entry(m, &i, &f))
		;
	assert_int_equal(i, m->n_files);
}

/* A boot prediction the verdict cannot use is not the schema's to refuse:
 * its bit stays clear and the verdict names it (a check not made). */
static void test_boot_partial(void **state)
{
	_cleanup_json_ json_t *doc = fixture();
	_cleanup_manifest_ struct manifest *m = NULL;
	ingot_error e = { 0 };
	(void)state;

	add_boot(doc, false);
	json_object_set_new(json_object_get(json_object_get(json_object_get(doc, "boot"), "pcr11"), "predicted"),
			    "sha256", json_string("XYZ"));
	assert_int_equal(manifest_parse("a.manifest.json", doc, MANIFEST_FULL, &m, &e), 0);
	assert_int_equal(m->boot.have, MB_UKI | MB_LINUX | MB_PCR15 | MB_BOOT | MB_IMAGE);
	assert_false(m->boot.have & MB_SECURE_BOOT);
}

struct hostile {
	const char *member, *key;   /* key NULL: the top-level member itself */
	json_t *(*value)(void);     /* NULL: removed */
	const char *msg;
};

static json_t *v_str(void) { return json_string("1"); }
static json_t *v_neg(void) { return json_integer(-1); }
static json_t *v_int(void) { return json_integer(7); }
static json_t *v_badhex(void) { return json_string(HEX("G")); }
static json_t *v_short(void) { return json_string("abcd"); }
static json_t *v_oddhex(void) { return json_string("333"); }
static json_t *v_time(void) { return json_string("yesterday"); }
static json_t *v_arr(void) { return json_array(); }

static const struct hostile hostile[] = {
	{ "schema", NULL, v_str, "a.manifest.json: schema: expected \"ingot.manifest/v1\", got \"1\"" },
	{ "recipe", NULL, v_arr, "a.manifest.json: recipe: expected an object, got an array" },
	{ "recipe", "name", NULL, "a.manifest.json: recipe.name: missing, expected a string" },
	{ "recipe", "sha256", v_short, "a.manifest.json: recipe.sha256: expected 64 lower-case hex digits, got \"abcd\"" },
	{ "serial", NULL, v_str, "a.manifest.json: serial: expected a non-negative integer, got \"1\"" },
	{ "epoch", NULL, v_neg, "a.manifest.json: epoch: expected a non-negative integer, got an integer" },
	{ "expires", NULL, v_time, "a.manifest.json: expires: expected an RFC 3339 time or null, got \"yesterday\"" },
	{ "tuple", NULL, v_int, "a.manifest.json: tuple: expected an object or null, got an integer" },
	{ "image", "sha256", v_badhex, "a.manifest.json: image.sha256: expected 64 lower-case hex digits" },
	{ "image", "size", v_str, "a.manifest.json: image.size: expected a non-negative integer, got \"1\"" },
	{ "image", NULL, NULL, "a.manifest.json: image: missing, expected an object" },
	{ "verity", "root_hash", v_short, "a.manifest.json: verity.root_hash: expected 64 lower-case hex digits" },
	{ "verity", "salt", v_oddhex, "a.manifest.json: verity.salt: expected lower-case hex digits, got \"333\"" },
	{ "verity", "hash_algorithm", v_int, "a.manifest.json: verity.hash_algorithm: expected a string, got an integer" },
	{ "verity", "data_block_size", NULL, "a.manifest.json: verity.data_block_size: missing" },
	{ "measurement", "content_digest", v_badhex, "a.manifest.json: measurement.content_digest: expected 64" },
	{ "measurement", "pcr", v_str, "a.manifest.json: measurement.pcr: expected a non-negative integer" },
	{ "sbom", "sha256", v_short, "a.manifest.json: sbom.sha256: expected 64 lower-case hex digits" },
	{ "files", NULL, v_int, "a.manifest.json: files: expected an array, got an integer" },
};

static void test_hostile(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		const struct hostile *h = &hostile[i];
		_cleanup_json_ json_t *doc = fixture();
		struct manifest *m = NULL;
		ingot_error e = { 0 };
		json_t *at = h->key ? json_object_get(doc, h->member) : doc;
		const char *k = h->key ? h->key : h->member;

		if (h->value)
			json_object_set_new(at, k, h->value());
		else
			json_object_del(at, k);
		if (manifest_parse("a.manifest.json", doc, MANIFEST_FULL, &m, &e) != -EINVAL)
			fail_msg("%s.%s: accepted", h->member, h->key ? h->key : "");
		assert_null(m);
		if (strncmp(e.msg, h->msg, strlen(h->msg)))
			fail_msg("%s.%s: got '%s', expected '%s...'", h->member, h->key ? h->key : "", e.msg, h->msg);
		assert_null(strchr(e.msg, '\n'));
	}
}

static void test_secure_boot_signer(void **state)
{
	_cleanup_json_ json_t *doc = fixture();
	struct manifest *m = NULL;
	ingot_error e = { 0 };
	(void)state;

	add_boot(doc, true);
	json_object_set_new(json_object_get(json_object_get(doc, "boot"), "secure_boot"), "signer_cert_sha256",
			    json_string("nothex"));
	assert_int_equal(manifest_parse("a.manifest.json", doc, MANIFEST_FULL, &m, &e), -EINVAL);
	assert_null(m);
	assert_string_equal(e.msg, "a.manifest.json: boot.secure_boot.signer_cert_sha256: expected 64 lower-case "
			    "hex digits, got \"nothex\"");
}

/* MANIFEST_REVIEW: a trimmed document decodes, what it lacks is absent. */
static void test_review(void **state)
{
	_cleanup_json_ json_t *doc = json_pack("{s:s,s:{s:s},s:[],s:[{s:s}]}", "schema", "ingot.manifest/v1",
					       "recipe", "name", "x", "artifacts", "files", "path", "/a");
	_cleanup_manifest_ struct manifest *m = NULL;
	struct manifest_entry f;
	ingot_error e = { 0 };
	size_t i = 0;
	(void)state;

	assert_int_equal(manifest_parse("r.json", doc, MANIFEST_REVIEW, &m, &e), 0);
	assert_int_equal(m->have, MF_RECIPE | MF_FILES);
	assert_int_equal(manifest_next_entry(m, &i, &f), 1);
	assert_string_equal(f.path, "/a");
	assert_null(f.type);
	assert_int_equal(manifest_next_entry(m, &i, &f), 0);
	manifest_free(m);
	m = NULL;
	/* The same document is refused in full, naming the first member missing. */
	assert_int_equal(manifest_parse("r.json", doc, MANIFEST_FULL, &m, &e), -EINVAL);
	assert_string_equal(e.msg, "r.json: ingot_version: missing, expected a string");
}

static void test_load(void **state)
{
	char dir[] = "/tmp/ingot-typed-XXXXXX", path[64];
	_cleanup_manifest_ struct manifest *m = NULL;
	ingot_error e = { 0 };
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/x.manifest.json", dir);
	assert_int_equal(manifest_load(FIXTURE, &m, &e), 0);
	assert_string_equal(m->name, FIXTURE);
	assert_int_equal(write_file_atomic(path, "{\"schema\": 1", 12, 0644, &e), 0);
	manifest_free(m);
	m = NULL;
	assert_true(manifest_load(path, &m, &e) < 0);
	assert_null(m);
	assert_non_null(strstr(e.msg, path));
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode),
		cmocka_unit_test(test_boot_partial),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_secure_boot_signer),
		cmocka_unit_test(test_review),
		cmocka_unit_test(test_load),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
