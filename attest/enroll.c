/* AK enrolment, the verifier's side (attest/enroll.h): no TPM here, so
 * every step is software the node cannot influence beyond the request's
 * bytes, and every one of those is checked before use. */
#include "attest/enroll.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tss2/tss2_mu.h>
#include <unistd.h>

#include "attest/quote.h"
#include "attest/tpm-private.h"
#include "lib/base64.h"
#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/privdir.h"
#include "lib/time.h"
#include "lib/xalloc.h"

int enroll_node_check(const char *what, const char *node, ingot_error *e)
{
	size_t n = node ? strlen(node) : 0;

	if (n == 0 || n > ENROLL_NODE_MAX || strspn(node, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
						       "0123456789._:-") != n || node[0] == '.')
		return ingot_fail(e, -EINVAL, "%s: expected a node name of 1..%u characters "
				  "[A-Za-z0-9._:-] not starting with '.', got \"%.64s\"",
				  what, ENROLL_NODE_MAX, node ? node : "");
	return 0;
}

static void be16(uint8_t *p, size_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

struct piece {
	const void *p;
	size_t n;
};

/* HMAC-SHA256 of the pieces in order (EVP_MAC: the TPM's HMACs are
 * over concatenations we would otherwise copy together). */
static int hmac_sha256(const uint8_t *key, size_t key_len, const struct piece *pc, size_t n,
		       uint8_t out[SHA256_LEN])
{
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC_CTX *c = mac ? EVP_MAC_CTX_new(mac) : NULL;
	OSSL_PARAM p[] = { OSSL_PARAM_construct_utf8_string("digest", (char *)"SHA256", 0),
			   OSSL_PARAM_construct_end() };
	size_t ol = 0;
	int ok = c && EVP_MAC_init(c, key, key_len, p);

	for (size_t i = 0; ok && i < n; i++)
		ok = !pc[i].n || EVP_MAC_update(c, pc[i].p, pc[i].n);
	ok = ok && EVP_MAC_final(c, out, &ol, SHA256_LEN) && ol == SHA256_LEN;
	EVP_MAC_CTX_free(c);
	EVP_MAC_free(mac);
	ERR_clear_error();
	return ok ? 0 : -EIO;
}

int enroll_kdfa_sha256(const uint8_t *key, size_t key_len, const char *label, const uint8_t *u,
		       size_t u_len, const uint8_t *v, size_t v_len, unsigned bits, uint8_t *out)
{
	size_t want = bits / 8, done = 0;
	uint8_t cnt[4], len[4], md[SHA256_LEN];

	be32(len, bits);
	for (uint32_t i = 1; done < want; i++) {
		/* The label is hashed with its terminating NUL (Part 1 11.4.10.2). */
		const struct piece pc[] = { { cnt, 4 }, { label, strlen(label) + 1 }, { u, u_len },
					    { v, v_len }, { len, 4 } };
		size_t take = want - done < SHA256_LEN ? want - done : SHA256_LEN;

		be32(cnt, i);
		if (hmac_sha256(key, key_len, pc, sizeof(pc) / sizeof(*pc), md) < 0)
			return -EIO;
		memcpy(out + done, md, take);
		done += take;
	}
	OPENSSL_cleanse(md, sizeof(md));
	return 0;
}

/* The seed, RSA-OAEP(SHA-256) encrypted to the EK with the label
 * "IDENTITY" and its NUL, as TPM2_ActivateCredential decrypts it. */
static int encrypt_seed(EVP_PKEY *ek, const uint8_t *seed, size_t seed_len, uint8_t **out,
			size_t *out_len, ingot_error *e)
{
	static const char label[] = "IDENTITY";
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new(ek, NULL);
	unsigned char *l = OPENSSL_malloc(sizeof(label));
	size_t n = 0;
	int ok;

	if (l)
		memcpy(l, label, sizeof(label));
	ok = c && l && EVP_PKEY_encrypt_init(c) > 0 &&
	     EVP_PKEY_CTX_set_rsa_padding(c, RSA_PKCS1_OAEP_PADDING) > 0 &&
	     EVP_PKEY_CTX_set_rsa_oaep_md(c, EVP_sha256()) > 0 &&
	     EVP_PKEY_CTX_set_rsa_mgf1_md(c, EVP_sha256()) > 0 &&
	     EVP_PKEY_CTX_set0_rsa_oaep_label(c, l, sizeof(label)) > 0;
	if (ok)
		l = NULL;   /* owned by c now */
	ok = ok && EVP_PKEY_encrypt(c, NULL, &n, seed, seed_len) > 0 && (*out = xmalloc(n + 2)) &&
	     EVP_PKEY_encrypt(c, *out + 2, &n, seed, seed_len) > 0;
	OPENSSL_free(l);
	EVP_PKEY_CTX_free(c);
	ERR_clear_error();
	if (!ok) {
		free(*out);
		*out = NULL;
		return ingot_fail(e, -EIO, "MakeCredential: OpenSSL cannot RSA-OAEP encrypt to the EK");
	}
	be16(*out, n);   /* TPM2B_ENCRYPTED_SECRET */
	*out_len = n + 2;
	return 0;
}

int enroll_make_credential(EVP_PKEY *ek, const uint8_t *name, size_t name_len,
			   const uint8_t *cred, size_t cred_len, uint8_t **blob, size_t *blob_len,
			   uint8_t **secret, size_t *secret_len, ingot_error *e)
{
	uint8_t seed[SHA256_LEN], sym[16], hkey[SHA256_LEN], plain[2 + SHA256_LEN];
	uint8_t iv[16] = { 0 };
	EVP_CIPHER_CTX *cc;
	uint8_t *b;
	int n1 = 0, n2 = 0, ok, r;

	*blob = *secret = NULL;
	if (!EVP_PKEY_is_a(ek, "RSA"))
		return ingot_fail(e, -ENOTSUP, "MakeCredential: expected an RSA EK (the TCG default "
				  "template), got %s: not supported", EVP_PKEY_get0_type_name(ek));
	/* TPM2_MakeCredential: at most the EK nameAlg's digest size. */
	if (cred_len > SHA256_LEN || name_len > ENROLL_NAME_MAX)
		return ingot_fail(e, -EINVAL, "MakeCredential: credential or name too long");
	if (RAND_bytes(seed, sizeof(seed)) != 1)
		return ingot_fail(e, -EIO, "MakeCredential: no random bytes");
	/* Part 1 section 24.4 (symmetric key, bound to the object's name)
	 * and 24.5 (the HMAC key). */
	if (enroll_kdfa_sha256(seed, sizeof(seed), "STORAGE", name, name_len, NULL, 0, 128, sym) < 0 ||
	    enroll_kdfa_sha256(seed, sizeof(seed), "INTEGRITY", NULL, 0, NULL, 0, 256, hkey) < 0)
		return ingot_fail(e, -EIO, "MakeCredential: KDFa failed");
	be16(plain, cred_len);   /* the credential, a marshalled TPM2B_DIGEST */
	memcpy(plain + 2, cred, cred_len);

	/* TPM2B_ID_OBJECT: size, TPM2B_DIGEST(outer HMAC), encIdentity. */
	b = xmalloc(2 + 2 + SHA256_LEN + 2 + cred_len);
	cc = EVP_CIPHER_CTX_new();
	ok = cc && EVP_EncryptInit_ex(cc, EVP_aes_128_cfb128(), NULL, sym, iv) &&
	     EVP_EncryptUpdate(cc, b + 4 + SHA256_LEN, &n1, plain, (int)(2 + cred_len)) &&
	     EVP_EncryptFinal_ex(cc, b + 4 + SHA256_LEN + n1, &n2) && n1 + n2 == (int)(2 + cred_len);
	EVP_CIPHER_CTX_free(cc);
	if (ok) {
		const struct piece pc[] = { { b + 4 + SHA256_LEN, 2 + cred_len }, { name, name_len } };
		ok = hmac_sha256(hkey, sizeof(hkey), pc, 2, b + 4) == 0;
	}
	OPENSSL_cleanse(sym, sizeof(sym));
	OPENSSL_cleanse(hkey, sizeof(hkey));
	OPENSSL_cleanse(plain, sizeof(plain));
	if (!ok) {
		free(b);
		OPENSSL_cleanse(seed, sizeof(seed));
		return ingot_fail(e, -EIO, "MakeCredential: OpenSSL AES-128-CFB/HMAC failed");
	}
	be16(b, 2 + SHA256_LEN + 2 + cred_len);
	be16(b + 2, SHA256_LEN);
	r = encrypt_seed(ek, seed, sizeof(seed), secret, secret_len, e);
	OPENSSL_cleanse(seed, sizeof(seed));
	if (r < 0) {
		free(b);
		return r;
	}
	*blob = b;
	*blob_len = 2 + 2 + SHA256_LEN + 2 + cred_len;
	return 0;
}

/* ---- documents ---------------------------------------------------------- */

/* doc is an object with "format": format and string members among
 * fields (all required); name in messages.  val[i] gets fields[i]'s
 * string (borrowed from doc): the document decoded. */
static int doc_check(const char *name, const json_t *doc, const char *format,
		     const char *const *fields, size_t n, const char **val, ingot_error *e)
{
	const char *key, *f = NULL;
	json_t *v;

	if (!json_is_object(doc))
		return ingot_fail(e, -EINVAL, "%s: expected a JSON object (%s)", name, format);
	json_unpack((json_t *)doc, "{s?s}", "format", &f);
	if (!f || strcmp(f, format))
		return ingot_fail(e, -EINVAL, "%s: format: expected \"%s\", got \"%.64s\"", name,
				  format, f ? f : "?");
	for (size_t i = 0; i < n; i++)
		val[i] = NULL;
	json_object_foreach((json_t *)doc, key, v) {
		size_t i;
		for (i = 0; i < n && strcmp(key, fields[i]); i++)
			;
		if (i == n && strcmp(key, "format"))
			return ingot_fail(e, -EINVAL, "%s: unknown field '%.64s'", name, key);
		if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))
			return ingot_fail(e, -EINVAL, "%s: %.64s: expected a string", name, key);
		if (i < n)
			val[i] = json_string_value(v);
	}
	for (size_t i = 0; i < n; i++)
		if (!val[i])
			return ingot_fail(e, -EINVAL, "%s: %s: missing", name, fields[i]);
	return 0;
}

