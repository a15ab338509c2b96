/* Deterministic cpio "newc" archives, the initramfs format the kernel
 * unpacks: entries sorted by name, every inode number, owner, device and
 * time fixed, so the same entries always give the same bytes. */
#ifndef INGOT_CPIO_H
#define INGOT_CPIO_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "lib/strbuf.h"

struct cpio_entry {
	const char *name;   /* relative path, no leading '/' ("init", "lib/x.ko") */
	uint32_t mode;      /* type and permission bits (S_IFREG | 0755) */
	const void *data;   /* regular files only */
	size_t len;
};

/* Append the archive of the n entries (sorted here by name; owner 0:0,
 * mtime given) and the TRAILER!!! record to out.  -EINVAL for a
 * duplicated name, an empty or absolute name, or a file over 4 GiB. */
int cpio_write(struct cpio_entry *v, size_t n, uint32_t mtime, struct strbuf *out, ingot_error *e);

#endif
