/* The one place that turns what failed into an exit status: the library
 * names the kind of failure (e->kind), each command documents statuses. */
#include <stdio.h>

#include "cli/cli.h"
#include "keys/envelope.h"
#include "ops/promote.h"
#include "verify/node-report.h"

static const int exit_of_kind[] = {
	[ENVELOPE_FAIL_IO] = ENVELOPE_EXIT_IO,
	[ENVELOPE_FAIL_MALFORMED] = ENVELOPE_EXIT_MALFORMED,
	[ENVELOPE_FAIL_SIGNATURE] = ENVELOPE_EXIT_SIGNATURE,
	[ENVELOPE_FAIL_EXPIRED] = ENVELOPE_EXIT_EXPIRED,
	[ENVELOPE_FAIL_ROLLBACK] = ENVELOPE_EXIT_ROLLBACK,
	[ENVELOPE_FAIL_DIGEST] = ENVELOPE_EXIT_DIGEST,
	[PROMOTE_FAIL_IO] = PROMOTE_EXIT_IO,
	[PROMOTE_FAIL_MALFORMED] = PROMOTE_EXIT_MALFORMED,
	[PROMOTE_FAIL_REFUSED] = PROMOTE_EXIT_REFUSED,
};

int cli_error(const ingot_error *e, int status)
{
	fprintf(stderr, "ingot: %s\n", e->msg[0] ? e->msg : "unknown error");
	if (e->kind > 0 && (size_t)e->kind < sizeof(exit_of_kind) / sizeof(exit_of_kind[0]) &&
	    exit_of_kind[e->kind])
		return exit_of_kind[e->kind];
	return status;
}

static const int exit_of_check[CHECK__COUNT] = {
	[CHECK_SIGNATURE] = VERIFY_EXIT_SIGNATURE, [CHECK_IMAGE] = VERIFY_EXIT_IMAGE,
	[CHECK_FILES] = VERIFY_EXIT_IMAGE, [CHECK_TPM] = VERIFY_EXIT_TPM,
	[CHECK_TUPLE] = VERIFY_EXIT_TUPLE, [CHECK_RULES] = VERIFY_EXIT_RULES, [CHECK_RING] = VERIFY_EXIT_RING,
};

int cli_verify_exit(const struct verify_report *r)
{
	switch (r->outcome) {
	case REPORT_REFUSE:
		return exit_of_check[r->decided];
	case REPORT_CANNOT_CHECK:
		return VERIFY_EXIT_CANNOT_CHECK;
	case REPORT_ADMIT:
		break;
	}
	return VERIFY_EXIT_ADMIT;
}
