/* Command fronts.  Each cmd_* parses its arguments, calls one library
 * function, prints the result and returns the process exit status.
 * Library code never prints or exits; only these do. */
#ifndef INGOT_CLI_H
#define INGOT_CLI_H

#include <stdio.h>
#include "lib/err.h"

#include "lib/meta.h"
#include "cli/parse-options.h"

/* Exit statuses shared by all commands; commands document extra ones. */
enum {
	EXIT_OK = 0,
	EXIT_FAILURE_ = 1,  /* operation failed (bad input, I/O, verification) */
	EXIT_USAGE = 64,    /* bad command line (sysexits EX_USAGE) */
};

int cmd_build(int argc, char **argv);
int cmd_lint(int argc, char **argv);
int cmd_inspect(int argc, char **argv);
int cmd_keys(int argc, char **argv);
int cmd_sign(int argc, char **argv);
int cmd_verify_manifest(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_attest(int argc, char **argv);
/* ingot attest import (cli/cmd-import.c): argv[0] is "import". */
int cmd_attest_import(int argc, char **argv);
/* ingot attest fetch-manifest (cli/cmd-fetch-manifest.c): argv[0] is "fetch-manifest". */
int cmd_attest_fetch_manifest(int argc, char **argv);
int cmd_attest_enroll(int argc, char **argv);   /* ingot attest enroll */
int cmd_audit(int argc, char **argv);
int cmd_serve(int argc, char **argv);   /* cli/cmd-serve.c */
int cmd_diff(int argc, char **argv);
int cmd_evidence(int argc, char **argv);
int cmd_promote(int argc, char **argv);
int cmd_store(int argc, char **argv);

/* Exit statuses of verify-manifest (and of any command whose error
 * carries an envelope failure kind, keys/envelope.h). */
enum {
	ENVELOPE_EXIT_IO = 1,          /* cannot read the envelope/keyring/image, write state */
	ENVELOPE_EXIT_MALFORMED = 2,   /* not JSON, wrong shape, over a limit, bad keyring/state */
	ENVELOPE_EXIT_SIGNATURE = 3,   /* too few valid signatures by distinct trusted keys */
	ENVELOPE_EXIT_EXPIRED = 4,     /* manifest "expires" is not after now */
	ENVELOPE_EXIT_ROLLBACK = 5,    /* serial below the last one recorded in the state file */
	ENVELOPE_EXIT_DIGEST = 6,      /* image sha256/size or verity root does not match */
};

/* Exit statuses of promote (ops/promote.h's failure kinds). */
enum {
	PROMOTE_EXIT_IO = 1,          /* cannot read or write something */
	PROMOTE_EXIT_MALFORMED = 2,   /* bad policy, manifest or keyring */
	PROMOTE_EXIT_REFUSED = 3,     /* the policy is not met: reasons in the message */
};

/* Exit statuses of `ingot verify` (docs/verify.md): the first refusing
 * check's, 20 when nothing refuses but a check could not be made. */
enum {
	VERIFY_EXIT_ADMIT = 0,
	VERIFY_EXIT_SIGNATURE = 10,
	VERIFY_EXIT_IMAGE = 11,
	VERIFY_EXIT_TPM = 12,
	VERIFY_EXIT_TUPLE = 13,
	VERIFY_EXIT_RULES = 14,
	VERIFY_EXIT_RING = 15,
	VERIFY_EXIT_CANNOT_CHECK = 20,
};

/* cli/exit.c: */
struct verify_report;
/* The exit status of a finished node report (report_finish's outcome). */
int cli_verify_exit(const struct verify_report *r);
/* "ingot: <msg>" on stderr; returns the exit status of e->kind (the one
 * table of kinds to statuses) when set, else status. */
int cli_error(const ingot_error *e, int status);

/* cli/parse-options.c: */
/* "ingot CMD: usage error: <msg>\nTry 'ingot CMD --help'." ; returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
struct signing_key;
/* Load each --key file (passphrase from INGOT_KEY_PASSPHRASE): 0, or the
 * exit status after printing why (keys loaded so far are freed). */
int cli_load_keys(const char *const *paths, size_t n, struct signing_key **keys);
void cli_free_keys(struct signing_key **keys, size_t n);
/* True if argv has -h or --help before "--". */
int cli_wants_help(int argc, char **argv);

/* --enrolment-keyring and --firmware-ref-keyring, the same for every
 * command that judges a boot (verify/boot-inputs.h boot_keyrings). */
#define OPT_ROLE_KEYRINGS(enrolment, firmware_ref)                                                  \
	OPT_STRING(0, "enrolment-keyring", enrolment, "FILE",                                       \
		   "keys trusted to sign enrolment records, in place of\n"                         \
		   "--keyring's enrolment role (an untyped --keyring vouches\n"                    \
		   "for manifests only)"),                                                          \
	OPT_STRING(0, "firmware-ref-keyring", firmware_ref, "FILE",                                 \
		   "keys trusted to sign firmware references, in place of\n"                       \
		   "--keyring's firmware-ref role")

#endif