static int b64_field(const char *name, const char *key, const char *val, uint8_t **out,
		     size_t *len, ingot_error *e)
{
	if (base64_decode(val, strlen(val), out, len) < 0)
		return ingot_fail(e, -EINVAL, "%s: %s: expected base64", name, key);
	return 0;
}

void enroll_subject_release(struct enroll_subject *s)
{
	free(s->ak_pem);
	s->ak_pem = NULL;
	EVP_PKEY_free(s->ek);
	s->ek = NULL;
}

/* ---- the EK certificate ------------------------------------------------- */

/* The CA bundle at path (at most ENROLL_CA_MAX bytes) in *buf, and its
 * sha256: the identity an enrolment's state records. */
static int read_bundle(const char *path, char **buf, size_t *len, char sha[SHA256_HEX_LEN + 1], ingot_error *e)
{
	uint8_t md[SHA256_LEN];
	int r = read_file(path, ENROLL_CA_MAX, buf, len, e);

	if (r < 0)
		return r;
	sha256_buf(*buf, *len, md);
	hex_encode(md, sizeof(md), sha);
	return 0;
}

int enroll_bundle_sha256(const char *path, char sha[SHA256_HEX_LEN + 1], ingot_error *e)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;

	return read_bundle(path, &buf, &len, sha, e);
}

