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
#include "lib/xalloc.h"

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

#define SER_PCRSEL offsetof(TPML_PCR_SELECTION, pcrSelections)
#define SER_PCRSEL_ONE sizeof(TPMS_PCR_SELECTION)
#define SER_DIGEST_ONE sizeof(TPM2B_DIGEST)
#define SER_DIGESTS_PER_LIST ARRAY_SIZE(((TPML_DIGEST *)0)->digests)

static bool serialized_shape(size_t len)
{
	return len >= SER_SELECTION + 4 && (len - SER_SELECTION - 4) % SER_DIGESTS == 0;
}

/* The digests of a serialized file, concatenated into out: one per
 * selected PCR, each of its bank's size (sizes[], n of them).  Every
 * count the file holds must fit what it counts: its selection must be
 * the TPMS_ATTEST's (sel), its lists must hold the file's bytes. */
static int serialized_values(const struct quote_import_files *in, const TPML_PCR_SELECTION *sel,
			     const uint8_t *sizes, size_t n, uint8_t *out, ingot_error *e)
{
	const uint8_t *p = in->pcrs;
	size_t lists, k = 0, used = 0;
	uint32_t nsel;
	bool be;

	be = u32(p + SER_SELECTION, false) > 64;
	lists = u32(p + SER_SELECTION, be);
	if (lists > 64 || in->pcrs_len != SER_SELECTION + 4 + lists * SER_DIGESTS)
		return ingot_fail(e, -EBADMSG, "%s: TPML_DIGEST count: expected the %zu lists the file's %zu bytes hold, got %zu",
				  in->pcrs_name, (in->pcrs_len - SER_SELECTION - 4) / SER_DIGESTS, in->pcrs_len, lists);
	nsel = u32(p, be);
	if (nsel != sel->count)
		return ingot_fail(e, -EBADMSG, "%s: TPML_PCR_SELECTION count: expected %u (the quote's selection), got %u",
				  in->pcrs_name, sel->count, nsel);
	for (uint32_t i = 0; i < nsel; i++) {
		const uint8_t *q = p + SER_PCRSEL + i * SER_PCRSEL_ONE;
		const TPMS_PCR_SELECTION *want = &sel->pcrSelections[i];
		uint16_t hash = be ? (uint16_t)(q[0] << 8 | q[1]) : (uint16_t)(q[1] << 8 | q[0]);
		uint8_t size = q[offsetof(TPMS_PCR_SELECTION, sizeofSelect)];

		if (hash != want->hash || size != want->sizeofSelect || size > sizeof(want->pcrSelect) ||
		    memcmp(q + offsetof(TPMS_PCR_SELECTION, pcrSelect), want->pcrSelect, size))
			return ingot_fail(e, -EBADMSG, "%s: TPML_PCR_SELECTION entry %u: expected the quote's (hash 0x%x, %u bytes of PCR bits), got hash 0x%x, %u bytes that differ",
					  in->pcrs_name, i, want->hash, want->sizeofSelect, hash, size);
	}
	for (size_t i = 0; i < lists; i++) {
		const uint8_t *l = p + SER_SELECTION + 4 + i * SER_DIGESTS;
		uint32_t count = u32(l, be);
		const uint8_t *d = l + offsetof(TPML_DIGEST, digests);

		if (count == 0 || count > SER_DIGESTS_PER_LIST || count > n - k)
			return ingot_fail(e, -EBADMSG, "%s: TPML_DIGEST %zu: count: expected 1 to %zu (of the %zu quoted PCRs left), got %u",
					  in->pcrs_name, i, n - k < SER_DIGESTS_PER_LIST ? n - k : SER_DIGESTS_PER_LIST,
					  n - k, count);
		for (uint32_t c = 0; c < count; c++, d += SER_DIGEST_ONE, k++) {
			size_t sz = be ? (size_t)d[0] << 8 | d[1] : (size_t)d[1] << 8 | d[0];
			if (sz != sizes[k])
				return ingot_fail(e, -EBADMSG, "%s: TPML_DIGEST %zu: digest %u: expected %u bytes (its bank's), got %zu",
						  in->pcrs_name, i, c, sizes[k], sz);
			memcpy(out + used, d + offsetof(TPM2B_DIGEST, buffer), sz);
			used += sz;
		}
	}
	if (k != n)
		return ingot_fail(e, -EBADMSG, "%s: expected %zu digests (the quoted PCRs), got %zu", in->pcrs_name, n, k);
	return 0;
}

/* The quoted selection's values from the PCR file, in TPM order: banks as
 * the TPMS_ATTEST lists them, PCRs ascending. */
static int pcr_values(const struct quote_import_files *in, const TPMS_ATTEST *a, struct pcr_values *v,
		      ingot_error *e)
{
	const TPML_PCR_SELECTION *sel = &a->attested.quote.pcrSelect;
	uint8_t flat[BANK_COUNT * PCR_COUNT * BANK_MAX_DIGEST], sizes[BANK_COUNT * PCR_COUNT];
	const uint8_t *src = in->pcrs;
	size_t want = 0, off = 0, n = 0;
	int r;

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
				sizes[n++] = (uint8_t)b->size;
			}
	}
	if (in->pcrs_len != want) {
		if (!serialized_shape(in->pcrs_len))
			return ingot_fail(e, -EBADMSG, "%s: expected the quoted PCRs' values (%zu bytes, tpm2_quote -F values) or tpm2-tools' serialized form, got %zu bytes",
					  in->pcrs_name, want, in->pcrs_len);
		if ((r = serialized_values(in, sel, sizes, n, flat, e)) < 0)
			return r;
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
		*pem = xstrndup((const char *)in->ak, in->ak_len);
		return 0;
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
	if ((r = quote_verify(doc, a.extraData.buffer, a.extraData.size, NULL, NULL, e)) < 0) {
		/* Which file is the odd one out cannot be told: name them all. */
		ingot_prefix(e, "%s, %s, %s, %s", in->msg_name, in->sig_name, in->pcrs_name, in->ak_name);
		return r;
	}
	*out = TAKE_PTR(doc);
	return 0;
}
