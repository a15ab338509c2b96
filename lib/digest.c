#include "lib/digest.h"
#include "lib/str.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <string.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"

void sha256_buf(const void *data, size_t len, uint8_t out[SHA256_LEN])
{
	unsigned int n = 0;
	EVP_Digest(data, len, out, &n, EVP_sha256(), NULL);
}

EVP_MD_CTX *sha256_begin(void)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	if (c && !EVP_DigestInit_ex(c, EVP_sha256(), NULL)) {
		EVP_MD_CTX_free(c);
		return NULL;
	}
	return c;
}

int sha256_write(void *c, const char *buf, size_t len, ingot_error *e)
{
	return EVP_DigestUpdate(c, buf, len) ? 0 : ingot_fail(e, -ENOMEM, "sha256: out of memory");
}

void sha256_end(EVP_MD_CTX *c, uint8_t out[SHA256_LEN])
{
	unsigned int n = 0;
	EVP_DigestFinal_ex(c, out, &n);
	EVP_MD_CTX_free(c);
}

int sha256_fd(int fd, const char *name, uint8_t out[SHA256_LEN], uint64_t *size, ingot_error *e)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	uint8_t buf[1 << 16];
	uint64_t total = 0;
	unsigned int n = 0;
	int r = 0;

	if (!ctx)
		return ingot_fail(e, -ENOMEM, "%s: out of memory", name);
	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	for (;;) {
		ssize_t got = read(fd, buf, sizeof(buf));
		if (got < 0) {
			if (errno == EINTR)
				continue;
			r = ingot_fail(e, -errno, "%s: read failed: %s", name, strerror(errno));
			goto out;
		}
		if (got == 0)
			break;
		EVP_DigestUpdate(ctx, buf, (size_t)got);
		total += (uint64_t)got;
	}
	EVP_DigestFinal_ex(ctx, out, &n);
	if (size)
		*size = total;
out:
	EVP_MD_CTX_free(ctx);
	return r;
}

int sha256_file(const char *path, uint8_t out[SHA256_LEN], uint64_t *size, ingot_error *e)
{
	_cleanup_close_ int fd = open_regular(path, 0, NULL, e);
	if (fd < 0)
		return fd;
	return sha256_fd(fd, path, out, size, e);
}

void hex_encode(const uint8_t *in, size_t len, char *out)
{
	static const char hx[] = "0123456789abcdef";
	for (size_t i = 0; i < len; i++) {
		out[2 * i] = hx[in[i] >> 4];
		out[2 * i + 1] = hx[in[i] & 15];
	}
	out[2 * len] = '\0';
}

int hex_decode(const char *in, uint8_t *out, size_t len)
{
	if (strlen(in) != 2 * len)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		int hi = hexval(in[2 * i]), lo = hexval(in[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

int is_sha256_hex(const char *s)
{
	if (!s || strlen(s) != SHA256_HEX_LEN)
		return 0;
	for (const char *p = s; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return 0;
	return 1;
}
