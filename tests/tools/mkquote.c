/* mkquote: signs synthetic TPM2 quotes with software ECC P-256 "AKs", for
 * scripts/gen-reports.py (tests/tools/swquote.h).
 *
 *   mkquote AKDIR COUNT < requests > quotes
 *
 * Creates AKDIR/ak-N.key (PKCS#8) and ak-N.pub (SPKI PEM) for N < COUNT
 * when missing.  Each request line is
 *   AK NONCE_HEX PCR_MASK PCR_DIGEST_HEX
 * (AK index, qualifying data, sha256-bank PCR bitmask in decimal, sha256
 * of the concatenated selected PCR values); each output line is
 *   ATTEST_BASE64 SIGNATURE_BASE64 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "lib/base64.h"
#include "lib/digest.h"
#include "tests/tools/swquote.h"

static EVP_PKEY *load_or_make(const char *dir, unsigned i)
{
	char kp[4096], pp[4096];
	EVP_PKEY *k = NULL;
	FILE *f;

	snprintf(kp, sizeof(kp), "%s/ak-%u.key", dir, i);
	snprintf(pp, sizeof(pp), "%s/ak-%u.pub", dir, i);
	f = fopen(kp, "r");
	if (f) {
		k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
		fclose(f);
		return k;
	}
	k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	if (!k)
		return NULL;
	f = fopen(kp, "w");
	if (!f || !PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL))
		return NULL;
	fclose(f);
	f = fopen(pp, "w");
	if (!f || !PEM_write_PUBKEY(f, k))
		return NULL;
	fclose(f);
	return k;
}

static int quote(EVP_PKEY *ak, const uint8_t *nonce, size_t nlen, uint32_t mask,
		 const uint8_t digest[32], FILE *out)
{
	uint8_t abuf[sizeof(TPMS_ATTEST)], sbuf[sizeof(TPMT_SIGNATURE)];
	size_t alen, slen;

	if (swquote(ak, NULL, nonce, nlen, mask, digest, abuf, &alen, sbuf, &slen) < 0)
		return -1;
	char *ab = base64_encode(abuf, alen, NULL), *sb = base64_encode(sbuf, slen, NULL);
	if (!ab || !sb)
		return -1;
	fprintf(out, "%s %s\n", ab, sb);
	free(ab);
	free(sb);
	return 0;
}

int main(int argc, char **argv)
{
	char line[1024], nhex[256], dhex[128];
	unsigned count, ak;
	uint32_t mask;
	uint8_t nonce[64], digest[32];
	EVP_PKEY **keys;

	if (argc != 3 || (count = (unsigned)atoi(argv[2])) == 0) {
		fprintf(stderr, "usage: mkquote AKDIR COUNT < requests\n");
		return 64;
	}
	keys = calloc(count, sizeof(*keys));
	for (unsigned i = 0; i < count; i++)
		if (!keys || !(keys[i] = load_or_make(argv[1], i))) {
			fprintf(stderr, "mkquote: cannot load or create AK %u in %s\n", i, argv[1]);
			return 1;
		}
	while (fgets(line, sizeof(line), stdin)) {
		size_t nlen;
		if (sscanf(line, "%u %255s %u %127s", &ak, nhex, &mask, dhex) != 4 || ak >= count ||
		    (nlen = strlen(nhex) / 2) > sizeof(nonce) || hex_decode(nhex, nonce, nlen) < 0 ||
		    strlen(dhex) != 64 || hex_decode(dhex, digest, 32) < 0) {
			fprintf(stderr, "mkquote: bad request: %s", line);
			return 1;
		}
		if (quote(keys[ak], nonce, nlen, mask, digest, stdout) < 0) {
			fprintf(stderr, "mkquote: signing failed\n");
			return 1;
		}
	}
	for (unsigned i = 0; i < count; i++)
		EVP_PKEY_free(keys[i]);
	free(keys);
	return fflush(stdout) ? 1 : 0;
}
