/* ingot attest: TPM 2.0 measurement, attestation keys, quotes and event
 * logs.  Each subcommand parses its arguments, calls the attest/ library
 * and prints. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attest/eventlog.h"
#include "attest/judge.h"
#include "attest/measure.h"
#include "attest/nonce.h"
#include "attest/pcrs.h"
#include "attest/predict.h"
#include "attest/quote.h"
#include "attest/tpm.h"
#include "attest/verdict.h"
#include "cli/cli.h"
#include "keys/enrolment.h"
#include "keys/envelope.h"
#include "keys/firmware-ref-envelope.h"
#include "keys/keyring.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/strbuf.h"
#include "server/client.h"
#include "verify/boot-inputs.h"

/* Exit statuses beyond cli.h's. */
enum {
	ATTEST_REFUSED = 2,     /* a quote or event log does not verify */
	ATTEST_NONCE_REUSED = 3,
	ATTEST_NO_TPM = 4,
	ATTEST_UNVERIFIED = 5,
};

static const struct cli_command attest_cmd = {
	.name = "attest",
	.summary = "TPM 2.0 measurement, quotes and event logs",
	.synopsis =
"    ingot attest measure --manifest FILE [--pcr N] [--log FILE] [--tcti TCTI]\n"
"    ingot attest predict --manifest FILE [--pcr N]\n"
"    ingot attest ak create -o DIR [--alg ecc|rsa] [--hierarchy owner|endorsement]\n"
"                           [--tcti TCTI]\n"
"    ingot attest quote --nonce HEX --pcrs SEL [--ak DIR] [--tcti TCTI] -o FILE\n"
"    ingot attest import -m MSG -s SIG -f PCRS -u AK_PUB -o FILE\n"
"                        (ingot attest import --help)\n"
"    ingot attest verify-quote QUOTE --nonce HEX [--ak-pub PEM] [--pcrs SEL]\n"
"                              [--seen-nonces FILE] [--accept-weak LIST] [--json]\n"
"    ingot attest verify-quote QUOTE --accept-weak no-nonce[,...] [--ak-pub PEM]\n"
"                              [--pcrs SEL] [--json]\n"
"    ingot attest boot-check QUOTE LOG --manifest ENVELOPE --keyring FILE --nonce HEX\n"
"                            [--enrolment FILE] [--firmware-ref FILE] [--node ID]\n"
"                            [--enrolment-keyring FILE] [--firmware-ref-keyring FILE]\n"
"                            [--seen-nonces FILE] [--accept-weak LIST]\n"
"    ingot attest firmware-ref QUOTE LOG --platform NAME --nonce HEX --enrolment FILE\n"
"                              --keyring FILE|--enrolment-keyring FILE --key KEY -o FILE\n"
"    ingot attest eventlog LOG [--json] [--against QUOTE [--nonce HEX]\n"
"                              [--ak-pub PEM] [--accept-weak LIST]] [--pcrs SEL]\n"
"    ingot attest push --verifier URL [--via PORT] [--node ID] [--ak DIR]\n"
"                      [--tcti TCTI] [--eventlog FILE] [--report FILE]\n"
"    ingot attest fetch-manifest --verifier URL --pool POOL --keyring FILE -o FILE\n"
"                              (ingot attest fetch-manifest --help)\n"
"    ingot attest enroll request|challenge|answer|finish|check ...\n"
"                              (ingot attest enroll --help)\n",
	.description =
"    measure extends a PCR (default 15, or the manifest's measurement.pcr) in\n"
"    every active bank with that bank's hash of the image's event data\n"
"        ingot:v1 image=NAME sha256=IMAGE verity=ROOT manifest=CONTENT\n"
"    and appends the matching EV_IPL event to ingot's event log, a TCG\n"
"    crypto-agile log that tpm2_eventlog reads. The new log is written beside\n"
"    the old one, the PCR is extended, then the log is renamed into place: an\n"
"    interrupted measure leaves the PCR and the log disagreeing, which replay\n"
"    reports. When they already disagree before measuring, a warning says so.\n"
"\n"
"    predict prints the manifest's \"measurement\" object as recomputed from its\n"
"    content: the event data, per-bank digests and the PCR values expected\n"
"    after measuring it into a reset PCR.\n"
"\n"
"    boot-check judges a measured boot (docs/attest.md \"Measured boot\"): a\n"
"    quote of sha256 PCRs 0,2,4,7,9,11,12,15 and the firmware event log of a\n"
"    node booted from the UKI of the signed manifest (verified against the\n"
"    keyring). The quote must be signed by the AK of the signed enrolment\n"
"    record (the AK a quote carries proves nothing; without --enrolment the\n"
"    verdict is at best \"unverified\"), over the nonce; the log\n"
"    must replay to the quoted PCRs, every event's data hash to its digest,\n"
"    every PCR 4 event be allowed by its digest (separator, known actions, the\n"
"    UKI then its kernel), PCR 7 show Secure Boot on with the manifest's\n"
"    signer (boot.secure_boot), PCRs 0 and 2 equal the signed firmware\n"
"    reference, PCR 11 the prediction, PCR 12 reset, PCR 15 the image's one\n"
"    event. Without a firmware reference or a Secure Boot signer the\n"
"    weakness (unknown-firmware, secure-boot-unjudged) is refused unless\n"
"    accepted by name. Prints one line \"boot admit|refuse|unverified|not-made:\n"
"    REASON\". The same verdict as ingot verify and ingot audit.\n"
"    Each signed input is verified against the keys of its own role only\n"
"    (docs/signing.md \"Trust roles\"): --keyring, untyped, vouches for the\n"
"    manifest only; a keyring with roles for each role it names;\n"
"    --enrolment-keyring and --firmware-ref-keyring name those roles' keys.\n"
"    A role no keyring gives keys verifies nothing: its record is refused.\n"
"\n"
"    firmware-ref records a platform's firmware reference from a reference\n"
"    boot: the quote is judged with the enrolled AK and the nonce, the log\n"
"    must replay to the quoted PCRs 0, 2 and 7; PCRs 0 and 2 and the PCR 7\n"
"    Secure Boot variables and authorities are written as a signed\n"
"    ingot.firmware-ref/v1 statement (DSSE, signed with --key).\n"
"\n"
"    ak create makes an attestation key: a restricted signing key (ECC P-256\n"
"    with ECDSA-SHA256, or RSA-2048 with RSASSA-SHA256) under a primary key\n"
"    derived from the owner (default) or endorsement hierarchy, and saves\n"
"    DIR/ak.json, ak.pub, ak.priv (wrapped by the TPM) and ak.pub.pem.\n"
"\n"
"    quote asks the TPM for a quote over the PCRs SEL with the nonce as\n"
"    qualifying data, signed by the AK, and writes the quote document (JSON:\n"
"    TPMS_ATTEST and TPMT_SIGNATURE as returned, the PCR values, the AK's PEM,\n"
"    the nonce).\n"
"\n"
"    import turns a quote made by tpm2-tools (tpm2_quote's -m, -s and -o\n"
"    files, the AK from tpm2_readpublic) into a quote document that\n"
"    verify-quote reads; its options are its own (ingot attest import --help).\n"
"\n"
"    verify-quote checks a quote offline: the AK signature over TPMS_ATTEST,\n"
"    TPM_GENERATED_VALUE, TPM_ST_ATTEST_QUOTE, the nonce, that the quoted PCR\n"
"    selection is the reported one, and the PCR digest. ECDSA, RSASSA and\n"
"    RSA-PSS signatures verify (PSS: the salt length the signature has).\n"
"    With --seen-nonces a nonce already listed is refused and an accepted one\n"
"    is recorded. It\n"
"    prints the AK's id (sha256 of its DER public key, as 'ingot keys id').\n"
"    Weak evidence verifies as tpm2_checkquote would but is refused unless\n"
"    accepted by name: 'sha1-signature' (signed over a SHA-1 digest) and\n"
"    'no-nonce' (empty qualifying data, or no --nonce given: --nonce is\n"
"    optional only with --accept-weak no-nonce, and --seen-nonces needs it).\n"
"\n"
"    eventlog parses a TCG event log, crypto-agile or SHA1 (TCG 1.2 format)\n"
"    (binary_bios_measurements or ingot's own), replays it and prints the PCR\n"
"    values exactly as tpm2_eventlog prints its \"pcrs:\". --against compares\n"
"    them with a quote's PCRs (the quote is judged first, as by verify-quote)\n"
"    and names the first divergent event.\n",
	.more =
"EXIT STATUS\n"
"    0   success (quote valid, log replays to the quoted PCRs; boot admitted)\n"
"    1   error: unreadable or malformed input file, TPM command failed, a\n"
"        boot check not made\n"
"    2   refused: the quote does not verify, the log disagrees with it, the\n"
"        boot is refused\n"
"    3   nonce reuse (listed in --seen-nonces)\n"
"    4   no TPM: the TCTI cannot be loaded or reached, or no AK in --ak\n"
"    5   unverified: boot-check without a valid enrolled AK\n"
"    64  usage error\n"
"\n"
"EXAMPLES\n"
"    ingot attest measure --manifest out/h100.manifest.json\n"
"    ingot attest ak create -o /var/lib/ingot/ak\n"
"    ingot attest quote --nonce $(openssl rand -hex 32) --pcrs sha256:0-7,15 -o q.json\n"
"    tpm2_quote -c ak.ctx -l sha256:0-7,15 -q $NONCE -m msg -s sig -o pcrs\n"
"    ingot attest import -m msg -s sig -f pcrs -u ak.pub -o q.json\n"
"    ingot attest verify-quote q.json --nonce $NONCE --ak-pub ak.pub.pem \\\n"
"        --seen-nonces seen.txt\n"
"    ingot attest eventlog /sys/kernel/security/tpm0/binary_bios_measurements\n"
"    ingot attest eventlog /var/lib/ingot/eventlog.bin --against q.json --nonce $NONCE\n",
};

