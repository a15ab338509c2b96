#include "builder/archive.h"

const char *unpack_archive_error(struct archive *ar)
{
	const char *m = archive_error_string(ar);
	return m && *m ? m : "unexpected end of data (truncated or corrupt archive)";
}

struct archive *unpack_tar_reader(void)
{
	struct archive *ar = archive_read_new();
	if (!ar)
		return NULL;
	/* Only tar formats: a recipe saying "tar" must not accept a zip or cpio. */
	archive_read_support_filter_all(ar);
	archive_read_support_format_tar(ar);
	archive_read_support_format_gnutar(ar);
	return ar;
}

static la_ssize_t member_read(struct archive *inner, void *ctx, const void **buf)
{
	struct ar_member *m = ctx;
	la_ssize_t n = archive_read_data(m->outer, m->buf, UNPACK_MEMBER_BUF);
	(void)inner;
	*buf = m->buf;
	return n;
}

int unpack_open_member(struct archive *inner, struct ar_member *m)
{
	return archive_read_open(inner, m, NULL, member_read, NULL);
}
