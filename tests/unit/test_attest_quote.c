/* Units for attest/quote.c: quotes built here (TPMS_ATTEST marshalled
 * with tss2-mu, signed with OpenSSL keys made here) are accepted, and
 * each kind of tampering is refused with its reason.  Quotes from a real
 * TPM (swtpm, tpm2_quote) are in tests/e2e/test-attest-*.sh. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdlib.h>
#include <string.h>
#include <tss2/tss2_mu.h>

#include "attest/judge.h"
#include "attest/nonce.h"
#include "attest/quote.h"
#include "lib/base64.h"
#include "lib/cleanup.h"
#include "lib/strbuf.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "tests/unit/helpers.h"

static const uint8_t nonce[] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3 };

struct fixture {
	EVP_PKEY *ec, *rsa, *other;
	char *ec_pem, *rsa_pem, *other_pem;
	struct pcr_values pcrs;
	struct pcr_selection sel;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct pcr_bank *pb;

	f->ec = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	f->other = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	f->rsa = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)2048);
	if (!f->ec || !f->other || !f->rsa)
		return -1;
	f->ec_pem = pem_of(f->ec);
	f->rsa_pem = pem_of(f->rsa);
	f->other_pem = pem_of(f->other);
	pb = pcr_values_bank(&f->pcrs, bank_by_name("sha256")->alg, 1);
	for (unsigned p = 0; p < 3; p++)
		memset(pb->value[p], (int)p + 1, 32);
	memset(pb->value[15], 0x15, 32);
	pb->mask = 0x8007;
	pb = pcr_values_bank(&f->pcrs, bank_by_name("sha1")->alg, 1);
	memset(pb->value[15], 0xaa, 20);
	pb->mask = 0x8000;
	/* The selection's order (sha1 first) differs from the values' order:
	 * the digest follows the selection, as TPM2_Quote does. */
	pcr_selection_add(&f->sel, bank_by_name("sha1")->alg, 0x8000);
	pcr_selection_add(&f->sel, bank_by_name("sha256")->alg, 0x8007);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	EVP_PKEY_free(f->ec);
	EVP_PKEY_free(f->rsa);
	EVP_PKEY_free(f->other);
	free(f->ec_pem);
	free(f->rsa_pem);
	free(f->other_pem);
	free(f);
	return 0;
}

static void make_attest(const struct fixture *f, TPMS_ATTEST *a)
{
	size_t len;

	memset(a, 0, sizeof(*a));
	a->magic = TPM2_GENERATED_VALUE;
	a->type = TPM2_ST_ATTEST_QUOTE;
	a->extraData.size = sizeof(nonce);
	memcpy(a->extraData.buffer, nonce, sizeof(nonce));
	a->clockInfo.clock = 123456;
	a->clockInfo.resetCount = 7;
	a->clockInfo.restartCount = 2;
	a->clockInfo.safe = 1;
	a->firmwareVersion = 0x0102030405060708ull;
	a->attested.quote.pcrSelect.count = (UINT32)f->sel.nbanks;
	for (size_t i = 0; i < f->sel.nbanks; i++) {
		TPMS_PCR_SELECTION *s = &a->attested.quote.pcrSelect.pcrSelections[i];
		s->hash = f->sel.banks[i].alg;
		s->sizeofSelect = 3;
		s->pcrSelect[0] = (BYTE)f->sel.banks[i].mask;
		s->pcrSelect[1] = (BYTE)(f->sel.banks[i].mask >> 8);
		s->pcrSelect[2] = (BYTE)(f->sel.banks[i].mask >> 16);
	}
	assert_int_equal(quote_pcr_digest(&f->pcrs, &f->sel, TPM2_ALG_SHA256,
					  a->attested.quote.pcrDigest.buffer, &len), 0);
	a->attested.quote.pcrDigest.size = (UINT16)len;
}

/* Marshal a, sign it with key over hash, and wrap both in a quote
 * document claiming nonce n. */
