/* The image's Unified Kernel Image (recipe `boot:`): systemd-stub with
 * sections .osrel .cmdline .linux .initrd appended, the command line
 * carrying the image's dm-verity parameters, the initramfs generated here
 * (cpio newc: /init = the pinned ingot-init, the listed kernel modules).
 * Same recipe and inputs give the same bytes.
 *
 * The manifest's "boot" object records what a measured boot of it puts in
 * the TPM (attest/bootpredict.h, docs/attest.md "Measured boot"). */
#ifndef INGOT_UKI_H
#define INGOT_UKI_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "lib/strbuf.h"

struct recipe;
struct verity_info;

#define UKI_VMA_ALIGN 4096u
/* IMAGE_SCN_CNT_INITIALIZED_DATA | IMAGE_SCN_MEM_READ, as objcopy and ukify give. */
#define UKI_SECTION_FLAGS 0x40000040u

struct uki_section {
	const char *name;   /* at most 8 characters */
	const void *data;
	size_t len;
};

/* Append the sections, in order, to the PE image stub: each at the next
 * UKI_VMA_ALIGN-aligned address after the stub's last section, its data
 * after the last section's data (file-aligned), the stub's trailing
 * bytes (COFF symbol table) moved behind them; SizeOfImage, the symbol
 * table pointer and CheckSum fixed.  out gets the whole image. */
int uki_assemble(const void *stub, size_t stub_len, const struct uki_section *s, size_t n,
		 struct strbuf *out, ingot_error *e);

/* The kernel command line of an image: "ingot.image=NAME ingot.root=HEX
 * ingot.salt=HEX ingot.blocks=N" plus the recipe's extra one. */
void uki_cmdline(const char *name, const struct verity_info *vi, const char *extra, struct strbuf *out);

/* What the UKI's kernel is, for the image's modules to be held against
 * (builder/kabi-check.h). */
struct boot_kernel {
	char release[72];    /* uname -r: the bzImage header's, else the package's
			      * boot/vmlinuz-RELEASE name; "" when neither tells */
	char vermagic[256];  /* vermagic= of boot.modules[0], from the kernel's own
			      * package; "" without modules */
};

/* Build r's UKI (r->boot must be set) for the image whose verity is vi:
 * efi gets the bytes, *boot the manifest's "boot" object, *kernel (when
 * not NULL) what the kernel is. */
int uki_build(const struct recipe *r, const struct verity_info *vi, const char *efi_name,
	      struct strbuf *efi, json_t **boot, struct boot_kernel *kernel, ingot_error *e);

#endif
