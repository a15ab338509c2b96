/* Attestation keys: templates, creation, reload and PEM export. */
#include "attest/tpm-private.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <stdlib.h>
#include <string.h>
#include <tss2/tss2_mu.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/xalloc.h"

#define AK_TEMPLATE_ID "ingot-ak-v1"

int ak_alg_parse(const char *s, enum ak_alg *out)
{
	if (!strcmp(s, "ecc") || !strcmp(s, "ecc-p256"))
		*out = AK_ECC_P256;
	else if (!strcmp(s, "rsa") || !strcmp(s, "rsa-2048"))
		*out = AK_RSA_2048;
	else
		return -EINVAL;
	return 0;
}

int ak_hierarchy_parse(const char *s, enum ak_hierarchy *out)
{
	if (!strcmp(s, "owner"))
		*out = AK_OWNER;
	else if (!strcmp(s, "endorsement"))
		*out = AK_ENDORSEMENT;
	else
		return -EINVAL;
	return 0;
}

const char *ak_alg_name(enum ak_alg a)
{
	return a == AK_RSA_2048 ? "rsa-2048" : "ecc-p256";
}

const char *ak_hierarchy_name(enum ak_hierarchy h)
{
	return h == AK_ENDORSEMENT ? "endorsement" : "owner";
}

/* The parent: an ECC P-256 restricted decryption (storage) key with
 * AES-128-CFB, the shape of the TCG provisioning guidance's SRK
 * template.  Primaries are derived from the hierarchy seed and the
 * template, so this one is the same key every time. */
static void primary_template(TPM2B_PUBLIC *p)
{
	memset(p, 0, sizeof(*p));
	p->publicArea.type = TPM2_ALG_ECC;
	p->publicArea.nameAlg = TPM2_ALG_SHA256;
	p->publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
		TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA |
		TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT;
	p->publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_AES;
	p->publicArea.parameters.eccDetail.symmetric.keyBits.aes = 128;
	p->publicArea.parameters.eccDetail.symmetric.mode.aes = TPM2_ALG_CFB;
	p->publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
	p->publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
	p->publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
}

/* The AK: a restricted signing key (it signs only TPM-generated
 * structures), ECDSA-SHA256 on P-256 or RSASSA-SHA256 with RSA-2048. */
static void ak_template(enum ak_alg alg, TPM2B_PUBLIC *p)
{
	memset(p, 0, sizeof(*p));
	p->publicArea.nameAlg = TPM2_ALG_SHA256;
	p->publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
		TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA |
		TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_SIGN_ENCRYPT;
	if (alg == AK_RSA_2048) {
		p->publicArea.type = TPM2_ALG_RSA;
		p->publicArea.parameters.rsaDetail.symmetric.algorithm = TPM2_ALG_NULL;
		p->publicArea.parameters.rsaDetail.scheme.scheme = TPM2_ALG_RSASSA;
		p->publicArea.parameters.rsaDetail.scheme.details.rsassa.hashAlg = TPM2_ALG_SHA256;
		p->publicArea.parameters.rsaDetail.keyBits = 2048;
		p->publicArea.parameters.rsaDetail.exponent = 0;
	} else {
		p->publicArea.type = TPM2_ALG_ECC;
		p->publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_NULL;
		p->publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_ECDSA;
		p->publicArea.parameters.eccDetail.scheme.details.ecdsa.hashAlg = TPM2_ALG_SHA256;
		p->publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
		p->publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
	}
}

TSS2_RC tpm_create_primary(struct tpm *t, ESYS_TR hierarchy, const TPM2B_PUBLIC *tmpl, ESYS_TR *out,
			   TPM2B_PUBLIC **pub)
{
	TPM2B_SENSITIVE_CREATE sens = { 0 };
	TPM2B_DATA outside = { 0 };
	TPML_PCR_SELECTION pcrs = { 0 };
	TPM2B_PUBLIC *p = NULL;
	TPM2B_CREATION_DATA *cdata = NULL;
	TPM2B_DIGEST *chash = NULL;
	TPMT_TK_CREATION *ticket = NULL;
	TSS2_RC rc;

	rc = Esys_CreatePrimary(t->esys, hierarchy, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
				&sens, tmpl, &outside, &pcrs, out, &p, &cdata, &chash, &ticket);
	Esys_Free(cdata);
	Esys_Free(chash);
	Esys_Free(ticket);
	if (rc != TSS2_RC_SUCCESS)
		*out = ESYS_TR_NONE;
	if (rc == TSS2_RC_SUCCESS && pub)
		*pub = p;
	else
		Esys_Free(p);
	return rc;
}

