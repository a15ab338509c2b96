/* Quote documents and their offline verification. */
#include "attest/quote.h"

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <stdlib.h>
#include <string.h>
#include <tss2/tss2_mu.h>

#include "attest/nonce.h"
#include "lib/base64.h"
#include "lib/cleanup.h"
#include "lib/ecdsa.h"
#include "lib/digest.h"
#include "lib/json.h"
#include "lib/strmap.h"
#include "lib/xalloc.h"

const char *attest_verdict_name(enum attest_verdict r)
{
	static const char *const names[] = {
		[VERDICT_OK] = "ok",
		[VERDICT_MALFORMED] = "malformed",
		[VERDICT_BAD_SIGNATURE] = "bad-signature",
		[VERDICT_WRONG_AK] = "wrong-ak",
		[VERDICT_NOT_QUOTE] = "not-a-quote",
		[VERDICT_NONCE] = "nonce-mismatch",
		[VERDICT_PCR_SELECTION] = "pcr-selection-mismatch",
		[VERDICT_PCR_DIGEST] = "pcr-digest-mismatch",
		[VERDICT_NONCE_REUSED] = "nonce-reused",
		[VERDICT_NOT_COVERED] = "not-covered",
		[VERDICT_LOG_MISMATCH] = "log-mismatch",
		[VERDICT_PCR_UNEXPECTED] = "pcr-unexpected",
		[VERDICT_WEAK] = "weak",
		[VERDICT_NOT_MADE] = "not-made",
	};
	return (unsigned)r < ARRAY_SIZE(names) && names[r] ? names[r] : "unknown";
}

static const struct {
	unsigned bit;
	const char *name;
} weaknesses[] = {
	{ WEAK_SHA1_SIGNATURE, "sha1-signature" },
	{ WEAK_NO_NONCE, "no-nonce" },
	{ WEAK_SECURE_BOOT_UNJUDGED, "secure-boot-unjudged" },
	{ WEAK_UNKNOWN_FIRMWARE, "unknown-firmware" },
};

const char *attest_weakness_name(unsigned bit)
{
	for (size_t i = 0; i < ARRAY_SIZE(weaknesses); i++)
		if (weaknesses[i].bit == bit)
			return weaknesses[i].name;
	return "unknown";
}

int attest_weakness_parse(const char *list, unsigned *out, ingot_error *e)
{
	const char *p = list;

	*out = 0;
	do {
		size_t n = strcspn(p, ","), i;

		for (i = 0; i < ARRAY_SIZE(weaknesses); i++)
			if (strlen(weaknesses[i].name) == n && !strncmp(p, weaknesses[i].name, n))
				break;
		if (i == ARRAY_SIZE(weaknesses))
			return ingot_fail(e, -EINVAL, "expected sha1-signature or no-nonce (a boot also: secure-boot-unjudged, unknown-firmware; comma-separated), got '%.*s'",
					  (int)(n > 80 ? 80 : n), p);
		*out |= weaknesses[i].bit;
		p += n;
	} while (*p++ == ',');
	return 0;
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
	_cleanup_free_ char *nhex = xmalloc(2 * nonce_len + 1);
	json_t *pj = pcr_values_to_json(pcrs);

	if (!a64 || !s64 || !pj) {
		json_decref(pj);
		return NULL;
	}
	hex_encode(nonce, nonce_len, nhex);
	return json_pack("{s:s, s:s, s:s, s:s, s:o, s:s}", "format", QUOTE_FORMAT, "nonce", nhex,
			 "attest", a64, "signature", s64, "pcrs", pj, "ak_pub", ak_pem);
}

