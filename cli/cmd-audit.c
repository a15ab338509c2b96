/* ingot audit: what does a pool really run? */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attest/quote.h"
#include "audit/audit.h"
#include "cli/cli.h"
#include "lib/cleanup.h"
#include "lib/json.h"

enum {
	AUDIT_EXIT_HEALTHY = 0,
	AUDIT_EXIT_DRIFT = 1,
	AUDIT_EXIT_FORGED = 2,
	AUDIT_EXIT_CANNOT = 3,
	AUDIT_EXIT_UNVERIFIED = 4,
};

static const struct cli_command audit_cmd = {
	.name = "audit",
	.summary = "offline audit of many node reports: what does a pool really run?",
	.synopsis =
"    ingot audit --keyring K --manifests DIR --reports DIR [--nonces FILE]\n"
"                [--enrolments DIR] [--firmware-refs DIR] [--aks FILE] [--nodes FILE]\n"
"                [--enrolment-keyring FILE] [--firmware-ref-keyring FILE]\n"
"                [--max-age DURATION] [--now TIME]\n"
"                [--accept-weak LIST] [--jobs N] [--json OUT | --html OUT]\n"
"                [--promotions DIR --promotion-keyring FILE]\n",
	.description =
"    Reads every node report (DIR/*.json, as written by 'ingot verify --json')\n"
"    and every signed pool manifest (DIR/*.manifest.dsse.json) and re-verifies\n"
"    everything itself; no verdict from a node is trusted:\n"
"\n"
"      - each manifest envelope against the keyring (threshold, expiry) and its\n"
"        measurement against its content;\n"
"      - each enrolment record and firmware reference against the keys of its\n"
"        own role (--enrolment-keyring, --firmware-ref-keyring, or K's roles):\n"
"        a manifest signer's key proves nothing about an AK, and an untyped K\n"
"        vouches for manifests only;\n"
"      - each report's TPM quote: AK signature over the TPMS_ATTEST, the nonce\n"
"        issued to that node (--nonces), the PCR values against the quoted\n"
"        digest; the AK must be enrolled (--enrolments); a nonce seen in two\n"
"        reports is a replay;\n"
"      - a measured boot (a UKI image) by the one verdict ingot attest\n"
"        boot-check gives (docs/attest.md): the log replayed once, PCR 4 by\n"
"        digests, event data against digests, Secure Boot (PCR 7), firmware\n"
"        (PCRs 0, 2) against the reference whose values the node claims;\n"
"      - the event log replayed against the quoted PCRs;\n"
"      - the quoted PCR against the manifests' predicted values: which signed\n"
"        image did the node boot, and is it its pool's current one;\n"
"      - the probed tuple against the pool manifest's tuple, field by field.\n"
"\n"
"    Prints one table: node, pool, tuple digest, verdict, grouped by tuple,\n"
"    failing and drifted nodes first with the exact fields that differ.\n"
"    Nodes never disappear: a node listed in --nodes without a report is\n"
"    'missing', an old report is 'stale', one without a quote 'unquoted'.\n"
"\n"
"    Verdicts, most severe first: forged-quote, ak-not-enrolled,\n"
"    nonce-mismatch, nonce-reused, pcr-mismatch, log-mismatch, unknown-image,\n"
"    boot-refused, boot-unchecked (measured boot of a UKI image, docs/attest.md)\n"
"    (evidence does not verify); malformed, missing, unquoted, stale,\n"
"    unknown-pool, expired-manifest, mixed-vendors, drifted; unverified;\n"
"    healthy.\n"
"\n"
"    Fail closed: a valid quote is 'unverified', never healthy, when nothing\n"
"    shows it came from a TPM (no enrolment record: any software key can sign\n"
"    one) or when its evidence is weak and not accepted: 'no-nonce' (no\n"
"    --nonces, or empty qualifying data), 'sha1-signature', and for a\n"
"    measured boot 'unknown-firmware', 'secure-boot-unjudged' (--accept-weak).\n",
	.more =
"EXIT STATUS\n"
"    0   every node is healthy\n"
"    1   some node is drifted, stale, missing, unquoted, malformed, in an\n"
"        unknown pool or in a pool of two GPU vendors (and none worse)\n"
"    2   some node's evidence does not verify (forged or replayed quote, AK not\n"
"        enrolled, nonce, PCR or event log mismatch, image no signed manifest\n"
"        predicts)\n"
"    3   the audit could not run (keyring, directory or option file unusable)\n"
"    4   some node's evidence is valid but unverified (not enrolled, or weak\n"
"        evidence not accepted), and no node is worse\n"
"    64  usage error\n"
"\n"
"EXAMPLES\n"
"    ingot audit --keyring release.keyring --manifests pools/ --reports reports/ \\\n"
"        --nonces issued.txt --enrolments enrolled/ --firmware-refs firmware/ \\\n"
"        --nodes inventory.txt \\\n"
"        --max-age 1h --html audit.html\n",
};

