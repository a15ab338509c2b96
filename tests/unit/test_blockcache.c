/* Units for builder/blockcache.c: cached blocks are byte-for-byte what the
 * compressor returns; a second run answers from the cache; a damaged
 * entry is recompressed, never used; other settings get their own cache;
 * and image_write gives the same image with the cache cold, warm or off. */
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

#include "builder/blockcache.h"
#include "builder/image.h"
#include "image/sqfs-io.h"
#include "builder/store.h"
#include "builder/tree.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "helpers.h"

#define BS 65536
#define NBLK 3

static char tmpdir[64];
static struct store store;

static int setup(void **state)
{
	(void)state;
	return th_store_setup(tmpdir, sizeof(tmpdir), "bcache", &store);
}

static int teardown(void **state)
{
	(void)state;
	return th_store_teardown(tmpdir, &store);
}

/* text, noise (the compressor declines it), zeros */
static void fill(uint8_t blk[NBLK][BS])
{
	uint32_t x = 12345;
	for (size_t i = 0; i < BS; i++) {
		blk[0][i] = (uint8_t)"libcuda.so.580.95.05 nvidia "[i % 28];
		x ^= x << 13; x ^= x >> 17; x ^= x << 5;
		blk[1][i] = (uint8_t)x;
		blk[2][i] = 0;
	}
}

static sqfs_compressor_t *make_cmp(const char *name, int level)
{
	sqfs_compressor_config_t cfg;
	sqfs_compressor_t *c = NULL;
	ingot_error e = { 0 };
	assert_int_equal(sqfs_compressor_setup(name, level, BS, &cfg, &e), 0);
	assert_int_equal(sqfs_compressor_create(&cfg, &c), 0);
	return c;
}

/* Compress every block through a fresh cache; outputs and sizes out. */
static void run(sqfs_compressor_t *plain, uint8_t blk[NBLK][BS], uint8_t out[NBLK][BS], sqfs_s32 n[NBLK],
		struct block_cache_stats *st)
{
	struct block_cache *bc = NULL;
	ingot_error e = { 0 };
	assert_int_equal(block_cache_open(&store, plain, &bc, &e), 0);
	sqfs_compressor_t *c = block_cache_wrap(bc, plain);
	assert_non_null(c);
	/* a copy, as a block processor worker makes one */
	sqfs_compressor_t *c2 = sqfs_copy(c);
	assert_non_null(c2);
	for (int i = 0; i < NBLK; i++)
		n[i] = (i % 2 ? c2 : c)->do_block(i % 2 ? c2 : c, blk[i], BS, out[i], BS);
	assert_int_equal(block_cache_commit(bc, &e), 0);
	block_cache_stats(bc, st);
	sqfs_destroy(c2);
	sqfs_destroy(c);
	block_cache_close(bc);
}

static char *only_file(const char *suffix)
{
	char dir[256];
	struct dirent *de;
	char *found = NULL;
	DIR *d, *sub;
	snprintf(dir, sizeof(dir), "%s/blocks", store.root);
	d = opendir(dir);
	assert_non_null(d);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char sd[512];
		snprintf(sd, sizeof(sd), "%s/%s", dir, de->d_name);
		sub = opendir(sd);
		struct dirent *f;
		while (sub && (f = readdir(sub))) {
			size_t l = strlen(f->d_name);
			if (l > strlen(suffix) && !strcmp(f->d_name + l - strlen(suffix), suffix)) {
				assert_null(found);  /* exactly one */
				assert_true(asprintf(&found, "%s/%s", sd, f->d_name) > 0);
			}
		}
		if (sub)
			closedir(sub);
	}
	closedir(d);
	assert_non_null(found);
	return found;
}

/* block_cache_wrap_below: a block of the cut's size or more goes straight
 * to the compressor (not looked up, not recorded); a shorter one (a
 * fragment block) is cached, and a second run answers it from the cache
 * with the compressor's very bytes. */
