/* Pinned boot inputs and .deb members (see bootdeb.h). */
#include "builder/bootdeb.h"

#include <archive.h>
#include <archive_entry.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "builder/deb.h"
#include "builder/unpack.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"

static void archive_freep(struct archive **a)
{
	if (*a)
		archive_read_free(*a);
}

int boot_input_read(const struct boot_input *in, const char *field, struct blob *out, ingot_error *e)
{
	uint8_t d[SHA256_LEN];
	char want[SHA256_HEX_LEN + 1], got[SHA256_HEX_LEN + 1];
	int r = read_file(in->path, BOOT_INPUT_MAX, &out->data, &out->len, e);

	if (r < 0)
		return ingot_prefix(e, "%s", field);
	sha256_buf(out->data, out->len, d);
	if (memcmp(d, in->sha256, SHA256_LEN)) {
		hex_encode(in->sha256, SHA256_LEN, want);
		hex_encode(d, SHA256_LEN, got);
		blob_release(out);
		return ingot_fail(e, -EINVAL, "%s: %s: expected sha256 %s (the recipe's pin), got %s",
				  field, in->path, want, got);
	}
	return 0;
}

int is_deb(const struct blob *b)
{
	return b->len >= 8 && !memcmp(b->data, "!<arch>\n", 8);
}

static int read_data_tar(struct archive *inner, const char *what, deb_pick_fn pick, void *ctx, ingot_error *e)
{
	struct archive_entry *ae;
	int r;

	while ((r = archive_read_next_header(inner, &ae)) != ARCHIVE_EOF) {
		const char *p = archive_entry_pathname(ae);
		struct blob *slot;
		if (r < ARCHIVE_WARN)
			return ingot_fail(e, -EINVAL, "%s: data.tar: %s", what, archive_error_string(inner));
		if (!p || archive_entry_filetype(ae) != AE_IFREG)
			continue;
		if (!strncmp(p, "./", 2))
			p += 2;
		if (!(slot = pick(ctx, p)))
			continue;
		if (slot->data)
			return ingot_fail(e, -EINVAL, "%s: %s: expected one such file in the package, got two", what, p);
		r = unpack_read_member(inner, BOOT_INPUT_MAX, &slot->data, &slot->len);
		if (r < 0)
			return ingot_fail(e, r, "%s: %s: cannot read it: %s", what, p,
					  r == -EIO ? archive_error_string(inner) : strerror(-r));
	}
	return 0;
}

int deb_extract(const struct blob *deb, const char *what, deb_pick_fn pick, void *ctx, ingot_error *e)
{
	_cleanup_(archive_freep) struct archive *outer = archive_read_new();
	struct archive_entry *ae;
	bool seen_binary = false;
	int seen_control = 0;
	int r;

	if (!outer)
		return ingot_fail(e, -ENOMEM, "out of memory");
	archive_read_support_format_ar(outer);
	if (archive_read_open_memory(outer, deb->data, deb->len) != ARCHIVE_OK)
		return ingot_fail(e, -EINVAL, "%s: expected a Debian package: %s", what, archive_error_string(outer));
	while ((r = archive_read_next_header(outer, &ae)) != ARCHIVE_EOF) {
		const char *name = archive_entry_pathname(ae);
		_cleanup_(archive_freep) struct archive *inner = NULL;
		_cleanup_free_ char *mbuf = NULL;
		struct ar_member m = { outer, NULL };
		if (r < ARCHIVE_WARN)
			return ingot_fail(e, -EINVAL, "%s: expected a Debian package: %s", what, archive_error_string(outer));
		/* The members in dpkg-deb's order and names (builder/deb.h),
		 * as for every other .deb ingot reads. */
		if (!name)
			return ingot_fail(e, -EINVAL, "%s: expected a Debian package: a member without a name", what);
		if (!seen_binary) {
			char buf[16];
			la_ssize_t k = strcmp(name, "debian-binary") ? -1 : archive_read_data(outer, buf, sizeof(buf));
			if (k < 0 || !deb_binary_ok(buf, (size_t)k))
				return ingot_fail(e, -EINVAL, "%s: expected a Debian package starting with "
						  "debian-binary \"2.x\", got member '%s'", what, name);
			seen_binary = true;
			continue;
		}
		int filter;
		enum deb_member kind = deb_member_kind(name, &filter);
		if (kind == DEB_SKIP || (kind == DEB_CONTROL && !seen_control++))
			continue;
		if (kind != DEB_DATA)
			return ingot_fail(e, -EINVAL, "%s: expected control.tar* then data.tar* (as dpkg-deb), "
					  "got member '%s'", what, name);
		if (!seen_control)
			return ingot_fail(e, -EINVAL, "%s: expected control.tar* before '%s' (as dpkg-deb)", what, name);
		/* Streamed out of the package: a kernel's data.tar is tens of
		 * MiB, and only a few of its files are kept. */
		if (!(inner = unpack_tar_reader()) || !(m.buf = mbuf = malloc(UNPACK_MEMBER_BUF)))
			return ingot_fail(e, -ENOMEM, "out of memory");
		if (unpack_open_member(inner, &m) != ARCHIVE_OK)
			return ingot_fail(e, -EINVAL, "%s: %s: %s", what, name, archive_error_string(inner));
		return read_data_tar(inner, what, pick, ctx, e);
	}
	return ingot_fail(e, -EINVAL, "%s: expected a Debian package with a data.tar member, got none", what);
}