static int load_bundle(const char *path, X509_STORE **out, char sha[SHA256_HEX_LEN + 1],
		       ingot_error *e)
{
	_cleanup_free_ char *buf = NULL;
	X509_STORE *st;
	BIO *bio;
	X509 *x;
	size_t len, n = 0;
	int r = read_bundle(path, &buf, &len, sha, e);

	if (r < 0)
		return r;
	st = X509_STORE_new();
	bio = BIO_new_mem_buf(buf, (int)len);
	if (!st || !bio) {
		X509_STORE_free(st);
		BIO_free(bio);
		return ingot_fail(e, -ENOMEM, "out of memory");
	}
	while ((x = PEM_read_bio_X509(bio, NULL, NULL, NULL))) {
		if (X509_STORE_add_cert(st, x) == 1)
			n++;
		X509_free(x);
	}
	BIO_free(bio);
	ERR_clear_error();
	if (!n) {
		X509_STORE_free(st);
		return ingot_fail(e, -EINVAL, "%s: expected PEM CA certificates (TPM vendor roots "
				  "and intermediates), got none", path);
	}
	*out = st;
	return 0;
}

static int check_ek_cert(const char *name, const uint8_t *der, size_t len, const char *ca_path,
			 time_t now, struct enroll_subject *s, ingot_error *e)
{
	const unsigned char *p = der;
	X509 *cert = d2i_X509(NULL, &p, (long)len);
	X509_STORE *st = NULL;
	X509_STORE_CTX *ctx = NULL;
	uint8_t md[SHA256_LEN];
	int r;

	ERR_clear_error();
	if (!cert || p != der + len) {
		X509_free(cert);
		return ingot_fail(e, -EINVAL, "%s: ek_certificate: expected one DER X.509 certificate", name);
	}
	sha256_buf(der, len, md);
	hex_encode(md, sizeof(md), s->ek_cert_sha256);
	r = load_bundle(ca_path, &st, s->ca_bundle_sha256, e);
	if (r == 0 && !(ctx = X509_STORE_CTX_new()))
		r = ingot_fail(e, -ENOMEM, "out of memory");
	if (r == 0 && X509_STORE_CTX_init(ctx, st, cert, NULL) != 1)
		r = ingot_fail(e, -ENOMEM, "out of memory");
	if (r == 0) {
		X509_STORE_CTX_set_time(ctx, 0, now);
		if (X509_verify_cert(ctx) != 1)
			r = ingot_fail(e, -EPERM, "%s: ek_certificate: expected a certificate that "
				       "chains to the CA bundle %s, got one that does not (%s)", name,
				       ca_path, X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx)));
	}
	if (r == 0 && !(s->ek = X509_get_pubkey(cert)))
		r = ingot_fail(e, -EINVAL, "%s: ek_certificate: its public key does not parse", name);
	if (r == 0 && !EVP_PKEY_is_a(s->ek, "RSA"))
		r = ingot_fail(e, -ENOTSUP, "%s: ek_certificate: expected an RSA EK, got %s: "
			       "ECC EKs are not supported yet", name, EVP_PKEY_get0_type_name(s->ek));
	/* MakeCredential follows the RSA-2048 template's SHA-256 and AES-128
	 * (L-1); the high-range templates use others. */
	if (r == 0 && EVP_PKEY_get_bits(s->ek) != 2048)
		r = ingot_fail(e, -ENOTSUP, "%s: ek_certificate: expected an RSA-2048 EK (TCG "
			       "template L-1), got RSA-%d: not supported yet", name,
			       EVP_PKEY_get_bits(s->ek));
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(st);
	X509_free(cert);
	ERR_clear_error();
	return r;
}