static json_t *sign_attest(const struct fixture *f, const TPMS_ATTEST *a, EVP_PKEY *key, const char *pem,
			   uint16_t hash, const uint8_t *n, size_t nlen)
{
	uint8_t msg[sizeof(TPMS_ATTEST)], sigbuf[sizeof(TPMT_SIGNATURE)], der[512];
	size_t mlen = 0, slen = 0, dlen = sizeof(der);
	TPMT_SIGNATURE sig = { 0 };
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();

	assert_int_equal(Tss2_MU_TPMS_ATTEST_Marshal(a, msg, sizeof(msg), &mlen), TSS2_RC_SUCCESS);
	assert_int_equal(EVP_DigestSignInit(ctx, NULL, bank_md(bank_by_alg(hash)), NULL, key), 1);
	assert_int_equal(EVP_DigestSign(ctx, der, &dlen, msg, mlen), 1);
	EVP_MD_CTX_free(ctx);
	if (EVP_PKEY_is_a(key, "EC")) {
		const uint8_t *p = der;
		ECDSA_SIG *es = d2i_ECDSA_SIG(NULL, &p, (long)dlen);
		sig.sigAlg = TPM2_ALG_ECDSA;
		sig.signature.ecdsa.hash = hash;
		sig.signature.ecdsa.signatureR.size = (UINT16)BN_bn2binpad(ECDSA_SIG_get0_r(es),
			sig.signature.ecdsa.signatureR.buffer, 32);
		sig.signature.ecdsa.signatureS.size = (UINT16)BN_bn2binpad(ECDSA_SIG_get0_s(es),
			sig.signature.ecdsa.signatureS.buffer, 32);
		ECDSA_SIG_free(es);
	} else {
		sig.sigAlg = TPM2_ALG_RSASSA;
		sig.signature.rsassa.hash = hash;
		sig.signature.rsassa.sig.size = (UINT16)dlen;
		memcpy(sig.signature.rsassa.sig.buffer, der, dlen);
	}
	assert_int_equal(Tss2_MU_TPMT_SIGNATURE_Marshal(&sig, sigbuf, sizeof(sigbuf), &slen), TSS2_RC_SUCCESS);
	return quote_document(msg, mlen, sigbuf, slen, &f->pcrs, pem, n, nlen);
}

static json_t *sign_quote(const struct fixture *f, const TPMS_ATTEST *a, EVP_PKEY *key, const char *pem)
{
	return sign_attest(f, a, key, pem, TPM2_ALG_SHA256, nonce, sizeof(nonce));
}

/* A valid quote over nonce n (nlen 0: empty qualifying data), signed
 * over hash (the PCR digest too, as TPM2_Quote does). */
static json_t *quote_with(const struct fixture *f, EVP_PKEY *key, const char *pem, uint16_t hash,
			  const uint8_t *n, size_t nlen)
{
	TPMS_ATTEST a;
	size_t len;

	make_attest(f, &a);
	a.extraData.size = (UINT16)nlen;
	if (nlen)   /* memcpy from NULL is undefined even for 0 bytes */
		memcpy(a.extraData.buffer, n, nlen);
	assert_int_equal(quote_pcr_digest(&f->pcrs, &f->sel, hash, a.attested.quote.pcrDigest.buffer, &len), 0);
	a.attested.quote.pcrDigest.size = (UINT16)len;
	return sign_attest(f, &a, key, pem, hash, n, nlen);
}

static void expect_reason(const json_t *q, const uint8_t *n, size_t nlen, const char *trusted,
			  enum attest_verdict want, const char *needle)
{
	struct quote_info qi;
	ingot_error e = { 0 };
	int r = quote_verify(q, n, nlen, trusted, &qi, &e);