static int create_primary(struct tpm *t, enum ak_hierarchy h, ESYS_TR *out, ingot_error *e)
{
	TPM2B_PUBLIC tmpl;
	TSS2_RC rc;

	primary_template(&tmpl);
	rc = tpm_create_primary(t, h == AK_ENDORSEMENT ? ESYS_TR_RH_ENDORSEMENT : ESYS_TR_RH_OWNER,
				&tmpl, out, NULL);
	if (rc != TSS2_RC_SUCCESS)
		return tpm_fail(e, rc, "TPM %s: cannot create the AK's primary key in the %s hierarchy",
				t->conf, ak_hierarchy_name(h));
	return 0;
}

/* SubjectPublicKeyInfo PEM of a TPM public area.  The NIST curves
 * tpm2-tools can make an AK on: the same key given as PEM is read by
 * OpenSSL whatever its curve, and both forms must agree. */
int tpm_public_pem(const TPMT_PUBLIC *pub, char **out, ingot_error *e)
{
	static const struct { TPMI_ECC_CURVE id; const char *group; size_t size; } curves[] = {
		{ TPM2_ECC_NIST_P256, "prime256v1", 32 },
		{ TPM2_ECC_NIST_P384, "secp384r1", 48 },
		{ TPM2_ECC_NIST_P521, "secp521r1", 66 },
	};
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	OSSL_PARAM *params = NULL;
	EVP_PKEY_CTX *ctx = NULL;
	EVP_PKEY *pkey = NULL;
	BIGNUM *n = NULL, *ex = NULL;
	BIO *bio = NULL;
	uint8_t point[1 + 2 * 66];
	int r = -EIO;

	if (!bld)
		return ingot_fail(e, -ENOMEM, "out of memory");
	if (pub->type == TPM2_ALG_ECC) {
		const TPMS_ECC_POINT *q = &pub->unique.ecc;
		size_t c = 0, sz;

		while (c < ARRAY_SIZE(curves) && curves[c].id != pub->parameters.eccDetail.curveID)
			c++;
		if (c == ARRAY_SIZE(curves) || q->x.size > curves[c].size || q->y.size > curves[c].size) {
			r = ingot_fail(e, -EINVAL, "AK public key: expected ECC NIST P-256, P-384 or P-521 with "
				       "coordinates of the curve's size, got curve 0x%x (x %u, y %u bytes)",
				       pub->parameters.eccDetail.curveID, q->x.size, q->y.size);
			goto out;
		}
		/* Uncompressed point; TPM coordinates may be shorter than the
		 * curve's size. */
		sz = curves[c].size;
		memset(point, 0, sizeof(point));
		point[0] = 0x04;
		memcpy(point + 1 + sz - q->x.size, q->x.buffer, q->x.size);
		memcpy(point + 1 + 2 * sz - q->y.size, q->y.buffer, q->y.size);
		if (!OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, curves[c].group, 0) ||
		    !OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, point, 1 + 2 * sz))
			goto out;
		ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
	} else if (pub->type == TPM2_ALG_RSA) {
		uint32_t exp = pub->parameters.rsaDetail.exponent ? pub->parameters.rsaDetail.exponent : 65537;
		n = BN_bin2bn(pub->unique.rsa.buffer, pub->unique.rsa.size, NULL);
		ex = BN_new();
		if (!n || !ex || !BN_set_word(ex, exp) ||
		    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n) ||
		    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, ex))
			goto out;
		ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
	} else {
		r = ingot_fail(e, -EINVAL, "AK public key: expected an ECC or RSA key, got type 0x%x", pub->type);
		goto out;
	}
	params = OSSL_PARAM_BLD_to_param(bld);
	if (!ctx || !params || EVP_PKEY_fromdata_init(ctx) <= 0 ||
	    EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) <= 0)
		goto out;
	bio = BIO_new(BIO_s_mem());
	if (bio && PEM_write_bio_PUBKEY(bio, pkey)) {
		char *data;
		long len = BIO_get_mem_data(bio, &data);
		*out = xstrndup(data, (size_t)len);
		r = 0;
	}