/* ---- the AK public area ------------------------------------------------- */

/* The AK's key itself, before a challenge is sealed to it: a key type
 * quotes can be checked with, and for RSA a sane public exponent (odd,
 * >= 3; 0 is the TPM's 65537: e = 1 makes every "signature" valid) and a
 * modulus of the size keyBits says, the full 2048..4096 bits. */
static int check_ak_key(const char *name, const TPMT_PUBLIC *p, ingot_error *e)
{
	const TPMS_RSA_PARMS *rsa = &p->parameters.rsaDetail;
	const TPM2B_PUBLIC_KEY_RSA *n = &p->unique.rsa;

	if (p->type == TPM2_ALG_ECC) {
		if (p->parameters.eccDetail.curveID != TPM2_ECC_NIST_P256)
			return ingot_fail(e, -EPERM, "%s: ak_public: curveID: expected NIST P-256 "
					  "(0x0003), got 0x%04x", name, p->parameters.eccDetail.curveID);
		return 0;
	}
	if (p->type != TPM2_ALG_RSA)
		return ingot_fail(e, -EPERM, "%s: ak_public: type: expected RSA (0x0001) or ECC "
				  "(0x0023), got 0x%04x: not an attestation key", name, p->type);
	if (rsa->exponent != 0 && (rsa->exponent < 3 || !(rsa->exponent & 1)))
		return ingot_fail(e, -EPERM, "%s: ak_public: exponent: expected an odd RSA public "
				  "exponent >= 3 (or 0 for 65537), got %u", name, rsa->exponent);
	if (rsa->keyBits != 2048 && rsa->keyBits != 3072 && rsa->keyBits != 4096)
		return ingot_fail(e, -EPERM, "%s: ak_public: keyBits: expected 2048, 3072 or 4096, "
				  "got %u", name, rsa->keyBits);
	if (n->size != rsa->keyBits / 8 || !(n->buffer[0] & 0x80))
		return ingot_fail(e, -EPERM, "%s: ak_public: unique.rsa: expected a %u-bit modulus "
				  "(keyBits), got %u bytes%s", name, rsa->keyBits, n->size,
				  n->size && !(n->buffer[0] & 0x80) ? " with its top bit clear" : "");
	return 0;
}