struct args {
	const char *sub;
	const char *manifest, *log, *tcti, *output, *alg, *hierarchy, *ak, *nonce, *pcrs;
	const char *ak_pub, *seen, *against;
	const char *keyring, *enrolment, *firmware_ref, *node, *platform, *key;
	const char *enrolment_keyring, *firmware_ref_keyring;
	const char *verifier, *via, *eventlog, *report;
	const char *pcr_arg, *accept_weak_arg;
	int pcr;
	bool json;
	unsigned accept_weak;   /* enum attest_weakness bits */
	char **pos;     /* positional arguments after the subcommand */
	int npos;
};

/* Which options each subcommand takes (by long name). */
static int allowed(const char *sub, const char *opt)
{
	static const struct { const char *sub, *opts; } table[] = {
		{ "measure", " manifest pcr log tcti " },
		{ "predict", " manifest pcr " },
		{ "ak", " output alg hierarchy tcti " },
		{ "quote", " nonce pcrs ak tcti output " },
		{ "verify-quote", " nonce ak-pub pcrs seen-nonces json accept-weak " },
		{ "eventlog", " json against nonce ak-pub pcrs accept-weak " },
		{ "boot-check", " manifest nonce keyring enrolment firmware-ref node seen-nonces accept-weak "
				"enrolment-keyring firmware-ref-keyring " },
		{ "firmware-ref", " nonce platform enrolment keyring enrolment-keyring key output " },
		{ "push", " verifier via node ak tcti eventlog report " },
	};
	char word[64];

	if (snprintf(word, sizeof(word), " %s ", opt) >= (int)sizeof(word))
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(table); i++)
		if (!strcmp(table[i].sub, sub))
			return strstr(table[i].opts, word) != NULL;
	return 0;
}

