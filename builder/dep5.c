#include "builder/dep5.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* DEP-5 short names (copyright-format 1.0, "License specification") and
 * the SPDX identifiers they mean.  Names that differ only in case from
 * their SPDX id are matched case-insensitively and written as SPDX
 * spells them. */
static const struct { const char *dep5, *spdx; } names[] = {
	{ "Apache-2.0", "Apache-2.0" },     { "Artistic-2.0", "Artistic-2.0" },
	{ "BSD-2-clause", "BSD-2-Clause" }, { "BSD-3-clause", "BSD-3-Clause" },
	{ "BSD-4-clause", "BSD-4-Clause" }, { "BSL-1.0", "BSL-1.0" },
	{ "CC0-1.0", "CC0-1.0" },           { "Expat", "MIT" },
	{ "MIT", "MIT" },                   { "ISC", "ISC" },
	{ "Zlib", "Zlib" },                 { "MPL-2.0", "MPL-2.0" },
	{ "GPL-2", "GPL-2.0-only" },        { "GPL-2+", "GPL-2.0-or-later" },
	{ "GPL-2.0", "GPL-2.0-only" },      { "GPL-2.0+", "GPL-2.0-or-later" },
	{ "GPL-3", "GPL-3.0-only" },        { "GPL-3+", "GPL-3.0-or-later" },
	{ "GPL-3.0", "GPL-3.0-only" },      { "GPL-3.0+", "GPL-3.0-or-later" },
	{ "LGPL-2.1", "LGPL-2.1-only" },    { "LGPL-2.1+", "LGPL-2.1-or-later" },
	{ "LGPL-3", "LGPL-3.0-only" },      { "LGPL-3+", "LGPL-3.0-or-later" },
	{ "LGPL-3.0", "LGPL-3.0-only" },    { "LGPL-3.0+", "LGPL-3.0-or-later" },
};

static const char *spdx_id(const char *word, size_t n)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i].dep5) == n && !strncasecmp(names[i].dep5, word, n))
			return names[i].spdx;
	return NULL;
}

/* The first line of a License: field ("NAME [or|and NAME]...") as an
 * SPDX expression; false when any word does not map. */
static bool expression(const char *v, size_t n, char out[DEP5_LICENSE_MAX])
{
	size_t used = 0;
	bool want_name = true;

	for (size_t i = 0; i < n;) {
		size_t j = i, k;
		const char *w;

		while (j < n && v[j] != ' ' && v[j] != '\t')
			j++;
		k = j - i;
		if (want_name)
			w = spdx_id(v + i, k);
		else
			w = k == 2 && !strncasecmp(v + i, "or", 2) ? "OR" : k == 3 && !strncasecmp(v + i, "and", 3) ? "AND" : NULL;
		if (!w || used + strlen(w) + 2 >= DEP5_LICENSE_MAX)
			return false;
		used += (size_t)snprintf(out + used, DEP5_LICENSE_MAX - used, "%s%s", used ? " " : "", w);
		want_name = !want_name;
		while (j < n && (v[j] == ' ' || v[j] == '\t'))
			j++;
		i = j;
	}
	return used && !want_name;
}

/* The value of field (with its colon) if line is that field, else NULL;
 * *n its length without trailing blanks. */
static const char *field(const char *line, size_t len, const char *name, size_t *n)
{
	size_t k = strlen(name);

	if (len < k || strncasecmp(line, name, k))
		return NULL;
	line += k, len -= k;
	while (len && (*line == ' ' || *line == '\t'))
		line++, len--;
	while (len && (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r'))
		len--;
	*n = len;
	return line;
}

void dep5_license(const char *text, size_t len, char out[DEP5_LICENSE_MAX])
{
	bool first = true, in_star = false;
	const char *p = text, *end = text + len;

	snprintf(out, DEP5_LICENSE_MAX, "NOASSERTION");
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *v;
		size_t n = (size_t)((nl ? nl : end) - p), vn;

		if (first) {
			/* the header paragraph's first field names the format */
			if (!(v = field(p, n, "Format:", &vn)) || !memmem(v, vn, "copyright-format/1.0", 20))
				return;
			first = false;
		} else if (!n || (n == 1 && *p == '\r')) {
			in_star = false;   /* a blank line ends a paragraph */
		} else if ((v = field(p, n, "Files:", &vn))) {
			in_star = vn == 1 && *v == '*';
		} else if (in_star && (v = field(p, n, "License:", &vn))) {
			if (!expression(v, vn, out))
				snprintf(out, DEP5_LICENSE_MAX, "NOASSERTION");
			return;
		}
		p = nl ? nl + 1 : end;
	}
}
