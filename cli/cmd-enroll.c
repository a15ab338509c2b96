/* ingot attest enroll: prove an AK lives in a genuine TPM and record it
 * (attest/enroll.h for the protocol, keys/enrolment.h for the record). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attest/enroll.h"
#include "attest/tpm.h"
#include "cli/cli.h"
#include "keys/enrolment.h"
#include "keys/envelope.h"
#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/json.h"

#define DEFAULT_AK_DIR "/var/lib/ingot/ak"

enum {
	ENROLL_REFUSED = 2,   /* the request, answer or record is refused */
	ENROLL_NO_TPM = 4,
};

static const char enroll_help[] =
"NAME\n"
"    ingot attest enroll - prove that an attestation key lives in a genuine TPM\n"
"\n"
"SYNOPSIS\n"
"    ingot attest enroll request --node NAME [--ak DIR] [--ek-cert FILE]\n"
"                                [--tcti TCTI] -o REQUEST\n"
"    ingot attest enroll challenge REQUEST --ca BUNDLE --state DIR [--ttl SECONDS]\n"
"                                  -o CHALLENGE\n"
"    ingot attest enroll answer CHALLENGE [--ak DIR] [--tcti TCTI] -o ANSWER\n"
"    ingot attest enroll finish ANSWER --state DIR --key KEY -o RECORD\n"
"    ingot attest enroll check RECORD --keyring FILE\n"
"\n"
"DESCRIPTION\n"
"    Quotes count only when signed by an enrolled AK (docs/attest.md\n"
"    \"Enrolment\"). Enrolment is four steps, two on the node (request, answer:\n"
"    they use its TPM) and two on the verifier (challenge, finish: no TPM).\n"
"\n"
"    request writes the node's EK certificate (from the TPM's NV index\n"
"    0x01c00002, or --ek-cert) and the AK's public area (DIR/ak.pub). The EK\n"
"    re-derived from the TCG default RSA template must be the certified key.\n"
"\n"
"    challenge checks a request: the EK certificate must chain to a\n"
"    certificate in the CA bundle (the TPM vendors' roots and intermediates),\n"
"    the AK must be a restricted signing key that cannot leave the TPM\n"
"    (fixedTPM, fixedParent, sensitiveDataOrigin, userWithAuth, restricted,\n"
"    sign; not decrypt; name algorithm sha256/384/512). It then seals a fresh\n"
"    random secret to the EK, bound to the AK's name (TPM2_MakeCredential, in\n"
"    software), writes the challenge for the node and keeps its private state\n"
"    in DIR/ID.json, valid for --ttl seconds.\n"
"\n"
"    answer has the TPM recover the secret (TPM2_ActivateCredential with the\n"
"    AK and the EK): only the TPM that holds that EK and that AK can.\n"
"\n"
"    finish takes the challenge's state (renamed to DIR/ID.used, so each\n"
"    challenge is answered at most once, whatever the outcome), checks the\n"
"    answer is in time and carries the secret, and writes the enrolment\n"
"    record signed with KEY: a DSSE envelope of an in-toto statement\n"
"    (predicateType https://ingot.dev/enrolment/v1) naming the node, the AK's\n"
"    id and public key, its TPM name and the EK certificate's sha256.\n"
"\n"
"    check verifies a record's signatures against a keyring and prints what\n"
"    it enrols.\n"
"\n"
"OPTIONS\n"
"    --node NAME       the node's name, [A-Za-z0-9._:-], 1-255 characters\n"
"    --ak DIR          AK directory (default " DEFAULT_AK_DIR ")\n"
"    --ek-cert FILE    the EK certificate (PEM or DER) instead of the TPM's NV\n"
"    --tcti TCTI       tpm2-tss TCTI ($INGOT_TCTI; default device:/dev/tpmrm0)\n"
"    --ca BUNDLE       PEM file of the CA certificates EK certificates must\n"
"                      chain to\n"
"    --state DIR       the verifier's directory of pending challenges\n"
"    --ttl SECONDS     how long a challenge can be answered (default 300)\n"
"    --key KEY         the verifier's signing key (PEM; INGOT_KEY_PASSPHRASE)\n"
"    --keyring FILE    keys trusted to sign enrolment records\n"
"    -o, --output F    where to write the request, challenge, answer or record\n"
"    -h, --help        show this help\n"
"\n"
"EXIT STATUS\n"
"    0   success\n"
"    1   error: unreadable or malformed input, I/O, TPM command failed\n"
"    2   refused: EK certificate not from a trusted CA, not an attestation key,\n"
"        activation failed (another TPM or AK), challenge expired or already\n"
"        answered, record not signed by the keyring\n"
"    4   no TPM: the TCTI cannot be loaded or reached, or no AK in --ak\n"
"    64  usage error\n"
"\n"
"EXAMPLES\n"
"    node#     ingot attest enroll request --node gpu-07 -o req.json\n"
"    verifier$ ingot attest enroll challenge req.json --ca tpm-vendors.pem \\\n"
"                  --state /var/lib/ingot/enroll -o chal.json\n"
"    node#     ingot attest enroll answer chal.json -o ans.json\n"
"    verifier$ ingot attest enroll finish ans.json --state /var/lib/ingot/enroll \\\n"
"                  --key verifier.key -o gpu-07.enrolment.dsse.json\n";