out:
	if (r == -EIO)
		r = ingot_fail(e, -EIO, "AK public key: OpenSSL cannot build the key");
	BIO_free(bio);
	EVP_PKEY_free(pkey);
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	BN_free(n);
	BN_free(ex);
	return r;
}

static int write_blob(const char *dir, const char *name, const void *buf, size_t len, mode_t mode,
		      ingot_error *e)
{
	_cleanup_free_ char *path = path_join(dir, name);
	return write_file_atomic(path, buf, len, mode, e);
}

int tpm_ak_create(struct tpm *t, const char *dir, enum ak_alg alg, enum ak_hierarchy h, ingot_error *e)
{
	TPM2B_SENSITIVE_CREATE sens = { 0 };
	TPM2B_DATA outside = { 0 };
	TPML_PCR_SELECTION pcrs = { 0 };
	TPM2B_PUBLIC tmpl, *pub = NULL;
	TPM2B_PRIVATE *priv = NULL;
	TPM2B_CREATION_DATA *cdata = NULL;
	TPM2B_DIGEST *chash = NULL;
	TPMT_TK_CREATION *ticket = NULL;
	ESYS_TR primary = ESYS_TR_NONE;
	_cleanup_free_ char *pem = NULL;
	_cleanup_json_ json_t *meta = NULL;
	_cleanup_free_ char *meta_path = NULL;
	uint8_t pub_buf[sizeof(TPM2B_PUBLIC)], priv_buf[sizeof(TPM2B_PRIVATE)];
	size_t pub_len = 0, priv_len = 0;
	TSS2_RC rc;
	int r;

	meta_path = path_join(dir, "ak.json");
	/* Replacing an AK would silently invalidate its enrolment with
	 * every verifier. */
	if (access(meta_path, F_OK) == 0)
		return ingot_fail(e, -EEXIST, "AK %s: already exists (remove the directory to make a new AK)", dir);
	r = mkdir_p(dir, 0755, e);
	if (r < 0)
		return r;
	r = create_primary(t, h, &primary, e);
	if (r < 0)
		return r;
	ak_template(alg, &tmpl);
	rc = Esys_Create(t->esys, primary, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &sens, &tmpl,
			 &outside, &pcrs, &priv, &pub, &cdata, &chash, &ticket);
	tpm_flush(t, &primary);
	Esys_Free(cdata);
	Esys_Free(chash);
	Esys_Free(ticket);
	if (rc != TSS2_RC_SUCCESS)
		return tpm_fail(e, rc, "TPM %s: cannot create the %s AK", t->conf, ak_alg_name(alg));
	rc = Tss2_MU_TPM2B_PUBLIC_Marshal(pub, pub_buf, sizeof(pub_buf), &pub_len);
	if (rc == TSS2_RC_SUCCESS)
		rc = Tss2_MU_TPM2B_PRIVATE_Marshal(priv, priv_buf, sizeof(priv_buf), &priv_len);
	if (rc == TSS2_RC_SUCCESS)
		r = tpm_public_pem(&pub->publicArea, &pem, e);
	else
		r = tpm_fail(e, rc, "AK: cannot marshal the key blobs");
	Esys_Free(pub);
	Esys_Free(priv);
	if (r < 0)
		return r;

	meta = json_pack("{s:s, s:s, s:s}", "alg", ak_alg_name(alg), "hierarchy", ak_hierarchy_name(h),
			 "template", AK_TEMPLATE_ID);
	if (!meta)
		return ingot_fail(e, -ENOMEM, "out of memory");
	if ((r = write_blob(dir, "ak.pub", pub_buf, pub_len, 0644, e)) < 0 ||
	    (r = write_blob(dir, "ak.priv", priv_buf, priv_len, 0600, e)) < 0 ||
	    (r = write_blob(dir, "ak.pub.pem", pem, strlen(pem), 0644, e)) < 0)
		return r;
	/* ak.json last: its presence says the directory is complete. */
	return json_write_file(meta_path, meta, 0644, e);
}