	if (qi.reason != want || (want == VERDICT_OK) != (r == 0) || (needle && !strstr(e.msg, needle)))
		fail_msg("expected %s '%s', got %s (%d): %s", attest_verdict_name(want), needle ? needle : "",
			 attest_verdict_name(qi.reason), r, e.msg);
	/* The AK cache (ingot audit) judges alike, parsing or reusing the keys. */
	struct ak_cache *c = ak_cache_new();
	for (int pass = 0; pass < 2; pass++) {
		struct quote_info qc;
		ingot_error ec = { 0 };
		assert_int_equal(quote_verify_cached(q, n, nlen, trusted, c, &qc, &ec), r);
		assert_int_equal(qc.reason, qi.reason);
		assert_string_equal(qc.ak_id, qi.ak_id);
		assert_string_equal(ec.msg, e.msg);
	}
	ak_cache_free(c);
	/* A trusted AK parsed beforehand (a verifier's, at load) judges alike. */
	struct ak_key *k = NULL;
	ingot_error ek = { 0 };
	if (trusted && ak_key_parse(trusted, &k, &ek) == 0) {
		struct quote_info qk;
		assert_int_equal(quote_verify_key(q, n, nlen, k, NULL, NULL, &qk, &ek), r);
		assert_int_equal(qk.reason, qi.reason);
		assert_string_equal(qk.ak_id, qi.ak_id);
		assert_string_equal(ek.msg, e.msg);
		ak_key_free(k);
	}
}

/* A P-256 AK in PEM_write_PUBKEY's form is read without OpenSSL's PEM
 * decoder: the same key, the same id (sha256 of its DER
 * SubjectPublicKeyInfo) as the general way; a point off the curve in
 * that very form is refused, like any text OpenSSL does not read. */
static void test_p256_pem_direct(void **state)
{
	const struct fixture *f = *state;

	for (int i = 0; i < 8; i++) {
		EVP_PKEY *k = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
		BIO *b = BIO_new(BIO_s_mem());
		unsigned char *der = NULL;
		char *pem, want[SHA256_HEX_LEN + 1], b64[200], bad[300];
		uint8_t md[SHA256_LEN];
		struct ak_key *a = NULL;
		ingot_error e = { 0 };
		int n = i2d_PUBKEY(k, &der);

		assert_true(n == 91 && b && PEM_write_bio_PUBKEY(b, k));
		long pl = BIO_get_mem_data(b, &pem);
		_cleanup_free_ char *text = strndup(pem, (size_t)pl);
		sha256_buf(der, (size_t)n, md);
		hex_encode(md, sizeof(md), want);
		assert_int_equal(ak_key_parse(text, &a, &e), 0);
		assert_string_equal(ak_key_id(a), want);
		/* The key read is the key: a quote it signed verifies. */
		json_t *q = quote_with(f, k, text, TPM2_ALG_SHA256, nonce, sizeof(nonce));
		struct quote_info qi;
		assert_int_equal(quote_verify_key(q, nonce, sizeof(nonce), a, NULL, NULL, &qi, &e), 0);
		json_decref(q);
		ak_key_free(a);
		/* Y + 1: off the curve, in the same two lines. */
		der[90] ^= 1;
		assert_int_equal(EVP_EncodeBlock((unsigned char *)b64, der, n), 124);
		snprintf(bad, sizeof(bad), "-----BEGIN PUBLIC KEY-----\n%.64s\n%.60s\n-----END PUBLIC KEY-----\n", b64, b64 + 64);
		assert_int_equal(strlen(bad), strlen(text));
		assert_int_not_equal(ak_key_parse(bad, &a, &e), 0);
		assert_null(a);
		OPENSSL_free(der);
		BIO_free(b);
		EVP_PKEY_free(k);
	}
}

static void test_valid_quotes(void **state)
{
	struct fixture *f = *state;
	TPMS_ATTEST a;
	struct quote_info qi;
	ingot_error e = { 0 };

	make_attest(f, &a);
	for (int rsa = 0; rsa < 2; rsa++) {
		_cleanup_json_ json_t *q = sign_quote(f, &a, rsa ? f->rsa : f->ec, rsa ? f->rsa_pem : f->ec_pem);
		assert_non_null(q);
		assert_int_equal(quote_verify(q, nonce, sizeof(nonce), rsa ? f->rsa_pem : f->ec_pem, &qi, &e), 0);
		assert_int_equal(qi.reason, VERDICT_OK);
		assert_int_equal(qi.clock, 123456);
		assert_int_equal(qi.reset_count, 7);
		assert_int_equal(qi.restart_count, 2);
		assert_int_equal(qi.safe, 1);
		assert_true(qi.firmware_version == 0x0102030405060708ull);
		assert_memory_equal(pcr_values_find(&qi.pcrs, TPM2_ALG_SHA1)->value[15], f->pcrs.banks[1].value[15], 20);
		/* Without a trusted key, the quote's own key. */
		expect_reason(q, nonce, sizeof(nonce), NULL, VERDICT_OK, NULL);
	}
}

