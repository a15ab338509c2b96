/* The tuple check of a node report (ingot.report/v1) against a manifest,
 * for a judge off the node (ingot serve): the facts the node probed, as it
 * reported them, compared by the one tuple check (verify/tuplecheck.h).
 * The report is the node's word: no PCR covers it (docs/verifier.md
 * "Threat model"). */
#ifndef INGOT_VERIFY_REPORT_TUPLE_H
#define INGOT_VERIFY_REPORT_TUPLE_H

#include <jansson.h>
#include <stddef.h>

#include "manifest/typed.h"
#include "verify/node-report.h"

/* CHECK_TUPLE of report's probe (struct node_report, verify/node-report.h)
 * against manifest's tuple: ST_PASS, ST_FAIL (the
 * node contradicts the manifest), ST_ERROR (not made), or ST_SKIP (the
 * manifest has no tuple); summary gets its one line. */
enum check_status report_tuple_check(const struct manifest *manifest, const struct node_report *report,
				     char *summary, size_t n);

#endif
