#include "keys/envelope.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "builder/manifest.h"
#include "lib/base64.h"
#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/strbuf.h"

int dsse_pae(const char *type, const void *body, size_t body_len, uint8_t **out, size_t *out_len)
{
	struct strbuf sb = STRBUF_INIT;
	size_t tlen = strlen(type);

	strbuf_init(&sb, tlen + body_len + 48);
	strbuf_addf(&sb, "DSSEv1 %zu %s %zu ", tlen, type, body_len);
	strbuf_add(&sb, body, body_len);
	*out = (uint8_t *)strbuf_detach(&sb, out_len);
	return *out ? 0 : -ENOMEM;
}

int statement_for_manifest(const json_t *manifest, json_t **out, ingot_error *e)
{
	json_t *image = json_object_get(manifest, "image");
	int r = manifest_check("manifest", manifest, e);
	if (r < 0)
		return r;
	/* The subject is the image file the manifest describes, so tools that
	 * only speak in-toto can match an image to its signed statement. */
	/* A copy: the statement must not alias the caller's manifest. */
	json_t *st = json_pack("{s:s,s:[{s:O,s:{s:O}}],s:s,s:o}",
			       "_type", STATEMENT_TYPE,
			       "subject", "name", json_object_get(image, "file"),
			       "digest", "sha256", json_object_get(image, "sha256"),
			       "predicateType", MANIFEST_PREDICATE_TYPE,
			       "predicate", json_deep_copy(manifest));
	if (!st)
		return ingot_fail(e, -ENOMEM, "out of memory");
	*out = st;
	return 0;
}

/* Signature entries are {"keyid","sig"}; DSSE allows keyid to be absent
 * or empty, which we accept on input (the verifier then tries every
 * trusted key) but never write. */
static int check_sig_entry(const char *name, size_t i, const json_t *s, ingot_error *e)
{
	const char *key;
	json_t *v, *sig, *keyid;

	if (!json_is_object(s))
		return ingot_fail(e, -EINVAL, "%s: signatures[%zu]: expected an object", name, i);
	json_object_foreach((json_t *)s, key, v)
		if (strcmp(key, "keyid") && strcmp(key, "sig"))
			return ingot_fail(e, -EINVAL, "%s: signatures[%zu]: unknown field '%.64s'",
					  name, i, key);
	sig = json_object_get(s, "sig");
	keyid = json_object_get(s, "keyid");
	if (!json_is_string(sig))
		return ingot_fail(e, -EINVAL, "%s: signatures[%zu].sig: expected a base64 string", name, i);
	if (json_string_length(sig) > ENVELOPE_SIG_B64_MAX)
		return ingot_fail(e, -E2BIG, "%s: signatures[%zu].sig: %zu characters, limit %u", name,
				  i, json_string_length(sig), ENVELOPE_SIG_B64_MAX);
	if (keyid && !json_is_string(keyid))
		return ingot_fail(e, -EINVAL, "%s: signatures[%zu].keyid: expected a string", name, i);
	if (keyid && json_string_length(keyid) > ENVELOPE_TYPE_MAX)
		return ingot_fail(e, -E2BIG, "%s: signatures[%zu].keyid: %zu characters, limit %u", name,
				  i, json_string_length(keyid), ENVELOPE_TYPE_MAX);
	return 0;
}

int envelope_parse(const char *name, const json_t *env, uint8_t **payload, size_t *payload_len,
		   ingot_error *e)
{
	const char *key;
	json_t *v, *type, *pl, *sigs;
	size_t i;
	int r;

	if (!json_is_object(env))
		return ingot_fail(e, -EINVAL, "%s: expected a DSSE envelope (JSON object)", name);
	json_object_foreach((json_t *)env, key, v)
		if (strcmp(key, "payloadType") && strcmp(key, "payload") && strcmp(key, "signatures"))
			return ingot_fail(e, -EINVAL, "%s: unknown field '%.64s' (expected payloadType, "
					  "payload, signatures)", name, key);
	type = json_object_get(env, "payloadType");
	pl = json_object_get(env, "payload");
	sigs = json_object_get(env, "signatures");
	if (!json_is_string(type))
		return ingot_fail(e, -EINVAL, "%s: payloadType: expected a string", name);
	if (json_string_length(type) > ENVELOPE_TYPE_MAX ||
	    strlen(json_string_value(type)) != json_string_length(type))
		return ingot_fail(e, -E2BIG, "%s: payloadType: expected at most %u characters without "
				  "NUL, got %zu", name, ENVELOPE_TYPE_MAX, json_string_length(type));
	if (!json_is_string(pl))
		return ingot_fail(e, -EINVAL, "%s: payload: expected a base64 string", name);
	if (json_string_length(pl) > base64_encoded_len(ENVELOPE_PAYLOAD_MAX))
		return ingot_fail(e, -E2BIG, "%s: payload: %zu base64 characters, limit %zu (%u MiB)",
				  name, json_string_length(pl), base64_encoded_len(ENVELOPE_PAYLOAD_MAX),
				  ENVELOPE_PAYLOAD_MAX >> 20);
	if (!json_is_array(sigs))
		return ingot_fail(e, -EINVAL, "%s: signatures: expected an array", name);
	if (json_array_size(sigs) > ENVELOPE_MAX_SIGS)
		return ingot_fail(e, -E2BIG, "%s: signatures: %zu entries, limit %u", name,
				  json_array_size(sigs), ENVELOPE_MAX_SIGS);
	json_array_foreach(sigs, i, v)
		if ((r = check_sig_entry(name, i, v, e)) < 0)
			return r;
	r = base64_decode(json_string_value(pl), json_string_length(pl), payload, payload_len);
	if (r == -ENOMEM)
		return ingot_fail(e, r, "%s: payload: out of memory", name);
	if (r < 0)
		return ingot_fail(e, r, "%s: payload: expected strict standard base64", name);
	return 0;
}

