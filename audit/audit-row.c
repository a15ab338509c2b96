/* The audit's rows and head read back as types (audit/audit-private.h):
 * the one place in audit/ that walks them. */
#include <stdlib.h>
#include <string.h>

#include "audit/audit-private.h"
#include "lib/xalloc.h"

static const char *str_at(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

void audit_row_decode(const json_t *row, struct audit_row *v)
{
	const json_t *serial = json_object_get(row, "serial"), *rs = json_object_get(row, "ring_serial");
	const json_t *drift = json_object_get(row, "drift"), *findings = json_object_get(row, "findings");
	size_t i;
	json_t *x;

	memset(v, 0, sizeof(*v));
	v->doc = row;
	v->node = str_at(row, "node");
	v->pool = str_at(row, "pool");
	v->report = str_at(row, "report");
	v->nonce = str_at(row, "nonce");
	v->time = str_at(row, "time");
	v->group = str_at(row, "group");
	v->verdict = str_at(row, "verdict");
	v->tuple_digest = str_at(row, "tuple_digest");
	v->expected_tuple_digest = str_at(row, "expected_tuple_digest");
	v->has_ring = json_object_get(row, "ring") != NULL;
	v->ring = str_at(row, "ring");
	v->has_serial = json_is_integer(serial);
	v->serial = json_integer_value(serial);
	v->cls = (int)json_integer_value(json_object_get(row, "class"));
	v->has_ring_serial = rs != NULL;
	v->ring_serial_ring = str_at(rs, "ring");
	v->ring_serial = json_integer_value(json_object_get(rs, "serial"));
	v->drift = xcalloc(json_array_size(drift) + 1, sizeof(*v->drift));
	json_array_foreach(drift, i, x) {
		struct audit_row_drift *d = &v->drift[v->n_drift++];
		d->field = str_at(x, "field");
		d->expected = json_object_get(x, "expected");
		d->actual = json_object_get(x, "actual");
	}
	v->findings = xcalloc(json_array_size(findings) + 1, sizeof(*v->findings));
	json_array_foreach(findings, i, x) {
		struct audit_row_finding *f = &v->findings[v->n_findings++];
		f->code = str_at(x, "code");
		f->detail = str_at(x, "detail");
	}
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
	h->now = str_at(head, "now");
	h->summary = json_object_get(head, "summary");
	h->ignored = json_object_get(head, "ignored_reports");
	h->manifests = xcalloc(json_array_size(mfs) + 1, sizeof(*h->manifests));
	json_array_foreach(mfs, i, m) {
		struct audit_head_manifest *hm = &h->manifests[h->n_manifests++];
		hm->file = str_at(m, "file");
		hm->pool = str_at(m, "pool");
		hm->tuple_digest = str_at(m, "tuple_digest");
		hm->status = str_at(m, "status");
		hm->error = str_at(m, "error");
		hm->has_error = json_object_get(m, "error") != NULL;
		hm->serial = json_integer_value(json_object_get(m, "serial"));
	}
}

void audit_head_release(struct audit_head *h)
{
	free(h->manifests);
	memset(h, 0, sizeof(*h));
}
