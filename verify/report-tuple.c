/* A node report's tuple, judged off the node (verify/report-tuple.h). */
#include "verify/report-tuple.h"

#include <stdio.h>

#include "verify/tuplecheck.h"

enum check_status report_tuple_check(const struct manifest *manifest, const struct node_report *report,
				     char *summary, size_t n)
{
	const json_t *tuple = manifest->tuple;
	struct verify_report vr;
	enum check_status st;

	if (!json_is_object(tuple)) {
		snprintf(summary, n, "the manifest has no tuple");
		return ST_SKIP;
	}
	report_init(&vr);
	tuplecheck_run(tuple, report->probe, &vr);
	st = vr.checks[CHECK_TUPLE].status;
	snprintf(summary, n, "%s", vr.checks[CHECK_TUPLE].summary ? vr.checks[CHECK_TUPLE].summary : "");
	report_free(&vr);
	return st;
}