static int refuse(struct quote_info *qi, enum attest_verdict why, ingot_error *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int refuse(struct quote_info *qi, enum attest_verdict why, ingot_error *e, int code, const char *fmt, ...)
{
	va_list ap;

	qi->reason = why;
	va_start(ap, fmt);
	code = ingot_vfail(e, code, fmt, ap);
	va_end(ap);
	return code;
}

/* Exactly one PEM PUBLIC KEY block and nothing after it but newlines:
 * the key named by the id is then the key that verifies; a second block,
 * or one mid-line the PEM reader skips, cannot pass a rogue AK off as
 * enrolled. */
static EVP_PKEY *pem_to_key(const char *pem)
{
	static const char begin[] = "-----BEGIN PUBLIC KEY-----\n";
	BIO *bio;
	EVP_PKEY *k;
	char c;

	if (strncmp(pem, begin, sizeof(begin) - 1))
		return NULL;
	bio = BIO_new_mem_buf(pem, -1);
	k = bio ? PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL) : NULL;
	while (k && BIO_read(bio, &c, 1) == 1)
		if (c != '\n') {
			EVP_PKEY_free(k);
			k = NULL;
		}
	BIO_free(bio);
	ERR_clear_error();
	return k;
}

/* The AK's id, as keys/ names keys: sha256 of the DER SubjectPublicKeyInfo. */
static int ak_id(EVP_PKEY *key, char out[SHA256_HEX_LEN + 1])
{
	unsigned char *der = NULL;
	uint8_t md[SHA256_LEN];
	int n = i2d_PUBKEY(key, &der);

	if (n <= 0)
		return -EINVAL;
	sha256_buf(der, (size_t)n, md);
	OPENSSL_free(der);
	hex_encode(md, sizeof(md), out);
	return 0;
}

/* A P-256 key's DER SubjectPublicKeyInfo: this, then its uncompressed
 * point (0x04, X, Y). */
static const uint8_t p256_spki[] = { 0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01,
				     0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00 };
#define P256_SPKI_LEN (sizeof(p256_spki) + 65)

/* The common AK, a P-256 key in the PEM PEM_write_PUBKEY writes (two
 * lines of base64), read without OpenSSL 3.0's PEM decoder, which sets up
 * every decoder it has at each call (two thirds of loading an enrolment
 * record): the DER is this exact SubjectPublicKeyInfo and the point goes
 * to EVP_PKEY_fromdata, which refuses one off the curve.  NULL for any
 * other text, which takes the general way (pem_to_key): both accept the
 * same keys.  der: the DER, whose sha256 is the key's id. */
static EVP_PKEY *p256_pem_to_key(const char *pem, uint8_t der[P256_SPKI_LEN])
{
	static const char begin[] = "-----BEGIN PUBLIC KEY-----\n", end[] = "-----END PUBLIC KEY-----\n";
	const char *p = pem + sizeof(begin) - 1, *q;
	char b64[124];
	_cleanup_free_ uint8_t *raw = NULL;
	size_t n;

	if (strncmp(pem, begin, sizeof(begin) - 1) || strnlen(p, 126) < 126 || p[64] != '\n' || p[125] != '\n' ||
	    strncmp(p + 126, end, sizeof(end) - 1))
		return NULL;
	for (q = p + 126 + sizeof(end) - 1; *q == '\n'; q++)
		;
	if (*q)
		return NULL;
	memcpy(b64, p, 64);
	memcpy(b64 + 64, p + 65, 60);
	if (base64_decode(b64, sizeof(b64), &raw, &n) < 0 || n != P256_SPKI_LEN ||
	    memcmp(raw, p256_spki, sizeof(p256_spki)) || raw[sizeof(p256_spki)] != 0x04)
		return NULL;
	memcpy(der, raw, P256_SPKI_LEN);

	OSSL_PARAM params[] = {
		OSSL_PARAM_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, (char *)"prime256v1", 0),
		OSSL_PARAM_octet_string(OSSL_PKEY_PARAM_PUB_KEY, der + sizeof(p256_spki), 65),
		OSSL_PARAM_END,
	};
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
	EVP_PKEY *k = NULL;

	if (!ctx || EVP_PKEY_fromdata_init(ctx) <= 0 || EVP_PKEY_fromdata(ctx, &k, EVP_PKEY_PUBLIC_KEY, params) <= 0)
		k = NULL;
	EVP_PKEY_CTX_free(ctx);
	ERR_clear_error();
	return k;
}

