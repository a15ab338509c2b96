/* PE header parsing and the Authenticode image hash (see authenticode.h). */
#include "attest/authenticode.h"

#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/le.h"

#define DOS_LFANEW 0x3c
#define COFF_SIZE 20
#define OPT_MAGIC_PE32 0x10b
#define OPT_MAGIC_PE32PLUS 0x20b
#define DIR_SECURITY 4

int pe_parse(const void *buf, size_t len, const char *name, struct pe_image *pe, ingot_error *e)
{
	const uint8_t *p = buf;
	size_t lfanew, dirs_off, ndirs;
	uint16_t magic;

	memset(pe, 0, sizeof(*pe));
	if (len < 0x40 || p[0] != 'M' || p[1] != 'Z')
		return ingot_fail(e, -EINVAL, "%s: expected a PE image (MZ header), got none", name);
	lfanew = le_get(p + DOS_LFANEW, 4);
	if (lfanew > len || len - lfanew < 4 + COFF_SIZE || memcmp(p + lfanew, "PE\0\0", 4))
		return ingot_fail(e, -EINVAL, "%s: expected a PE signature at offset %zu, got none", name, lfanew);
	pe->coff_off = lfanew + 4;
	pe->nsections = (uint16_t)le_get(p + pe->coff_off + 2, 2);
	pe->symtab_off = (uint32_t)le_get(p + pe->coff_off + 8, 4);
	pe->opt_size = le_get(p + pe->coff_off + 16, 2);
	pe->opt_off = pe->coff_off + COFF_SIZE;
	if (pe->opt_size < 2 || pe->opt_size > len - pe->opt_off)
		return ingot_fail(e, -EINVAL, "%s: optional header: expected it inside the file, got size %zu",
				  name, pe->opt_size);
	magic = (uint16_t)le_get(p + pe->opt_off, 2);
	if (magic == OPT_MAGIC_PE32PLUS) {
		dirs_off = pe->opt_off + 112;
		ndirs = pe->opt_size >= 112 ? le_get(p + pe->opt_off + 108, 4) : 0;
	} else if (magic == OPT_MAGIC_PE32) {
		dirs_off = pe->opt_off + 96;
		ndirs = pe->opt_size >= 96 ? le_get(p + pe->opt_off + 92, 4) : 0;
	} else {
		return ingot_fail(e, -EINVAL, "%s: optional header magic: expected 0x10b or 0x20b, got 0x%x", name, magic);
	}
	if (pe->opt_size < dirs_off - pe->opt_off || ndirs > (pe->opt_size - (dirs_off - pe->opt_off)) / 8)
		return ingot_fail(e, -EINVAL, "%s: optional header: %zu data directories do not fit in %zu bytes",
				  name, ndirs, pe->opt_size);
	pe->sect_align = (uint32_t)le_get(p + pe->opt_off + 32, 4);
	pe->file_align = (uint32_t)le_get(p + pe->opt_off + 36, 4);
	pe->size_of_image = (uint32_t)le_get(p + pe->opt_off + 56, 4);
	pe->size_of_headers = (uint32_t)le_get(p + pe->opt_off + 60, 4);
	pe->checksum_off = pe->opt_off + 64;
	if (ndirs > DIR_SECURITY) {
		pe->secdir_off = dirs_off + 8 * DIR_SECURITY;
		pe->cert_off = (uint32_t)le_get(p + pe->secdir_off, 4);
		pe->cert_size = (uint32_t)le_get(p + pe->secdir_off + 4, 4);
		if (pe->cert_size && (pe->cert_off > len || pe->cert_size > len - pe->cert_off))
			return ingot_fail(e, -EINVAL, "%s: certificate table: expected it inside the file, got %u+%u",
					  name, pe->cert_off, pe->cert_size);
	}
	pe->sections_off = pe->opt_off + pe->opt_size;
	if (pe->nsections > PE_MAX_SECTIONS ||
	    (size_t)pe->nsections * PE_SECTION_HEADER > len - pe->sections_off)
		return ingot_fail(e, -EINVAL, "%s: section table: expected at most %d sections inside the file, got %u",
				  name, PE_MAX_SECTIONS, pe->nsections);
	if (pe->size_of_headers > len || pe->size_of_headers < pe->sections_off + (size_t)pe->nsections * PE_SECTION_HEADER)
		return ingot_fail(e, -EINVAL, "%s: SizeOfHeaders: expected it to cover the section table, got %u",
				  name, pe->size_of_headers);
	for (unsigned i = 0; i < pe->nsections; i++) {
		const uint8_t *h = p + pe->sections_off + (size_t)i * PE_SECTION_HEADER;
		struct pe_section *s = &pe->sections[i];
		memcpy(s->name, h, 8);
		s->vsize = (uint32_t)le_get(h + 8, 4);
		s->vaddr = (uint32_t)le_get(h + 12, 4);
		s->raw_size = (uint32_t)le_get(h + 16, 4);
		s->raw_off = (uint32_t)le_get(h + 20, 4);
		s->characteristics = (uint32_t)le_get(h + 36, 4);
		if (s->raw_size && (s->raw_off > len || s->raw_size > len - s->raw_off))
			return ingot_fail(e, -EINVAL, "%s: section %s: expected its data inside the file, got %u+%u",
					  name, s->name, s->raw_off, s->raw_size);
	}
	return 0;
}