/* After cli_parse: refuse the options that are not a->sub's, and convert
 * --pcr and --accept-weak. */
static int check_args(const struct cli_option *opts, struct args *a)
{
	for (const struct cli_option *o = opts; o->type != CLI_OPT_END; o++) {
		bool set = o->type == CLI_OPT_FLAG ? *(bool *)o->value : *(const char **)o->value != NULL;
		if (set && !allowed(a->sub, o->long_name))
			return cli_usage_error("attest", "%s: option '--%s' does not apply", a->sub,
					       o->long_name);
	}
	if (a->pcr_arg) {
		char *end;
		long v = strtol(a->pcr_arg, &end, 10);
		if (*a->pcr_arg < '0' || *a->pcr_arg > '9' || *end || v >= PCR_COUNT)
			return cli_usage_error("attest", "--pcr: expected 0-%d, got '%s'", PCR_COUNT - 1,
					       a->pcr_arg);
		a->pcr = (int)v;
	}
	if (a->accept_weak_arg) {
		ingot_error e = { 0 };
		if (attest_weakness_parse(a->accept_weak_arg, &a->accept_weak, &e) < 0)
			return cli_usage_error("attest", "--accept-weak: %s", e.msg);
	}
	return 0;
}

static int print_json(const json_t *j)
{
	_cleanup_free_ char *s = json_canonical(j, NULL);
	if (!s) {
		fprintf(stderr, "ingot: out of memory\n");
		return EXIT_FAILURE_;
	}
	fputs(s, stdout);
	return EXIT_OK;
}

/* Exit status for a failure to open the TPM or load the AK. */
static int tpm_status(const ingot_error *e)
{
	return cli_error(e, e->code == -ENODEV || e->code == -ENOENT ? ATTEST_NO_TPM : EXIT_FAILURE_);
}

static int open_tpm(const struct args *a, struct tpm **t)
{
	ingot_error e = { 0 };

	/* tpm2-tss logs its own errors to stderr; ingot reports them itself. */
	setenv("TSS2_LOG", "all+none", 0);
	if (tpm_open(a->tcti, t, &e) < 0)
		return tpm_status(&e);
	return EXIT_OK;
}

static int load_manifest(const char *path, json_t **m)
{
	ingot_error e = { 0 };

	if (json_read_file(path, m, &e) < 0)
		return cli_error(&e, EXIT_FAILURE_);
	return EXIT_OK;
}

/* "sha256:15=<hex>" per bank. */
static void print_bank_values(const struct pcr_values *v, unsigned pcr)
{
	for (size_t i = 0; i < v->nbanks; i++) {
		char hex[2 * BANK_MAX_DIGEST + 1];
		hex_encode(v->banks[i].value[pcr], v->banks[i].bank->size, hex);
		printf("%s:%u=%s\n", v->banks[i].bank->name, pcr, hex);
	}
}

static int do_measure(const struct args *a)
{
	_cleanup_json_ json_t *m = NULL;
	_cleanup_strbuf_ struct strbuf ev = STRBUF_INIT;
	_cleanup_tpm_ struct tpm *t = NULL;
	struct measure_result res;
	ingot_error e = { 0 };
	int rc;

	if (!a->manifest)
		return cli_usage_error("attest", "measure: --manifest is required");
	if (a->npos)
		return cli_usage_error("attest", "measure: unexpected argument '%s'", a->pos[0]);
	if ((rc = load_manifest(a->manifest, &m)))
		return rc;
	/* A bad manifest is reported as such, before any TPM is involved. */
	strbuf_init(&ev, 256);
	if (attest_event_data_from_manifest(m, &ev, &e) < 0)
		return cli_error(&e, EXIT_FAILURE_);
	if ((rc = open_tpm(a, &t)))
		return rc;
	if (attest_measure(t, m, a->pcr, a->log ? a->log : ATTEST_DEFAULT_LOG, &res, &e) < 0)
		return cli_error(&e, EXIT_FAILURE_);
	if (!res.agreed_before)
		fprintf(stderr, "ingot: warning: before measuring, the log and PCR %u already disagreed: %s\n",
			res.pcr, res.before.msg);
	print_bank_values(&res.after, res.pcr);
	return EXIT_OK;
}

