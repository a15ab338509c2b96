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

#include "attest/bootpolicy.h"
#include "attest/eventlog.h"
#include "attest/predict.h"
#include "attest/quote.h"
#include "attest/tpm.h"
#include "lib/base64.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"

#define DEFAULT_EVENTLOG "/var/lib/ingot/eventlog.bin"
#define DEFAULT_AK_DIR "/var/lib/ingot/ak"
#define NONCE_LEN 32

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

static void check_log(const struct verify_opts *o, const json_t *meas, unsigned pcr,
		      const struct quote_info *qi, const struct pcr_selection *sel,
		      struct verify_report *r)
{
	const char *path = o->eventlog_path ? o->eventlog_path : DEFAULT_EVENTLOG;
	const char *data = json_string_value(json_object_get(meas, "event_data"));
	struct eventlog log = { 0 };
	ingot_error e = { 0 };
	char *raw = NULL;
	size_t len = 0;

	if (read_file(path, EVENTLOG_MAX_BYTES, &raw, &len, &e) < 0) {
		report_set(r, CHECK_TPM, ST_FAIL, "PCR %u matches, but the event log is unreadable: %s",
			   pcr, e.msg);
		return;
	}
	size_t b64len = 0;
	char *b64 = base64_encode(raw, len, &b64len);
	if (b64)
		json_object_set_new(r->attestation, "eventlog", json_string(b64));
	json_object_set_new(r->attestation, "eventlog_path", json_string(path));
	free(b64);
	if (eventlog_parse(path, raw, len, &log, &e) < 0) {
		free(raw);
		report_set(r, CHECK_TPM, ST_FAIL, "%s", e.msg);
		return;
	}
	free(raw);
	if (eventlog_compare(&log, &qi->pcrs, sel, &e) < 0) {
		report_set(r, CHECK_TPM, ST_FAIL, "event log does not replay to the quoted PCRs: %s", e.msg);
	} else if (!data || !log_has_event(&log, pcr, data)) {
		report_set(r, CHECK_TPM, ST_FAIL, "event log has no PCR %u event \"%s\"", pcr,
			   data ? data : "?");
	} else {
		report_evidence(r, CHECK_TPM, "%s: %zu events replay to the quoted PCRs", path, log.nevents);
		report_set(r, CHECK_TPM, ST_PASS, "quote, event log and the manifest's predicted "
			   "PCR %u agree", pcr);
	}
	eventlog_free(&log);
}

void check_tpm(const struct verify_opts *o, const json_t *m, struct verify_report *r)
{
	const json_t *meas = json_object_get(m, "measurement");
	json_int_t pcr = json_integer_value(json_object_get(meas, "pcr"));
	const char *predicted = json_string_value(json_object_get(json_object_get(meas, "predicted"),
								  "sha256"));
	const char *ak_dir = o->ak_dir ? o->ak_dir : DEFAULT_AK_DIR;
	const json_t *boot = json_object_get(m, "boot");  /* measured boot: verify/tpmboot.c */
	_cleanup_tpm_ struct tpm *tpm = NULL;
	_cleanup_json_ json_t *quote = NULL;
	struct pcr_selection sel = { 0 };
	struct quote_info qi;
	uint8_t nonce[TPM_NONCE_MAX];
	size_t nonce_len = NONCE_LEN;
	char nonce_hex[2 * TPM_NONCE_MAX + 1];
	ingot_error e = { 0 };

	if (o->tcti && !strcmp(o->tcti, "none")) {
		no_tpm(o, r, "no TPM (--tcti none)");
		return;
	}
	if (!json_is_object(meas) || pcr < 0 || pcr >= PCR_COUNT || !predicted) {
		report_set(r, CHECK_TPM, ST_ERROR, "manifest: measurement: expected pcr and "
			   "predicted.sha256");
		return;
	}
	/* The manifest's own prediction must follow from its content, or a
	 * forged "predicted" could match a PCR measured for another image. */
	if (attest_check_measurement(m, NULL, &e) < 0) {
		report_set(r, CHECK_TPM, ST_FAIL, "%s", e.msg);
		return;
	}
	if (tpm_open(o->tcti, &tpm, &e) < 0) {
		char why[INGOT_ERR_MSG + 32];
		snprintf(why, sizeof(why), "no TPM: %s", e.msg);
		no_tpm(o, r, why);
		return;
	}
	if (o->nonce_hex) {
		/* A challenge from the scheduler or auditor proves freshness to them. */
		nonce_len = strlen(o->nonce_hex) / 2;
		if (nonce_len < 8 || nonce_len > TPM_NONCE_MAX || strlen(o->nonce_hex) % 2 ||
		    hex_decode(o->nonce_hex, nonce, nonce_len) < 0) {
			report_set(r, CHECK_TPM, ST_ERROR, "--nonce: expected 16 to %d hex digits, got \"%.80s\"",
				   2 * TPM_NONCE_MAX, o->nonce_hex);
			return;
		}
	} else if (RAND_bytes(nonce, NONCE_LEN) != 1) {
		report_set(r, CHECK_TPM, ST_ERROR, "no randomness for the quote nonce");
		return;
	}
	hex_encode(nonce, nonce_len, nonce_hex);
	if (boot)
		pcr_selection_parse(BOOT_QUOTE_PCRS, &sel, &e);
	else
		pcr_selection_add(&sel, bank_by_name("sha256")->alg, 1u << pcr);
	if (tpm_quote(tpm, ak_dir, nonce, nonce_len, &sel, &quote, &e) < 0) {
		report_set(r, CHECK_TPM, ST_ERROR, "quote failed: %s", e.msg);
		return;
	}
	memset(&qi, 0, sizeof(qi));
	r->attestation = json_pack("{s:s, s:O, s:O, s:I}", "nonce", nonce_hex, "quote", quote,
				   "ak_public_key", json_object_get(quote, "ak_pub") ?: json_null(),
				   "pcr", pcr);
	if (quote_verify(quote, nonce, nonce_len, NULL, &qi, &e) < 0) {
		report_set(r, CHECK_TPM, ST_FAIL, "quote does not verify (%s): %s",
			   quote_reason_name(qi.reason), e.msg);
		return;
	}
	if (boot) {
		report_evidence(r, CHECK_TPM, "quote by AK %s/ak.pub.pem over %s, nonce %s", ak_dir, BOOT_QUOTE_PCRS,
				nonce_hex);
		check_tpm_boot(o, m, &qi, r);
		return;
	}
	const struct pcr_bank *b = pcr_values_find(&qi.pcrs, sel.banks[0].alg);
	char got[2 * BANK_MAX_DIGEST + 1] = "";
	if (b && (b->mask & (1u << pcr)))
		hex_encode(b->value[pcr], b->bank->size, got);
	report_evidence(r, CHECK_TPM, "quote by AK %s/ak.pub.pem over sha256:%lld, nonce %s, "
			"resetCount %u", ak_dir, (long long)pcr, nonce_hex, qi.reset_count);
	if (strcmp(got, predicted)) {
		report_set(r, CHECK_TPM, ST_FAIL, "PCR %lld sha256 is %s, manifest predicts %s",
			   (long long)pcr, got[0] ? got : "absent", predicted);
		return;
	}
	report_evidence(r, CHECK_TPM, "PCR %lld sha256 = predicted %s", (long long)pcr, predicted);
	check_log(o, meas, (unsigned)pcr, &qi, &sel, r);
}
