/* ingot verify: boot-time admission of this node against its manifest. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attest/quote.h"
#include "cli/cli.h"
#include "keys/envelope.h"
#include "lib/json.h"
#include "lib/time.h"
#include "verify/admit.h"
#include "verify/nfd.h"

static const struct cli_command verify_cmd = {
	.name = "verify",
	.summary = "check this node against its signed manifest and decide admission",
	.synopsis =
"    ingot verify --manifest ENVELOPE --keyring KEYRING [--state FILE] [--now TIME]\n"
"                 [--root DIR] [--image IMAGE [--verity HASHFILE]] [--no-files]\n"
"                 [--ignore GLOB]... [--tcti TCTI|none] [--eventlog LOG] [--ak DIR]\n"
"                 [--nonce HEX] [--require-tpm] [--enrolment FILE] [--firmware-ref FILE]\n"
"                 [--enrolment-keyring FILE] [--firmware-ref-keyring FILE]\n"
"                 [--accept-weak LIST] [--rules DIR] [--date YYYY-MM-DD] [--node-id ID]\n"
"                 [--fail-on warn|error] [--json] [--report FILE] [--nfd FILE] [--brief]\n"
"                 [--ring RING --promotions DIR --promotion-keyring FILE]\n",
	.description =
"    Runs every check, then admits or refuses the node:\n"
"      signature  the DSSE envelope is signed by the keyring's threshold of trusted\n"
"                 keys, not expired, and its serial is not below the last one seen\n"
"      image      the image file's size and sha256, and with --verity its dm-verity\n"
"                 root hash, equal the manifest's\n"
"      files      every file of the manifest under --root has its sha256, size,\n"
"                 mode, owner and link target; missing, changed and extra entries\n"
"                 (in directories the manifest lists) are named\n"
"      tpm        a UKI image (measured boot): the quote and the firmware's log\n"
"                 judged as by ingot attest boot-check (docs/attest.md); without\n"
"                 --enrolment it is at best \"unverified\" (a warning); the\n"
"                 record and the firmware reference are verified against their\n"
"                 own roles' keys (--enrolment-keyring, --firmware-ref-keyring,\n"
"                 or a --keyring with roles): an untyped --keyring vouches for\n"
"                 the manifest only;\n"
"                 otherwise a quote over a fresh nonce, and the replay of ingot's event log,\n"
"                 give the PCR value the manifest predicts\n"
"      tuple      the node probe (driver version and flavor, fabric manager, NCCL or\n"
"                 RCCL, CUDA or ROCm, container toolkit, GPU model, VBIOS, GSP\n"
"                 firmware) equals the manifest's tuple; fabric manager == driver on\n"
"                 NVSwitch systems; the loaded driver is the image's nvidia.ko\n"
"      rules      the version-chain rules hold for the probed tuple\n"
"      ring       with --ring, the image is promoted to that ring (ingot promote)\n"
"    Each check passes, warns, fails, is skipped (with the reason) or could not be\n"
"    carried out.  Every path the probe reads is taken under --root, so a test can\n"
"    point it at a fake sysroot; vendor tools (nvidia-smi, amd-smi,\n"
"    nv-fabricmanager, nvidia-ctk) are run without a shell and with a timeout.\n",
	.more =
"EXIT STATUS\n"
"    0   admit: every check passed or was skipped\n"
"    10  refuse: manifest signature, expiry or rollback\n"
"    11  refuse: image digest/verity root, or files differ from the manifest\n"
"    12  refuse: TPM quote, PCR or event log disagree with the manifest\n"
"    13  refuse: the node's tuple (driver, fabric manager, NCCL, firmware, ...) differs\n"
"    14  refuse: version-chain rules violated on the probed tuple\n"
"    15  refuse: the image is not promoted to --ring (or superseded, retired)\n"
"    20  could not check: a required check could not be carried out (no keyring,\n"
"        unreadable manifest, TPM required but absent, a tuple comparison not made:\n"
"        the image's nvidia.ko unreadable, pinned firmware the node does not show)\n"
"    1   the report or feature file could not be written\n"
"    64  usage error\n"
"    When several checks refuse, the lowest status wins; all are in the report.\n"
"\n"
"EXAMPLES\n"
"    ingot verify --manifest /etc/ingot/manifest.dsse.json \\\n"
"        --keyring /etc/ingot/keyring.json --state /var/lib/ingot/serials.json \\\n"
"        --report /run/ingot/report.json --nfd " NFD_DEFAULT_PATH "\n"
"    ingot verify --manifest m.dsse.json --keyring k.json --root ./fakeroot \\\n"
"        --tcti none --json\n",
};

#define MAX_IGNORE 64

int cmd_verify(int argc, char **argv)
{
	struct verify_opts o = { .check_files = true };
	const char *ignore[MAX_IGNORE + 1] = { NULL };
	struct cli_list ignores = { ignore, 0, MAX_IGNORE };
	const char *report_path = NULL, *nfd_path = NULL, *now = NULL, *accept_weak = NULL;
	const char *fail_on = NULL;
	bool json = false, brief = false, no_files = false;
	int c;
	struct verify_report r;
	ingot_error e = { 0 };

	const struct cli_option opts[] = {
		OPT_STRING(0, "manifest", &o.manifest_path, "FILE",
			   "the DSSE envelope (NAME.manifest.dsse.json); a plain\n"
			   "manifest only with --allow-unsigned"),
		OPT__KEYRING(&o.keyring_path, "FILE",
			   "trusted public keys and threshold (see ingot keys)"),
		OPT_STRING(0, "state", &o.state_path, "FILE",
			   "last-seen manifest serials (and, with --ring, promotion serials);\n"
			   "a lower serial is refused"),
		OPT__NOW(&now,
			   "RFC 3339 or epoch seconds, for expiry and the report time"),
		OPT_FLAG(0, "allow-unsigned", &o.allow_unsigned,
			 "accept a plain manifest (signature check \"skip\")"),
		OPT_STRING(0, "root", &o.root, "DIR", "the node's root directory (default /)"),
		OPT_STRING(0, "image", &o.image_path, "FILE", "the image file to hash"),
		OPT_STRING(0, "verity", &o.verity_path, "FILE",
			   "the image's dm-verity hash tree (needs --image)"),
		OPT_FLAG(0, "no-files", &no_files,
			 "do not walk the root against the manifest's file list"),
		OPT_LIST(0, "ignore", &ignores, "GLOB",
			 "leave node paths matching GLOB out of the files check\n"
			 "(repeatable; e.g. /etc/machine-id)"),
		OPT_STRING(0, "tcti", &o.tcti, "TCTI",
			   "TPM TCTI (default $INGOT_TCTI, else device:/dev/tpmrm0);\n"
			   "\"none\": no TPM check"),
		OPT_STRING(0, "eventlog", &o.eventlog_path, "FILE",
			   "ingot's event log (default /var/lib/ingot/eventlog.bin)"),
		OPT_STRING(0, "ak", &o.ak_dir, "DIR",
			   "attestation key directory (default /var/lib/ingot/ak)"),
		OPT_STRING(0, "nonce", &o.nonce_hex, "HEX",
			   "quote over this challenge (16-128 hex digits) instead of\n"
			   "a random 32-byte nonce, so a scheduler or auditor that\n"
			   "issued it knows the quote is fresh"),
		OPT_STRING(0, "enrolment", &o.enrolment_path, "FILE",
			   "signed enrolment record of this node's AK (measured boot)"),
		OPT_STRING(0, "firmware-ref", &o.firmware_ref_path, "FILE",
			   "signed firmware reference of this platform (measured boot)"),
		OPT_ROLE_KEYRINGS(&o.enrolment_keyring, &o.firmware_ref_keyring),
		OPT_STRING(0, "accept-weak", &accept_weak, "LIST",
			   "measured boot: accept secure-boot-unjudged, unknown-firmware"),
		OPT_FLAG(0, "require-tpm", &o.require_tpm,
			 "a TPM check that cannot run is \"could not check\" (20)\n"
			 "instead of \"skip\""),
		OPT_STRING(0, "rules", &o.rules_dir, "DIR",
			   "version-chain rules (default: ingot's installed rules)"),
		OPT_STRING(0, "date", &o.date, "YYYY-MM-DD",
			   "date for support-window rules (default today)"),
		OPT_STRING(0, "ring", &o.ring, "RING",
			   "admit only an image promoted to RING: a promotion statement\n"
			   "in --promotions DIR signed by the threshold of\n"
			   "--promotion-keyring FILE; the ring's previous image stays\n"
			   "admissible until a rollback drill retires it"),
		OPT_STRING(0, "promotions", &o.promotions_dir, "DIR",
			   "promotion statements (ingot promote), for --ring"),
		OPT_STRING(0, "promotion-keyring", &o.promotion_keyring, "FILE",
			   "keys and threshold that sign promotions, for --ring"),
		OPT_STRING(0, "node-id", &o.node_id, "ID",
			   "node name in the report (default the hostname)"),
		OPT_STRING(0, "fail-on", &fail_on, "LEVEL",
			   "\"error\" (default): only failures refuse; \"warn\": warnings\n"
			   "refuse too"),
		OPT__JSON(&json,
			 "print the JSON report (verify/report.schema.json) on stdout"),
		OPT_STRING(0, "report", &report_path, "FILE",
			   "also write the JSON report to FILE (atomically)"),
		OPT_STRING(0, "nfd", &nfd_path, "FILE",
			   "write a node-feature-discovery feature file with labels\n"
			   "ingot.dev/pool, tuple, verdict, exit-status (default path\n"
			   NFD_DEFAULT_PATH ")"),
		OPT_FLAG(0, "brief", &brief, "print one line: \"VERDICT (STATUS): REASON\""),
		OPT_END(),
	};

	if ((c = cli_parse(&verify_cmd, opts, argc, argv, &optind)) >= 0)
		return c;
	if (now) {
		if (time_parse(now, &o.now) < 0)
			return cli_usage_error("verify", "--now: expected RFC 3339 or epoch "
					       "seconds, got '%s'", now);
		o.have_now = true;
	}
	if (no_files)
		o.check_files = false;
	if (accept_weak && attest_weakness_parse(accept_weak, &o.accept_weak, &e) < 0)
		return cli_usage_error("verify", "--accept-weak: %s", e.msg);
	if (fail_on) {
		if (!strcmp(fail_on, "warn"))
			o.fail_on_warn = true;
		else if (strcmp(fail_on, "error"))
			return cli_usage_error("verify", "--fail-on: expected 'warn' or 'error', "
					       "got '%s'", fail_on);
	}
	if (optind < argc)
		return cli_usage_error("verify", "unexpected argument '%s'", argv[optind]);
	if (!o.manifest_path)
		return cli_usage_error("verify", "--manifest is required");
	if (o.verity_path && !o.image_path)
		return cli_usage_error("verify", "--verity needs --image");
	o.ignore = ignore;

	report_init(&r);
	if (verify_node(&o, &r, &e) < 0) {
		report_free(&r);
		return cli_error(&e, EXIT_FAILURE_);
	}
	int status = r.exit_status = cli_verify_exit(&r);
	json_t *doc = report_to_json(&r);
	if (report_path && json_write_file(report_path, doc, 0644, &e) < 0)
		status = cli_error(&e, EXIT_FAILURE_);
	if (nfd_path && nfd_write(nfd_path, &r, &e) < 0)
		status = cli_error(&e, EXIT_FAILURE_);
	if (json) {
		char *text = json_canonical(doc, NULL);
		if (text)
			fputs(text, stdout);
		free(text);
	} else if (brief) {
		printf("%s (%d): %s\n", r.verdict, r.exit_status, r.reason ? r.reason : "");
	} else {
		report_print_text(&r, stdout);
	}
	json_decref(doc);
	report_free(&r);
	return status;
}