/* Past the cache's bound new AKs are parsed per call and not kept:
 * still the same verdict and id, with and without a trusted AK.  The AK
 * texts differ only in trailing newlines, which the PEM rule allows. */
static void test_ak_cache_bound(void **state)
{
	struct fixture *f = *state;
	TPMS_ATTEST a;
	struct quote_info want, qi;
	ingot_error e = { 0 };
	struct ak_cache *c = ak_cache_new();
	_cleanup_strbuf_ struct strbuf pem = STRBUF_INIT;

	make_attest(f, &a);
	_cleanup_json_ json_t *q = sign_quote(f, &a, f->ec, f->ec_pem);
	assert_int_equal(quote_verify(q, nonce, sizeof(nonce), NULL, &want, &e), 0);
	strbuf_init(&pem, 8192);
	strbuf_addstr(&pem, f->ec_pem);
	for (int i = 0; i < 5000; i++) {   /* more than AK_CACHE_MAX texts */
		strbuf_addch(&pem, '\n');
		json_object_set_new(q, "ak_pub", json_string(pem.buf));
		int trusted = i % 7 == 0;
		memset(&qi, 0, sizeof(qi));
		assert_int_equal(quote_verify_cached(q, nonce, sizeof(nonce), trusted ? pem.buf : NULL, c, &qi, &e), 0);
		assert_int_equal(qi.reason, VERDICT_OK);
		assert_string_equal(qi.ak_id, want.ak_id);
	}
	/* A cached text, then a trusted AK that is not the signer, past the bound. */
	json_object_set_new(q, "ak_pub", json_string(f->ec_pem));
	assert_int_equal(quote_verify_cached(q, nonce, sizeof(nonce), NULL, c, &qi, &e), 0);
	assert_int_not_equal(quote_verify_cached(q, nonce, sizeof(nonce), f->other_pem, c, &qi, &e), 0);
	assert_int_equal(qi.reason, VERDICT_WRONG_AK);
	ak_cache_free(c);
}

static void test_refusals(void **state)
{
	struct fixture *f = *state;
	_cleanup_json_ json_t *q = NULL;
	TPMS_ATTEST a;
	static const uint8_t other_nonce[] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 4 };

	make_attest(f, &a);
	q = sign_quote(f, &a, f->ec, f->ec_pem);

	/* Another nonce (the caller's, or the document's). */
	expect_reason(q, other_nonce, sizeof(other_nonce), f->ec_pem, VERDICT_NONCE, "expected deadbeef010204");
	expect_reason(q, nonce, 3, f->ec_pem, VERDICT_NONCE, NULL);
	{
		_cleanup_json_ json_t *c = json_deep_copy(q);
		json_object_set_new(c, "nonce", json_string("deadbeef010204"));
		expect_reason(c, nonce, sizeof(nonce), f->ec_pem, VERDICT_NONCE, NULL);
	}
	/* Another AK: as the trusted key, and swapped into the document. */
	expect_reason(q, nonce, sizeof(nonce), f->other_pem, VERDICT_WRONG_AK, "trusted AK");
	expect_reason(q, nonce, sizeof(nonce), f->rsa_pem, VERDICT_WRONG_AK, NULL);
	{
		_cleanup_json_ json_t *c = json_deep_copy(q);
		json_object_set_new(c, "ak_pub", json_string(f->other_pem));
		expect_reason(c, nonce, sizeof(nonce), NULL, VERDICT_BAD_SIGNATURE, NULL);
		expect_reason(c, nonce, sizeof(nonce), f->ec_pem, VERDICT_OK, NULL);
	}
	/* A changed PCR value; a PCR missing or added. */
	{
		_cleanup_json_ json_t *c = json_deep_copy(q);
		json_object_set_new(json_object_get(json_object_get(c, "pcrs"), "sha256"), "2",
				    json_string("0000000000000000000000000000000000000000000000000000000000000000"));
		expect_reason(c, nonce, sizeof(nonce), f->ec_pem, VERDICT_PCR_DIGEST, "pcrDigest");
		json_object_del(json_object_get(json_object_get(c, "pcrs"), "sha256"), "2");
		expect_reason(c, nonce, sizeof(nonce), f->ec_pem, VERDICT_PCR_SELECTION,
			      "expected the quoted selection sha1:15+sha256:0,1,2,15, got values for sha256:0,1,15+sha1:15");
		json_object_del(json_object_get(c, "pcrs"), "sha1");
		expect_reason(c, nonce, sizeof(nonce), f->ec_pem, VERDICT_PCR_SELECTION, NULL);
	}
	/* Every flipped TPMS_ATTEST byte. */
	{
		const char *b64 = json_string_value(json_object_get(q, "attest"));
		uint8_t *raw;
		size_t n;
		assert_int_equal(base64_decode(b64, strlen(b64), &raw, &n), 0);
		for (size_t i = 0; i < n; i++) {
			_cleanup_json_ json_t *c = json_deep_copy(q);
			struct quote_info qi;
			ingot_error e = { 0 };
			char *enc;

			raw[i] ^= 0x40;
			enc = base64_encode(raw, n, NULL);
			json_object_set_new(c, "attest", json_string(enc));
			free(enc);
			assert_int_not_equal(quote_verify(c, nonce, sizeof(nonce), f->ec_pem, &qi, &e), 0);
			assert_true(qi.reason == VERDICT_BAD_SIGNATURE || qi.reason == VERDICT_MALFORMED);
			raw[i] ^= 0x40;
		}
		free(raw);
	}
}

