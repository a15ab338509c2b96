/* A node report's tuple, judged off the node (verify/report-tuple.h). */
#include "verify/report-tuple.h"

#include <stdio.h>

#include "lib/xalloc.h"
#include "verify/tuplecheck.h"

struct node_probe *probe_from_json(const json_t *probe)
{
	struct node_probe *p = xcalloc(1, sizeof(*p));
	size_t i;
	json_t *f;

	json_array_foreach(json_object_get(probe, "facts"), i, f) {
		const char *k = json_string_value(json_object_get(f, "key"));
		const char *src = json_string_value(json_object_get(f, "source"));
		if (!k)
			continue;
		if (json_is_true(json_object_get(f, "unreadable")))
			probe_set_unreadable(p, k, "%s", src ? src : "report");
		else
			probe_set(p, k, json_string_value(json_object_get(f, "value")), src ? src : "report");
	}
	return p;
}

enum check_status report_tuple_check(const struct manifest *manifest, const json_t *report, char *summary, size_t n)
{
	const json_t *tuple = manifest->tuple;
	struct node_probe *p;
	struct verify_report vr;
	enum check_status st;

	if (!json_is_object(tuple)) {
		snprintf(summary, n, "the manifest has no tuple");
		return ST_SKIP;
	}
	p = probe_from_json(json_object_get(report, "probe"));
	report_init(&vr);
	tuplecheck_run(tuple, p, &vr);
	st = vr.checks[CHECK_TUPLE].status;
	snprintf(summary, n, "%s", vr.checks[CHECK_TUPLE].summary ? vr.checks[CHECK_TUPLE].summary : "");
	report_free(&vr);
	node_probe_free(p);
	return st;
}
