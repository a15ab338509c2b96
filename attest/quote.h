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
#include "lib/digest.h"
#include "lib/err.h"

#define QUOTE_FORMAT "ingot.quote/v1"

/* The outcome of judging attestation evidence (attest/judge.h), and of
 * its first part, the quote check: one enum, so every command reports a
 * refusal under the same name (attest_verdict_name). */
enum attest_verdict {
	VERDICT_OK = 0,
	VERDICT_MALFORMED,      /* document, TPMS_ATTEST or TPMT_SIGNATURE does not parse */
	VERDICT_BAD_SIGNATURE,  /* not signed by the AK (or a byte was changed) */
	VERDICT_WRONG_AK,       /* the quote's AK is not the trusted one */
	VERDICT_NOT_QUOTE,      /* magic is not TPM_GENERATED_VALUE or type not ATTEST_QUOTE */
	VERDICT_NONCE,          /* extraData differs from the expected nonce */
	VERDICT_PCR_SELECTION,  /* quoted selection differs from the reported PCRs */
	VERDICT_PCR_DIGEST,     /* reported PCR values do not hash to pcrDigest */
	VERDICT_NONCE_REUSED,   /* the nonce is in the seen-nonces file */
	VERDICT_NOT_COVERED,    /* the quote lacks PCRs the verifier requires */
	VERDICT_LOG_MISMATCH,   /* the event log does not replay to the quoted PCRs */
	VERDICT_PCR_UNEXPECTED, /* a quoted PCR differs from the expected value */
	VERDICT_WEAK,           /* valid, but weak evidence policy did not accept */
	VERDICT_NOT_MADE,       /* a check could not be made (unreadable seen-nonces file) */
};

/* Weaknesses of a valid quote (quote_info.weak), refused by policy
 * unless accepted (attest/judge.h). */
enum attest_weakness {
	WEAK_SHA1_SIGNATURE = 1u << 0,  /* signed over a SHA-1 digest */
	WEAK_NO_NONCE = 1u << 1,        /* empty qualifying data: no freshness */
	/* Of a measured boot (attest/verdict.h): */
	WEAK_SECURE_BOOT_UNJUDGED = 1u << 2,  /* manifest names no Secure Boot signer: PCR 7 not judged */
	WEAK_UNKNOWN_FIRMWARE = 1u << 3,      /* no firmware reference: PCRs 0, 2 (and PCR 7 keys) not judged */
	WEAK_LAST = WEAK_UNKNOWN_FIRMWARE,
};

struct quote_info {
	enum attest_verdict reason;
	unsigned weak;            /* enum attest_weakness bits */
	char ak_id[SHA256_HEX_LEN + 1];  /* sha256 of the AK's DER SubjectPublicKeyInfo ("" unparsed) */
	uint64_t clock;
	uint32_t reset_count;
	uint32_t restart_count;
	int safe;
	uint64_t firmware_version;
	struct pcr_values pcrs;   /* the reported values, now proven */
};

const char *attest_verdict_name(enum attest_verdict r);
/* "sha1-signature", "no-nonce" for one weakness bit. */
const char *attest_weakness_name(unsigned bit);
/* A comma-separated list of weakness names into out. */
int attest_weakness_parse(const char *list, unsigned *out, ingot_error *e);

/* Check a quote document: the signature by the AK (trusted_ak_pem, or
 * when NULL the one in the quote) over the TPMS_ATTEST bytes, magic
 * TPM_GENERATED_VALUE, type TPM_ST_ATTEST_QUOTE, extraData == nonce (and
 * the document's "nonce"; nonce_len 0 expects empty qualifying data), the
 * quoted PCR selection == the reported PCRs, and the PCR digest
 * recomputed from the reported values with the signature's hash.  A
 * SHA-1 signature or an empty nonce verifies like tpm2_checkquote, and
 * is flagged in out->weak for policy to judge.  out (may be NULL) gets
 * the AK's id, the clock info and PCRs; out->reason says which check
 * failed.  An ak_pub must be exactly one PEM PUBLIC KEY block. */
int quote_verify(const json_t *quote, const uint8_t *nonce, size_t nonce_len,
		 const char *trusted_ak_pem, struct quote_info *out, ingot_error *e);

/* Parsed AKs by their exact PEM text, for a verifier that meets the
 * same few AKs in many quotes (`ingot audit`): OpenSSL's PEM decoder
 * costs several times the signature check.  Used by one thread at a
 * time; the verdicts are those of quote_verify. */
struct ak_cache;
struct ak_cache *ak_cache_new(void);
void ak_cache_free(struct ak_cache *c);
/* quote_verify with the AKs taken from cache (NULL: parsed each call). */
int quote_verify_cached(const json_t *quote, const uint8_t *nonce, size_t nonce_len,
			const char *trusted_ak_pem, struct ak_cache *cache, struct quote_info *out,
			ingot_error *e);

/* An AK's public key parsed once, for a verifier that holds its enrolled
 * AKs (verify/boot-inputs.h parses each record's at load): exactly one
 * PEM PUBLIC KEY block, as quote_verify reads a trusted AK, else -EBADMSG.
 * Read-only once parsed, so threads may share it. */
struct ak_key;
int ak_key_parse(const char *pem, struct ak_key **out, ingot_error *e);
void ak_key_free(struct ak_key *k);
static inline void ak_key_freep(struct ak_key **k) { ak_key_free(*k); }
#define _cleanup_ak_key_ __attribute__((cleanup(ak_key_freep)))
/* Its id, as attest_ak_id_pem gives it. */
const char *ak_key_id(const struct ak_key *k);
/* The one quote check behind quote_verify and quote_verify_cached: the
 * trusted AK is trusted when given (trusted_ak_pem, its text, is then
 * unused), else trusted_ak_pem parsed now, else the quote's own.  A
 * quote whose ak_pub is the trusted AK's exact text is not parsed again. */
int quote_verify_key(const json_t *quote, const uint8_t *nonce, size_t nonce_len, const struct ak_key *trusted,
		     const char *trusted_ak_pem, struct ak_cache *cache, struct quote_info *out, ingot_error *e);

/* The id quote_info.ak_id reports for an AK given as PEM (exactly one
 * PUBLIC KEY block, read as quote_verify reads a trusted AK): the sha256
 * hex of its DER SubjectPublicKeyInfo.  -EBADMSG when it does not parse.
 * Enrolment records (keys/enrolment.h) name AKs by it. */
int attest_ak_id_pem(const char *pem, char out[SHA256_HEX_LEN + 1], ingot_error *e);

/* Assemble a quote document from the TPM's marshalled outputs. */
json_t *quote_document(const uint8_t *attest, size_t attest_len, const uint8_t *sig, size_t sig_len,
		       const struct pcr_values *pcrs, const char *ak_pem,
		       const uint8_t *nonce, size_t nonce_len);

/* The digest TPM2_Quote computes over sel's PCRs: H(values in selection
 * order), H the bank named by hash_alg.  out gets the bank's size. */
int quote_pcr_digest(const struct pcr_values *v, const struct pcr_selection *sel,
		     uint16_t hash_alg, uint8_t *out, size_t *out_len);

#endif
