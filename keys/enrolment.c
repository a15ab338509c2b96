/* Signed enrolment records: writing and reading (keys/enrolment.h).
 * Reading trusts nothing in the payload until the keyring's threshold of
 * signatures vouches for it, and then still checks that the record is
 * consistent: the AK id is recomputed from the PEM it names, so a record
 * cannot name one key and carry another. */
#include "keys/enrolment.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attest/quote.h"
#include "keys/statement.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/json.h"
#include "lib/privdir.h"
#include "lib/time.h"
#include "lib/xalloc.h"

#define ENROLMENT_PEM_MAX 4096   /* RSA-4096 SubjectPublicKeyInfo PEM is < 1 KiB */

int enrolment_sign(const struct enroll_subject *s, time_t enrolled, const struct signing_key *k,
		   json_t **envelope, ingot_error *e)
{
	_cleanup_json_ json_t *st = NULL;
	char when[TIME_RFC3339_LEN];

	st = statement_new(ENROLMENT_PREDICATE_TYPE, s->node, s->ak_id,
			   json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "node", s->node, "ak_id", s->ak_id,
				     "ak_name", s->ak_name, "ak_public_key", s->ak_pem,
				     "ek_certificate_sha256", s->ek_cert_sha256,
				     "ca_bundle_sha256", s->ca_bundle_sha256, "enrolled",
				     time_format(enrolled, when)));
	if (!st)
		return ingot_fail(e, -ENOMEM, "out of memory");
	return envelope_sign_statement(st, k, envelope, e);
}

static int bad(ingot_error *e, const char *path, const char *field, const char *expected)
{
	return ingot_fail_kind(e, -EINVAL, ENVELOPE_FAIL_MALFORMED, "%s: %s: expected %s", path,
				 field, expected);
}

/* A string member of obj, or NULL after filling e. */
static const char *str_field(const json_t *obj, const char *key, const char *path,
			     const char *field, size_t max, ingot_error *e)
{
	const json_t *v = json_object_get(obj, key);

	if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) > max ||
	    strlen(json_string_value(v)) != json_string_length(v)) {
		ingot_fail_kind(e, -EINVAL, ENVELOPE_FAIL_MALFORMED,
				  "%s: %s: expected a string of 1..%zu characters", path, field, max);
		return NULL;
	}
	return json_string_value(v);
}

/* The record's predicate, and its one subject: the node, by its AK id. */
static int check_statement(const char *path, const struct statement *st, struct enrolment *out,
			   ingot_error *e)
{
	static const char *const fields[] = { "node", "ak_id", "ak_name", "ak_public_key",
		"ek_certificate_sha256", "ca_bundle_sha256", "enrolled" };
	const json_t *pred = st->predicate, *v;
	const char *key, *node, *ak_id, *ek, *pem, *s, *sname, *ssha;
	_cleanup_ak_key_ struct ak_key *ak = NULL;
	time_t t;
	int r;

	json_object_foreach((json_t *)pred, key, v) {
		size_t i;
		for (i = 0; i < sizeof(fields) / sizeof(*fields) && strcmp(key, fields[i]); i++)
			;
		if (i == sizeof(fields) / sizeof(*fields))
			return ingot_fail_kind(e, -EINVAL, ENVELOPE_FAIL_MALFORMED,
						 "%s: predicate: unknown field '%.64s'", path, key);
	}
	if (!(node = str_field(pred, "node", path, "predicate.node", ENROLL_NODE_MAX, e)) ||
	    !(ak_id = str_field(pred, "ak_id", path, "predicate.ak_id", SHA256_HEX_LEN, e)) ||
	    !(ek = str_field(pred, "ek_certificate_sha256", path, "predicate.ek_certificate_sha256",
			     SHA256_HEX_LEN, e)) ||
	    !(pem = str_field(pred, "ak_public_key", path, "predicate.ak_public_key",
			      ENROLMENT_PEM_MAX, e)) ||
	    !str_field(pred, "ak_name", path, "predicate.ak_name", 2 * ENROLL_NAME_MAX, e) ||
	    !str_field(pred, "ca_bundle_sha256", path, "predicate.ca_bundle_sha256", SHA256_HEX_LEN,
		       e) ||
	    !(s = str_field(pred, "enrolled", path, "predicate.enrolled", TIME_RFC3339_LEN, e)))
		return -EINVAL;
	if ((r = enroll_node_check("predicate.node", node, e)) < 0 ||
	    (r = ak_key_parse(pem, &ak, e)) < 0) {
		ingot_prefix(e, "%s", path);
		if (e)
			e->kind = ENVELOPE_FAIL_MALFORMED;
		return r;
	}
	if (!is_sha256_hex(ak_id) || !is_sha256_hex(ek))
		return bad(e, path, "predicate.ak_id/ek_certificate_sha256", "64 lower-case hex digits");
	if (time_parse(s, &t) < 0)
		return bad(e, path, "predicate.enrolled", "an RFC 3339 time");
	/* The id is what quotes are matched by: it must be the key's. */
	if (strcmp(ak_key_id(ak), ak_id))
		return ingot_fail_kind(e, -EINVAL, ENVELOPE_FAIL_MALFORMED,
					 "%s: predicate.ak_id: expected %s (the id of ak_public_key), got %s",
					 path, ak_key_id(ak), ak_id);
	if (!statement_one_subject(st, &sname, &ssha) || strcmp(sname, node) || strcmp(ssha, ak_id))
		return bad(e, path, "statement.subject",
			   "one entry naming the predicate's node with digest.sha256 = its ak_id");

	snprintf(out->node, sizeof(out->node), "%s", node);
	memcpy(out->ak_id, ak_id, sizeof(out->ak_id));
	memcpy(out->ek_cert_sha256, ek, sizeof(out->ek_cert_sha256));
	out->ak_pem = xstrdup(pem);
	out->ak = TAKE_PTR(ak);
	return 0;
}

/* The envelope of a record, read within ENROLMENT_FILE_MAX (a regular
 * file: not a FIFO, not /dev/zero behind a link), then opened as any
 * statement (keys/statement.h). */
int enrolment_load(const char *path, const struct keyring *kr, struct enrolment *out, ingot_error *e)
{
	_cleanup_statement_ struct statement st = { 0 };
	_cleanup_free_ char *buf = NULL;
	_cleanup_json_ json_t *env = NULL;
	size_t len;
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = regfile_read(path, ENROLMENT_FILE_MAX, 0, &buf, &len, e)) < 0)
		return ingot_set_kind(e, r, r == -EFBIG || r == -EINVAL ? ENVELOPE_FAIL_MALFORMED
									 : ENVELOPE_FAIL_IO);
	if ((r = json_read_buf(path, buf, len, &env, e)) < 0)
		return ingot_set_kind(e, r, r == -ENOMEM ? ENVELOPE_FAIL_IO : ENVELOPE_FAIL_MALFORMED);
	if ((r = statement_verify(path, env, kr, ENROLMENT_PREDICATE_TYPE, &st, NULL, e)) < 0)
		return r;
	r = check_statement(path, &st, out, e);
	if (r < 0)
		enrolment_release(out);
	return r;
}

void enrolment_release(struct enrolment *en)
{
	free(en->ak_pem);
	en->ak_pem = NULL;
	ak_key_free(en->ak);
	en->ak = NULL;
}
