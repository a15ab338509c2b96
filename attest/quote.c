/* Quote documents and their offline verification. */
#include "attest/quote.h"

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <stdlib.h>
#include <string.h>
#include <tss2/tss2_mu.h>

#include "lib/base64.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/json.h"

const char *quote_reason_name(enum quote_reason r)
{
	static const char *const names[] = {
		[QUOTE_OK] = "ok",
		[QUOTE_MALFORMED] = "malformed",
		[QUOTE_BAD_SIGNATURE] = "bad-signature",
		[QUOTE_WRONG_AK] = "wrong-ak",
		[QUOTE_NOT_QUOTE] = "not-a-quote",
		[QUOTE_NONCE] = "nonce-mismatch",
		[QUOTE_PCR_SELECTION] = "pcr-selection-mismatch",
		[QUOTE_PCR_DIGEST] = "pcr-digest-mismatch",
	};
	return (unsigned)r < ARRAY_SIZE(names) && names[r] ? names[r] : "unknown";
}

int quote_pcr_digest(const struct pcr_values *v, const struct pcr_selection *sel,
		     uint16_t hash_alg, uint8_t *out, size_t *out_len)
{
	const struct bank *h = bank_by_alg(hash_alg);
	_cleanup_strbuf_ struct strbuf cat = STRBUF_INIT;

	if (!h)
		return -EPROTONOSUPPORT;
	strbuf_init(&cat, 1024);
	for (size_t i = 0; i < sel->nbanks; i++) {
		const struct pcr_bank *pb = pcr_values_find(v, sel->banks[i].alg);

		for (unsigned p = 0; p < PCR_COUNT; p++) {
			if (!(sel->banks[i].mask & (1u << p)))
				continue;
			if (!pb || !(pb->mask & (1u << p)))
				return -ENODATA;
			strbuf_add(&cat, pb->value[p], pb->bank->size);
		}
	}
	*out_len = h->size;
	return bank_hash(h, cat.buf, cat.len, out);
}

json_t *quote_document(const uint8_t *attest, size_t attest_len, const uint8_t *sig, size_t sig_len,
		       const struct pcr_values *pcrs, const char *ak_pem,
		       const uint8_t *nonce, size_t nonce_len)
{
	_cleanup_free_ char *a64 = base64_encode(attest, attest_len, NULL);
	_cleanup_free_ char *s64 = base64_encode(sig, sig_len, NULL);
	_cleanup_free_ char *nhex = malloc(2 * nonce_len + 1);
	json_t *pj = pcr_values_to_json(pcrs);

	if (!a64 || !s64 || !nhex || !pj) {
		json_decref(pj);
		return NULL;
	}
	hex_encode(nonce, nonce_len, nhex);
	return json_pack("{s:s, s:s, s:s, s:s, s:o, s:s}", "format", QUOTE_FORMAT, "nonce", nhex,
			 "attest", a64, "signature", s64, "pcrs", pj, "ak_pub", ak_pem);
}

static int refuse(struct quote_info *qi, enum quote_reason why, ingot_error *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int refuse(struct quote_info *qi, enum quote_reason why, ingot_error *e, int code, const char *fmt, ...)
{
	va_list ap;

	qi->reason = why;
	va_start(ap, fmt);
	code = ingot_vfail(e, code, fmt, ap);
	va_end(ap);
	return code;
}

static EVP_PKEY *pem_to_key(const char *pem)
{
	BIO *bio = BIO_new_mem_buf(pem, -1);
	EVP_PKEY *k = bio ? PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL) : NULL;

	BIO_free(bio);
	return k;
}

