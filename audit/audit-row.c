/* The audit's rows and head read back as types (audit/audit-private.h):
 * the one place in audit/ that walks them. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit-private.h"
#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/xalloc.h"

/* Each object's members are listed in one json_unpack, all optional and
 * taken as they are ("o"): a member of another type reads as absent
 * (NULL, 0) here, as the columns expect. */

static void decode_drift(const json_t *x, struct audit_row_drift *d)
{
	json_t *field = NULL, *expected = NULL, *actual = NULL;

	json_unpack((json_t *)x, "{s?o s?o s?o}", "field", &field, "expected", &expected, "actual",
		    &actual);
	d->field = json_string_value(field);
	d->expected = expected;
	d->actual = actual;
}

static void decode_finding(const json_t *x, struct audit_row_finding *f)
{
	json_t *code = NULL, *detail = NULL;

	json_unpack((json_t *)x, "{s?o s?o}", "code", &code, "detail", &detail);
	f->code = json_string_value(code);
	f->detail = json_string_value(detail);
}

void audit_row_decode(const json_t *row, struct audit_row *v)
{
	json_t *node = NULL, *pool = NULL, *report = NULL, *nonce = NULL, *time = NULL, *group = NULL;
	json_t *verdict = NULL, *digest = NULL, *expected = NULL, *ring = NULL, *serial = NULL;
	json_t *cls = NULL, *rs = NULL, *rs_ring = NULL, *rs_serial = NULL, *drift = NULL;
	json_t *findings = NULL, *x;
	size_t i;

	memset(v, 0, sizeof(*v));
	v->doc = row;
	json_unpack((json_t *)row, "{s?o s?o s?o s?o s?o s?o s?o s?o s?o s?o s?o s?o s?o s?o s?o}",
		    "node", &node, "pool", &pool, "report", &report, "nonce", &nonce, "time", &time,
		    "group", &group, "verdict", &verdict, "tuple_digest", &digest,
		    "expected_tuple_digest", &expected, "ring", &ring, "serial", &serial, "class", &cls,
		    "ring_serial", &rs, "drift", &drift, "findings", &findings);
	json_unpack(rs, "{s?o s?o}", "ring", &rs_ring, "serial", &rs_serial);
	v->node = json_string_value(node);
	v->pool = json_string_value(pool);
	v->report = json_string_value(report);
	v->nonce = json_string_value(nonce);
	v->time = json_string_value(time);
	v->group = json_string_value(group);
	v->verdict = json_string_value(verdict);
	v->tuple_digest = json_string_value(digest);
	v->expected_tuple_digest = json_string_value(expected);
	v->has_ring = ring != NULL;
	v->ring = json_string_value(ring);
	v->has_serial = json_is_integer(serial);
	v->serial = json_integer_value(serial);
	v->cls = (int)json_integer_value(cls);
	v->has_ring_serial = rs != NULL;
	v->ring_serial_ring = json_string_value(rs_ring);
	v->ring_serial = json_integer_value(rs_serial);
	v->drift = xcalloc(json_array_size(drift) + 1, sizeof(*v->drift));
	json_array_foreach(drift, i, x)
		decode_drift(x, &v->drift[v->n_drift++]);
	v->findings = xcalloc(json_array_size(findings) + 1, sizeof(*v->findings));
	json_array_foreach(findings, i, x)
		decode_finding(x, &v->findings[v->n_findings++]);
}

void audit_row_release(struct audit_row *v)
{
	free(v->drift);
	free(v->findings);
	memset(v, 0, sizeof(*v));
}

void audit_head_decode(const json_t *head, struct audit_head *h)
{
	json_t *now = NULL, *summary = NULL, *ignored = NULL, *mfs = NULL, *m;
	size_t i;

	memset(h, 0, sizeof(*h));
	json_unpack((json_t *)head, "{s?o s?o s?o s?o}", "now", &now, "summary", &summary,
		    "ignored_reports", &ignored, "manifests", &mfs);
	h->now = json_string_value(now);
	h->summary = summary;
	h->ignored = ignored;
	h->manifests = xcalloc(json_array_size(mfs) + 1, sizeof(*h->manifests));
	json_array_foreach(mfs, i, m) {
		struct audit_head_manifest *hm = &h->manifests[h->n_manifests++];
		json_t *file = NULL, *pool = NULL, *digest = NULL, *status = NULL, *error = NULL;
		json_t *serial = NULL;

		json_unpack(m, "{s?o s?o s?o s?o s?o s?o}", "file", &file, "pool", &pool,
			    "tuple_digest", &digest, "status", &status, "error", &error, "serial", &serial);
		hm->file = json_string_value(file);
		hm->pool = json_string_value(pool);
		hm->tuple_digest = json_string_value(digest);
		hm->status = json_string_value(status);
		hm->error = json_string_value(error);
		hm->has_error = error != NULL;
		hm->serial = json_integer_value(serial);
	}
}

void audit_head_release(struct audit_head *h)
{
	free(h->manifests);
	memset(h, 0, sizeof(*h));
}
