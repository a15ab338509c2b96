/* Signed firmware references (keys/firmware-ref-envelope.h). */
#include "keys/firmware-ref-envelope.h"

#include <stdio.h>
#include <string.h>

#include "keys/envelope.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/json.h"

#define SUBJECT_PREFIX "firmware-ref:"

/* sha256 hex of the compact predicate: what the subject names. */
static int predicate_digest(const json_t *pred, char hex[65], ingot_error *e)
{
	size_t len;
	_cleanup_free_ char *s = json_compact(pred, &len);
	uint8_t d[32];

	if (!s)
		return ingot_fail(e, -ENOMEM, "out of memory");
	sha256_buf(s, len, d);
	hex_encode(d, 32, hex);
	return 0;
}

int firmware_ref_sign(const struct firmware_ref *ref, const struct signing_key *k, json_t **envelope, ingot_error *e)
{
	_cleanup_json_ json_t *pred = firmware_ref_to_json(ref), *st = NULL;
	char hex[65], name[sizeof(SUBJECT_PREFIX) + sizeof(ref->platform)];
	int r;

	if (!pred)
		return ingot_fail(e, -ENOMEM, "out of memory");
	if ((r = predicate_digest(pred, hex, e)) < 0)
		return r;
	snprintf(name, sizeof(name), SUBJECT_PREFIX "%s", ref->platform);
	st = json_pack("{s:s, s:[{s:s, s:{s:s}}], s:s, s:O}", "_type", STATEMENT_TYPE, "subject", "name", name,
		       "digest", "sha256", hex, "predicateType", FIRMWARE_REF_PREDICATE, "predicate", pred);
	if (!st)
		return ingot_fail(e, -ENOMEM, "out of memory");
	return envelope_sign_statement(st, k, envelope, e);
}

int firmware_ref_load(const char *path, const struct keyring *kr, struct firmware_ref *out, ingot_error *e)
{
	_cleanup_json_ json_t *st = NULL;
	const json_t *subj, *pred;
	const char *pt, *name, *sha;
	char hex[65];
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = envelope_load_statement(path, kr, &st, NULL, e)) < 0)
		return r;
	pt = json_string_value(json_object_get(st, "predicateType"));
	if (!json_is_object(st) || !pt || strcmp(pt, FIRMWARE_REF_PREDICATE))
		return ingot_fail(e, -EINVAL, "%s: statement.predicateType: expected \"" FIRMWARE_REF_PREDICATE "\"",
				  path);
	pred = json_object_get(st, "predicate");
	subj = json_array_get(json_object_get(st, "subject"), 0);
	name = json_string_value(json_object_get(subj, "name"));
	sha = json_string_value(json_object_get(json_object_get(subj, "digest"), "sha256"));
	if ((r = predicate_digest(pred, hex, e)) < 0)
		return r;
	if (json_array_size(json_object_get(st, "subject")) != 1 || !name || !sha || strcmp(sha, hex) ||
	    strncmp(name, SUBJECT_PREFIX, strlen(SUBJECT_PREFIX)))
		return ingot_fail(e, -EINVAL, "%s: statement.subject: expected one \"" SUBJECT_PREFIX
				  "PLATFORM\" with the predicate's sha256", path);
	if ((r = firmware_ref_from_json(pred, path, out, e)) < 0)
		return r;
	if (strcmp(name + strlen(SUBJECT_PREFIX), out->platform))
		return ingot_fail(e, -EINVAL, "%s: statement.subject: expected \"" SUBJECT_PREFIX "%s\"", path,
				  out->platform);
	return 0;
}