static void test_signed_but_wrong(void **state)
{
	struct fixture *f = *state;
	TPMS_ATTEST a;

	/* Correctly signed structures that are not a TPM quote for us. */
	make_attest(f, &a);
	a.magic = 0x12345678;
	{
		_cleanup_json_ json_t *q = sign_quote(f, &a, f->ec, f->ec_pem);
		expect_reason(q, nonce, sizeof(nonce), f->ec_pem, VERDICT_NOT_QUOTE, "TPM_ST_ATTEST_QUOTE");
	}
	make_attest(f, &a);
	a.type = TPM2_ST_ATTEST_CERTIFY;
	{
		_cleanup_json_ json_t *q = sign_quote(f, &a, f->ec, f->ec_pem);
		expect_reason(q, nonce, sizeof(nonce), f->ec_pem, VERDICT_NOT_QUOTE, NULL);
	}
	make_attest(f, &a);
	a.attested.quote.pcrDigest.buffer[0] ^= 1;
	{
		_cleanup_json_ json_t *q = sign_quote(f, &a, f->ec, f->ec_pem);
		expect_reason(q, nonce, sizeof(nonce), f->ec_pem, VERDICT_PCR_DIGEST, NULL);
	}
}

static void test_malformed(void **state)
{
	struct fixture *f = *state;
	_cleanup_json_ json_t *q = NULL;
	TPMS_ATTEST a;
	static const char *const members[] = { "format", "nonce", "attest", "signature", "pcrs", "ak_pub" };

	make_attest(f, &a);
	q = sign_quote(f, &a, f->ec, f->ec_pem);
	for (size_t i = 0; i < ARRAY_SIZE(members); i++) {
		_cleanup_json_ json_t *c = json_deep_copy(q);
		json_object_del(c, members[i]);
		expect_reason(c, nonce, sizeof(nonce), NULL, VERDICT_MALFORMED, members[i]);
	}
	{
		_cleanup_json_ json_t *c = json_deep_copy(q);
		json_object_set_new(c, "attest", json_string("AAEC"));
		expect_reason(c, nonce, sizeof(nonce), NULL, VERDICT_MALFORMED, "TPMS_ATTEST");
		json_object_set_new(c, "attest", json_string("***"));
		expect_reason(c, nonce, sizeof(nonce), NULL, VERDICT_MALFORMED, "base64");
	}
	{
		/* Trailing bytes after the TPMT_SIGNATURE. */
		_cleanup_json_ json_t *c = json_deep_copy(q);
		const char *b64 = json_string_value(json_object_get(q, "signature"));
		uint8_t *raw, *longer;
		size_t n;
		char *enc;
		assert_int_equal(base64_decode(b64, strlen(b64), &raw, &n), 0);
		longer = calloc(1, n + 1);
		memcpy(longer, raw, n);
		enc = base64_encode(longer, n + 1, NULL);
		json_object_set_new(c, "signature", json_string(enc));
		expect_reason(c, nonce, sizeof(nonce), NULL, VERDICT_MALFORMED, "TPMT_SIGNATURE");
		free(enc);
		free(raw);
		free(longer);
	}
	{
		_cleanup_json_ json_t *s = json_string("x");
		expect_reason(s, nonce, sizeof(nonce), NULL, VERDICT_MALFORMED, NULL);
	}
}

