/* Units for builder/recipe.c: a full recipe parses into the right
 * fields; each broken recipe fails with its exact positioned message. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recipes/recipe.h"
#include "lib/digest.h"
#include "lib/fileio.h"

static const char good[] =
"name: h100-pool\n"
"version: \"2026.10.1\"\n"
"epoch: 1767225600\n"
"allow-source-date-epoch: true\n"
"compression:\n"
"  algorithm: xz\n"
"  level: 6\n"
"  block-size: 262144\n"
"serial: 7\n"
"expires: 2027-04-01T00:00:00.5+02:00\n"
"artifacts:\n"
"  - name: kmod\n"
"    source: artifacts/kmod.tar.gz\n"
"    sha256: 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n"
"    kind: tar\n"
"    dest: /usr/\n"
"    strip-components: 1\n"
"    include: [\"./lib/*\", \"/etc\"]\n"
"    exclude: [\"*.a\"]\n"
"    modes:\n"
"      - glob: /usr/lib/*.so\n"
"        mode: 0755\n"
"      - glob: usr/etc/secret\n"
"        uid: 10\n"
"        gid: 20\n"
"    allow-devices: true\n"
"    replace: true\n"
"  - name: fw+blob\n"
"    source: file:///abs/fw%20x.bin\n"
"    sha256: ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100\n"
"    kind: file\n"
"    dest: /lib/firmware/fw.bin\n"
"    mode: 0o600\n"
"  - name: pkg\n"
"    source: file://pkgs/p.deb\n"
"    sha256: ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100\n"
"    kind: deb\n"
"files:\n"
"  - path: /etc/ingot/pool\n"
"    content: \"pool=a\\n\"\n"
"  - path: etc/empty\n"
"    content: \"\"\n"
"    mode: 600\n"
"    uid: 1\n"
"    gid: 2\n"
"directories:\n"
"  - path: /var/lib/ingot\n"
"    mode: 0700\n"
"symlinks:\n"
"  - path: /bin\n"
"    target: usr/bin\n";

static void test_good_recipe(void **state)
{
	struct recipe *r = NULL;
	ingot_error e = { 0 };
	char hex[65];
	(void)state;

	assert_int_equal(recipe_load_buf("good.yaml", "/src/recipes", good, strlen(good), NULL, &r, &e), 0);
	assert_string_equal(r->name, "h100-pool");
	assert_string_equal(r->version, "2026.10.1");
	assert_int_equal(r->epoch, 1767225600);
	assert_true(r->allow_source_date_epoch);
	assert_string_equal(r->compression, "xz");
	assert_int_equal(r->level, 6);
	assert_int_equal(r->block_size, 262144);
	assert_int_equal(r->serial, 7);
	assert_string_equal(r->expires, "2027-04-01T00:00:00.5+02:00");
	assert_null(r->tuple);

	assert_int_equal(r->n_artifacts, 3);
	struct artifact *a = &r->artifacts[0];
	assert_string_equal(a->name, "kmod");
	assert_string_equal(a->source, "artifacts/kmod.tar.gz");
	assert_string_equal(a->path, "/src/recipes/artifacts/kmod.tar.gz");
	hex_encode(a->sha256, 32, hex);
	assert_string_equal(hex, "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff");
	assert_int_equal(a->kind, ART_TAR);
	assert_string_equal(a->dest, "usr");   /* dest is a directory: "/usr/" */
	assert_int_equal(a->strip_components, 1);
	assert_int_equal(a->n_include, 2);
	assert_string_equal(a->include[0], "lib/*");
	assert_string_equal(a->include[1], "etc");
	assert_int_equal(a->n_exclude, 1);
	assert_int_equal(a->n_modes, 2);
	assert_string_equal(a->modes[0].glob, "usr/lib/*.so");
	assert_int_equal(a->modes[0].mode, 0755);
	assert_int_equal(a->modes[0].uid, -1);
	assert_int_equal(a->modes[1].mode, -1);
	assert_int_equal(a->modes[1].uid, 10);
	assert_int_equal(a->modes[1].gid, 20);
	assert_true(a->allow_devices);
	assert_true(a->replace);
	assert_int_equal(a->line, 12);
	assert_int_equal(a->column, 5);

	a = &r->artifacts[1];
	assert_string_equal(a->name, "fw+blob");
	assert_string_equal(a->path, "/abs/fw x.bin");
	assert_int_equal(a->kind, ART_FILE);
	assert_string_equal(a->dest, "lib/firmware/fw.bin");
	assert_int_equal(a->file_mode, 0600);
	assert_false(a->replace);

	a = &r->artifacts[2];
	assert_string_equal(a->path, "/src/recipes/pkgs/p.deb");
	assert_int_equal(a->kind, ART_DEB);
	assert_string_equal(a->dest, "");

	assert_int_equal(r->n_files, 2);
	assert_string_equal(r->files[0].path, "etc/ingot/pool");
	assert_int_equal(r->files[0].len, 7);
	assert_memory_equal(r->files[0].content, "pool=a\n", 7);
	assert_int_equal(r->files[0].mode, 0644);
	assert_int_equal(r->files[1].len, 0);
	assert_int_equal(r->files[1].mode, 0600);
	assert_int_equal(r->files[1].uid, 1);
	assert_int_equal(r->files[1].gid, 2);
	assert_int_equal(r->n_dirs, 1);
	assert_string_equal(r->dirs[0].path, "var/lib/ingot");
	assert_int_equal(r->dirs[0].mode, 0700);
	assert_int_equal(r->n_symlinks, 1);
	assert_string_equal(r->symlinks[0].path, "bin");
	assert_string_equal(r->symlinks[0].target, "usr/bin");

	/* The recipe digest is over its bytes. */
	uint8_t d[32];
	sha256_buf(good, strlen(good), d);
	assert_memory_equal(d, r->file_sha256, 32);
	recipe_free(r);
}

