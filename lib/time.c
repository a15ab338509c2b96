#include "lib/time.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int digits(const char *s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

/* "Z" or "+HH:MM"/"-HH:MM" ending the string: offset east of UTC in seconds. */
static int parse_zone(const char *p, long *east)
{
	int oh, om;

	if ((*p == 'Z' || *p == 'z') && p[1] == '\0') {
		*east = 0;
		return 0;
	}
	if ((*p != '+' && *p != '-') || strlen(p) != 6 || digits(p + 1, 2, &oh) || p[3] != ':' ||
	    digits(p + 4, 2, &om) || oh > 23 || om > 59)
		return -EINVAL;
	*east = (*p == '+' ? 1 : -1) * (long)(oh * 3600 + om * 60);
	return 0;
}

int time_parse(const char *s, time_t *out)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int Y, M, D, h, m, sec;
	size_t n = strlen(s);
	struct tm tm = { 0 };
	const char *p;
	long east;

	if (n > 0 && n <= 19 && strspn(s, "0123456789") == n) {
		unsigned long long v = strtoull(s, NULL, 10);
		if (v > (unsigned long long)INT64_MAX / 2)
			return -ERANGE;
		*out = (time_t)v;
		return 0;
	}
	/* YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM) */
	if (n < 20 || digits(s, 4, &Y) || s[4] != '-' || digits(s + 5, 2, &M) || s[7] != '-' ||
	    digits(s + 8, 2, &D) || (s[10] != 'T' && s[10] != 't') || digits(s + 11, 2, &h) ||
	    s[13] != ':' || digits(s + 14, 2, &m) || s[16] != ':' || digits(s + 17, 2, &sec))
		return -EINVAL;
	p = s + 19;
	if (*p == '.') {
		if (!isdigit((unsigned char)*++p))
			return -EINVAL;
		while (isdigit((unsigned char)*p))
			p++;     /* sub-second precision matters to no check */
	}
	if (parse_zone(p, &east) < 0)
		return -EINVAL;
	bool leap = (Y % 4 == 0 && Y % 100 != 0) || Y % 400 == 0;
	if (M < 1 || M > 12 || D < 1 || D > mdays[M - 1] || (M == 2 && D == 29 && !leap) ||
	    h > 23 || m > 59 || sec > 60)
		return -EINVAL;
	tm.tm_year = Y - 1900;
	tm.tm_mon = M - 1;
	tm.tm_mday = D;
	tm.tm_hour = h;
	tm.tm_min = m;
	tm.tm_sec = sec;
	*out = timegm(&tm) - (time_t)east;
	return 0;
}

char *time_format(time_t t, char buf[TIME_RFC3339_LEN])
{
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(buf, TIME_RFC3339_LEN, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, TIME_RFC3339_LEN, "%lld", (long long)t);
	return buf;
}