static const uint8_t nonce8[] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4 };
#define NONCE8_HEX "deadbeef01020304"

/* hex decoded as the inputs' loader decodes it (nonce_decode). */
static const struct nonce *decoded(const char *hex, struct nonce *n)
{
	ingot_error e = { 0 };

	assert_int_equal(nonce_decode(hex, n, &e), 0);
	return n;
}

static void expect_judged(const json_t *q, const struct attest_expect *x, enum attest_verdict want,
			  const char *needle, struct quote_info *qi)
{
	ingot_error e = { 0 };
	int r = attest_judge(q, x, qi, &e);

	if (qi->reason != want || (want == VERDICT_OK) != (r == 0) || (needle && !strstr(e.msg, needle)))
		fail_msg("expected %s '%s', got %s (%d): %s", attest_verdict_name(want), needle ? needle : "",
			 attest_verdict_name(qi->reason), r, e.msg);
}

/* The one nonce rule, the AK's id, coverage and expected values. */
static void test_judge(void **state)
{
	struct fixture *f = *state;
	_cleanup_json_ json_t *q = quote_with(f, f->ec, f->ec_pem, TPM2_ALG_SHA256, nonce8, sizeof(nonce8));
	_cleanup_json_ json_t *q7 = quote_with(f, f->ec, f->ec_pem, TPM2_ALG_SHA256, nonce8, 7);
	struct nonce n8, other;
	struct attest_expect x = { .nonce = decoded(NONCE8_HEX, &n8) };
	struct pcr_selection cover = { 0 };
	struct pcr_values want = { 0 };
	struct quote_info qi;
	ingot_error e = { 0 };
	unsigned char *der = NULL;
	uint8_t md[SHA256_LEN];
	char id[SHA256_HEX_LEN + 1];
	int n = i2d_PUBKEY(f->ec, &der);

	sha256_buf(der, (size_t)n, md);
	OPENSSL_free(der);
	hex_encode(md, sizeof(md), id);
	expect_judged(q, &x, VERDICT_OK, NULL, &qi);
	assert_string_equal(qi.ak_id, id);
	assert_int_equal(qi.weak, 0);

	/* Upper-case input is the same nonce; 7 bytes is below the rule,
	 * refused when decoded, and by the judge if a caller skipped that. */
	x.nonce = decoded("DEADBEEF01020304", &other);
	assert_string_equal(other.hex, NONCE8_HEX);
	expect_judged(q, &x, VERDICT_OK, NULL, &qi);
	assert_int_equal(nonce_decode("deadbeef010203", &other, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "16-128 hex digits"));
	other.len = 7;
	expect_judged(q7, &x, VERDICT_MALFORMED, "expected 8-64 bytes, got 7", &qi);
	x.nonce = decoded("deadbeef01020305", &other);
	expect_judged(q, &x, VERDICT_NONCE, "expected deadbeef01020305", &qi);

	x.nonce = &n8;
	pcr_selection_add(&cover, bank_by_name("sha256")->alg, 0x8080);
	x.cover = &cover;
	expect_judged(q, &x, VERDICT_NOT_COVERED, "got no sha256:7", &qi);
	x.cover = NULL;

	struct pcr_bank *wb = pcr_values_bank(&want, bank_by_name("sha256")->alg, 1);
	wb->mask = 0x8000;
	memset(wb->value[15], 0x15, 32);
	x.expected = &want;
	expect_judged(q, &x, VERDICT_OK, NULL, &qi);
	wb->value[15][31] ^= 1;
	expect_judged(q, &x, VERDICT_PCR_UNEXPECTED, "PCR 15 sha256 is 1515", &qi);
	assert_string_equal(qi.ak_id, id);
}

