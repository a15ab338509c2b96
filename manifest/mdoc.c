#include "manifest/mdoc.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/json.h"
#include "manifest/dsse.h"
#include "manifest/schema.h"

void mdoc_free(struct mdoc *d)
{
	manifest_free(d->manifest);
	json_decref(d->envelope);
	json_decref(d->statement);
	d->manifest = NULL;
	d->envelope = d->statement = NULL;
}

/* DSSE envelope -> in-toto statement -> predicate (the manifest), with
 * the same parser the verifier uses. */
static int from_envelope(const char *name, json_t *env, bool head, struct mdoc *out, ingot_error *e)
{
	_cleanup_free_ uint8_t *payload = NULL;
	_cleanup_json_ json_t *m = NULL;
	struct manifest_ref ref;
	json_t *full = NULL;
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
	r = envelope_statement_parse(name, payload, len, MANIFEST_REVIEW, &out->statement, &m, &ref, e);
	if (r < 0)
		return r;
	/* v2: the file list is the manifest file beside the envelope, read
	 * only if it is the one the statement names by digest. */
	if (ref.name[0] && !head) {
		if ((r = manifest_ref_load(name, NULL, &ref, m, MANIFEST_REVIEW, &full, e)) < 0)
			return r;
		json_decref(m);
		m = full;
	}
	/* Checked at MANIFEST_REVIEW by the statement's parser (v2: and by
	 * manifest_ref_load). */
	out->manifest = manifest_decode(name, m, MANIFEST_REVIEW);
	out->envelope = json_incref(env);
	return 0;
}

static int from_json(const char *name, json_t *doc, bool head, struct mdoc *out, ingot_error *e)
{
	int r;

	memset(out, 0, sizeof(*out));
	if (json_is_object(doc) && json_object_get(doc, "payloadType"))
		r = from_envelope(name, doc, head, out, e);
	else
		r = manifest_parse(name, doc, MANIFEST_REVIEW, &out->manifest, e);
	if (r < 0)
		mdoc_free(out);
	return r;
}

int mdoc_from_json(const char *name, json_t *doc, struct mdoc *out, ingot_error *e)
{
	return from_json(name, doc, false, out, e);
}

static int load(const char *path, bool head, struct mdoc *out, ingot_error *e)
{
	_cleanup_json_ json_t *doc = NULL;
	int r;

	memset(out, 0, sizeof(*out));
	r = manifest_read_file(path, &doc, NULL, e);
	if (r < 0)
		return r;
	return from_json(path, doc, head, out, e);
}

int mdoc_load(const char *path, struct mdoc *out, ingot_error *e)
{
	return load(path, false, out, e);
}

int mdoc_load_head(const char *path, struct mdoc *out, ingot_error *e)
{
	return load(path, true, out, e);
}
