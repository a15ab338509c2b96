#include "attest/nonce.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attest/lock.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"

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

int nonce_decode(const char *hex, struct nonce *n, ingot_error *e)
{
	int r = nonce_parse(hex, n->bytes, &n->len, e);

	if (r < 0)
		return r;
	hex_encode(n->bytes, n->len, n->hex);
	return 0;
}

/* Any byte outside the format makes the whole file corrupt: reading past
 * it, or around it, is how a replayed nonce would go unnoticed. */
int nonce_list_find(const char *path, const char *buf, size_t len, const char *hex, ingot_error *e)
{
	size_t n = strlen(hex), line = 1, found = 0;

	for (size_t start = 0, i = 0; i < len; line++, start = ++i) {
		while (i < len && ((buf[i] >= '0' && buf[i] <= '9') || (buf[i] >= 'a' && buf[i] <= 'f')))
			i++;
		size_t l = i - start;
		if (i == len || buf[i] != '\n' || l < 2 || l > 2 * NONCE_MAX || l % 2) {
			const char *why = i == len ? "end of file without LF" :
					  buf[i] == '\0' ? "a NUL byte" : buf[i] == '\r' ? "a CR (CRLF line end)" :
					  buf[i] == '\n' ? "a line of the wrong length" : "another character";
			return ingot_fail(e, -EBADMSG, "%s:%zu:%zu: expected one lower-case hex nonce (2-%d digits, "
					  "an even number) per LF-terminated line, got %s: refusing a corrupt "
					  "seen-nonces file", path, line, i - start + 1, 2 * NONCE_MAX, why);
		}
		if (l == n && !memcmp(buf + start, hex, n))
			found = 1;
	}
	return (int)found;
}

static int load(const char *path, char **buf, size_t *len, ingot_error *e)
{
	int r = read_file(path, SEEN_MAX_BYTES, buf, len, e);

	if (r == -ENOENT) {
		*buf = xstrdup("");
		*len = 0;
		return 0;
	}
	return r;
}

int nonce_seen(const char *path, const struct nonce *nonce, ingot_error *e)
{
	_cleanup_free_ char *buf = NULL;
	size_t n;
	int r;

	if ((r = load(path, &buf, &n, e)) < 0)
		return r;
	return nonce_list_find(path, buf, n, nonce->hex, e);
}

/* Both halves of the rule refuse with the same words. */
static int already_used(const char *path, const char *hex, ingot_error *e)
{
	return ingot_fail(e, -EEXIST, "nonce %s: already used (listed in %s): refusing a replayed quote", hex, path);
}

int nonce_check_unseen(const char *path, const struct nonce *n, ingot_error *e)
{
	int r = nonce_seen(path, n, e);

	return r <= 0 ? r : already_used(path, n->hex, e);
}

int nonce_record(const char *path, const struct nonce *nonce, ingot_error *e)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int lock = -1;
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	const char *hex = nonce->hex;
	size_t n;
	int r;

	lock = attest_lock(path, e);
	if (lock < 0)
		return lock;
	r = load(path, &buf, &n, e);
	if (r < 0)
		return r;
	r = nonce_list_find(path, buf, n, hex, e);
	if (r < 0)
		return r;
	if (r)
		return already_used(path, hex, e);
	strbuf_init(&out, n + sizeof(nonce->hex) + 2);
	strbuf_add(&out, buf, n);
	strbuf_addf(&out, "%s\n", hex);
	return write_file_atomic(path, out.buf, out.len, 0644, e);
}