/* Weak evidence verifies (as tpm2_checkquote) and is refused unless
 * accepted by name. */
static void test_judge_weak(void **state)
{
	struct fixture *f = *state;
	_cleanup_json_ json_t *sha1 = quote_with(f, f->rsa, f->rsa_pem, TPM2_ALG_SHA1, nonce8, sizeof(nonce8));
	_cleanup_json_ json_t *empty = quote_with(f, f->ec, f->ec_pem, TPM2_ALG_SHA256, NULL, 0);
	_cleanup_json_ json_t *q = quote_with(f, f->ec, f->ec_pem, TPM2_ALG_SHA256, nonce8, sizeof(nonce8));
	struct nonce n8;
	struct attest_expect x = { .nonce = decoded(NONCE8_HEX, &n8) };
	struct quote_info qi;
	ingot_error e = { 0 };

	assert_int_equal(quote_verify(sha1, nonce8, sizeof(nonce8), f->rsa_pem, &qi, &e), 0);
	assert_int_equal(qi.weak, WEAK_SHA1_SIGNATURE);
	expect_judged(sha1, &x, VERDICT_WEAK, "sha1-signature (accept with --accept-weak sha1-signature)", &qi);
	x.accept_weak = WEAK_SHA1_SIGNATURE;
	expect_judged(sha1, &x, VERDICT_OK, NULL, &qi);

	assert_int_equal(quote_verify(empty, NULL, 0, NULL, &qi, &e), 0);
	assert_int_equal(qi.weak, WEAK_NO_NONCE);
	x = (struct attest_expect){ 0 };
	expect_judged(empty, &x, VERDICT_WEAK, "no-nonce", &qi);
	x.nonce = &n8;
	expect_judged(empty, &x, VERDICT_NONCE, "got (none)", &qi);
	x = (struct attest_expect){ .accept_weak = WEAK_NO_NONCE };
	expect_judged(empty, &x, VERDICT_OK, NULL, &qi);
	/* No nonce issued: the quote's own is only consistent, not fresh. */
	x = (struct attest_expect){ 0 };
	expect_judged(q, &x, VERDICT_WEAK, "no-nonce", &qi);

	unsigned w;
	assert_int_equal(attest_weakness_parse("no-nonce,sha1-signature", &w, &e), 0);
	assert_int_equal(w, WEAK_NO_NONCE | WEAK_SHA1_SIGNATURE);
	assert_int_equal(attest_weakness_parse("sha1", &w, &e), -EINVAL);
	assert_int_equal(attest_weakness_parse("no-nonce,", &w, &e), -EINVAL);
}

/* The seen-nonces file, its lock file and their directory. */
static void remove_seen(const char *dir, const char *seen)
{
	_cleanup_free_ char *lock = NULL;

	if (asprintf(&lock, "%s.lock", seen) > 0)
		unlink(lock);
	unlink(seen);
	assert_int_equal(rmdir(dir), 0);
}

