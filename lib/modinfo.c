#include "lib/modinfo.h"

#include <archive.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"

struct elf {
	const uint8_t *p;
	size_t len;
	bool is64, be;
};

static uint64_t rd(const struct elf *f, size_t off, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++) {
		unsigned shift = f->be ? 8 * (n - 1 - i) : 8 * i;
		v |= (uint64_t)f->p[off + i] << shift;
	}
	return v;
}

struct shdr {
	uint64_t name, offset, size;
};

static int get_shdr(const struct elf *f, uint64_t shoff, uint64_t entsize, uint64_t i,
		    struct shdr *s)
{
	uint64_t at = shoff + i * entsize;
	if (at > f->len || f->len - at < entsize)
		return -1;
	s->name = rd(f, at, 4);
	if (f->is64) {
		s->offset = rd(f, at + 24, 8);
		s->size = rd(f, at + 32, 8);
	} else {
		s->offset = rd(f, at + 16, 4);
		s->size = rd(f, at + 20, 4);
	}
	if (s->offset > f->len || f->len - s->offset < s->size)
		return -1;
	return 0;
}

static int add_entry(struct modinfo *mi, const char *s, size_t len)
{
	const char *eq = memchr(s, '=', len);
	char **k, **v;

	if (!eq)
		return 0;
	k = realloc(mi->keys, (mi->n + 1) * sizeof(*k));
	if (!k)
		return -ENOMEM;
	mi->keys = k;
	v = realloc(mi->values, (mi->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	mi->values = v;
	mi->keys[mi->n] = strndup(s, (size_t)(eq - s));
	mi->values[mi->n] = strndup(eq + 1, len - (size_t)(eq - s) - 1);
	if (!mi->keys[mi->n] || !mi->values[mi->n]) {
		free(mi->keys[mi->n]);
		free(mi->values[mi->n]);
		return -ENOMEM;
	}
	mi->n++;
	return 0;
}

int elf_section(const void *buf, size_t len, const char *name, const char *section,
		size_t *off, size_t *size, ingot_error *e)
{
	struct elf f = { .p = buf, .len = len };
	uint64_t shoff, shentsize, shnum, shstrndx;
	struct shdr strs, s;

	if (len < 52 || memcmp(buf, "\177ELF", 4) != 0)
		return ingot_fail(e, -EINVAL, "%s: not an ELF file (no \\177ELF magic)", name);
	if (f.p[4] != 1 && f.p[4] != 2)
		return ingot_fail(e, -EINVAL, "%s: ELF class %u, expected 1 or 2", name, f.p[4]);
	if (f.p[5] != 1 && f.p[5] != 2)
		return ingot_fail(e, -EINVAL, "%s: ELF data encoding %u, expected 1 or 2", name, f.p[5]);
	f.is64 = f.p[4] == 2;
	f.be = f.p[5] == 2;
	if (f.is64 && len < 64)
		return ingot_fail(e, -EINVAL, "%s: truncated ELF header", name);
	shoff = f.is64 ? rd(&f, 40, 8) : rd(&f, 32, 4);
	shentsize = rd(&f, f.is64 ? 58 : 46, 2);
	shnum = rd(&f, f.is64 ? 60 : 48, 2);
	shstrndx = rd(&f, f.is64 ? 62 : 50, 2);
	if (shentsize < (f.is64 ? 64u : 40u) || shnum == 0 || shstrndx >= shnum)
		return ingot_fail(e, -EINVAL, "%s: ELF section header table missing or malformed", name);
	if (get_shdr(&f, shoff, shentsize, shstrndx, &strs) < 0)
		return ingot_fail(e, -EINVAL, "%s: ELF section headers point outside the file", name);

	for (uint64_t i = 1; i < shnum; i++) {
		const char *sname;
		if (get_shdr(&f, shoff, shentsize, i, &s) < 0)
			return ingot_fail(e, -EINVAL, "%s: ELF section %llu points outside the file", name,
					  (unsigned long long)i);
		if (s.name >= strs.size)
			continue;
		sname = (const char *)f.p + strs.offset + s.name;
		if (!memchr(sname, '\0', strs.size - s.name) || strcmp(sname, section) != 0)
			continue;
		*off = (size_t)s.offset;
		*size = (size_t)s.size;
		return 0;
	}
	return ingot_fail(e, -ENOENT, "%s: no %s section", name, section);
}

int modinfo_parse(const void *buf, size_t len, const char *name, struct modinfo *mi,
		  ingot_error *e)
{
	const char *p, *end;
	size_t off, size;
	int r;

	memset(mi, 0, sizeof(*mi));
	r = elf_section(buf, len, name, ".modinfo", &off, &size, e);
	if (r == -ENOENT)
		return ingot_fail(e, -ENOENT, "%s: no .modinfo section: not a kernel module", name);
	if (r < 0)
		return r;
	p = (const char *)buf + off;
	end = p + size;
	while (p < end) {
		const char *z = memchr(p, '\0', (size_t)(end - p));
		size_t n = z ? (size_t)(z - p) : (size_t)(end - p);
		if (n > 0 && add_entry(mi, p, n) < 0) {
			modinfo_free(mi);
			return ingot_fail(e, -ENOMEM, "%s: out of memory", name);
		}
		p += n + 1;
	}
	return 0;
}

/* Decompress a .ko.{xz,zst,gz} with libarchive's raw format. */
static int read_compressed(const char *path, char **out, size_t *outlen, ingot_error *e)
{
	struct archive *a = archive_read_new();
	struct archive_entry *ent;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int r = 0;

	if (!a)
		return ingot_fail(e, -ENOMEM, "%s: out of memory", path);
	archive_read_support_filter_all(a);
	archive_read_support_format_raw(a);
	if (archive_read_open_filename(a, path, 65536) != ARCHIVE_OK ||
	    archive_read_next_header(a, &ent) != ARCHIVE_OK) {
		r = ingot_fail(e, -EINVAL, "%s: cannot read: %s", path, archive_error_string(a));
		goto out;
	}
	for (;;) {
		la_ssize_t n;
		if (cap - len < 65536) {
			char *nb;
			if (cap >= MODINFO_MAX_BYTES) {
				r = ingot_fail(e, -EFBIG, "%s: module larger than %zu bytes", path,
					       MODINFO_MAX_BYTES);
				goto out;
			}
			nb = realloc(buf, cap ? cap * 2 : 1 << 20);
			if (!nb) {
				r = ingot_fail(e, -ENOMEM, "%s: out of memory", path);
				goto out;
			}
			buf = nb;
			cap = cap ? cap * 2 : 1 << 20;
		}
		n = archive_read_data(a, buf + len, cap - len);
		if (n < 0) {
			r = ingot_fail(e, -EIO, "%s: cannot decompress: %s", path, archive_error_string(a));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*out = buf;
	*outlen = len;
	buf = NULL;
out:
	free(buf);
	archive_read_free(a);
	return r;
}

int modinfo_load(const char *path, struct modinfo *mi, ingot_error *e)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;
	int r;

	memset(mi, 0, sizeof(*mi));
	r = read_file(path, MODINFO_MAX_BYTES, &buf, &len, e);
	if (r < 0)
		return r;
	if (len < 4 || memcmp(buf, "\177ELF", 4) != 0) {
		free(buf);
		buf = NULL;
		r = read_compressed(path, &buf, &len, e);
		if (r < 0)
			return r;
	}
	return modinfo_parse(buf, len, path, mi, e);
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
