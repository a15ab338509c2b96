/* Units for builder/manifest.c: manifest_build on a small real tree
 * (determinism, contents, measurement binding) and manifest_check's
 * schema errors. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attest/predict.h"
#include "builder/image.h"
#include "builder/manifest.h"
#include "recipes/recipe.h"
#include "builder/tree.h"
#include "lib/cleanup.h"
#include "manifest/typed.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/strbuf.h"

struct fixture {
	char dir[64];
	char *art_path;
	struct artifact art;
	struct recipe r;
	struct tree t;
	struct image_opts io;
	struct image_info ii;
	struct verity_info vi;
};

static void add(struct tree *t, const char *path, enum tree_type type, uint32_t mode,
		const char *content, const char *target)
{
	struct tree_entry te = { 0 };
	ingot_error e = { 0 };
	te.path = (char *)path;
	te.type = type;
	te.mode = mode;
	te.origin = (char *)"test";
	if (content) {
		te.size = strlen(content);
		sha256_buf(content, te.size, te.sha256);
	}
	te.target = (char *)target;
	if (type == TREE_CHR) {
		te.rdev_major = 1;
		te.rdev_minor = 3;
	}
	if (tree_add(t, &te, false, &e) < 0)
		fail_msg("tree_add %s: %s", path, e.msg);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	ingot_error e = { 0 };

	snprintf(f->dir, sizeof(f->dir), "/tmp/ingot-manifest.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	f->art_path = path_join(f->dir, "base.tar");
	if (write_file_atomic(f->art_path, "0123456789", 10, 0644, &e) < 0)
		return -1;

	f->art.name = (char *)"base";
	f->art.source = (char *)"https://example.org/dl/base.tar";
	f->art.path = f->art_path;
	f->art.kind = ART_TAR;
	sha256_buf("0123456789", 10, f->art.sha256);

	f->r.file = (char *)"recipes/h100.yaml";
	f->r.name = (char *)"h100";
	f->r.version = (char *)"2026.12";
	f->r.epoch = 1767225600;
	f->r.serial = 7;
	f->r.expires = (char *)"2027-06-30T00:00:00Z";
	f->r.artifacts = &f->art;
	f->r.n_artifacts = 1;
	memset(f->r.file_sha256, 0x11, 32);

	tree_init(&f->t);
	/* Added out of order on purpose: the manifest follows tree_finalize. */
	add(&f->t, "usr/lib/libx.so.1", TREE_FILE, 0644, "elf", NULL);
	add(&f->t, "etc/hostname", TREE_FILE, 0644, "node\n", NULL);
	add(&f->t, "usr/lib/libx.so", TREE_SYMLINK, 0777, NULL, "libx.so.1");
	add(&f->t, "dev/null", TREE_CHR, 0666, NULL, NULL);
	if (tree_finalize(&f->t, &e) < 0)
		fail_msg("tree_finalize: %s", e.msg);

	f->io.compression = "zstd";
	f->io.level = 19;
	f->io.block_size = 131072;
	f->ii.size = 8192;
	f->vi.data_block_size = f->vi.hash_block_size = 4096;
	f->vi.data_blocks = 2;
	f->vi.hash_offset = 4096;
	f->vi.salt_len = 32;
	memset(f->vi.salt, 0x22, 32);
	memset(f->vi.root_hash, 0x33, 32);
	memset(f->vi.image_sha256, 0x44, 32);
	for (int i = 0; i < 16; i++)
		f->vi.uuid[i] = (uint8_t)i;
	f->vi.image_size = 8192;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	unlink(f->art_path);
	rmdir(f->dir);
	free(f->art_path);
	tree_free(&f->t);
	free(f);
	return 0;
}

static json_t *build(struct fixture *f)
{
	json_t *m = NULL;
	ingot_error e = { 0 };
	if (manifest_build(&f->r, &f->t, &f->io, &f->ii, &f->vi, &m, &e) < 0)
		fail_msg("manifest_build: %s", e.msg);
	return m;
}

