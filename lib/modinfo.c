#include "lib/modinfo.h"

#include <archive.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/xalloc.h"

/* The ELF file header fields a section lookup needs. */
struct elf_hdr {
	bool is64, be;
	uint64_t shoff, shentsize, shnum, shstrndx;
};

struct shdr {
	uint64_t name, offset, size;
};

static uint64_t rd(const uint8_t *p, bool be, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (be ? 8 * (n - 1 - i) : 8 * i);
	return v;
}

/* len: bytes available at p (52 are enough to tell the class; ELF64 needs 64). */
static int parse_ehdr(const uint8_t *p, size_t len, const char *name, struct elf_hdr *h,
		      ingot_error *e)
{
	if (len < 52 || memcmp(p, "\177ELF", 4) != 0)
		return ingot_fail(e, -EINVAL, "%s: not an ELF file (no \\177ELF magic)", name);
	if (p[4] != 1 && p[4] != 2)
		return ingot_fail(e, -EINVAL, "%s: ELF class %u, expected 1 or 2", name, p[4]);
	if (p[5] != 1 && p[5] != 2)
		return ingot_fail(e, -EINVAL, "%s: ELF data encoding %u, expected 1 or 2", name, p[5]);
	h->is64 = p[4] == 2;
	h->be = p[5] == 2;
	if (h->is64 && len < 64)
		return ingot_fail(e, -EINVAL, "%s: truncated ELF header", name);
	h->shoff = h->is64 ? rd(p + 40, h->be, 8) : rd(p + 32, h->be, 4);
	h->shentsize = rd(p + (h->is64 ? 58 : 46), h->be, 2);
	h->shnum = rd(p + (h->is64 ? 60 : 48), h->be, 2);
	h->shstrndx = rd(p + (h->is64 ? 62 : 50), h->be, 2);
	if (h->shentsize != (h->is64 ? 64u : 40u) || h->shnum == 0 || h->shstrndx >= h->shnum)
		return ingot_fail(e, -EINVAL, "%s: ELF section header table missing or malformed", name);
	return 0;
}

static void parse_shdr(const struct elf_hdr *h, const uint8_t *at, struct shdr *s)
{
	s->name = rd(at, h->be, 4);
	s->offset = h->is64 ? rd(at + 24, h->be, 8) : rd(at + 16, h->be, 4);
	s->size = h->is64 ? rd(at + 32, h->be, 8) : rd(at + 20, h->be, 4);
}

/* Section i of a table held in buf; -1 when it (or its bytes) lie outside len. */
static int get_shdr(const struct elf_hdr *h, const uint8_t *buf, size_t len, uint64_t i,
		    struct shdr *s)
{
	uint64_t at = h->shoff + i * h->shentsize;
	if (at > len || len - at < h->shentsize)
		return -1;
	parse_shdr(h, buf + at, s);
	if (s->offset > len || len - s->offset < s->size)
		return -1;
	return 0;
}

/* Does the NUL-terminated name at strs[off] (strs of size n) equal want? */
static bool name_is(const uint8_t *strs, uint64_t n, uint64_t off, const char *want)
{
	size_t wl = strlen(want);
	return off < n && n - off > wl && !memcmp(strs + off, want, wl + 1);
}

int elf_section(const void *buf, size_t len, const char *name, const char *section,
		size_t *off, size_t *size, ingot_error *e)
{
	const uint8_t *p = buf;
	struct elf_hdr h;
	struct shdr strs, s;
	int r = parse_ehdr(p, len, name, &h, e);

	if (r < 0)
		return r;
	/* The whole table in the file, as the streaming reader requires. */
	if (h.shoff > len || (len - h.shoff) / h.shentsize < h.shnum)
		return ingot_fail(e, -EINVAL, "%s: section header table at offset %llu (+%llu bytes) lies "
				  "beyond the end of the file", name, (unsigned long long)h.shoff,
				  (unsigned long long)(h.shnum * h.shentsize));
	if (get_shdr(&h, p, len, h.shstrndx, &strs) < 0)
		return ingot_fail(e, -EINVAL, "%s: ELF section headers point outside the file", name);
	for (uint64_t i = 1; i < h.shnum; i++) {
		if (get_shdr(&h, p, len, i, &s) < 0)
			return ingot_fail(e, -EINVAL, "%s: ELF section %llu points outside the file", name,
					  (unsigned long long)i);
		if (!name_is(p + strs.offset, strs.size, s.name, section))
			continue;
		*off = (size_t)s.offset;
		*size = (size_t)s.size;
		return 0;
	}
	return ingot_fail(e, -ENOENT, "%s: no %s section", name, section);
}

static void add_entry(struct modinfo *mi, const char *s, size_t len)
{
	const char *eq = memchr(s, '=', len);

	if (!eq)
		return;
	mi->keys = xrealloc(mi->keys, (mi->n + 1) * sizeof(*mi->keys));
	mi->values = xrealloc(mi->values, (mi->n + 1) * sizeof(*mi->values));
	mi->keys[mi->n] = xstrndup(s, (size_t)(eq - s));
	mi->values[mi->n] = xstrndup(eq + 1, len - (size_t)(eq - s) - 1);
	mi->n++;
}