static int check_ak(const char *name, const uint8_t *buf, size_t len, struct enroll_subject *s,
		    ingot_error *e)
{
	/* An AK proven by activation must also be unable to leave the TPM
	 * (fixedTPM, fixedParent), generated inside it (sensitiveDataOrigin)
	 * and sign only TPM-made structures (restricted + sign, no decrypt). */
	static const struct { TPMA_OBJECT bit; const char *name; int want; } attrs[] = {
		{ TPMA_OBJECT_FIXEDTPM, "fixedTPM", 1 },
		{ TPMA_OBJECT_FIXEDPARENT, "fixedParent", 1 },
		{ TPMA_OBJECT_SENSITIVEDATAORIGIN, "sensitiveDataOrigin", 1 },
		{ TPMA_OBJECT_USERWITHAUTH, "userWithAuth", 1 },
		{ TPMA_OBJECT_RESTRICTED, "restricted", 1 },
		{ TPMA_OBJECT_SIGN_ENCRYPT, "sign", 1 },
		{ TPMA_OBJECT_DECRYPT, "decrypt", 0 },
	};
	TPM2B_PUBLIC pub = { 0 };
	uint8_t area[sizeof(TPMT_PUBLIC)];
	size_t off = 0, alen = 0;
	const EVP_MD *md;
	unsigned mdlen;
	int r;

	if (Tss2_MU_TPM2B_PUBLIC_Unmarshal(buf, len, &off, &pub) != TSS2_RC_SUCCESS || off != len)
		return ingot_fail(e, -EINVAL, "%s: ak_public: expected a marshalled TPM2B_PUBLIC, got "
				  "%zu bytes that do not parse", name, len);
	for (size_t i = 0; i < sizeof(attrs) / sizeof(*attrs); i++)
		if (!!(pub.publicArea.objectAttributes & attrs[i].bit) != attrs[i].want)
			return ingot_fail(e, -EPERM, "%s: ak_public: objectAttributes: expected %s %s, "
					  "got 0x%08x: not an attestation key", name, attrs[i].name,
					  attrs[i].want ? "set" : "clear",
					  (unsigned)pub.publicArea.objectAttributes);
	switch (pub.publicArea.nameAlg) {
	case TPM2_ALG_SHA256: md = EVP_sha256(); break;
	case TPM2_ALG_SHA384: md = EVP_sha384(); break;
	case TPM2_ALG_SHA512: md = EVP_sha512(); break;
	default:
		return ingot_fail(e, -EPERM, "%s: ak_public: nameAlg: expected sha256, sha384 or "
				  "sha512, got 0x%04x", name, pub.publicArea.nameAlg);
	}
	if ((r = check_ak_key(name, &pub.publicArea, e)) < 0)
		return r;
	/* The name MakeCredential binds to: nameAlg || H(TPMT_PUBLIC). */
	if (Tss2_MU_TPMT_PUBLIC_Marshal(&pub.publicArea, area, sizeof(area), &alen) != TSS2_RC_SUCCESS ||
	    EVP_Digest(area, alen, s->name + 2, &mdlen, md, NULL) != 1)
		return ingot_fail(e, -EIO, "%s: ak_public: cannot compute the AK's name", name);
	be16(s->name, pub.publicArea.nameAlg);
	s->name_len = 2 + mdlen;
	hex_encode(s->name, s->name_len, s->ak_name);
	if ((r = tpm_public_pem(&pub.publicArea, &s->ak_pem, e)) < 0 ||
	    (r = attest_ak_id_pem(s->ak_pem, s->ak_id, e)) < 0) {
		ingot_prefix(e, "%s: ak_public", name);
		return r;
	}
	return 0;
}