static void test_below(void **state)
{
	(void)state;
	static uint8_t blk[NBLK][BS], out[2][BS], ref[BS];
	sqfs_compressor_t *plain = make_cmp("zstd", 3);
	ingot_error e = { 0 };
	sqfs_s32 n[2][2];

	fill(blk);
	for (int round = 0; round < 2; round++) {
		struct block_cache *bc = NULL;
		struct block_cache_stats st;
		assert_int_equal(block_cache_open(&store, plain, &bc, &e), 0);
		sqfs_compressor_t *c = block_cache_wrap_below(bc, plain, BS);
		sqfs_compressor_t *c2 = sqfs_copy(c);   /* the cut survives a worker's copy */
		assert_non_null(c);
		assert_non_null(c2);
		n[round][0] = c2->do_block(c2, blk[0], BS, out[0], BS);          /* whole */
		n[round][1] = c2->do_block(c2, blk[0], BS - 100, out[1], BS);    /* short */
		assert_int_equal(block_cache_commit(bc, &e), 0);
		block_cache_stats(bc, &st);
		assert_int_equal(st.hits, round);       /* the short block, the second time */
		assert_int_equal(st.misses, 1 - round);
		assert_int_equal(plain->do_block(plain, blk[0], BS - 100, ref, BS), n[round][1]);
		assert_memory_equal(out[1], ref, (size_t)n[round][1]);
		sqfs_destroy(c2);
		sqfs_destroy(c);
		block_cache_close(bc);
	}
	assert_int_equal(n[0][0], n[1][0]);
	sqfs_destroy(plain);
}

static void test_roundtrip(void **state)
{
	static uint8_t blk[NBLK][BS], want[NBLK][BS], out[NBLK][BS];
	sqfs_s32 wn[NBLK], n[NBLK];
	struct block_cache_stats st;
	sqfs_compressor_t *plain = make_cmp("zstd", 19);
	(void)state;

	fill(blk);
	for (int i = 0; i < NBLK; i++)
		wn[i] = plain->do_block(plain, blk[i], BS, want[i], BS);
	assert_true(wn[0] > 0 && wn[0] < BS);
	assert_int_equal(wn[1], 0);   /* noise: stored raw */

	run(plain, blk, out, n, &st);  /* cold */
	assert_int_equal(st.misses, NBLK);
	assert_int_equal(st.hits, 0);
	for (int i = 0; i < NBLK; i++) {
		assert_int_equal(n[i], wn[i]);
		assert_memory_equal(out[i], want[i], (size_t)wn[i]);
	}

	memset(out, 0, sizeof(out));
	run(plain, blk, out, n, &st);  /* warm: every block from the cache */
	assert_int_equal(st.hits, NBLK);
	assert_int_equal(st.misses, 0);
	for (int i = 0; i < NBLK; i++) {
		assert_int_equal(n[i], wn[i]);
		assert_memory_equal(out[i], want[i], (size_t)wn[i]);
	}

	/* one flipped byte in the cached data: detected, recompressed */
	_cleanup_free_ char *data = only_file(".data");
	th_flip_byte(data, 10, 0x40);
	memset(out, 0, sizeof(out));
	run(plain, blk, out, n, &st);
	assert_int_equal(st.damaged, 1);
	assert_int_equal(st.hits, NBLK - 1);
	for (int i = 0; i < NBLK; i++) {
		assert_int_equal(n[i], wn[i]);
		assert_memory_equal(out[i], want[i], (size_t)wn[i]);
	}
	sqfs_destroy(plain);

	/* indexes that are not whole are ignored, never trusted */
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "for f in '%s'/blocks/*/*.idx; do truncate -s 17 \"$f\"; done", store.root);
	assert_int_equal(th_run(cmd), 0);
	plain = make_cmp("zstd", 19);
	run(plain, blk, out, n, &st);
	assert_int_equal(st.hits, 0);
	assert_int_equal(st.misses, NBLK);
	for (int i = 0; i < NBLK; i++)
		assert_memory_equal(out[i], want[i], (size_t)wn[i]);
	sqfs_destroy(plain);
}

static void test_settings_apart(void **state)
{
	static uint8_t blk[NBLK][BS], out[NBLK][BS];
	sqfs_s32 n[NBLK];
	struct block_cache_stats st;
	char dir[256];
	int count = 0;
	struct dirent *de;
	(void)state;

	fill(blk);
	sqfs_compressor_t *a = make_cmp("zstd", 19), *b = make_cmp("zstd", 18), *x = make_cmp("xz", 0);
	run(a, blk, out, n, &st);
	run(b, blk, out, n, &st);
	assert_int_equal(st.hits, 0);   /* level 18 does not reuse level 19's blocks */
	run(x, blk, out, n, &st);
	assert_int_equal(st.hits, 0);
	snprintf(dir, sizeof(dir), "%s/blocks", store.root);
	DIR *d = opendir(dir);
	while ((de = readdir(d)))
		count += de->d_name[0] != '.';
	closedir(d);
	assert_int_equal(count, 3);
	sqfs_destroy(a);
	sqfs_destroy(b);
	sqfs_destroy(x);
}

