/* Authenticode signing of a UKI (see uki-sign.h). */
#include "builder/uki-sign.h"

#include <errno.h>
#include <limits.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/pkcs7.h>
#include <openssl/x509.h>
#include <string.h>

#include "attest/authenticode.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/le.h"

#define SPC_INDIRECT_DATA_OID "1.3.6.1.4.1.311.2.1.4"
#define WIN_CERT_REVISION_2_0 0x0200
#define WIN_CERT_TYPE_PKCS_SIGNED_DATA 0x0002

static void pkey_freep(EVP_PKEY **k) { EVP_PKEY_free(*k); }
static void x509_freep(X509 **x) { X509_free(*x); }
static void p7_freep(PKCS7 **p) { PKCS7_free(*p); }
static void bio_freep(BIO **b) { BIO_free(*b); }

/* An encrypted key must not make OpenSSL prompt on the terminal. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf, (void)size, (void)rwflag, (void)u;
	return -1;
}

/* SpcIndirectDataContent as sbsign writes it: SpcPeImageData with empty
 * flags and the file link "<<<Obsolete>>>" (BMPString), then DigestInfo
 * {sha256, digest}.  Fixed lengths, so a template with the digest last. */
static const uint8_t idc_head[] = {
	0x30, 0x68,                                   /* SpcIndirectDataContent */
	0x30, 0x33,                                   /* SpcAttributeTypeAndOptionalValue */
	0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x01, 0x0f, /* SPC_PE_IMAGE_DATAOBJ */
	0x30, 0x25,                                   /* SpcPeImageData */
	0x03, 0x01, 0x00,                             /* flags: empty BIT STRING */
	0xa0, 0x20, 0xa2, 0x1e, 0x80, 0x1c,           /* [0] file: SpcLink [2] SpcString [0] BMPString */
	0x00, '<', 0x00, '<', 0x00, '<', 0x00, 'O', 0x00, 'b', 0x00, 's', 0x00, 'o',
	0x00, 'l', 0x00, 'e', 0x00, 't', 0x00, 'e', 0x00, '>', 0x00, '>', 0x00, '>',
	0x30, 0x31,                                   /* DigestInfo */
	0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05, 0x00, /* sha256 */
	0x04, 0x20,
};
#define IDC_LEN (sizeof(idc_head) + 32)
_Static_assert(IDC_LEN == 2 + 0x68, "SpcIndirectDataContent template length");

static int ossl_fail(ingot_error *e, const char *field, const char *what)
{
	unsigned long code = ERR_get_error();
	char msg[160] = "";
	if (code)
		ERR_error_string_n(code, msg, sizeof(msg));
	ERR_clear_error();
	return ingot_fail(e, -EINVAL, "%s: %s%s%s", field, what, *msg ? ": " : "", msg);
}

static int load_pair(const void *key_pem, size_t key_len, const void *cert_pem, size_t cert_len, const char *field,
		     EVP_PKEY **key, X509 **cert, ingot_error *e)
{
	_cleanup_(bio_freep) BIO *kb = BIO_new_mem_buf(key_pem, (int)key_len);
	_cleanup_(bio_freep) BIO *cb = BIO_new_mem_buf(cert_pem, (int)cert_len);

	if (!kb || !cb || key_len > INT_MAX || cert_len > INT_MAX)
		return ingot_fail(e, -ENOMEM, "out of memory");
	if (!(*key = PEM_read_bio_PrivateKey(kb, NULL, no_passphrase, NULL)))
		return ossl_fail(e, field, "key: expected an unencrypted PEM private key");
	if (EVP_PKEY_get_base_id(*key) != EVP_PKEY_RSA)
		return ingot_fail(e, -EINVAL, "%s: key: expected an RSA key (firmware verifies RSA; its PKCS#1 v1.5 "
				  "signature is deterministic), got %s", field, EVP_PKEY_get0_type_name(*key));
	if (!(*cert = PEM_read_bio_X509(cb, NULL, no_passphrase, NULL)))
		return ossl_fail(e, field, "cert: expected a PEM X.509 certificate");
	if (X509_check_private_key(*cert, *key) != 1) {
		ERR_clear_error();
		return ingot_fail(e, -EINVAL, "%s: cert: expected the certificate of key, got another key's", field);
	}
	return 0;
}