int enroll_check_request(const char *name, const json_t *req, const char *ca_path, time_t now,
			 struct enroll_subject *out, ingot_error *e)
{
	static const char *const fields[] = { "node", "ek_certificate", "ak_public" };
	const char *val[ARRAY_SIZE(fields)];
	_cleanup_free_ uint8_t *ek = NULL, *ak = NULL;
	size_t ek_len, ak_len;
	int r;

	char what[ENROLL_NODE_MAX + 64];

	memset(out, 0, sizeof(*out));
	snprintf(what, sizeof(what), "%.200s: node", name);
	if ((r = doc_check(name, req, ENROLL_REQUEST_FORMAT, fields, 3, val, e)) < 0 ||
	    (r = enroll_node_check(what, val[0], e)) < 0 ||
	    (r = b64_field(name, fields[1], val[1], &ek, &ek_len, e)) < 0 ||
	    (r = b64_field(name, fields[2], val[2], &ak, &ak_len, e)) < 0)
		return r;
	snprintf(out->node, sizeof(out->node), "%s", val[0]);
	/* The AK first: pure parsing, so a fuzzer reaches it without a CA. */
	if ((r = check_ak(name, ak, ak_len, out, e)) < 0 ||
	    (r = check_ek_cert(name, ek, ek_len, ca_path, now, out, e)) < 0)
		enroll_subject_release(out);
	return r;
}

/* ---- challenge, state, answer ------------------------------------------- */

int enroll_challenge(const struct enroll_subject *s, time_t now, unsigned ttl, json_t **challenge,
		     json_t **state, ingot_error *e)
{
	uint8_t id[ENROLL_ID_HEX / 2], cred[ENROLL_CREDENTIAL_LEN], md[SHA256_LEN];
	char idhex[ENROLL_ID_HEX + 1], credsha[SHA256_HEX_LEN + 1], until[TIME_RFC3339_LEN];
	_cleanup_free_ uint8_t *blob = NULL, *secret = NULL;
	_cleanup_free_ char *b64blob = NULL, *b64secret = NULL;
	size_t blob_len, secret_len;
	int r;

	if (RAND_bytes(id, sizeof(id)) != 1 || RAND_bytes(cred, sizeof(cred)) != 1)
		return ingot_fail(e, -EIO, "challenge: no random bytes");
	r = enroll_make_credential(s->ek, s->name, s->name_len, cred, sizeof(cred), &blob, &blob_len,
				   &secret, &secret_len, e);
	sha256_buf(cred, sizeof(cred), md);
	OPENSSL_cleanse(cred, sizeof(cred));
	if (r < 0)
		return r;
	hex_encode(id, sizeof(id), idhex);
	hex_encode(md, sizeof(md), credsha);
	time_format(now + (time_t)ttl, until);
	b64blob = base64_encode(blob, blob_len, NULL);
	b64secret = base64_encode(secret, secret_len, NULL);
	*challenge = b64blob && b64secret
		? json_pack("{s:s,s:s,s:s,s:s,s:s}", "format", ENROLL_CHALLENGE_FORMAT, "id", idhex,
			    "expires", until, "credential_blob", b64blob, "secret", b64secret)
		: NULL;
	/* Only the secret's digest is kept: the state file alone cannot answer. */
	*state = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "format", ENROLL_STATE_FORMAT,
			   "id", idhex, "expires", until, "credential_sha256", credsha, "node", s->node,
			   "ak_id", s->ak_id, "ak_name", s->ak_name, "ak_public_key", s->ak_pem,
			   "ek_certificate_sha256", s->ek_cert_sha256, "ca_bundle_sha256",
			   s->ca_bundle_sha256);
	if (!*challenge || !*state) {
		json_decref(*challenge);
		json_decref(*state);
		*challenge = *state = NULL;
		return ingot_fail(e, -ENOMEM, "out of memory");
	}
	return 0;
}

static char *state_path(const char *dir, const char *id, const char *ext)
{
	_cleanup_free_ char *base = xasprintf("%s.%s", id, ext);

	return path_join(dir, base);
}

