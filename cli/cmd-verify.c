/* ingot verify: boot-time admission of this node against its manifest. */
#include <getopt.h>
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

static const char verify_help[] =
"NAME\n"
"    ingot verify - check this node against its signed manifest and decide admission\n"
"\n"
"SYNOPSIS\n"
"    ingot verify --manifest ENVELOPE --keyring KEYRING [--state FILE] [--now TIME]\n"
"                 [--root DIR] [--image IMAGE [--verity HASHFILE]] [--no-files]\n"
"                 [--ignore GLOB]... [--tcti TCTI|none] [--eventlog LOG] [--ak DIR]\n"
"                 [--nonce HEX] [--require-tpm] [--enrolment FILE] [--firmware-ref FILE]\n"
"                 [--accept-weak LIST] [--rules DIR] [--date YYYY-MM-DD] [--node-id ID]\n"
"                 [--fail-on warn|error] [--json] [--report FILE] [--nfd FILE] [--brief]\n"
"                 [--ring RING --promotions DIR --promotion-keyring FILE]\n"
"\n"
"DESCRIPTION\n"
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
"                 --enrolment it is at best \"unverified\" (a warning);\n"
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
"    nv-fabricmanager, nvidia-ctk) are run without a shell and with a timeout.\n"
"\n"
"OPTIONS\n"
"    --manifest FILE     the DSSE envelope (NAME.manifest.dsse.json); a plain\n"
"                        manifest only with --allow-unsigned\n"
"    --keyring FILE      trusted public keys and threshold (see ingot keys)\n"
"    --state FILE        last-seen manifest serials (and, with --ring, promotion serials);\n"
"                        a lower serial is refused\n"
"    --now TIME          RFC 3339 or epoch seconds, for expiry and the report time\n"
"    --allow-unsigned    accept a plain manifest (signature check \"skip\")\n"
"    --root DIR          the node's root directory (default /)\n"
"    --image FILE        the image file to hash; --verity FILE its hash tree\n"
"    --no-files          do not walk the root against the manifest's file list\n"
"    --ignore GLOB       leave node paths matching GLOB out of the files check\n"
"                        (repeatable; e.g. /etc/machine-id)\n"
"    --tcti TCTI         TPM TCTI (default $INGOT_TCTI, else device:/dev/tpmrm0);\n"
"                        \"none\": no TPM check\n"
"    --eventlog FILE     ingot's event log (default /var/lib/ingot/eventlog.bin)\n"
"    --ak DIR            attestation key directory (default /var/lib/ingot/ak)\n"
"    --nonce HEX         quote over this challenge (16-128 hex digits) instead of\n"
"                        a random 32-byte nonce, so a scheduler or auditor that\n"
"                        issued it knows the quote is fresh\n"
"    --enrolment FILE    signed enrolment record of this node's AK (measured boot)\n"
"    --firmware-ref FILE signed firmware reference of this platform (measured boot)\n"
"    --accept-weak LIST  measured boot: accept secure-boot-unjudged, unknown-firmware\n"
"    --require-tpm       a TPM check that cannot run is \"could not check\" (20)\n"
"                        instead of \"skip\"\n"
"    --rules DIR         version-chain rules (default: ingot's installed rules)\n"
"    --date YYYY-MM-DD   date for support-window rules (default today)\n"
"    --ring RING         admit only an image promoted to RING: a promotion statement\n"
"                        in --promotions DIR signed by the threshold of\n"
"                        --promotion-keyring FILE; the ring's previous image stays\n"
"                        admissible until a rollback drill retires it\n"
"    --node-id ID        node name in the report (default the hostname)\n"
"    --fail-on LEVEL     \"error\" (default): only failures refuse; \"warn\": warnings\n"
"                        refuse too\n"
"    --json              print the JSON report (verify/report.schema.json) on stdout\n"
"    --report FILE       also write the JSON report to FILE (atomically)\n"
"    --nfd FILE          write a node-feature-discovery feature file with labels\n"
"                        ingot.dev/pool, tuple, verdict, exit-status (default path\n"
"                        " NFD_DEFAULT_PATH ")\n"
"    --brief             print one line: \"VERDICT (STATUS): REASON\"\n"
"    -h, --help          this text\n"
"\n"
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
"        --tcti none --json\n";

enum {
	OPT_MANIFEST = 256, OPT_KEYRING, OPT_STATE, OPT_NOW, OPT_ALLOW_UNSIGNED, OPT_ROOT,
	OPT_IMAGE, OPT_VERITY, OPT_NO_FILES, OPT_IGNORE, OPT_TCTI, OPT_EVENTLOG, OPT_AK,
	OPT_REQUIRE_TPM, OPT_NONCE, OPT_RULES, OPT_DATE, OPT_NODE_ID, OPT_FAIL_ON, OPT_JSON, OPT_REPORT,
	OPT_NFD, OPT_BRIEF, OPT_RING, OPT_PROMOTIONS, OPT_PROMOTION_KEYRING,
	OPT_ENROLMENT, OPT_FIRMWARE_REF, OPT_ACCEPT_WEAK,
};