/* 1 valid, 0 invalid, <0 unusable signature structure. */
static int check_signature(EVP_PKEY *key, const TPMT_SIGNATURE *sig, const uint8_t *msg, size_t len,
			   uint16_t *hash_alg)
{
	_cleanup_free_ uint8_t *der = NULL;
	const uint8_t *s;
	size_t slen;
	EVP_MD_CTX *ctx;
	const EVP_MD *md;
	int ok;

	if (sig->sigAlg == TPM2_ALG_ECDSA) {
		ECDSA_SIG *es = ECDSA_SIG_new();
		BIGNUM *r = BN_bin2bn(sig->signature.ecdsa.signatureR.buffer, sig->signature.ecdsa.signatureR.size, NULL);
		BIGNUM *ss = BN_bin2bn(sig->signature.ecdsa.signatureS.buffer, sig->signature.ecdsa.signatureS.size, NULL);
		int n;

		if (!es || !r || !ss || !ECDSA_SIG_set0(es, r, ss)) {
			ECDSA_SIG_free(es);
			BN_free(r);
			BN_free(ss);
			return -ENOMEM;
		}
		n = i2d_ECDSA_SIG(es, &der);
		ECDSA_SIG_free(es);
		if (n <= 0)
			return -ENOMEM;
		s = der;
		slen = (size_t)n;
		*hash_alg = sig->signature.ecdsa.hash;
		if (!EVP_PKEY_is_a(key, "EC"))
			return 0;
	} else if (sig->sigAlg == TPM2_ALG_RSASSA) {
		s = sig->signature.rsassa.sig.buffer;
		slen = sig->signature.rsassa.sig.size;
		*hash_alg = sig->signature.rsassa.hash;
		if (!EVP_PKEY_is_a(key, "RSA"))
			return 0;
	} else {
		return -EPROTONOSUPPORT;
	}
	/* sha1 signatures are not accepted. */
	md = *hash_alg == TPM2_ALG_SHA1 || !bank_by_alg(*hash_alg) ? NULL : bank_md(bank_by_alg(*hash_alg));
	if (!md)
		return -EPROTONOSUPPORT;
	ctx = EVP_MD_CTX_new();
	if (!ctx)
		return -ENOMEM;
	ok = EVP_DigestVerifyInit(ctx, NULL, md, NULL, key) == 1 &&
	     EVP_DigestVerify(ctx, s, slen, msg, len) == 1;
	EVP_MD_CTX_free(ctx);
	return ok;
}

static int same_key(EVP_PKEY *a, EVP_PKEY *b)
{
	return EVP_PKEY_eq(a, b) == 1;
}

static int decode_b64(const json_t *q, const char *key, uint8_t **out, size_t *len, struct quote_info *qi,
		      ingot_error *e)
{
	const char *s;
	int r = json_get_str(q, key, "quote", &s, e);

	if (r < 0) {
		qi->reason = QUOTE_MALFORMED;
		return r;
	}
	if (base64_decode(s, strlen(s), out, len) < 0)
		return refuse(qi, QUOTE_MALFORMED, e, -EBADMSG, "quote: %s: expected base64, got %zu characters that do not decode",
			      key, strlen(s));
	return 0;
}

