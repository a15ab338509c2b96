/* Internal to audit/: the state of one audit run, shared by the input
 * loaders (inputs.c), the per-report checks (node.c) and the driver
 * (audit.c).  Not a public API. */
#ifndef INGOT_AUDIT_INTERNAL_H
#define INGOT_AUDIT_INTERNAL_H

#include <dirent.h>
#include <stdbool.h>
#include <jansson.h>

#include "audit/audit.h"
#include "attest/quote.h"
#include "lib/digest.h"
#include "lib/err.h"
#include "manifest/typed.h"
#include "verify/boot-inputs.h"
#include "verify/node-report.h"

/* One file of the manifests directory and what the audit made of it;
 * the manifest itself (pool = recipe.name, serial, predictions) is the
 * typed one (manifest/typed.h), NULL when unreadable or refused. */
struct audit_manifest {
	char *file;
	struct manifest *m;
	char tuple_digest[SHA256_HEX_LEN + 1];
	const char *predicted;   /* the PCR m->measurement.pcr holds: boot.pcr15 or measurement's */
	int ok;                  /* signature valid and measurement consistent */
	int expired;
	int unsigned_only;       /* a bare manifest: never trusted, only named */
	/* Two valid manifests of its pool that declare different GPU vendors
	 * (the first such pair), unless --allow-mixed-vendors names the
	 * pool; NULL: one vendor. */
	const struct audit_manifest *mixed[2];
	char error[INGOT_ERR_MSG];
};
/* Its pool (recipe.name) and serial, NULL and 0 without a manifest. */
static inline const char *audit_manifest_pool(const struct audit_manifest *am)
{
	return am->m ? am->m->recipe.name : NULL;
}
static inline uint64_t audit_manifest_serial(const struct audit_manifest *am)
{
	return am->m ? am->m->serial : 0;
}

struct audit_ctx {
	const struct audit_opts *o;
	/* the keyring, --enrolments and --firmware-refs, verified against it
	 * (verify/boot-inputs.h, the verdict's one loader) */
	const struct boot_trust *trust;   /* o->trust, or own */
	struct boot_trust own;
	struct audit_manifest *mf;
	size_t n_mf;
	json_t *nonces;   /* node -> hex */
	json_t *aks;      /* ak id -> node ("" for any) */
	json_t *nodes;    /* node -> pool ("" unknown) */
	json_t *manifests_out;
	struct promotion_set *rings;   /* --promotions, any ring; NULL without */
};

void audit_ctx_free(struct audit_ctx *c);

struct audit_result {
	json_t *head;     /* the document, "nodes" a json_splice_mark(0) */
	char **rows;      /* compact JSON rows, in output order */
	size_t n;
	int worst;        /* enum audit_class */
};
/* Row i parsed (a new reference; NULL only if the text was corrupted). */
json_t *audit_result_row(const struct audit_result *r, size_t i);

/* An audit row as a type: the row the checks build as JSON
 * (audit_new_row, audit_add_finding; docs/audit.md "nodes") decoded
 * once, in audit/audit-row.c, for every reader in audit/ (the order and
 * the pool-wide checks, the renderers); none walks the row.  Strings
 * point into doc; a member of another type reads as absent (NULL). */
struct audit_row_drift {
	const char *field;
	const json_t *expected, *actual;   /* any JSON, as written; NULL when absent */
};
struct audit_row_finding {
	const char *code, *detail;
};
struct audit_row {
	const json_t *doc;      /* borrowed */
	const char *node, *pool, *report, *nonce, *time, *group, *verdict;
	const char *tuple_digest, *expected_tuple_digest;
	bool has_ring;          /* a "ring" member (the RING column) ... */
	const char *ring;       /* ... and its name */
	bool has_serial;        /* serial is an integer */
	long long serial;
	int cls;                /* "class", 0 when absent */
	bool has_ring_serial;   /* ring_serial {ring, serial}: the ring evidence it was verified against */
	const char *ring_serial_ring;
	long long ring_serial;  /* 0 when not an integer */
	struct audit_row_drift *drift;
	size_t n_drift;
	struct audit_row_finding *findings;
	size_t n_findings;
};
void audit_row_decode(const json_t *row, struct audit_row *v);
void audit_row_release(struct audit_row *v);

/* The result's head (AUDIT_SCHEMA document less its nodes), decoded. */
struct audit_head_manifest {
	const char *file, *pool, *tuple_digest, *status, *error;
	bool has_error;         /* an "error" member */
	long long serial;       /* 0 when not an integer */
};
struct audit_head {
	const char *now;
	struct audit_head_manifest *manifests;
	size_t n_manifests;
	const json_t *summary;  /* verdict -> count, in the head's order */
	const json_t *ignored;  /* the ignored older reports' names */
};
void audit_head_decode(const json_t *head, struct audit_head *h);
void audit_head_release(struct audit_head *h);

/* audit/ring-rollback.c: a "ring-rollback" finding when the report's ring
 * check met promotions below the serial its verifier had seen;
 * row["ring_serial"] = {ring, serial}. */
void audit_ring_report(const struct node_report *rep, json_t *row);
/* The same finding on newer when its ring serial is below older's. */
void audit_ring_compare(json_t *newer, const json_t *older);

/* Keyring, --nonces, --aks, --nodes and the manifests directory. */
int audit_load_inputs(struct audit_ctx *c, ingot_error *e);
/* The pool's current manifest: the valid one with the highest serial. */
const struct audit_manifest *audit_pool_current(const struct audit_ctx *c, const char *pool);
/* Sorted names in dir ending in suffix (dot files skipped); free each and *out. */
int audit_list_dir(const char *dir, const char *suffix, struct dirent ***out, int *n, ingot_error *e);

/* A node row {"node","pool","report","tuple_digest","serial","findings","drift"}. */
json_t *audit_new_row(const char *node, const char *pool, const char *file);
void audit_add_finding(json_t *row, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A drift entry {"field","expected","actual"} on the row (takes expected and actual). */
void audit_add_drift(json_t *row, const char *field, json_t *expected, json_t *actual);
/* Every check of one report file; never fails, problems become findings. */
/* aks: the calling thread's parsed AKs (attest/quote.h), reused across its reports. */
json_t *audit_node_report(struct audit_ctx *c, struct ak_cache *aks, const char *path, const char *file);
/* The same checks of a report already decoded (file names it in the row);
 * stale: a staleness judged by the caller, added as a "stale" finding. */
json_t *audit_node_check(struct audit_ctx *c, struct ak_cache *aks, const struct node_report *rep, const char *file,
			 const char *stale);

#endif