static void test_contents(void **state)
{
	struct fixture *f = *state;
	_cleanup_json_ json_t *m = build(f);
	json_t *files = json_object_get(m, "files"), *x;
	char hex[65];

	assert_string_equal(json_string_value(json_object_get(m, "schema")), "ingot.manifest/v1");
	x = json_object_get(m, "recipe");
	assert_string_equal(json_string_value(json_object_get(x, "file")), "h100.yaml");
	assert_string_equal(json_string_value(json_object_get(x, "sha256")),
			    "1111111111111111111111111111111111111111111111111111111111111111");
	assert_int_equal(json_integer_value(json_object_get(m, "serial")), 7);
	assert_string_equal(json_string_value(json_object_get(m, "expires")), "2027-06-30T00:00:00Z");
	assert_true(json_is_null(json_object_get(m, "tuple")));

	x = json_array_get(json_object_get(m, "artifacts"), 0);
	assert_string_equal(json_string_value(json_object_get(x, "source")), "base.tar");
	assert_string_equal(json_string_value(json_object_get(x, "kind")), "tar");
	assert_int_equal(json_integer_value(json_object_get(x, "size")), 10);
	hex_encode(f->art.sha256, 32, hex);
	assert_string_equal(json_string_value(json_object_get(x, "sha256")), hex);

	/* dev, dev/null, etc, etc/hostname, usr, usr/lib, libx.so, libx.so.1 */
	assert_int_equal(json_array_size(files), 8);
	const char *want[] = { "/dev", "/dev/null", "/etc", "/etc/hostname", "/usr", "/usr/lib",
			       "/usr/lib/libx.so", "/usr/lib/libx.so.1" };
	for (size_t i = 0; i < 8; i++)
		assert_string_equal(json_string_value(json_object_get(json_array_get(files, i), "path")),
				    want[i]);
	x = json_array_get(files, 3);
	assert_string_equal(json_string_value(json_object_get(x, "mode")), "0644");
	assert_int_equal(json_integer_value(json_object_get(x, "size")), 5);
	uint8_t d[32];
	sha256_buf("node\n", 5, d);
	hex_encode(d, 32, hex);
	assert_string_equal(json_string_value(json_object_get(x, "sha256")), hex);
	x = json_array_get(files, 6);
	assert_string_equal(json_string_value(json_object_get(x, "type")), "symlink");
	assert_string_equal(json_string_value(json_object_get(x, "target")), "libx.so.1");
	assert_null(json_object_get(x, "sha256"));
	x = json_array_get(files, 1);
	assert_string_equal(json_string_value(json_object_get(x, "type")), "char");
	assert_int_equal(json_integer_value(json_object_get(x, "major")), 1);
	x = json_array_get(files, 0);
	assert_string_equal(json_string_value(json_object_get(x, "mode")), "0755");

	x = json_object_get(m, "image");
	assert_string_equal(json_string_value(json_object_get(x, "file")), "h100.sqfs");
	assert_int_equal(json_integer_value(json_object_get(x, "level")), 19);
	x = json_object_get(m, "verity");
	assert_string_equal(json_string_value(json_object_get(x, "uuid")),
			    "00010203-0405-0607-0809-0a0b0c0d0e0f");
	assert_string_equal(json_string_value(json_object_get(x, "file")), "h100.verity");
	assert_int_equal(json_integer_value(json_object_get(x, "hash_offset")), 4096);
}

/* The measurement binds everything else: attest's own checker agrees,
 * and changing any member changes the content digest. */
static void test_measurement(void **state)
{
	struct fixture *f = *state;
	_cleanup_json_ json_t *m = build(f);
	ingot_error e = { 0 };
	unsigned pcr = 0;

	if (attest_check_measurement(m, &pcr, &e) < 0)
		fail_msg("attest_check_measurement: %s", e.msg);
	assert_int_equal(pcr, 15);
	json_object_set_new(m, "serial", json_integer(8));
	assert_true(attest_check_measurement(m, NULL, &e) < 0);
}

static void test_deterministic(void **state)
{
	struct fixture *f = *state;
	_cleanup_json_ json_t *a = build(f), *b = build(f);
	_cleanup_free_ char *sa = json_canonical(a, NULL), *sb = json_canonical(b, NULL);
	assert_string_equal(sa, sb);

	/* and sensitive to inputs */
	f->r.serial = 8;
	_cleanup_json_ json_t *c = build(f);
	_cleanup_free_ char *sc = json_canonical(c, NULL);
	f->r.serial = 7;
	assert_string_not_equal(sa, sc);
}

static void test_roundtrip_load(void **state)
{
	struct fixture *f = *state;
	_cleanup_json_ json_t *m = build(f);
	_cleanup_manifest_ struct manifest *back = NULL;
	_cleanup_free_ char *p = path_join(f->dir, "h100.manifest.json");
	ingot_error e = { 0 };

	assert_int_equal(json_write_file(p, m, 0644, &e), 0);
	if (manifest_load(p, &back, &e) < 0)
		fail_msg("manifest_load: %s", e.msg);
	assert_true(json_equal(m, back->doc));
	unlink(p);
}

