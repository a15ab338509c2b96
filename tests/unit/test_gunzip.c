/* Units for builder/gunzip.c: gzip made by another implementation (zlib,
 * through libarchive's writer) comes out the same, read a byte at a time
 * or a block at a time; members back to back are all read; what follows
 * the last member and is not one is left; a cut anywhere, a wrong CRC-32
 * or size and a damaged stream are errors with a message, also when the
 * reader stopped before the end (gunzip_finish). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "builder/gunzip.h"

struct src {
	const uint8_t *p;
	size_t len, off, step;   /* step: most bytes a pull hands over */
};

static ssize_t pull(void *ctx, uint8_t *buf, size_t cap)
{
	struct src *s = ctx;
	size_t n = s->len - s->off;
	if (n > cap)
		n = cap;
	if (n > s->step)
		n = s->step;
	memcpy(buf, s->p + s->off, n);
	s->off += n;
	return (ssize_t)n;
}

/* data gzipped by zlib (libarchive's gzip filter on the raw format). */
static uint8_t *gz(const uint8_t *data, size_t len, size_t *out_len)
{
	size_t cap = len + 4096, used = 0;
	uint8_t *out = malloc(cap);
	struct archive *a = archive_write_new();
	struct archive_entry *e = archive_entry_new();
	assert_non_null(out);
	assert_int_equal(archive_write_set_format_raw(a), ARCHIVE_OK);
	assert_int_equal(archive_write_add_filter_gzip(a), ARCHIVE_OK);
	archive_write_set_bytes_in_last_block(a, 1);
	assert_int_equal(archive_write_open_memory(a, out, cap, &used), ARCHIVE_OK);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_pathname(e, "x");
	assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
	assert_int_equal(archive_write_data(a, data, len), (la_ssize_t)len);
	assert_int_equal(archive_write_close(a), ARCHIVE_OK);
	archive_write_free(a);
	archive_entry_free(e);
	*out_len = used;
	return out;
}

static uint8_t *sample(size_t len, uint32_t seed)
{
	uint8_t *d = malloc(len ? len : 1);
	assert_non_null(d);
	for (size_t i = 0; i < len; i++) {
		seed ^= seed << 13; seed ^= seed >> 17; seed ^= seed << 5;
		d[i] = (i / 300) % 2 ? (uint8_t)seed : (uint8_t)"libnccl.so.2 "[seed % 13];
	}
	return d;
}

/* Everything gunzip gives for in (pull of step bytes, reads of cap):
 * returns the error, or 0 with *out and *out_len. */
static int all(const uint8_t *in, size_t len, size_t step, size_t cap, uint8_t **out, size_t *out_len,
	       const char **why)
{
	struct src s = { .p = in, .len = len, .step = step };
	struct gunzip *g = gunzip_new(pull, &s);
	size_t n = 0, alloc = 1 << 16;
	uint8_t *buf = malloc(alloc);
	ssize_t k;
	assert_non_null(g);
	for (;;) {
		if (alloc - n < cap) {
			alloc = alloc * 2 + cap;
			buf = realloc(buf, alloc);
			assert_non_null(buf);
		}
		k = gunzip_read(g, buf + n, cap, why);
		if (k <= 0)
			break;
		n += (size_t)k;
	}
	gunzip_free(g);
	*out = buf;
	*out_len = n;
	return (int)k;
}

static void test_round_trip(void **state)
{
	static const size_t lens[] = { 0, 1, 1000, 300000 };
	static const size_t steps[] = { 1, 7, 4096, SIZE_MAX };
	(void)state;
	for (size_t i = 0; i < 4; i++) {
		uint8_t *d = sample(lens[i], 7 + (uint32_t)i), *z, *out;
		size_t zl, ol;
		const char *why = NULL;
		z = gz(d, lens[i], &zl);
		assert_true(gunzip_magic(z, zl));
		for (size_t s = 0; s < 4; s++) {
			assert_int_equal(all(z, zl, steps[s], s == 1 ? 5 : 65536, &out, &ol, &why), 0);
			assert_int_equal(ol, lens[i]);
			assert_memory_equal(out, d, lens[i]);
			free(out);
		}
		free(z);
		free(d);
	}
}

