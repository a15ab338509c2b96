/* See bootlib.h. */
#include "boot/bootlib.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef BOOT_PROG
#error "define BOOT_PROG (the program name in messages)"
#endif

#define TPM_DEV "/dev/tpm0"
#define MAX_BANKS 8

static void vsay(const char *what, const char *fmt, va_list ap)
{
	fprintf(stderr, BOOT_PROG ": %s", what);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void boot_say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay("", fmt, ap);
	va_end(ap);
}

int boot_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay("error: ", fmt, ap);
	va_end(ap);
	return -1;
}

int boot_read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

int boot_find_disk(const char *want, int wait_s, char *dev, size_t size)
{
	for (int tries = 0; tries < wait_s * 10; tries++) {
		DIR *d = opendir("/sys/block");
		struct dirent *de;
		while (d && (de = readdir(d))) {
			char path[300], serial[64];
			snprintf(path, sizeof(path), "/sys/block/%s/serial", de->d_name);
			if (boot_read_small(path, serial, sizeof(serial)) < 0 || strcmp(serial, want))
				continue;
			snprintf(path, sizeof(path), "/sys/block/%s/dev", de->d_name);
			closedir(d);
			return boot_read_small(path, dev, size);
		}
		if (d)
			closedir(d);
		usleep(100000);
	}
	return boot_fail("no disk with serial %s after %d s", want, wait_s);
}

static void put_be(uint8_t *p, uint32_t v, int n)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint32_t get_be(const uint8_t *p, int n)
{
	uint32_t v = 0;
	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* One command to the TPM; the response's length, or -1.  A TPM response
 * code other than success is an error. */
static ssize_t tpm_call(const uint8_t *cmd, size_t n, uint8_t *rsp, size_t rsize, const char *what)
{
	ssize_t got;
	int fd = open(TPM_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return boot_fail(TPM_DEV ": %s", strerror(errno));
	if (write(fd, cmd, n) != (ssize_t)n || (got = read(fd, rsp, rsize)) < 10) {
		boot_fail(TPM_DEV ": %s: %s", what, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	if (get_be(rsp + 6, 4))
		return boot_fail(TPM_DEV ": %s: TPM response code 0x%08x", what, get_be(rsp + 6, 4));
	if (get_be(rsp + 2, 4) != (uint32_t)got)
		return boot_fail(TPM_DEV ": %s: response size %u, read %zd", what, get_be(rsp + 2, 4), got);
	return got;
}

struct bank {
	uint16_t alg;
	const char *name;   /* OpenSSL digest name */
};

static const struct bank known[] = {
	{ 0x0004, "SHA1" }, { 0x000b, "SHA256" }, { 0x000c, "SHA384" }, { 0x000d, "SHA512" },
};

/* The banks with pcr selected in TPM2_GetCapability(TPM_CAP_PCRS). */
static int allocated_banks(int pcr, uint16_t *algs, size_t *n)
{
	uint8_t cmd[22], rsp[256];
	ssize_t got;
	size_t off = 19;
	uint32_t count;

	put_be(cmd, 0x8001, 2);           /* TPM_ST_NO_SESSIONS */
	put_be(cmd + 2, sizeof(cmd), 4);
	put_be(cmd + 6, 0x0000017a, 4);   /* TPM_CC_GetCapability */
	put_be(cmd + 10, 5, 4);           /* TPM_CAP_PCRS */
	put_be(cmd + 14, 0, 4);
	put_be(cmd + 18, 1, 4);
	if ((got = tpm_call(cmd, sizeof(cmd), rsp, sizeof(rsp), "GetCapability(PCRS)")) < 0)
		return -1;
	/* header(10) moreData(1) capability(4) TPML_PCR_SELECTION.count(4) */
	if (got < 19 || get_be(rsp + 11, 4) != 5)
		return boot_fail(TPM_DEV ": GetCapability(PCRS): expected TPM_CAP_PCRS data, got %zd bytes", got);
	count = get_be(rsp + 15, 4);
	*n = 0;
	for (uint32_t i = 0; i < count; i++) {
		uint16_t alg;
		uint8_t size;
		if (off + 3 > (size_t)got || off + 3 + rsp[off + 2] > (size_t)got)
			return boot_fail(TPM_DEV ": GetCapability(PCRS): truncated selection %u", i);
		alg = (uint16_t)get_be(rsp + off, 2);
		size = rsp[off + 2];
		if (pcr / 8 < size && (rsp[off + 3 + pcr / 8] >> (pcr % 8) & 1)) {
			if (*n == MAX_BANKS)
				return boot_fail(TPM_DEV ": GetCapability(PCRS): more than %d banks", MAX_BANKS);
			algs[(*n)++] = alg;
		}
		off += 3 + size;
	}
	if (!*n)
		return boot_fail(TPM_DEV ": no PCR bank has PCR %d allocated", pcr);
	return 0;
}

int boot_pcr_extend(int pcr, const void *data, size_t len, char *banks_out, size_t banks_size)
{
	uint16_t algs[MAX_BANKS];
	const struct bank *use[MAX_BANKS];
	uint8_t cmd[1024], rsp[64];
	size_t nb = 0, n = 10, names = 0;

	if (banks_out && banks_size)
		banks_out[0] = '\0';
	if (allocated_banks(pcr, algs, &nb) < 0)
		return -1;
	for (size_t i = 0; i < nb; i++) {
		use[i] = NULL;
		for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++)
			if (known[k].alg == algs[i])
				use[i] = &known[k];
		if (!use[i])
			return boot_fail(TPM_DEV ": PCR %d: bank with algorithm 0x%04x: expected SHA-1/256/384/512", pcr,
					 algs[i]);
	}
	put_be(cmd + n, (uint32_t)pcr, 4), n += 4;
	put_be(cmd + n, 9, 4), n += 4;                    /* authorizationSize */
	put_be(cmd + n, 0x40000009, 4), n += 4;           /* TPM_RS_PW */
	put_be(cmd + n, 0, 2), n += 2;                    /* nonce */
	cmd[n++] = 0;                                     /* session attributes */
	put_be(cmd + n, 0, 2), n += 2;                    /* hmac */
	put_be(cmd + n, (uint32_t)nb, 4), n += 4;         /* TPML_DIGEST_VALUES.count */
	for (size_t i = 0; i < nb; i++) {
		unsigned dlen = 0;
		put_be(cmd + n, use[i]->alg, 2), n += 2;
		if (!EVP_Digest(data, len, cmd + n, &dlen, EVP_get_digestbyname(use[i]->name), NULL))
			return boot_fail("%s: cannot hash the event", use[i]->name);
		n += dlen;
		if (banks_out && names + strlen(use[i]->name) + 2 < banks_size)
			names += (size_t)snprintf(banks_out + names, banks_size - names, "%s%s", i ? "," : "",
						  use[i]->name);
	}
	put_be(cmd, 0x8002, 2);                           /* TPM_ST_SESSIONS */
	put_be(cmd + 2, (uint32_t)n, 4);
	put_be(cmd + 6, 0x00000182, 4);                   /* TPM_CC_PCR_Extend */
	return tpm_call(cmd, n, rsp, sizeof(rsp), "PCR_Extend") < 0 ? -1 : 0;
}
