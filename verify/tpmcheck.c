/* The TPM check: ask the TPM for a quote over the manifest's PCR with a
 * nonce nobody could have predicted, verify it offline, and require
 *   quoted PCR == the manifest's predicted value   (this image was measured,
 *                                                   and nothing else since)
 *   event-log replay == quoted PCRs                (the log tells the truth)
 *   the log holds the manifest's event data        (and names this image).
 * The quote, AK and log go into the report so the audit can redo it all. */
#include "verify/checks.h"

#include <stdlib.h>
#include <string.h>
#include <openssl/rand.h>

#include "attest/verdict.h"
#include "attest/eventlog.h"
#include "attest/judge.h"
#include "attest/nonce.h"
#include "attest/predict.h"
#include "attest/quote.h"
#include "attest/tpm.h"
#include "lib/base64.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"

#define DEFAULT_EVENTLOG "/var/lib/ingot/eventlog.bin"
#define NONCE_LEN 32   /* our own nonce; a given --nonce follows nonce_parse */

/* A TPM that is not there: a skip, unless policy needs one. */
static void no_tpm(const struct verify_opts *o, struct verify_report *r, const char *why)
{
	report_set(r, CHECK_TPM, o->require_tpm ? ST_ERROR : ST_SKIP, "%s%s", why,
		   o->require_tpm ? " (TPM required by --require-tpm)" : "");
}

static int log_has_event(const struct eventlog *log, unsigned pcr, const char *data)
{
	size_t len = strlen(data);
	for (size_t i = 0; i < log->nevents; i++) {
		const struct eventlog_event *ev = &log->events[i];
		if (ev->pcr == pcr && ev->data_len == len && !memcmp(ev->data, data, len))
			return 1;
	}
	return 0;
}

/* Read the event log into the report (the audit replays it) and parse
 * it.  On failure the check's status is set. */
static int load_log(const struct verify_opts *o, struct eventlog *log, struct verify_report *r)
{
	const char *path = o->eventlog_path ? o->eventlog_path : DEFAULT_EVENTLOG;
	_cleanup_free_ char *raw = NULL, *b64 = NULL;
	ingot_error e = { 0 };
	size_t len = 0;

	json_object_set_new(r->attestation, "eventlog_path", json_string(path));
	if (read_file(path, EVENTLOG_MAX_BYTES, &raw, &len, &e) < 0) {
		report_set(r, CHECK_TPM, ST_FAIL, "the event log is unreadable: %s", e.msg);
		return -1;
	}
	b64 = base64_encode(raw, len, NULL);
	if (b64)
		json_object_set_new(r->attestation, "eventlog", json_string(b64));
	if (eventlog_parse(path, raw, len, log, &e) < 0) {
		report_set(r, CHECK_TPM, ST_FAIL, "%s", e.msg);
		return -1;
	}
	return 0;
}

/* The nonce: the scheduler's or auditor's challenge (it proves
 * freshness to them), else a fresh random one. */
static int pick_nonce(const struct verify_opts *o, struct nonce *n, struct verify_report *r)
{
	ingot_error e = { 0 };

	if (o->nonce_hex) {
		if (nonce_decode(o->nonce_hex, n, &e) < 0) {
			report_set(r, CHECK_TPM, ST_ERROR, "--nonce: %s", e.msg);
			return -1;
		}
		return 0;
	}
	if (RAND_bytes(n->bytes, NONCE_LEN) != 1) {
		report_set(r, CHECK_TPM, ST_ERROR, "no randomness for the quote nonce");
		return -1;
	}
	n->len = NONCE_LEN;
	hex_encode(n->bytes, n->len, n->hex);
	return 0;
}

