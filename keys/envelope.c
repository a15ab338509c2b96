#include "keys/envelope.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lib/base64.h"
#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/strbuf.h"

static int sign_pae(const char *type, const uint8_t *payload, size_t len,
		    const struct signing_key *k, json_t **entry, ingot_error *e)
{
	_cleanup_free_ uint8_t *pae = NULL, *sig = NULL;
	_cleanup_free_ char *b64 = NULL;
	size_t pae_len, sig_len;
	int r;

	dsse_pae(type, payload, len, &pae, &pae_len);
	r = signing_key_sign(k, pae, pae_len, &sig, &sig_len, e);
	if (r < 0)
		return r;
	b64 = base64_encode(sig, sig_len, NULL);
	*entry = b64 ? json_pack("{s:s,s:s}", "keyid", k->keyid, "sig", b64) : NULL;
	if (!*entry)
		return ingot_fail(e, -ENOMEM, "out of memory");
	return 0;
}

int envelope_sign_payload(const char *payload, size_t len, const struct signing_key *k,
			  json_t **envelope, ingot_error *e)
{
	_cleanup_json_ json_t *env = NULL;
	_cleanup_free_ char *b64 = NULL;
	json_t *entry = NULL;
	int r;

	if (len > ENVELOPE_PAYLOAD_MAX)
		return ingot_fail(e, -E2BIG, "statement: %zu bytes, limit %u", len, ENVELOPE_PAYLOAD_MAX);
	b64 = base64_encode(payload, len, NULL);
	if (!b64)
		return ingot_fail(e, -ENOMEM, "out of memory");
	r = sign_pae(ENVELOPE_PAYLOAD_TYPE, (const uint8_t *)payload, len, k, &entry, e);
	if (r < 0)
		return r;
	/* base64 is ASCII: no UTF-8 check of the largest string we build. */
	env = json_pack("{s:s,s:o,s:[o]}", "payloadType", ENVELOPE_PAYLOAD_TYPE, "payload",
			json_stringn_nocheck(b64, base64_encoded_len(len)), "signatures", entry);
	if (!env)
		return ingot_fail(e, -ENOMEM, "out of memory");
	*envelope = TAKE_PTR(env);
	return 0;
}

int envelope_write_signed(const char *payload, size_t len, const struct signing_key *k,
			  const struct json_out *out, ingot_error *e)
{
	_cleanup_json_ json_t *rest = NULL;
	json_t *entry = NULL;
	int r;

	if (len > ENVELOPE_PAYLOAD_MAX)
		return ingot_fail(e, -E2BIG, "statement: %zu bytes, limit %u", len, ENVELOPE_PAYLOAD_MAX);
	if ((r = sign_pae(ENVELOPE_PAYLOAD_TYPE, (const uint8_t *)payload, len, k, &entry, e)) < 0)
		return r;
	if (!(rest = json_pack("{s:s,s:[o]}", "payloadType", ENVELOPE_PAYLOAD_TYPE, "signatures", entry)))
		return ingot_fail(e, -ENOMEM, "out of memory");
	return envelope_write(rest, payload, len, out, e);
}

int envelope_sign_statement(const json_t *st, const struct signing_key *k, json_t **envelope,
			    ingot_error *e)
{
	size_t len;
	_cleanup_free_ char *payload = json_compact(st, &len);

	if (!payload)
		return ingot_fail(e, -ENOMEM, "out of memory");
	return envelope_sign_payload(payload, len, k, envelope, e);
}

int envelope_create(const json_t *manifest, const struct signing_key *k, json_t **envelope,
		    ingot_error *e)
{
	_cleanup_json_ json_t *st = NULL;
	int r;

	r = statement_for_manifest("manifest", manifest, &st, e);
	if (r < 0)
		return r;
	return envelope_sign_statement(st, k, envelope, e);
}

/* Whether signature entry s is k's: by its keyid or, keyids being only
 * hints (another signer may have used its own convention), by the
 * signature itself. */
static bool signed_by(const json_t *env, const uint8_t *payload, size_t len, const json_t *s,
		      const struct signing_key *k)
{
	_cleanup_free_ uint8_t *pae = NULL, *sig = NULL;
	const json_t *js = json_object_get(s, "sig");
	const char *kid = json_string_value(json_object_get(s, "keyid"));
	size_t pae_len, siglen;

	if (kid && !strcmp(kid, k->keyid))
		return true;
	dsse_pae(json_string_value(json_object_get(env, "payloadType")), payload, len, &pae, &pae_len);
	return dsse_base64_decode(json_string_value(js), json_string_length(js), &sig, &siglen) == 0 &&
	       key_verify(k->pkey, pae, pae_len, sig, siglen);
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
		r = envelope_statement_manifest("envelope", payload, len, MANIFEST_FULL, NULL, &m, e);
		if (r < 0)
			return r;
	}
	sigs = json_object_get(envelope, "signatures");
	json_array_foreach(sigs, i, s)
		if (signed_by(envelope, payload, len, s, k))
			return ingot_fail(e, -EEXIST, "envelope: already signed by key %s (signatures[%zu])",
					  k->keyid, i);
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