static int sign_pae(const char *type, const uint8_t *payload, size_t len,
		    const struct signing_key *k, json_t **entry, ingot_error *e)
{
	_cleanup_free_ uint8_t *pae = NULL, *sig = NULL;
	_cleanup_free_ char *b64 = NULL;
	size_t pae_len, sig_len;
	int r;

	if (dsse_pae(type, payload, len, &pae, &pae_len) < 0)
		return ingot_fail(e, -ENOMEM, "out of memory");
	r = signing_key_sign(k, pae, pae_len, &sig, &sig_len, e);
	if (r < 0)
		return r;
	b64 = base64_encode(sig, sig_len, NULL);
	*entry = b64 ? json_pack("{s:s,s:s}", "keyid", k->keyid, "sig", b64) : NULL;
	if (!*entry)
		return ingot_fail(e, -ENOMEM, "out of memory");
	return 0;
}

int envelope_sign_statement(const json_t *st, const struct signing_key *k, json_t **envelope,
			    ingot_error *e)
{
	_cleanup_json_ json_t *env = NULL;
	_cleanup_free_ char *payload = NULL, *b64 = NULL;
	json_t *entry = NULL;
	size_t len;
	int r;

	payload = json_compact(st, &len);
	if (!payload)
		return ingot_fail(e, -ENOMEM, "out of memory");
	if (len > ENVELOPE_PAYLOAD_MAX)
		return ingot_fail(e, -E2BIG, "statement: %zu bytes, limit %u", len, ENVELOPE_PAYLOAD_MAX);
	b64 = base64_encode(payload, len, NULL);
	if (!b64)
		return ingot_fail(e, -ENOMEM, "out of memory");
	r = sign_pae(ENVELOPE_PAYLOAD_TYPE, (const uint8_t *)payload, len, k, &entry, e);
	if (r < 0)
		return r;
	env = json_pack("{s:s,s:s,s:[o]}", "payloadType", ENVELOPE_PAYLOAD_TYPE, "payload", b64,
			"signatures", entry);
	if (!env)
		return ingot_fail(e, -ENOMEM, "out of memory");
	*envelope = TAKE_PTR(env);
	return 0;
}

int envelope_create(const json_t *manifest, const struct signing_key *k, json_t **envelope,
		    ingot_error *e)
{
	_cleanup_json_ json_t *st = NULL;
	int r;

	r = statement_for_manifest(manifest, &st, e);
	if (r < 0)
		return r;
	return envelope_sign_statement(st, k, envelope, e);
}

int envelope_add_signature(json_t *envelope, const struct signing_key *k, ingot_error *e)
{
	_cleanup_free_ uint8_t *payload = NULL;
	json_t *sigs, *s, *entry = NULL;
	size_t len, i;
	int r;

	r = envelope_parse("envelope", envelope, &payload, &len, e);
	if (r < 0)
		return r;
	/* Only ever sign what we would accept: an ingot manifest statement. */
	if (strcmp(json_string_value(json_object_get(envelope, "payloadType")), ENVELOPE_PAYLOAD_TYPE))
		return ingot_fail(e, -EINVAL, "envelope: payloadType: expected \"%s\", got \"%.64s\"",
				  ENVELOPE_PAYLOAD_TYPE,
				  json_string_value(json_object_get(envelope, "payloadType")));
	{
		_cleanup_json_ json_t *m = NULL;
		r = envelope_statement_manifest("envelope", payload, len, &m, e);
		if (r < 0)
			return r;
	}
	sigs = json_object_get(envelope, "signatures");
	json_array_foreach(sigs, i, s) {
		const char *kid = json_string_value(json_object_get(s, "keyid"));
		if (kid && !strcmp(kid, k->keyid))
			return ingot_fail(e, -EEXIST, "envelope: already signed by key %s (signatures[%zu])",
					  k->keyid, i);
	}
	if (json_array_size(sigs) >= ENVELOPE_MAX_SIGS)
		return ingot_fail(e, -E2BIG, "envelope: already has %u signatures, the limit",
				  ENVELOPE_MAX_SIGS);
	/* Sign exactly the bytes the envelope carries, under its own type. */
	r = sign_pae(json_string_value(json_object_get(envelope, "payloadType")), payload, len, k,
		     &entry, e);
	if (r < 0)
		return r;
	if (json_array_append_new(sigs, entry) < 0)
		return ingot_fail(e, -ENOMEM, "out of memory");
	return 0;
}
