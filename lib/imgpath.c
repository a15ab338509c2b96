#include "lib/imgpath.h"

#include <string.h>

int imgpath_check_shape(const char *path, const char *what, ingot_error *e)
{
	size_t len = strlen(path);
	const char *p = path;

	if (len == 0)
		return ingot_fail(e, -EINVAL, "%s: empty path", what);
	if (len > 4095)
		return ingot_fail(e, -ENAMETOOLONG, "%s: path longer than 4095 bytes", what);
	if (path[0] == '/')
		return ingot_fail(e, -EINVAL, "%s: absolute path '%s' refused", what, path);
	while (*p) {
		const char *s = strchr(p, '/');
		size_t n = s ? (size_t)(s - p) : strlen(p);
		if (n == 0)
			return ingot_fail(e, -EINVAL, "%s: empty component in '%s'", what, path);
		if (n > 255)
			return ingot_fail(e, -ENAMETOOLONG, "%s: component longer than 255 bytes in '%s'", what, path);
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return ingot_fail(e, -EINVAL, "%s: '.' or '..' component in '%s' refused", what, path);
		if (!s)
			break;
		p = s + 1;
		if (!*p)
			return ingot_fail(e, -EINVAL, "%s: trailing '/' in '%s'", what, path);
	}
	return 0;
}

int imgpath_check(const char *path, const char *what, ingot_error *e)
{
	/* A control character in a name forges lines in every listing,
	 * log and terminal that shows it; no golden image needs one. */
	for (const unsigned char *c = (const unsigned char *)path; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return ingot_fail(e, -EINVAL, "%s: control character 0x%02x in '%s' refused", what, *c, path);
	return imgpath_check_shape(path, what, e);
}
