/* Units for builder/filecache.c through image_write: the image is the same
 * bytes with the file cache off, cold and warm, at level 3 and 19, with
 * 1 and 2 workers, after one file changed; a warm build takes every
 * unchanged file from the cache; the SHA-1s handed to the SBOM are the
 * files' own; a damaged entry is counted and the file compressed from
 * its source; a file the cache no longer vouches for is checked; and
 * compaction (store gc) keeps what it is told, the older of two copies,
 * and leaves an image the same bytes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "builder/filecache.h"
#include "builder/image.h"
#include "builder/store.h"
#include "builder/tree.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "helpers.h"

#define BS 4096
#define NF 9

static char tmpdir[64];
static struct store store;

static int setup(void **state)
{
	(void)state;
	return th_store_setup(tmpdir, sizeof(tmpdir), "fcache", &store);
}

static int teardown(void **state)
{
	(void)state;
	return th_store_teardown(tmpdir, &store);
}

/* sizes: tail only, exactly one block, blocks + tail, zero blocks (sparse)
 * and a text tail, text, noise (stored raw), empty, a duplicate, a small
 * all-zero file (a sparse tail: not cached) */
static const size_t sizes[NF] = { 100, BS, 3 * BS + 17, 5 * BS + 9, 9 * BS, 2 * BS + 1, 0, 3 * BS + 17, 40 };

static void content(int f, int version, uint8_t *buf, size_t n)
{
	uint32_t x = 777u + (uint32_t)(f == 7 ? 2 : f) * 31u + (uint32_t)version;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13; x ^= x >> 17; x ^= x << 5;
		if (f == 3 && i < 5 * BS)
			buf[i] = 0;
		else if (f == 8)
			buf[i] = 0;
		else if (f == 5)
			buf[i] = (uint8_t)x;
		else
			buf[i] = (uint8_t)"nvidia-smi libcuda.so.1 "[x % 24];
	}
}

/* The tree; file 4 in `version`. */
static void make_tree(struct tree *t, int version)
{
	static uint8_t buf[9 * BS + 64];
	ingot_error e = { 0 };
	tree_init(t);
	for (int f = 0; f < NF; f++) {
		struct store_writer w;
		char path[32];
		struct tree_entry ent = { .type = TREE_FILE, .mode = 0644, .origin = "t", .path = path };
		snprintf(path, sizeof(path), "usr/lib/f%d", f);
		content(f, f == 4 ? version : 0, buf, sizes[f]);
		assert_int_equal(store_writer_begin(&store, &w, &e), 0);
		assert_int_equal(store_writer_write(&w, buf, sizes[f], &e), 0);
		assert_int_equal(store_writer_commit(&w, ent.sha256, &ent.size, &e), 0);
		assert_int_equal(tree_add(t, &ent, false, &e), 0);
	}
	assert_int_equal(tree_finalize(t, &e), 0);
}

