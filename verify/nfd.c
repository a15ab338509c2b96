#include "verify/nfd.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "lib/digest.h"
#include "lib/fileio.h"

#define LABEL_MAX 63
#define HASH_HEX 12   /* 48 bits of sha256: the suffix of a disambiguated value */

static bool label_char(char c)
{
	return isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-';
}

/* A Kubernetes label value: empty, or at most 63 characters of
 * [A-Za-z0-9._-] starting and ending alphanumeric. */
static bool is_label_value(const char *s)
{
	size_t n = strlen(s);
	if (n == 0)
		return true;
	if (n > LABEL_MAX || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!label_char(s[i]))
			return false;
	return true;
}

/* Does s end in "--" and HASH_HEX lowercase hex digits, the form nfd_label_value
 * gives the values it disambiguates? */
static bool looks_hashed(const char *s)
{
	size_t n = strlen(s);
	if (n < HASH_HEX + 2 || strncmp(s + n - HASH_HEX - 2, "--", 2))
		return false;
	for (size_t i = n - HASH_HEX; i < n; i++)
		if (!isdigit((unsigned char)s[i]) && (s[i] < 'a' || s[i] > 'f'))
			return false;
	return true;
}

bool nfd_label_value(const char *value, char out[NFD_VALUE_SIZE])
{
	uint8_t d[32];
	char hex[65];
	size_t n = 0;

	if (is_label_value(value) && !looks_hashed(value)) {
		snprintf(out, NFD_VALUE_SIZE, "%s", value);
		return false;
	}
	/* Readable prefix + "--" + a hash of the whole name: two names that
	 * reduce to the same prefix ("pool-a." and "pool-a", or two long names
	 * alike in their first 63 characters) still get different values, and
	 * no kept name can take that form. */
	for (const char *s = value; *s && n < LABEL_MAX - HASH_HEX - 2; s++) {
		if (!n && !isalnum((unsigned char)*s))
			continue;
		out[n++] = label_char(*s) ? *s : '_';
	}
	while (n && !isalnum((unsigned char)out[n - 1]))
		n--;
	sha256_buf(value, strlen(value), d);
	hex_encode(d, 32, hex);
	snprintf(out + n, NFD_VALUE_SIZE - n, "%s%.*s", n ? "--" : "h--", HASH_HEX, hex);
	return true;
}

static void add_label(struct strbuf *out, const char *name, const char *value)
{
	char v[NFD_VALUE_SIZE];
	if (nfd_label_value(value, v))
		strbuf_addf(out, "# %s%s: the name is no label value (or looks like a disambiguated "
			    "one): labelled %s\n", NFD_LABEL_PREFIX, name, v);
	strbuf_addf(out, "%s%s=%s\n", NFD_LABEL_PREFIX, name, v);
}

void nfd_format(const struct verify_report *r, struct strbuf *out)
{
	char tuple[33] = "";
	char status[16];
	if (r->tuple_digest)
		snprintf(tuple, sizeof(tuple), "%s", r->tuple_digest);
	snprintf(status, sizeof(status), "%d", r->exit_status);
	strbuf_addf(out, "# written by ingot verify at %s; replaced on every boot\n",
		    r->time ? r->time : "?");
	add_label(out, "pool", r->pool ? r->pool : "none");
	add_label(out, "tuple", tuple[0] ? tuple : "none");
	add_label(out, "verdict", r->verdict ? r->verdict : "could-not-check");
	add_label(out, "exit-status", status);
}

int nfd_write(const char *path, const struct verify_report *r, ingot_error *e)
{
	struct strbuf sb = STRBUF_INIT;
	int ret;
	strbuf_init(&sb, 256);
	nfd_format(r, &sb);
	ret = write_file_atomic(path, sb.buf, sb.len, 0644, e);
	strbuf_release(&sb);
	return ret;
}
