#include "lib/base64.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>

size_t base64_encoded_len(size_t n)
{
	return (n + 2) / 3 * 4;
}

char *base64_encode(const void *data, size_t n, size_t *len)
{
	/* EVP_EncodeBlock takes an int length. */
	if (n > (size_t)INT32_MAX / 4 * 3 - 3)
		return NULL;
	size_t want = base64_encoded_len(n);
	char *out = malloc(want + 1);
	if (!out)
		return NULL;
	int got = EVP_EncodeBlock((unsigned char *)out, data, (int)n);
	if (got < 0 || (size_t)got != want) {
		free(out);
		return NULL;
	}
	out[want] = '\0';
	if (len)
		*len = want;
	return out;
}

static int b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

int base64_decode(const char *in, size_t inlen, uint8_t **out, size_t *outlen)
{
	size_t pad = 0;

	if (inlen % 4 != 0 || inlen > (size_t)INT32_MAX)
		return -EINVAL;
	if (inlen >= 1 && in[inlen - 1] == '=')
		pad++;
	if (inlen >= 2 && in[inlen - 2] == '=')
		pad++;
	/* EVP_DecodeBlock skips leading/trailing whitespace and would accept
	 * '=' anywhere in the last quantum; check the alphabet ourselves. */
	for (size_t i = 0; i < inlen - pad; i++)
		if (b64_value(in[i]) < 0)
			return -EINVAL;
	/* Canonical: the bits the padding drops must be zero. */
	if (pad == 1 && (b64_value(in[inlen - 2]) & 0x03))
		return -EINVAL;
	if (pad == 2 && (b64_value(in[inlen - 3]) & 0x0f))
		return -EINVAL;

	uint8_t *buf = malloc(inlen / 4 * 3 + 1);
	if (!buf)
		return -ENOMEM;
	int got = inlen ? EVP_DecodeBlock(buf, (const unsigned char *)in, (int)inlen) : 0;
	if (got < 0 || (size_t)got != inlen / 4 * 3) {
		free(buf);
		return -EINVAL;
	}
	size_t n = (size_t)got - pad;
	buf[n] = '\0';
	*out = buf;
	*outlen = n;
	return 0;
}