int quote_verify(const json_t *quote, const uint8_t *nonce, size_t nonce_len,
		 const char *trusted_ak_pem, struct quote_info *out, ingot_error *e)
{
	struct quote_info local, *qi = out ? out : &local;
	_cleanup_free_ uint8_t *attest = NULL, *sigbuf = NULL, *doc_nonce = NULL;
	size_t attest_len = 0, sig_len = 0, off = 0, dlen;
	const char *format, *nonce_hex, *ak_pem;
	uint8_t digest[BANK_MAX_DIGEST];
	struct pcr_selection quoted_sel, reported_sel;
	EVP_PKEY *key = NULL, *doc_key = NULL;
	TPMS_ATTEST a;
	TPMT_SIGNATURE sig;
	uint16_t hash_alg = 0;
	json_t *pj;
	int r;

	memset(qi, 0, sizeof(*qi));
	if (!json_is_object(quote))
		return refuse(qi, QUOTE_MALFORMED, e, -EBADMSG, "quote: expected a JSON object");
	if ((r = json_get_str(quote, "format", "quote", &format, e)) < 0 ||
	    (r = json_get_str(quote, "nonce", "quote", &nonce_hex, e)) < 0 ||
	    (r = json_get_str(quote, "ak_pub", "quote", &ak_pem, e)) < 0 ||
	    (r = json_get_obj(quote, "pcrs", "quote", &pj, e)) < 0) {
		qi->reason = QUOTE_MALFORMED;
		return r;
	}
	if (strcmp(format, QUOTE_FORMAT))
		return refuse(qi, QUOTE_MALFORMED, e, -EBADMSG, "quote: format: expected %s, got %.80s", QUOTE_FORMAT, format);
	if ((r = decode_b64(quote, "attest", &attest, &attest_len, qi, e)) < 0 ||
	    (r = decode_b64(quote, "signature", &sigbuf, &sig_len, qi, e)) < 0)
		return r;
	if ((r = pcr_values_from_json(pj, "quote", &qi->pcrs, e)) < 0) {
		qi->reason = QUOTE_MALFORMED;
		return r;
	}
	memset(&a, 0, sizeof(a));
	if (Tss2_MU_TPMS_ATTEST_Unmarshal(attest, attest_len, &off, &a) != TSS2_RC_SUCCESS || off != attest_len)
		return refuse(qi, QUOTE_MALFORMED, e, -EBADMSG, "quote: attest: expected a marshalled TPMS_ATTEST, got %zu bytes that do not parse (stopped at byte %zu)",
			      attest_len, off);
	off = 0;
	memset(&sig, 0, sizeof(sig));
	if (Tss2_MU_TPMT_SIGNATURE_Unmarshal(sigbuf, sig_len, &off, &sig) != TSS2_RC_SUCCESS || off != sig_len)
		return refuse(qi, QUOTE_MALFORMED, e, -EBADMSG, "quote: signature: expected a marshalled TPMT_SIGNATURE, got %zu bytes that do not parse",
			      sig_len);

	/* The signature first: nothing else in the document means anything
	 * until the AK vouches for the TPMS_ATTEST bytes. */
	doc_key = pem_to_key(ak_pem);
	key = trusted_ak_pem ? pem_to_key(trusted_ak_pem) : doc_key;
	if (!doc_key || !key) {
		r = refuse(qi, QUOTE_MALFORMED, e, -EBADMSG, "quote: %s: expected a PEM public key, got one OpenSSL cannot read",
			   !key ? "trusted AK" : "ak_pub");
		goto out;
	}
	r = check_signature(key, &sig, attest, attest_len, &hash_alg);
	if (r < 0) {
		r = refuse(qi, QUOTE_MALFORMED, e, -EBADMSG, "quote: signature: expected ECDSA or RSASSA with sha256/384/512, got scheme 0x%x hash 0x%x",
			   sig.sigAlg, hash_alg);
		goto out;
	}
	if (r == 0) {
		if (trusted_ak_pem && !same_key(key, doc_key))
			r = refuse(qi, QUOTE_WRONG_AK, e, -EPERM, "quote: signature: expected a signature by the trusted AK, got one by another key (the quote's ak_pub is not the trusted AK)");
		else
			r = refuse(qi, QUOTE_BAD_SIGNATURE, e, -EPERM, "quote: signature: does not verify with the %sAK over the TPMS_ATTEST bytes (altered quote or wrong key)",
				   trusted_ak_pem ? "trusted " : "quote's ");
		goto out;
	}
	if (a.magic != TPM2_GENERATED_VALUE || a.type != TPM2_ST_ATTEST_QUOTE) {
		r = refuse(qi, QUOTE_NOT_QUOTE, e, -EBADMSG, "quote: attest: expected magic 0x%x and type 0x%x (TPM_ST_ATTEST_QUOTE), got 0x%x and 0x%x",
			   TPM2_GENERATED_VALUE, TPM2_ST_ATTEST_QUOTE, a.magic, a.type);
		goto out;
	}
	dlen = strlen(nonce_hex) / 2;
	doc_nonce = malloc(dlen + 1);
	if (!doc_nonce || hex_decode(nonce_hex, doc_nonce, dlen) < 0) {
		r = refuse(qi, QUOTE_MALFORMED, e, -EBADMSG, "quote: nonce: expected hex, got '%.80s'", nonce_hex);
		goto out;
	}
	if (a.extraData.size != nonce_len || memcmp(a.extraData.buffer, nonce, nonce_len) ||
	    dlen != nonce_len || memcmp(doc_nonce, nonce, nonce_len)) {
		char want[2 * 64 + 1], got[2 * 64 + 1];
		hex_encode(nonce, nonce_len > 64 ? 64 : nonce_len, want);
		hex_encode(a.extraData.buffer, a.extraData.size > 64 ? 64 : a.extraData.size, got);
		r = refuse(qi, QUOTE_NONCE, e, -EPERM, "quote: nonce: expected %s, got %s in the signed TPMS_ATTEST (stale or replayed quote)",
			   want, got);
		goto out;
	}
	memset(&quoted_sel, 0, sizeof(quoted_sel));
	for (UINT32 i = 0; i < a.attested.quote.pcrSelect.count; i++) {
		const TPMS_PCR_SELECTION *s = &a.attested.quote.pcrSelect.pcrSelections[i];
		uint32_t mask = 0;

		for (unsigned p = 0; p < 8u * s->sizeofSelect && p < 8 * sizeof(s->pcrSelect); p++)
			if (s->pcrSelect[p / 8] & (1u << (p % 8))) {
				if (p >= PCR_COUNT) {
					mask = 0;  /* beyond PCR 23: refused below */
					break;
				}
				mask |= 1u << p;
			}
		for (size_t j = 0; j < quoted_sel.nbanks; j++)
			if (quoted_sel.banks[j].alg == s->hash)
				mask = 0;  /* duplicate bank: refused below */
		if (!mask || pcr_selection_add(&quoted_sel, s->hash, mask) < 0) {
			r = refuse(qi, QUOTE_MALFORMED, e, -EBADMSG, "quote: attest: PCR selection %u: expected a known bank once with PCRs 0-%d, got hash 0x%x",
				   i, PCR_COUNT - 1, s->hash);
			goto out;
		}
	}
	pcr_values_selection(&qi->pcrs, &reported_sel);
	{
		int same = quoted_sel.nbanks == reported_sel.nbanks;
		for (size_t i = 0; same && i < quoted_sel.nbanks; i++) {
			const struct pcr_bank *pb = pcr_values_find(&qi->pcrs, quoted_sel.banks[i].alg);
			same = pb && pb->mask == quoted_sel.banks[i].mask;
		}
		if (!same) {
			struct strbuf q = STRBUF_INIT, rep = STRBUF_INIT;
			pcr_selection_format(&quoted_sel, &q);
			pcr_selection_format(&reported_sel, &rep);
			r = refuse(qi, QUOTE_PCR_SELECTION, e, -EBADMSG, "quote: pcrs: expected the quoted selection %s, got values for %s",
				   q.buf ? q.buf : "", rep.buf ? rep.buf : "(none)");
			strbuf_release(&q);
			strbuf_release(&rep);
			goto out;
		}
	}
	r = quote_pcr_digest(&qi->pcrs, &quoted_sel, hash_alg, digest, &dlen);
	if (r < 0 || a.attested.quote.pcrDigest.size != dlen ||
	    memcmp(a.attested.quote.pcrDigest.buffer, digest, dlen)) {
		r = refuse(qi, QUOTE_PCR_DIGEST, e, -EPERM, "quote: pcrs: the reported PCR values do not hash to the signed pcrDigest (a value was changed)");
		goto out;
	}
	qi->clock = a.clockInfo.clock;
	qi->reset_count = a.clockInfo.resetCount;
	qi->restart_count = a.clockInfo.restartCount;
	qi->safe = a.clockInfo.safe;
	qi->firmware_version = a.firmwareVersion;
	qi->reason = QUOTE_OK;
	r = 0;
out:
	if (key != doc_key)
		EVP_PKEY_free(key);
	EVP_PKEY_free(doc_key);
	return r;
}