void check_tpm(const struct verify_opts *o, const struct manifest *m, struct verify_report *r)
{
	unsigned pcr = m->measurement.pcr;
	const char *data = m->measurement.event_data;
	const char *ak_dir = o->ak_dir ? o->ak_dir : DEFAULT_AK_DIR;
	const struct bank *sha256 = bank_by_name("sha256");
	bool boot = m->have & MF_BOOT;  /* measured boot: verify/tpmboot.c */
	_cleanup_tpm_ struct tpm *tpm = NULL;
	_cleanup_json_ json_t *quote = NULL;
	struct pcr_selection sel = { 0 };
	struct pcr_values want = { 0 };
	struct pcr_bank *wb;
	struct eventlog log = { 0 };
	struct quote_info qi;
	struct nonce nonce;
	ingot_error e = { 0 };

	if (o->tcti && !strcmp(o->tcti, "none")) {
		no_tpm(o, r, "no TPM (--tcti none)");
		return;
	}
	if (!(m->have & MF_PREDICTED) || pcr >= PCR_COUNT || !(wb = pcr_values_bank(&want, sha256->alg, 1))) {
		report_set(r, CHECK_TPM, ST_ERROR, "manifest: measurement: expected pcr and "
			   "predicted.sha256");
		return;
	}
	memcpy(wb->value[pcr], m->measurement.predicted, 32);
	wb->mask = 1u << pcr;
	/* The manifest's own prediction must follow from its content, or a
	 * forged "predicted" could match a PCR measured for another image. */
	if (attest_check_measurement(m->doc, NULL, &e) < 0) {
		report_set(r, CHECK_TPM, ST_FAIL, "%s", e.msg);
		return;
	}
	if (tpm_open(o->tcti, &tpm, &e) < 0) {
		char why[INGOT_ERR_MSG + 32];
		snprintf(why, sizeof(why), "no TPM: %s", e.msg);
		no_tpm(o, r, why);
		return;
	}
	if (pick_nonce(o, &nonce, r) < 0)
		return;
	if (boot)
		pcr_selection_add(&sel, sha256->alg, BOOT_QUOTE_PCR_MASK);
	else
		pcr_selection_add(&sel, sha256->alg, 1u << pcr);
	if (tpm_quote(tpm, ak_dir, nonce.bytes, nonce.len, &sel, &quote, &e) < 0) {
		report_set(r, CHECK_TPM, ST_ERROR, "quote failed: %s", e.msg);
		return;
	}
	r->attestation = json_pack("{s:s, s:O, s:O, s:I}", "nonce", nonce.hex, "quote", quote,
				   "ak_public_key", json_object_get(quote, "ak_pub") ?: json_null(),
				   "pcr", (json_int_t)pcr);
	if (boot) {
		/* Quote and firmware log judged together, by the one verdict. */
		check_tpm_boot(o, m, quote, &nonce, r);
		return;
	}
	if (load_log(o, &log, r) < 0)
		goto out;
	/* Admission accepts no weak evidence (attest/judge.h): the nonce is
	 * ours and the AK is ingot's own, so none should arise. */
	struct attest_expect x = { .nonce = &nonce, .expected = &want, .log = &log, .log_sel = &sel };
	if (attest_judge(quote, &x, &qi, &e) < 0) {
		report_set(r, CHECK_TPM, ST_FAIL, "quote refused (%s): %s%s", attest_verdict_name(qi.reason), e.msg,
			   qi.reason == VERDICT_PCR_UNEXPECTED ? " (the value the manifest predicts)" : "");
		goto out;
	}
	if (!data || !log_has_event(&log, (unsigned)pcr, data)) {
		report_set(r, CHECK_TPM, ST_FAIL, "event log has no PCR %lld event \"%s\"", (long long)pcr,
			   data ? data : "?");
		goto out;
	}
	report_evidence(r, CHECK_TPM, "quote by AK %s (%s/ak.pub.pem) over sha256:%lld, nonce %s, "
			"resetCount %u", qi.ak_id, ak_dir, (long long)pcr, nonce.hex, qi.reset_count);
	report_evidence(r, CHECK_TPM, "PCR %lld sha256 = predicted %s", (long long)pcr, m->measurement.predicted_hex);
	report_evidence(r, CHECK_TPM, "%s: %zu events replay to the quoted PCRs", log.name, log.nevents);
	report_set(r, CHECK_TPM, ST_PASS, "quote, event log and the manifest's predicted PCR %lld agree",
		   (long long)pcr);
out:
	eventlog_free(&log);
}
