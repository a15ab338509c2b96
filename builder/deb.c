#include "builder/deb.h"

#include <archive.h>
#include <errno.h>
#include <string.h>

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
