/* Units for builder/store.c: pinned imports (a mismatch never enters the
 * store), streaming writers, store_verify, default root. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builder/store.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "helpers.h"

struct fx {
	char dir[64];
	char root[96];
	char src[96];
	struct store s;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f || th_store_setup(f->dir, sizeof(f->dir), "store", &f->s) < 0)
		return -1;
	snprintf(f->root, sizeof(f->root), "%s/store", f->dir);
	snprintf(f->src, sizeof(f->src), "%s/artifact.bin", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	int r = th_store_teardown(f->dir, &f->s);
	free(f);
	return r;
}

static size_t count_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	size_t n = 0;
	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static void write_src(struct fx *f, const char *content)
{
	ingot_error e = { 0 };
	assert_int_equal(write_file_atomic(f->src, content, strlen(content), 0600, &e), 0);
}

static void test_import_match(void **state)
{
	struct fx *f = *state;
	ingot_error e = { 0 };
	uint8_t pin[32];
	struct stat st;
	mode_t old = umask(077);  /* the blob's mode must not follow the umask */

	write_src(f, "driver bytes\n");
	sha256_buf("driver bytes\n", 13, pin);
	assert_false(store_has_blob(&f->s, pin));
	assert_int_equal(store_import(&f->s, "kmod", f->src, pin, &e), 0);
	umask(old);
	assert_true(store_has_blob(&f->s, pin));
	_cleanup_free_ char *p = store_blob_path(&f->s, pin);
	char hex[65];
	hex_encode(pin, 32, hex);
	assert_non_null(strstr(p, "/blobs/"));
	assert_string_equal(strrchr(p, '/') + 1, hex);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(st.st_size, 13);
	/* a second import is a no-op that still checks the source */
	assert_int_equal(store_import(&f->s, "kmod", f->src, pin, &e), 0);
	/* source gone: the verified blob is enough (offline rebuild) */
	unlink(f->src);
	assert_int_equal(store_import(&f->s, "kmod", f->src, pin, &e), 0);
}

static void test_import_mismatch(void **state)
{
	struct fx *f = *state;
	ingot_error e = { 0 };
	uint8_t pin[32], got[32];
	char tmp[128], blobs[128], want[256], hp[65], hg[65];

	write_src(f, "tampered\n");
	sha256_buf("original\n", 9, pin);
	sha256_buf("tampered\n", 9, got);
	assert_int_equal(store_import(&f->s, "fw", f->src, pin, &e), -EBADMSG);
	hex_encode(pin, 32, hp);
	hex_encode(got, 32, hg);
	snprintf(want, sizeof(want), "fw: sha256 mismatch: recipe pins %s, file has %s", hp, hg);
	assert_string_equal(e.msg, want);
	/* nothing entered the store, under either digest, and no temporary is left */
	assert_false(store_has_blob(&f->s, pin));
	assert_false(store_has_blob(&f->s, got));
	snprintf(tmp, sizeof(tmp), "%s/tmp", f->root);
	snprintf(blobs, sizeof(blobs), "%s/blobs", f->root);
	assert_int_equal(count_dir(tmp), 0);
	assert_int_equal(count_dir(blobs), 0);

	/* a cached blob does not hide a source that changed since */
	write_src(f, "original\n");
	assert_int_equal(store_import(&f->s, "fw", f->src, pin, &e), 0);
	write_src(f, "tampered\n");
	assert_int_equal(store_import(&f->s, "fw", f->src, pin, &e), -EBADMSG);
	assert_string_equal(e.msg, want);

	/* missing source, nothing cached */
	uint8_t other[32] = { 1 };
	unlink(f->src);
	assert_int_equal(store_import(&f->s, "fw", f->src, other, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "fw: "));
	assert_non_null(strstr(e.msg, "cannot open"));
}

static void test_writer_and_verify(void **state)
{
	struct fx *f = *state;
	ingot_error e = { 0 };
	struct store_writer w;
	uint8_t d[32], want[32];
	uint64_t size = 0, checked = 0;

	assert_int_equal(store_writer_begin(&f->s, &w, &e), 0);
	assert_int_equal(store_writer_write(&w, "hello ", 6, &e), 0);
	assert_int_equal(store_writer_write(&w, "world", 5, &e), 0);
	assert_int_equal(store_writer_commit(&w, d, &size, &e), 0);
	sha256_buf("hello world", 11, want);
	assert_memory_equal(d, want, 32);
	assert_int_equal(size, 11);
	assert_true(store_has_blob(&f->s, want));

	/* an aborted writer leaves nothing */
	assert_int_equal(store_writer_begin(&f->s, &w, &e), 0);
	assert_int_equal(store_writer_write(&w, "x", 1, &e), 0);
	store_writer_abort(&w);
	char tmp[128];
	snprintf(tmp, sizeof(tmp), "%s/tmp", f->root);
	assert_int_equal(count_dir(tmp), 0);

	assert_int_equal(store_verify(&f->s, &checked, &e), 0);
	assert_int_equal(checked, 1);

	/* flip the content behind the store's back: verify names the blob */
	_cleanup_free_ char *p = store_blob_path(&f->s, want);
	assert_int_equal(chmod(p, 0644), 0);
	FILE *fp = fopen(p, "w");
	assert_non_null(fp);
	fputs("hello world!", fp);
	fclose(fp);
	assert_int_equal(store_verify(&f->s, &checked, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "corrupt blob"));
	assert_non_null(strstr(e.msg, p));
}

static void test_default_root(void **state)
{
	(void)state;
	char *old_x = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
	char *old_h = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	setenv("XDG_CACHE_HOME", "/var/cache/me", 1);
	_cleanup_free_ char *a = store_default_root();
	assert_string_equal(a, "/var/cache/me/ingot");
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/home/u", 1);
	_cleanup_free_ char *b = store_default_root();
	assert_string_equal(b, "/home/u/.cache/ingot");
	/* a relative XDG_CACHE_HOME is invalid per the spec and ignored */
	setenv("XDG_CACHE_HOME", "rel", 1);
	_cleanup_free_ char *c = store_default_root();
	assert_string_equal(c, "/home/u/.cache/ingot");
	if (old_x) setenv("XDG_CACHE_HOME", old_x, 1); else unsetenv("XDG_CACHE_HOME");
	if (old_h) setenv("HOME", old_h, 1); else unsetenv("HOME");
	free(old_x);
	free(old_h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_import_match, setup, teardown),
		cmocka_unit_test_setup_teardown(test_import_mismatch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writer_and_verify, setup, teardown),
		cmocka_unit_test(test_default_root),
	};
	return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
