/* The admission report: one entry per check, a verdict and the exit
 * status it maps to.  Written as JSON (verify/report.schema.json) for the
 * audit, and as a short human summary for the console. */
#ifndef INGOT_VERIFY_NODE_REPORT_H
#define INGOT_VERIFY_NODE_REPORT_H

#include <stdio.h>
#include <jansson.h>
#include "lib/err.h"

enum check_id {
	CHECK_SIGNATURE,   /* manifest envelope vs keyring, expiry, rollback */
	CHECK_IMAGE,       /* image file/device sha256 + dm-verity root */
	CHECK_FILES,       /* unpacked root vs the manifest's file list */
	CHECK_TPM,         /* quote + event-log replay vs predicted PCR */
	CHECK_TUPLE,       /* probed node vs the manifest's tuple */
	CHECK_RULES,       /* version-chain rules on the probed tuple */
	CHECK_RING,        /* the image is promoted to the node's ring (--ring) */
	CHECK__COUNT,
};

enum check_status {
	ST_PASS,
	ST_WARN,           /* passed with findings; refuses only with --fail-on warn */
	ST_FAIL,           /* the node contradicts the manifest: refuse */
	ST_SKIP,           /* not requested / not applicable, with the reason */
	ST_ERROR,          /* required but could not be carried out */
};

/* What report_finish decided.  The exit status it maps to is cli/'s to
 * pick (cli/exit.c, documented in docs/verify.md). */
enum report_outcome {
	REPORT_ADMIT,
	REPORT_REFUSE,        /* decided names the first refusing check */
	REPORT_CANNOT_CHECK,  /* nothing refuses, a required check could not be made */
};

struct check_result {
	enum check_status status;
	char *summary;        /* one line: why it passed / failed / was skipped */
	json_t *evidence;     /* array of strings, each one finding or fact */
	json_t *details;      /* object or NULL: structured data for the audit */
};

struct verify_report {
	struct check_result checks[CHECK__COUNT];
	json_t *node;         /* {"id","hostname","machine_id"} */
	char *time;           /* RFC 3339 UTC */
	json_t *manifest;     /* {"path","sha256","content_digest","pool","serial",...} */
	char *pool;
	char *tuple_digest;   /* hex sha256 of json_compact(manifest tuple), or NULL */
	json_t *probe;        /* probe_to_json() */
	json_t *attestation;  /* quote, AK PEM, event log base64 - or NULL */
	int fail_on_warn;
	/* filled by report_finish */
	const char *verdict;  /* "admit" | "refuse" | "could-not-check" */
	enum report_outcome outcome;
	enum check_id decided;
	int exit_status;      /* the CLI's status for outcome, set before the report is written */
	char *reason;         /* one line for drain reasons and logs */
};

const char *check_name(enum check_id id);
const char *check_status_name(enum check_status s);

void report_init(struct verify_report *r);
void report_free(struct verify_report *r);

/* Set a check's status and summary (printf-style); evidence is kept. */
void report_set(struct verify_report *r, enum check_id id, enum check_status st,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Append one evidence line to a check. */
void report_evidence(struct verify_report *r, enum check_id id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Decide verdict, outcome and reason: the first refusing check in
 * enum check_id order decides; with no refusal, a check in error makes
 * it "could not check". */
void report_finish(struct verify_report *r);

json_t *report_to_json(const struct verify_report *r);
void report_print_text(const struct verify_report *r, FILE *out);

#endif