static int do_predict(const struct args *a)
{
	_cleanup_json_ json_t *m = NULL, *meas = NULL;
	ingot_error e = { 0 };
	int rc;

	if (!a->manifest)
		return cli_usage_error("attest", "predict: --manifest is required");
	if (a->npos)
		return cli_usage_error("attest", "predict: unexpected argument '%s'", a->pos[0]);
	if ((rc = load_manifest(a->manifest, &m)))
		return rc;
	meas = attest_measurement_for_manifest(m, a->pcr, &e);
	if (!meas)
		return cli_error(&e, EXIT_FAILURE_);
	return print_json(meas);
}

static int do_ak(const struct args *a)
{
	_cleanup_tpm_ struct tpm *t = NULL;
	enum ak_alg alg = AK_ECC_P256;
	enum ak_hierarchy h = AK_OWNER;
	ingot_error e = { 0 };
	int rc;

	if (a->npos != 1 || strcmp(a->pos[0], "create"))
		return cli_usage_error("attest", "ak: expected 'ak create -o DIR'");
	if (!a->output)
		return cli_usage_error("attest", "ak create: -o DIR is required");
	if (a->alg && ak_alg_parse(a->alg, &alg) < 0)
		return cli_usage_error("attest", "ak create: --alg: expected ecc or rsa, got '%s'", a->alg);
	if (a->hierarchy && ak_hierarchy_parse(a->hierarchy, &h) < 0)
		return cli_usage_error("attest", "ak create: --hierarchy: expected owner or endorsement, got '%s'",
				       a->hierarchy);
	if ((rc = open_tpm(a, &t)))
		return rc;
	if (tpm_ak_create(t, a->output, alg, h, &e) < 0)
		return cli_error(&e, EXIT_FAILURE_);
	printf("%s/ak.pub.pem\n", a->output);
	return EXIT_OK;
}

/* --nonce, decoded once: what follows gets its bytes. */
static int parse_nonce(const struct args *a, struct nonce *n)
{
	ingot_error e = { 0 };

	if (nonce_decode(a->nonce, n, &e) < 0)
		return cli_usage_error("attest", "%s: %s", a->sub, e.msg);
	return EXIT_OK;
}

static int parse_pcrs(const struct args *a, struct pcr_selection *sel)
{
	ingot_error e = { 0 };

	if (pcr_selection_parse(a->pcrs, sel, &e) < 0)
		return cli_usage_error("attest", "%s: --pcrs: %s", a->sub, e.msg);
	return EXIT_OK;
}

static int do_quote(const struct args *a)
{
	_cleanup_tpm_ struct tpm *t = NULL;
	_cleanup_json_ json_t *q = NULL;
	struct pcr_selection sel;
	struct nonce nonce;
	ingot_error e = { 0 };
	int rc;

	if (!a->nonce || !a->pcrs || !a->output)
		return cli_usage_error("attest", "quote: --nonce, --pcrs and -o are required");
	if (a->npos)
		return cli_usage_error("attest", "quote: unexpected argument '%s'", a->pos[0]);
	if ((rc = parse_nonce(a, &nonce)) || (rc = parse_pcrs(a, &sel)) || (rc = open_tpm(a, &t)))
		return rc;
	if (tpm_quote(t, a->ak ? a->ak : DEFAULT_AK_DIR, nonce.bytes, nonce.len, &sel, &q, &e) < 0)
		return tpm_status(&e);
	if (json_write_file(a->output, q, 0644, &e) < 0)
		return cli_error(&e, EXIT_FAILURE_);
	return EXIT_OK;
}

/* Load the quote document at path and the trusted AK, and judge them
 * against x (attest/judge.h; its ak_pem is ak_pub's content).  Prints the
 * reason on refusal and returns the exit status. */
static int judge_quote_file(const char *path, const char *ak_pub, const struct attest_expect *x,
			    json_t **q, struct quote_info *qi)
{
	_cleanup_free_ char *pem = NULL;
	struct attest_expect with_ak = *x;
	ingot_error e = { 0 };
	size_t len;

	if (json_read_file(path, q, &e) < 0)
		return cli_error(&e, EXIT_FAILURE_);
	if (ak_pub && read_file(ak_pub, 1 << 16, &pem, &len, &e) < 0)
		return cli_error(&e, EXIT_FAILURE_);
	with_ak.ak_pem = pem;
	if (attest_judge(*q, &with_ak, qi, &e) == 0)
		return EXIT_OK;
	/* A check that could not be made, or a log that cannot be compared
	 * at all, is an error, not a refusal. */
	if (qi->reason == VERDICT_NOT_MADE || (qi->reason == VERDICT_LOG_MISMATCH && e.code != -EBADMSG))
		return cli_error(&e, EXIT_FAILURE_);
	fprintf(stderr, "ingot: %s: quote refused (%s): %s\n", path, attest_verdict_name(qi->reason), e.msg);
	return qi->reason == VERDICT_NONCE_REUSED ? ATTEST_NONCE_REUSED : ATTEST_REFUSED;
}

static json_t *weakness_json(unsigned weak)
{
	json_t *a = json_array();

	for (unsigned bit = 1; bit <= WEAK_LAST; bit <<= 1)
		if (weak & bit)
			json_array_append_new(a, json_string(attest_weakness_name(bit)));
	return a;
}