static int id_check(const char *name, const char *id, ingot_error *e)
{
	if (!id || strlen(id) != ENROLL_ID_HEX || strspn(id, "0123456789abcdef") != ENROLL_ID_HEX)
		return ingot_fail(e, -EINVAL, "%s: id: expected %d lower-case hex digits", name,
				  ENROLL_ID_HEX);
	return 0;
}

/* The state decides which AK finish signs for: whoever can write a state
 * file can have any AK enrolled.  So the directory must be ours alone
 * (lib/privdir.h), and a state file in it a regular file of ours (no
 * symlink, not group/other-writable), checked before it is taken. */
static const char state_why[] = "the enrolment state decides which AK is signed; use a "
				"private one, e.g. mode 0700";

static int state_dir_check(const char *dir, ingot_error *e)
{
	return privdir_check(dir, "enrolment state", state_why, e);
}

int enroll_state_store(const char *dir, const json_t *state, ingot_error *e)
{
	_cleanup_free_ char *path = NULL;
	const char *id = NULL;
	int r;

	json_unpack((json_t *)state, "{s?s}", "id", &id);   /* enroll_challenge's own */
	if ((r = id_check("state", id, e)) < 0)
		return r;
	if ((r = mkdir_p(dir, 0700, e)) < 0 || (r = state_dir_check(dir, e)) < 0)
		return r;
	path = state_path(dir, id, "json");
	return json_write_file(path, state, 0600, e);
}

static const char *const answer_fields[] = { "id", "credential" };
enum { A_ID, A_CREDENTIAL, A__N };
static const char *const state_fields[] = { "id", "expires", "credential_sha256", "node",
	"ak_id", "ak_name", "ak_public_key", "ek_certificate_sha256", "ca_bundle_sha256" };
enum { S_ID, S_EXPIRES, S_CREDENTIAL_SHA256, S_NODE, S_AK_ID, S_AK_NAME, S_AK_PUBLIC_KEY,
       S_EK_CERTIFICATE_SHA256, S_CA_BUNDLE_SHA256, S__N };

/* A state as enroll_challenge wrote it: its own id (the file's name), and
 * an AK id that is its public key's, so a record cannot name one AK and
 * carry another. */
static int state_check(const char *path, const json_t *st, const char *id, ingot_error *e)
{
	char ak_id[SHA256_HEX_LEN + 1];
	const char *s[S__N];
	int r;

	if ((r = doc_check(path, st, ENROLL_STATE_FORMAT, state_fields, S__N, s, e)) < 0)
		return r;
	if (strcmp(s[S_ID], id))
		return ingot_fail(e, -EINVAL, "%s: id: expected %s (the file's name), got %.64s",
				  path, id, s[S_ID]);
	if ((r = attest_ak_id_pem(s[S_AK_PUBLIC_KEY], ak_id, e)) < 0)
		return ingot_prefix(e, "%s: ak_public_key", path);
	if (strcmp(ak_id, s[S_AK_ID]))
		return ingot_fail(e, -EINVAL, "%s: ak_id: expected %s (the id of ak_public_key), "
				  "got %.64s", path, ak_id, s[S_AK_ID]);
	return 0;
}

static int replayed(const char *answer_name, const char *id, ingot_error *e)
{
	return ingot_fail(e, -EALREADY, "%s: id: challenge %s was already answered (each "
			  "challenge is accepted once): refusing a replayed answer", answer_name, id);
}

