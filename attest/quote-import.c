#include "attest/quote-import.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <tss2/tss2_mu.h>

#include "attest/pcrs.h"
#include "attest/quote.h"
#include "attest/tpm-private.h"
#include "lib/cleanup.h"
#include "lib/json.h"

/* tpm2-tools' serialized PCR file (lib/pcr.c pcr_fwrite_serialized): the
 * TPML_PCR_SELECTION and then a UINT32 count of TPML_DIGESTs, each dumped
 * as the C structs are laid out.  Its digests, in
 * order, are what the values form holds; the selection in front is the
 * TPMS_ATTEST's own, read from there instead. */
#define SER_SELECTION sizeof(TPML_PCR_SELECTION)
#define SER_DIGESTS sizeof(TPML_DIGEST)

/* tpm2-tools 5 writes these integers in host order (little-endian on
 * the machines it runs on), earlier releases big-endian: the file's own
 * length says which. */
static uint32_t u32(const uint8_t *p, bool be)
{
	return be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
		  : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* The digests of a serialized file, concatenated into out (want bytes). */
static int serialized_values(const uint8_t *p, size_t len, uint8_t *out, size_t want)
{
	size_t n, used = 0;
	bool be;

	if (len < SER_SELECTION + 4)
		return -EINVAL;
	be = u32(p + SER_SELECTION, false) > 64;
	n = u32(p + SER_SELECTION, be);
	if (n > 64 || len != SER_SELECTION + 4 + n * SER_DIGESTS)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *l = p + SER_SELECTION + 4 + i * SER_DIGESTS;
		uint32_t count = u32(l, be);
		const uint8_t *d = l + offsetof(TPML_DIGEST, digests);

		if (count > ARRAY_SIZE(((TPML_DIGEST *)0)->digests))
			return -EINVAL;
		for (uint32_t k = 0; k < count; k++, d += sizeof(TPM2B_DIGEST)) {
			size_t sz = be ? (size_t)d[0] << 8 | d[1] : (size_t)d[1] << 8 | d[0];
			if (sz > sizeof(((TPM2B_DIGEST *)0)->buffer) || used + sz > want)
				return -EINVAL;
			memcpy(out + used, d + offsetof(TPM2B_DIGEST, buffer), sz);
			used += sz;
		}
	}
	return used == want ? 0 : -EINVAL;
}

/* The quoted selection's values from the PCR file, in TPM order: banks as
 * the TPMS_ATTEST lists them, PCRs ascending. */
static int pcr_values(const struct quote_import_files *in, const TPMS_ATTEST *a, struct pcr_values *v,
		      ingot_error *e)
{
	const TPML_PCR_SELECTION *sel = &a->attested.quote.pcrSelect;
	uint8_t flat[BANK_COUNT * PCR_COUNT * BANK_MAX_DIGEST];
	const uint8_t *src = in->pcrs;
	size_t want = 0, off = 0;

	memset(v, 0, sizeof(*v));
	for (UINT32 i = 0; i < sel->count; i++) {
		const struct bank *b = bank_by_alg(sel->pcrSelections[i].hash);
		if (!b || !pcr_values_bank(v, b->alg, 1) || pcr_values_bank(v, b->alg, 0)->mask)
			return ingot_fail(e, -EBADMSG, "%s: PCR selection %u: expected a known bank once, got hash 0x%x",
					  in->msg_name, i, sel->pcrSelections[i].hash);
		for (unsigned p = 0; p < 8u * sel->pcrSelections[i].sizeofSelect && p < PCR_COUNT; p++)
			if (sel->pcrSelections[i].pcrSelect[p / 8] & (1u << (p % 8))) {
				pcr_values_bank(v, b->alg, 0)->mask |= 1u << p;
				want += b->size;
			}
	}
	if (in->pcrs_len != want) {
		if (serialized_values(in->pcrs, in->pcrs_len, flat, want) < 0)
			return ingot_fail(e, -EBADMSG, "%s: expected the quoted PCRs' values (%zu bytes, tpm2_quote -F values) or tpm2-tools' serialized form, got %zu bytes",
					  in->pcrs_name, want, in->pcrs_len);
		src = flat;
	}
	for (size_t i = 0; i < v->nbanks; i++)
		for (unsigned p = 0; p < PCR_COUNT; p++)
			if (v->banks[i].mask & (1u << p)) {
				memcpy(v->banks[i].value[p], src + off, v->banks[i].bank->size);
				off += v->banks[i].bank->size;
			}
	return 0;
}

/* PEM of the AK: a PEM file as it is, or a marshalled TPM2B_PUBLIC. */
static int ak_pem(const struct quote_import_files *in, char **pem, ingot_error *e)
{
	static const char begin[] = "-----BEGIN PUBLIC KEY-----";
	TPM2B_PUBLIC pub;
	size_t off = 0;

	if (in->ak_len >= sizeof(begin) - 1 && !memcmp(in->ak, begin, sizeof(begin) - 1)) {
		*pem = strndup((const char *)in->ak, in->ak_len);
		return *pem ? 0 : ingot_fail(e, -ENOMEM, "out of memory");
	}
	memset(&pub, 0, sizeof(pub));
	if (Tss2_MU_TPM2B_PUBLIC_Unmarshal(in->ak, in->ak_len, &off, &pub) != TSS2_RC_SUCCESS || off != in->ak_len)
		return ingot_fail(e, -EBADMSG, "%s: expected a PEM public key or a marshalled TPM2B_PUBLIC (tpm2_readpublic -o), got %zu bytes that are neither",
				  in->ak_name, in->ak_len);
	return tpm_public_pem(&pub.publicArea, pem, e);
}

int quote_import(const struct quote_import_files *in, json_t **out, ingot_error *e)
{
	_cleanup_free_ char *pem = NULL;
	_cleanup_json_ json_t *doc = NULL;
	struct pcr_values v;
	TPMS_ATTEST a;
	TPMT_SIGNATURE s;
	size_t off = 0;
	int r;

	*out = NULL;
	memset(&a, 0, sizeof(a));
	if (Tss2_MU_TPMS_ATTEST_Unmarshal(in->msg, in->msg_len, &off, &a) != TSS2_RC_SUCCESS || off != in->msg_len ||
	    a.type != TPM2_ST_ATTEST_QUOTE)
		return ingot_fail(e, -EBADMSG, "%s: expected a TPMS_ATTEST of a quote (tpm2_quote -m), got %zu bytes that are not one",
				  in->msg_name, in->msg_len);
	off = 0;
	if (Tss2_MU_TPMT_SIGNATURE_Unmarshal(in->sig, in->sig_len, &off, &s) != TSS2_RC_SUCCESS || off != in->sig_len)
		return ingot_fail(e, -EBADMSG, "%s: expected a marshalled TPMT_SIGNATURE (tpm2_quote -s, tss format), got %zu bytes that are not one",
				  in->sig_name, in->sig_len);
	if ((r = pcr_values(in, &a, &v, e)) < 0 || (r = ak_pem(in, &pem, e)) < 0)
		return r;
	doc = quote_document(in->msg, in->msg_len, in->sig, in->sig_len, &v, pem, a.extraData.buffer, a.extraData.size);
	if (!doc)
		return ingot_fail(e, -ENOMEM, "out of memory");
	/* The pieces must belong together: signed by this AK, these values
	 * hashing to the signed digest.  Nonce and AK trust are the verifier's. */
	if ((r = quote_verify(doc, a.extraData.buffer, a.extraData.size, NULL, NULL, e)) < 0)
		return r;
	*out = TAKE_PTR(doc);
	return 0;
}
