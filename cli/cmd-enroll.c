/* ingot attest enroll: prove an AK lives in a genuine TPM and record it
 * (attest/enroll.h for the protocol, keys/enrolment.h for the record). */
#include <errno.h>
#include <stdbool.h>
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
#include "lib/json.h"
#include "lib/privdir.h"
#include "lib/xalloc.h"
#include "server/client.h"


enum {
	ENROLL_REFUSED = 2,   /* the request, answer or record is refused */
	ENROLL_NO_VERIFIER = 3,
	ENROLL_NO_TPM = 4,
};

static const struct cli_command enroll_cmd = {
	.name = "attest enroll",
	.summary = "prove that an attestation key lives in a genuine TPM",
	.synopsis =
	"    ingot attest enroll request --node NAME [--ak DIR] [--ek-cert FILE]\n"
	"                                [--tcti TCTI] -o REQUEST\n"
	"    ingot attest enroll challenge REQUEST --ca BUNDLE --state DIR [--ttl SECONDS]\n"
	"                                  -o CHALLENGE\n"
	"    ingot attest enroll answer CHALLENGE [--ak DIR] [--tcti TCTI] -o ANSWER\n"
	"    ingot attest enroll finish ANSWER --state DIR --key KEY -o RECORD\n"
	"    ingot attest enroll check RECORD --keyring FILE\n"
	"    ingot attest enroll --verifier URL --node NAME [--ak DIR] [--ek-cert FILE]\n"
	"                        [--tcti TCTI]\n"
	"    ingot attest enroll approve ID --verifier URL --token-file FILE\n",
	.description =
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
	"    sign; not decrypt; name algorithm sha256/384/512) and a sane key (ECC\n"
	"    NIST P-256, or RSA of 2048, 3072 or 4096 bits as keyBits says with an odd\n"
	"    exponent >= 3). It then seals a fresh random secret to the EK, bound to\n"
	"    the AK's name (TPM2_MakeCredential, in software), writes the challenge\n"
	"    for the node and keeps its private state in DIR/ID.json, valid for --ttl\n"
	"    seconds.\n"
	"\n"
	"    The state decides which AK finish signs for, so DIR must be private to\n"
	"    the verifier: a directory owned by its user and not writable by group or\n"
	"    others (challenge creates it mode 0700), like ssh's StrictModes. A state\n"
	"    file must be a regular file (not a symbolic link) owned by that user and\n"
	"    not group- or other-writable. Both steps refuse anything else.\n"
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
	"    Requests, challenges, answers, states and records are each at most\n"
	"    64 KiB and must be regular files.\n"
	"\n"
	"    With --verifier and no step, the node enrols with an `ingot serve`\n"
	"    (docs/verifier.md \"Enrolment\"): it sends the request, has its TPM\n"
	"    answer the verifier's challenge and sends the answer. The verifier then\n"
	"    holds the enrolment as proven, and records it only when the operator\n"
	"    approves it: approve ID, with the verifier's token (a file of mode 0600\n"
	"    or 0400). Until then the node gets no nonce.\n",
	.more =
	"EXIT STATUS\n"
	"    0   success\n"
	"    1   error: unreadable or malformed input, I/O, TPM command failed\n"
	"    2   refused: EK certificate not from a trusted CA, not an attestation key,\n"
	"        activation failed (another TPM or AK), challenge expired or already\n"
	"        answered, record not signed by the keyring, a --state directory or\n"
	"        state file others can write\n"
	"    3   the verifier was not reached, or did not answer in JSON\n"
	"    4   no TPM: the TCTI cannot be loaded or reached, or no AK in --ak\n"
	"    64  usage error\n"
	"\n"
	"EXAMPLES\n"
	"    node#     ingot attest enroll request --node gpu-07 -o req.json\n"
	"    verifier$ ingot attest enroll challenge req.json --ca tpm-vendors.pem \\\n"
	"                  --state /var/lib/ingot/enroll -o chal.json\n"
	"    node#     ingot attest enroll answer chal.json -o ans.json\n"
	"    verifier$ ingot attest enroll finish ans.json --state /var/lib/ingot/enroll \\\n"
	"                  --key verifier.key -o gpu-07.enrolment.dsse.json\n"
	"    node#     ingot attest enroll --verifier http://10.0.0.5:8443 --node gpu-07\n"
	"    operator$ ingot attest enroll approve 3f9c... --verifier http://10.0.0.5:8443 \\\n"
	"                  --token-file /etc/ingot/verifier.token\n",
};

