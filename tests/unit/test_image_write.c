/* Units for builder/image.c and image/inspect.c: a tree with every
 * entry type written by image_write and read back by image_list (which
 * uses libsquashfs' reader, not our writer); identical bytes whatever
 * the worker count and the order entries were added in; errors for a
 * missing or altered store blob, bad options and damaged images. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builder/image.h"
#include "image/inspect.h"
#include "builder/store.h"
#include "builder/tree.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "helpers.h"

#define MTIME 1700000000u

static char tmpdir[64];
static struct store store;

struct spec {
	const char *path;
	enum tree_type type;
	uint32_t mode, uid, gid;
	size_t size;          /* files: generated content length */
	const char *target;
	uint32_t major, minor;
	const char *same_as;  /* files: the content of this other spec */
};

/* "a-c" sorts before "a/..." by full path but after "a" by name: the
 * writer must list directories by name, not by full-path order. */
static const struct spec specs[] = {
	{ "a", TREE_DIR, 0755, 0, 0, 0, NULL, 0, 0, NULL },
	{ "a-c", TREE_DIR, 0700, 0, 0, 0, NULL, 0, 0, NULL },
	{ "a-c/link", TREE_SYMLINK, 0777, 0, 0, 0, "../a/b/small", 0, 0, NULL },
	{ "a/b", TREE_DIR, 0755, 0, 0, 0, NULL, 0, 0, NULL },
	{ "a/b/small", TREE_FILE, 04755, 0, 0, 6, NULL, 0, 0, NULL },
	{ "a/big", TREE_FILE, 0640, 1000, 2000, 300000, NULL, 0, 0, NULL },
	/* a duplicate: the block writer drops its blocks again (truncates)
	 * and the next file's data must follow on from there */
	{ "a/big-copy", TREE_FILE, 0644, 0, 0, 300000, NULL, 0, 0, "a/big" },
	{ "a/exact", TREE_FILE, 0644, 0, 0, 8192, NULL, 0, 0, NULL },
	{ "dev", TREE_DIR, 0755, 0, 0, 0, NULL, 0, 0, NULL },
	{ "dev/fifo", TREE_FIFO, 0600, 0, 0, 0, NULL, 0, 0, NULL },
	{ "dev/null", TREE_CHR, 0666, 0, 0, 0, NULL, 1, 3, NULL },
	{ "dev/sda1", TREE_BLK, 0660, 0, 6, 0, NULL, 8, 1, NULL },
	{ "dev/big-minor", TREE_CHR, 0600, 0, 0, 0, NULL, 4095, 1048575, NULL },
	{ "dev/sock", TREE_SOCK, 0755, 0, 0, 0, NULL, 0, 0, NULL },
	{ "empty", TREE_FILE, 0644, 0, 0, 0, NULL, 0, 0, NULL },
	{ "zeros", TREE_FILE, 0644, 0, 0, 20000, NULL, 0, 0, NULL },
};

static uint8_t *content(size_t i, size_t len)
{
	uint8_t *d = malloc(len + 1);
	uint64_t x;
	assert_non_null(d);
	for (size_t j = 0; specs[i].same_as && j < sizeof(specs) / sizeof(specs[0]); j++)
		if (!strcmp(specs[j].path, specs[i].same_as))
			i = j;
	x = 0x9e3779b97f4a7c15ull * (i + 1);
	for (size_t k = 0; k < len; k++) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		/* "zeros" is all zero (sparse blocks); others compress a little */
		d[k] = !strcmp(specs[i].path, "zeros") ? 0 : (uint8_t)((x & 0x0f) + 'a');
	}
	return d;
}

static void put_blob(size_t i, uint8_t sha[32])
{
	_cleanup_free_ uint8_t *d = content(i, specs[i].size);
	struct store_writer w;
	uint64_t size;
	ingot_error e = { 0 };

	assert_int_equal(store_writer_begin(&store, &w, &e), 0);
	assert_int_equal(store_writer_write(&w, d, specs[i].size, &e), 0);
	assert_int_equal(store_writer_commit(&w, sha, &size, &e), 0);
	assert_int_equal(size, specs[i].size);
}

/* Add specs in the given order (reverse when backwards). */
static void make_tree(struct tree *t, bool backwards)
{
	ingot_error e = { 0 };
	size_t n = sizeof(specs) / sizeof(specs[0]);

	tree_init(t);
	for (size_t k = 0; k < n; k++) {
		size_t i = backwards ? n - 1 - k : k;
		struct tree_entry ent = {
			.path = (char *)specs[i].path, .type = specs[i].type, .mode = specs[i].mode,
			.uid = specs[i].uid, .gid = specs[i].gid, .size = specs[i].size,
			.target = (char *)specs[i].target, .rdev_major = specs[i].major,
			.rdev_minor = specs[i].minor, .origin = "test",
		};
		if (specs[i].type == TREE_FILE)
			put_blob(i, ent.sha256);
		assert_int_equal(tree_add(t, &ent, false, &e), 0);
	}
	assert_int_equal(tree_finalize(t, &e), 0);
}

