/* `ingot verify`: check this node against its signed manifest and decide
 * admission.  Every check runs (so the report shows everything that is
 * wrong), then report_finish() picks the verdict and exit status. */
#ifndef INGOT_VERIFY_ADMIT_H
#define INGOT_VERIFY_ADMIT_H

#include <stdbool.h>
#include <time.h>
#include "lib/err.h"
#include "verify/node-report.h"

struct verify_opts {
	const char *manifest_path;   /* DSSE envelope, or a plain manifest with allow_unsigned */
	const char *keyring_path;    /* trusted keys; required for an envelope */
	const char *state_path;      /* last-seen serials (rollback); NULL = none */
	bool have_now;
	time_t now;                  /* expiry and report time; default: the clock */
	bool allow_unsigned;         /* accept a plain manifest (signature "skip") */

	const char *root;            /* node root for probe and files ("/" default) */
	const char *image_path;      /* image file/device: sha256 + verity root */
	const char *verity_path;     /* its hash tree (needs image_path) */
	bool check_files;            /* walk the unpacked root against the file list */
	const char *const *ignore;   /* NULL-terminated globs left out of the files check */

	const char *tcti;            /* "none" = no TPM; NULL = $INGOT_TCTI or the device */
	const char *eventlog_path;   /* ingot's event log (default /var/lib/ingot/eventlog.bin) */
	const char *ak_dir;          /* attestation key directory */
	const char *nonce_hex;       /* quote nonce from a verifier's challenge; NULL: random */
	bool require_tpm;            /* no TPM is "could not check", not "skip" */
	const char *enrolment_path;  /* signed enrolment record of this node's AK (keys/enrolment.h) */
	const char *firmware_ref_path;   /* signed firmware reference of this platform */
	const char *enrolment_keyring;     /* their signers, in place of keyring_path's roles */
	const char *firmware_ref_keyring;
	unsigned accept_weak;        /* enum attest_weakness bits accepted by name */

	const char *rules_dir;       /* version-chain rules; NULL = default */
	const char *date;            /* YYYY-MM-DD for support windows; NULL = today */

	const char *ring;            /* admit only an image promoted to this ring; NULL: skip */
	const char *promotions_dir;  /* promotion statements (*.promotion.dsse.json) */
	const char *promotion_keyring;   /* keys that sign promotions, and their threshold */

	const char *node_id;         /* default: the node's hostname */
	bool fail_on_warn;
};

/* Run every check and fill r (report_init'ed by the caller) including
 * the verdict.  Returns 0, or -ENOMEM (r then incomplete). */
int verify_node(const struct verify_opts *o, struct verify_report *r, ingot_error *e);

#endif
