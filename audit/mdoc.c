#include "audit/mdoc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base64.h"
#include "lib/cleanup.h"
#include "lib/json.h"

void mdoc_free(struct mdoc *d)
{
	json_decref(d->manifest);
	json_decref(d->envelope);
	json_decref(d->statement);
	d->manifest = d->envelope = d->statement = NULL;
}

static int check_list(const char *name, const json_t *m, const char *list, const char *key,
		      ingot_error *e)
{
	json_t *arr = json_object_get(m, list), *it;
	size_t i;

	if (!json_is_array(arr))
		return ingot_fail(e, -EINVAL, "%s: field '%s': expected an array", name, list);
	json_array_foreach(arr, i, it) {
		if (!json_is_object(it))
			return ingot_fail(e, -EINVAL, "%s: %s[%zu]: expected an object, got %s",
					  name, list, i, json_is_null(it) ? "null" : "another type");
		if (!json_is_string(json_object_get(it, key)))
			return ingot_fail(e, -EINVAL, "%s: %s[%zu]: field '%s': expected a string",
					  name, list, i, key);
	}
	return 0;
}

int manifest_check_shape(const char *name, const json_t *m, ingot_error *e)
{
	const char *schema;
	json_t *tuple;

	if (!json_is_object(m))
		return ingot_fail(e, -EINVAL, "%s: expected a JSON object", name);
	schema = json_string_value(json_object_get(m, "schema"));
	if (!schema || strcmp(schema, MANIFEST_SCHEMA))
		return ingot_fail(e, -EINVAL, "%s: field 'schema': expected \"%s\", got %s%s%s", name,
				  MANIFEST_SCHEMA, schema ? "\"" : "", schema ? schema : "nothing",
				  schema ? "\"" : "");
	if (!json_is_object(json_object_get(m, "recipe")))
		return ingot_fail(e, -EINVAL, "%s: field 'recipe': expected an object", name);
	tuple = json_object_get(m, "tuple");
	if (tuple && !json_is_object(tuple) && !json_is_null(tuple))
		return ingot_fail(e, -EINVAL, "%s: field 'tuple': expected an object or null", name);
	if (check_list(name, m, "artifacts", "name", e) < 0)
		return e ? e->code : -EINVAL;
	if (check_list(name, m, "files", "path", e) < 0)
		return e ? e->code : -EINVAL;
	return 0;
}

/* DSSE envelope -> in-toto statement -> predicate (the manifest). */
static int from_envelope(const char *name, json_t *env, struct mdoc *out, ingot_error *e)
{
	const char *ptype, *payload, *pred_type;
	_cleanup_free_ uint8_t *raw = NULL;
	size_t rawlen;
	json_t *pred, *sigs;
	_cleanup_json_ json_t *st = NULL;
	int r;

	if (json_get_str(env, "payloadType", name, &ptype, e) < 0 ||
	    json_get_str(env, "payload", name, &payload, e) < 0 ||
	    json_get_arr(env, "signatures", name, &sigs, e) < 0)
		return -EINVAL;
	if (strcmp(ptype, DSSE_PAYLOAD_TYPE))
		return ingot_fail(e, -EINVAL, "%s: field 'payloadType': expected \"%s\", got \"%s\"",
				  name, DSSE_PAYLOAD_TYPE, ptype);
	if (base64_decode(payload, strlen(payload), &raw, &rawlen) < 0)
		return ingot_fail(e, -EINVAL, "%s: field 'payload': expected standard base64", name);
	r = json_read_buf(name, (const char *)raw, rawlen, &st, e);
	if (r < 0)
		return ingot_prefix(e, "%s: payload", name);
	if (!json_is_object(st))
		return ingot_fail(e, -EINVAL, "%s: payload: expected an in-toto statement object", name);
	pred_type = json_string_value(json_object_get(st, "predicateType"));
	if (!pred_type || strcmp(pred_type, INGOT_PREDICATE_TYPE))
		return ingot_fail(e, -EINVAL, "%s: payload: field 'predicateType': expected \"%s\", got %s",
				  name, INGOT_PREDICATE_TYPE, pred_type ? pred_type : "nothing");
	pred = json_object_get(st, "predicate");
	char what[512];
	snprintf(what, sizeof(what), "%s: predicate", name);
	r = manifest_check_shape(what, pred, e);
	if (r < 0)
		return r;
	out->manifest = json_incref(pred);
	out->envelope = json_incref(env);
	out->statement = TAKE_PTR(st);
	return 0;
}

int mdoc_from_json(const char *name, json_t *doc, struct mdoc *out, ingot_error *e)
{
	int r;

	memset(out, 0, sizeof(*out));
	if (json_is_object(doc) && json_object_get(doc, "payloadType"))
		return from_envelope(name, doc, out, e);
	r = manifest_check_shape(name, doc, e);
	if (r < 0)
		return r;
	out->manifest = json_incref(doc);
	return 0;
}

int mdoc_load(const char *path, struct mdoc *out, ingot_error *e)
{
	_cleanup_json_ json_t *doc = NULL;
	int r;

	memset(out, 0, sizeof(*out));
	r = json_read_file(path, &doc, e);
	if (r < 0)
		return r;
	return mdoc_from_json(path, doc, out, e);
}
