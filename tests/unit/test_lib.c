/* Units for lib/: errors, strbuf, hex, sha256, atomic files, YAML helpers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/escape.h"
#include "lib/err.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/strbuf.h"
#include "lib/yamlx.h"

static void test_err_prefix(void **state)
{
	ingot_error e = { 0 };
	(void)state;
	assert_int_equal(ingot_fail(&e, EIO, "read %s", "x"), -EIO);
	assert_int_equal(ingot_fail(&e, 0, "zero"), -EINVAL);
	ingot_prefix(&e, "recipe.yaml");
	assert_string_equal(e.msg, "recipe.yaml: zero");
	assert_int_equal(ingot_fail_kind(&e, -ENOENT, 7, "gone"), -ENOENT);
	assert_int_equal(e.kind, 7);
	/* An outer kind never hides the inner, more precise one. */
	assert_int_equal(ingot_set_kind(&e, -EIO, 9), -EIO);
	assert_int_equal(e.kind, 7);
	ingot_error_clear(&e);
	assert_int_equal(ingot_set_kind(&e, -EIO, 9), -EIO);
	assert_int_equal(e.kind, 9);
}

/* Names from archives and manifests: a newline must not forge a second
 * line, ESC must not reach a terminal, a long name must not push the
 * reason out of the message. */
