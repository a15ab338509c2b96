/* A software AK's TPM2 quote (tests/tools/mkquote.c, tests/tools/storm.c):
 * a real TPMS_ATTEST (type TPM_ST_ATTEST_QUOTE) and TPMT_SIGNATURE
 * (ECDSA, SHA-256), both marshalled by tss2-mu exactly as a TPM returns
 * them, so a verifier cannot tell them from tpm2_quote's output.
 * Test-only: the AK is a key in memory, not in a TPM. */
#ifndef INGOT_TESTS_TOOLS_SWQUOTE_H
#define INGOT_TESTS_TOOLS_SWQUOTE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <tss2/tss2_mu.h>

#include "lib/digest.h"

/* The AK's TPM name, nameAlg || H(public): 34 bytes into name; 0 or -1. */
static inline int swquote_name(EVP_PKEY *ak, uint8_t name[34])
{
	uint8_t *der = NULL;
	int derlen = i2d_PUBKEY(ak, &der);

	if (derlen <= 0)
		return -1;
	name[0] = 0x00;
	name[1] = 0x0b;
	sha256_buf(der, (size_t)derlen, name + 2);
	OPENSSL_free(der);
	return 0;
}

/* ECDSA-SHA256 over msg, as the marshalled TPMT_SIGNATURE a TPM returns,
 * into sbuf (sizeof(TPMT_SIGNATURE)); 0 or -1. */
static inline int swquote_sign(EVP_PKEY *ak, const uint8_t *msg, size_t len, uint8_t *sbuf, size_t *slen)
{
	TPMT_SIGNATURE s;
	uint8_t *sig = NULL;
	size_t siglen = 0;
	EVP_MD_CTX *md;
	ECDSA_SIG *es;
	const BIGNUM *r, *sv;

	*slen = 0;
	md = EVP_MD_CTX_new();
	if (!md || EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, ak) != 1 ||
	    EVP_DigestSign(md, NULL, &siglen, msg, len) != 1 || !(sig = malloc(siglen)) ||
	    EVP_DigestSign(md, sig, &siglen, msg, len) != 1) {
		EVP_MD_CTX_free(md);
		free(sig);
		return -1;
	}
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
	int bad = BN_bn2binpad(r, s.signature.ecdsa.signatureR.buffer, 32) != 32 ||
		  BN_bn2binpad(sv, s.signature.ecdsa.signatureS.buffer, 32) != 32;
	ECDSA_SIG_free(es);
	if (bad || Tss2_MU_TPMT_SIGNATURE_Marshal(&s, sbuf, sizeof(TPMT_SIGNATURE), slen))
		return -1;
	return 0;
}

/* Marshalled quote into abuf (sizeof(TPMS_ATTEST)) and signature into
 * sbuf (sizeof(TPMT_SIGNATURE)); 0 or -1.  name: the AK's swquote_name,
 * or NULL to compute it (OpenSSL's encoder: a storm computes it once). */
static inline int swquote(EVP_PKEY *ak, const uint8_t *name, const uint8_t *nonce, size_t nlen, uint32_t mask,
			  const uint8_t digest[32], uint8_t *abuf, size_t *alen, uint8_t *sbuf, size_t *slen)
{
	TPMS_ATTEST a;

	*alen = *slen = 0;
	memset(&a, 0, sizeof(a));
	a.magic = TPM2_GENERATED_VALUE;
	a.type = TPM2_ST_ATTEST_QUOTE;
	/* qualifiedSigner: a TPM name, nameAlg || H(public) */
	a.qualifiedSigner.size = 34;
	if (name)
		memcpy(a.qualifiedSigner.name, name, 34);
	else if (swquote_name(ak, a.qualifiedSigner.name) < 0)
		return -1;
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
	if (Tss2_MU_TPMS_ATTEST_Marshal(&a, abuf, sizeof(TPMS_ATTEST), alen))
		return -1;
	return swquote_sign(ak, abuf, *alen, sbuf, slen);
}

#endif
