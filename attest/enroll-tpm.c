/* AK enrolment, the node's side (attest/enroll.h): the request from the
 * TPM's EK certificate and the AK's public area, and the answer by
 * TPM2_ActivateCredential, which only the TPM holding both the EK's
 * private key and the AK can perform. */
#include "attest/enroll.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdlib.h>
#include <string.h>
#include <tss2/tss2_mu.h>

#include "attest/tpm-private.h"
#include "lib/base64.h"
#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/xalloc.h"

#define NV_CHUNK 512   /* below every TPM's TPM2_PT_NV_BUFFER_MAX */

/* The TCG EK Credential Profile's default RSA 2048 EK template (L-1):
 * its authPolicy is PolicySecret(TPM_RH_ENDORSEMENT). */
static void ek_template(TPM2B_PUBLIC *p)
{
	static const uint8_t policy[32] = {
		0x83, 0x71, 0x97, 0x67, 0x44, 0x84, 0xB3, 0xF8, 0x1A, 0x90, 0xCC, 0x8D, 0x46, 0xA5,
		0xD7, 0x24, 0xFD, 0x52, 0xD7, 0x6E, 0x06, 0x52, 0x0B, 0x64, 0xF2, 0xA1, 0xDA, 0x1B,
		0x33, 0x14, 0x69, 0xAA };

	memset(p, 0, sizeof(*p));
	p->publicArea.type = TPM2_ALG_RSA;
	p->publicArea.nameAlg = TPM2_ALG_SHA256;
	p->publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
		TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_ADMINWITHPOLICY |
		TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT;
	p->publicArea.authPolicy.size = sizeof(policy);
	memcpy(p->publicArea.authPolicy.buffer, policy, sizeof(policy));
	p->publicArea.parameters.rsaDetail.symmetric.algorithm = TPM2_ALG_AES;
	p->publicArea.parameters.rsaDetail.symmetric.keyBits.aes = 128;
	p->publicArea.parameters.rsaDetail.symmetric.mode.aes = TPM2_ALG_CFB;
	p->publicArea.parameters.rsaDetail.scheme.scheme = TPM2_ALG_NULL;
	p->publicArea.parameters.rsaDetail.keyBits = 2048;
	p->publicArea.parameters.rsaDetail.exponent = 0;
	p->publicArea.unique.rsa.size = 256;
}

/* The EK from the default template; *pub (optional) gets its public area. */
static int ek_load(struct tpm *t, ESYS_TR *ek, TPM2B_PUBLIC **pub, ingot_error *e)
{
	TPM2B_PUBLIC tmpl;
	TSS2_RC rc;

	ek_template(&tmpl);
	rc = tpm_create_primary(t, ESYS_TR_RH_ENDORSEMENT, &tmpl, ek, pub);
	if (rc != TSS2_RC_SUCCESS)
		return tpm_fail(e, rc, "TPM %s: cannot create the EK (default RSA template)", t->conf);
	return 0;
}