enum {
	OPT_NODE = 256, OPT_AK, OPT_EK_CERT, OPT_TCTI, OPT_CA, OPT_STATE, OPT_TTL, OPT_KEY,
	OPT_KEYRING,
};

static const struct option enroll_opts[] = {
	{ "node", required_argument, NULL, OPT_NODE },
	{ "ak", required_argument, NULL, OPT_AK },
	{ "ek-cert", required_argument, NULL, OPT_EK_CERT },
	{ "tcti", required_argument, NULL, OPT_TCTI },
	{ "ca", required_argument, NULL, OPT_CA },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "ttl", required_argument, NULL, OPT_TTL },
	{ "key", required_argument, NULL, OPT_KEY },
	{ "keyring", required_argument, NULL, OPT_KEYRING },
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

struct args {
	const char *sub, *node, *ak, *ek_cert, *tcti, *ca, *state, *key, *keyring, *output;
	unsigned ttl;
	const char *in;   /* the one positional argument, when the step takes one */
};

/* Each step's options: required ones first, then optional; npos is the
 * positional arguments it takes (0 or 1). */
static const struct step {
	const char *name;
	int npos;
	int req[4], opt[4];
} steps[] = {
	{ "request", 0, { OPT_NODE, 'o' }, { OPT_AK, OPT_EK_CERT, OPT_TCTI } },
	{ "challenge", 1, { OPT_CA, OPT_STATE, 'o' }, { OPT_TTL } },
	{ "answer", 1, { 'o' }, { OPT_AK, OPT_TCTI } },
	{ "finish", 1, { OPT_STATE, OPT_KEY, 'o' }, { 0 } },
	{ "check", 1, { OPT_KEYRING }, { 0 } },
};

static int in_list(const int *l, int opt)
{
	for (size_t i = 0; i < 4 && l[i]; i++)
		if (l[i] == opt)
			return 1;
	return 0;
}

static const char *opt_name(int opt)
{
	for (const struct option *o = enroll_opts; o->name; o++)
		if (o->val == opt)
			return o->name;
	return "?";
}