static void test_err_escapes_names(void **state)
{
	ingot_error e = { 0 };
	char big[3000];
	(void)state;

	ingot_fail(&e, EINVAL, "entry '%s': expected a regular file", "a\nERROR: forged\x1b[2J");
	assert_string_equal(e.msg, "entry 'a\\nERROR: forged\\x1b[2J': expected a regular file");
	assert_null(strchr(e.msg, '\n'));

	/* Valid UTF-8 passes; invalid bytes and C1 controls are escaped. */
	ingot_fail(&e, EINVAL, "%s|%s|%s", "caf\xc3\xa9", "caf\xe9", "x\xc2\x9b" "1m");
	assert_string_equal(e.msg, "caf\xc3\xa9|caf\\xe9|x\\xc2\\x9b1m");

	/* Numbers, widths and precision still format as printf does. */
	ingot_fail(&e, EINVAL, "%zu %04o %-3s| %.2s %*d %llu %x %%", (size_t)7, 0755u, "a", "abc", 3, 5,
		   18446744073709551615ull, 255u);
	assert_string_equal(e.msg, "7 0755 a  | ab   5 18446744073709551615 ff %");

	/* A 3000-byte name is shortened in the middle; the reason survives. */
	memset(big, 'n', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	big[0] = 'S';
	big[sizeof(big) - 2] = 'E';
	ingot_fail(&e, EINVAL, "file '%s': expected sha256 %s, got %s", big,
		   "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		   "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210");
	assert_true(strlen(e.msg) < INGOT_ERR_MSG);
	assert_true(strncmp(e.msg, "file 'S", 7) == 0);
	assert_non_null(strstr(e.msg, "nnn...nnn"));
	assert_non_null(strstr(e.msg, "nnE': expected sha256 0123456789abcdef0123456789abcdef"
				      "0123456789abcdef0123456789abcdef, got fedcba"));
	assert_non_null(strstr(e.msg, "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"));

	/* A prefix keeps the old (already escaped) message; escaping is idempotent. */
	ingot_fail(&e, EINVAL, "bad %s", "x\ty");
	ingot_prefix(&e, "%s", "f\rg");
	assert_string_equal(e.msg, "f\\rg: bad x\\ty");
	ingot_prefix(&e, "%s", big);
	assert_true(strlen(e.msg) < INGOT_ERR_MSG);
	assert_non_null(strstr(e.msg, "E: f\\rg: bad x\\ty"));
}

/* Escape s, then shorten it to max bytes, as error messages do. */
static void add_shortened(struct strbuf *sb, const char *s, size_t max)
{
	strbuf_add_escaped(sb, s, strlen(s));
	strbuf_shorten_span(sb, 0, sb->len, max);
}

static void test_escape_shorten(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	(void)state;

	/* Never cut inside an escape or a UTF-8 sequence. */
	add_shortened(&sb, "\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\xc3\xa9\xc3\xa9\xc3\xa9", 20);
	assert_true(sb.len <= 20);
	assert_non_null(strstr(sb.buf, "..."));
	for (size_t i = 0; i < sb.len; i++)
		if (sb.buf[i] == '\\')
			assert_true(sb.buf[i + 1] == 'x' && i + 3 < sb.len);
	assert_true(((unsigned char)sb.buf[sb.len - 1] & 0xc0) == 0x80 ||
		    (unsigned char)sb.buf[sb.len - 1] < 0x80);
	strbuf_release(&sb);
	add_shortened(&sb, "short", 20);
	assert_string_equal(sb.buf, "short");
	strbuf_release(&sb);
}

static void test_strbuf(void **state)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	(void)state;
	strbuf_init(&sb, 0);
	assert_string_equal(sb.buf, "");
	for (int i = 0; i < 1000; i++)
		strbuf_addf(&sb, "%d,", i);
	assert_int_equal(sb.len, strlen(sb.buf));
	assert_memory_equal(sb.buf, "0,1,2,", 6);
	strbuf_setlen(&sb, 2);
	strbuf_addch(&sb, 'x');
	assert_string_equal(sb.buf, "0,x");
}

static void test_hex_sha256(void **state)
{
	uint8_t d[32], back[32];
	char hex[65];
	(void)state;
	sha256_buf("abc", 3, d);
	hex_encode(d, 32, hex);
	/* FIPS 180-2 test vector */
	assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	assert_true(is_sha256_hex(hex));
	assert_int_equal(hex_decode(hex, back, 32), 0);
	assert_memory_equal(d, back, 32);
	assert_int_equal(hex_decode("zz", back, 1), -EINVAL);
	assert_false(is_sha256_hex("BA7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
	assert_false(is_sha256_hex("abc"));
}

static void test_atomic_abort_leaves_nothing(void **state)
{
	char dir[] = "/tmp/ingot-lib-XXXXXX";
	ingot_error e = { 0 };
	(void)state;
	assert_non_null(mkdtemp(dir));
	_cleanup_free_ char *path = path_join(dir, "out.bin");
	{
		_cleanup_atomic_ struct atomic_file af = { .fd = -1 };
		assert_int_equal(atomic_open(&af, path, 0640, &e), 0);
		assert_int_equal(atomic_write(&af, "half", 4, &e), 0);
		/* scope ends without commit: temp file must vanish */
	}
	DIR *dh = opendir(dir);
	struct dirent *de;
	int n = 0;
	while ((de = readdir(dh)))
		n += de->d_name[0] != '.' || strlen(de->d_name) > 2;
	closedir(dh);
	assert_int_equal(n, 0);

	mode_t old = umask(077);
	assert_int_equal(write_file_atomic(path, "whole", 5, 0644, &e), 0);
	umask(old);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644); /* umask-independent */
	_cleanup_free_ char *buf = NULL;
	size_t len;
	assert_int_equal(read_file(path, 100, &buf, &len, &e), 0);
	assert_string_equal(buf, "whole");
	free(buf);
	buf = NULL;
	assert_int_equal(read_file(path, 3, &buf, &len, &e), -EFBIG);
	unlink(path);

	/* A FIFO (like a device) in the output's place is refused, not
	 * replaced by a regular file. */
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(write_file_atomic(path, "x", 1, 0644, &e), -EEXIST);
	assert_non_null(strstr(e.msg, "is not a regular file"));
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	unlink(path);
	rmdir(dir);
}

/* read_file: regular files only, refused without blocking; pseudo-files
 * (procfs says size 0, sysfs 4096) read whole; never past the bound. */
static void test_read_file_kinds(void **state)
{
	char dir[] = "/tmp/ingot-rf.XXXXXX", fifo[64], big[64];
	_cleanup_free_ char *buf = NULL;
	ingot_error e = { 0 };
	struct stat st;
	size_t len = 0;
	int fd;
	(void)state;

	assert_non_null(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	/* no writer: a blocking open would never return */
	assert_int_equal(read_file(fifo, 100, &buf, &len, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "fifo: expected a regular file, got a FIFO"));
	assert_int_equal(sha256_file(fifo, (uint8_t[32]){ 0 }, NULL, &e), -EINVAL);
	assert_int_equal(read_file("/dev/zero", 100, &buf, &len, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "/dev/zero: expected a regular file, got a character device"));
	assert_int_equal(read_file(dir, 100, &buf, &len, &e), -EISDIR);
	/* O_NOFOLLOW: a symlink is refused by name */
	snprintf(big, sizeof(big), "%s/link", dir);
	assert_int_equal(symlink("/etc/hostname", big), 0);
	assert_int_equal(open_regular(big, O_NOFOLLOW, NULL, &e), -ELOOP);
	assert_non_null(strstr(e.msg, "link: expected a regular file, got a symbolic link"));
	unlink(big);

	/* procfs: size 0, content read to EOF; over a bound: -EFBIG */
	assert_int_equal(stat("/proc/self/status", &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(read_file("/proc/self/status", 1 << 20, &buf, &len, &e), 0);
	assert_true(len > 16 && !strncmp(buf, "Name:", 5));
	free(buf);
	buf = NULL;
	assert_int_equal(read_file("/proc/self/status", 16, &buf, &len, &e), -EFBIG);
	assert_null(buf);
	/* sysfs: size 4096 whatever the content */
	if (stat("/sys/kernel/mm/transparent_hugepage/enabled", &st) == 0) {
		assert_int_equal(read_file("/sys/kernel/mm/transparent_hugepage/enabled", 1 << 20, &buf, &len, &e), 0);
		assert_non_null(strchr(buf, '['));
		free(buf);
		buf = NULL;
	}

	/* a file past the bound: at most max + 1 bytes read (the fd's offset) */
	snprintf(big, sizeof(big), "%s/big", dir);
	assert_int_equal(write_file_atomic(big, "0123456789abcdef", 16, 0644, &e), 0);
	fd = open_regular(big, 0, &st, &e);
	assert_true(fd >= 0);
	st.st_size = 0;   /* as procfs would say */
	assert_int_equal(read_fd(fd, big, &st, 5, &buf, &len, &e), -EFBIG);
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 6);
	close(fd);
	unlink(big);
	unlink(fifo);
	rmdir(dir);
}

static void test_yaml_errors(void **state)
{
	static const char *const keys[] = { "name", "count", "on", NULL };
	_cleanup_ydoc_ struct ydoc d = { 0 };
	ingot_error e = { 0 };
	const char *s;
	uint64_t u;
	bool b;
	(void)state;

	const char *doc = "name: demo\ncount: 12\non: true\n";
	assert_int_equal(ydoc_load_buf(&d, "r.yaml", doc, strlen(doc), &e), 0);
	yaml_node_t *root = ydoc_root(&d);
	assert_int_equal(ydoc_check_keys(&d, root, "recipe", keys, &e), 0);
	assert_int_equal(ydoc_str(&d, ydoc_get(&d, root, "name"), "name", &s, &e), 0);
	assert_string_equal(s, "demo");
	assert_int_equal(ydoc_uint(&d, ydoc_get(&d, root, "count"), "count", 0, 10, &u, &e), -EINVAL);
	assert_string_equal(e.msg, "r.yaml:2:8: count: expected an integer in [0, 10], got '12'");
	assert_int_equal(ydoc_bool(&d, ydoc_get(&d, root, "on"), "on", &b, &e), 0);
	assert_true(b);
	ydoc_free(&d);

	const char *bad = "name: demo\nnmae: x\n";
	assert_int_equal(ydoc_load_buf(&d, "r.yaml", bad, strlen(bad), &e), 0);
	assert_int_equal(ydoc_check_keys(&d, ydoc_root(&d), "recipe", keys, &e), -EINVAL);
	assert_string_equal(e.msg, "r.yaml:2:1: recipe: unknown key 'nmae'");
	ydoc_free(&d);

	const char *dup = "name: a\nname: b\n";
	assert_int_equal(ydoc_load_buf(&d, "r.yaml", dup, strlen(dup), &e), 0);
	assert_int_equal(ydoc_check_keys(&d, ydoc_root(&d), "recipe", keys, &e), -EINVAL);
	assert_string_equal(e.msg, "r.yaml:2:1: recipe: duplicate key 'name'");
	ydoc_free(&d);

	const char *syn = "name: [a\n";
	assert_int_equal(ydoc_load_buf(&d, "r.yaml", syn, strlen(syn), &e), -EINVAL);
	assert_non_null(strstr(e.msg, "r.yaml:2:1: YAML syntax error"));
}

static void test_json_canonical(void **state)
{
	_cleanup_json_ json_t *j = json_pack("{s:i,s:s}", "b", 1, "a", "x");
	_cleanup_free_ char *c = json_compact(j, NULL);
	_cleanup_free_ char *p = json_canonical(j, NULL);
	ingot_error e = { 0 };
	json_t *out = NULL;
	(void)state;
	assert_string_equal(c, "{\"a\":\"x\",\"b\":1}");
	assert_string_equal(p, "{\n  \"a\": \"x\",\n  \"b\": 1\n}\n");
	assert_int_equal(json_read_buf("m.json", "{\"a\":1,\"a\":2}", 13, &out, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "m.json:1:"));
}

/* json_dump_spliced gives json_dumps' bytes: arrays at several depths,
 * in objects and in arrays, empty, long enough to cross the writer's
 * buffer, under every kind of flags. */
struct from_array {
	json_t *a;
	size_t i;
};

static int next_of(void *ctx, json_t **el, ingot_error *e)
{
	struct from_array *f = ctx;
	(void)e;
	*el = json_incref(json_array_get(f->a, f->i++));
	return 0;
}

static int fail_out(void *ctx, const char *buf, size_t len, ingot_error *e)
{
	(void)ctx;
	(void)buf;
	(void)len;
	return ingot_fail(e, -ENOSPC, "disk full");
}

static void test_json_spliced(void **state)
{
	static const size_t flags[] = { JSON_CANONICAL_FLAGS, JSON_COMPACT_FLAGS, JSON_INDENT(4),
					0, JSON_INDENT(3) | JSON_SORT_KEYS | JSON_ENSURE_ASCII };
	_cleanup_json_ json_t *big = json_array(), *rels = json_pack("[{s:[i,i],s:{s:s}},s,[]]", "x", 1, 2,
						     "y", "k", "v\n\"t\"", "s");
	_cleanup_json_ json_t *empty = json_array(), *nums = json_pack("[i,i,i]", 1, 2, 3);
	_cleanup_json_ json_t *full = NULL, *skel = NULL;
	(void)state;

	for (int i = 0; i < 3000; i++)
		json_array_append_new(big, json_pack("{s:s,s:i,s:{s:[s]}}", "path", "/usr/lib/x\u00e9",
						     "n", i, "o", "deep", "\t"));
	full = json_pack("{s:O,s:{s:{s:O},s:s},s:[O,i],s:O,s:i}", "files", big, "a", "b", "rels", rels,
			 "c", "d", "arr", nums, 7, "none", empty, "z", 1);
	skel = json_pack("{s:o,s:{s:{s:o},s:s},s:[o,i],s:o,s:i}", "files", json_splice_mark(0), "a", "b",
			 "rels", json_splice_mark(1), "c", "d", "arr", json_splice_mark(2), 7, "none",
			 json_splice_mark(3), "z", 1);
	assert_non_null(full);
	assert_non_null(skel);
	for (size_t k = 0; k < ARRAY_SIZE(flags); k++) {
		struct from_array f[4] = { { big, 0 }, { rels, 0 }, { nums, 0 }, { empty, 0 } };
		struct json_splice sp[4] = { { next_of, &f[0] }, { next_of, &f[1] }, { next_of, &f[2] },
					     { next_of, &f[3] } };
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		struct json_out out = { json_out_strbuf, &sb };
		_cleanup_free_ char *want = json_dumps(full, flags[k]);
		ingot_error e = { 0 };
		size_t len = 0;

		assert_int_equal(json_dump_spliced(skel, flags[k], sp, 4, &out, &len, &e), 0);
		assert_int_equal(len, strlen(want));
		assert_int_equal(sb.len, strlen(want));
		assert_memory_equal(sb.buf, want, sb.len);
	}
	{
		struct from_array f = { nums, 0 };
		struct json_splice sp = { next_of, &f };
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		struct json_out out = { json_out_strbuf, &sb }, bad = { fail_out, NULL };
		_cleanup_json_ json_t *twice = json_pack("[o,s]", json_splice_mark(0), "\001ingot-splice-0");
		_cleanup_json_ json_t *one = json_pack("[o]", json_splice_mark(0));
		ingot_error e = { 0 };

		/* A document string dumping as a mark is refused, not spliced. */
		assert_int_equal(json_dump_spliced(twice, JSON_COMPACT_FLAGS, &sp, 1, &out, NULL, &e), -EINVAL);
		/* A mark for every array, an array for every mark. */
		assert_int_equal(json_dump_spliced(one, JSON_COMPACT_FLAGS, &sp, 2, &out, NULL, &e), -EINVAL);
		assert_int_equal(json_dump_spliced(empty, JSON_COMPACT_FLAGS, &sp, 1, &out, NULL, &e), -EINVAL);
		f.i = 0;
		assert_int_equal(json_dump_spliced(one, JSON_COMPACT_FLAGS, &sp, 1, &bad, NULL, &e), -ENOSPC);
		assert_string_equal(e.msg, "disk full");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_err_prefix),
		cmocka_unit_test(test_err_escapes_names),
		cmocka_unit_test(test_escape_shorten),
		cmocka_unit_test(test_strbuf),
		cmocka_unit_test(test_hex_sha256),
		cmocka_unit_test(test_atomic_abort_leaves_nothing),
		cmocka_unit_test(test_read_file_kinds),
		cmocka_unit_test(test_yaml_errors),
		cmocka_unit_test(test_json_canonical),
		cmocka_unit_test(test_json_spliced),
	};
	return cmocka_run_group_tests_name("lib", tests, NULL, NULL);
}