static int nv_read_cert(struct tpm *t, uint8_t **out, size_t *len, ingot_error *e)
{
	TPM2B_NV_PUBLIC *nvpub = NULL;
	TPM2B_NAME *nvname = NULL;
	ESYS_TR nv = ESYS_TR_NONE;
	uint8_t *buf = NULL;
	size_t size = 0, off = 0;
	TSS2_RC rc;

	rc = Esys_TR_FromTPMPublic(t->esys, ENROLL_EK_CERT_NV_RSA, ESYS_TR_NONE, ESYS_TR_NONE,
				   ESYS_TR_NONE, &nv);
	if (rc == TSS2_RC_SUCCESS)
		rc = Esys_NV_ReadPublic(t->esys, nv, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, &nvpub,
					&nvname);
	if (rc != TSS2_RC_SUCCESS) {
		if (nv != ESYS_TR_NONE)
			Esys_TR_Close(t->esys, &nv);
		return tpm_fail(e, rc, "TPM %s: no EK certificate at NV index 0x%08x (give it with "
				"--ek-cert)", t->conf, ENROLL_EK_CERT_NV_RSA);
	}
	size = nvpub->nvPublic.dataSize;
	Esys_Free(nvpub);
	Esys_Free(nvname);
	if (size == 0 || size > ENROLL_DOC_MAX) {
		Esys_TR_Close(t->esys, &nv);
		return ingot_fail(e, size ? -ENOMEM : -ENODATA, "TPM %s: EK certificate NV index "
				  "0x%08x: %zu bytes", t->conf, ENROLL_EK_CERT_NV_RSA, size);
	}
	buf = xmalloc(size);
	while (off < size) {
		TPM2B_MAX_NV_BUFFER *data = NULL;
		uint16_t n = (uint16_t)(size - off < NV_CHUNK ? size - off : NV_CHUNK);

		rc = Esys_NV_Read(t->esys, nv, nv, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, n,
				  (uint16_t)off, &data);
		if (rc != TSS2_RC_SUCCESS || data->size != n) {
			Esys_Free(data);
			Esys_TR_Close(t->esys, &nv);
			free(buf);
			return tpm_fail(e, rc, "TPM %s: cannot read the EK certificate (NV 0x%08x)",
					t->conf, ENROLL_EK_CERT_NV_RSA);
		}
		memcpy(buf + off, data->buffer, n);
		off += n;
		Esys_Free(data);
	}
	Esys_TR_Close(t->esys, &nv);
	*out = buf;
	*len = size;
	return 0;
}

/* The EK certificate as DER: from path (DER or PEM) or the TPM's NV. */
static int ek_cert_der(struct tpm *t, const char *path, uint8_t **out, size_t *len, ingot_error *e)
{
	_cleanup_free_ char *buf = NULL;
	unsigned char *der = NULL;
	size_t n;
	BIO *bio;
	X509 *x;
	int r, dl;

	if (!path) {
		uint8_t *raw = NULL;
		size_t rl = 0;
		const unsigned char *p;

		if ((r = nv_read_cert(t, &raw, &rl, e)) < 0)
			return r;
		/* Some TPMs pad the NV index: keep exactly the certificate. */
		p = raw;
		x = d2i_X509(NULL, &p, (long)rl);
		if (!x) {
			free(raw);
			ERR_clear_error();
			return ingot_fail(e, -EINVAL, "TPM %s: NV 0x%08x: expected a DER X.509 "
					  "certificate", t->conf, ENROLL_EK_CERT_NV_RSA);
		}
		X509_free(x);
		*out = raw;
		*len = (size_t)(p - raw);
		return 0;
	}
	if ((r = read_file(path, ENROLL_DOC_MAX, &buf, &n, e)) < 0)
		return r;
	bio = BIO_new_mem_buf(buf, (int)n);
	x = bio ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
	BIO_free(bio);
	if (!x) {
		const unsigned char *p = (const unsigned char *)buf;
		x = d2i_X509(NULL, &p, (long)n);
	}
	ERR_clear_error();
	if (!x)
		return ingot_fail(e, -EINVAL, "%s: expected an X.509 certificate (PEM or DER)", path);
	dl = i2d_X509(x, &der);
	X509_free(x);
	if (dl <= 0) {
		OPENSSL_free(der);
		return ingot_fail(e, -ENOMEM, "out of memory");
	}
	*out = xmalloc((size_t)dl);
	memcpy(*out, der, (size_t)dl);
	OPENSSL_free(der);
	*len = (size_t)dl;
	return 0;
}

/* Whether the certificate's key is the EK this TPM derives: otherwise
 * every challenge would fail for a reason the verifier cannot name. */
