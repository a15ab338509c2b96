/* Where a quote is judged: quote + nonce + event log + expected PCRs ->
 * one verdict (enum attest_verdict) and its reason.  `ingot attest
 * verify-quote`, `ingot attest eventlog --against`, `ingot verify` and
 * `ingot audit` all call attest_judge, so they refuse the same evidence
 * under the same name.
 *
 * The nonce rule, one for all of them (the strictest of the three that
 * were): the verifier's nonce is 8-64 bytes of hex (nonce_decode, by
 * whoever assembles the inputs, once), and the signed extraData and the document's "nonce" must both equal it,
 * byte for byte.  A verifier that issued no nonce cannot know the quote
 * is fresh: the quote's own nonce is then checked for consistency only,
 * and the evidence is weak ("no-nonce"), as is a quote with empty
 * qualifying data.  A signature over a SHA-1 digest is weak too
 * ("sha1-signature").  Weak evidence is refused unless the caller
 * accepts that weakness by name. */
#ifndef INGOT_ATTEST_JUDGE_H
#define INGOT_ATTEST_JUDGE_H

#include <jansson.h>

#include "attest/eventlog.h"
#include "attest/nonce.h"
#include "attest/pcrs.h"
#include "attest/quote.h"
#include "lib/err.h"

struct attest_expect {
	const struct nonce *nonce;           /* the verifier's nonce, decoded; NULL: none issued (weak) */
	const char *ak_pem;                  /* trusted AK; NULL: the quote's own (consistency only) */
	const struct ak_key *ak;             /* ak_pem parsed (at load), or NULL: parsed per call */
	const struct pcr_selection *cover;   /* PCRs the quote must cover, or NULL */
	const struct pcr_values *expected;   /* values the quoted PCRs must have, or NULL */
	const struct eventlog *log;          /* must replay to the quoted PCRs, or NULL */
	const struct pcr_selection *log_sel; /* PCRs to compare; NULL: those the log extends,
					      * of which the quote must cover one */
	int log_quoted;                      /* compare every quoted PCR instead of log_sel */
	const char *seen_nonces;             /* refuse a nonce listed there, record an accepted one ... */
	int seen_check_only;                 /* ... or only refuse it: the caller records it once it
					      * accepts more than the quote (attest_seen_nonce) */
	unsigned accept_weak;                /* enum attest_weakness bits policy accepts */
	struct ak_cache *aks;                /* parsed AKs to reuse (this thread's), or NULL */
};

/* Judge a quote document.  0 when every check passes; otherwise a
 * negative code, out->reason the verdict and e the reason, one line.
 * out always gets what was learned (the AK's id once ak_pub parses, the
 * weaknesses, the proven PCRs once the quote verifies).  Checks run in
 * this order: seen nonce, quote (signature, header, nonce, PCR digest),
 * coverage, expected values, event log, weakness policy; the nonce is
 * recorded last (unless x->seen_check_only), so a refused quote never
 * uses it up. */
int attest_judge(const json_t *quote, const struct attest_expect *x, struct quote_info *out, ingot_error *e);

/* The seen-nonce rule (attest/nonce.h), written once for attest_judge
 * and the boot verdict: with x->seen_nonces and x->nonce, check that the
 * nonce is not listed (record 0) or record it (record 1); without either,
 * nothing.  0, or the negative code with *why VERDICT_NONCE_REUSED (it
 * is listed) or VERDICT_NOT_MADE (the file could not be read or written:
 * the check was not made). */
int attest_seen_nonce(const struct attest_expect *x, int record, enum attest_verdict *why, ingot_error *e);

/* "sha1-signature,no-nonce" for the weakness bits (empty for none). */
void attest_weakness_format(unsigned weak, struct strbuf *out);

#endif
