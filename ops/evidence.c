/* Evidence statements: a parsed test result about one image, signed by the
 * runner.  Signing goes through keys/statement.h (statement_sign), so an
 * evidence envelope is checked exactly like a manifest's. */
#include "ops/evidence.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "manifest/mdoc.h"
#include "keys/statement.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/xalloc.h"
#include "verify/promotion.h"

int evidence_parse_json(const char *name, const char *kind, const char *buf, size_t len,
			json_t **result, ingot_error *e)
{
	_cleanup_json_ json_t *doc = NULL;
	json_t *jres = NULL, *jto = NULL;
	const char *res, *to;
	int r;

	r = json_read_buf(name, buf, len, &doc, e);
	if (r < 0)
		return r;
	if (!json_is_object(doc))
		return ingot_fail(e, -EINVAL, "%s: expected a JSON object (the runner's result)", name);
	if (!strcmp(kind, "rollback")) {
		json_unpack(doc, "{s?o s?o}", "result", &jres, "rolled_back_to", &jto);
		res = json_string_value(jres);
		to = json_string_value(jto);
		if (!res || (strcmp(res, "pass") && strcmp(res, "fail")))
			return ingot_fail(e, -EINVAL, "%s: result: expected \"pass\" or \"fail\"", name);
		if (!to || !is_sha256_hex(to))
			return ingot_fail(e, -EINVAL, "%s: rolled_back_to: expected the sha256 of the "
					  "image the node was rolled back to", name);
	}
	*result = TAKE_PTR(doc);
	return 0;
}

static int parse_kind(const struct evidence_opts *o, const char *buf, size_t len, json_t **res,
		      ingot_error *e)
{
	if (!strcmp(o->kind, "nccl-tests"))
		return evidence_parse_nccl(o->from, buf, len, res, e);
	if (!strcmp(o->kind, "dcgm-diag"))
		return evidence_parse_dcgm(o->from, buf, len, o->dcgm_level, res, e);
	if (!strcmp(o->kind, "custom") || !strcmp(o->kind, "rollback"))
		return evidence_parse_json(o->from, o->kind, buf, len, res, e);
	return ingot_fail(e, -EINVAL, "evidence kind \"%.32s\": expected nccl-tests, dcgm-diag, "
			  "custom or rollback", o->kind);
}

static json_t *str_or_null(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

int evidence_create(const struct evidence_opts *o, struct signing_key *const *keys,
		    size_t n_keys, json_t **envelope, ingot_error *e)
{
	_cleanup_mdoc_ struct mdoc md = { 0 };
	_cleanup_free_ char *buf = NULL;
	_cleanup_json_ json_t *res = NULL, *st = NULL;
	char date[32], host[256] = "";
	const struct manifest *m;
	json_t *nodes = NULL, *ncclv = NULL, *ranks = NULL, *gpus = NULL;
	const char *node = o->node;
	struct tm tm;
	size_t len;
	int r;

	r = mdoc_load_head(o->manifest_path, &md, e);
	if (r < 0)
		return r;
	m = md.manifest;
	if (!(m->have & MF_IMAGE))
		return ingot_fail(e, -EINVAL, "%s: image.sha256: expected the image digest (64 hex "
				  "digits)", o->manifest_path);
	r = read_file(o->from, EVIDENCE_INPUT_MAX, &buf, &len, e);
	if (r < 0)
		return r;
	r = parse_kind(o, buf, len, &res, e);
	if (r < 0)
		return r;

	/* The runner's result as the parser gave it: the members the
	 * predicate repeats, each optional. */
	json_unpack(res, "{s?o s?o s?o s?o}", "nodes", &nodes, "nccl_version", &ncclv, "ranks", &ranks,
		    "gpus", &gpus);
	if (!node && json_array_size(nodes))
		node = json_string_value(json_array_get(nodes, 0));
	if (!node && gethostname(host, sizeof(host) - 1) == 0)
		node = host;
	if (!gmtime_r(&o->date, &tm) || !strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm))
		return ingot_fail(e, -EINVAL, "evidence date out of range");
	json_t *pred = json_pack("{s:s,s:o,s:o,s:o,s:{s:o,s:I,s:I,s:O},s:o,s:o,s:s,s:O}",
		"kind", o->kind,
		"recipe", str_or_null(m->recipe.name),
		"manifest_serial", m->have & MF_VERSION ? json_integer((json_int_t)m->serial) : json_null(),
		"node", str_or_null(node),
		"topology", "label", str_or_null(o->topology),
		"nodes", (json_int_t)(json_array_size(nodes) ? json_array_size(nodes) : 1),
		"ranks", json_integer_value(ranks),
		"gpus", gpus ?: json_null(),
		"nccl_version", str_or_null(json_string_value(ncclv)),
		"tuple_nccl", manifest_tuple_nccl(m) ? json_string(manifest_tuple_nccl(m)) : json_null(),
		"date", date, "result", res);
	if (!pred)
		return ingot_fail(e, -ENOMEM, "out of memory");
	r = image_statement(EVIDENCE_PREDICATE_TYPE, m, pred, &st, e);
	if (r < 0)
		return r;
	return statement_sign(st, keys, n_keys, envelope, e);
}

