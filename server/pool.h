/* The pool view (docs/verifier.md, GET /v1/pools/NAME): the findings of
 * `ingot audit` (audit/audit.h, the same function) over each node's latest
 * evidence as the verifier judged it, kept in the verdict's transaction
 * (server/db.h, table evidence), with the nodes the sweep calls stale
 * flagged by the audit's own "stale" finding. */
#ifndef INGOT_SERVER_POOL_H
#define INGOT_SERVER_POOL_H

#include <jansson.h>
#include <stdint.h>

#include "lib/err.h"
#include "server/serve.h"

/* The evidence kept for a verdict, as JSON text (malloc'd): the node's
 * report (or, without one or with one naming another node, a bare
 * ingot.report/v1 naming the node at time), its "attestation" what was judged: the measured boot's quote
 * and event log (base64), as `ingot audit` reads a report. */
char *pool_evidence_doc(const json_t *report, const char *node, const json_t *quote, const char *log64, int64_t time);

/* The audit document (schema ingot.audit/v1, "pool" and "stale_after"
 * added) of pool over rows (db.h's pool_evidence) at now, judged by the
 * verifier's trust (its keyrings, records and references, loaded once)
 * and its configuration's manifests, as the reply's text (compact, keys
 * sorted, malloc'd).  Returns the HTTP status: 200 with *out, else the refusal's with e (404: no manifest
 * of the verifier names the pool; 500: the audit could not run). */
struct boot_trust;
unsigned pool_view(const struct serve_config *c, const struct boot_trust *trust, const json_t *rows, const char *pool,
		   int64_t now, char **out, ingot_error *e);

#endif
