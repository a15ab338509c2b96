/* The one attestation check (attest/judge.h). */
#include "attest/judge.h"

#include <string.h>

#include "attest/nonce.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/strbuf.h"

/* Name the check that failed; e already says why. */
static int verdict(struct quote_info *qi, enum attest_verdict why, int code)
{
	qi->reason = why;
	return code;
}

void attest_weakness_format(unsigned weak, struct strbuf *out)
{
	int n = 0;

	for (unsigned bit = 1; bit <= WEAK_LAST; bit <<= 1)
		if (weak & bit)
			strbuf_addf(out, "%s%s", n++ ? "," : "", attest_weakness_name(bit));
}

/* The nonce the quote is checked against: the verifier's, or without
 * one the quote's own claim (consistency only). */
static int pick_nonce(const json_t *quote, const struct attest_expect *x, uint8_t nonce[NONCE_MAX],
		      size_t *len, struct quote_info *qi, ingot_error *e)
{
	const char *claim;
	size_t n;

	if (x->nonce) {
		/* Decoded by nonce_decode; anything else is a caller's bug,
		 * refused rather than copied. */
		if (x->nonce->len < NONCE_MIN || x->nonce->len > NONCE_MAX)
			return verdict(qi, VERDICT_MALFORMED, ingot_fail(e, -EINVAL, "nonce: expected %d-%d bytes, got %zu",
									 NONCE_MIN, NONCE_MAX, x->nonce->len));
		memcpy(nonce, x->nonce->bytes, x->nonce->len);
		*len = x->nonce->len;
		return 0;
	}
	claim = json_string_value(json_object_get(quote, "nonce"));
	n = claim ? strlen(claim) : 0;
	if (!claim || n % 2 || n > 2 * NONCE_MAX || hex_decode(claim, nonce, n / 2) < 0)
		return verdict(qi, VERDICT_MALFORMED,
			       ingot_fail(e, -EBADMSG, "quote: nonce: expected 0-%d bytes in hex", NONCE_MAX));
	*len = n / 2;
	return 0;
}

int attest_seen_nonce(const struct attest_expect *x, int record, enum attest_verdict *why, ingot_error *e)
{
	int r;

	if (!x->seen_nonces || !x->nonce)
		return 0;
	r = record ? nonce_record(x->seen_nonces, x->nonce, e) : nonce_check_unseen(x->seen_nonces, x->nonce, e);
	if (r < 0)
		*why = r == -EEXIST ? VERDICT_NONCE_REUSED : VERDICT_NOT_MADE;
	return r;
}

/* The quote covers every PCR the verifier asked for. */
static int check_cover(const struct quote_info *qi, const struct pcr_selection *want, ingot_error *e)
{
	for (size_t i = 0; i < want->nbanks; i++) {
		const struct pcr_bank *pb = pcr_values_find(&qi->pcrs, want->banks[i].alg);
		uint32_t lack = want->banks[i].mask & ~(pb ? pb->mask : 0);

		if (lack) {
			_cleanup_strbuf_ struct strbuf w = STRBUF_INIT, m = STRBUF_INIT;
			struct pcr_selection l = { 0 };

			pcr_selection_add(&l, want->banks[i].alg, lack);
			pcr_selection_format(want, &w);
			pcr_selection_format(&l, &m);
			return ingot_fail(e, -EPERM, "quote: expected it to cover %s, got no %s", w.buf, m.buf);
		}
	}
	return 0;
}

/* Every expected value is quoted and equal. */
static int check_expected(const struct quote_info *qi, const struct pcr_values *want, ingot_error *e)
{
	for (size_t i = 0; i < want->nbanks; i++) {
		const struct pcr_bank *w = &want->banks[i];
		const struct pcr_bank *q = pcr_values_find(&qi->pcrs, w->bank->alg);

		for (unsigned p = 0; p < PCR_COUNT; p++) {
			char have[2 * BANK_MAX_DIGEST + 1] = "", exp[2 * BANK_MAX_DIGEST + 1];

			if (!(w->mask & (1u << p)))
				continue;
			if (q && (q->mask & (1u << p)) && !memcmp(q->value[p], w->value[p], w->bank->size))
				continue;
			if (q && (q->mask & (1u << p)))
				hex_encode(q->value[p], q->bank->size, have);
			hex_encode(w->value[p], w->bank->size, exp);
			return ingot_fail(e, -EPERM, "quote: PCR %u %s is %s, expected %s", p, w->bank->name,
					  have[0] ? have : "not quoted", exp);
		}
	}
	return 0;
}

/* Does the quote cover a PCR the log extends (in the same bank)? */
static int shares_extended_pcr(const struct pcr_values *replayed, const struct pcr_values *quoted)
{
	for (size_t i = 0; i < replayed->nbanks; i++) {
		const struct pcr_bank *q = pcr_values_find(quoted, replayed->banks[i].bank->alg);
		if (q && (q->mask & replayed->banks[i].mask))
			return 1;
	}
	return 0;
}

static int check_log(const struct quote_info *qi, const struct attest_expect *x, ingot_error *e)
{
	const struct eventlog *log = x->log;
	const struct pcr_selection *sel = x->log_sel;
	struct pcr_selection quoted;
	struct pcr_values replayed;
	int r;

	if (x->log_quoted) {
		pcr_values_selection(&qi->pcrs, &quoted);
		sel = &quoted;
	} else if (!sel) {
		if ((r = eventlog_replay(log, &replayed, e)) < 0)
			return r;
		if (!shares_extended_pcr(&replayed, &qi->pcrs))
			return ingot_fail(e, -EBADMSG, "%s: nothing to compare: the log extends no PCR the quote covers",
					  log->name);
	}
	return eventlog_compare(log, &qi->pcrs, sel, e);
}

static int check_weak(const struct quote_info *qi, unsigned accept, ingot_error *e)
{
	_cleanup_strbuf_ struct strbuf w = STRBUF_INIT;
	unsigned refused = qi->weak & ~accept;

	if (!refused)
		return 0;
	attest_weakness_format(refused, &w);
	return ingot_fail(e, -EPERM, "quote: weak evidence refused by policy: %s (accept with --accept-weak %s)",
			  w.buf, w.buf);
}

int attest_judge(const json_t *quote, const struct attest_expect *x, struct quote_info *qi, ingot_error *e)
{
	uint8_t nonce[NONCE_MAX];
	size_t nlen = 0;
	int r;

	memset(qi, 0, sizeof(*qi));
	if ((r = pick_nonce(quote, x, nonce, &nlen, qi, e)) < 0)
		return r;
	if ((r = attest_seen_nonce(x, 0, &qi->reason, e)) < 0)
		return r;
	if ((r = quote_verify_key(quote, nonce, nlen, x->ak, x->ak_pem, x->aks, qi, e)) < 0)
		return r;
	if (!x->nonce)
		qi->weak |= WEAK_NO_NONCE;
	if (x->cover && (r = check_cover(qi, x->cover, e)) < 0)
		return verdict(qi, VERDICT_NOT_COVERED, r);
	if (x->expected && (r = check_expected(qi, x->expected, e)) < 0)
		return verdict(qi, VERDICT_PCR_UNEXPECTED, r);
	if (x->log && (r = check_log(qi, x, e)) < 0)
		return verdict(qi, VERDICT_LOG_MISMATCH, r);
	if ((r = check_weak(qi, x->accept_weak, e)) < 0)
		return verdict(qi, VERDICT_WEAK, r);
	if (!x->seen_check_only && (r = attest_seen_nonce(x, 1, &qi->reason, e)) < 0)
		return r;
	qi->reason = VERDICT_OK;
	return 0;
}