int enroll_state_take(const char *dir, const json_t *answer, const char *answer_name,
		      json_t **state, ingot_error *e)
{
	_cleanup_free_ char *from = NULL, *to = NULL, *buf = NULL;
	_cleanup_close_ int fd = -1;
	const char *a[A__N], *id;
	size_t len;
	int r;

	*state = NULL;
	if ((r = doc_check(answer_name, answer, ENROLL_ANSWER_FORMAT, answer_fields, A__N, a, e)) < 0 ||
	    (r = id_check(answer_name, a[A_ID], e)) < 0 || (r = state_dir_check(dir, e)) < 0)
		return r;
	id = a[A_ID];
	from = state_path(dir, id, "json");
	to = state_path(dir, id, "used");
	/* What is taken is checked first, so a FIFO or a planted link is
	 * refused without burning the challenge, and read through the
	 * descriptor that was checked. */
	fd = regfile_open(from, ENROLL_DOC_MAX, REGFILE_NOFOLLOW | REGFILE_PRIVATE, e);
	if (fd == -ENOENT && access(to, F_OK) == 0)
		return replayed(answer_name, id, e);
	if (fd == -ENOENT)
		return ingot_fail(e, -ENOENT, "%s: id: no challenge %s in %s", answer_name, id, dir);
	if (fd < 0)
		return fd;
	/* rename is atomic: of two finishes racing for one challenge, one
	 * gets the state and the other finds it gone. */
	if (rename(from, to) < 0) {
		r = -errno;
		if (r == -ENOENT)
			return replayed(answer_name, id, e);
		return ingot_fail(e, r, "%s: cannot take the challenge state: %s", from, strerror(-r));
	}
	if ((r = regfile_read_fd(fd, to, ENROLL_DOC_MAX, &buf, &len, e)) < 0 ||
	    (r = json_read_buf(to, buf, len, state, e)) < 0)
		return r;
	if ((r = state_check(to, *state, id, e)) < 0) {
		json_decref(*state);
		*state = NULL;
	}
	return r;
}

int enroll_finish(const json_t *state, const json_t *answer, const char *answer_name, time_t now,
		  struct enroll_subject *out, ingot_error *e)
{
	uint8_t cred[ENROLL_CREDENTIAL_LEN], md[SHA256_LEN], want[SHA256_LEN];
	const char *s[S__N], *a[A__N], *c;
	char buf[TIME_RFC3339_LEN];
	time_t until;
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = doc_check("challenge state", state, ENROLL_STATE_FORMAT, state_fields, S__N, s, e)) < 0 ||
	    (r = doc_check(answer_name, answer, ENROLL_ANSWER_FORMAT, answer_fields, A__N, a, e)) < 0)
		return r;
	c = a[A_CREDENTIAL];
	if (strcmp(s[S_ID], a[A_ID]))
		return ingot_fail(e, -EPERM, "%s: id: expected %s, got %.64s", answer_name,
				  s[S_ID], a[A_ID]);
	if (time_parse(s[S_EXPIRES], &until) < 0 ||
	    hex_decode(s[S_CREDENTIAL_SHA256], want, sizeof(want)) < 0)
		return ingot_fail(e, -EINVAL, "challenge state %s: expires/credential_sha256: malformed",
				  s[S_ID]);
	if (now >= until)
		return ingot_fail(e, -ETIME, "%s: challenge %s expired at %s (now %s): ask for a new one",
				  answer_name, s[S_ID], s[S_EXPIRES], time_format(now, buf));
	if (strlen(c) != 2 * sizeof(cred) || hex_decode(c, cred, sizeof(cred)) < 0)
		return ingot_fail(e, -EINVAL, "%s: credential: expected %zu hex digits", answer_name,
				  2 * sizeof(cred));
	sha256_buf(cred, sizeof(cred), md);
	if (CRYPTO_memcmp(md, want, sizeof(md)))
		return ingot_fail(e, -EPERM, "%s: credential: expected the secret sealed to the "
				  "certified EK and the AK's name, got another: the AK was not "
				  "activated by that TPM", answer_name);
	return enroll_state_subject(state, out, e);
}

int enroll_state_subject(const json_t *state, struct enroll_subject *out, ingot_error *e)
{
	const char *s[S__N];
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = doc_check("challenge state", state, ENROLL_STATE_FORMAT, state_fields, S__N, s, e)) < 0)
		return r;
	snprintf(out->node, sizeof(out->node), "%s", s[S_NODE]);
	snprintf(out->ak_id, sizeof(out->ak_id), "%s", s[S_AK_ID]);
	snprintf(out->ak_name, sizeof(out->ak_name), "%s", s[S_AK_NAME]);
	snprintf(out->ek_cert_sha256, sizeof(out->ek_cert_sha256), "%s", s[S_EK_CERTIFICATE_SHA256]);
	snprintf(out->ca_bundle_sha256, sizeof(out->ca_bundle_sha256), "%s", s[S_CA_BUNDLE_SHA256]);
	out->ak_pem = xstrdup(s[S_AK_PUBLIC_KEY]);
	return 0;
}