static int read_blob(const char *dir, const char *name, char **buf, size_t *len, ingot_error *e)
{
	_cleanup_free_ char *path = path_join(dir, name);
	int r;

	r = read_file(path, 1 << 16, buf, len, e);
	if (r == -ENOENT)
		return ingot_fail(e, r, "AK: %s: missing (no AK in %s? create one with 'ingot attest ak create -o %s')",
				  path, dir, dir);
	return r;
}

int tpm_ak_load(struct tpm *t, const char *dir, ESYS_TR *primary, ESYS_TR *ak, char **pem,
		ingot_error *e)
{
	_cleanup_free_ char *meta_buf = NULL, *pub_buf = NULL, *priv_buf = NULL, *pem_buf = NULL;
	_cleanup_json_ json_t *meta = NULL;
	TPM2B_PUBLIC pub = { 0 };
	TPM2B_PRIVATE priv = { 0 };
	enum ak_hierarchy h;
	size_t len, off = 0;
	const char *hs, *tmpl;
	TSS2_RC rc;
	int r;

	*primary = *ak = ESYS_TR_NONE;
	*pem = NULL;
	if ((r = read_blob(dir, "ak.json", &meta_buf, &len, e)) < 0)
		return r;
	if ((r = json_read_buf("ak.json", meta_buf, len, &meta, e)) < 0)
		return r;
	if ((r = json_get_str(meta, "hierarchy", "AK ak.json", &hs, e)) < 0 ||
	    (r = json_get_str(meta, "template", "AK ak.json", &tmpl, e)) < 0)
		return r;
	if (ak_hierarchy_parse(hs, &h) < 0 || strcmp(tmpl, AK_TEMPLATE_ID))
		return ingot_fail(e, -EINVAL, "AK %s/ak.json: expected hierarchy owner|endorsement and template %s, got %s and %s",
				  dir, AK_TEMPLATE_ID, hs, tmpl);
	if ((r = read_blob(dir, "ak.pub", &pub_buf, &len, e)) < 0)
		return r;
	rc = Tss2_MU_TPM2B_PUBLIC_Unmarshal((uint8_t *)pub_buf, len, &off, &pub);
	if (rc != TSS2_RC_SUCCESS || off != len)
		return ingot_fail(e, -EBADMSG, "AK %s/ak.pub: expected a marshalled TPM2B_PUBLIC, got %zu bytes that do not parse", dir, len);
	off = 0;
	if ((r = read_blob(dir, "ak.priv", &priv_buf, &len, e)) < 0)
		return r;
	rc = Tss2_MU_TPM2B_PRIVATE_Unmarshal((uint8_t *)priv_buf, len, &off, &priv);
	if (rc != TSS2_RC_SUCCESS || off != len)
		return ingot_fail(e, -EBADMSG, "AK %s/ak.priv: expected a marshalled TPM2B_PRIVATE, got %zu bytes that do not parse", dir, len);
	if ((r = read_blob(dir, "ak.pub.pem", &pem_buf, &len, e)) < 0)
		return r;
	r = create_primary(t, h, primary, e);
	if (r < 0)
		return r;
	rc = Esys_Load(t->esys, *primary, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &priv, &pub, ak);
	if (rc != TSS2_RC_SUCCESS) {
		tpm_flush(t, primary);
		*ak = ESYS_TR_NONE;
		return tpm_fail(e, rc, "TPM %s: cannot load the AK from %s (created on another TPM, or the %s hierarchy seed changed?)",
				t->conf, dir, hs);
	}
	*pem = TAKE_PTR(pem_buf);
	return 0;
}