/* The least a recipe may hold: the three required fields and one entry. */
static const char minimal[] = "name: p\nversion: \"1\"\nepoch: 100\ndirectories:\n  - path: /d\n";

static void test_defaults(void **state)
{
	struct recipe *r = NULL;
	ingot_error e = { 0 };
	(void)state;
	assert_int_equal(recipe_load_buf("m.yaml", ".", minimal, strlen(minimal), NULL, &r, &e), 0);
	assert_string_equal(r->compression, "zstd");
	assert_int_equal(r->level, 0);
	assert_int_equal(r->block_size, 131072);
	assert_int_equal(r->serial, 0);
	assert_null(r->expires);
	assert_int_equal(r->n_artifacts + r->n_files + r->n_symlinks, 0);
	assert_int_equal(r->n_dirs, 1);
	assert_int_equal(r->dirs[0].mode, 0755);
	assert_int_equal(r->dirs[0].uid, 0);
	assert_int_equal(r->dirs[0].gid, 0);
	assert_int_equal(r->dirs[0].line, 5);
	assert_int_equal(r->dirs[0].column, 5);
	recipe_free(r);
}

/* One entry of any kind is enough for a recipe; each gets its defaults. */
static void test_one_entry_enough(void **state)
{
	static const char *const one[] = {
		"name: p\nversion: \"1\"\nepoch: 1\nfiles:\n  - path: /f\n    content: \"\"\n",
		"name: p\nversion: \"1\"\nepoch: 1\ndirectories:\n  - path: /d\n",
		"name: p\nversion: \"1\"\nepoch: 1\nsymlinks:\n  - path: /l\n    target: d\n",
		"name: p\nversion: \"1\"\nepoch: 1\nartifacts:\n  - name: a\n    kind: tar\n    source: a.tar\n"
		"    sha256: 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(one) / sizeof(one[0]); i++) {
		struct recipe *r = NULL;
		ingot_error e = { 0 };
		if (recipe_load_buf("o.yaml", ".", one[i], strlen(one[i]), NULL, &r, &e) != 0)
			fail_msg("recipe %zu: %s", i, e.msg);
		assert_int_equal(r->n_artifacts + r->n_files + r->n_dirs + r->n_symlinks, 1);
		if (r->n_files)
			assert_int_equal(r->files[0].mode, 0644);
		if (r->n_symlinks)
			assert_string_equal(r->symlinks[0].target, "d");
		recipe_free(r);
	}
}