static int ek_matches(struct tpm *t, const uint8_t *der, size_t len, ingot_error *e)
{
	const unsigned char *p = der;
	X509 *x = d2i_X509(NULL, &p, (long)len);
	EVP_PKEY *k = x ? X509_get0_pubkey(x) : NULL;
	BIGNUM *n = NULL, *tn = NULL;
	TPM2B_PUBLIC *pub = NULL;
	ESYS_TR ek = ESYS_TR_NONE;
	int r = 0;

	if (!k || !EVP_PKEY_is_a(k, "RSA") || EVP_PKEY_get_bn_param(k, OSSL_PKEY_PARAM_RSA_N, &n) != 1)
		r = ingot_fail(e, -ENOTSUP, "EK certificate: expected an RSA key (ECC EKs are not "
			       "supported yet)");
	if (r == 0 && (r = ek_load(t, &ek, &pub, e)) == 0) {
		tn = BN_bin2bn(pub->publicArea.unique.rsa.buffer, pub->publicArea.unique.rsa.size, NULL);
		if (!tn || BN_cmp(n, tn))
			r = ingot_fail(e, -EINVAL, "EK certificate: expected the key of this TPM's "
				       "EK (default RSA template), got another key");
	}
	tpm_flush(t, &ek);
	Esys_Free(pub);
	BN_free(n);
	BN_free(tn);
	X509_free(x);
	ERR_clear_error();
	return r;
}

int tpm_enroll_request(struct tpm *t, const char *ak_dir, const char *node,
		       const char *ek_cert_path, json_t **request, ingot_error *e)
{
	_cleanup_free_ uint8_t *der = NULL;
	_cleanup_free_ char *akpath = NULL, *akpub = NULL, *b64ek = NULL, *b64ak = NULL;
	TPM2B_PUBLIC pub = { 0 };
	size_t der_len = 0, ak_len, off = 0;
	int r;

	if ((r = enroll_node_check("node", node, e)) < 0)
		return r;
	akpath = path_join(ak_dir, "ak.pub");
	if ((r = read_file(akpath, sizeof(TPM2B_PUBLIC) + 16, &akpub, &ak_len, e)) < 0)
		return r;
	if (Tss2_MU_TPM2B_PUBLIC_Unmarshal((uint8_t *)akpub, ak_len, &off, &pub) != TSS2_RC_SUCCESS ||
	    off != ak_len)
		return ingot_fail(e, -EBADMSG, "%s: expected a marshalled TPM2B_PUBLIC", akpath);
	if ((r = ek_cert_der(t, ek_cert_path, &der, &der_len, e)) < 0 ||
	    (r = ek_matches(t, der, der_len, e)) < 0)
		return r;
	b64ek = base64_encode(der, der_len, NULL);
	b64ak = base64_encode(akpub, ak_len, NULL);
	*request = b64ek && b64ak
		? json_pack("{s:s,s:s,s:s,s:s}", "format", ENROLL_REQUEST_FORMAT, "node", node,
			    "ek_certificate", b64ek, "ak_public", b64ak)
		: NULL;
	return *request ? 0 : ingot_fail(e, -ENOMEM, "out of memory");
}

/* The challenge, decoded: *id (borrowed from ch), the blob and the secret. */
static int challenge_parse(const char *name, const json_t *ch, const char **idp, TPM2B_ID_OBJECT *blob,
			   TPM2B_ENCRYPTED_SECRET *secret, ingot_error *e)
{
	_cleanup_free_ uint8_t *b = NULL, *s = NULL;
	json_t *jb = NULL, *js = NULL, *jf = NULL, *jid = NULL;
	const char *f, *id;
	size_t bl, sl, off = 0, off2 = 0;

	json_unpack((json_t *)ch, "{s?o s?o s?o s?o}", "credential_blob", &jb, "secret", &js,
		    "format", &jf, "id", &jid);
	f = json_string_value(jf);
	id = json_string_value(jid);
	if (!json_is_object(ch) || !f || strcmp(f, ENROLL_CHALLENGE_FORMAT) || !id ||
	    strlen(id) != ENROLL_ID_HEX)
		return ingot_fail(e, -EINVAL, "%s: expected an %s document with an id",
				  name, ENROLL_CHALLENGE_FORMAT);
	if (base64_decode(json_string_value(jb), json_string_length(jb), &b, &bl) < 0 ||
	    base64_decode(json_string_value(js), json_string_length(js), &s, &sl) < 0 ||
	    Tss2_MU_TPM2B_ID_OBJECT_Unmarshal(b, bl, &off, blob) != TSS2_RC_SUCCESS || off != bl ||
	    Tss2_MU_TPM2B_ENCRYPTED_SECRET_Unmarshal(s, sl, &off2, secret) != TSS2_RC_SUCCESS ||
	    off2 != sl)
		return ingot_fail(e, -EINVAL, "%s: credential_blob/secret: expected base64 of a "
				  "marshalled TPM2B_ID_OBJECT and TPM2B_ENCRYPTED_SECRET", name);
	*idp = id;
	return 0;
}