static int parse_args(int argc, char **argv, const struct step *s, struct args *a)
{
	int c, seen[OPT_KEYRING + 1] = { 0 };

	memset(a, 0, sizeof(*a));
	a->sub = s->name;
	a->ttl = ENROLL_TTL_DEFAULT;
	optind = 2;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", enroll_opts, NULL)) != -1) {
		if (c == '?' || c == ':')
			return cli_usage_error("attest enroll", "%s: unknown option or missing value at '%s'",
					       s->name, argv[optind - 1]);
		if (!in_list(s->req, c) && !in_list(s->opt, c))
			return cli_usage_error("attest enroll", "%s: option '%s' does not apply",
					       s->name, argv[optind - 1]);
		seen[c] = 1;
		switch (c) {
		case OPT_NODE: a->node = optarg; break;
		case OPT_AK: a->ak = optarg; break;
		case OPT_EK_CERT: a->ek_cert = optarg; break;
		case OPT_TCTI: a->tcti = optarg; break;
		case OPT_CA: a->ca = optarg; break;
		case OPT_STATE: a->state = optarg; break;
		case OPT_KEY: a->key = optarg; break;
		case OPT_KEYRING: a->keyring = optarg; break;
		case 'o': a->output = optarg; break;
		case OPT_TTL: {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || *end || v == 0 || v > 86400)
				return cli_usage_error("attest enroll", "--ttl: expected 1-86400 seconds, got '%s'",
						       optarg);
			a->ttl = (unsigned)v;
			break;
		}
		}
	}
	for (size_t i = 0; i < 4 && s->req[i]; i++)
		if (!seen[s->req[i]])
			return cli_usage_error("attest enroll", "%s: %s%s is required", s->name,
					       s->req[i] == 'o' ? "-o/--" : "--", opt_name(s->req[i]));
	if (argc - optind != s->npos)
		return cli_usage_error("attest enroll", "%s: expected %d file argument%s, got %d",
				       s->name, s->npos, s->npos == 1 ? "" : "s", argc - optind);
	a->in = s->npos ? argv[optind] : NULL;
	if (!a->ak)
		a->ak = DEFAULT_AK_DIR;
	return 0;
}

/* 2 for a refusal (the thing judged is not acceptable), else 1. */
static int status_of(int r, const ingot_error *e)
{
	if (r == -EPERM || r == -ETIME || r == -EALREADY || r == -ENOTSUP)
		return cli_error(e, ENROLL_REFUSED);
	return cli_error(e, EXIT_FAILURE_);
}

static int read_doc(const char *path, json_t **out)
{
	_cleanup_free_ char *buf = NULL;
	ingot_error e = { 0 };
	size_t len;

	if (read_file(path, ENROLL_DOC_MAX, &buf, &len, &e) < 0 ||
	    json_read_buf(path, buf, len, out, &e) < 0)
		return cli_error(&e, EXIT_FAILURE_);
	return EXIT_OK;
}

static int write_doc(const char *path, const json_t *doc, int mode)
{
	ingot_error e = { 0 };

	if (json_write_file(path, doc, mode, &e) < 0)
		return cli_error(&e, EXIT_FAILURE_);
	return EXIT_OK;
}

static int open_tpm(const struct args *a, struct tpm **t)
{
	ingot_error e = { 0 };

	setenv("TSS2_LOG", "all+none", 0);
	if (tpm_open(a->tcti, t, &e) < 0)
		return cli_error(&e, ENROLL_NO_TPM);
	return EXIT_OK;
}

static int do_request(const struct args *a)
{
	_cleanup_tpm_ struct tpm *t = NULL;
	_cleanup_json_ json_t *req = NULL;
	ingot_error e = { 0 };
	int rc, r;

	if ((rc = open_tpm(a, &t)) != EXIT_OK)
		return rc;
	r = tpm_enroll_request(t, a->ak, a->node, a->ek_cert, &req, &e);
	if (r < 0)
		return cli_error(&e, r == -ENOENT ? ENROLL_NO_TPM : EXIT_FAILURE_);
	return write_doc(a->output, req, 0644);
}

static int do_challenge(const struct args *a)
{
	_cleanup_json_ json_t *req = NULL, *ch = NULL, *st = NULL;
	struct enroll_subject s;
	ingot_error e = { 0 };
	int rc, r;

	if ((rc = read_doc(a->in, &req)) != EXIT_OK)
		return rc;
	r = enroll_check_request(a->in, req, a->ca, time(NULL), &s, &e);
	if (r < 0)
		return status_of(r, &e);
	r = enroll_challenge(&s, time(NULL), a->ttl, &ch, &st, &e);
	if (r == 0)
		r = enroll_state_store(a->state, st, &e);
	if (r < 0) {
		enroll_subject_release(&s);
		return status_of(r, &e);
	}
	printf("challenge %s for node %s, AK %s (EK certificate sha256 %s), expires %s\n",
	       json_string_value(json_object_get(ch, "id")), s.node, s.ak_id, s.ek_cert_sha256,
	       json_string_value(json_object_get(ch, "expires")));
	enroll_subject_release(&s);
	return write_doc(a->output, ch, 0644);
}

