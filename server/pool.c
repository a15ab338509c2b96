/* The pool view (server/pool.h). */
#include "server/pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"
#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/time.h"
#include "lib/xalloc.h"
#include "verify/boot-inputs.h"

char *pool_evidence_doc(const json_t *report, const char *node, const json_t *quote, const char *log64, int64_t time)
{
	char when[TIME_RFC3339_LEN];
	const char *id = json_string_value(json_object_get(json_object_get(report, "node"), "id"));
	/* A report naming another node (refused by the verdict) is not kept:
	 * the pool view would list it under that node's name. */
	int own = id && !strcmp(id, node);
	_cleanup_json_ json_t *doc = own ? json_deep_copy(report)
					 : json_pack("{s:s,s:{s:s},s:s}", "schema", "ingot.report/v1", "node", "id",
							node, "time", time_format((time_t)time, when));
	char *text;

	/* The quote and log judged, never an attestation the report
	 * carried besides them. */
	if (!doc || json_object_set_new(doc, "attestation", json_pack("{s:s,s:O,s:s}", "mode", "measured-boot",
								       "quote", quote, "eventlog", log64)) < 0 ||
	    !(text = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS)))
		xalloc_die();   /* copies of parsed JSON: only memory can fail */
	return text;
}

/* Why the sweep calls the node stale, or NULL: marked so, or still
 * admitted on an admission older than stale-after (the sweep's own test,
 * before its next run). */
static const char *stale_reason(const struct serve_config *c, const json_t *row, int64_t now, char *buf, size_t len)
{
	const char *state = json_string_value(json_object_get(row, "state"));
	const json_t *la = json_object_get(row, "last_admit");
	char when[TIME_RFC3339_LEN];

	if (!state || (strcmp(state, "stale") &&
		       (strcmp(state, "admit") || !c->stale_after || !json_is_integer(la) ||
			json_integer_value(la) >= now - c->stale_after)))
		return NULL;
	if (json_is_integer(la))
		snprintf(buf, len, "the verifier: no admitted evidence since %s (stale-after %lld s)",
			 time_format((time_t)json_integer_value(la), when), (long long)c->stale_after);
	else
		snprintf(buf, len, "the verifier: marked stale");
	return buf;
}

/* A valid manifest of the verifier names pool (in the audit's list). */
static int pool_known(const json_t *manifests, const char *pool)
{
	size_t i;
	json_t *m;

	json_array_foreach(manifests, i, m) {
		const char *status = json_string_value(json_object_get(m, "status"));
		if (!strcmp(json_string_value(json_object_get(m, "pool")) ?: "", pool) && status &&
		    (!strcmp(status, "ok") || !strcmp(status, "expired")))
			return 1;
	}
	return 0;
}

unsigned pool_view(const struct serve_config *c, const struct boot_trust *trust, const json_t *rows, const char *pool,
		   int64_t now, char **out, ingot_error *e)
{
	size_t n = json_array_size(rows), nm = json_array_size(c->manifests), i;
	_cleanup_free_ struct audit_report *reps = xcalloc(n + 1, sizeof(*reps));
	_cleanup_free_ const char **mf = xcalloc(nm + 1, sizeof(*mf));
	_cleanup_free_ char *why = xcalloc(n + 1, 256);
	_cleanup_audit_result_ struct audit_result *res = NULL;
	_cleanup_json_ json_t *extra = NULL;
	json_t *row;

	*out = NULL;
	json_array_foreach(rows, i, row) {
		reps[i] = (struct audit_report){
			.name = json_string_value(json_object_get(row, "node")),
			.report = json_object_get(row, "evidence"),
			.nonce = json_string_value(json_object_get(row, "nonce")),
			.stale = stale_reason(c, row, now, why + i * 256, 256),
		};
	}
	json_array_foreach(c->manifests, i, row)
		mf[i] = json_string_value(row);
	/* What the verifier judges by: its keyrings, records, references,
	 * manifests and accepted weaknesses; the nonces it issued. */
	struct audit_opts o = {
		.trust = trust,
		.manifest_files = mf,
		.n_manifest_files = nm,
		.reports = reps,
		.n_reports = n,
		.now = (time_t)now,
		.jobs = 1,   /* a request's thread: the other requests keep the rest */
		.accept_weak = c->accept_weak,
		.mixed_ok = c->mixed_vendors ? &pool : NULL,
		.n_mixed_ok = c->mixed_vendors,
	};
	if (audit_run(&o, &res, e) < 0)
		return 500;
	if (!pool_known(audit_result_manifests(res), pool)) {
		ingot_fail(e, -ENOENT, "pool %s: no manifest of this verifier names it", pool);
		return 404;
	}
	if (!(extra = json_pack("{s:s,s:I}", "pool", pool, "stale_after", (json_int_t)c->stale_after)))
		xalloc_die();
	return (*out = audit_result_compact(res, extra, e)) ? 200 : 500;
}