static int do_verify_quote(const struct args *a)
{
	_cleanup_json_ json_t *q = NULL;
	_cleanup_strbuf_ struct strbuf weak = STRBUF_INIT;
	struct pcr_selection want = { 0 };
	struct nonce nonce;
	struct attest_expect x = { .nonce = a->nonce ? &nonce : NULL, .seen_nonces = a->seen,
				   .accept_weak = a->accept_weak };
	struct quote_info qi;
	int rc;

	if (a->npos != 1)
		return cli_usage_error("attest", "verify-quote: expected one QUOTE file");
	if (!a->nonce && !(a->accept_weak & WEAK_NO_NONCE))
		return cli_usage_error("attest", "verify-quote: --nonce is required (or --accept-weak no-nonce)");
	if ((a->nonce && (rc = parse_nonce(a, &nonce))) || (a->pcrs && (rc = parse_pcrs(a, &want))))
		return rc;
	if (a->seen && !a->nonce)
		return cli_usage_error("attest", "verify-quote: --seen-nonces needs --nonce");
	x.cover = a->pcrs ? &want : NULL;
	if ((rc = judge_quote_file(a->pos[0], a->ak_pub, &x, &q, &qi)))
		return rc;
	const char *nonce_hex = json_string_value(json_object_get(q, "nonce"));
	if (a->json) {
		_cleanup_json_ json_t *j = NULL;
		char fw[17];

		snprintf(fw, sizeof(fw), "%016llx", (unsigned long long)qi.firmware_version);
		j = json_pack("{s:b, s:s, s:s, s:o, s:I, s:I, s:I, s:b, s:s, s:o}", "valid", 1, "nonce", nonce_hex,
			      "ak_id", qi.ak_id, "weaknesses", weakness_json(qi.weak),
			      "clock", (json_int_t)qi.clock, "reset_count", (json_int_t)qi.reset_count,
			      "restart_count", (json_int_t)qi.restart_count, "safe", qi.safe,
			      "firmware_version", fw, "pcrs", pcr_values_to_json(&qi.pcrs));
		return j ? print_json(j) : EXIT_FAILURE_;
	}
	attest_weakness_format(qi.weak, &weak);
	printf("quote ok: nonce %s, clock %llu, resetCount %u, restartCount %u, safe %s, firmware %016llx, ak %s%s%s\n",
	       nonce_hex[0] ? nonce_hex : "(none)", (unsigned long long)qi.clock, qi.reset_count, qi.restart_count,
	       qi.safe ? "yes" : "no", (unsigned long long)qi.firmware_version, qi.ak_id,
	       weak.len ? ", accepted weaknesses " : "", weak.len ? weak.buf : "");
	return EXIT_OK;
}

static int print_replay(const struct args *a, const struct eventlog *log, const struct pcr_values *replayed)
{
	if (a->json) {
		_cleanup_json_ json_t *j = eventlog_to_json(log, replayed);
		return j ? print_json(j) : EXIT_FAILURE_;
	}
	_cleanup_strbuf_ struct strbuf s = STRBUF_INIT;
	strbuf_init(&s, 4096);
	strbuf_addstr(&s, "pcrs:\n");
	pcr_values_format_yaml(replayed, &s);
	fputs(s.buf, stdout);
	return EXIT_OK;
}

static int do_eventlog(const struct args *a)
{
	struct eventlog log;
	struct pcr_values replayed;
	struct pcr_selection sel;
	ingot_error e = { 0 };
	struct nonce nonce;
	int rc = EXIT_OK;

	if (a->npos != 1)
		return cli_usage_error("attest", "eventlog: expected one LOG file");
	if ((a->nonce || a->ak_pub || a->accept_weak) && !a->against)
		return cli_usage_error("attest", "eventlog: --nonce, --ak-pub and --accept-weak apply to --against");
	if ((a->pcrs && (rc = parse_pcrs(a, &sel))) || (a->nonce && (rc = parse_nonce(a, &nonce))))
		return rc;
	if (eventlog_load(a->pos[0], &log, &e) < 0)
		return cli_error(&e, EXIT_FAILURE_);
	if (eventlog_replay(&log, &replayed, &e) < 0)
		rc = cli_error(&e, EXIT_FAILURE_);
	else
		rc = print_replay(a, &log, &replayed);
	if (rc == EXIT_OK && a->against) {
		_cleanup_json_ json_t *q = NULL;
		struct quote_info qi;
		struct attest_expect x = { .nonce = a->nonce ? &nonce : NULL, .log = &log, .log_sel = a->pcrs ? &sel : NULL,
					   .accept_weak = a->accept_weak };

		rc = judge_quote_file(a->against, a->ak_pub, &x, &q, &qi);
		if (rc == EXIT_OK)
			fprintf(stderr, "ingot: %s: replay matches the quoted PCRs of %s\n", a->pos[0], a->against);
	}
	eventlog_free(&log);
	return rc;
}

/* A signed document that does not verify: refused when its signatures,
 * expiry or rollback fail, an error when it cannot be read or parsed.
 * The envelope's own exit classes are not attest's. */
