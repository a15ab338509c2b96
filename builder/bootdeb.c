/* Pinned boot inputs and .deb members (see bootdeb.h). */
#include "builder/bootdeb.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builder/deb.h"
#include "builder/store.h"
#include "builder/unpack.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/xalloc.h"

static int pin_mismatch(const struct boot_input *in, const char *field, const uint8_t got[SHA256_LEN],
			ingot_error *e)
{
	char want[SHA256_HEX_LEN + 1], have[SHA256_HEX_LEN + 1];

	hex_encode(in->sha256, SHA256_LEN, want);
	hex_encode(got, SHA256_LEN, have);
	return ingot_fail(e, -EINVAL, "%s: %s: expected sha256 %s (the recipe's pin), got %s",
			  field, in->path, want, have);
}

static int over_budget(const char *field, const char *path, const char *member, uint64_t size,
		       size_t budget, ingot_error *e)
{
	return ingot_fail(e, -EFBIG, "%s: %s%s%s: %" PRIu64 " bytes: expected the boot inputs to take at most "
			  "%zu MiB together (%zu bytes left)", field, path, member ? ": " : "", member ? member : "",
			  size, BOOT_HELD_MAX >> 20, budget);
}

static int read_pinned(int fd, const struct boot_input *in, const char *field, size_t *budget,
		       struct blob *out, ingot_error *e)
{
	uint8_t d[SHA256_LEN];
	struct stat st;

	if (fstat(fd, &st) < 0)
		return ingot_fail(e, -errno, "%s: %s: %s", field, in->path, strerror(errno));
	if ((uint64_t)st.st_size > *budget)
		return over_budget(field, in->path, NULL, (uint64_t)st.st_size, *budget, e);
	out->data = xmalloc((size_t)st.st_size + 1);
	if (pread_all(fd, out->data, (size_t)st.st_size, 0) < 0) {
		int err = errno;
		blob_release(out);
		return ingot_fail(e, -err, "%s: %s: read failed: %s", field, in->path, strerror(err));
	}
	out->len = (size_t)st.st_size;
	out->data[out->len] = '\0';
	sha256_buf(out->data, out->len, d);
	if (memcmp(d, in->sha256, SHA256_LEN)) {
		blob_release(out);
		return pin_mismatch(in, field, d, e);
	}
	*budget -= out->len;
	return 0;
}

int boot_input_read(const struct boot_input *in, const char *field, size_t *budget, struct blob *out,
		    ingot_error *e)
{
	_cleanup_close_ int fd = store_source_open(field, in->path, e);

	if (fd < 0)
		return fd;
	return read_pinned(fd, in, field, budget, out, e);
}

/* The current entry's data, exactly its declared size (taken off the
 * budget first): never more held than declared, never a regrowing copy. */
static int read_declared(struct archive *inner, struct archive_entry *ae, const char *field,
			 const char *path, const char *member, size_t *budget, struct blob *slot,
			 ingot_error *e)
{
	uint64_t size = archive_entry_size_is_set(ae) ? (uint64_t)archive_entry_size(ae) : UINT64_MAX;
	size_t n = 0;
	char extra;

	if (size > *budget)
		return over_budget(field, path, member, size, *budget, e);
	slot->data = xmalloc((size_t)size + 1);
	while (n < size) {
		la_ssize_t k = archive_read_data(inner, slot->data + n, (size_t)size - n);
		if (k <= 0)
			return ingot_fail(e, -EINVAL, "%s: %s: %s: cannot read it: %s", field, path, member,
					  k < 0 ? unpack_archive_error(inner) : "shorter than its declared size");
		n += (size_t)k;
	}
	if (archive_read_data(inner, &extra, 1) != 0)
		return ingot_fail(e, -EINVAL, "%s: %s: %s: expected %" PRIu64 " bytes (its declared size), got more",
				  field, path, member, size);
	slot->data[n] = '\0';
	slot->len = n;
	*budget -= n;
	return 0;
}

struct deb_take {
	const char *field, *path;
	deb_pick_fn pick;
	void *ctx;
	size_t *budget;
	struct unpack_stats *labels;  /* NULL: the control member is skipped unread */
	const char *what;
};

static int take_control(void *ctx, struct archive *outer, const char *member, int filter, ingot_error *e)
{
	struct deb_take *t = ctx;

	return unpack_deb_control(outer, t->what, member, filter, t->labels, e);
}

/* A boot package's data.tar: the files pick chooses, each read whole
 * into its slot, bounded by its declared size and the budget. */
