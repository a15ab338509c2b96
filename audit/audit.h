/* Offline audit of a pool: many node reports (`ingot verify --json`)
 * against the signed pool manifests.  Nothing a node says is trusted:
 * every manifest envelope is checked against the keyring, every quote
 * against its AK (which must be enrolled when an AK list is given) and
 * the nonce issued, the event log is replayed against the quoted PCR,
 * the quoted PCR is matched to the manifests' predicted values, and the
 * probed tuple is compared field by field with the pool's manifest.
 *
 * The result is one JSON document (schema "ingot.audit/v1", see
 * docs/audit.md) that the table and HTML renderers print. */
#ifndef INGOT_AUDIT_AUDIT_H
#define INGOT_AUDIT_AUDIT_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <jansson.h>
#include "lib/err.h"
#include "verify/boot-inputs.h"

#define AUDIT_SCHEMA "ingot.audit/v1"
#define AUDIT_MAX_JOBS 64

/* One node's evidence held in memory, in place of a report file (the
 * verifier's latest evidence of each node, server/pool.c). */
struct audit_report {
	const char *name;        /* the row's "report": where it came from */
	const json_t *report;    /* an ingot.report/v1 node report, its attestation included */
	const char *nonce;       /* the nonce issued for its quote (hex), or NULL: as --nonces */
	const char *stale;       /* a staleness its holder judged (a "stale" finding), or NULL */
};

struct audit_opts {
	const char *keyring;       /* required (or trust): trusted manifest signers, or a keyring with roles
				    * (verify/boot-inputs.h boot_keyrings) */
	const char *enrolment_keyring;     /* optional: the enrolment role's keys, in place of keyring's */
	const char *firmware_ref_keyring;  /* optional: the firmware-ref role's */
	/* optional: keyrings, enrolment records and firmware references
	 * already loaded and verified (the verifier's, read-only while the
	 * audit runs), in place of the keyrings, enrolments_dir and
	 * firmware_refs_dir */
	const struct boot_trust *trust;
	const char *manifests_dir; /* *.manifest.dsse.json; or: */
	const char *const *manifest_files;   /* signed manifests, by path */
	size_t n_manifest_files;
	const char *reports_dir;   /* *.json node reports; or: */
	const struct audit_report *reports;  /* reports in memory (their nonces as --nonces) */
	size_t n_reports;
	const char *nonces;        /* optional: "NODE NONCE_HEX" lines, the nonces issued */
	const char *aks;           /* optional: "AK_SHA256_HEX [NODE]" lines: an allow-list for
				    * post-boot PCR 15 reports only; proves no TPM, never counts
				    * for a measured boot */
	const char *enrolments_dir;   /* optional: signed enrolment records (*.json), keys/enrolment.h */
	const char *firmware_refs_dir;   /* optional: signed firmware references (*.json) */
	const char *nodes;         /* optional: "NODE [POOL]" lines, the nodes expected */
	int64_t max_age;           /* seconds; 0 = reports never go stale */
	time_t now;
	unsigned jobs;             /* threads checking reports; 0 = one per CPU */
	unsigned accept_weak;      /* weak TPM evidence accepted (attest/judge.h), else "unverified" */
	const char *promotions_dir;     /* optional: promotion statements, for the ring column */
	const char *promotion_keyring;  /* their signers (with promotions_dir) */
	const char *const *mixed_ok;    /* pools whose manifests may declare two GPU vendors */
	size_t n_mixed_ok;
};

/* Severity classes of a node verdict; the audit's exit status is the
 * worst class seen (0 all healthy). */
enum audit_class {
	AUDIT_HEALTHY = 0,
	AUDIT_DRIFT = 1,     /* drifted, stale, missing, unquoted, unknown pool */
	AUDIT_FORGED = 2,    /* evidence does not verify: forged, replayed, not enrolled */
	AUDIT_UNVERIFIED = 3, /* evidence valid but not shown to be a TPM's, or weak;
			       * less severe than drift (audit_class_severity) */
};

/* Order of the classes by severity: healthy < unverified < drift < forged. */
int audit_class_severity(int cls);

/* An audit's outcome: the document's head (schema, now, max_age,
 * manifests, summary, ignored_reports) and its node rows, held as
 * compact JSON text in output order: a row costs its bytes, not a
 * parsed tree, so 100,000 nodes fit in a bounded amount of memory and
 * the renderers stream them. */
struct audit_result;

/* Run the audit.  Per-node problems are findings in *out, never errors;
 * errors are for inputs the audit cannot start without (keyring, the
 * directories, the option files) and name the file and line. */
int audit_run(const struct audit_opts *o, struct audit_result **out, ingot_error *e);
void audit_result_free(struct audit_result *r);
static inline void audit_result_freep(struct audit_result **r) { audit_result_free(*r); }
#define _cleanup_audit_result_ __attribute__((cleanup(audit_result_freep)))
/* A result from its JSON document (what audit_write_json writes), e.g.
 * to render a saved audit; NULL when doc has no "nodes" array. */
struct audit_result *audit_result_from_json(const json_t *doc);

/* The worst class of an audit result. */
int audit_worst_class(const struct audit_result *r);

/* The JSON document (schema "ingot.audit/v1"), canonical (lib/json.h),
 * streamed to out, or atomically to path. */
int audit_write_json(const struct audit_result *r, FILE *out, ingot_error *e);
int audit_save_json(const struct audit_result *r, const char *path, ingot_error *e);
/* The same document as one compact line with sorted keys and a line
 * break (a reply body), extra's members added to it (malloc'd; NULL
 * with e only where a row's text is corrupted). */
char *audit_result_compact(const struct audit_result *r, const json_t *extra, ingot_error *e);
/* The document's "manifests" array (borrowed; docs/audit.md). */
const json_t *audit_result_manifests(const struct audit_result *r);
/* Node table grouped by tuple, drifted and failing nodes first. */
void audit_print_table(const struct audit_result *r, FILE *out);
/* One self-contained HTML page (inline CSS, no scripts), atomically. */
int audit_write_html(const struct audit_result *r, const char *path, ingot_error *e);

/* "90s", "30m", "24h", "7d" or plain seconds. */
int audit_parse_duration(const char *s, int64_t *out);
/* RFC 3339 ("2026-12-01T10:00:00Z", "+02:00", fractions) or epoch seconds. */
int audit_parse_time(const char *s, time_t *out);

#endif