/* An AK's public key, parsed once: the key, its id and the exact text
 * it was parsed from (a quote whose ak_pub is that text carries that key). */
struct ak_key {
	EVP_PKEY *key;   /* NULL in an ak_cache entry: the text does not parse */
	char id[SHA256_HEX_LEN + 1];
	char *pem;
};

int ak_key_parse(const char *pem, struct ak_key **out, ingot_error *e)
{
	uint8_t der[P256_SPKI_LEN], md[SHA256_LEN];
	EVP_PKEY *k = p256_pem_to_key(pem, der);
	struct ak_key *a;
	char id[SHA256_HEX_LEN + 1];

	*out = NULL;
	if (k) {
		sha256_buf(der, sizeof(der), md);
		hex_encode(md, sizeof(md), id);
	} else if (!(k = pem_to_key(pem))) {
		return ingot_fail(e, -EBADMSG, "AK public key: expected exactly one PEM PUBLIC KEY block that OpenSSL reads");
	} else if (ak_id(k, id) < 0) {
		EVP_PKEY_free(k);
		return ingot_fail(e, -EINVAL, "AK public key: cannot encode it as SubjectPublicKeyInfo");
	}
	a = xcalloc(1, sizeof(*a));
	a->key = k;
	memcpy(a->id, id, sizeof(id));
	a->pem = xstrdup(pem);
	*out = a;
	return 0;
}

void ak_key_free(struct ak_key *a)
{
	if (!a)
		return;
	EVP_PKEY_free(a->key);
	free(a->pem);
	free(a);
}

const char *ak_key_id(const struct ak_key *a)
{
	return a->id;
}

int attest_ak_id_pem(const char *pem, char out[SHA256_HEX_LEN + 1], ingot_error *e)
{
	struct ak_key *a;
	int r = ak_key_parse(pem, &a, e);

	if (r < 0)
		return r;
	memcpy(out, a->id, SHA256_HEX_LEN + 1);
	ak_key_free(a);
	return 0;
}

/* A fleet where every node has its own AK gains nothing from the cache:
 * past this many keys new ones are parsed per call and not kept, so
 * memory stays bounded. */
#define AK_CACHE_MAX 4096

struct ak_cache {
	struct strmap by_pem;   /* text -> struct ak_key (key NULL: does not parse) */
};

struct ak_cache *ak_cache_new(void)
{
	return xcalloc(1, sizeof(struct ak_cache));
}

static void cached_ak_free(void *p)
{
	ak_key_free(p);
}

void ak_cache_free(struct ak_cache *c)
{
	if (!c)
		return;
	strmap_free(&c->by_pem, cached_ak_free);
	free(c);
}

/* The key of pem, parsed once per distinct text: the exact bytes are the
 * key, so a text pem_to_key refuses is refused from the cache too.  NULL
 * when the cache is full and pem not in it. */
static const struct ak_key *ak_cache_get(struct ak_cache *c, const char *pem)
{
	struct ak_key *a = strmap_get(&c->by_pem, pem);
	ingot_error e = { 0 };

	if (a || c->by_pem.n >= AK_CACHE_MAX)
		return a;
	if (ak_key_parse(pem, &a, &e) < 0)
		a = xcalloc(1, sizeof(*a));
	*strmap_put(&c->by_pem, pem, NULL) = a;
	return a;
}

/* The key of pem (NULL: it does not parse): from the cache, else parsed
 * now into *own (the caller frees it). */
static const struct ak_key *key_of(struct ak_cache *c, const char *pem, struct ak_key **own)
{
	const struct ak_key *a = c ? ak_cache_get(c, pem) : NULL;
	ingot_error e = { 0 };

	*own = NULL;
	if (a)
		return a->key ? a : NULL;
	return ak_key_parse(pem, own, &e) == 0 ? *own : NULL;
}

/* The signature as OpenSSL verifies it: DER for ECDSA, raw for RSASSA
 * and RSAPSS.
 * 0 and *s set, or -EPROTONOSUPPORT for another scheme. */
