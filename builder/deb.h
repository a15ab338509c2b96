/* The Debian binary package format (deb(5)), as strictly as dpkg-deb
 * reads it (dpkg src/deb/extract.c): an ar archive whose first member is
 * debian-binary ("2.N\n"), then control.tar[.gz|.xz|.zst], then
 * data.tar[.gz|.xz|.zst|.bz2|.lzma]; members named "_..." are skipped
 * anywhere after debian-binary; any other member, a second control
 * member, or a name with anything after its known compression suffix is
 * refused.  Pure functions on names and bytes, and the one walk over a
 * package's members that artifacts (builder/unpack.c) and boot packages
 * (builder/bootdeb.c) share. */
#ifndef INGOT_DEB_H
#define INGOT_DEB_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/err.h"

enum deb_member {
	DEB_CONTROL,    /* control.tar* with a known compression */
	DEB_DATA,       /* data.tar* with a known compression */
	DEB_SKIP,       /* "_..." : non-critical, skipped (dpkg-deb does) */
	DEB_BAD_SUFFIX, /* control.tar / data.tar + an unknown compression suffix */
	DEB_UNKNOWN,    /* anything else */
};

/* Classify an ar member name (after debian-binary); *filter is the
 * libarchive filter code (ARCHIVE_FILTER_*) its suffix promises. */
enum deb_member deb_member_kind(const char *name, int *filter);

/* debian-binary's content: "2.N\n" (format 2, any minor), nothing else. */
bool deb_binary_ok(const char *buf, size_t len);

/* The Version: field of a control file (edited in place); NULL when
 * there is none.  Trailing blanks are dropped. */
char *deb_control_version(char *control);

/* Debian policy's version characters, 1 to max - 1 of them. */
bool deb_version_ok(const char *v, size_t max);

struct archive;

/* What a walk does with the members it meets.  what prefixes messages
 * ("NAME: SOURCE"). */
struct deb_visitor {
	const char *what;
	void *ctx;
	/* control.tar*: the outer reader is at the member (filter: what its
	 * suffix promises).  NULL: the member is skipped unread. */
	int (*control)(void *ctx, struct archive *outer, const char *member, int filter, ingot_error *e);
	/* data.tar*: inner, a tar reader on the member, streamed out of the
	 * package (no copy), its compression checked against the suffix. */
	int (*data)(void *ctx, struct archive *inner, const char *member, ingot_error *e);
};

/* Walk the package outer (an ar reader, already open) in dpkg-deb's
 * order and with its rules; members after data.tar are not read, as in
 * dpkg-deb.  Returns what data returned, or -EINVAL with e filled. */
int deb_walk(struct archive *outer, const struct deb_visitor *v, ingot_error *e);

/* The compression a member's suffix promises is the one it has
 * (dpkg-deb picks the decompressor by the suffix). */
int deb_check_filter(struct archive *inner, const char *what, const char *member, int want, ingot_error *e);
/* A one-line field of a control file ("Package", "Architecture",
 * "Maintainer"), blanks around it dropped, into out (max bytes, control
 * left as it is): 1 found, 0 absent, -EINVAL when the value is empty, too
 * long or holds a control character. */
int deb_control_field(const char *control, const char *name, char *out, size_t max);

#endif
