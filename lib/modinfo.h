/* Read a Linux kernel module's .modinfo section (what kmod's modinfo(8)
 * prints) without loading it: ELF32/ELF64, either byte order, plain or
 * compressed (.ko.xz, .ko.zst, .ko.gz via libarchive's raw reader).
 * modinfo_load reads in bounded memory whatever the module's size: the
 * ELF header, the section table, the section names and .modinfo, each by
 * offset (a compressed module is streamed, the bytes between passing
 * through one 64 KiB buffer; at worst it is decompressed three times). */
#ifndef INGOT_MODINFO_H
#define INGOT_MODINFO_H

#include <stddef.h>
#include "lib/err.h"

#define MODINFO_MAX_BYTES ((size_t)1 << 30)   /* no offset in a module beyond 1 GiB */
#define MODINFO_SECTION_MAX ((size_t)1 << 20) /* .modinfo and section names: 1 MiB */

struct modinfo {
	char **keys;     /* in section order; a key may repeat (firmware=, alias=) */
	char **values;
	size_t n;
};

/* name is used in messages.  Entries without '=' are skipped, like kmod. */
int modinfo_parse(const void *buf, size_t len, const char *name, struct modinfo *mi,
		  ingot_error *e);
int modinfo_load(const char *path, struct modinfo *mi, ingot_error *e);
/* Where section (".rodata", ".modinfo") lies in an ELF image held in buf
 * (ELF32/ELF64, either byte order); -ENOENT if it has none. */
int elf_section(const void *buf, size_t len, const char *name, const char *section,
		size_t *off, size_t *size, ingot_error *e);
/* The release (`uname -r`) in a vermagic= string: its first word, into
 * out; 0, or -EINVAL when it has none or one over outlen-1 bytes. */
int modinfo_vermagic_release(const char *vermagic, char *out, size_t outlen);
/* The release a bzImage (an x86 vmlinuz) says it is: the first word of
 * its setup header's kernel_version string (boot protocol 2.00 and
 * later); -ENOENT when buf holds no such header or string. */
int bzimage_release(const void *buf, size_t len, char *out, size_t outlen);
/* First value of key, NULL if absent. */
const char *modinfo_get(const struct modinfo *mi, const char *key);
void modinfo_free(struct modinfo *mi);

#endif