static int signature_bytes(const TPMT_SIGNATURE *sig, EVP_PKEY *key, uint8_t **der, const uint8_t **s,
			   size_t *slen, uint16_t *hash_alg, int *key_fits)
{
	if (sig->sigAlg == TPM2_ALG_ECDSA) {
		const TPMS_SIGNATURE_ECDSA *ec = &sig->signature.ecdsa;
		size_t n;

		if (ecdsa_rs_to_der(ec->signatureR.buffer, ec->signatureR.size, ec->signatureS.buffer,
				    ec->signatureS.size, der, &n) < 0)
			return -ENOMEM;
		*s = *der;
		*slen = n;
		*hash_alg = sig->signature.ecdsa.hash;
		*key_fits = EVP_PKEY_is_a(key, "EC");
		return 0;
	}
	if (sig->sigAlg == TPM2_ALG_RSASSA || sig->sigAlg == TPM2_ALG_RSAPSS) {
		/* rsassa and rsapss are the same TPMS_SIGNATURE_RSA */
		*s = sig->signature.rsassa.sig.buffer;
		*slen = sig->signature.rsassa.sig.size;
		*hash_alg = sig->signature.rsassa.hash;
		*key_fits = EVP_PKEY_is_a(key, "RSA");
		return 0;
	}
	return -EPROTONOSUPPORT;
}

/* 1 valid, 0 invalid, <0 unusable signature structure.  SHA-1 verifies
 * (as tpm2_checkquote does); the caller flags it as a weakness. */
static int check_signature(EVP_PKEY *key, const TPMT_SIGNATURE *sig, const uint8_t *msg, size_t len,
			   uint16_t *hash_alg)
{
	_cleanup_free_ uint8_t *der = NULL;
	const uint8_t *s;
	const struct bank *h;
	size_t slen;
	EVP_MD_CTX *ctx;
	EVP_PKEY_CTX *pctx = NULL;
	int ok, fits, r;

	r = signature_bytes(sig, key, &der, &s, &slen, hash_alg, &fits);
	if (r < 0)
		return r;
	if (!(h = bank_by_alg(*hash_alg)))
		return -EPROTONOSUPPORT;
	if (!fits)
		return 0;
	ctx = EVP_MD_CTX_new();
	if (!ctx)
		return -ENOMEM;
	/* RSA-PSS: the TPM's salt is as long as the key allows (TPM 2.0
	 * Part 1, B.7) or the digest's length (FIPS 186-4 TPMs); the salt
	 * length is read from the signature, as tpm2_checkquote does. */
	ok = EVP_DigestVerifyInit(ctx, &pctx, bank_md(h), NULL, key) == 1 &&
	     (sig->sigAlg != TPM2_ALG_RSAPSS ||
	      (EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) == 1 &&
	       EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_AUTO) == 1)) &&
	     EVP_DigestVerify(ctx, s, slen, msg, len) == 1;
	EVP_MD_CTX_free(ctx);
	ERR_clear_error();
	return ok;
}

static int decode_b64(const json_t *q, const char *key, uint8_t **out, size_t *len, struct quote_info *qi,
		      ingot_error *e)
{
	const char *s;
	int r = json_get_str(q, key, "quote", &s, e);

	if (r < 0) {
		qi->reason = VERDICT_MALFORMED;
		return r;
	}
	if (base64_decode(s, strlen(s), out, len) < 0)
		return refuse(qi, VERDICT_MALFORMED, e, -EBADMSG, "quote: %s: expected base64, got %zu characters that do not decode",
			      key, strlen(s));
	return 0;
}

/* A quote document taken apart. */
struct quote_doc {
	const char *nonce_hex, *ak_pem;
	uint8_t *attest, *sig;
	size_t attest_len, sig_len;
	TPMS_ATTEST a;
	TPMT_SIGNATURE s;
	const struct ak_key *doc_key, *key;   /* the document's AK; the one verifying (may be doc_key) */
	struct ak_key *own_doc, *own_key;     /* parsed for this call (else the caller's or a cache's) */
};

static void quote_doc_release(struct quote_doc *d)
{
	free(d->attest);
	free(d->sig);
	ak_key_free(d->own_key);
	ak_key_free(d->own_doc);
}