static int take_data(void *ctx, struct archive *inner, const char *member, ingot_error *e)
{
	struct deb_take *t = ctx;
	struct archive_entry *ae;
	int r;

	while ((r = archive_read_next_header(inner, &ae)) != ARCHIVE_EOF) {
		const char *p = archive_entry_pathname(ae);
		struct blob *slot;
		if (r < ARCHIVE_WARN)
			return ingot_fail(e, -EINVAL, "%s: %s: %s: %s", t->field, t->path, member, unpack_archive_error(inner));
		if (!p || archive_entry_filetype(ae) != AE_IFREG)
			continue;
		if (!strncmp(p, "./", 2))
			p += 2;
		if (!(slot = t->pick(t->ctx, p)))
			continue;
		if (slot->data)
			return ingot_fail(e, -EINVAL, "%s: %s: %s: expected one such file in the package, got two",
					  t->field, t->path, p);
		if ((r = read_declared(inner, ae, t->field, t->path, p, t->budget, slot, e)) < 0)
			return r;
	}
	return 0;
}

static int take(const struct boot_input *in, const char *field, deb_pick_fn pick, void *ctx, size_t *budget,
		struct blob *whole, struct unpack_stats *labels, ingot_error *e)
{
	_cleanup_close_ int fd = store_source_open(field, in->path, e);
	_cleanup_archive_ struct archive *outer = NULL;
	struct deb_take t = { field, in->path, pick, ctx, budget, labels, NULL };
	struct deb_visitor v = { .ctx = &t, .control = labels ? take_control : NULL, .data = take_data };
	_cleanup_free_ char *what = NULL;
	struct unpack_source src;
	uint8_t got[SHA256_LEN];
	char magic[8];
	struct stat st;
	int r, r2;

	*whole = (struct blob){ 0 };
	if (fd < 0)
		return fd;
	/* Anything but a package is read whole (bounded by the budget). */
	if (fstat(fd, &st) < 0 || st.st_size < 8 || pread_all(fd, magic, sizeof(magic), 0) < 0 ||
	    memcmp(magic, "!<arch>\n", 8))
		return labels ? 0 : read_pinned(fd, in, field, budget, whole, e);
	if ((uint64_t)st.st_size > BOOT_INPUT_MAX)
		return ingot_fail(e, -EFBIG, "%s: %s: file too large (%llu bytes, limit %zu)", field, in->path,
				  (unsigned long long)st.st_size, BOOT_INPUT_MAX);
	/* The pin first, as for artifacts (nothing is decompressed from a
	 * file that does not match); then streamed, hashed again as it is
	 * read: the bytes used must be the bytes checked (a file rewritten
	 * meanwhile is a pin mismatch, reported before any parse error). */
	if (!(outer = archive_read_new()))
		return ingot_fail(e, -ENOMEM, "out of memory");
	what = xasprintf("%s: %s", field, in->path);
	v.what = t.what = what;
	if ((r = unpack_source_begin_pinned(&src, fd, in->path, in->sha256, got, e)) < 0)
		return ingot_prefix(e, "%s", field);
	if (r > 0)
		return pin_mismatch(in, field, got, e);
	archive_read_support_format_ar(outer);
	if (unpack_source_open(outer, &src) != ARCHIVE_OK)
		r = ingot_fail(e, -EINVAL, "%s: %s: expected a Debian package: %s", field, in->path,
			       unpack_archive_error(outer));
	else
		r = deb_walk(outer, &v, e);
	if ((r2 = unpack_source_end(&src, got)) < 0)
		return ingot_fail(e, r2, "%s: %s: read failed: %s", field, in->path, strerror(-r2));
	if (memcmp(got, in->sha256, SHA256_LEN))
		return pin_mismatch(in, field, got, e);
	return r < 0 ? r : 1;
}

int boot_input_take(const struct boot_input *in, const char *field, deb_pick_fn pick, void *ctx,
		    size_t *budget, struct blob *whole, ingot_error *e)
{
	return take(in, field, pick, ctx, budget, whole, NULL, e);
}

static struct blob *pick_none(void *ctx, const char *path)
{
	(void)ctx, (void)path;
	return NULL;
}

int boot_input_labels(const struct boot_input *in, const char *field, struct unpack_stats *labels, ingot_error *e)
{
	size_t budget = 0;
	struct blob none;

	*labels = (struct unpack_stats){ 0 };
	return take(in, field, pick_none, NULL, &budget, &none, labels, e);
}
