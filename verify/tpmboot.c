/* The TPM check of a node booted from an ingot UKI (manifest with a
 * "boot" object): the quote covers PCRs 0,2,4,7,9,11,12,15 and is judged
 * with the firmware's own event log, the enrolled AK (--enrolment) and
 * the platform's firmware reference (--firmware-ref) by the one verdict
 * (attest/verdict.h).  ingot's post-boot measure (PCR 15 extended by
 * `ingot attest measure` after boot) is the weaker mode: any root process
 * can extend the same string; it stays for images without a boot: section. */
#include "verify/checks.h"

#include <stdlib.h>
#include <string.h>

#include "attest/eventlog.h"
#include "attest/verdict.h"
#include "lib/base64.h"
#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "verify/boot-inputs.h"

#define FIRMWARE_EVENTLOG "/sys/kernel/security/tpm0/binary_bios_measurements"

/* The enrolment record and firmware reference, each verified against its
 * own role's keys by the one loader (verify/boot-inputs.h).  -1 (and the
 * check's status) when one is given but does not verify. */
static int load_trust(const struct verify_opts *o, struct boot_trust *t, struct verify_report *r)
{
	ingot_error e = { 0 };

	memset(t, 0, sizeof(*t));
	if (!o->enrolment_path && !o->firmware_ref_path)
		return 0;
	struct boot_keyrings k = { .keyring = o->keyring_path };
	k.role[KEY_ROLE_ENROLMENT] = o->enrolment_keyring;
	k.role[KEY_ROLE_FIRMWARE_REF] = o->firmware_ref_keyring;
	if (boot_trust_init(t, &k, &e) < 0) {
		report_set(r, CHECK_TPM, ST_ERROR, "enrolment and firmware reference not checked: %s", e.msg);
		return -1;
	}
	if (o->enrolment_path && boot_trust_add_enrolment(t, o->enrolment_path, &e) < 0) {
		report_set(r, CHECK_TPM, ST_FAIL, "enrolment: %s", e.msg);
		return -1;
	}
	if (o->firmware_ref_path && boot_trust_add_firmware_ref(t, o->firmware_ref_path, &e) < 0) {
		report_set(r, CHECK_TPM, ST_FAIL, "firmware reference: %s", e.msg);
		return -1;
	}
	return 0;
}

void check_tpm_boot(const struct verify_opts *o, const struct manifest *m, const json_t *quote, const struct nonce *nonce,
		    struct verify_report *r)
{
	static const enum check_status status[] = {
		[BOOT_ADMIT] = ST_PASS, [BOOT_REFUSE] = ST_FAIL,
		/* A node judging its own evidence without an enrolment record:
		 * consistent, but nothing proves its AK; the audit decides. */
		[BOOT_UNVERIFIED] = ST_WARN, [BOOT_NOT_MADE] = ST_ERROR,
	};
	const char *path = o->eventlog_path ? o->eventlog_path : FIRMWARE_EVENTLOG;
	struct boot_trust t;
	struct boot_proof p = { 0 };
	struct boot_result res;
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
	/* The proof as every verdict's caller assembles it (verify/boot-inputs.h). */
	if (boot_proof_parse(&p, path, quote, raw, len, nonce, &e) < 0) {
		free(raw);
		boot_proof_release(&p);
		report_set(r, CHECK_TPM, ST_FAIL, "%s", e.msg);
		return;
	}
	free(raw);
	if (load_trust(o, &t, r) == 0) {
		struct boot_pick pick = { .ak = t.n_en ? &t.ak[0] : NULL, .manifest = m, .fw = t.n_fw ? &t.fw[0] : NULL };
		struct boot_evidence ev;

		/* The id the report carries, which the audit binds too. */
		boot_inputs_evidence(&p, &pick, json_string_value(json_object_get(r->node, "id")), o->accept_weak, &ev);
		attest_boot_verdict(&ev, &res);
		if (res.qi.ak_id[0])
			report_evidence(r, CHECK_TPM, "quote by AK %s over %s, nonce %s", res.qi.ak_id, BOOT_QUOTE_PCRS,
					nonce->hex);
		report_set(r, CHECK_TPM, status[res.verdict], "measured boot %s: %s", boot_verdict_name(res.verdict),
			   res.reason);
	}
	boot_trust_release(&t);
	boot_proof_release(&p);
}
