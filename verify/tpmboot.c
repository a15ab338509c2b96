/* The TPM check of a node booted from an ingot UKI (manifest with a
 * "boot" object): the quote covers PCRs 4,7,9,11,12,15 and is judged with
 * the firmware's own event log by the measured-boot policy
 * (attest/bootpolicy.h).  ingot's post-boot measure (PCR 15 extended by
 * `ingot attest measure` after boot) is the weaker mode: any root process
 * can extend the same string; it stays for images without a boot: section. */
#include "verify/checks.h"

#include <stdlib.h>

#include "attest/bootpolicy.h"
#include "attest/eventlog.h"
#include "attest/quote.h"
#include "lib/base64.h"
#include "lib/fileio.h"

#define FIRMWARE_EVENTLOG "/sys/kernel/security/tpm0/binary_bios_measurements"

void check_tpm_boot(const struct verify_opts *o, const json_t *m, const struct quote_info *qi,
		    struct verify_report *r)
{
	const char *path = o->eventlog_path ? o->eventlog_path : FIRMWARE_EVENTLOG;
	struct eventlog log = { 0 };
	struct boot_decision d;
	ingot_error e = { 0 };
	char *raw = NULL, *b64;
	size_t len = 0, b64len = 0;

	/* securityfs reports the log's size as 0: read_file reads to EOF. */
	if (read_file(path, EVENTLOG_MAX_BYTES, &raw, &len, &e) < 0) {
		report_set(r, CHECK_TPM, ST_ERROR, "firmware event log unreadable, measured boot not checked: %s", e.msg);
		return;
	}
	if ((b64 = base64_encode(raw, len, &b64len)))
		json_object_set_new(r->attestation, "eventlog", json_string(b64));
	free(b64);
	json_object_set_new(r->attestation, "eventlog_path", json_string(path));
	json_object_set_new(r->attestation, "mode", json_string("measured-boot"));
	if (eventlog_parse(path, raw, len, &log, &e) < 0) {
		free(raw);
		report_set(r, CHECK_TPM, ST_FAIL, "%s", e.msg);
		return;
	}
	free(raw);
	boot_policy_check(m, &log, &qi->pcrs, &d);
	eventlog_free(&log);
	report_evidence(r, CHECK_TPM, "measured boot: %s", d.reason);
	report_set(r, CHECK_TPM, d.verdict == BOOT_ADMIT ? ST_PASS : d.verdict == BOOT_REFUSE ? ST_FAIL : ST_ERROR,
		   "measured boot %s: %s", boot_verdict_name(d.verdict), d.reason);
}