const struct pe_section *pe_section_find(const struct pe_image *pe, const char *name)
{
	for (unsigned i = 0; i < pe->nsections; i++)
		if (!strcmp(pe->sections[i].name, name))
			return &pe->sections[i];
	return NULL;
}

static int by_raw_off(const void *a, const void *b)
{
	const struct pe_section *x = *(const struct pe_section *const *)a;
	const struct pe_section *y = *(const struct pe_section *const *)b;
	return x->raw_off < y->raw_off ? -1 : x->raw_off > y->raw_off;
}

int authenticode_digest(const void *buf, size_t len, const char *name, const EVP_MD *md,
			uint8_t *out, ingot_error *e)
{
	const uint8_t *p = buf;
	const struct pe_section *order[PE_MAX_SECTIONS];
	struct pe_image pe;
	EVP_MD_CTX *ctx;
	size_t n = 0, end, hashed;
	int ok, r;

	if ((r = pe_parse(buf, len, name, &pe, e)) < 0)
		return r;
	for (unsigned i = 0; i < pe.nsections; i++)
		if (pe.sections[i].raw_size)
			order[n++] = &pe.sections[i];
	qsort(order, n, sizeof(*order), by_raw_off);
	/* Bytes after the last section belong to the hash unless they are
	 * the certificate table, which is excluded (it holds the signature). */
	end = pe.cert_size ? pe.cert_off : len;
	hashed = pe.size_of_headers;
	if (!(ctx = EVP_MD_CTX_new()))
		return ingot_fail(e, -ENOMEM, "out of memory");
	ok = EVP_DigestInit_ex(ctx, md, NULL) &&
	     EVP_DigestUpdate(ctx, p, pe.checksum_off) &&
	     (pe.secdir_off ?
	      EVP_DigestUpdate(ctx, p + pe.checksum_off + 4, pe.secdir_off - pe.checksum_off - 4) &&
	      EVP_DigestUpdate(ctx, p + pe.secdir_off + 8, pe.size_of_headers - pe.secdir_off - 8) :
	      EVP_DigestUpdate(ctx, p + pe.checksum_off + 4, pe.size_of_headers - pe.checksum_off - 4));
	for (size_t i = 0; ok && i < n; i++) {
		ok = EVP_DigestUpdate(ctx, p + order[i]->raw_off, order[i]->raw_size);
		if (order[i]->raw_off + (size_t)order[i]->raw_size > hashed)
			hashed = order[i]->raw_off + (size_t)order[i]->raw_size;
	}
	if (ok && end > hashed)
		ok = EVP_DigestUpdate(ctx, p + hashed, end - hashed);
	ok = ok && EVP_DigestFinal_ex(ctx, out, NULL);
	EVP_MD_CTX_free(ctx);
	return ok ? 0 : ingot_fail(e, -EIO, "%s: Authenticode digest: OpenSSL failed", name);
}

uint32_t pe_checksum(const uint8_t *buf, size_t len, size_t checksum_off)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < len; i += 2) {
		if (i == checksum_off || i == checksum_off + 2)
			continue;
		sum += buf[i] | (i + 1 < len ? (uint32_t)buf[i + 1] << 8 : 0);
		sum = (sum & 0xffff) + (sum >> 16);
	}
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint32_t)(sum + len);
}
