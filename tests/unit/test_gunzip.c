/* Units for builder/gunzip.c: gzip made by another implementation (zlib,
 * through libarchive's writer) comes out the same, read a byte at a time
 * or a block at a time; members back to back are all read; what follows
 * the last member and is not one is left; a cut anywhere, a wrong CRC-32
 * or size and a damaged stream are errors with a message, also when the
 * reader stopped before the end (gunzip_finish).  Headers: FEXTRA, FNAME
 * and FCOMMENT of any length, the buffer's size and more, cut at every
 * boundary, give the same bytes every time; reserved flag bits, another
 * method than deflate, a wrong FHCRC and a header cut anywhere are
 * refused, in any member, as gzip(1) refuses them.  Inflated ahead on a
 * thread (gunzip_ahead_*), every stream gives the same bytes and the same
 * error as through gunzip_read; a reader may stop it at any point. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/crc.h>

#include "builder/gunzip.h"

struct src {
	const uint8_t *p;
	size_t len, off, step;   /* step: most bytes a pull hands over */
	const size_t *cuts;      /* offsets no pull hands bytes across, rising */
	size_t ncuts;
};

static ssize_t pull(void *ctx, uint8_t *buf, size_t cap)
{
	struct src *s = ctx;
	size_t n = s->len - s->off;
	if (n > cap)
		n = cap;
	if (n > s->step)
		n = s->step;
	for (size_t i = 0; i < s->ncuts; i++)
		if (s->cuts[i] > s->off && s->cuts[i] - s->off < n)
			n = s->cuts[i] - s->off;
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
static int all_cut(const uint8_t *in, size_t len, size_t step, const size_t *cuts, size_t ncuts, size_t cap,
		   uint8_t **out, size_t *out_len, const char **why)
{
	struct src s = { .p = in, .len = len, .step = step, .cuts = cuts, .ncuts = ncuts };
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
	if (k < 0) {   /* *why may point into g */
		static char msg[256];
		snprintf(msg, sizeof(msg), "%s", *why);
		*why = msg;
	}
	gunzip_free(g);
	*out = buf;
	*out_len = n;
	return (int)k;
}

static int all(const uint8_t *in, size_t len, size_t step, size_t cap, uint8_t **out, size_t *out_len,
	       const char **why)
{
	return all_cut(in, len, step, NULL, 0, cap, out, out_len, why);
}

/* The same through gunzip_ahead, nbuf buffers of size bytes. */
static int all_ahead(const uint8_t *in, size_t len, size_t step, size_t size, unsigned nbuf, uint8_t **out,
		     size_t *out_len, const char **why)
{
	struct src s = { .p = in, .len = len, .step = step };
	struct gunzip *g = gunzip_new(pull, &s);
	struct gunzip_ahead *a;
	size_t n = 0;
	uint8_t *buf = malloc(len * 8 + 65536);   /* these samples inflate to less */
	const uint8_t *p;
	ssize_t k;
	assert_non_null(g);
	assert_non_null(buf);
	assert_non_null(a = gunzip_ahead_start(g, size, nbuf));
	while ((k = gunzip_ahead_read(a, &p, why)) > 0) {
		assert_true((size_t)k <= size);
		memcpy(buf + n, p, (size_t)k);
		n += (size_t)k;
	}
	if (k < 0) {
		static char msg[256];
		snprintf(msg, sizeof(msg), "%s", *why);
		*why = msg;
	}
	/* after the end, the end again */
	assert_int_equal(gunzip_ahead_read(a, &p, why), k);
	gunzip_ahead_stop(a);
	gunzip_free(g);
	*out = buf;
	*out_len = n;
	return (int)k;
}

static void test_ahead(void **state)
{
	uint8_t *a = sample(300000, 11), *b = sample(70000, 12), *za, *zb, *cat;
	size_t la, lb;
	static const struct { size_t size; unsigned nbuf; } rings[] = { { 1000, 2 }, { 65536, 4 }, { 1, 3 } };
	(void)state;
	za = gz(a, 300000, &la);
	zb = gz(b, 70000, &lb);
	assert_non_null(cat = malloc(la + lb + 2));
	memcpy(cat, za, la);
	memcpy(cat + la, zb, lb);
	memcpy(cat + la + lb, "x!", 2);
	/* good, two members and trailing bytes, cut, bad CRC-32, damaged */
	for (int v = 0; v < 5; v++) {
		size_t len = v == 0 ? la : v == 2 ? la / 2 : la + lb + 2;
		if (v == 3)
			cat[la - 8] ^= 1;
		if (v == 4)
			for (size_t k = 20; k < 60; k++)
				cat[k] ^= 0x5a;
		for (size_t r = 0; r < 3; r++) {
			uint8_t *o1, *o2;
			size_t l1, l2;
			const char *w1 = NULL, *w2 = NULL;
			int r1 = all(cat, len, 4096, rings[r].size, &o1, &l1, &w1);
			char msg[256] = "";
			if (r1 < 0)
				snprintf(msg, sizeof(msg), "%s", w1);
			int r2 = all_ahead(cat, len, 4096, rings[r].size, rings[r].nbuf, &o2, &l2, &w2);
			assert_int_equal(r1, r2);
			assert_int_equal(l1, l2);
			assert_memory_equal(o1, o2, l1);
			if (r1 < 0)
				assert_string_equal(msg, w2);
			else
				assert_int_equal(l1, v == 0 ? 300000 : 370000);
			free(o1);
			free(o2);
		}
		if (v == 3)
			cat[la - 8] ^= 1;
	}
	/* a reader that stops early: finish reads the rest (good, or a bad
	 * trailer); or stops the thread while it waits on a full ring, and
	 * g is the caller's again, where the thread left it */
	for (int bad = 0; bad < 2; bad++) {
		struct src sr = { .p = za, .len = la, .step = 4096 };
		struct gunzip *g = gunzip_new(pull, &sr);
		struct gunzip_ahead *ah;
		const uint8_t *p;
		const char *why = NULL;
		za[la - 8] ^= (uint8_t)bad;
		assert_non_null(ah = gunzip_ahead_start(g, 100, 2));
		assert_int_equal(gunzip_ahead_read(ah, &p, &why), 100);
		assert_memory_equal(p, a, 100);
		assert_int_equal(gunzip_ahead_finish(ah, &why), bad ? -EBADMSG : 0);
		if (bad)
			assert_non_null(strstr(why, "trailer"));
		assert_int_equal(sr.off, la);
		gunzip_ahead_stop(ah);
		gunzip_free(g);
		za[la - 8] ^= (uint8_t)bad;
	}
	{
		struct src sr = { .p = za, .len = la, .step = 4096 };
		struct gunzip *g = gunzip_new(pull, &sr);
		struct gunzip_ahead *ah;
		const uint8_t *p;
		const char *why = NULL;
		uint8_t rest[4096];
		size_t got = 100;
		ssize_t k;
		assert_non_null(ah = gunzip_ahead_start(g, 100, 2));
		assert_int_equal(gunzip_ahead_read(ah, &p, &why), 100);
		gunzip_ahead_stop(ah);
		/* the thread inflated at most two buffers more than were read */
		while ((k = gunzip_read(g, rest, sizeof(rest), &why)) > 0)
			got += (size_t)k;
		assert_int_equal(k, 0);
		assert_true(got >= 300000 - 200 && got <= 300000);
		gunzip_free(g);
	}
	gunzip_ahead_stop(NULL);
	assert_null(gunzip_ahead_start(NULL, 100, 1));
	free(a); free(b); free(za); free(zb); free(cat);
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
		/* two members, then bytes that are not a member (half a magic) */
		uint8_t *cat = malloc(la + lb + 2);
		memcpy(cat, za, la);
		memcpy(cat + la, zb, lb);
		cat[la + lb] = 0x1f;
		cat[la + lb + 1] = 0x8a;
		assert_int_equal(all(cat, la + lb + 2, step, 4096, &out, &ol, &why), 0);
		assert_int_equal(ol, 120000);
		assert_memory_equal(out, a, 50000);
		assert_memory_equal(out + 50000, b, 70000);
		free(out);
		/* a magic starts a member, which must then be whole (gzip(1)) */
		cat[la + lb + 1] = 0x8b;
		assert_int_equal(all(cat, la + lb + 2, step, 4096, &out, &ol, &why), -EBADMSG);
		assert_non_null(strstr(why, "member 3"));
		free(out);
		/* one member and text after it */
		memcpy(cat + la, "trailing", 8);
		assert_int_equal(all(cat, la + 8, step, 4096, &out, &ol, &why), 0);
		assert_int_equal(ol, 50000);
		free(out);
		free(cat);
	}
	assert_false(gunzip_magic((const uint8_t *)"\x1f", 1));
	assert_true(gunzip_magic((const uint8_t *)"\x1f\x8b", 2));
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

/* A member of data whose header has FLG flg and fields of these lengths
 * (xlen bytes of FEXTRA, FNAME and FCOMMENT of name and comment bytes and
 * their NUL; FHCRC right); *fields: where each field starts, then the
 * deflate data (5 offsets). */
#define IN_BUF (256u << 10)
static uint8_t *member(uint8_t flg, size_t xlen, size_t name, size_t comment, const uint8_t *data, size_t len,
		       size_t *out_len, size_t fields[5])
{
	size_t zl, n = 0;
	uint8_t *z = gz(data, len, &zl);
	uint8_t *m = malloc(12 + xlen + name + 1 + comment + 1 + 2 + zl);
	uint32_t crc;
	assert_non_null(m);
	memcpy(m, z, 10);
	m[3] = flg;
	n = 10;
	fields[0] = n;
	if (flg & 0x04) {
		m[n++] = (uint8_t)xlen;
		m[n++] = (uint8_t)(xlen >> 8);
		for (size_t i = 0; i < xlen; i++)
			m[n++] = (uint8_t)(i * 7 + 1);
	}
	fields[1] = n;
	if (flg & 0x08) {
		memset(m + n, 'n', name);
		n += name;
		m[n++] = 0;
	}
	fields[2] = n;
	if (flg & 0x10) {
		memset(m + n, 'c', comment);
		n += comment;
		m[n++] = 0;
	}
	fields[3] = n;
	if (flg & 0x02) {
		crc = crc32_gzip_refl(0, m, n);
		m[n++] = (uint8_t)crc;
		m[n++] = (uint8_t)(crc >> 8);
	}
	fields[4] = n;
	memcpy(m + n, z + 10, zl - 10);
	*out_len = n + zl - 10;
	free(z);
	return m;
}

/* A header longer than the buffer, and fields that end on, before and
 * after its size, read with pulls cut at each field's edges and around
 * each multiple of the buffer, and a byte at a time through the header:
 * the data, every time. */
static void test_long_header_fields(void **state)
{
	static const struct { uint8_t flg; size_t xlen, name, comment; } hs[] = {
		{ 0x08, 0, 1 << 20, 0 },                            /* the reported 1 MiB FNAME */
		{ 0x1e, 65535, IN_BUF - 65535 - 12 - 1, 3 },         /* FNAME ends at the buffer's end */
		{ 0x1e, 65535, IN_BUF - 65535 - 12, IN_BUF },       /* ... one byte after it */
		{ 0x1e, 65535, IN_BUF - 65535 - 12 - 2, IN_BUF + 1 },
		{ 0x14, 65535, 0, 3 * IN_BUF },
		{ 0x1e, 0, 0, 0 },                                  /* empty fields */
		{ 0x1e, 1, 1, 1 },
	};
	uint8_t *d = sample(70000, 11), *out;
	size_t ol;
	const char *why;
	(void)state;
	for (size_t h = 0; h < sizeof(hs) / sizeof(hs[0]); h++) {
		size_t ml, f[5], cuts[64], nc = 0;
		uint8_t *m = member(hs[h].flg, hs[h].xlen, hs[h].name, hs[h].comment, d, 70000, &ml, f);
		for (size_t i = 0; i < 5; i++)
			for (size_t k = f[i] > 2 ? f[i] - 2 : 0; k <= f[i] + 2; k++)
				cuts[nc++] = k;
		for (size_t b = IN_BUF; b < f[4] + IN_BUF && nc + 3 <= 64; b += IN_BUF)
			for (size_t k = b - 1; k <= b + 1; k++)
				cuts[nc++] = k;
		/* cut at every edge at once, then at each one alone */
		for (size_t c = 0; c <= nc; c++) {
			why = NULL;
			assert_int_equal(all_cut(m, ml, SIZE_MAX, c ? cuts + c - 1 : cuts, c ? 1 : nc, 65536, &out, &ol, &why), 0);
			assert_null(why);
			assert_int_equal(ol, 70000);
			assert_memory_equal(out, d, 70000);
			free(out);
		}
		static const size_t steps[] = { 1, 3, 4095, IN_BUF - 1, IN_BUF, IN_BUF + 1 };
		for (size_t s = 0; s < 6; s++) {
			if (steps[s] < 16 && f[4] > 300000)
				continue;   /* a byte at a time: the short headers */
			assert_int_equal(all(m, ml, steps[s], 4096, &out, &ol, &why), 0);
			assert_int_equal(ol, 70000);
			assert_memory_equal(out, d, 70000);
			free(out);
		}
		/* the header cut anywhere: refused */
		for (size_t i = 0; i < 5; i++) {
			size_t at[] = { f[i], f[i] + 1, f[i] ? f[i] - 1 : 0 };
			for (size_t k = 0; k < 3; k++) {
				if (at[k] >= f[4])
					continue;
				why = NULL;
				assert_int_equal(all(m, at[k], 4096, 4096, &out, &ol, &why), -EBADMSG);
				assert_non_null(strstr(why, "unexpected end of data"));
				free(out);
			}
		}
		free(m);
	}
	free(d);
}

/* Header fields that gzip(1) refuses are refused, in the first member or
 * a later one, each with its reason. */
static void test_strict_header(void **state)
{
	uint8_t *d = sample(5000, 13), *out, *two;
	size_t ml, f[5], ol;
	const char *why;
	uint8_t *m = member(0x1e, 9, 5, 7, d, 5000, &ml, f);
	(void)state;
	assert_int_equal(all(m, ml, 4096, 4096, &out, &ol, &why), 0);
	assert_int_equal(ol, 5000);
	free(out);
	two = malloc(2 * ml + 3);
	assert_non_null(two);
	for (int second = 0; second < 2; second++) {
		uint8_t *x = second ? two + ml : two;
		size_t tl = second ? 2 * ml : ml;
		memcpy(two, m, ml);
		memcpy(two + ml, m, ml);
		/* crc: the FHCRC made again, so that only the field is wrong */
		const struct { size_t at; uint8_t xor; bool crc; const char *why; } bad[] = {
			{ 3, 0x20, true, "reserved flag bits set (FLG 0x3e" },
			{ 3, 0x40, true, "reserved flag bits set (FLG 0x5e" },
			{ 3, 0x80, true, "reserved flag bits set (FLG 0x9e" },
			{ 2, 0x0f, true, "compression method 7, expected 8" },
			{ 2, 0x08, true, "compression method 0, expected 8" },
			{ f[3], 0x01, false, "CRC-16 (FHCRC)" },
			{ f[3] + 1, 0x80, false, "CRC-16 (FHCRC)" },
			{ f[1], 'x', false, "CRC-16 (FHCRC)" },   /* a name byte: the header CRC says so */
			{ f[0], 0x01, false, "CRC-16 (FHCRC)" },  /* XLEN 8: FEXTRA ends a byte early */
		};
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			x[bad[i].at] ^= bad[i].xor;
			if (bad[i].crc) {
				uint32_t c = crc32_gzip_refl(0, x, f[3]);
				x[f[3]] = (uint8_t)c;
				x[f[3] + 1] = (uint8_t)(c >> 8);
			}
			why = NULL;
			assert_int_equal(all(two, tl, 4096, 4096, &out, &ol, &why), -EBADMSG);
			assert_non_null(why);
			assert_non_null(strstr(why, bad[i].why));
			assert_non_null(strstr(why, second ? "member 2" : "member 1"));
			free(out);
			memcpy(x, m, ml);
		}
		/* FEXTRA longer than the input */
		x[f[0]] = 0xff;
		x[f[0] + 1] = 0xff;
		assert_int_equal(all(two, tl, 4096, 4096, &out, &ol, &why), -EBADMSG);
		assert_non_null(strstr(why, "FEXTRA"));
		assert_non_null(strstr(why, "unexpected end of data"));
		free(out);
		memcpy(x, m, ml);
		/* the header cut at every byte */
		for (size_t k = (size_t)second; k < f[4]; k++) {   /* k 0 of member 2: one whole member */
			why = NULL;
			assert_int_equal(all(two, (size_t)(x - two) + k, 4096, 4096, &out, &ol, &why), -EBADMSG);
			assert_non_null(strstr(why, "unexpected end of data"));
			free(out);
		}
	}
	/* after a member, as gzip(1): zero bytes and other bytes are left
	 * (trailing garbage), a lone non-zero byte is refused */
	const struct { const char *tail; size_t n; int r; } tails[] = {
		{ "\0\0\0", 3, 0 }, { "xyz", 3, 0 }, { "\0", 1, 0 }, { "x", 1, -EBADMSG }, { "\x1f", 1, -EBADMSG },
	};
	for (size_t i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
		memcpy(two + ml, tails[i].tail, tails[i].n);
		assert_int_equal(all(two, ml + tails[i].n, 4096, 4096, &out, &ol, &why), tails[i].r);
		if (!tails[i].r)
			assert_int_equal(ol, 5000);
		free(out);
	}
	free(two);
	free(m);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_members_and_trailing),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_long_header_fields),
		cmocka_unit_test(test_strict_header),
		cmocka_unit_test(test_ahead),
	};
	return cmocka_run_group_tests_name("gunzip", tests, NULL, NULL);
}
