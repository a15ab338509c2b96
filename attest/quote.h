/* Quote documents and their offline verification (OpenSSL and tss2-mu
 * only; no TPM needed).  A quote document is JSON:
 *   {"format": "ingot.quote/v1",
 *    "nonce": "<hex>",
 *    "attest": "<base64 of the marshalled TPMS_ATTEST, as the TPM returned it>",
 *    "signature": "<base64 of the marshalled TPMT_SIGNATURE>",
 *    "pcrs": {"sha256": {"0": "<hex>", ...}, ...},
 *    "ak_pub": "<PEM SubjectPublicKeyInfo of the AK>"} */
#ifndef INGOT_ATTEST_QUOTE_H
#define INGOT_ATTEST_QUOTE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "attest/pcrs.h"
#include "lib/err.h"

#define QUOTE_FORMAT "ingot.quote/v1"

/* Why a quote was refused (quote_info.reason, also when verification fails). */
enum quote_reason {
	QUOTE_OK = 0,
	QUOTE_MALFORMED,      /* document, TPMS_ATTEST or TPMT_SIGNATURE does not parse */
	QUOTE_BAD_SIGNATURE,  /* not signed by the AK (or a byte was changed) */
	QUOTE_WRONG_AK,       /* the quote's AK is not the trusted one */
	QUOTE_NOT_QUOTE,      /* magic is not TPM_GENERATED_VALUE or type not ATTEST_QUOTE */
	QUOTE_NONCE,          /* extraData differs from the expected nonce */
	QUOTE_PCR_SELECTION,  /* quoted selection differs from the reported PCRs */
	QUOTE_PCR_DIGEST,     /* reported PCR values do not hash to pcrDigest */
};

struct quote_info {
	enum quote_reason reason;
	uint64_t clock;
	uint32_t reset_count;
	uint32_t restart_count;
	int safe;
	uint64_t firmware_version;
	struct pcr_values pcrs;   /* the reported values, now proven */
};

const char *quote_reason_name(enum quote_reason r);

/* Check a quote document: the signature by the AK (trusted_ak_pem, or
 * when NULL the one in the quote) over the TPMS_ATTEST bytes, magic
 * TPM_GENERATED_VALUE, type TPM_ST_ATTEST_QUOTE, extraData == nonce (and
 * the document's "nonce"), the quoted PCR selection == the reported
 * PCRs, and the PCR digest recomputed from the reported values with the
 * signature's hash.  out (may be NULL) gets the clock info and PCRs;
 * out->reason says which check failed. */
int quote_verify(const json_t *quote, const uint8_t *nonce, size_t nonce_len,
		 const char *trusted_ak_pem, struct quote_info *out, ingot_error *e);

/* Assemble a quote document from the TPM's marshalled outputs. */
json_t *quote_document(const uint8_t *attest, size_t attest_len, const uint8_t *sig, size_t sig_len,
		       const struct pcr_values *pcrs, const char *ak_pem,
		       const uint8_t *nonce, size_t nonce_len);

/* The digest TPM2_Quote computes over sel's PCRs: H(values in selection
 * order), H the bank named by hash_alg.  out gets the bank's size. */
int quote_pcr_digest(const struct pcr_values *v, const struct pcr_selection *sel,
		     uint16_t hash_alg, uint8_t *out, size_t *out_len);

#endif
