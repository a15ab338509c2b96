/* An audit result: the head document and the rows as compact text,
 * parsed one at a time where they are rendered. */
#include "audit/audit-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/strbuf.h"
#include "lib/xalloc.h"

/* Here, not in audit.c: the driver calls into this file, so this file
 * calls nothing there (no two files call each other in a loop). */
int audit_class_severity(int cls)
{
	static const int severity[] = {
		[AUDIT_HEALTHY] = 0, [AUDIT_UNVERIFIED] = 1, [AUDIT_DRIFT] = 2, [AUDIT_FORGED] = 3,
	};
	return cls >= 0 && (size_t)cls < ARRAY_SIZE(severity) ? severity[cls] : 3;
}

void audit_result_free(struct audit_result *r)
{
	if (!r)
		return;
	json_decref(r->head);
	for (size_t i = 0; i < r->n; i++)
		free(r->rows[i]);
	free(r->rows);
	free(r);
}

json_t *audit_result_row(const struct audit_result *r, size_t i)
{
	return i < r->n ? json_loads(r->rows[i], JSON_ALLOW_NUL, NULL) : NULL;
}

struct audit_result *audit_result_from_json(const json_t *doc)
{
	const json_t *nodes = json_object_get(doc, "nodes");
	struct audit_result *r;
	json_t *row;
	size_t i;

	if (!json_is_array(nodes))
		return NULL;
	r = xcalloc(1, sizeof(*r));
	r->head = json_deep_copy(doc);
	json_object_set_new(r->head, "nodes", json_splice_mark(0));
	r->rows = xcalloc(json_array_size(nodes) + 1, sizeof(*r->rows));
	json_array_foreach(nodes, i, row) {
		int c = (int)json_integer_value(json_object_get(row, "class"));
		if (audit_class_severity(c) > audit_class_severity(r->worst))
			r->worst = c;
		if (!(r->rows[r->n++] = json_compact(row, NULL)))
			xalloc_die();
	}
	return r;
}

int audit_worst_class(const struct audit_result *r)
{
	return r->worst;
}

struct row_iter {
	const struct audit_result *r;
	size_t next;
};

static int next_row(void *ctx, json_t **elem, ingot_error *e)
{
	struct row_iter *it = ctx;

	*elem = NULL;
	if (it->next >= it->r->n)
		return 0;
	if (!(*elem = audit_result_row(it->r, it->next++)))
		return ingot_fail(e, -EBADMSG, "audit: row %zu: not JSON", it->next - 1);
	return 0;
}

/* The bytes json_dumps(document, flags) would give, a row at a time,
 * with head standing for r's, and a line break. */
static int dump_as(const struct audit_result *r, const json_t *head, size_t flags, const struct json_out *out,
		   ingot_error *e)
{
	struct row_iter it = { .r = r };
	struct json_splice sp = { next_row, &it };
	int rc = json_dump_spliced(head, flags, &sp, 1, out, NULL, e);
	return rc < 0 ? rc : out->write(out->ctx, "\n", 1, e);
}

static int dump(const struct audit_result *r, const struct json_out *out, ingot_error *e)
{
	return dump_as(r, r->head, JSON_CANONICAL_FLAGS, out, e);
}

const json_t *audit_result_manifests(const struct audit_result *r)
{
	return json_object_get(r->head, "manifests");
}

char *audit_result_compact(const struct audit_result *r, const json_t *extra, ingot_error *e)
{
	_cleanup_json_ json_t *head = json_copy(r->head);   /* shallow: the rows stay text */
	struct strbuf sb = STRBUF_INIT;

	if (!head || json_object_update(head, (json_t *)extra) < 0)
		xalloc_die();
	if (dump_as(r, head, JSON_COMPACT | JSON_SORT_KEYS, &(struct json_out){ json_out_strbuf, &sb }, e) < 0) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb, NULL);
}

static int out_file(void *f, const char *buf, size_t len, ingot_error *e)
{
	return fwrite(buf, 1, len, f) == len ? 0 : ingot_fail(e, -EIO, "audit: cannot write the JSON result");
}

int audit_write_json(const struct audit_result *r, FILE *out, ingot_error *e)
{
	return dump(r, &(struct json_out){ out_file, out }, e);
}

static int out_atomic(void *af, const char *buf, size_t len, ingot_error *e)
{
	return atomic_write(af, buf, len, e);
}

int audit_save_json(const struct audit_result *r, const char *path, ingot_error *e)
{
	_cleanup_atomic_ struct atomic_file af = { .fd = -1 };
	int rc = atomic_open(&af, path, 0644, e);

	if (rc < 0 || (rc = dump(r, &(struct json_out){ out_atomic, &af }, e)) < 0)
		return rc;
	return atomic_commit(&af, e);
}
