#include "manifest/mdoc.h"

#include <stdint.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/json.h"
#include "manifest/dsse.h"
#include "manifest/schema.h"

void mdoc_free(struct mdoc *d)
{
	json_decref(d->manifest);
	json_decref(d->envelope);
	json_decref(d->statement);
	d->manifest = d->envelope = d->statement = NULL;
}

/* DSSE envelope -> in-toto statement -> predicate (the manifest), with
 * the same parser the verifier uses. */
static int from_envelope(const char *name, json_t *env, struct mdoc *out, ingot_error *e)
{
	_cleanup_free_ uint8_t *payload = NULL;
	const char *type;
	size_t len;
	int r;

	r = envelope_parse(name, env, &payload, &len, e);
	if (r < 0)
		return r;
	type = json_string_value(json_object_get(env, "payloadType"));
	if (!envelope_payload_type_ok(type))
		return ingot_fail(e, -EINVAL, "%s: payloadType: expected \"%s\" or \"%s\", got \"%.64s\"", name,
				  ENVELOPE_PAYLOAD_TYPE, ENVELOPE_PAYLOAD_TYPE_V1, type);
	r = envelope_statement_manifest(name, payload, len, MANIFEST_REVIEW, &out->statement,
					&out->manifest, e);
	if (r < 0)
		return r;
	out->envelope = json_incref(env);
	return 0;
}

int mdoc_from_json(const char *name, json_t *doc, struct mdoc *out, ingot_error *e)
{
	int r;

	memset(out, 0, sizeof(*out));
	if (json_is_object(doc) && json_object_get(doc, "payloadType"))
		r = from_envelope(name, doc, out, e);
	else if ((r = manifest_check_level(name, doc, MANIFEST_REVIEW, e)) == 0)
		out->manifest = json_incref(doc);
	if (r < 0)
		mdoc_free(out);
	return r;
}

int mdoc_load(const char *path, struct mdoc *out, ingot_error *e)
{
	_cleanup_json_ json_t *doc = NULL;
	int r;

	memset(out, 0, sizeof(*out));
	r = manifest_read_file(path, &doc, NULL, e);
	if (r < 0)
		return r;
	return mdoc_from_json(path, doc, out, e);
}