/* Seen, judged, then recorded: a refused quote never uses a nonce up. */
static void test_judge_seen(void **state)
{
	struct fixture *f = *state;
	_cleanup_json_ json_t *q = quote_with(f, f->ec, f->ec_pem, TPM2_ALG_SHA256, nonce8, sizeof(nonce8));
	char dir[] = "/tmp/ingot-judge-XXXXXX";
	_cleanup_free_ char *seen = NULL, *buf = NULL;
	struct pcr_selection cover = { 0 };
	struct nonce n8;
	struct attest_expect x = { .nonce = decoded(NONCE8_HEX, &n8) };
	struct quote_info qi;
	ingot_error e = { 0 };
	size_t len;

	assert_non_null(mkdtemp(dir));
	seen = path_join(dir, "seen");
	x.seen_nonces = seen;
	pcr_selection_add(&cover, bank_by_name("sha256")->alg, 0x80);
	x.cover = &cover;
	expect_judged(q, &x, VERDICT_NOT_COVERED, NULL, &qi);
	assert_int_equal(read_file(seen, 1024, &buf, &len, &e), -ENOENT);
	x.cover = NULL;
	expect_judged(q, &x, VERDICT_OK, NULL, &qi);
	assert_int_equal(read_file(seen, 1024, &buf, &len, &e), 0);
	assert_string_equal(buf, NONCE8_HEX "\n");
	expect_judged(q, &x, VERDICT_NONCE_REUSED, "already used", &qi);
	/* Check only (the boot verdict's half): a listed nonce is refused,
	 * an unlisted one passes and stays unlisted until the caller records
	 * it with the same rule. */
	x.seen_check_only = 1;
	expect_judged(q, &x, VERDICT_NONCE_REUSED, "already used", &qi);
	assert_int_equal(unlink(seen), 0);
	expect_judged(q, &x, VERDICT_OK, NULL, &qi);
	free(buf);
	buf = NULL;
	assert_int_equal(read_file(seen, 1024, &buf, &len, &e), -ENOENT);
	enum attest_verdict why = VERDICT_OK;
	assert_int_equal(attest_seen_nonce(&x, 1, &why, &e), 0);
	assert_int_equal(attest_seen_nonce(&x, 1, &why, &e), -EEXIST);
	assert_int_equal(why, VERDICT_NONCE_REUSED);
	assert_non_null(strstr(e.msg, "nonce " NONCE8_HEX ": already used"));
	remove_seen(dir, seen);
}

/* The seen-nonces file is parsed strictly: a NUL or a CRLF once hid a
 * listed nonce, so a replayed quote was accepted. */
static void test_seen_file_strict(void **state)
{
	static const struct {
		const char *text;
		size_t len;
		const char *needle;   /* NULL: parses */
	} cases[] = {
#define C(s, needle) { s, sizeof(s) - 1, needle }
		C(NONCE8_HEX "\n", NULL),
		C("0011\n" NONCE8_HEX "\n", NULL),
		C("", NULL),
		C("0011\0\n" NONCE8_HEX "\n", ":1:5: expected one lower-case hex nonce"),
		C(NONCE8_HEX "\r\n", ":1:17: expected one lower-case hex nonce"),
		C("0011\n" NONCE8_HEX "\r\n", ":2:17:"),
		C(NONCE8_HEX, "end of file without LF"),
		C("DEADBEEF01020304\n", "another character"),
		C("001\n", "wrong length"),
		C("\n" NONCE8_HEX "\n", ":1:1:"),
#undef C
	};
	char dir[] = "/tmp/ingot-seen-XXXXXX";
	_cleanup_free_ char *seen = NULL;
	struct nonce n8;
	const struct nonce *n = decoded(NONCE8_HEX, &n8);

	(void)state;
	assert_non_null(mkdtemp(dir));
	seen = path_join(dir, "seen");
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		ingot_error e = { 0 };
		FILE *fp = fopen(seen, "wb");

		assert_non_null(fp);
		assert_int_equal(fwrite(cases[i].text, 1, cases[i].len, fp), cases[i].len);
		fclose(fp);
		int r = nonce_seen(seen, n, &e);
		if (!cases[i].needle) {
			assert_int_equal(r, cases[i].len > 0);
			continue;
		}
		if (r != -EBADMSG || !strstr(e.msg, cases[i].needle) || !strstr(e.msg, seen))
			fail_msg("case %zu: expected -EBADMSG '%s', got %d: %s", i, cases[i].needle, r, e.msg);
		/* Recording refuses it too, and leaves it as it was. */
		assert_int_equal(nonce_record(seen, n, &e), -EBADMSG);
	}
	remove_seen(dir, seen);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_p256_pem_direct),
		cmocka_unit_test(test_valid_quotes),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_ak_cache_bound),
		cmocka_unit_test(test_signed_but_wrong),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_judge),
		cmocka_unit_test(test_judge_weak),
		cmocka_unit_test(test_judge_seen),
		cmocka_unit_test(test_seen_file_strict),
	};
	/* tss2-mu logs each unmarshalling error of the flipped-byte quotes. */
	setenv("TSS2_LOG", "all+none", 1);
	return cmocka_run_group_tests_name("attest_quote", tests, setup, teardown);
}
