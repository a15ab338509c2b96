/* PE/COFF images (EFI applications, Unified Kernel Images) and their
 * Authenticode digest: what UEFI firmware measures into PCR 4 as an
 * EV_EFI_BOOT_SERVICES_APPLICATION event and what `sbsign` signs.
 *
 * The digest (Microsoft "Windows Authenticode Portable Executable
 * Signature Format", section "Calculating the PE Image Hash") covers the
 * headers up to SizeOfHeaders without the CheckSum field and the
 * certificate-table data directory entry, then every section's raw data
 * in file order, then the bytes after the last section (the COFF symbol
 * table, for instance) up to the certificate table, if any. */
#ifndef INGOT_ATTEST_AUTHENTICODE_H
#define INGOT_ATTEST_AUTHENTICODE_H

#include <openssl/evp.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

#define PE_SECTION_HEADER 40
#define PE_MAX_SECTIONS 96

struct pe_section {
	char name[9];               /* NUL-terminated copy of the 8-byte name */
	uint32_t vsize, vaddr;      /* VirtualSize, VirtualAddress */
	uint32_t raw_size, raw_off; /* SizeOfRawData, PointerToRawData */
	uint32_t characteristics;
};

/* Offsets of the fields a writer or hasher needs, all checked to lie
 * inside the buffer. */
struct pe_image {
	size_t coff_off;            /* COFF file header (after "PE\0\0") */
	size_t opt_off, opt_size;   /* optional header */
	size_t checksum_off;        /* OptionalHeader.CheckSum */
	size_t secdir_off;          /* certificate-table data directory entry, 0 if absent */
	size_t sections_off;        /* section table */
	uint32_t size_of_headers, file_align, sect_align, size_of_image;
	uint32_t cert_off, cert_size; /* certificate table (file offset), 0 if none */
	uint32_t symtab_off;        /* COFF PointerToSymbolTable */
	uint16_t nsections;
	struct pe_section sections[PE_MAX_SECTIONS];
};

/* Parse a PE32 or PE32+ image held in buf; name is used in messages. */
int pe_parse(const void *buf, size_t len, const char *name, struct pe_image *pe, ingot_error *e);

/* The section named name, or NULL. */
const struct pe_section *pe_section_find(const struct pe_image *pe, const char *name);

/* The Authenticode digest of the image with md (out: EVP_MD_get_size). */
int authenticode_digest(const void *buf, size_t len, const char *name, const EVP_MD *md,
			uint8_t *out, ingot_error *e);

/* The PE optional-header checksum of buf (its CheckSum field skipped). */
uint32_t pe_checksum(const uint8_t *buf, size_t len, size_t checksum_off);

#endif