int tpm_enroll_answer(struct tpm *t, const char *ak_dir, const json_t *challenge,
		      const char *challenge_name, json_t **answer, ingot_error *e)
{
	TPM2B_ID_OBJECT blob = { 0 };
	TPM2B_ENCRYPTED_SECRET secret = { 0 };
	TPMT_SYM_DEF sym = { .algorithm = TPM2_ALG_NULL };
	TPM2B_DIGEST *cert = NULL;
	TPM2B_TIMEOUT *timeout = NULL;
	TPMT_TK_AUTH *ticket = NULL;
	ESYS_TR primary = ESYS_TR_NONE, ak = ESYS_TR_NONE, ek = ESYS_TR_NONE, sess = ESYS_TR_NONE;
	_cleanup_free_ char *pem = NULL;
	const char *id = NULL;
	char hex[2 * sizeof(cert->buffer) + 1];
	TSS2_RC rc;
	int r;

	if ((r = challenge_parse(challenge_name, challenge, &id, &blob, &secret, e)) < 0)
		return r;
	if ((r = tpm_ak_load(t, ak_dir, &primary, &ak, &pem, e)) < 0)
		return r;
	tpm_flush(t, &primary);
	if ((r = ek_load(t, &ek, NULL, e)) < 0)
		goto out;
	/* The EK's policy: PolicySecret(TPM_RH_ENDORSEMENT), empty auth. */
	rc = Esys_StartAuthSession(t->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
				   ESYS_TR_NONE, NULL, TPM2_SE_POLICY, &sym, TPM2_ALG_SHA256, &sess);
	if (rc == TSS2_RC_SUCCESS)
		rc = Esys_PolicySecret(t->esys, ESYS_TR_RH_ENDORSEMENT, sess, ESYS_TR_PASSWORD,
				       ESYS_TR_NONE, ESYS_TR_NONE, NULL, NULL, NULL, 0, &timeout,
				       &ticket);
	Esys_Free(timeout);
	Esys_Free(ticket);
	if (rc != TSS2_RC_SUCCESS) {
		r = tpm_fail(e, rc, "TPM %s: cannot satisfy the EK's policy (PolicySecret "
			     "endorsement)", t->conf);
		goto out;
	}
	rc = Esys_ActivateCredential(t->esys, ak, ek, ESYS_TR_PASSWORD, sess, ESYS_TR_NONE, &blob,
				     &secret, &cert);
	if (rc != TSS2_RC_SUCCESS) {
		r = tpm_fail(e, rc, "TPM %s: ActivateCredential refused %s: the challenge was not "
			     "made for this TPM's EK and the AK in %s", t->conf, challenge_name, ak_dir);
		goto out;
	}
	hex_encode(cert->buffer, cert->size, hex);
	OPENSSL_cleanse(cert->buffer, sizeof(cert->buffer));
	*answer = json_pack("{s:s,s:s,s:s}", "format", ENROLL_ANSWER_FORMAT, "id", id,
			    "credential", hex);
	OPENSSL_cleanse(hex, sizeof(hex));
	r = *answer ? 0 : ingot_fail(e, -ENOMEM, "out of memory");
out:
	Esys_Free(cert);
	tpm_flush(t, &sess);
	tpm_flush(t, &ek);
	tpm_flush(t, &ak);
	return r;
}
