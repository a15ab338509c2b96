/* Evidence statements: a parsed test result about one image, signed by the
 * runner.  Signing goes through keys/ (envelope_sign_statement), so an
 * evidence envelope is checked exactly like a manifest's. */
#include "ops/evidence.h"

#include <string.h>
#include <unistd.h>

#include "manifest/mdoc.h"
#include "keys/envelope.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "verify/promotion.h"

int evidence_parse_json(const char *name, const char *kind, const char *buf, size_t len,
			json_t **result, ingot_error *e)
{
	_cleanup_json_ json_t *doc = NULL;
	const char *res, *to;
	int r;

	r = json_read_buf(name, buf, len, &doc, e);
	if (r < 0)
		return r;
	if (!json_is_object(doc))
		return ingot_fail(e, -EINVAL, "%s: expected a JSON object (the runner's result)", name);
	if (!strcmp(kind, "rollback")) {
		res = json_string_value(json_object_get(doc, "result"));
		to = json_string_value(json_object_get(doc, "rolled_back_to"));
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

int sign_statement_keys(const json_t *st, struct signing_key *const *keys, size_t n_keys,
			json_t **envelope, ingot_error *e)
{
	_cleanup_json_ json_t *env = NULL;
	int r;

	/* The payload is json_compact(st): equal for every key, so the
	 * signatures of one-key envelopes can be gathered into the first. */
	for (size_t i = 0; i < n_keys; i++) {
		_cleanup_json_ json_t *one = NULL;
		r = envelope_sign_statement(st, keys[i], i ? &one : &env, e);
		if (r < 0)
			return r;
		if (one && json_array_extend(json_object_get(env, "signatures"),
					     json_object_get(one, "signatures")) < 0)
			return ingot_fail(e, -ENOMEM, "out of memory");
	}
	*envelope = TAKE_PTR(env);
	return 0;
}

int evidence_create(const struct evidence_opts *o, struct signing_key *const *keys,
		    size_t n_keys, json_t **envelope, ingot_error *e)
{
	_cleanup_mdoc_ struct mdoc md = { 0 };
	_cleanup_free_ char *buf = NULL;
	_cleanup_json_ json_t *res = NULL, *st = NULL;
	char date[32], host[256] = "";
	const struct manifest *m;
	const json_t *nodes;
	const char *node = o->node, *ncclv;
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

	nodes = json_object_get(res, "nodes");
	if (!node && json_array_size(nodes))
		node = json_string_value(json_array_get(nodes, 0));
	if (!node && gethostname(host, sizeof(host) - 1) == 0)
		node = host;
	ncclv = json_string_value(json_object_get(res, "nccl_version"));
	if (!gmtime_r(&o->date, &tm) || !strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm))
		return ingot_fail(e, -EINVAL, "evidence date out of range");
	json_t *pred = json_pack("{s:s,s:o,s:o,s:o,s:{s:o,s:I,s:I,s:O},s:o,s:O,s:s,s:O}",
		"kind", o->kind,
		"recipe", str_or_null(m->recipe.name),
		"manifest_serial", m->have & MF_VERSION ? json_integer((json_int_t)m->serial) : json_null(),
		"node", str_or_null(node),
		"topology", "label", str_or_null(o->topology),
		"nodes", (json_int_t)(json_array_size(nodes) ? json_array_size(nodes) : 1),
		"ranks", json_integer_value(json_object_get(res, "ranks")),
		"gpus", json_object_get(res, "gpus") ?: json_null(),
		"nccl_version", str_or_null(ncclv),
		"tuple_nccl", json_object_get(json_object_get(m->tuple, "nccl"), "version") ?: json_null(),
		"date", date, "result", res);
	if (!pred)
		return ingot_fail(e, -ENOMEM, "out of memory");
	r = image_statement(EVIDENCE_PREDICATE_TYPE, m, pred, &st, e);
	if (r < 0)
		return r;
	return sign_statement_keys(st, keys, n_keys, envelope, e);
}