static int parse_document(const json_t *quote, struct quote_doc *d, struct quote_info *qi, ingot_error *e)
{
	const char *format;
	size_t off = 0;
	json_t *pj;
	int r;

	if (!json_is_object(quote))
		return refuse(qi, VERDICT_MALFORMED, e, -EBADMSG, "quote: expected a JSON object");
	if ((r = json_get_str(quote, "format", "quote", &format, e)) < 0 ||
	    (r = json_get_str(quote, "nonce", "quote", &d->nonce_hex, e)) < 0 ||
	    (r = json_get_str(quote, "ak_pub", "quote", &d->ak_pem, e)) < 0 ||
	    (r = json_get_obj(quote, "pcrs", "quote", &pj, e)) < 0) {
		qi->reason = VERDICT_MALFORMED;
		return r;
	}
	if (strcmp(format, QUOTE_FORMAT))
		return refuse(qi, VERDICT_MALFORMED, e, -EBADMSG, "quote: format: expected %s, got %.80s", QUOTE_FORMAT, format);
	if ((r = decode_b64(quote, "attest", &d->attest, &d->attest_len, qi, e)) < 0 ||
	    (r = decode_b64(quote, "signature", &d->sig, &d->sig_len, qi, e)) < 0)
		return r;
	if ((r = pcr_values_from_json(pj, "quote", &qi->pcrs, e)) < 0) {
		qi->reason = VERDICT_MALFORMED;
		return r;
	}
	if (Tss2_MU_TPMS_ATTEST_Unmarshal(d->attest, d->attest_len, &off, &d->a) != TSS2_RC_SUCCESS ||
	    off != d->attest_len)
		return refuse(qi, VERDICT_MALFORMED, e, -EBADMSG, "quote: attest: expected a marshalled TPMS_ATTEST, got %zu bytes that do not parse (stopped at byte %zu)",
			      d->attest_len, off);
	off = 0;
	if (Tss2_MU_TPMT_SIGNATURE_Unmarshal(d->sig, d->sig_len, &off, &d->s) != TSS2_RC_SUCCESS || off != d->sig_len)
		return refuse(qi, VERDICT_MALFORMED, e, -EBADMSG, "quote: signature: expected a marshalled TPMT_SIGNATURE, got %zu bytes that do not parse",
			      d->sig_len);
	return 0;
}

/* The signature first: nothing else in the document means anything
 * until the AK vouches for the TPMS_ATTEST bytes.  The trusted AK is
 * trusted (parsed), else trusted_pem (parsed here), else none. */
static int verify_signature(struct quote_doc *d, const struct ak_key *trusted, const char *trusted_pem,
			    struct ak_cache *cache, struct quote_info *qi, uint16_t *hash_alg, ingot_error *e)
{
	int has_trusted = trusted || trusted_pem;
	int r;

	/* The same text is the same key: never parsed again (OpenSSL's PEM
	 * decoder is most of a verifier's CPU per piece of evidence). */
	if (trusted && !strcmp(trusted->pem, d->ak_pem))
		d->doc_key = trusted;
	else
		d->doc_key = key_of(cache, d->ak_pem, &d->own_doc);
	if (trusted)
		d->key = trusted;
	else
		d->key = trusted_pem && strcmp(trusted_pem, d->ak_pem) ? key_of(cache, trusted_pem, &d->own_key) : d->doc_key;
	if (d->doc_key)
		memcpy(qi->ak_id, d->doc_key->id, sizeof(qi->ak_id));
	if (!d->doc_key || !d->key)
		return refuse(qi, VERDICT_MALFORMED, e, -EBADMSG, "quote: %s: expected exactly one PEM PUBLIC KEY block that OpenSSL reads",
			      !d->doc_key ? "ak_pub" : "trusted AK");
	r = check_signature(d->key->key, &d->s, d->attest, d->attest_len, hash_alg);
	if (r < 0)
		return refuse(qi, VERDICT_MALFORMED, e, -EBADMSG, "quote: signature: expected ECDSA, RSASSA or RSAPSS with sha1/256/384/512, got scheme 0x%x hash 0x%x",
			      d->s.sigAlg, *hash_alg);
	if (r == 0) {
		if (has_trusted && EVP_PKEY_eq(d->key->key, d->doc_key->key) != 1)
			return refuse(qi, VERDICT_WRONG_AK, e, -EPERM, "quote: signature: expected a signature by the trusted AK, got one by another key (the quote's ak_pub is not the trusted AK)");
		return refuse(qi, VERDICT_BAD_SIGNATURE, e, -EPERM, "quote: signature: does not verify with the %sAK over the TPMS_ATTEST bytes (altered quote or wrong key)",
			      has_trusted ? "trusted " : "quote's ");
	}
	if (*hash_alg == TPM2_ALG_SHA1)
		qi->weak |= WEAK_SHA1_SIGNATURE;
	return 0;
}