/* What `attest enroll` was given; each step takes its part. */
struct args {
	const char *node, *ak, *ek_cert, *tcti, *ca, *state, *key, *keyring, *output, *verifier, *token_file;
	unsigned ttl;
	bool ttl_set;
	const char *in;   /* the one positional argument, when the step takes one */
};

enum {
	O_NODE = 1 << 0, O_AK = 1 << 1, O_EK_CERT = 1 << 2, O_TCTI = 1 << 3, O_CA = 1 << 4,
	O_STATE = 1 << 5, O_TTL = 1 << 6, O_KEY = 1 << 7, O_KEYRING = 1 << 8, O_OUTPUT = 1 << 9,
	O_VERIFIER = 1 << 10, O_TOKEN_FILE = 1 << 11,
};

/* The options given, as O_* bits, and each one's name for messages. */
static unsigned given(const struct args *a)
{
	return (a->node ? O_NODE : 0) | (a->ak ? O_AK : 0) | (a->ek_cert ? O_EK_CERT : 0) |
	       (a->tcti ? O_TCTI : 0) | (a->ca ? O_CA : 0) | (a->state ? O_STATE : 0) |
	       (a->ttl_set ? O_TTL : 0) | (a->key ? O_KEY : 0) | (a->keyring ? O_KEYRING : 0) |
	       (a->output ? O_OUTPUT : 0) | (a->verifier ? O_VERIFIER : 0) | (a->token_file ? O_TOKEN_FILE : 0);
}

static const char *const opt_names[] = { "--node", "--ak", "--ek-cert", "--tcti", "--ca",
	"--state", "--ttl", "--key", "--keyring", "-o/--output", "--verifier", "--token-file" };

/* Each step's required and optional options (O_* bits); npos is the
 * positional arguments it takes (0 or 1). */
static const struct step {
	const char *name;
	int npos;
	unsigned req, opt;
} steps[] = {
	{ "request", 0, O_NODE | O_OUTPUT, O_AK | O_EK_CERT | O_TCTI },
	{ "challenge", 1, O_CA | O_STATE | O_OUTPUT, O_TTL },
	{ "answer", 1, O_OUTPUT, O_AK | O_TCTI },
	{ "finish", 1, O_STATE | O_KEY | O_OUTPUT, 0 },
	{ "check", 1, O_KEYRING, 0 },
	{ "approve", 1, O_VERIFIER | O_TOKEN_FILE, 0 },
	{ "--verifier", 0, O_VERIFIER | O_NODE, O_AK | O_EK_CERT | O_TCTI },   /* no step: with the verifier */
};

static const char *parse_ttl(const char *arg, void *value)
{
	struct args *a = value;
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (*arg < '0' || *arg > '9' || errno || *end || v == 0 || v > 86400)
		return "1-86400 seconds";
	a->ttl = (unsigned)v;
	a->ttl_set = true;
	return NULL;
}

/* The step's options and operands: argc/argv are the operands, the step
 * first. */