static int trust_status(const ingot_error *e)
{
	ingot_error copy = *e;

	copy.kind = 0;
	return cli_error(&copy, e->kind == ENVELOPE_FAIL_IO || e->kind == ENVELOPE_FAIL_MALFORMED ||
					e->kind == 0 ? EXIT_FAILURE_ : ATTEST_REFUSED);
}

/* The usage checks of boot-check and firmware-ref, then the keyring, the
 * enrolment record and the evidence through the one loader
 * (verify/boot-inputs.h). */
static int load_boot_inputs(const struct args *a, struct boot_trust *t, struct boot_proof *p)
{
	struct nonce nonce;
	ingot_error e = { 0 };
	int rc;

	memset(t, 0, sizeof(*t));
	memset(p, 0, sizeof(*p));
	/* boot-check without an enrolment judges everything else and says
	 * "unverified"; a reference is only recorded from an enrolled AK. */
	if (a->npos != 2 || !a->nonce || !(a->keyring || a->enrolment_keyring) ||
	    (!a->enrolment && !strcmp(a->sub, "firmware-ref")))
		return cli_usage_error("attest", "%s: expected QUOTE LOG --nonce HEX --keyring FILE --enrolment FILE",
				       a->sub);
	if (a->seen && !a->nonce)
		return cli_usage_error("attest", "%s: --seen-nonces needs --nonce", a->sub);
	if ((rc = parse_nonce(a, &nonce)))
		return rc;
	struct boot_keyrings k = { .keyring = a->keyring };
	k.role[KEY_ROLE_ENROLMENT] = a->enrolment_keyring;
	k.role[KEY_ROLE_FIRMWARE_REF] = a->firmware_ref_keyring;
	if (boot_trust_init(t, &k, &e) < 0)
		return cli_error(&e, EXIT_FAILURE_);
	if (a->enrolment && boot_trust_add_enrolment(t, a->enrolment, &e) < 0)
		return trust_status(&e);
	if (boot_proof_load(p, a->pos[0], a->pos[1], &nonce, &e) < 0)
		return cli_error(&e, EXIT_FAILURE_);
	return EXIT_OK;
}

/* boot-check: the one verdict (attest/verdict.h) on a verified manifest,
 * the enrolled AK and the firmware reference. */
static int do_boot_check(const struct args *a)
{
	static const int status[] = {
		[BOOT_ADMIT] = EXIT_OK, [BOOT_REFUSE] = ATTEST_REFUSED,
		[BOOT_UNVERIFIED] = ATTEST_UNVERIFIED, [BOOT_NOT_MADE] = EXIT_FAILURE_,
	};
	struct boot_trust t;
	struct boot_proof p;
	struct boot_evidence ev;
	struct boot_result res;
	ingot_error e = { 0 };
	int rc;

	if (!a->manifest)
		return cli_usage_error("attest", "boot-check: --manifest ENVELOPE is required");
	if ((rc = load_boot_inputs(a, &t, &p)))
		goto out;
	/* The manifest as `ingot verify-manifest` checks it: signatures,
	 * statement, schema, expiry. */
	if (boot_trust_add_manifest(&t, a->manifest, time(NULL), &e) < 0 ||
	    (a->firmware_ref && boot_trust_add_firmware_ref(&t, a->firmware_ref, &e) < 0)) {
		rc = trust_status(&e);
		goto out;
	}
	/* Each named once: judged as given, so a reference the quote
	 * contradicts is refused by its PCRs, not passed over. */
	struct boot_pick pick = { .ak = t.n_en ? &t.ak[0] : NULL, .manifest = t.mf[0], .fw = t.n_fw ? &t.fw[0] : NULL };
	boot_inputs_evidence(&p, &pick, a->node, a->accept_weak, &ev);
	ev.seen_nonces = a->seen;
	attest_boot_verdict(&ev, &res);
	printf("boot %s: %s\n", boot_verdict_name(res.verdict), res.reason);
	rc = res.quote_reason == VERDICT_NONCE_REUSED ? ATTEST_NONCE_REUSED : status[res.verdict];
out:
	boot_trust_release(&t);
	boot_proof_release(&p);
	return rc;
}

/* firmware-ref: PCRs 0, 2 and the PCR 7 Secure Boot state of a reference
 * boot, from a quote judged with the enrolled AK, signed. */
static int do_firmware_ref(const struct args *a)
{
	_cleanup_signing_key_ struct signing_key *k = NULL;
	_cleanup_json_ json_t *env = NULL;
	struct boot_trust t;
	struct boot_proof p;
	struct firmware_ref fw;
	struct quote_info qi;
	struct pcr_selection cover = { 0 };
	ingot_error e = { 0 };
	int rc;

	if (!a->platform || !a->key || !a->output)
		return cli_usage_error("attest", "firmware-ref: --platform, --key and -o are required");
	if ((rc = load_boot_inputs(a, &t, &p)))
		goto out;
	if (signing_key_load(a->key, &k, &e) < 0) {
		rc = cli_error(&e, EXIT_FAILURE_);
		goto out;
	}
	pcr_selection_add(&cover, 0x000b, 1u << BOOT_PCR_FIRMWARE | 1u << BOOT_PCR_OPTION_ROMS | 1u << BOOT_PCR_SECURE_BOOT);
	struct attest_expect x = { .nonce = &p.nonce, .ak_pem = t.ak[0].pem, .cover = &cover };
	if (attest_judge(p.quote, &x, &qi, &e) < 0) {
		fprintf(stderr, "ingot: %s: quote refused (%s): %s\n", a->pos[0], attest_verdict_name(qi.reason), e.msg);
		rc = ATTEST_REFUSED;
		goto out;
	}
	if (firmware_ref_record(a->platform, &p.log, &qi.pcrs, &fw, &e) < 0) {
		rc = cli_error(&e, e.code == -EBADMSG ? ATTEST_REFUSED : EXIT_FAILURE_);
		goto out;
	}
	if (firmware_ref_sign(&fw, k, &env, &e) < 0 ||
	    json_write_file_as(a->output, env, envelope_canonical, 0644, &e) < 0) {
		rc = cli_error(&e, EXIT_FAILURE_);
		goto out;
	}
	printf("firmware reference %s: PCR 0, 2 and %zu Secure Boot variables, %zu authorities -> %s\n", fw.platform,
	       fw.nvars, fw.nauth, a->output);
out:
	boot_trust_release(&t);
	boot_proof_release(&p);
	return rc;
}

