/* The Debian binary package format (deb(5)), as strictly as dpkg-deb
 * reads it (dpkg src/deb/extract.c): an ar archive whose first member is
 * debian-binary ("2.N\n"), then control.tar[.gz|.xz|.zst], then
 * data.tar[.gz|.xz|.zst|.bz2|.lzma]; members named "_..." are skipped
 * anywhere after debian-binary; any other member, a second control
 * member, or a name with anything after its known compression suffix is
 * refused.  Pure functions on names and bytes; builder/unpack.c drives
 * libarchive. */
#ifndef INGOT_DEB_H
#define INGOT_DEB_H

#include <stdbool.h>
#include <stddef.h>

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

/* A one-line field of a control file ("Package", "Architecture",
 * "Maintainer"), blanks around it dropped, into out (max bytes, control
 * left as it is): 1 found, 0 absent, -EINVAL when the value is empty, too
 * long or holds a control character. */
int deb_control_field(const char *control, const char *name, char *out, size_t max);

#endif