static int check_header(const TPMS_ATTEST *a, struct quote_info *qi, ingot_error *e)
{
	if (a->magic != TPM2_GENERATED_VALUE || a->type != TPM2_ST_ATTEST_QUOTE)
		return refuse(qi, VERDICT_NOT_QUOTE, e, -EBADMSG, "quote: attest: expected magic 0x%x and type 0x%x (TPM_ST_ATTEST_QUOTE), got 0x%x and 0x%x",
			      TPM2_GENERATED_VALUE, TPM2_ST_ATTEST_QUOTE, a->magic, a->type);
	return 0;
}

/* The signed extraData and the document's "nonce" both equal nonce. */
static int check_nonce(const struct quote_doc *d, const uint8_t *nonce, size_t nonce_len, struct quote_info *qi,
		       ingot_error *e)
{
	const TPM2B_DATA *x = &d->a.extraData;
	uint8_t doc[NONCE_MAX];
	size_t dlen = strlen(d->nonce_hex) / 2;
	char want[2 * 64 + 1], got[2 * 64 + 1];

	if (strlen(d->nonce_hex) % 2 || dlen > sizeof(doc) || hex_decode(d->nonce_hex, doc, dlen) < 0)
		return refuse(qi, VERDICT_MALFORMED, e, -EBADMSG, "quote: nonce: expected 0-%d bytes in hex, got '%.80s'", NONCE_MAX, d->nonce_hex);
	/* nonce is NULL when none was issued: memcmp(NULL, .., 0) is undefined. */
	if (x->size == nonce_len && dlen == nonce_len &&
	    (!nonce_len || (!memcmp(x->buffer, nonce, nonce_len) && !memcmp(doc, nonce, nonce_len)))) {
		if (!nonce_len)
			qi->weak |= WEAK_NO_NONCE;
		return 0;
	}
	hex_encode(nonce, nonce_len > 64 ? 64 : nonce_len, want);
	hex_encode(x->buffer, x->size > 64 ? 64 : x->size, got);
	return refuse(qi, VERDICT_NONCE, e, -EPERM, "quote: nonce: expected %s, got %s in the signed TPMS_ATTEST (stale or replayed quote)",
		      nonce_len ? want : "(none)", x->size ? got : "(none)");
}

static int quoted_selection(const TPMS_ATTEST *a, struct pcr_selection *out, struct quote_info *qi, ingot_error *e)
{
	memset(out, 0, sizeof(*out));
	for (UINT32 i = 0; i < a->attested.quote.pcrSelect.count; i++) {
		const TPMS_PCR_SELECTION *s = &a->attested.quote.pcrSelect.pcrSelections[i];
		uint32_t mask = 0;

		for (unsigned p = 0; p < 8u * s->sizeofSelect && p < 8 * sizeof(s->pcrSelect); p++)
			if (s->pcrSelect[p / 8] & (1u << (p % 8))) {
				if (p >= PCR_COUNT) {
					mask = 0;  /* beyond PCR 23: refused below */
					break;
				}
				mask |= 1u << p;
			}
		for (size_t j = 0; j < out->nbanks; j++)
			if (out->banks[j].alg == s->hash)
				mask = 0;  /* duplicate bank: refused below */
		if (!mask || pcr_selection_add(out, s->hash, mask) < 0)
			return refuse(qi, VERDICT_MALFORMED, e, -EBADMSG, "quote: attest: PCR selection %u: expected a known bank once with PCRs 0-%d, got hash 0x%x",
				      i, PCR_COUNT - 1, s->hash);
	}
	return 0;
}