const char *manifest_tuple_nccl(const struct manifest *m)
{
	json_t *v = NULL;

	json_unpack((json_t *)m->tuple, "{s?{s?o}}", "nccl", "version", &v);
	return json_string_value(v);
}

static void read_half(const json_t *half, struct nccl_half *h)
{
	const json_t *wrong = NULL, *busbw = NULL;

	json_unpack((json_t *)half, "{s?o,s?o}", "wrong", &wrong, "busbw", &busbw);
	h->validated = json_is_integer(wrong);
	h->wrong = json_integer_value(wrong);
	h->busbw = json_number_value(busbw);
}

void evidence_read(const json_t *pred, struct evidence *ev)
{
	const json_t *kind = NULL, *ncclv = NULL, *res = NULL, *nodes = NULL, *oob = NULL, *rows = NULL,
		     *level = NULL, *passed = NULL, *counts = NULL, *fail = NULL, *result = NULL, *to = NULL, *row;
	size_t i;

	memset(ev, 0, sizeof(*ev));
	/* Each object read once, every member optional and checked by type
	 * below: a signed predicate of another shape fails its checks. */
	json_unpack((json_t *)pred, "{s?o,s?o,s?o}", "kind", &kind, "nccl_version", &ncclv, "result", &res);
	json_unpack((json_t *)res, "{s?o,s?o,s?o,s?o,s?o,s?o,s?o,s?o}", "nodes", &nodes, "out_of_bounds_ok", &oob,
		    "rows", &rows, "level", &level, "passed", &passed, "counts", &counts, "result", &result,
		    "rolled_back_to", &to);
	json_unpack((json_t *)counts, "{s?o}", "fail", &fail);
	ev->kind = json_string_value(kind);
	ev->nccl_version = json_string_value(ncclv);
	ev->nodes = json_array_size(nodes);
	ev->has_out_of_bounds = json_is_boolean(oob);
	ev->out_of_bounds_ok = json_is_true(oob);
	ev->level = json_integer_value(level);
	ev->passed = json_is_true(passed);
	ev->failed = json_integer_value(fail);
	ev->result = json_string_value(result);
	ev->rolled_back_to = json_string_value(to);
	ev->rows = xcalloc(json_array_size(rows) + 1, sizeof(*ev->rows));
	json_array_foreach(rows, i, row) {
		const json_t *size = NULL, *oop = NULL, *inp = NULL;
		struct nccl_row *r = &ev->rows[ev->n_rows++];

		json_unpack((json_t *)row, "{s?o,s?o,s?o}", "size", &size, "out_of_place", &oop, "in_place", &inp);
		r->size = json_integer_value(size);
		read_half(oop, &r->out_of_place);
		read_half(inp, &r->in_place);
	}
}

void evidence_release(struct evidence *ev)
{
	free(ev->rows);
	memset(ev, 0, sizeof(*ev));
}