/* push: the node's side of the verifier (server/client.h): a nonce from
 * the service, a quote of the boot PCRs over it, the quote, the firmware
 * log and the report sent; the service's verdict decides the status. */
static int do_push(const struct args *a)
{
	static const struct { const char *name; int status; } st[] = {
		{ "admit", EXIT_OK }, { "refuse", ATTEST_REFUSED }, { "unverified", ATTEST_UNVERIFIED },
	};
	_cleanup_tpm_ struct tpm *t = NULL;
	_cleanup_json_ json_t *q = NULL, *report = NULL;
	_cleanup_free_ char *log = NULL;
	char hex[2 * NONCE_MAX + 1], host[256];
	struct verifier_verdict v;
	struct verifier s = { .via = -1, .lfd = -1, .conn = -1 };
	struct pcr_selection sel;
	ingot_error e = { 0 };
	uint8_t nonce[NONCE_MAX];
	size_t nlen, loglen;
	const char *node = a->node;
	int rc;

	if (!a->verifier || a->npos)
		return cli_usage_error("attest", "push: expected --verifier URL and no arguments");
	if (!node) {
		if (gethostname(host, sizeof(host)) < 0)
			return cli_usage_error("attest", "push: no --node and no host name");
		host[sizeof(host) - 1] = '\0';
		node = host;
	}
	/* Everything local first: a node that cannot quote asks for nothing. */
	if (read_file(a->eventlog ? a->eventlog : "/sys/kernel/security/tpm0/binary_bios_measurements",
		      EVENTLOG_MAX_BYTES, &log, &loglen, &e) < 0 ||
	    (a->report && json_read_file(a->report, &report, &e) < 0))
		return cli_error(&e, EXIT_FAILURE_);
	if ((rc = open_tpm(a, &t)))
		return rc;
	/* One session: the nonce and the evidence on one connection, which
	 * is all a --via stream carries. */
	if (verifier_open(&s, a->verifier, a->via, &e) < 0 || verifier_nonce(&s, node, 30, hex, &e) < 0 ||
	    nonce_parse(hex, nonce, &nlen, &e) < 0)
		goto refused;
	pcr_selection_parse(BOOT_QUOTE_PCRS, &sel, NULL);
	if (tpm_quote(t, a->ak ? a->ak : DEFAULT_AK_DIR, nonce, nlen, &sel, &q, &e) < 0) {
		verifier_close(&s);
		return tpm_status(&e);
	}
	if (verifier_evidence(&s, node, hex, q, log, loglen, report, 60, &v, &e) < 0)
		goto refused;
	verifier_close(&s);
	printf("boot %s: %s\n", v.verdict, v.reason);
	for (size_t i = 0; i < ARRAY_SIZE(st); i++)
		if (!strcmp(v.verdict, st[i].name))
			return st[i].status;
	return EXIT_FAILURE_;   /* not-made, or a word this ingot does not know: never a pass */
refused:
	verifier_close(&s);
	rc = e.kind == VERIFIER_FAIL_NONCE ? ATTEST_NONCE_REUSED : EXIT_FAILURE_;
	e.kind = 0;
	return cli_error(&e, rc);
}

