/* TPM2_Quote: the producing side of quote.h. */
#include "attest/tpm-private.h"

#include <stdlib.h>
#include <string.h>
#include <tss2/tss2_mu.h>

#include "attest/quote.h"
#include "lib/cleanup.h"

#define QUOTE_TRIES 3

/* The hash of the signature: the one pcrDigest was computed with. */
static uint16_t sig_hash(const TPMT_SIGNATURE *s)
{
	switch (s->sigAlg) {
	case TPM2_ALG_ECDSA: return s->signature.ecdsa.hash;
	case TPM2_ALG_RSASSA: return s->signature.rsassa.hash;
	case TPM2_ALG_RSAPSS: return s->signature.rsapss.hash;
	}
	return TPM2_ALG_NULL;
}

int tpm_quote(struct tpm *t, const char *ak_dir, const uint8_t *nonce, size_t nonce_len,
	      const struct pcr_selection *sel, json_t **out, ingot_error *e)
{
	ESYS_TR primary = ESYS_TR_NONE, ak = ESYS_TR_NONE;
	_cleanup_free_ char *pem = NULL;
	TPML_PCR_SELECTION tsel;
	TPMT_SIG_SCHEME scheme = { .scheme = TPM2_ALG_NULL };
	TPM2B_DATA qual = { 0 };
	int r;

	*out = NULL;
	if (nonce_len == 0 || nonce_len > TPM_NONCE_MAX)
		return ingot_fail(e, -EINVAL, "quote: nonce: expected 1-%d bytes, got %zu", TPM_NONCE_MAX, nonce_len);
	qual.size = (UINT16)nonce_len;
	memcpy(qual.buffer, nonce, nonce_len);
	tpm_selection_to_tpml(sel, &tsel);
	r = tpm_ak_load(t, ak_dir, &primary, &ak, &pem, e);
	if (r < 0)
		return r;
	/* The parent is not needed once the AK is loaded. */
	tpm_flush(t, &primary);

	r = -EAGAIN;
	for (int attempt = 0; attempt < QUOTE_TRIES && r == -EAGAIN; attempt++) {
		TPM2B_ATTEST *quoted = NULL;
		TPMT_SIGNATURE *sig = NULL;
		TPMS_ATTEST a;
		struct pcr_values values;
		uint8_t sigbuf[sizeof(TPMT_SIGNATURE)], digest[BANK_MAX_DIGEST];
		size_t sig_len = 0, off = 0, dlen;
		TSS2_RC rc;

		rc = Esys_Quote(t->esys, ak, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &qual, &scheme,
				&tsel, &quoted, &sig);
		if (rc != TSS2_RC_SUCCESS) {
			r = tpm_fail(e, rc, "TPM %s: quote failed", t->conf);
			break;
		}
		memset(&a, 0, sizeof(a));
		if (Tss2_MU_TPMS_ATTEST_Unmarshal(quoted->attestationData, quoted->size, &off, &a) != TSS2_RC_SUCCESS ||
		    Tss2_MU_TPMT_SIGNATURE_Marshal(sig, sigbuf, sizeof(sigbuf), &sig_len) != TSS2_RC_SUCCESS) {
			r = ingot_fail(e, -EPROTO, "TPM %s: quote: cannot parse the TPM's TPMS_ATTEST or TPMT_SIGNATURE", t->conf);
		} else if ((r = tpm_pcr_read(t, sel, &values, e)) >= 0) {
			/* A PCR extended between quote and read makes the values
			 * disagree with pcrDigest; quote again. */
			if (quote_pcr_digest(&values, sel, sig_hash(sig), digest, &dlen) < 0) {
				r = ingot_fail(e, -EPROTO, "TPM %s: quote: signature hash 0x%x is not a known bank", t->conf, sig_hash(sig));
			} else if (a.attested.quote.pcrDigest.size != dlen ||
				   memcmp(a.attested.quote.pcrDigest.buffer, digest, dlen)) {
				r = ingot_fail(e, -EAGAIN, "TPM %s: quote: PCRs kept changing while quoting (%d tries)",
					       t->conf, QUOTE_TRIES);
			} else {
				*out = quote_document(quoted->attestationData, quoted->size, sigbuf, sig_len,
						      &values, pem, nonce, nonce_len);
				r = *out ? 0 : ingot_fail(e, -ENOMEM, "out of memory");
			}
		}
		Esys_Free(quoted);
		Esys_Free(sig);
	}
	tpm_flush(t, &ak);
	return r;
}
