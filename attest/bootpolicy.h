/* The measured-boot policy: does the evidence of a node (the firmware's
 * own event log and PCR values from a verified quote) show that it booted
 * the manifest's UKI and opened the manifest's image?  A pure function:
 * no TPM, no files.  docs/attest.md "Measured boot" gives the chain.
 *
 * Admitted only when, in the sha256 bank:
 *   - the log replays to the quoted PCRs 4, 7, 9, 11 and 12;
 *   - the first EV_EFI_BOOT_SERVICES_APPLICATION in PCR 4 carries the
 *     UKI's Authenticode digest, and any later one the embedded kernel's;
 *   - PCR 11 equals the manifest's prediction (stub, kernel, os-release,
 *     command line, initramfs);
 *   - PCR 12 is at its reset value (no command line override measured);
 *   - PCR 15 equals one extend with the image's event, recomputed from the
 *     manifest (an extra or different extend changes it). */
#ifndef INGOT_ATTEST_BOOTPOLICY_H
#define INGOT_ATTEST_BOOTPOLICY_H

#include <jansson.h>

#include "attest/eventlog.h"
#include "attest/pcrs.h"
#include "lib/err.h"

/* The PCRs a boot quote must cover. */
#define BOOT_QUOTE_PCRS "sha256:4,7,9,11,12,15"
/* Of those, the ones the firmware's log extends (PCR 15 is the init's). */
#define BOOT_LOG_PCRS "sha256:4,7,9,11,12"

enum boot_verdict {
	BOOT_ADMIT,
	BOOT_REFUSE,     /* the evidence contradicts the manifest */
	BOOT_NOT_MADE,   /* the check could not be made (missing PCR or prediction) */
};

struct boot_decision {
	enum boot_verdict verdict;
	char reason[512];   /* one line; for BOOT_ADMIT a summary */
};

/* manifest: the whole (signature-checked) manifest; quoted: PCR values
 * from a quote whose signature and nonce were verified. */
void boot_policy_check(const json_t *manifest, const struct eventlog *log, const struct pcr_values *quoted,
		       struct boot_decision *out);

const char *boot_verdict_name(enum boot_verdict v);

/* The manifest's predicted sha256 PCR 15 of a measured boot
 * (boot.pcr15.predicted.sha256), or NULL for a manifest without "boot":
 * what an auditor matches a quoted PCR 15 against to find the image. */
const char *boot_manifest_pcr15(const json_t *manifest);

#endif
