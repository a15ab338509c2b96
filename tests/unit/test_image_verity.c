/* Units for image/verity.c: the dm-verity tree of small synthetic
 * images (1, 2, 128, 129, 300 blocks: the level boundaries; 4500: the
 * read and write batches) against a
 * reference computed here, independently, with EVP; verity_check on good
 * and damaged files; salt and UUID derivation. */
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

#include <openssl/evp.h>

#include "builder/image.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "helpers.h"

#define BS 4096

static void sha256_salted(const uint8_t *salt, size_t salt_len, const uint8_t *data,
			  uint8_t out[32])
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	assert_non_null(c);
	assert_true(EVP_DigestInit_ex(c, EVP_sha256(), NULL));
	assert_true(EVP_DigestUpdate(c, salt, salt_len));
	assert_true(EVP_DigestUpdate(c, data, BS));
	assert_true(EVP_DigestFinal_ex(c, out, NULL));
	EVP_MD_CTX_free(c);
}

/* Deterministic, non-repeating content (xorshift64). */
static uint8_t *make_data(size_t blocks, uint64_t seed)
{
	uint8_t *d = malloc(blocks * BS);
	uint64_t x = seed | 1;
	assert_non_null(d);
	for (size_t i = 0; i < blocks * BS; i++) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		d[i] = (uint8_t)x;
	}
	return d;
}

/* Reference tree: levels from the bottom as whole hash blocks, then the
 * file laid out as veritysetup does (superblock block, top level first). */
struct ref {
	uint8_t root[32];
	uint8_t *file;
	size_t file_len;
};

static void reference(const uint8_t *data, size_t blocks, const uint8_t *salt, size_t salt_len,
		      const uint8_t uuid[16], struct ref *out)
{
	uint8_t *levels[16];
	size_t sizes[16], nlev = 0;
	const uint8_t *cur = data;
	size_t cur_n = blocks;

	while (cur_n > 1) {
		size_t n = (cur_n + 127) / 128;
		uint8_t *lv = calloc(n, BS);
		assert_non_null(lv);
		for (size_t i = 0; i < cur_n; i++)
			sha256_salted(salt, salt_len, cur + i * BS, lv + i * 32);
		levels[nlev] = lv;
		sizes[nlev++] = n;
		cur = lv;
		cur_n = n;
	}
	sha256_salted(salt, salt_len, cur, out->root);

	size_t total = 1;
	for (size_t i = 0; i < nlev; i++)
		total += sizes[i];
	out->file_len = total * BS;
	out->file = calloc(total, BS);
	assert_non_null(out->file);
	/* struct verity_sb, little endian */
	uint8_t *sb = out->file;
	memcpy(sb, "verity", 6);
	sb[8] = 1;                       /* version */
	sb[12] = 1;                      /* hash_type */
	memcpy(sb + 16, uuid, 16);
	strcpy((char *)sb + 32, "sha256");
	sb[65] = 0x10;                   /* data_block_size 4096 */
	sb[69] = 0x10;                   /* hash_block_size 4096 */
	for (int i = 0; i < 8; i++)
		sb[72 + i] = (uint8_t)((uint64_t)blocks >> (8 * i));
	sb[80] = (uint8_t)salt_len;
	memcpy(sb + 88, salt, salt_len);
	size_t pos = 1;
	for (size_t i = nlev; i-- > 0; ) {
		memcpy(out->file + pos * BS, levels[i], sizes[i] * BS);
		pos += sizes[i];
		free(levels[i]);
	}
}

static char tmpdir[64];

static int setup(void **state)
{
	(void)state;
	return th_mkdtemp(tmpdir, sizeof(tmpdir), "verity");
}

static int teardown(void **state)
{
	(void)state;
	return th_rmtree(tmpdir);
}

