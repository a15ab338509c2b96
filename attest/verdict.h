/* The measured-boot verdict, in one place: `ingot attest boot-check`,
 * `ingot verify` (its TPM check) and `ingot audit` call attest_boot_verdict
 * and nothing else, so they admit and refuse the same evidence under the
 * same words.  A pure function: no TPM, no files (but the seen-nonces
 * file); docs/attest.md "Measured boot" and "Threat model".
 *
 * Judged only by what the TPM proves.  A quote proves PCR values, signed
 * by an AK; enrolment (keys/enrolment.h) proves that AK lives in a genuine
 * TPM.  The event log proves nothing by itself: it counts only as far as
 * it replays to quoted PCRs, and each event counts only by its digest
 * (types and descriptions are the log writer's words).  In order:
 *   1. quote: signature by the enrolled AK (never the one the evidence
 *      carries), the verifier's nonce (not seen before), coverage of
 *      sha256 PCRs 0,2,4,7,9,11,12,15 (attest/judge.h);
 *   2. the log replays to every quoted firmware PCR (0,2,4,7,9,11,12),
 *      once, and every event whose digest the TCG PC Client spec defines
 *      as the hash of its data carries data that hashes to it (a forged
 *      event's data is refused, not read);
 *   3. PCR 4: every event allowed by its digest: the separator, the
 *      known EV_EFI_ACTION strings, and exactly the boot applications
 *      predicted: the manifest's UKI, then its kernel;
 *   4. PCR 7: with boot.secure_boot in the manifest, SecureBoot=1, the
 *      UKI verified by the manifest's signer certificate, and the Secure
 *      Boot variables (PK, KEK, db, dbx, ...) equal to the platform's
 *      firmware reference; without it, the named weakness
 *      "secure-boot-unjudged";
 *   5. PCRs 0 and 2 equal the firmware reference (attest/firmware-ref.h);
 *      none given: the named weakness "unknown-firmware";
 *   6. PCR 11 = the manifest's prediction, PCR 12 at reset, PCR 15 = one
 *      extend with the image's event;
 *   7. the AK is enrolled (for this node when both are known): without an
 *      enrolled AK, evidence that passes everything else is "unverified",
 *      never admitted.
 * A weakness is refused unless the caller accepts it by name; an accepted
 * one admits and is named in the reason.  The nonce is recorded in the
 * seen-nonces file only for an admitted boot. */
#ifndef INGOT_ATTEST_VERDICT_H
#define INGOT_ATTEST_VERDICT_H

#include <jansson.h>

#include "lib/boot-contract.h"
#include "attest/eventlog.h"
#include "attest/firmware-ref.h"
#include "attest/nonce.h"
#include "attest/pcrs.h"
#include "attest/quote.h"
#include "lib/boot-prediction.h"
#include "lib/err.h"

/* The PCRs a boot quote must cover (sha256 bank), and of them the ones
 * the firmware's log extends (PCR 15 is the init's, outside that log). */
#define BOOT_LOG_PCR_MASK                                                                        \
	(1u << BOOT_PCR_FIRMWARE | 1u << BOOT_PCR_OPTION_ROMS | 1u << BOOT_PCR_FIRMWARE_APP |   \
	 1u << BOOT_PCR_SECURE_BOOT | 1u << BOOT_PCR_CMDLINE_EFI | 1u << BOOT_PCR_UKI |          \
	 1u << BOOT_PCR_CMDLINE)
#define BOOT_QUOTE_PCR_MASK (BOOT_LOG_PCR_MASK | 1u << BOOT_PCR_IMAGE)
/* The same as text, for messages and --pcrs. */
#define BOOT_QUOTE_PCRS "sha256:0,2,4,7,9,11,12,15"

/* The AK an enrolment record vouches for (keys/enrolment.h), as data. */
struct enrolled_ak {
	const char *pem;     /* the AK's public key (PEM SubjectPublicKeyInfo) */
	const char *ak_id;   /* sha256 hex of its DER SPKI */
	const char *node;    /* the node it was enrolled for ("" or NULL: any) */
	const struct ak_key *key;   /* pem, parsed when the record was loaded; NULL: parsed per verdict */
};

struct boot_evidence {
	const json_t *quote;               /* the quote document (attest/quote.h) */
	const struct eventlog *log;        /* the firmware's event log */
	const struct nonce *nonce;         /* the verifier's nonce, decoded once (attest/nonce.h); NULL: none (weak) */
	const char *seen_nonces;           /* refuse a listed nonce, record an admitted one */
	const struct enrolled_ak *ak;      /* NULL: none enrolled (never admitted) */
	const char *node;                  /* the node the evidence is from, or NULL */
	const struct boot_prediction *boot;   /* a verified manifest's (manifest/typed.h), or NULL */
	const struct firmware_ref *fw;     /* the platform's reference, or NULL (unknown) */
	unsigned accept_weak;              /* enum attest_weakness bits accepted by name */
	struct ak_cache *aks;              /* parsed AKs to reuse (attest/quote.h), or NULL */
};

enum boot_verdict {
	BOOT_ADMIT = 0,
	BOOT_REFUSE,      /* the evidence contradicts the manifest, reference or enrolment */
	BOOT_UNVERIFIED,  /* consistent, but nothing proves the AK is a TPM's */
	BOOT_NOT_MADE,    /* a check could not be made (missing prediction, unreadable file) */
};

struct boot_result {
	enum boot_verdict verdict;
	/* The quote check's outcome (VERDICT_OK once it passed). */
	enum attest_verdict quote_reason;
	struct quote_info qi;      /* the quote's AK id, weaknesses, proven PCRs */
	unsigned weak;             /* every weakness found (quote and boot) */
	int code;                  /* 0 or the negative errno behind the verdict */
	char reason[INGOT_ERR_MSG];   /* one line; for BOOT_ADMIT a summary */
};

/* Judge ev; out always filled.  Returns out->verdict. */
enum boot_verdict attest_boot_verdict(const struct boot_evidence *ev, struct boot_result *out);

const char *boot_verdict_name(enum boot_verdict v);

/* The check of item 2 alone, for `ingot attest eventlog`: every event
 * whose digest is defined as the hash of its data carries such data.
 * 0, or -EBADMSG naming the event. */
int eventlog_check_data(const struct eventlog *log, ingot_error *e);

#endif