static void test_pays(void **state)
{
	sqfs_compressor_config_t cfg;
	ingot_error e = { 0 };
	(void)state;
	assert_int_equal(sqfs_compressor_setup("zstd", 3, BS, &cfg, &e), 0);
	assert_false(block_cache_pays(&cfg));
	assert_int_equal(sqfs_compressor_setup("zstd", 6, BS, &cfg, &e), 0);
	assert_true(block_cache_pays(&cfg));
	assert_int_equal(sqfs_compressor_setup("lz4", 0, BS, &cfg, &e), 0);
	assert_false(block_cache_pays(&cfg));
	assert_int_equal(sqfs_compressor_setup("xz", 0, BS, &cfg, &e), 0);
	assert_true(block_cache_pays(&cfg));
	assert_int_equal(sqfs_compressor_setup("gzip", 9, BS, &cfg, &e), 0);
	assert_true(block_cache_pays(&cfg));
}

/* A tree of files (some sharing blocks) in the store. */
static void make_tree(struct tree *t)
{
	static uint8_t blk[NBLK][BS];
	ingot_error e = { 0 };
	fill(blk);
	tree_init(t);
	for (int f = 0; f < 8; f++) {
		struct store_writer w;
		char path[32];
		struct tree_entry ent = { .type = TREE_FILE, .mode = 0644, .origin = "t", .path = path };
		snprintf(path, sizeof(path), "usr/lib/f%d", f);
		assert_int_equal(store_writer_begin(&store, &w, &e), 0);
		for (int k = 0; k <= f % 4; k++)
			assert_int_equal(store_writer_write(&w, blk[(f + k) % NBLK], BS - 100 * (size_t)f, &e), 0);
		assert_int_equal(store_writer_commit(&w, ent.sha256, &ent.size, &e), 0);
		assert_int_equal(tree_add(t, &ent, false, &e), 0);
	}
	assert_int_equal(tree_finalize(t, &e), 0);
}

static uint8_t *image(const struct tree *t, bool no_cache, unsigned workers, struct image_info *ii, size_t *len)
{
	char path[128];
	struct image_opts o = { .compression = "zstd", .level = 19, .block_size = BS, .workers = workers,
				.mtime = 1700000000u, .no_block_cache = no_cache };
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

static void test_image_same_bytes(void **state)
{
	struct tree t;
	struct image_info i0, i1, i2, i3;
	size_t l0, l1, l2, l3;
	(void)state;

	make_tree(&t);
	_cleanup_free_ uint8_t *off = image(&t, true, 1, &i0, &l0);
	_cleanup_free_ uint8_t *cold = image(&t, false, 2, &i1, &l1);
	_cleanup_free_ uint8_t *warm = image(&t, false, 2, &i2, &l2);
	_cleanup_free_ uint8_t *warm1 = image(&t, false, 1, &i3, &l3);
	assert_int_equal(i0.blocks_reused + i0.blocks_compressed, 0);
	assert_true(i1.blocks_compressed > 0);
	assert_int_equal(i1.blocks_reused, 0);
	assert_int_equal(i2.blocks_compressed, 0);
	assert_int_equal(i2.blocks_reused, i1.blocks_compressed);
	assert_int_equal(i3.blocks_compressed, 0);
	assert_int_equal(l0, l1);
	assert_int_equal(l0, l2);
	assert_int_equal(l0, l3);
	assert_memory_equal(off, cold, l0);
	assert_memory_equal(off, warm, l0);
	assert_memory_equal(off, warm1, l0);
	tree_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_below, setup, teardown),
		cmocka_unit_test_setup_teardown(test_settings_apart, setup, teardown),
		cmocka_unit_test(test_pays),
		cmocka_unit_test_setup_teardown(test_image_same_bytes, setup, teardown),
	};
	return cmocka_run_group_tests_name("blockcache", tests, NULL, NULL);
}