static void write_bytes(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

static void check_blocks(size_t blocks)
{
	_cleanup_free_ char *img = th_path(tmpdir, "img"), *hash = th_path(tmpdir, "hash");
	_cleanup_free_ uint8_t *data = make_data(blocks, blocks * 7919);
	_cleanup_free_ uint8_t *got = NULL;
	uint8_t salt[32], uuid[16], sha[32];
	struct verity_info vi;
	struct ref ref;
	ingot_error e = { 0 };
	size_t got_len;
	int ifd, hfd;

	for (int i = 0; i < 32; i++)
		salt[i] = (uint8_t)(0xa0 + i);
	write_bytes(img, data, blocks * BS);
	ifd = open(img, O_RDONLY);
	hfd = open(hash, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(ifd >= 0 && hfd >= 0);
	assert_int_equal(verity_build(ifd, img, hfd, hash, salt, 32, &vi, &e), 0);
	close(ifd);
	close(hfd);

	verity_uuid_for_salt(salt, 32, uuid);
	assert_memory_equal(vi.uuid, uuid, 16);
	reference(data, blocks, salt, 32, uuid, &ref);
	assert_memory_equal(vi.root_hash, ref.root, 32);
	sha256_buf(data, blocks * BS, sha);
	assert_memory_equal(vi.image_sha256, sha, 32);
	assert_int_equal(vi.data_blocks, blocks);
	assert_int_equal(vi.image_size, blocks * BS);
	assert_int_equal(vi.data_block_size, BS);
	assert_int_equal(vi.hash_block_size, BS);
	assert_int_equal(vi.hash_offset, 0);
	assert_int_equal(vi.salt_len, 32);
	assert_memory_equal(vi.salt, salt, 32);

	got = th_slurp(hash, &got_len);
	assert_int_equal(got_len, ref.file_len);
	assert_memory_equal(got, ref.file, ref.file_len);
	free(ref.file);

	/* The check's one read gives the image digest the build computed. */
	struct image_digest dg;
	assert_int_equal(verity_check(img, hash, vi.root_hash, 0, &dg, &e), 0);
	assert_memory_equal(dg.sha256, vi.image_sha256, 32);
	assert_int_equal(dg.size, vi.image_size);
	assert_int_equal(verity_check(img, NULL, NULL, 0, &dg, &e), 0);
	assert_memory_equal(dg.sha256, vi.image_sha256, 32);
	assert_int_equal(dg.size, vi.image_size);
}

static void test_one_block(void **state) { (void)state; check_blocks(1); }
static void test_two_blocks(void **state) { (void)state; check_blocks(2); }
static void test_128_blocks(void **state) { (void)state; check_blocks(128); }
static void test_129_blocks(void **state) { (void)state; check_blocks(129); }
static void test_300_blocks(void **state) { (void)state; check_blocks(300); }
/* Past the 256-block chunks the read-ahead thread reads (image/verity.c)
 * and the 2048 digests written per batch, the last chunk partial. */
static void test_4500_blocks(void **state) { (void)state; check_blocks(4500); }

static void test_check_detects_damage(void **state)
{
	_cleanup_free_ char *img = th_path(tmpdir, "dimg"), *hash = th_path(tmpdir, "dhash");
	_cleanup_free_ uint8_t *data = make_data(200, 42);
	uint8_t salt[32] = { 1, 2, 3 }, root[32];
	struct verity_info vi;
	struct image_digest dg;
	ingot_error e = { 0 };
	int ifd, hfd;

	(void)state;
	write_bytes(img, data, 200 * BS);
	ifd = open(img, O_RDONLY);
	hfd = open(hash, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_int_equal(verity_build(ifd, img, hfd, hash, salt, 32, &vi, &e), 0);
	close(ifd);
	close(hfd);
	assert_int_equal(verity_check(img, hash, vi.root_hash, 0, &dg, &e), 0);

	/* A wrong expected root. */
	memcpy(root, vi.root_hash, 32);
	root[31] ^= 0x80;
	assert_int_equal(verity_check(img, hash, root, 0, &dg, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "root hash"));

	/* One flipped data bit in block 150: leaf block 1 covers 128..199. */
	th_flip_byte(img, 150 * BS + 17, 0x01);
	assert_int_equal(verity_check(img, hash, vi.root_hash, 0, &dg, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "data blocks 128..199"));
	th_flip_byte(img, 150 * BS + 17, 0x01);
	assert_int_equal(verity_check(img, hash, vi.root_hash, 0, &dg, &e), 0);

	/* One flipped bit in the top hash block. */
	th_flip_byte(hash, BS + 5, 0x01);
	assert_int_equal(verity_check(img, hash, vi.root_hash, 0, &dg, &e), -EBADMSG);
	th_flip_byte(hash, BS + 5, 0x01);

	/* A superblock that describes another image. */
	th_flip_byte(hash, 72, 0x01);
	assert_int_equal(verity_check(img, hash, vi.root_hash, 0, &dg, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "data_blocks"));
	th_flip_byte(hash, 72, 0x01);

	/* A truncated hash file. */
	assert_int_equal(truncate(hash, 2 * BS), 0);
	assert_int_equal(verity_check(img, hash, vi.root_hash, 0, &dg, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "truncated"));
}

static void test_refuses_unaligned_image(void **state)
{
	_cleanup_free_ char *img = th_path(tmpdir, "odd"), *hash = th_path(tmpdir, "oddhash");
	uint8_t buf[5000] = { 0 }, salt[32] = { 0 };
	ingot_error e = { 0 };
	int ifd, hfd;

	(void)state;
	write_bytes(img, buf, sizeof(buf));
	ifd = open(img, O_RDONLY);
	hfd = open(hash, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_int_equal(verity_build(ifd, img, hfd, hash, salt, 32, NULL, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "multiple of 4096"));
	assert_non_null(strstr(e.msg, "5000"));
	close(ifd);
	close(hfd);
}

static void test_salt_and_uuid(void **state)
{
	uint8_t rsha[32], salt[32], want[32], buf[21 + 32], uuid[16], d[32];
	char s[37];

	(void)state;
	sha256_buf("recipe", 6, rsha);
	verity_salt_for_recipe(rsha, salt);
	memcpy(buf, "ingot-verity-salt-v1", 21);   /* with its NUL */
	memcpy(buf + 21, rsha, 32);
	sha256_buf(buf, sizeof(buf), want);
	assert_memory_equal(salt, want, 32);

	verity_uuid_for_salt(salt, 32, uuid);
	memcpy(buf, "ingot-verity-uuid-v1", 21);
	memcpy(buf + 21, salt, 32);
	sha256_buf(buf, sizeof(buf), d);
	assert_memory_equal(uuid, d, 6);
	assert_int_equal(uuid[6] >> 4, 4);          /* version 4 */
	assert_int_equal(uuid[6] & 0x0f, d[6] & 0x0f);
	assert_int_equal(uuid[8] >> 6, 2);          /* RFC 4122 variant */
	assert_memory_equal(uuid + 9, d + 9, 7);
	verity_uuid_string(uuid, s);
	assert_int_equal(strlen(s), 36);
	assert_true(s[8] == '-' && s[13] == '-' && s[18] == '-' && s[23] == '-');
	assert_int_equal(s[14], '4');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_block),
		cmocka_unit_test(test_two_blocks),
		cmocka_unit_test(test_128_blocks),
		cmocka_unit_test(test_129_blocks),
		cmocka_unit_test(test_300_blocks),
		cmocka_unit_test(test_4500_blocks),
		cmocka_unit_test(test_check_detects_damage),
		cmocka_unit_test(test_refuses_unaligned_image),
		cmocka_unit_test(test_salt_and_uuid),
	};
	return cmocka_run_group_tests_name("image_verity", tests, setup, teardown);
}
