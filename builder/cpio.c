/* cpio newc writer (see cpio.h).  Format: "070701", then 13 fields of 8
 * hex digits, the name with its NUL, padded to 4 bytes, the data padded
 * to 4 bytes. */
#include "builder/cpio.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct cpio_entry *)a)->name, ((const struct cpio_entry *)b)->name);
}

static void pad4(struct strbuf *out)
{
	while (out->len % 4)
		strbuf_addch(out, 0);
}

static void header(struct strbuf *out, uint32_t ino, uint32_t mode, uint32_t nlink, uint32_t mtime,
		   size_t filesize, const char *name)
{
	size_t namesize = strlen(name) + 1;
	strbuf_addf(out, "070701%08X%08X%08X%08X%08X%08X%08zX%08X%08X%08X%08X%08zX%08X",
		    ino, mode, 0u, 0u, nlink, mtime, filesize, 0u, 0u, 0u, 0u, namesize, 0u);
	strbuf_add(out, name, namesize);
	pad4(out);
}

int cpio_write(struct cpio_entry *v, size_t n, uint32_t mtime, struct strbuf *out, ingot_error *e)
{
	qsort(v, n, sizeof(*v), by_name);
	for (size_t i = 0; i < n; i++) {
		if (!v[i].name[0] || v[i].name[0] == '/')
			return ingot_fail(e, -EINVAL, "initramfs: entry name: expected a relative path, got '%s'", v[i].name);
		if (i && !strcmp(v[i].name, v[i - 1].name))
			return ingot_fail(e, -EINVAL, "initramfs: %s: expected one entry per path, got two", v[i].name);
		if (v[i].len > UINT32_MAX)
			return ingot_fail(e, -EFBIG, "initramfs: %s: expected at most 4 GiB, got %zu bytes", v[i].name, v[i].len);
		header(out, (uint32_t)i + 1, v[i].mode, S_ISDIR(v[i].mode) ? 2 : 1, mtime,
		       S_ISREG(v[i].mode) ? v[i].len : 0, v[i].name);
		if (S_ISREG(v[i].mode)) {
			strbuf_add(out, v[i].data, v[i].len);
			pad4(out);
		}
	}
	header(out, 0, 0, 1, 0, 0, "TRAILER!!!");
	return 0;
}
