#include "attest/nonce.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attest/lock.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/strbuf.h"

#define SEEN_MAX_BYTES (256u << 20)

int nonce_parse(const char *hex, uint8_t out[NONCE_MAX], size_t *len, ingot_error *e)
{
	size_t n = strlen(hex);

	if (n < 2 * NONCE_MIN || n % 2 || n > 2 * NONCE_MAX || hex_decode(hex, out, n / 2) < 0)
		return ingot_fail(e, -EINVAL, "nonce: expected %d-%d hex digits (an even number), got '%.140s'",
				  2 * NONCE_MIN, 2 * NONCE_MAX, hex);
	*len = n / 2;
	return 0;
}

/* 1 if the line list in buf holds hex, 0 if not. */
static int listed(const char *buf, const char *hex)
{
	size_t n = strlen(hex);

	for (const char *p = buf; p && *p; ) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);
		if (l == n && !strncasecmp(p, hex, n))
			return 1;
		p = nl ? nl + 1 : NULL;
	}
	return 0;
}

static int load(const char *path, char **buf, size_t *len, ingot_error *e)
{
	int r = read_file(path, SEEN_MAX_BYTES, buf, len, e);

	if (r == -ENOENT) {
		*buf = strdup("");
		*len = 0;
		return *buf ? 0 : ingot_fail(e, -ENOMEM, "out of memory");
	}
	return r;
}

/* hex (2 * NONCE_MAX + 1 bytes) = the nonce in lower-case hex. */
static int to_hex(const uint8_t *nonce, size_t len, char *hex, ingot_error *e)
{
	if (len == 0 || len > NONCE_MAX)
		return ingot_fail(e, -EINVAL, "nonce: expected 1-%d bytes, got %zu", NONCE_MAX, len);
	hex_encode(nonce, len, hex);
	return 0;
}

int nonce_seen(const char *path, const uint8_t *nonce, size_t len, ingot_error *e)
{
	_cleanup_free_ char *buf = NULL;
	char hex[2 * NONCE_MAX + 1];
	size_t n;
	int r;

	if ((r = to_hex(nonce, len, hex, e)) < 0 || (r = load(path, &buf, &n, e)) < 0)
		return r;
	return listed(buf, hex);
}

int nonce_record(const char *path, const uint8_t *nonce, size_t len, ingot_error *e)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int lock = -1;
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	char hex[2 * NONCE_MAX + 1];
	size_t n;
	int r;

	if ((r = to_hex(nonce, len, hex, e)) < 0)
		return r;
	lock = attest_lock(path, e);
	if (lock < 0)
		return lock;
	r = load(path, &buf, &n, e);
	if (r < 0)
		return r;
	if (listed(buf, hex))
		return ingot_fail(e, -EEXIST, "nonce %s: already used (listed in %s): refusing a replayed quote",
				  hex, path);
	strbuf_init(&out, n + sizeof(hex) + 2);
	strbuf_add(&out, buf, n);
	if (n && buf[n - 1] != '\n')
		strbuf_addch(&out, '\n');
	strbuf_addf(&out, "%s\n", hex);
	return write_file_atomic(path, out.buf, out.len, 0644, e);
}