static uint8_t *image(const struct tree *t, bool no_cache, int level, unsigned workers, uint8_t (*sha1)[20],
		      struct image_info *ii, size_t *len)
{
	char path[128];
	struct image_opts o = { .compression = "zstd", .level = level, .block_size = BS, .workers = workers,
				.mtime = 1700000000u, .no_file_cache = no_cache, .no_block_cache = true,
				.sha1 = sha1 };
	ingot_error e = { 0 };
	snprintf(path, sizeof(path), "%s/img", tmpdir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	memset(ii, 0, sizeof(*ii));
	if (image_write(t, &store, &o, fd, path, ii, &e) < 0)
		fail_msg("image_write: %s", e.msg);
	close(fd);
	return th_slurp(path, len);
}

static void same(const uint8_t *a, size_t la, const uint8_t *b, size_t lb)
{
	assert_int_equal(la, lb);
	assert_memory_equal(a, b, la);
}

/* Every file but the all-zero one (its zero tail would be a sparse
 * block in the inode, which a replay does not merge) is cached; f3's
 * sparse whole blocks are replayed. */
#define CACHEABLE (NF - 1)

static void test_same_bytes(void **state)
{
	static const int levels[] = { 3, 19 };
	(void)state;
	for (size_t l = 0; l < 2; l++) {
		struct tree t, t2;
		struct image_info i0, i1, i2, i3, i4, i5;
		size_t l0, l1, l2, l3, l4, l5;
		make_tree(&t, 0);
		/* by tree entry: the directories have a slot too */
		_cleanup_free_ uint8_t (*sha1)[20] = calloc(t.n + 1, 20);
		_cleanup_free_ uint8_t *off = image(&t, true, levels[l], 1, sha1, &i0, &l0);
		_cleanup_free_ uint8_t *cold = image(&t, false, levels[l], 2, sha1, &i1, &l1);
		_cleanup_free_ uint8_t *warm = image(&t, false, levels[l], 2, sha1, &i2, &l2);
		_cleanup_free_ uint8_t *warm1 = image(&t, false, levels[l], 1, sha1, &i3, &l3);
		assert_int_equal(i0.files_reused, 0);
		assert_int_equal(i1.files_reused, 0);
		assert_int_equal(i2.files_reused, CACHEABLE);
		assert_int_equal(i3.files_reused, CACHEABLE);
		same(off, l0, cold, l1);
		same(off, l0, warm, l2);
		same(off, l0, warm1, l3);
		/* one file changed: only it is compressed, the image is what a
		 * build without the cache makes */
		make_tree(&t2, 1);
		_cleanup_free_ uint8_t *off2 = image(&t2, true, levels[l], 2, sha1, &i4, &l4);
		_cleanup_free_ uint8_t *warm2 = image(&t2, false, levels[l], 2, sha1, &i5, &l5);
		assert_int_equal(i5.files_reused, CACHEABLE - 1);
		same(off2, l4, warm2, l5);
		assert_true(l4 != l0 || memcmp(off2, off, l0));
		tree_free(&t);
		tree_free(&t2);
	}
}

static void test_sha1(void **state)
{
	static uint8_t buf[9 * BS + 64];
	struct tree t;
	struct image_info ii;
	size_t len;
	uint8_t want[20];
	(void)state;
	make_tree(&t, 0);
	_cleanup_free_ uint8_t (*cold)[20] = calloc(t.n, 20), (*warm)[20] = calloc(t.n, 20);
	free(image(&t, false, 3, 2, cold, &ii, &len));
	free(image(&t, false, 3, 2, warm, &ii, &len));
	assert_int_equal(ii.files_reused, CACHEABLE);
	for (int f = 0; f < NF; f++) {
		char path[32];
		snprintf(path, sizeof(path), "usr/lib/f%d", f);
		const struct tree_entry *ent = tree_find(&t, path);
		size_t k = (size_t)(ent - t.v);
		content(f, 0, buf, sizes[f]);
		EVP_Digest(buf, sizes[f], want, NULL, EVP_sha1(), NULL);
		assert_memory_equal(cold[k], want, 20);
		assert_memory_equal(warm[k], want, 20);
	}
	tree_free(&t);
}

/* Flip a byte in every .data segment of the file cache. */
static void damage_cache(size_t off)
{
	char dir[256], sub[512], file[1024];
	struct dirent *de, *de2;
	snprintf(dir, sizeof(dir), "%s/files", store.root);
	DIR *d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
		DIR *d2 = opendir(sub);
		assert_non_null(d2);
		while ((de2 = readdir(d2))) {
			size_t l = strlen(de2->d_name);
			if (l > 5 && !strcmp(de2->d_name + l - 5, ".data")) {
				snprintf(file, sizeof(file), "%s/%s", sub, de2->d_name);
				th_flip_byte(file, (off_t)off, 0x10);
			}
		}
		closedir(d2);
	}
	closedir(d);
}

static void test_damaged_entry(void **state)
{
	struct tree t;
	struct image_info i0, i1, i2;
	size_t l0, l1, l2;
	(void)state;
	make_tree(&t, 0);
	_cleanup_free_ uint8_t (*sha1)[20] = calloc(t.n, 20);
	_cleanup_free_ uint8_t *off = image(&t, true, 3, 1, sha1, &i0, &l0);
	free(image(&t, false, 3, 1, sha1, &i1, &l1));
	damage_cache(5);
	_cleanup_free_ uint8_t *warm = image(&t, false, 3, 1, sha1, &i2, &l2);
	assert_int_equal(i2.files_damaged, 1);
	assert_int_equal(i2.files_reused, CACHEABLE - 1);
	same(off, l0, warm, l2);
	tree_free(&t);
}

/* A damaged cache entry and a damaged store copy: the build fails. */
static void test_damaged_both(void **state)
{
	struct tree t;
	struct image_info ii;
	size_t len;
	char path[128];
	ingot_error e = { 0 };
	(void)state;
	make_tree(&t, 0);
	_cleanup_free_ uint8_t (*sha1)[20] = calloc(t.n, 20);
	struct image_opts o = { .compression = "zstd", .level = 3, .block_size = BS, .workers = 1,
				.mtime = 1700000000u, .no_block_cache = true, .sha1 = sha1 };
	free(image(&t, false, 3, 1, sha1, &ii, &len));
	damage_cache(5);
	const struct tree_entry *ent = tree_find(&t, "usr/lib/f0");
	char hex[65], blob[512];
	/* byte 5 of the segment is f0's (the first file fed, all tail) */
	hex_encode(ent->sha256, 32, hex);
	snprintf(blob, sizeof(blob), "%s/blobs/%.2s/%s", store.root, hex, hex);
	chmod(blob, 0644);
	th_flip_byte(blob, 0, 0x01);
	snprintf(path, sizeof(path), "%s/img", tmpdir);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(image_write(&t, &store, &o, fd, path, &ii, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "expected"));
	close(fd);
	tree_free(&t);
}

static bool keep_tree(void *ctx, const uint8_t sha256[32], uint64_t size)
{
	const struct tree *t = ctx;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].type == TREE_FILE && t->v[i].size == size && !memcmp(t->v[i].sha256, sha256, 32))
			return true;
	return false;
}

