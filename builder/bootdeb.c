/* Pinned boot inputs and .deb members (see bootdeb.h). */
#include "builder/bootdeb.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static int pin_mismatch(const struct boot_input *in, const char *field, const uint8_t got[SHA256_LEN],
			ingot_error *e)
{
	char want[SHA256_HEX_LEN + 1], have[SHA256_HEX_LEN + 1];

	hex_encode(in->sha256, SHA256_LEN, want);
	hex_encode(got, SHA256_LEN, have);
	return ingot_fail(e, -EINVAL, "%s: %s: expected sha256 %s (the recipe's pin), got %s",
			  field, in->path, want, have);
}

int boot_input_read(const struct boot_input *in, const char *field, struct blob *out, ingot_error *e)
{
	uint8_t d[SHA256_LEN];
	int r = read_file(in->path, BOOT_INPUT_MAX, &out->data, &out->len, e);

	if (r < 0)
		return ingot_prefix(e, "%s", field);
	sha256_buf(out->data, out->len, d);
	if (memcmp(d, in->sha256, SHA256_LEN)) {
		blob_release(out);
		return pin_mismatch(in, field, d, e);
	}
	return 0;
}

static int read_data_tar(struct archive *inner, const char *what, deb_pick_fn pick, void *ctx, ingot_error *e)
{
	struct archive_entry *ae;
	int r;

	while ((r = archive_read_next_header(inner, &ae)) != ARCHIVE_EOF) {
		const char *p = archive_entry_pathname(ae);
		struct blob *slot;
		if (r < ARCHIVE_WARN)
			return ingot_fail(e, -EINVAL, "%s: data.tar: %s", what, unpack_archive_error(inner));
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
					  r == -EIO ? unpack_archive_error(inner) : strerror(-r));
	}
	return 0;
}

/* outer: an ar reader opened on the package. */
static int deb_walk(struct archive *outer, const char *what, deb_pick_fn pick, void *ctx, ingot_error *e)
{
	struct archive_entry *ae;
	bool seen_binary = false;
	int seen_control = 0;
	int r;

	while ((r = archive_read_next_header(outer, &ae)) != ARCHIVE_EOF) {
		const char *name = archive_entry_pathname(ae);
		_cleanup_(archive_freep) struct archive *inner = NULL;
		_cleanup_free_ char *mbuf = NULL;
		struct ar_member m = { outer, NULL };
		if (r < ARCHIVE_WARN)
			return ingot_fail(e, -EINVAL, "%s: expected a Debian package: %s", what, unpack_archive_error(outer));
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
			return ingot_fail(e, -EINVAL, "%s: %s: %s", what, name, unpack_archive_error(inner));
		return read_data_tar(inner, what, pick, ctx, e);
	}
	return ingot_fail(e, -EINVAL, "%s: expected a Debian package with a data.tar member, got none", what);
}

int boot_input_take(const struct boot_input *in, const char *field, deb_pick_fn pick, void *ctx,
		    struct blob *whole, ingot_error *e)
{
	_cleanup_close_ int fd = open(in->path, O_RDONLY | O_CLOEXEC);
	_cleanup_(archive_freep) struct archive *outer = NULL;
	struct unpack_source src;
	uint8_t got[SHA256_LEN];
	char magic[8];
	struct stat st;
	int r, r2;

	*whole = (struct blob){ 0 };
	/* Anything but a package (or a file that cannot be read) is read
	 * whole, with read_file's checks and messages. */
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 8 ||
	    pread_all(fd, magic, sizeof(magic), 0) < 0 || memcmp(magic, "!<arch>\n", 8))
		return boot_input_read(in, field, whole, e);
	if ((uint64_t)st.st_size > BOOT_INPUT_MAX)
		return ingot_fail(e, -EFBIG, "%s: %s: file too large (%llu bytes, limit %zu)", field, in->path,
				  (unsigned long long)st.st_size, BOOT_INPUT_MAX);
	/* The pin first, as for artifacts; then streamed, hashed again as it
	 * is read: a kernel package is tens of MiB, and only a few of its
	 * files are kept.  The bytes used must be the bytes checked (a file
	 * rewritten meanwhile is a pin mismatch, reported before any parse
	 * error). */
	if (!(outer = archive_read_new()))
		return ingot_fail(e, -ENOMEM, "out of memory");
	if ((r = unpack_source_begin_pinned(&src, fd, in->path, in->sha256, got, e)) < 0)
		return ingot_prefix(e, "%s", field);
	if (r > 0)
		return pin_mismatch(in, field, got, e);
	archive_read_support_format_ar(outer);
	if (unpack_source_open(outer, &src) != ARCHIVE_OK)
		r = ingot_fail(e, -EINVAL, "%s: expected a Debian package: %s", in->path, unpack_archive_error(outer));
	else
		r = deb_walk(outer, in->path, pick, ctx, e);
	if (r < 0)
		ingot_prefix(e, "%s", field);
	if ((r2 = unpack_source_end(&src, got)) < 0)
		return ingot_fail(e, r2, "%s: %s: read failed: %s", field, in->path, strerror(-r2));
	if (memcmp(got, in->sha256, SHA256_LEN))
		return pin_mismatch(in, field, got, e);
	return r < 0 ? r : 1;
}