/* SOURCE_DATE_EPOCH only counts when the recipe allows it. */
static void test_source_date_epoch(void **state)
{
	static const char allow[] = "name: p\nversion: \"1\"\nepoch: 100\nallow-source-date-epoch: true\n"
				    "symlinks:\n  - path: /l\n    target: x\n";
	struct recipe *r = NULL;
	ingot_error e = { 0 };
	(void)state;
	assert_int_equal(recipe_load_buf("m.yaml", ".", minimal, strlen(minimal), "555", &r, &e), 0);
	assert_int_equal(r->epoch, 100);
	recipe_free(r);
	assert_int_equal(recipe_load_buf("a.yaml", ".", allow, strlen(allow), "555", &r, &e), 0);
	assert_int_equal(r->epoch, 555);
	recipe_free(r);
	assert_int_equal(recipe_load_buf("a.yaml", ".", allow, strlen(allow), NULL, &r, &e), 0);
	assert_int_equal(r->epoch, 100);
	recipe_free(r);
	assert_int_equal(recipe_load_buf("a.yaml", ".", allow, strlen(allow), "12x", &r, &e), -EINVAL);
	assert_null(r);
	assert_string_equal(e.msg, "SOURCE_DATE_EPOCH: expected an integer in [0, 4294967295], got '12x'");
}

/* From a file: sources resolve against the recipe's directory, and the
 * tuple: section goes to the tuple parser (errors keep their position). */
static void test_load_file_with_tuple(void **state)
{
	char dir[] = "/tmp/ingot-recipe-XXXXXX", path[64], bad[64];
	static const char text[] =
		"name: p\nversion: \"1\"\nepoch: 1\n"
		"artifacts:\n  - name: a\n    kind: file\n    source: sub/a.bin\n"
		"    sha256: 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n"
		"    dest: /a\n"
		"tuple:\n  vendor: nvidia\n  gpu:\n    models: [H100]\n  driver:\n"
		"    version: 580.95.05\n    branch: R580\n    flavor: open\n";
	static const char text_bad[] = "name: p\nversion: \"1\"\nepoch: 1\ntuple:\n  vendor: nvidia\n  colour: red\n";
	struct recipe *r = NULL;
	ingot_error e = { 0 };
	char want[160];
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/pool.yaml", dir);
	snprintf(bad, sizeof(bad), "%s/bad.yaml", dir);
	assert_int_equal(write_file_atomic(path, text, strlen(text), 0644, &e), 0);
	assert_int_equal(write_file_atomic(bad, text_bad, strlen(text_bad), 0644, &e), 0);
	assert_int_equal(recipe_load(path, NULL, &r, &e), 0);
	assert_string_equal(r->file, path);
	assert_string_equal(r->dir, dir);
	snprintf(want, sizeof(want), "%s/sub/a.bin", dir);
	assert_string_equal(r->artifacts[0].path, want);
	assert_non_null(r->tuple);
	recipe_free(r);

	assert_int_equal(recipe_load(bad, NULL, &r, &e), -EINVAL);
	assert_null(r);
	snprintf(want, sizeof(want), "%s:6:3: tuple: unknown key 'colour'", bad);
	assert_string_equal(e.msg, want);
	unlink(path);
	unlink(bad);
	rmdir(dir);
}