/* The reported values are exactly the quoted selection and hash to the
 * signed pcrDigest. */
static int check_pcrs(const TPMS_ATTEST *a, uint16_t hash_alg, struct quote_info *qi, ingot_error *e)
{
	struct pcr_selection quoted, reported;
	uint8_t digest[BANK_MAX_DIGEST];
	size_t dlen;
	int same, r;

	if ((r = quoted_selection(a, &quoted, qi, e)) < 0)
		return r;
	pcr_values_selection(&qi->pcrs, &reported);
	same = quoted.nbanks == reported.nbanks;
	for (size_t i = 0; same && i < quoted.nbanks; i++) {
		const struct pcr_bank *pb = pcr_values_find(&qi->pcrs, quoted.banks[i].alg);
		same = pb && pb->mask == quoted.banks[i].mask;
	}
	if (!same) {
		_cleanup_strbuf_ struct strbuf q = STRBUF_INIT, rep = STRBUF_INIT;
		pcr_selection_format(&quoted, &q);
		pcr_selection_format(&reported, &rep);
		return refuse(qi, VERDICT_PCR_SELECTION, e, -EBADMSG, "quote: pcrs: expected the quoted selection %s, got values for %s",
			      q.buf, rep.len ? rep.buf : "(none)");
	}
	r = quote_pcr_digest(&qi->pcrs, &quoted, hash_alg, digest, &dlen);
	if (r < 0 || a->attested.quote.pcrDigest.size != dlen ||
	    memcmp(a->attested.quote.pcrDigest.buffer, digest, dlen))
		return refuse(qi, VERDICT_PCR_DIGEST, e, -EPERM, "quote: pcrs: the reported PCR values do not hash to the signed pcrDigest (a value was changed)");
	return 0;
}

int quote_verify(const json_t *quote, const uint8_t *nonce, size_t nonce_len,
		 const char *trusted_ak_pem, struct quote_info *out, ingot_error *e)
{
	return quote_verify_key(quote, nonce, nonce_len, NULL, trusted_ak_pem, NULL, out, e);
}

int quote_verify_cached(const json_t *quote, const uint8_t *nonce, size_t nonce_len,
			const char *trusted_ak_pem, struct ak_cache *cache, struct quote_info *out,
			ingot_error *e)
{
	return quote_verify_key(quote, nonce, nonce_len, NULL, trusted_ak_pem, cache, out, e);
}

int quote_verify_key(const json_t *quote, const uint8_t *nonce, size_t nonce_len, const struct ak_key *trusted,
		     const char *trusted_ak_pem, struct ak_cache *cache, struct quote_info *out, ingot_error *e)
{
	struct quote_info local, *qi = out ? out : &local;
	struct quote_doc d;
	uint16_t hash_alg = 0;
	int r;

	memset(qi, 0, sizeof(*qi));
	memset(&d, 0, sizeof(d));
	if ((r = parse_document(quote, &d, qi, e)) < 0 ||
	    (r = verify_signature(&d, trusted, trusted_ak_pem, cache, qi, &hash_alg, e)) < 0 ||
	    (r = check_header(&d.a, qi, e)) < 0 ||
	    (r = check_nonce(&d, nonce, nonce_len, qi, e)) < 0 ||
	    (r = check_pcrs(&d.a, hash_alg, qi, e)) < 0)
		goto out;
	qi->clock = d.a.clockInfo.clock;
	qi->reset_count = d.a.clockInfo.resetCount;
	qi->restart_count = d.a.clockInfo.restartCount;
	qi->safe = d.a.clockInfo.safe;
	qi->firmware_version = d.a.firmwareVersion;
	qi->reason = VERDICT_OK;
out:
	quote_doc_release(&d);
	return r;
}