int cmd_audit(int argc, char **argv)
{
	struct audit_opts o = { .now = time(NULL) };
	const char *json_out = NULL, *html_out = NULL;
	const char *max_age = NULL, *now = NULL, *jobs = NULL, *accept_weak = NULL;
	_cleanup_audit_result_ struct audit_result *res = NULL;
	ingot_error e = { 0 };
	int c;
	const char *mixed_v[64];
	struct cli_list mixed = { mixed_v, 0, 64 };

	const struct cli_option opts[] = {
		OPT__KEYRING(&o.keyring, "K",
			   "trusted manifest signers (ingot keyring JSON), or a\n"
			   "keyring with roles: each role's keys"),
		OPT_ROLE_KEYRINGS(&o.enrolment_keyring, &o.firmware_ref_keyring),
		OPT_STRING(0, "manifests", &o.manifests_dir, "DIR",
			   "the pools' signed manifests (*.manifest.dsse.json);\n"
			   "bare *.manifest.json there are listed, never trusted"),
		OPT_STRING(0, "reports", &o.reports_dir, "DIR", "node reports (*.json)"),
		OPT_STRING(0, "nonces", &o.nonces, "FILE",
			   "lines 'NODE NONCE_HEX': the nonce issued to each node"),
		OPT_STRING(0, "enrolments", &o.enrolments_dir, "DIR",
			   "signed enrolment records (ingot attest enroll), *.json,\n"
			   "verified against the enrolment role's keys: each node's AK"),
		OPT_STRING(0, "firmware-refs", &o.firmware_refs_dir, "DIR",
			   "signed firmware references (ingot attest firmware-ref),\n"
			   "*.json, verified against the firmware-ref role's keys"),
		OPT_STRING(0, "aks", &o.aks, "FILE",
			   "post-boot reports only: lines 'AK_SHA256 [NODE]' (sha256\n"
			   "of the DER public key) and/or PEM public keys; an\n"
			   "allow-list that proves no TPM, never used for a\n"
			   "measured boot"),
		OPT_STRING(0, "nodes", &o.nodes, "FILE",
			   "lines 'NODE [POOL]': the nodes expected to report"),
		OPT_LIST(0, "allow-mixed-vendors", &mixed, "POOL",
			 "the pool's manifests may declare two GPU vendors\n"
			 "(repeatable); else each of its nodes gets mixed-vendors"),
		OPT_STRING(0, "accept-weak", &accept_weak, "LIST",
			   "accept weak TPM evidence: sha1-signature, no-nonce,\n"
			   "unknown-firmware, secure-boot-unjudged (comma-separated);\n"
			   "refused as 'unverified' otherwise"),
		OPT_STRING(0, "max-age", &max_age, "DURATION",
			   "reports older than this are stale (90s, 30m, 24h, 7d)"),
		OPT__NOW(&now, "audit as of TIME (RFC 3339 or epoch seconds)"),
		OPT_STRING(0, "promotions", &o.promotions_dir, "DIR",
			   "promotion statements (ingot promote): adds a RING column,\n"
			   "the rings each node's image holds, signed by the threshold\n"
			   "of --promotion-keyring FILE"),
		OPT_STRING(0, "promotion-keyring", &o.promotion_keyring, "FILE",
			   "keys and threshold that sign promotions, for --promotions"),
		OPT_STRING(0, "json", &json_out, "OUT",
			   "also write the full result as JSON to OUT ('-': stdout,\n"
			   "then no table)"),
		OPT_STRING(0, "html", &html_out, "OUT",
			   "also write a self-contained HTML page to OUT"),
		OPT_STRING(0, "jobs", &jobs, "N",
			   "threads checking reports, 1..64 (default: one per CPU);\n"
			   "the result is the same for every N"),
		OPT_END(),
	};

	if ((c = cli_parse(&audit_cmd, opts, argc, argv, &optind)) >= 0)
		return c;
	if (max_age && audit_parse_duration(max_age, &o.max_age) < 0)
		return cli_usage_error("audit", "--max-age: expected a duration like 30m, 24h, 7d, got '%s'", max_age);
	if (now && audit_parse_time(now, &o.now) < 0)
		return cli_usage_error("audit", "--now: expected RFC 3339 or epoch seconds, got '%s'", now);
	if (jobs) {
		char *end;
		unsigned long v = strtoul(jobs, &end, 10);
		if (*jobs < '1' || *jobs > '9' || *end || v > AUDIT_MAX_JOBS)
			return cli_usage_error("audit", "--jobs: expected 1..%d, got '%s'", AUDIT_MAX_JOBS, jobs);
		o.jobs = (unsigned)v;
	}
	if (accept_weak && attest_weakness_parse(accept_weak, &o.accept_weak, &e) < 0)
		return cli_usage_error("audit", "--accept-weak: %s", e.msg);
	o.mixed_ok = mixed.v, o.n_mixed_ok = mixed.n;
	if (optind != argc)
		return cli_usage_error("audit", "unexpected argument '%s'", argv[optind]);
	if (!o.keyring || !o.manifests_dir || !o.reports_dir)
		return cli_usage_error("audit", "--keyring, --manifests and --reports are required");
	if (json_out && html_out)
		return cli_usage_error("audit", "give --json or --html, not both");

	/* whatever failed (an envelope kind included: a firmware reference
	 * that is no file), the audit did not run: 3, never a verdict's status */
	if (audit_run(&o, &res, &e) < 0) {
		e.kind = 0;
		return cli_error(&e, AUDIT_EXIT_CANNOT);
	}
	if (json_out && !strcmp(json_out, "-")) {
		if (audit_write_json(res, stdout, &e) < 0)
			return cli_error(&e, AUDIT_EXIT_CANNOT);
	} else {
		audit_print_table(res, stdout);
		if (json_out && audit_save_json(res, json_out, &e) < 0)
			return cli_error(&e, AUDIT_EXIT_CANNOT);
		if (html_out && audit_write_html(res, html_out, &e) < 0)
			return cli_error(&e, AUDIT_EXIT_CANNOT);
	}
	if (fflush(stdout) != 0)
		return cli_error(&(ingot_error){ .msg = "audit: cannot write to standard output" },
				 AUDIT_EXIT_CANNOT);
	switch (audit_worst_class(res)) {
	case AUDIT_HEALTHY: return AUDIT_EXIT_HEALTHY;
	case AUDIT_UNVERIFIED: return AUDIT_EXIT_UNVERIFIED;
	case AUDIT_DRIFT: return AUDIT_EXIT_DRIFT;
	default: return AUDIT_EXIT_FORGED;
	}
}
