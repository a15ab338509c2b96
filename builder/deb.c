#include "builder/deb.h"

#include <archive.h>
#include <archive_entry.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>

#include "builder/unpack.h"
#include "lib/cleanup.h"
#include "lib/xalloc.h"

static const struct suffix {
	const char *ext;
	int filter;
	bool control;   /* dpkg-deb accepts it for control.tar too */
} suffixes[] = {
	{ "", ARCHIVE_FILTER_NONE, true },
	{ ".gz", ARCHIVE_FILTER_GZIP, true },
	{ ".xz", ARCHIVE_FILTER_XZ, true },
	{ ".zst", ARCHIVE_FILTER_ZSTD, true },
	{ ".bz2", ARCHIVE_FILTER_BZIP2, false },
	{ ".lzma", ARCHIVE_FILTER_LZMA, false },
};

static bool suffix_of(const char *ext, bool control, int *filter)
{
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
		if (!strcmp(ext, suffixes[i].ext) && (suffixes[i].control || !control)) {
			*filter = suffixes[i].filter;
			return true;
		}
	return false;
}

enum deb_member deb_member_kind(const char *name, int *filter)
{
	*filter = ARCHIVE_FILTER_NONE;
	if (name[0] == '_')
		return DEB_SKIP;
	if (!strncmp(name, "control.tar", 11))
		return suffix_of(name + 11, true, filter) ? DEB_CONTROL : DEB_BAD_SUFFIX;
	if (!strncmp(name, "data.tar", 8))
		return suffix_of(name + 8, false, filter) ? DEB_DATA : DEB_BAD_SUFFIX;
	return DEB_UNKNOWN;
}

bool deb_binary_ok(const char *buf, size_t len)
{
	size_t i = 2;

	if (len < 4 || buf[0] != '2' || buf[1] != '.')
		return false;
	while (i < len && buf[i] >= '0' && buf[i] <= '9')
		i++;
	return i > 2 && i + 1 == len && buf[i] == '\n';
}

char *deb_control_version(char *control)
{
	for (char *line = control; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (!strncmp(line, "Version:", 8)) {
			char *v = line + 8;
			size_t n;
			while (*v == ' ' || *v == '\t')
				v++;
			n = strlen(v);
			while (n && (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\r'))
				n--;
			v[n] = '\0';
			return v;
		}
		line = nl ? nl + 1 : NULL;
	}
	return NULL;
}

bool deb_version_ok(const char *v, size_t max)
{
	size_t n = strlen(v);
	return n > 0 && n < max &&
	       strspn(v, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.+~:-") == n;
}

int deb_check_filter(struct archive *inner, const char *what, const char *member, int want, ingot_error *e)
{
	if (archive_filter_code(inner, 0) != want)
		return ingot_fail(e, -EINVAL, "%s: member '%s': expected %s data, got %s", what, member,
				  want == ARCHIVE_FILTER_NONE ? "uncompressed" : "its suffix's compressed",
				  archive_filter_name(inner, 0));
	return 0;
}

static int walk_data(struct archive *outer, const struct deb_visitor *v, const char *member, int filter,
		     ingot_error *e)
{
	_cleanup_archive_ struct archive *inner = unpack_tar_reader();
	_cleanup_free_ char *mbuf = xmalloc(UNPACK_MEMBER_BUF);
	struct ar_member m = { .outer = outer, .buf = mbuf };
	int r;

	if (!inner)   /* libarchive's allocation */
		return ingot_fail(e, -ENOMEM, "out of memory");
	if (unpack_open_member(inner, &m) != ARCHIVE_OK)
		return ingot_fail(e, -EINVAL, "%s: %s: %s", v->what, member, unpack_archive_error(inner));
	if ((r = deb_check_filter(inner, v->what, member, filter, e)) < 0)
		return r;
	return v->data(v->ctx, inner, member, e);
}

int deb_walk(struct archive *outer, const struct deb_visitor *v, ingot_error *e)
{
	struct archive_entry *ae;
	bool first = true, have_control = false;
	int r, filter;

	for (;;) {
		const char *name;
		r = archive_read_next_header(outer, &ae);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN)
			return ingot_fail(e, -EINVAL, "%s: expected a Debian package (ar archive), got: %s", v->what,
					  unpack_archive_error(outer));
		name = archive_entry_pathname(ae);
		if (!name)
			name = "";
		if (first) {
			char buf[16];
			la_ssize_t n = strcmp(name, "debian-binary") ? -1 : archive_read_data(outer, buf, sizeof(buf));
			if (n < 0 || !deb_binary_ok(buf, (size_t)n))
				return ingot_fail(e, -EINVAL, "%s: expected a Debian package starting with debian-binary "
						  "\"2.N\\n\", got member '%.64s'%s", v->what, name, n < 0 ? "" : " with other content");
			first = false;
			continue;
		}
		switch (deb_member_kind(name, &filter)) {
		case DEB_SKIP:
			continue;
		case DEB_CONTROL:
			if (have_control)
				return ingot_fail(e, -EINVAL, "%s: expected one control.tar member, got a second: '%.64s'",
						  v->what, name);
			have_control = true;
			if (v->control && (r = v->control(v->ctx, outer, name, filter, e)) < 0)
				return r;
			continue;
		case DEB_DATA:
			if (!have_control)
				break;
			return walk_data(outer, v, name, filter, e);
		case DEB_BAD_SUFFIX:
			return ingot_fail(e, -EINVAL, "%s: member '%.64s': expected a compression suffix dpkg-deb knows "
					  "(control.tar: none, .gz, .xz, .zst; data.tar: also .bz2, .lzma)", v->what, name);
		case DEB_UNKNOWN:
			break;
		}
		return ingot_fail(e, -EINVAL, "%s: expected member %s next, got '%.64s' (only members named _* may "
				  "come between)", v->what, have_control ? "data.tar" : "control.tar", name);
	}
	return ingot_fail(e, -EINVAL, "%s: expected a Debian package with %s member, got none", v->what,
			  have_control ? "a data.tar" : "control.tar and data.tar");
}
int deb_control_field(const char *control, const char *name, char *out, size_t max)
{
	size_t k = strlen(name);

	for (const char *line = control; line && *line;) {
		const char *nl = strchr(line, '\n'), *end = nl ? nl : line + strlen(line), *v = line + k + 1;

		if (!strncmp(line, name, k) && line[k] == ':') {
			while (v < end && (*v == ' ' || *v == '\t'))
				v++;
			while (end > v && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
				end--;
			if (end == v || (size_t)(end - v) >= max)
				return -EINVAL;
			for (const char *c = v; c < end; c++)
				if ((unsigned char)*c < 0x20 || *c == 0x7f)
					return -EINVAL;
			memcpy(out, v, (size_t)(end - v));
			out[end - v] = '\0';
			return 1;
		}
		line = nl ? nl + 1 : NULL;
	}
	return 0;
}