static const struct bad {
	const char *what, *yaml, *msg;
} bad[] = {
	{ "missing_name",
	  "version: \"1\"\nepoch: 1\n",
	  "r.yaml:1:1: recipe: missing required field 'name'" },
	{ "bad_name",
	  "name: Pool\nversion: \"1\"\nepoch: 1\n",
	  "r.yaml:1:7: name: expected [a-z0-9][a-z0-9._-]* (at most 64 characters), got 'Pool'" },
	{ "unknown_key",
	  "name: pool\nversion: \"1\"\nepoch: 1\ncolour: red\n",
	  "r.yaml:4:1: recipe: unknown key 'colour'" },
	{ "epoch_missing",
	  "name: pool\nversion: \"1\"\n",
	  "r.yaml:1:1: recipe: missing required field 'epoch'" },
	{ "epoch_string",
	  "name: pool\nversion: \"1\"\nepoch: \"soon\"\n",
	  "r.yaml:3:8: epoch: expected an integer in [0, 4294967295], got scalar" },
	{ "epoch_big",
	  "name: pool\nversion: \"1\"\nepoch: 4294967296\n",
	  "r.yaml:3:8: epoch: expected an integer in [0, 4294967295], got '4294967296'" },
	{ "compression_alg",
	  "name: pool\nversion: \"1\"\nepoch: 1\ncompression:\n  algorithm: brotli\n",
	  "r.yaml:5:14: compression.algorithm: expected zstd, xz, gzip or lz4, got 'brotli'" },
	{ "compression_level",
	  "name: pool\nversion: \"1\"\nepoch: 1\ncompression:\n  algorithm: zstd\n  level: 23\n",
	  "r.yaml:6:10: compression.level: expected an integer in [1, 22] for zstd, got '23'" },
	{ "gzip_level",
	  "name: pool\nversion: \"1\"\nepoch: 1\ncompression:\n  algorithm: gzip\n  level: 0\n",
	  "r.yaml:6:10: compression.level: expected an integer in [1, 9] for gzip, got '0'" },
	{ "lz4_level",
	  "name: pool\nversion: \"1\"\nepoch: 1\ncompression:\n  algorithm: lz4\n  level: 3\n",
	  "r.yaml:6:10: compression.level: expected no level for lz4, got '3'" },
	{ "block_pow2",
	  "name: pool\nversion: \"1\"\nepoch: 1\ncompression:\n  block-size: 100000\n",
	  "r.yaml:5:15: compression.block-size: expected a power of two in [4096, 1048576], got 100000" },
	{ "block_small",
	  "name: pool\nversion: \"1\"\nepoch: 1\ncompression:\n  block-size: 2048\n",
	  "r.yaml:5:15: compression.block-size: expected an integer in [4096, 1048576], got '2048'" },
	{ "expires_bad",
	  "name: pool\nversion: \"1\"\nepoch: 1\nexpires: 2027-02-30T00:00:00Z\n",
	  "r.yaml:4:10: expires: expected an RFC 3339 date-time like 2027-01-31T00:00:00Z, got '2027-02-30T00:00:00Z'" },
	{ "expires_nozone",
	  "name: pool\nversion: \"1\"\nepoch: 1\nexpires: 2027-01-01T00:00:00\n",
	  "r.yaml:4:10: expires: expected an RFC 3339 date-time like 2027-01-31T00:00:00Z, got '2027-01-01T00:00:00'" },
	{ "sha_upper",
	  "name: pool\nversion: \"1\"\nepoch: 1\nartifacts:\n  - name: a\n    source: a.tar\n    sha256: 0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF\n    kind: tar\n",
	  "r.yaml:7:13: artifacts[0].sha256: expected 64 lower-case hex digits, got '0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF'" },
	{ "sha_missing",
	  "name: pool\nversion: \"1\"\nepoch: 1\nartifacts:\n  - name: a\n    source: a.tar\n    kind: tar\n",
	  "r.yaml:5:5: artifacts[0]: missing required field 'sha256'" },
	{ "kind_bad",
	  "name: pool\nversion: \"1\"\nepoch: 1\nartifacts:\n  - name: a\n    source: a.tar\n    sha256: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n    kind: zip\n",
	  "r.yaml:8:11: artifacts[0].kind: expected tar, deb or file, got 'zip'" },
	{ "dup_artifact",
	  "name: pool\nversion: \"1\"\nepoch: 1\nartifacts:\n  - name: a\n    source: a.tar\n    sha256: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n    kind: tar\n  - name: a\n    source: b.tar\n    sha256: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n    kind: tar\n",
	  "r.yaml:9:11: artifacts[1].name: expected a unique artifact name, got 'a' again (first at line 5)" },
	{ "art_unknown",
	  "name: pool\nversion: \"1\"\nepoch: 1\nartifacts:\n  - name: a\n    source: a.tar\n    sha256: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n    kind: tar\n    strip: 1\n",
	  "r.yaml:9:5: artifacts[0]: unknown key 'strip'" },
	{ "dest_dotdot",
	  "name: pool\nversion: \"1\"\nepoch: 1\nartifacts:\n  - name: a\n    source: a.tar\n    sha256: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n    kind: tar\n    dest: /opt/../etc\n",
	  "r.yaml:9:11: artifacts[0].dest: '.' or '..' component in 'opt/../etc' refused" },
	{ "strip_file",
	  "name: pool\nversion: \"1\"\nepoch: 1\nartifacts:\n  - name: a\n    source: a.tar\n    sha256: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n    kind: file\n    dest: /x\n    strip-components: 1\n",
	  "r.yaml:10:23: artifacts[0].strip-components: expected no 'strip-components' for kind file, got one" },
	{ "file_nodest",
	  "name: pool\nversion: \"1\"\nepoch: 1\nartifacts:\n  - name: a\n    source: a.tar\n    sha256: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n    kind: file\n",
	  "r.yaml:5:5: artifacts[0]: missing required field 'dest'" },
	{ "mode_big",
	  "name: pool\nversion: \"1\"\nepoch: 1\nfiles:\n  - path: /etc/x\n    content: hi\n    mode: 017777\n",
	  "r.yaml:7:11: files[0].mode: expected an octal mode <= 07777, got '017777'" },
	{ "mode_decimal9",
	  "name: pool\nversion: \"1\"\nepoch: 1\nfiles:\n  - path: /etc/x\n    content: hi\n    mode: 0649\n",
	  "r.yaml:7:11: files[0].mode: expected an octal mode <= 07777, got '0649'" },
	{ "dup_inline",
	  "name: pool\nversion: \"1\"\nepoch: 1\nfiles:\n  - path: /etc/x\n    content: hi\ndirectories:\n  - path: etc/x\n",
	  "r.yaml:8:11: directories[0].path: expected a path not declared before, got '/etc/x' again (line 5)" },
	{ "content_missing",
	  "name: pool\nversion: \"1\"\nepoch: 1\nfiles:\n  - path: /etc/x\n",
	  "r.yaml:5:5: files[0]: missing required field 'content'" },
	{ "content_empty_plain",
	  "name: pool\nversion: \"1\"\nepoch: 1\nfiles:\n  - path: /etc/x\n    content:\n",
	  "r.yaml:6:13: files[0].content: expected a string, got empty value" },
	{ "symlink_notarget",
	  "name: pool\nversion: \"1\"\nepoch: 1\nsymlinks:\n  - path: /bin\n",
	  "r.yaml:5:5: symlinks[0]: missing required field 'target'" },
	{ "http_source",
	  "name: pool\nversion: \"1\"\nepoch: 1\nartifacts:\n  - name: a\n    source: https://example.com/a.tar\n    sha256: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n    kind: tar\n",
	  "r.yaml:6:13: artifacts[0].source: expected a path or file:// URL, got scheme 'https'" },
	{ "modes_empty",
	  "name: pool\nversion: \"1\"\nepoch: 1\nartifacts:\n  - name: a\n    source: a.tar\n    sha256: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n    kind: tar\n    modes:\n      - glob: \"usr/bin/*\"\n",
	  "r.yaml:10:9: artifacts[0].modes[0]: expected at least one of mode, uid, gid, got none" },
	{ "allow_dev_str",
	  "name: pool\nversion: \"1\"\nepoch: 1\nartifacts:\n  - name: a\n    source: a.tar\n    sha256: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n    kind: tar\n    allow-devices: yes\n",
	  "r.yaml:9:20: artifacts[0].allow-devices: expected true or false, got yes" },
	{ "uid_big",
	  "name: pool\nversion: \"1\"\nepoch: 1\ndirectories:\n  - path: /d\n    uid: 4294967295\n",
	  "r.yaml:6:10: directories[0].uid: expected an integer in [0, 4294967294], got '4294967295'" },
	{ "path_root",
	  "name: pool\nversion: \"1\"\nepoch: 1\ndirectories:\n  - path: /\n",
	  "r.yaml:5:11: directories[0].path: expected a path below '/', got '/'" },
	{ "not_map",
	  "- a\n- b\n",
	  "r.yaml:1:1: recipe: expected a mapping, got sequence" },
	{ "yaml_syntax",
	  "name: [\n",
	  "r.yaml:2:1: YAML syntax error: did not find expected node content while parsing a flow node" },
	{ "artifacts_map",
	  "name: pool\nversion: \"1\"\nepoch: 1\nartifacts:\n  name: a\n",
	  "r.yaml:5:3: artifacts: expected a sequence, got mapping" },
	{ "serial_neg",
	  "name: pool\nversion: \"1\"\nepoch: 1\nserial: -1\n",
	  "r.yaml:4:9: serial: expected an integer in [0, 9223372036854775807], got '-1'" },
	{ "version_space",
	  "name: pool\nversion: \"1 0\"\nepoch: 1\n",
	  "r.yaml:2:10: version: expected [A-Za-z0-9._+~-] (1 to 64 characters), got '1 0'" },
	/* files:, directories: and symlinks: share one item parser: the keys,
	 * index and position of each kind still show in the message */
	{ "symlink_mode",
	  "name: pool\nversion: \"1\"\nepoch: 1\nsymlinks:\n  - path: /bin\n    target: usr/bin\n    mode: 0755\n",
	  "r.yaml:7:5: symlinks[0]: unknown key 'mode'" },
	{ "dir_content",
	  "name: pool\nversion: \"1\"\nepoch: 1\ndirectories:\n  - path: /a\n  - path: /b\n    content: x\n",
	  "r.yaml:7:5: directories[1]: unknown key 'content'" },
	{ "dir_gid_second",
	  "name: pool\nversion: \"1\"\nepoch: 1\ndirectories:\n  - path: /a\n  - path: /b\n    gid: x\n",
	  "r.yaml:7:10: directories[1].gid: expected an integer in [0, 4294967294], got 'x'" },
	{ "file_uid",
	  "name: pool\nversion: \"1\"\nepoch: 1\nfiles:\n  - path: /etc/x\n    content: hi\n    uid: -1\n",
	  "r.yaml:7:10: files[0].uid: expected an integer in [0, 4294967294], got '-1'" },
	{ "symlink_dup_dir",
	  "name: pool\nversion: \"1\"\nepoch: 1\ndirectories:\n  - path: /d\nsymlinks:\n  - path: d\n    target: x\n",
	  "r.yaml:7:11: symlinks[0].path: expected a path not declared before, got '/d' again (line 5)" },
	{ "symlink_path_missing",
	  "name: pool\nversion: \"1\"\nepoch: 1\nsymlinks:\n  - target: x\n",
	  "r.yaml:5:5: symlinks[0]: missing required field 'path'" },
	{ "files_not_seq",
	  "name: pool\nversion: \"1\"\nepoch: 1\nfiles: {path: /x}\n",
	  "r.yaml:4:8: files: expected a sequence, got mapping" },
	/* nothing to put in the image: refused at the document's position */
	{ "empty",
	  "name: pool\nversion: \"1\"\nepoch: 1\n",
	  "r.yaml:1:1: recipe: expected at least one artifact or files/directories/symlinks entry" },
	{ "empty_sections",
	  "name: pool\nversion: \"1\"\nepoch: 1\nartifacts: []\nfiles: []\ndirectories: []\nsymlinks: []\n",
	  "r.yaml:1:1: recipe: expected at least one artifact or files/directories/symlinks entry" },
	{ "empty_tuple_only",
	  "# a pool\n---\nname: pool\nversion: \"1\"\nepoch: 1\n"
	  "tuple:\n  vendor: nvidia\n  gpu: {models: [H100]}\n",
	  "r.yaml:3:1: recipe: expected at least one artifact or files/directories/symlinks entry" },
};

static void test_bad_recipes(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct recipe *r = NULL;
		ingot_error e = { 0 };
		int rc = recipe_load_buf("r.yaml", "/src", bad[i].yaml, strlen(bad[i].yaml), NULL, &r, &e);
		if (rc != -EINVAL || strcmp(e.msg, bad[i].msg))
			fail_msg("case %s: rc %d\n  expected: %s\n  got:      %s", bad[i].what, rc, bad[i].msg, e.msg);
		assert_null(r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_recipe),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_one_entry_enough),
		cmocka_unit_test(test_source_date_epoch),
		cmocka_unit_test(test_load_file_with_tuple),
		cmocka_unit_test(test_bad_recipes),
	};
	return cmocka_run_group_tests_name("recipe", tests, NULL, NULL);
}