static int do_answer(const struct args *a)
{
	_cleanup_tpm_ struct tpm *t = NULL;
	_cleanup_json_ json_t *ch = NULL, *ans = NULL;
	ingot_error e = { 0 };
	int rc, r;

	if ((rc = read_doc(a->in, &ch)) != EXIT_OK || (rc = open_tpm(a, &t)) != EXIT_OK)
		return rc;
	r = tpm_enroll_answer(t, a->ak, ch, a->in, &ans, &e);
	if (r < 0)
		return cli_error(&e, r == -ENOENT ? ENROLL_NO_TPM : r == -EINVAL ? EXIT_FAILURE_
											: ENROLL_REFUSED);
	/* The secret answers one challenge once; still, not for others' eyes. */
	return write_doc(a->output, ans, 0600);
}

static int do_finish(const struct args *a)
{
	_cleanup_json_ json_t *ans = NULL, *st = NULL, *env = NULL;
	struct signing_key *key = NULL;
	struct enroll_subject s;
	ingot_error e = { 0 };
	time_t now = time(NULL);
	int rc, r;

	if ((rc = read_doc(a->in, &ans)) != EXIT_OK)
		return rc;
	/* The key first: a finish that cannot sign must not burn the challenge. */
	if ((rc = cli_load_keys(&a->key, 1, &key)) != 0)
		return rc;
	r = enroll_state_take(a->state, ans, a->in, &st, &e);
	if (r == 0)
		r = enroll_finish(st, ans, a->in, now, &s, &e);
	if (r < 0) {
		cli_free_keys(&key, 1);
		return status_of(r, &e);
	}
	r = enrolment_sign(&s, now, key, &env, &e);
	cli_free_keys(&key, 1);
	if (r == 0)
		r = json_write_file_as(a->output, env, envelope_canonical, 0644, &e);
	if (r < 0) {
		enroll_subject_release(&s);
		return cli_error(&e, EXIT_FAILURE_);
	}
	printf("enrolled node %s: AK %s\n", s.node, s.ak_id);
	enroll_subject_release(&s);
	return EXIT_OK;
}

static int do_check(const struct args *a)
{
	_cleanup_keyring_ struct keyring *kr = NULL;
	struct enrolment en;
	ingot_error e = { 0 };

	if (keyring_load(a->keyring, &kr, &e) < 0)
		return cli_error(&e, EXIT_FAILURE_);
	if (enrolment_load(a->in, kr, &en, &e) < 0) {
		int st = e.kind == ENVELOPE_FAIL_SIGNATURE ? ENROLL_REFUSED : EXIT_FAILURE_;
		e.kind = 0;   /* this command's statuses, not verify-manifest's */
		return cli_error(&e, st);
	}
	printf("enrolment ok: node %s, AK %s, EK certificate sha256 %s\n", en.node, en.ak_id,
	       en.ek_cert_sha256);
	enrolment_release(&en);
	return EXIT_OK;
}

int cmd_attest_enroll(int argc, char **argv)
{
	static int (*const fns[])(const struct args *) = {
		do_request, do_challenge, do_answer, do_finish, do_check,
	};
	struct args a;
	int rc;

	if (cli_wants_help(argc, argv)) {
		fputs(enroll_help, stdout);
		return EXIT_OK;
	}
	if (argc < 2)
		return cli_usage_error("attest enroll", "expected a step: request, challenge, answer, "
				       "finish, check");
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++) {
		if (strcmp(argv[1], steps[i].name))
			continue;
		rc = parse_args(argc, argv, &steps[i], &a);
		return rc ? rc : fns[i](&a);
	}
	return cli_usage_error("attest enroll", "unknown step '%s'", argv[1]);
}