/* PKCS#7 SignedData over idc, DER into *der. */
static int sign_idc(const uint8_t *idc, EVP_PKEY *key, X509 *cert, const char *field, uint8_t **der, int *der_len,
		    ingot_error *e)
{
	_cleanup_(p7_freep) PKCS7 *p7 = PKCS7_new();
	PKCS7 *inner = PKCS7_new();
	PKCS7_SIGNER_INFO *si;
	ASN1_STRING *seq = ASN1_STRING_new();
	ASN1_OCTET_STRING *md = ASN1_OCTET_STRING_new();
	ASN1_OBJECT *ct = OBJ_txt2obj(SPC_INDIRECT_DATA_OID, 1);
	uint8_t digest[32];

	if (!p7 || !inner || !seq || !md || !ct || !(inner->d.other = ASN1_TYPE_new())) {
		PKCS7_free(inner), ASN1_STRING_free(seq), ASN1_OCTET_STRING_free(md), ASN1_OBJECT_free(ct);
		return ingot_fail(e, -ENOMEM, "out of memory");
	}
	/* The content: SpcIndirectDataContent under its own type. */
	inner->type = OBJ_dup(ct);
	ASN1_STRING_set(seq, idc, IDC_LEN);
	ASN1_TYPE_set(inner->d.other, V_ASN1_SEQUENCE, seq);
	/* Authenticode's messageDigest is over the content's value, without
	 * the SEQUENCE tag and length. */
	sha256_buf(idc + 2, IDC_LEN - 2, digest);
	ASN1_OCTET_STRING_set(md, digest, sizeof(digest));
	if (!PKCS7_set_type(p7, NID_pkcs7_signed) || !PKCS7_set_content(p7, inner)) {
		PKCS7_free(inner), ASN1_OCTET_STRING_free(md), ASN1_OBJECT_free(ct);
		return ossl_fail(e, field, "cannot make the PKCS#7 structure");
	}
	if (!(si = PKCS7_add_signature(p7, cert, key, EVP_sha256())) || !PKCS7_add_certificate(p7, cert)) {
		ASN1_OCTET_STRING_free(md), ASN1_OBJECT_free(ct);
		return ossl_fail(e, field, "cannot add the signer");
	}
	/* A failed attribute call may have freed its value: not again. */
	if (!PKCS7_add_signed_attribute(si, NID_pkcs9_contentType, V_ASN1_OBJECT, ct)) {
		ASN1_OCTET_STRING_free(md);
		return ossl_fail(e, field, "cannot add the signed attributes");
	}
	if (!PKCS7_add_signed_attribute(si, NID_pkcs9_messageDigest, V_ASN1_OCTET_STRING, md))
		return ossl_fail(e, field, "cannot add the signed attributes");
	/* Signs the DER of the signed attributes; unlike PKCS7_dataFinal it
	 * adds no signingTime, so the signature is a function of the inputs. */
	if (PKCS7_SIGNER_INFO_sign(si) <= 0)
		return ossl_fail(e, field, "cannot sign");
	*der = NULL;
	if ((*der_len = i2d_PKCS7(p7, der)) <= 0)
		return ossl_fail(e, field, "cannot encode the signature");
	return 0;
}

int uki_sign(struct strbuf *efi, const void *key_pem, size_t key_len, const void *cert_pem, size_t cert_len,
	     const char *field, uint8_t cert_sha256[32], ingot_error *e)
{
	_cleanup_(pkey_freep) EVP_PKEY *key = NULL;
	_cleanup_(x509_freep) X509 *cert = NULL;
	uint8_t idc[IDC_LEN], *der = NULL, *cert_der = NULL, hdr[8] = { 0 };
	struct pe_image pe;
	size_t off = efi->len, table;
	int r, der_len = 0, cert_der_len;

	if ((r = pe_parse(efi->buf, efi->len, "uki", &pe, e)) < 0)
		return r;
	if (pe.cert_size || !pe.secdir_off || efi->len % 8)
		return ingot_fail(e, -EINVAL, "uki: expected an unsigned image of 8-aligned length with a certificate "
				  "table entry, got %s", pe.cert_size ? "a signed one" : "another");
	if ((r = load_pair(key_pem, key_len, cert_pem, cert_len, field, &key, &cert, e)) < 0)
		return r;
	memcpy(idc, idc_head, sizeof(idc_head));
	if ((r = authenticode_digest(efi->buf, efi->len, "uki", EVP_sha256(), idc + sizeof(idc_head), e)) < 0 ||
	    (r = sign_idc(idc, key, cert, field, &der, &der_len, e)) < 0)
		return r;
	if ((cert_der_len = i2d_X509(cert, &cert_der)) <= 0) {
		OPENSSL_free(der);
		return ossl_fail(e, field, "cert: cannot encode");
	}
	sha256_buf(cert_der, (size_t)cert_der_len, cert_sha256);
	OPENSSL_free(cert_der);

	/* WIN_CERTIFICATE {dwLength, wRevision, wCertificateType, bCertificate},
	 * the table padded to 8 bytes; the data directory entry holds its file
	 * offset and padded size, as sbsign writes it. */
	table = (8 + (size_t)der_len + 7) / 8 * 8;
	if (off + table > UINT32_MAX) {
		OPENSSL_free(der);
		return ingot_fail(e, -EFBIG, "uki: expected a signed image under 4 GiB");
	}
	le_put(hdr, 8 + (uint64_t)der_len, 4);
	le_put(hdr + 4, WIN_CERT_REVISION_2_0, 2);
	le_put(hdr + 6, WIN_CERT_TYPE_PKCS_SIGNED_DATA, 2);
	strbuf_add(efi, hdr, sizeof(hdr));
	strbuf_add(efi, der, (size_t)der_len);
	OPENSSL_free(der);
	while (efi->len < off + table)
		strbuf_addch(efi, 0);
	le_put((uint8_t *)efi->buf + pe.secdir_off, off, 4);
	le_put((uint8_t *)efi->buf + pe.secdir_off + 4, table, 4);
	le_put((uint8_t *)efi->buf + pe.checksum_off,
	       pe_checksum((const uint8_t *)efi->buf, efi->len, pe.checksum_off), 4);
	return 0;
}
