/* Signed firmware references (keys/firmware-ref-envelope.h). */
#include "keys/firmware-ref-envelope.h"

#include <stdio.h>
#include <string.h>

#include "keys/statement.h"
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
	if (!(st = statement_new(FIRMWARE_REF_PREDICATE, name, hex, json_incref(pred))))
		return ingot_fail(e, -ENOMEM, "out of memory");
	return envelope_sign_statement(st, k, envelope, e);
}

int firmware_ref_load(const char *path, const struct keyring *kr, struct firmware_ref *out, ingot_error *e)
{
	_cleanup_statement_ struct statement st = { 0 };
	const char *name, *sha;
	char hex[65];
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = statement_open(path, kr, FIRMWARE_REF_PREDICATE, &st, NULL, e)) < 0 ||
	    (r = predicate_digest(st.predicate, hex, e)) < 0)
		return r;
	if (!statement_one_subject(&st, &name, &sha) || strcmp(sha, hex) ||
	    strncmp(name, SUBJECT_PREFIX, strlen(SUBJECT_PREFIX)))
		return ingot_fail(e, -EINVAL, "%s: statement.subject: expected one \"" SUBJECT_PREFIX
				  "PLATFORM\" with the predicate's sha256", path);
	if ((r = firmware_ref_from_json(st.predicate, path, out, e)) < 0)
		return r;
	if (strcmp(name + strlen(SUBJECT_PREFIX), out->platform))
		return ingot_fail(e, -EINVAL, "%s: statement.subject: expected \"" SUBJECT_PREFIX "%s\"", path,
				  out->platform);
	return 0;
}