static bool keep_none(void *ctx, const uint8_t sha256[32], uint64_t size)
{
	(void)ctx; (void)sha256; (void)size;
	return false;
}

/* STORE/files/<the one compressor id>, into dir. */
static void cache_dir(char *dir, size_t len)
{
	char files[256];
	struct dirent *de;
	snprintf(files, sizeof(files), "%s/files", store.root);
	DIR *d = opendir(files);
	assert_non_null(d);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			snprintf(dir, len, "%s/%s", files, de->d_name);
	closedir(d);
}

static int count_suffix(const char *dir, const char *suffix)
{
	struct dirent *de;
	int n = 0;
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name), sl = strlen(suffix);
		n += l > sl && !strcmp(de->d_name + l - sl, suffix);
	}
	closedir(d);
	return n;
}

static void test_compact(void **state)
{
	struct tree t, t2;
	struct image_info ii;
	struct file_cache_gc_stats st = { 0 };
	ingot_error e = { 0 };
	char dir[512], names[2][64];
	size_t len, l0, l1;
	int n = 0;
	(void)state;
	make_tree(&t, 0);
	make_tree(&t2, 1);
	_cleanup_free_ uint8_t (*sha1)[20] = calloc(t.n + 1, 20);
	free(image(&t, false, 3, 2, sha1, &ii, &len));    /* segment 1: every cacheable file */
	free(image(&t2, false, 3, 2, sha1, &ii, &len));   /* segment 2: f4 version 1 */
	assert_int_equal(ii.files_reused, CACHEABLE - 1);
	cache_dir(dir, sizeof(dir));
	/* a later copy of both segments, damaged where f0's tail is: the older
	 * copies must win, or the warm build below counts a damaged entry */
	DIR *d = opendir(dir);
	struct dirent *de;
	assert_non_null(d);
	while ((de = readdir(d)))
		if (strlen(de->d_name) > 4 && !strcmp(de->d_name + strlen(de->d_name) - 4, ".idx"))
			snprintf(names[n++], sizeof(names[0]), "%.*s", (int)strlen(de->d_name) - 4, de->d_name);
	closedir(d);
	assert_int_equal(n, 2);
	for (int i = 0; i < 2; i++)
		for (int k = 0; k < 2; k++) {
			char from[700], to[700];
			const char *sfx = k ? ".idx" : ".data";
			snprintf(from, sizeof(from), "%s/%s%s", dir, names[i], sfx);
			snprintf(to, sizeof(to), "%s/ffff%d%s", dir, i, sfx);
			_cleanup_free_ uint8_t *b = th_slurp(from, &len);
			FILE *f = fopen(to, "wb");
			assert_non_null(f);
			assert_int_equal(fwrite(b, 1, len, f), len);
			fclose(f);
			if (!k)
				th_flip_byte(to, 5, 0x10);
		}
	/* STORE/files and the compressor id's name in it */
	char files[512];
	snprintf(files, sizeof(files), "%s/files", store.root);
	const char *cid = strrchr(dir, '/') + 1;
	int ffd = open(files, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(ffd >= 0);
	assert_int_equal(file_cache_compact(&store, ffd, cid, dir, keep_tree, &t2, false, &st, &e), 0);
	assert_int_equal(st.segments, 4);
	assert_int_equal(st.damaged_segments, 0);
	/* records: CACHEABLE + 1 (f4 in both versions), twice; keys kept:
	 * CACHEABLE - 1 (f7's bytes are f2's: one key) */
	assert_int_equal(st.kept, CACHEABLE - 1);
	assert_int_equal(st.removed, 2 * (CACHEABLE + 1) - (CACHEABLE - 1));
	assert_true(st.bytes_after < st.bytes_before);
	assert_int_equal(count_suffix(dir, ".idx"), 1);
	assert_int_equal(count_suffix(dir, ".data"), 1);
	_cleanup_free_ uint8_t *off = image(&t2, true, 3, 2, sha1, &ii, &l0);
	_cleanup_free_ uint8_t *warm = image(&t2, false, 3, 2, sha1, &ii, &l1);
	assert_int_equal(ii.files_reused, CACHEABLE);
	assert_int_equal(ii.files_damaged, 0);
	same(off, l0, warm, l1);
	free(image(&t, false, 3, 2, sha1, &ii, &len));
	assert_int_equal(ii.files_reused, CACHEABLE - 1);   /* f4 version 0 went */
	/* nothing kept: the directory goes */
	memset(&st, 0, sizeof(st));
	assert_int_equal(file_cache_compact(&store, ffd, cid, dir, keep_none, NULL, false, &st, &e), 0);
	close(ffd);
	assert_int_equal(st.kept, 0);
	assert_int_equal(count_suffix(dir, ".idx"), -1);
	tree_free(&t);
	tree_free(&t2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_same_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sha1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_entry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_damaged_both, setup, teardown),
		cmocka_unit_test_setup_teardown(test_compact, setup, teardown),
	};
	return cmocka_run_group_tests_name("filecache", tests, NULL, NULL);
}