int cmd_attest(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(const struct args *);
	} subs[] = {
		{ "measure", do_measure },
		{ "predict", do_predict },
		{ "ak", do_ak },
		{ "quote", do_quote },
		{ "verify-quote", do_verify_quote },
		{ "eventlog", do_eventlog },
		{ "boot-check", do_boot_check },
		{ "firmware-ref", do_firmware_ref },
		{ "push", do_push },
	};
	struct args a = { .pcr = -1 };
	int first, rc;

	const struct cli_option opts[] = {
		OPT_STRING(0, "manifest", &a.manifest, "FILE", "an image manifest (NAME.manifest.json)"),
		OPT_STRING(0, "pcr", &a.pcr_arg, "N", "PCR to measure into, 0-23"),
		OPT_STRING(0, "log", &a.log, "FILE", "ingot's event log (default " ATTEST_DEFAULT_LOG ")"),
		OPT_STRING(0, "tcti", &a.tcti, "TCTI",
			   "tpm2-tss TCTI: device:/dev/tpmrm0 (default),\n"
			   "swtpm:host=127.0.0.1,port=2321, ... ($INGOT_TCTI)"),
		OPT__OUTPUT(&a.output, "P",
			   "AK directory (ak create) or quote file (quote)"),
		OPT_STRING(0, "alg", &a.alg, "ALG", "AK algorithm: ecc (P-256, default) or rsa (2048)"),
		OPT_STRING(0, "hierarchy", &a.hierarchy, "H",
			   "AK primary's hierarchy: owner (default) or endorsement"),
		OPT_STRING(0, "ak", &a.ak, "DIR", "AK directory (default " DEFAULT_AK_DIR ")"),
		OPT_STRING(0, "nonce", &a.nonce, "HEX",
			   "8-64 bytes in hex; a verifier picks a fresh random one"),
		OPT_STRING(0, "pcrs", &a.pcrs, "SEL",
			   "PCR selection: BANK:LIST[+BANK:LIST], LIST being PCR\n"
			   "numbers, ranges or 'all', e.g. sha256:0-7,15+sha1:15.\n"
			   "verify-quote: the quote must cover these; eventlog: the\n"
			   "PCRs to compare (default: those the log extends)"),
		OPT_STRING(0, "ak-pub", &a.ak_pub, "PEM",
			   "verify-quote, eventlog: the AK public key to check the\n"
			   "signature with; without it the quote's own ak_pub\n"
			   "(consistency only). A diagnostic, not a trust root:\n"
			   "nothing shows either key is a TPM's (use boot-check)"),
		OPT__KEYRING(&a.keyring, "FILE",
			   "the manifest's trusted signers, or a keyring with roles\n"
			   "(manifest, enrolment, firmware-ref): each role's"),
		OPT_ROLE_KEYRINGS(&a.enrolment_keyring, &a.firmware_ref_keyring),
		OPT_STRING(0, "enrolment", &a.enrolment, "FILE",
			   "signed enrolment record of the node's AK (ingot attest\n"
			   "enroll); the only AK a boot quote is judged with"),
		OPT_STRING(0, "firmware-ref", &a.firmware_ref, "F",
			   "signed firmware reference of the node's platform"),
		OPT_STRING(0, "node", &a.node, "ID",
			   "the node the evidence is from (checked against the\n"
			   "enrolment)"),
		OPT_STRING(0, "platform", &a.platform, "NAME", "firmware-ref: the platform model's name"),
		OPT__KEY(0, &a.key, "firmware-ref: the signing key"),
		OPT_STRING(0, "seen-nonces", &a.seen, "F",
			   "file of nonces already accepted, one hex per line"),
		OPT_STRING(0, "against", &a.against, "QUOTE", "quote document to compare the replay with"),
		OPT_STRING(0, "accept-weak", &a.accept_weak_arg, "L",
			   "accept weak evidence: sha1-signature, no-nonce; for\n"
			   "boot-check also secure-boot-unjudged, unknown-firmware\n"
			   "(comma-separated)"),
		OPT__JSON(&a.json, "machine-readable output"),
		OPT_STRING(0, "verifier", &a.verifier, "URL",
			   "push: the verifier service (ingot serve), e.g.\n"
			   "http://127.0.0.1:8700"),
		OPT_STRING(0, "via", &a.via, "PORT",
			   "push: speak HTTP over this stream (a virtio-serial\n"
			   "port, e.g. /dev/virtio-ports/ingot.0) that a relay\n"
			   "carries to the verifier, instead of dialling the URL\n"
			   "(its host: numeric, it only names the Host header)"),
		OPT_STRING(0, "eventlog", &a.eventlog, "FILE",
			   "push: the firmware event log to send (default\n"
			   "/sys/kernel/security/tpm0/binary_bios_measurements)"),
		OPT_STRING(0, "report", &a.report, "FILE", "push: the node report (ingot verify --json) to send"),
		OPT_END(),
	};

	if (argc >= 2 && !strcmp(argv[1], "enroll"))
		return cmd_attest_enroll(argc - 1, argv + 1);   /* cli/cmd-enroll.c */
	if (argc >= 2 && !strcmp(argv[1], "import"))
		return cmd_attest_import(argc - 1, argv + 1);   /* cli/cmd-import.c */
	if (argc >= 2 && !strcmp(argv[1], "fetch-manifest"))
		return cmd_attest_fetch_manifest(argc - 1, argv + 1);   /* cli/cmd-fetch-manifest.c */
	if (cli_wants_help(argc, argv)) {
		cli_help(&attest_cmd, opts, stdout);
		return EXIT_OK;
	}
	if (argc < 2)
		return cli_usage_error("attest", "expected a subcommand: measure, predict, ak, quote, import, verify-quote, eventlog, boot-check, firmware-ref, enroll");
	for (size_t i = 0; i < ARRAY_SIZE(subs); i++) {
		if (strcmp(argv[1], subs[i].name))
			continue;
		/* The subcommand is argv[1]; its options and operands follow. */
		if ((rc = cli_parse(&attest_cmd, opts, argc - 1, argv + 1, &first)) >= 0)
			return rc;
		a.sub = argv[1];
		a.pos = argv + 1 + first;
		a.npos = argc - 1 - first;
		if ((rc = check_args(opts, &a)) != 0)
			return rc;
		return subs[i].fn(&a);
	}
	return cli_usage_error("attest", "unknown subcommand '%s'", argv[1]);
}