/* The NUL-separated "key=value" strings of a .modinfo section. */
static void parse_entries(const char *p, size_t size, struct modinfo *mi)
{
	const char *end = p + size;
	while (p < end) {
		const char *z = memchr(p, '\0', (size_t)(end - p));
		size_t n = z ? (size_t)(z - p) : (size_t)(end - p);
		if (n > 0)
			add_entry(mi, p, n);
		p += n + 1;
	}
}

int modinfo_parse(const void *buf, size_t len, const char *name, struct modinfo *mi,
		  ingot_error *e)
{
	size_t off, size;
	int r;

	memset(mi, 0, sizeof(*mi));
	r = elf_section(buf, len, name, ".modinfo", &off, &size, e);
	if (r == -ENOENT)
		return ingot_fail(e, -ENOENT, "%s: no .modinfo section: not a kernel module", name);
	if (r < 0)
		return r;
	parse_entries((const char *)buf + off, size, mi);
	return 0;
}

/* A module read by offset: a plain .ko with pread, a .ko.{xz,zst,gz}
 * decompressed forward through libarchive's raw reader (a read behind the
 * position starts the stream again).  Only the bytes asked for are kept:
 * what lies between them passes through one 64 KiB buffer. */
struct ko_src {
	const char *path;
	int fd;                  /* plain ELF; -1 when compressed */
	struct archive *a;
	uint64_t pos;            /* decompressed bytes consumed */
	uint8_t skip[65536];
};

static void ko_close(struct ko_src *k)
{
	if (k->fd >= 0)
		close(k->fd);
	archive_read_free(k->a);
	free(k);
}

static int ko_restart(struct ko_src *k, ingot_error *e)
{
	struct archive_entry *ent;
	archive_read_free(k->a);
	k->pos = 0;
	if (!(k->a = archive_read_new()))
		return ingot_fail(e, -ENOMEM, "%s: out of memory", k->path);
	archive_read_support_filter_all(k->a);
	archive_read_support_format_raw(k->a);
	if (archive_read_open_filename(k->a, k->path, sizeof(k->skip)) != ARCHIVE_OK ||
	    archive_read_next_header(k->a, &ent) != ARCHIVE_OK)
		return ingot_fail(e, -EINVAL, "%s: cannot read: %s", k->path, archive_error_string(k->a));
	return 0;
}

static int ko_open(const char *path, struct ko_src **out, ingot_error *e)
{
	struct ko_src *k = xcalloc(1, sizeof(*k));
	uint8_t magic[4];
	int r;

	k->path = path;
	k->fd = open_regular(path, 0, NULL, e);
	if (k->fd < 0) {
		r = k->fd;
		free(k);
		return r;
	}
	if (pread(k->fd, magic, 4, 0) != 4 || memcmp(magic, "\177ELF", 4) != 0) {
		close(k->fd);
		k->fd = -1;
		if ((r = ko_restart(k, e)) < 0) {
			ko_close(k);
			return r;
		}
	}
	*out = k;
	return 0;
}

/* len bytes at off into buf; what names them in messages. */
static int ko_read_at(struct ko_src *k, uint64_t off, void *buf, size_t len, const char *what,
		      ingot_error *e)
{
	uint8_t *dst = buf;
	size_t got = 0;
	int r;

	if (off > MODINFO_MAX_BYTES || MODINFO_MAX_BYTES - off < len)
		return ingot_fail(e, -EFBIG, "%s: %s at offset %llu (+%zu bytes) lies beyond the "
				  "%zu-byte limit on modules", k->path, what, (unsigned long long)off,
				  len, MODINFO_MAX_BYTES);
	if (k->fd >= 0) {
		while (got < len) {
			ssize_t n = pread(k->fd, dst + got, len - got, (off_t)(off + got));
			if (n < 0)
				return ingot_fail(e, -errno, "%s: read: %s", k->path, strerror(errno));
			if (n == 0)
				break;
			got += (size_t)n;
		}
	} else {
		if (off < k->pos && (r = ko_restart(k, e)) < 0)
			return r;
		while (k->pos < off || got < len) {
			bool skipping = k->pos < off;
			uint64_t want = skipping ? off - k->pos : len - got;
			la_ssize_t n = archive_read_data(k->a, skipping ? k->skip : dst + got,
				want < sizeof(k->skip) || !skipping ? want : sizeof(k->skip));
			if (n < 0)
				return ingot_fail(e, -EIO, "%s: cannot decompress: %s", k->path,
						  archive_error_string(k->a));
			if (n == 0)
				break;
			k->pos += (uint64_t)n;
			if (!skipping)
				got += (size_t)n;
		}
	}
	if (got < len)
		return ingot_fail(e, -EINVAL, "%s: %s at offset %llu (+%zu bytes) lies beyond the end "
				  "of the file", k->path, what, (unsigned long long)off, len);
	return 0;
}

