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
#include "verify/nodeprobe.h"

/* The probe a report's "probe" member describes (probe_to_json's
 * inverse): a fact marked unreadable stays unreadable, so a comparison
 * needing it is "not made", never "absent". */
struct node_probe *probe_from_json(const json_t *probe);

/* CHECK_TUPLE of report against manifest's tuple: ST_PASS, ST_FAIL (the
 * node contradicts the manifest), ST_ERROR (not made), or ST_SKIP (the
 * manifest has no tuple); summary gets its one line. */
enum check_status report_tuple_check(const struct manifest *manifest, const json_t *report, char *summary, size_t n);

#endif
