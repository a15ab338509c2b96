#include "lib/version.h"

#include <string.h>

bool version_valid(const char *s)
{
	bool digit = false;

	if (!s || !*s)
		return false;
	for (; *s; s++) {
		if (*s >= '0' && *s <= '9')
			digit = true;
		else if (*s == '.' && digit)
			digit = false;
		else
			return false;
	}
	return digit;
}

/* Compare one component [a, a_end) with [b, b_end) numerically. */
static int cmp_component(const char *a, size_t na, const char *b, size_t nb)
{
	while (na > 0 && *a == '0')
		a++, na--;
	while (nb > 0 && *b == '0')
		b++, nb--;
	if (na != nb)
		return na < nb ? -1 : 1;
	int c = memcmp(a, b, na);
	return c < 0 ? -1 : c > 0;
}

int version_cmp(const char *a, const char *b)
{
	while (*a || *b) {
		size_t na = strcspn(a, "."), nb = strcspn(b, ".");
		/* a missing component is "0": the empty digit string */
		int c = cmp_component(a, na, b, nb);
		if (c)
			return c;
		a += na + (a[na] == '.');
		b += nb + (b[nb] == '.');
	}
	return 0;
}

bool version_prefix_match(const char *want, const char *have)
{
	while (*want) {
		size_t nw = strcspn(want, "."), nh = strcspn(have, ".");
		if (nh == 0 || cmp_component(want, nw, have, nh))
			return false;
		want += nw + (want[nw] == '.');
		have += nh + (have[nh] == '.');
	}
	return true;
}

char *version_upstream(const char *s, char *buf, size_t n)
{
	const char *colon, *p;
	size_t len = 0;

	if (!s)
		return NULL;
	colon = strchr(s, ':');
	if (colon && colon > s && strspn(s, "0123456789") == (size_t)(colon - s))
		s = colon + 1;
	for (p = s; *p; p++) {
		if (*p >= '0' && *p <= '9')
			continue;
		/* a dot only continues the version when a digit follows */
		if (*p == '.' && p > s && p[1] >= '0' && p[1] <= '9')
			continue;
		break;
	}
	len = (size_t)(p - s);
	if (len == 0 || len + 1 > n)
		return NULL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return buf;
}

size_t version_components(const char *s)
{
	size_t k = *s ? 1 : 0;
	for (; *s; s++)
		k += *s == '.';
	return k;
}

char *version_head(const char *s, size_t k, char *buf, size_t n)
{
	const char *p = s;
	size_t len;

	if (k == 0 || version_components(s) < k)
		return NULL;
	for (size_t i = 0; i < k; i++) {
		p += strcspn(p, ".");
		if (i + 1 < k)
			p++;
	}
	len = (size_t)(p - s);
	if (len + 1 > n)
		return NULL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return buf;
}