static int setup(void **state)
{
	(void)state;
	return th_store_setup(tmpdir, sizeof(tmpdir), "imgw", &store);
}

static int teardown(void **state)
{
	(void)state;
	return th_store_teardown(tmpdir, &store);
}

static int write_image(const struct tree *t, const char *path, unsigned workers,
		       uint32_t block_size, struct image_info *info, ingot_error *e)
{
	struct image_opts o = { .compression = "zstd", .level = 0, .block_size = block_size,
				.workers = workers, .mtime = MTIME };
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644), r;
	assert_true(fd >= 0);
	r = image_write(t, &store, &o, fd, path, info, e);
	close(fd);
	return r;
}

struct seen {
	size_t n;
	bool bad_order;
	char last[256];
};

static int check_entry(const struct image_entry *ent, void *user, ingot_error *e)
{
	struct seen *s = user;
	const struct spec *sp = NULL;

	(void)e;
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
		if (!strcmp(ent->path + 1, specs[i].path))
			sp = &specs[i];
	assert_non_null(sp);
	assert_int_equal(ent->path[0], '/');
	if (s->n > 0 && strcmp(s->last, ent->path) >= 0)
		s->bad_order = true;
	snprintf(s->last, sizeof(s->last), "%s", ent->path);
	s->n++;

	assert_int_equal(ent->type, sp->type);
	assert_int_equal(ent->mode, sp->mode);
	assert_int_equal(ent->uid, sp->uid);
	assert_int_equal(ent->gid, sp->gid);
	assert_int_equal(ent->mtime, MTIME);
	if (sp->type == TREE_FILE) {
		_cleanup_free_ uint8_t *d = content((size_t)(sp - specs), sp->size);
		uint8_t sha[32];
		sha256_buf(d, sp->size, sha);
		assert_int_equal(ent->size, sp->size);
		assert_memory_equal(ent->sha256, sha, 32);
		assert_int_equal(ent->nlink, 1);
	}
	if (sp->type == TREE_SYMLINK)
		assert_string_equal(ent->target, sp->target);
	else
		assert_null(ent->target);
	if (sp->type == TREE_CHR || sp->type == TREE_BLK) {
		assert_int_equal(ent->rdev_major, sp->major);
		assert_int_equal(ent->rdev_minor, sp->minor);
	}
	/* directories: 2 + subdirectories */
	if (!strcmp(sp->path, "a"))
		assert_int_equal(ent->nlink, 3);
	if (!strcmp(sp->path, "dev"))
		assert_int_equal(ent->nlink, 2);
	return 0;
}

static void test_roundtrip(void **state)
{
	_cleanup_free_ char *img = th_path(tmpdir, "rt.sqfs");
	_cleanup_free_ uint8_t *bytes = NULL;
	struct image_summary sum;
	struct image_info info;
	struct seen seen = { 0 };
	struct tree t;
	ingot_error e = { 0 };
	size_t len;

	(void)state;
	make_tree(&t, false);
	assert_int_equal(write_image(&t, img, 1, 4096, &info, &e), 0);
	bytes = th_slurp(img, &len);
	assert_int_equal(len % 4096, 0);
	assert_int_equal(info.size, len);
	assert_int_equal(info.inodes, t.n + 1);
	assert_memory_equal(bytes, "hsqs", 4);
	/* superblock modification_time (offset 8, little endian) */
	assert_int_equal(bytes[8] | bytes[9] << 8 | bytes[10] << 16 | (uint32_t)bytes[11] << 24,
			 MTIME);

	assert_int_equal(image_list(img, check_entry, &seen, &sum, &e), 0);
	assert_int_equal(seen.n, t.n);
	assert_false(seen.bad_order);
	assert_string_equal(sum.compression, "zstd");
	assert_int_equal(sum.block_size, 4096);
	assert_int_equal(sum.mtime, MTIME);
	assert_int_equal(sum.inodes, t.n + 1);
	assert_int_equal(sum.root_mode, 0755);
	assert_int_equal(sum.file_size, len);
	assert_true(sum.bytes_used <= len && sum.bytes_used > len - 4096);
	tree_free(&t);
}