static const struct option longopts[] = {
	{ "manifest", required_argument, NULL, OPT_MANIFEST },
	{ "keyring", required_argument, NULL, OPT_KEYRING },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "now", required_argument, NULL, OPT_NOW },
	{ "allow-unsigned", no_argument, NULL, OPT_ALLOW_UNSIGNED },
	{ "root", required_argument, NULL, OPT_ROOT },
	{ "image", required_argument, NULL, OPT_IMAGE },
	{ "verity", required_argument, NULL, OPT_VERITY },
	{ "no-files", no_argument, NULL, OPT_NO_FILES },
	{ "ignore", required_argument, NULL, OPT_IGNORE },
	{ "tcti", required_argument, NULL, OPT_TCTI },
	{ "eventlog", required_argument, NULL, OPT_EVENTLOG },
	{ "ak", required_argument, NULL, OPT_AK },
	{ "require-tpm", no_argument, NULL, OPT_REQUIRE_TPM },
	{ "nonce", required_argument, NULL, OPT_NONCE },
	{ "rules", required_argument, NULL, OPT_RULES },
	{ "date", required_argument, NULL, OPT_DATE },
	{ "node-id", required_argument, NULL, OPT_NODE_ID },
	{ "fail-on", required_argument, NULL, OPT_FAIL_ON },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "report", required_argument, NULL, OPT_REPORT },
	{ "nfd", required_argument, NULL, OPT_NFD },
	{ "brief", no_argument, NULL, OPT_BRIEF },
	{ "ring", required_argument, NULL, OPT_RING },
	{ "promotions", required_argument, NULL, OPT_PROMOTIONS },
	{ "promotion-keyring", required_argument, NULL, OPT_PROMOTION_KEYRING },
	{ "enrolment", required_argument, NULL, OPT_ENROLMENT },
	{ "firmware-ref", required_argument, NULL, OPT_FIRMWARE_REF },
	{ "accept-weak", required_argument, NULL, OPT_ACCEPT_WEAK },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

#define MAX_IGNORE 64

int cmd_verify(int argc, char **argv)
{
	struct verify_opts o = { .check_files = true };
	const char *ignore[MAX_IGNORE + 1] = { NULL };
	size_t n_ignore = 0;
	const char *report_path = NULL, *nfd_path = NULL;
	int json = 0, brief = 0, c;
	struct verify_report r;
	ingot_error e = { 0 };

	if (cli_wants_help(argc, argv)) {
		fputs(verify_help, stdout);
		return EXIT_OK;
	}
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_MANIFEST: o.manifest_path = optarg; break;
		case OPT_KEYRING: o.keyring_path = optarg; break;
		case OPT_STATE: o.state_path = optarg; break;
		case OPT_NOW:
			if (time_parse(optarg, &o.now) < 0)
				return cli_usage_error("verify", "--now: expected RFC 3339 or epoch "
						       "seconds, got '%s'", optarg);
			o.have_now = true;
			break;
		case OPT_ALLOW_UNSIGNED: o.allow_unsigned = true; break;
		case OPT_ROOT: o.root = optarg; break;
		case OPT_IMAGE: o.image_path = optarg; break;
		case OPT_VERITY: o.verity_path = optarg; break;
		case OPT_NO_FILES: o.check_files = false; break;
		case OPT_IGNORE:
			if (n_ignore == MAX_IGNORE)
				return cli_usage_error("verify", "--ignore: at most %d patterns", MAX_IGNORE);
			ignore[n_ignore++] = optarg;
			break;
		case OPT_TCTI: o.tcti = optarg; break;
		case OPT_EVENTLOG: o.eventlog_path = optarg; break;
		case OPT_AK: o.ak_dir = optarg; break;
		case OPT_REQUIRE_TPM: o.require_tpm = true; break;
		case OPT_NONCE: o.nonce_hex = optarg; break;
		case OPT_ENROLMENT: o.enrolment_path = optarg; break;
		case OPT_FIRMWARE_REF: o.firmware_ref_path = optarg; break;
		case OPT_ACCEPT_WEAK:
			if (attest_weakness_parse(optarg, &o.accept_weak, &e) < 0)
				return cli_usage_error("verify", "--accept-weak: %s", e.msg);
			break;
		case OPT_RULES: o.rules_dir = optarg; break;
		case OPT_DATE: o.date = optarg; break;
		case OPT_NODE_ID: o.node_id = optarg; break;
		case OPT_FAIL_ON:
			if (!strcmp(optarg, "warn"))
				o.fail_on_warn = true;
			else if (strcmp(optarg, "error"))
				return cli_usage_error("verify", "--fail-on: expected 'warn' or 'error', "
						       "got '%s'", optarg);
			break;
		case OPT_JSON: json = 1; break;
		case OPT_REPORT: report_path = optarg; break;
		case OPT_NFD: nfd_path = optarg; break;
		case OPT_BRIEF: brief = 1; break;
		case OPT_RING: o.ring = optarg; break;
		case OPT_PROMOTIONS: o.promotions_dir = optarg; break;
		case OPT_PROMOTION_KEYRING: o.promotion_keyring = optarg; break;
		default:
			return cli_usage_error("verify", "unknown or incomplete option '%s'",
					       argv[optind - 1]);
		}
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
	int status = r.exit_status;
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
