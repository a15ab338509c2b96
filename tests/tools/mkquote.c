/* mkquote: signs synthetic TPM2 quotes with software ECC P-256 "AKs", for
 * scripts/gen-reports.py.  The quote is a real TPMS_ATTEST (type
 * TPM_ST_ATTEST_QUOTE) and the signature a TPMT_SIGNATURE (ECDSA,
 * SHA-256), both marshalled by tss2-mu exactly as a TPM returns them,
 * so a verifier cannot tell them from tpm2_quote's output.
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
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <tss2/tss2_mu.h>

#include "lib/base64.h"
#include "lib/digest.h"

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
	TPMS_ATTEST a;
	TPMT_SIGNATURE s;
	uint8_t abuf[sizeof(TPMS_ATTEST)], sbuf[sizeof(TPMT_SIGNATURE)], *der = NULL, *sig = NULL;
	size_t alen = 0, slen = 0, siglen = 0;
	int derlen;
	EVP_MD_CTX *md;
	ECDSA_SIG *es;
	const BIGNUM *r, *sv;

	memset(&a, 0, sizeof(a));
	a.magic = TPM2_GENERATED_VALUE;
	a.type = TPM2_ST_ATTEST_QUOTE;
	/* qualifiedSigner: a TPM name, nameAlg || H(public) */
	derlen = i2d_PUBKEY(ak, &der);
	if (derlen <= 0)
		return -1;
	a.qualifiedSigner.size = 34;
	a.qualifiedSigner.name[0] = 0x00;
	a.qualifiedSigner.name[1] = 0x0b;
	sha256_buf(der, (size_t)derlen, a.qualifiedSigner.name + 2);
	OPENSSL_free(der);
	a.extraData.size = (UINT16)nlen;
	memcpy(a.extraData.buffer, nonce, nlen);
	a.clockInfo.clock = 1000;
	a.clockInfo.safe = 1;
	a.firmwareVersion = 0x2020;
	a.attested.quote.pcrSelect.count = 1;
	a.attested.quote.pcrSelect.pcrSelections[0].hash = TPM2_ALG_SHA256;
	a.attested.quote.pcrSelect.pcrSelections[0].sizeofSelect = 3;
	for (int b = 0; b < 3; b++)
		a.attested.quote.pcrSelect.pcrSelections[0].pcrSelect[b] = (uint8_t)(mask >> (8 * b));
	a.attested.quote.pcrDigest.size = 32;
	memcpy(a.attested.quote.pcrDigest.buffer, digest, 32);
	if (Tss2_MU_TPMS_ATTEST_Marshal(&a, abuf, sizeof(abuf), &alen))
		return -1;

	md = EVP_MD_CTX_new();
	if (!md || EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, ak) != 1 ||
	    EVP_DigestSign(md, NULL, &siglen, abuf, alen) != 1 || !(sig = malloc(siglen)) ||
	    EVP_DigestSign(md, sig, &siglen, abuf, alen) != 1)
		return -1;
	EVP_MD_CTX_free(md);
	const uint8_t *p = sig;
	es = d2i_ECDSA_SIG(NULL, &p, (long)siglen);
	free(sig);
	if (!es)
		return -1;
	ECDSA_SIG_get0(es, &r, &sv);
	memset(&s, 0, sizeof(s));
	s.sigAlg = TPM2_ALG_ECDSA;
	s.signature.ecdsa.hash = TPM2_ALG_SHA256;
	s.signature.ecdsa.signatureR.size = 32;
	s.signature.ecdsa.signatureS.size = 32;
	if (BN_bn2binpad(r, s.signature.ecdsa.signatureR.buffer, 32) != 32 ||
	    BN_bn2binpad(sv, s.signature.ecdsa.signatureS.buffer, 32) != 32)
		return -1;
	ECDSA_SIG_free(es);
	if (Tss2_MU_TPMT_SIGNATURE_Marshal(&s, sbuf, sizeof(sbuf), &slen))
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
