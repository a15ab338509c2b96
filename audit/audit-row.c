/* The audit's rows and head read back as types (audit/audit-private.h):
 * the one place in audit/ that walks them. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit-private.h"
#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/xalloc.h"

#define M(path, type, member) { path, offsetof(type, member) }

static const struct json_str_member row_strings[] = {
	M("node", struct audit_row, node), M("pool", struct audit_row, pool),
	M("report", struct audit_row, report), M("nonce", struct audit_row, nonce),
	M("time", struct audit_row, time), M("group", struct audit_row, group),
	M("verdict", struct audit_row, verdict), M("tuple_digest", struct audit_row, tuple_digest),
	M("expected_tuple_digest", struct audit_row, expected_tuple_digest),
	M("ring", struct audit_row, ring), M("ring_serial.ring", struct audit_row, ring_serial_ring),
};
static const struct json_str_member finding_strings[] = {
	M("code", struct audit_row_finding, code), M("detail", struct audit_row_finding, detail),
};
static const struct json_str_member manifest_strings[] = {
	M("file", struct audit_head_manifest, file), M("pool", struct audit_head_manifest, pool),
	M("tuple_digest", struct audit_head_manifest, tuple_digest),
	M("status", struct audit_head_manifest, status), M("error", struct audit_head_manifest, error),
};

void audit_row_decode(const json_t *row, struct audit_row *v)
{
	const json_t *serial = json_object_get(row, "serial"), *rs = json_object_get(row, "ring_serial");
	const json_t *drift = json_object_get(row, "drift"), *findings = json_object_get(row, "findings");
	size_t i;
	json_t *x;

	memset(v, 0, sizeof(*v));
	v->doc = row;
	json_get_strings(row, row_strings, ARRAY_SIZE(row_strings), v);
	v->has_ring = json_object_get(row, "ring") != NULL;
	v->has_serial = json_is_integer(serial);
	v->serial = json_integer_value(serial);
	v->cls = (int)json_integer_value(json_object_get(row, "class"));
	v->has_ring_serial = rs != NULL;
	v->ring_serial = json_integer_value(json_object_get(rs, "serial"));
	v->drift = xcalloc(json_array_size(drift) + 1, sizeof(*v->drift));
	json_array_foreach(drift, i, x) {
		struct audit_row_drift *d = &v->drift[v->n_drift++];
		d->field = json_string_value(json_object_get(x, "field"));
		d->expected = json_object_get(x, "expected");
		d->actual = json_object_get(x, "actual");
	}
	v->findings = xcalloc(json_array_size(findings) + 1, sizeof(*v->findings));
	json_array_foreach(findings, i, x)
		json_get_strings(x, finding_strings, ARRAY_SIZE(finding_strings), &v->findings[v->n_findings++]);
}

void audit_row_release(struct audit_row *v)
{
	free(v->drift);
	free(v->findings);
	memset(v, 0, sizeof(*v));
}

void audit_head_decode(const json_t *head, struct audit_head *h)
{
	const json_t *mfs = json_object_get(head, "manifests");
	size_t i;
	json_t *m;

	memset(h, 0, sizeof(*h));
	h->now = json_string_value(json_object_get(head, "now"));
	h->summary = json_object_get(head, "summary");
	h->ignored = json_object_get(head, "ignored_reports");
	h->manifests = xcalloc(json_array_size(mfs) + 1, sizeof(*h->manifests));
	json_array_foreach(mfs, i, m) {
		struct audit_head_manifest *hm = &h->manifests[h->n_manifests++];
		json_get_strings(m, manifest_strings, ARRAY_SIZE(manifest_strings), hm);
		hm->has_error = json_object_get(m, "error") != NULL;
		hm->serial = json_integer_value(json_object_get(m, "serial"));
	}
}

void audit_head_release(struct audit_head *h)
{
	free(h->manifests);
	memset(h, 0, sizeof(*h));
}