static void test_build_errors(void **state)
{
	struct fixture *f = *state;
	json_t *m = NULL;
	ingot_error e = { 0 };

	f->r.expires = (char *)"next tuesday";
	assert_int_equal(manifest_build(&f->r, &f->t, &f->io, &f->ii, &f->vi, &m, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "expires"));
	f->r.expires = NULL;

	f->art.path = (char *)"/nonexistent/base.tar";
	assert_true(manifest_build(&f->r, &f->t, &f->io, &f->ii, &f->vi, &m, &e) < 0);
	assert_non_null(strstr(e.msg, "artifact 'base'"));
	f->art.path = f->art_path;

	f->ii.size = 4096;
	assert_true(manifest_build(&f->r, &f->t, &f->io, &f->ii, &f->vi, &m, &e) < 0);
	assert_non_null(strstr(e.msg, "image size"));
	f->ii.size = 8192;

	/* no expiry is fine and recorded as null */
	m = build(f);
	assert_true(json_is_null(json_object_get(m, "expires")));
	json_decref(m);
	f->r.expires = (char *)"2027-06-30T00:00:00Z";
}

/* Each mutation of a valid manifest, and the words the error must carry. */
static void test_check_errors(void **state)
{
	struct fixture *f = *state;
	static const struct {
		const char *pointer, *json, *needle;
	} cases[] = {
		{ "schema", "\"ingot.manifest/v2\"", "schema: expected \"ingot.manifest/v1\"" },
		{ "serial", "-1", "serial: expected a non-negative integer" },
		{ "serial", "\"7\"", "serial: expected a non-negative integer, got \"7\"" },
		{ "expires", "\"2027-02-30T00:00:00Z\"", "expires: expected an RFC 3339 time" },
		{ "tuple", "[]", "tuple: expected an object or null" },
		{ "files", "{}", "files: expected an array" },
		{ "extra", "1", "unknown field 'extra'" },
		{ "recipe.sha256", "\"ABC\"", "recipe.sha256: expected 64 lower-case hex digits" },
		{ "image.size", "1.5", "image.size: expected a non-negative integer, got a number" },
		{ "verity.root_hash", "null", "verity.root_hash: expected 64 lower-case hex digits" },
		{ "measurement.pcr", "\"15\"", "measurement.pcr" },
		{ "files.0.mode", "\"755\"", "files[0].mode: expected 4 octal digits" },
		{ "files.0.path", "\"dev\"", "files[0].path: expected an absolute path" },
		{ "files.3.sha256", "DELETE", "files[3]: \"size\" and \"sha256\" are required" },
		{ "files.6.target", "DELETE", "files[6]: \"target\" is required" },
		{ "files.2.type", "\"pipe\"", "files[2].type: expected one of" },
		{ "files.2.path", "\"/zzz\"", "files[3].path: expected paths in strictly increasing" },
		{ "artifacts.0.kind", "\"zip\"", "artifacts[0].kind: expected one of tar, deb, file" },
		{ "artifacts.0.size", "DELETE", "artifacts[0].size: missing" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_json_ json_t *m = build(f);
		char key[64], *dot;
		json_t *parent = m;
		ingot_error e = { 0 };

		snprintf(key, sizeof(key), "%s", cases[i].pointer);
		char *k = key;
		while ((dot = strchr(k, '.'))) {
			*dot = '\0';
			parent = json_is_array(parent) ? json_array_get(parent, strtoul(k, NULL, 10))
						       : json_object_get(parent, k);
			k = dot + 1;
		}
		if (!strcmp(cases[i].json, "DELETE")) {
			json_object_del(parent, k);
		} else {
			json_t *v = json_loads(cases[i].json, JSON_DECODE_ANY, NULL);
			assert_non_null(v);
			json_object_set_new(parent, k, v);
		}
		assert_int_equal(manifest_check("m.json", m, &e), -EINVAL);
		if (!strstr(e.msg, cases[i].needle))
			fail_msg("case %s: expected '%s' in '%s'", cases[i].pointer, cases[i].needle, e.msg);
		assert_int_equal(strncmp(e.msg, "m.json: ", 8), 0);
	}
}

/* One set of limits: the writer's check refuses what a reader would
 * refuse (count, canonical bytes, statement bytes), and the reader
 * refuses more files than the writer could ever write. */
static void test_limits(void **state)
{
	struct fixture *f = *state;
	_cleanup_json_ json_t *m = build(f);
	_cleanup_free_ char *canon = json_canonical(m, NULL), *compact = json_compact(m, NULL);
	size_t nfiles = json_array_size(json_object_get(m, "files"));
	struct manifest_limits l = MANIFEST_LIMITS;
	ingot_error e = { 0 };

	assert_int_equal(manifest_check_size(m, &l, &e), 0);
	l.max_files = nfiles - 1;
	assert_int_equal(manifest_check_size(m, &l, &e), -EFBIG);
	assert_non_null(strstr(e.msg, "files, readers accept at most"));
	l = MANIFEST_LIMITS;
	l.file_max = strlen(canon) - 1;
	assert_int_equal(manifest_check_size(m, &l, &e), -EFBIG);
	assert_non_null(strstr(e.msg, "bytes as written, readers accept at most"));
	l.file_max = strlen(canon);
	assert_int_equal(manifest_check_size(m, &l, &e), 0);
	l.payload_max = strlen(compact);   /* the statement is bigger than the manifest */
	assert_int_equal(manifest_check_size(m, &l, &e), -EFBIG);
	assert_non_null(strstr(e.msg, "signed statement would be"));

	/* Readers stop at the writer's count before looking at an entry. */
	json_t *files = json_object_get(m, "files"), *first = json_array_get(files, 0);
	while (json_array_size(files) <= MANIFEST_MAX_FILES)
		json_array_append(files, first);
	assert_int_equal(manifest_check("m", m, &e), -EFBIG);
	assert_non_null(strstr(e.msg, "m: files: 1048577 entries, limit 1048576"));
}

/* What a build writes (head, seal, files[] spliced) is the bytes of the
 * whole manifest as a tree, and the seal's compact count is exact; an
 * entry a reader would refuse stops the seal. */
static void test_streamed_equals_tree(void **state)
{
	struct fixture *f = *state;
	_cleanup_json_ json_t *m = build(f), *head = NULL;
	_cleanup_free_ char *want = json_canonical(m, NULL), *compact = json_compact(m, NULL);
	_cleanup_strbuf_ struct strbuf got = STRBUF_INIT;
	struct manifest_files mf;
	ingot_error e = { 0 };
	size_t clen = 0, len = 0;

	assert_int_equal(manifest_build_head(&f->r, NULL, &f->io, &f->ii, &f->vi, &head, &e), 0);
	assert_int_equal(manifest_seal(head, f->r.name, &f->vi, &f->t, &clen, &e), 0);
	assert_int_equal(clen, strlen(compact));
	manifest_files_init(&mf, &f->t, false);
	assert_int_equal(json_dump_spliced(head, JSON_CANONICAL_FLAGS,
					   &(struct json_splice){ manifest_files_next, &mf }, 1,
					   &(struct json_out){ json_out_strbuf, &got }, &len, &e), 0);
	manifest_files_release(&mf);
	strbuf_addch(&got, '\n');
	assert_int_equal(len + 1, strlen(want));
	assert_string_equal(got.buf, want);

	/* The seal checks each entry as a reader would: a path over the
	 * schema's string limit (still last in order) is refused. */
	json_decref(TAKE_PTR(head));
	assert_int_equal(manifest_build_head(&f->r, NULL, &f->io, &f->ii, &f->vi, &head, &e), 0);
	{
		struct tree_entry *last = &f->t.v[f->t.n - 1];
		size_t n = strlen(last->path);
		char *longer = realloc(last->path, n + MANIFEST_MAX_STRING + 1);

		assert_non_null(longer);
		memset(longer + n, 'z', MANIFEST_MAX_STRING);
		longer[n + MANIFEST_MAX_STRING] = '\0';
		last->path = longer;
	}
	assert_true(manifest_seal(head, f->r.name, &f->vi, &f->t, &clen, &e) < 0);
	assert_non_null(strstr(e.msg, ".path: expected an absolute path"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_contents, setup, teardown),
		cmocka_unit_test_setup_teardown(test_measurement, setup, teardown),
		cmocka_unit_test_setup_teardown(test_deterministic, setup, teardown),
		cmocka_unit_test_setup_teardown(test_roundtrip_load, setup, teardown),
		cmocka_unit_test_setup_teardown(test_build_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_check_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_streamed_equals_tree, setup, teardown),
	};
	return cmocka_run_group_tests_name("manifest", tests, NULL, NULL);
}
