/* The admission report: one entry per check, a verdict and the exit
 * status it maps to.  Written as JSON (verify/report.schema.json) for the
 * audit, and as a short human summary for the console; read back off the
 * node as struct node_report (below), the one reader of that JSON. */
#ifndef INGOT_VERIFY_NODE_REPORT_H
#define INGOT_VERIFY_NODE_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <jansson.h>
#include "lib/err.h"
#include "verify/nodeprobe.h"

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

/* ---- a node report read back ------------------------------------------
 * What report_to_json wrote, as a type: decoded once, here, for every
 * reader off the node (audit/, the verifier service, report-tuple.h),
 * none of which walks the JSON.  Nothing in it is trusted: it is the
 * node's word.  Decoding is lenient, as manifest_decode's: a member of
 * another type reads as absent (NULL, false, or left out of a list), and
 * each reader decides what an absent member means (the audit's
 * "malformed", "unquoted", ...).  Strings point into doc. */

/* One path a failed files check lists (details' changed, missing,
 * extra), in the report's order: changed first. */
struct report_path {
	const char *list;          /* "changed" | "missing" | "extra" */
	const char *path;          /* the node's bytes: may hold a NUL */
	size_t path_len;
	const char *field;         /* changed: which field ("sha256"), or NULL */
	const json_t *expected, *got;   /* changed: as written, or NULL */
};

/* One entry of checks[], in the report's order (a node may repeat one). */
struct report_check {
	const char *name, *status, *summary;   /* NULL when not strings */
	struct report_path *paths;  /* name "files": its details' paths */
	size_t n_paths;
	/* name "ring": details.ring and the serials (verify/checks.h check_ring) */
	const char *ring;
	bool has_ring_serial, has_ring_serial_seen;
	int64_t ring_serial, ring_serial_seen;
};

struct node_report {
	json_t *doc;               /* the document (own reference) */
	const char *schema, *time, *pool, *verdict, *tuple_digest;
	const char *node_id, *hostname, *machine_id;
	struct report_check *checks;
	size_t n_checks;
	/* probe.facts as the probe that wrote them (probe_to_json's
	 * inverse), empty without: a fact marked unreadable stays
	 * unreadable, so a comparison needing it is "not made", never
	 * "absent".  The tuple fields' facts are found by their probe key
	 * (recipes/tuple-fields.h). */
	struct node_probe *probe;
	struct {
		bool present;           /* attestation is an object */
		const char *mode;       /* "measured-boot", or the post-boot PCR 15 form */
		const json_t *quote;    /* an object (attest/quote.h's document) or NULL */
		const char *nonce;      /* quote.nonce: the nonce the quote claims */
		const json_t *pcrs;     /* quote.pcrs, as written (pcr_values_from_json) */
		const char *eventlog;   /* base64 of the binary event log */
	} attestation;
};

/* Decode doc (any JSON; the report takes a reference of its own, doc stays
 * the caller's). */
struct node_report *node_report_decode(json_t *doc);
/* Read a report file (at most INGOT_JSON_MAX bytes) and decode it; an
 * error only when it cannot be read or is not JSON. */
int node_report_load(const char *path, struct node_report **out, ingot_error *e);
void node_report_free(struct node_report *r);
static inline void node_report_freep(struct node_report **r) { node_report_free(*r); }
#define _cleanup_node_report_ __attribute__((cleanup(node_report_freep)))

#endif