static int check_step(const struct step *s, struct args *a, int argc, char **argv)
{
	unsigned got = given(a);

	for (size_t i = 0; i < ARRAY_SIZE(opt_names); i++) {
		if ((got & (1u << i)) && !((s->req | s->opt) & (1u << i)))
			return cli_usage_error("attest enroll", "%s: option %s does not apply",
					       s->name, opt_names[i]);
		if ((s->req & (1u << i)) && !(got & (1u << i)))
			return cli_usage_error("attest enroll", "%s: %s is required", s->name,
					       opt_names[i]);
	}
	if (argc - 1 != s->npos && s->name[0] != '-')
		return cli_usage_error("attest enroll", "%s: expected %d file argument%s, got %d",
				       s->name, s->npos, s->npos == 1 ? "" : "s", argc - 1);
	a->in = s->npos && argc > 1 ? argv[1] : NULL;
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

	/* A regular file of at most ENROLL_DOC_MAX: a FIFO must not hang a step. */
	if (regfile_read(path, ENROLL_DOC_MAX, 0, &buf, &len, &e) < 0 ||
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

	if (keyring_load_role(a->keyring, KEY_ROLE_ENROLMENT, true, &kr, &e) < 0)
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

/* The verifier's refusal is the enrolment's (2); not reaching it is 3. */
static int verifier_status(const ingot_error *e)
{
	return cli_error(e, e->kind == VERIFIER_FAIL_TRANSPORT ? ENROLL_NO_VERIFIER : ENROLL_REFUSED);
}

/* The node's side over the API: request, challenge, answer, proven. */
static int do_remote(const struct args *a)
{
	_cleanup_tpm_ struct tpm *t = NULL;
	_cleanup_json_ json_t *req = NULL, *ch = NULL, *ans = NULL, *rep = NULL;
	_cleanup_free_ char *path = NULL;
	struct verifier v;
	ingot_error e = { 0 };
	int rc, r;

	if ((rc = open_tpm(a, &t)) != EXIT_OK)
		return rc;
	if ((r = tpm_enroll_request(t, a->ak, a->node, a->ek_cert, &req, &e)) < 0)
		return cli_error(&e, r == -ENOENT ? ENROLL_NO_TPM : EXIT_FAILURE_);
	if (verifier_open(&v, a->verifier, NULL, &e) < 0)
		return cli_error(&e, EXIT_FAILURE_);
	if (verifier_post(&v, "/v1/enrolments", req, 30, &ch, &e) < 0) {
		verifier_close(&v);
		return verifier_status(&e);
	}
	r = tpm_enroll_answer(t, a->ak, ch, "the verifier's challenge", &ans, &e);
	if (r < 0) {
		verifier_close(&v);
		return cli_error(&e, r == -ENOENT ? ENROLL_NO_TPM : r == -EINVAL ? EXIT_FAILURE_ : ENROLL_REFUSED);
	}
	path = xasprintf("/v1/enrolments/%s/answer", json_string_value(json_object_get(ch, "id")));
	r = verifier_post(&v, path, ans, 30, &rep, &e);
	verifier_close(&v);
	if (r < 0)
		return verifier_status(&e);
	/* Approved at once when the EK certificate chained to the verifier's
	 * EK CA allow-list (ek-ca); the reply says why not otherwise. */
	const char *approval = json_string_value(json_object_get(rep, "approval"));
	if (!strcmp(json_string_value(json_object_get(rep, "status")) ?: "", "approved"))
		printf("enrolment %s: node %s, AK %s: approved by %s: record %s\n",
		       json_string_value(json_object_get(ch, "id")), a->node,
		       json_string_value(json_object_get(rep, "ak_id")), approval ? approval : "the verifier",
		       json_string_value(json_object_get(rep, "record")));
	else
		printf("enrolment %s: node %s, AK %s: proven; awaiting the operator's approval%s%s%s\n",
		       json_string_value(json_object_get(ch, "id")), a->node,
		       json_string_value(json_object_get(rep, "ak_id")), approval ? " (" : "", approval ? approval : "",
		       approval ? ")" : "");
	return EXIT_OK;
}

/* The operator's approval: the verifier signs and records it. */
static int do_approve(const struct args *a)
{
	_cleanup_json_ json_t *rep = NULL, *body = json_object();
	_cleanup_free_ char *token = NULL, *path = NULL;
	struct verifier v;
	ingot_error e = { 0 };
	size_t len;
	int r;

	if (regfile_read(a->token_file, 4096, REGFILE_PRIVATE, &token, &len, &e) < 0)
		return cli_error(&e, EXIT_FAILURE_);
	token[strcspn(token, "\r\n")] = '\0';
	if (verifier_open(&v, a->verifier, NULL, &e) < 0)
		return cli_error(&e, EXIT_FAILURE_);
	v.token = token;
	path = xasprintf("/v1/enrolments/%s/approve", a->in);
	r = verifier_post(&v, path, body, 30, &rep, &e);
	verifier_close(&v);
	if (r < 0)
		return verifier_status(&e);
	printf("enrolment %s approved: node %s, AK %s, record %s\n", a->in,
	       json_string_value(json_object_get(rep, "node")), json_string_value(json_object_get(rep, "ak_id")),
	       json_string_value(json_object_get(rep, "record")));
	return EXIT_OK;
}

int cmd_attest_enroll(int argc, char **argv)
{
	static int (*const fns[])(const struct args *) = {
		do_request, do_challenge, do_answer, do_finish, do_check, do_approve, do_remote,
	};
	struct args a = { .ttl = ENROLL_TTL_DEFAULT };
	const struct cli_option opts[] = {
		OPT_STRING(0, "node", &a.node, "NAME", "the node's name, [A-Za-z0-9._:-], 1-255 characters"),
		OPT_STRING(0, "ak", &a.ak, "DIR", "AK directory (default " DEFAULT_AK_DIR ")"),
		OPT_STRING(0, "ek-cert", &a.ek_cert, "FILE", "the EK certificate (PEM or DER) instead of the TPM's NV"),
		OPT_STRING(0, "tcti", &a.tcti, "TCTI", "tpm2-tss TCTI ($INGOT_TCTI; default device:/dev/tpmrm0)"),
		OPT_STRING(0, "ca", &a.ca, "BUNDLE", "PEM file of the CA certificates EK certificates must\nchain to"),
		OPT_STRING(0, "state", &a.state, "DIR", "the verifier's private directory of pending challenges"),
		OPT_CALLBACK(0, "ttl", &a, "SECONDS", "how long a challenge can be answered (default 300)",
			     parse_ttl),
		OPT__KEY(0, &a.key, "the verifier's signing key (PEM; INGOT_KEY_PASSPHRASE)"),
		OPT__KEYRING(&a.keyring, "FILE", "keys trusted to sign enrolment records"),
		OPT__OUTPUT(&a.output, "F", "where to write the request, challenge, answer or record"),
		OPT_STRING(0, "verifier", &a.verifier, "URL", "enrol with this `ingot serve` (no step), or approve there"),
		OPT_STRING(0, "token-file", &a.token_file, "FILE", "the verifier's operator token (mode 0600 or 0400)"),
		OPT_END(),
	};
	int first, r;

	if ((r = cli_parse(&enroll_cmd, opts, argc, argv, &first)) >= 0)
		return r;
	/* The operands, the step first, as argv of their own. */
	argc -= first;
	argv += first;
	if (argc < 1 && a.verifier)
		return check_step(&steps[ARRAY_SIZE(steps) - 1], &a, 1, argv - 1) ?: do_remote(&a);
	if (argc < 1)
		return cli_usage_error("attest enroll", "expected a step: request, challenge, answer, "
				       "finish, check");
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++) {
		if (strcmp(argv[0], steps[i].name))
			continue;
		r = check_step(&steps[i], &a, argc, argv);
		return r ? r : fns[i](&a);
	}
	return cli_usage_error("attest enroll", "unknown step '%s'", argv[0]);
}