static void test_deterministic(void **state)
{
	_cleanup_free_ char *a = th_path(tmpdir, "a.sqfs"), *b = th_path(tmpdir, "b.sqfs"), *c = th_path(tmpdir, "c.sqfs");
	_cleanup_free_ uint8_t *ba = NULL, *bb = NULL, *bc = NULL;
	struct tree t1, t2;
	ingot_error e = { 0 };
	size_t la, lb, lc;

	(void)state;
	make_tree(&t1, false);
	make_tree(&t2, true);
	assert_int_equal(write_image(&t1, a, 1, 4096, NULL, &e), 0);
	assert_int_equal(write_image(&t1, b, 2, 4096, NULL, &e), 0);
	assert_int_equal(write_image(&t2, c, 4, 4096, NULL, &e), 0);
	ba = th_slurp(a, &la);
	bb = th_slurp(b, &lb);
	bc = th_slurp(c, &lc);
	assert_int_equal(la, lb);
	assert_memory_equal(ba, bb, la);
	assert_int_equal(la, lc);
	assert_memory_equal(ba, bc, la);
	tree_free(&t1);
	tree_free(&t2);
}

static void test_blob_errors(void **state)
{
	_cleanup_free_ char *img = th_path(tmpdir, "err.sqfs"), *blob = NULL;
	struct tree t;
	struct tree_entry *big;
	ingot_error e = { 0 };
	int fd;

	(void)state;
	make_tree(&t, false);
	big = tree_find(&t, "a/big");
	assert_non_null(big);

	/* Altered blob: same length, one byte changed. */
	blob = store_blob_path(&store, big->sha256);
	fd = open(blob, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "!", 1, 1234), 1);
	close(fd);
	assert_int_equal(write_image(&t, img, 1, 131072, NULL, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "/a/big"));
	assert_non_null(strstr(e.msg, "sha256"));

	/* Missing blob. */
	assert_int_equal(unlink(blob), 0);
	assert_int_equal(write_image(&t, img, 2, 131072, NULL, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "/a/big"));
	tree_free(&t);
}

static void test_option_errors(void **state)
{
	_cleanup_free_ char *img = th_path(tmpdir, "opt.sqfs");
	struct image_opts o = { .compression = "zstd", .block_size = 131072, .workers = 1,
				.mtime = 1ull << 32 };
	struct tree t;
	ingot_error e = { 0 };
	int fd = open(img, O_RDWR | O_CREAT | O_TRUNC, 0644);

	(void)state;
	/* An empty tree needs no tree_finalize (nothing to sort). */
	tree_init(&t);
	assert_int_equal(image_write(&t, &store, &o, fd, img, NULL, &e), -ERANGE);
	assert_non_null(strstr(e.msg, "mtime"));
	o.mtime = 0;
	o.compression = "brotli";
	assert_int_equal(image_write(&t, &store, &o, fd, img, NULL, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "brotli"));
	o.compression = "zstd";
	o.level = 23;
	assert_int_equal(image_write(&t, &store, &o, fd, img, NULL, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "1..22"));
	o.level = 0;
	o.block_size = 3000;
	assert_int_equal(image_write(&t, &store, &o, fd, img, NULL, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "block_size"));
	/* An empty tree is a valid image: just the root directory. */
	o.block_size = 65536;
	o.compression = "gzip";
	assert_int_equal(image_write(&t, &store, &o, fd, img, NULL, &e), 0);
	close(fd);
	tree_free(&t);
}

static int count_entry(const struct image_entry *ent, void *user, ingot_error *e)
{
	(void)ent; (void)e;
	++*(size_t *)user;
	return 0;
}

static void test_damaged_images(void **state)
{
	_cleanup_free_ char *img = th_path(tmpdir, "dmg.sqfs");
	struct image_info info;
	struct tree t;
	ingot_error e = { 0 };
	size_t n = 0;

	(void)state;
	make_tree(&t, false);
	assert_int_equal(write_image(&t, img, 1, 4096, &info, &e), 0);
	assert_int_equal(image_list(img, count_entry, &n, NULL, &e), 0);
	assert_int_equal(n, t.n);

	/* Cut inside the tables: the superblock promises more bytes. */
	assert_int_equal(truncate(img, (off_t)info.size - 4096 - 100), 0);
	assert_true(image_list(img, count_entry, &n, NULL, &e) < 0);
	assert_non_null(strstr(e.msg, "truncated"));

	/* Not an image at all. */
	assert_int_equal(truncate(img, 50), 0);
	assert_true(image_list(img, count_entry, &n, NULL, &e) < 0);
	assert_non_null(strstr(e.msg, img));
	assert_int_equal(truncate(img, 8192), 0);
	assert_true(image_list(img, count_entry, &n, NULL, &e) < 0);
	assert_non_null(strstr(e.msg, "superblock"));
	tree_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_deterministic),
		cmocka_unit_test(test_option_errors),
		cmocka_unit_test(test_damaged_images),
		cmocka_unit_test(test_blob_errors),
	};
	return cmocka_run_group_tests_name("image_write", tests, setup, teardown);
}