static void test_members_and_trailing(void **state)
{
	uint8_t *a = sample(50000, 1), *b = sample(70000, 2), *za, *zb, *out;
	size_t la, lb, ol;
	const char *why = NULL;
	(void)state;
	za = gz(a, 50000, &la);
	zb = gz(b, 70000, &lb);
	for (size_t step = 1; step <= 65536; step *= 16) {
		/* two members, then bytes that are not a member (two of a magic) */
		uint8_t *cat = malloc(la + lb + 2);
		memcpy(cat, za, la);
		memcpy(cat + la, zb, lb);
		cat[la + lb] = 0x1f;
		cat[la + lb + 1] = 0x8b;
		assert_int_equal(all(cat, la + lb + 2, step, 4096, &out, &ol, &why), 0);
		assert_int_equal(ol, 120000);
		assert_memory_equal(out, a, 50000);
		assert_memory_equal(out + 50000, b, 70000);
		free(out);
		/* one member and text after it */
		memcpy(cat + la, "trailing", 8);
		assert_int_equal(all(cat, la + 8, step, 4096, &out, &ol, &why), 0);
		assert_int_equal(ol, 50000);
		free(out);
		free(cat);
	}
	assert_false(gunzip_magic((const uint8_t *)"\x1f\x8b", 2));
	assert_false(gunzip_magic((const uint8_t *)"\x1f\x8b\x07", 3));
	free(a); free(b); free(za); free(zb);
}

static void test_errors(void **state)
{
	uint8_t *d = sample(200000, 3), *z, *out;
	size_t zl, ol;
	const char *why;
	(void)state;
	z = gz(d, 200000, &zl);
	/* cut in the header, the data, the trailer (CRC-32, then size) */
	const size_t cuts[] = { 5, 12, 1000, zl - 6, zl - 1 };
	for (size_t i = 0; i < 5; i++) {
		why = NULL;
		assert_int_equal(all(z, cuts[i], 4096, 65536, &out, &ol, &why), -EBADMSG);
		assert_non_null(why);
		assert_non_null(strstr(why, "unexpected end of data"));
		free(out);
	}
	/* the whole stream, a bit of its CRC-32 flipped */
	z[zl - 8] ^= 1;
	why = NULL;
	assert_int_equal(all(z, zl, 4096, 65536, &out, &ol, &why), -EBADMSG);
	assert_non_null(why);
	assert_non_null(strstr(why, "CRC-32"));
	free(out);
	z[zl - 8] ^= 1;
	/* the size in the trailer flipped */
	z[zl - 4] ^= 1;
	why = NULL;
	assert_int_equal(all(z, zl, 4096, 65536, &out, &ol, &why), -EBADMSG);
	assert_non_null(why);
	free(out);
	z[zl - 4] ^= 1;
	/* a reader that stops early (tar's end marker): gunzip_finish reads
	 * the rest and finds the trailer good, or bad */
	for (int bad = 0; bad < 2; bad++) {
		struct src sr = { .p = z, .len = zl, .step = 4096 };
		struct gunzip *g = gunzip_new(pull, &sr);
		uint8_t first[100];
		z[zl - 8] ^= (uint8_t)bad;
		why = NULL;
		assert_int_equal(gunzip_read(g, first, sizeof(first), &why), (ssize_t)sizeof(first));
		assert_memory_equal(first, d, sizeof(first));
		assert_int_equal(gunzip_finish(g, &why), bad ? -EBADMSG : 0);
		if (bad)
			assert_non_null(strstr(why, "trailer"));
		assert_int_equal(sr.off, zl);
		gunzip_free(g);
		z[zl - 8] ^= (uint8_t)bad;
	}
	/* a damaged deflate stream */
	for (size_t k = 20; k < 60; k++)
		z[k] ^= 0x5a;
	why = NULL;
	assert_int_equal(all(z, zl, 4096, 65536, &out, &ol, &why), -EBADMSG);
	assert_non_null(strstr(why, "gzip:"));
	free(out);
	free(z);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_members_and_trailing),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests_name("gunzip", tests, NULL, NULL);
}
