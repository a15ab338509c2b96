/* libarchive reading helpers shared by the artifact reader (unpack.c)
 * and the .deb member walk (deb.c): one cleanup, one error text, the tar
 * reader and a data.tar member streamed out of its ar archive. */
#ifndef INGOT_BUILDER_ARCHIVE_H
#define INGOT_BUILDER_ARCHIVE_H

#include <archive.h>

/* The one cleanup for libarchive readers. */
static inline void archive_freep(struct archive **a)
{
	if (*a)
		archive_read_free(*a);
}
#define _cleanup_archive_ __attribute__((cleanup(archive_freep)))

/* libarchive's message for ar's last error; libarchive leaves none on
 * some failures (a stream cut before its trailer): never "(null)". */
const char *unpack_archive_error(struct archive *ar);

/* A reader of tar formats only (a recipe saying "tar" must not accept a
 * zip or cpio), any compression. */
struct archive *unpack_tar_reader(void);

/* The data.tar.* of a .deb read straight out of the outer ar stream,
 * without a copy of the member: inner is opened on the member outer is
 * at; m and its buffer (UNPACK_MEMBER_BUF bytes) outlive inner.
 * ARCHIVE_OK, or libarchive's error in inner. */
#define UNPACK_MEMBER_BUF (256u << 10)
struct ar_member {
	struct archive *outer;
	char *buf;
};
int unpack_open_member(struct archive *inner, struct ar_member *m);

#endif