/* A section's bytes, refused when larger than max. */
static int ko_section(struct ko_src *k, const struct shdr *s, size_t max, const char *what,
		      uint8_t **out, ingot_error *e)
{
	if (s->size > max)
		return ingot_fail(e, -EFBIG, "%s: %s of %llu bytes: more than the %zu a module needs",
				  k->path, what, (unsigned long long)s->size, max);
	*out = xmalloc(s->size);
	return ko_read_at(k, s->offset, *out, s->size, what, e);
}

/* ELF header, section table, section names, .modinfo: read in that
 * order, each by offset, so memory is bounded by the caps, never by the
 * module's size. */
static int load_stream(struct ko_src *k, struct modinfo *mi, ingot_error *e)
{
	uint8_t eh[64];
	struct elf_hdr h;
	struct shdr strs, s;
	_cleanup_free_ uint8_t *table = NULL, *names = NULL, *info = NULL;
	int r;

	if ((r = ko_read_at(k, 0, eh, 52, "ELF header", e)) < 0)
		return r == -EINVAL ? ingot_fail(e, -EINVAL, "%s: not an ELF file (shorter than "
						 "an ELF header)", k->path) : r;
	if (eh[4] == 2 && (r = ko_read_at(k, 52, eh + 52, 12, "ELF header", e)) < 0)
		return r;
	if ((r = parse_ehdr(eh, eh[4] == 2 ? 64 : 52, k->path, &h, e)) < 0)
		return r;
	/* shnum < 2^16 entries of 64 bytes at most: the table is under 4 MiB. */
	size_t tlen = (size_t)(h.shnum * h.shentsize);
	table = xmalloc(tlen);
	if ((r = ko_read_at(k, h.shoff, table, tlen, "section header table", e)) < 0)
		return r;
	parse_shdr(&h, table + h.shstrndx * h.shentsize, &strs);
	if ((r = ko_section(k, &strs, MODINFO_SECTION_MAX, "section name table", &names, e)) < 0)
		return r;
	for (uint64_t i = 1; i < h.shnum; i++) {
		parse_shdr(&h, table + i * h.shentsize, &s);
		if (!name_is(names, strs.size, s.name, ".modinfo"))
			continue;
		if ((r = ko_section(k, &s, MODINFO_SECTION_MAX, ".modinfo section", &info, e)) < 0)
			return r;
		parse_entries((const char *)info, s.size, mi);
		return 0;
	}
	return ingot_fail(e, -ENOENT, "%s: no .modinfo section: not a kernel module", k->path);
}

int modinfo_load(const char *path, struct modinfo *mi, ingot_error *e)
{
	struct ko_src *k = NULL;
	int r;

	memset(mi, 0, sizeof(*mi));
	if ((r = ko_open(path, &k, e)) < 0)
		return r;
	r = load_stream(k, mi, e);
	ko_close(k);
	return r;
}

/* A release as uname -r prints it: 1-64 bytes of [A-Za-z0-9.+_~-]. */
static int release_word(const char *s, size_t max, char *out, size_t outlen)
{
	static const char ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.+_~-";
	size_t n = 0;

	while (n < max && s[n] && strchr(ok, s[n]))
		n++;
	if (!n || n >= outlen || n > 64 || (n < max && s[n] && s[n] != ' '))
		return -EINVAL;
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

int modinfo_vermagic_release(const char *vermagic, char *out, size_t outlen)
{
	return vermagic ? release_word(vermagic, strlen(vermagic), out, outlen) : -EINVAL;
}

int bzimage_release(const void *buf, size_t len, char *out, size_t outlen)
{
	const uint8_t *p = buf;
	uint64_t at;

	/* "HdrS" at 0x202, protocol version at 0x206, kernel_version at
	 * 0x20e: the string's offset less 0x200 (Documentation/arch/x86/boot.rst) */
	if (len < 0x210 || memcmp(p + 0x202, "HdrS", 4) || rd(p + 0x206, false, 2) < 0x200 ||
	    !(at = rd(p + 0x20e, false, 2)))
		return -ENOENT;
	at += 0x200;
	if (at >= len || !memchr(p + at, '\0', len - at))
		return -ENOENT;
	return release_word((const char *)p + at, len - at, out, outlen) < 0 ? -ENOENT : 0;
}

const char *modinfo_get(const struct modinfo *mi, const char *key)
{
	for (size_t i = 0; i < mi->n; i++)
		if (!strcmp(mi->keys[i], key))
			return mi->values[i];
	return NULL;
}

void modinfo_free(struct modinfo *mi)
{
	for (size_t i = 0; i < mi->n; i++) {
		free(mi->keys[i]);
		free(mi->values[i]);
	}
	free(mi->keys);
	free(mi->values);
	memset(mi, 0, sizeof(*mi));
}
