/* Enrolment over the verifier's API (server/enrol.h): attest/enroll.h's
 * checks and proofs, the pending state in the database. */
#include "server/enrol.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/xalloc.h"

/* The refusal's status for what attest/enroll.h returned. */
static unsigned status_of(int r)
{
	switch (r) {
	case -EPERM:
	case -ENOTSUP:
		return 403;   /* judged and refused: another CA, not an AK, not that TPM */
	case -ETIME:
		return 410;
	case -EINVAL:
	case -EBADMSG:
	case -E2BIG:
		return 400;
	default:
		return 500;
	}
}

static int id_ok(const char *id)
{
	return strlen(id) == ENROLL_ID_HEX && strspn(id, "0123456789abcdef") == ENROLL_ID_HEX;
}

unsigned enrol_request(struct db *d, const char *ca, const char *ek_ca, int64_t ttl, const json_t *req, int64_t now,
		       json_t **challenge, ingot_error *e)
{
	_cleanup_json_ json_t *ch = NULL, *st = NULL;
	_cleanup_free_ char *text = NULL;
	struct enroll_subject s;
	int r = -EPERM;

	*challenge = NULL;
	/* The allow-list first: the state then names its bundle, which the
	 * answer's approval looks for.  Refused by it (another CA, expired):
	 * the operator's bundle decides, and its refusal is the answer. */
	if (ek_ca)
		r = enroll_check_request("enrolment", req, ek_ca, (time_t)now, &s, e);
	if (r == -EPERM && (r = enroll_check_request("enrolment", req, ca, (time_t)now, &s, e)) < 0 && ek_ca) {
		size_t n = strlen(e->msg);
		snprintf(e->msg + n, sizeof(e->msg) - n, " (nor to ek-ca %s)", ek_ca);
	}
	if (r < 0)
		return status_of(r);
	r = enroll_challenge(&s, (time_t)now, (unsigned)ttl, &ch, &st, e);
	enroll_subject_release(&s);
	if (r < 0)
		return status_of(r);
	if (!(text = json_dumps(st, JSON_COMPACT | JSON_SORT_KEYS)))
		return ingot_fail(e, -ENOMEM, "out of memory"), 500;
	r = d->ops->enrol_open(d, json_string_value(json_object_get(st, "id")),
			       json_string_value(json_object_get(st, "node")), text, now, now + ttl,
			       now - ENROL_APPROVE_WITHIN, e);
	if (r == -EBUSY)
		return ingot_prefix(e, "enrolment"), 409;
	if (r < 0)
		return 503;
	*challenge = TAKE_PTR(ch);
	return 200;
}

/* Enrolment id as stored: 404 if none. */
static unsigned get(struct db *d, const char *id, struct db_enrolment *out, json_t **state, ingot_error *e)
{
	json_error_t je;

	*state = NULL;
	if (!id_ok(id))
		return ingot_fail(e, -EINVAL, "enrolments: id: expected %d lower-case hex digits", ENROLL_ID_HEX), 400;
	if (d->ops->enrol_get(d, id, out, e) < 0)
		return 503;
	if (out->status == DB_ENROL_NONE)
		return ingot_fail(e, -ENOENT, "enrolments: no enrolment %s", id), 404;
	if (!(*state = json_loads(out->state, 0, &je)))
		return ingot_fail(e, -EIO, "enrolments %s: stored state: %s", id, je.text), 500;
	return 200;
}

/* Whether the bundle an enrolment chained to (sha, as its state says)
 * is the EK CA allow-list at ek_ca as it is now: a CA removed from the
 * file since the request approves nothing. */
static int by_allow_list(const char *ek_ca, const char *sha, const char **why)
{
	char hex[SHA256_HEX_LEN + 1];
	ingot_error e = { 0 };

	*why = "no ek-ca is configured";
	if (!ek_ca)
		return 0;
	*why = "ek-ca cannot be read";
	if (enroll_bundle_sha256(ek_ca, hex, &e) < 0)
		return 0;
	*why = "its EK certificate does not chain to ek-ca";
	return !strcmp(hex, sha);
}

unsigned enrol_answer(struct db *d, const char *id, const json_t *answer, int64_t now, const char *ek_ca,
		      json_t **reply, int *by_ek_ca, ingot_error *e)
{
	const char *why = NULL;
	_cleanup_json_ json_t *st = NULL;
	struct db_enrolment row = { 0 };
	struct enroll_subject s;
	const char *aid = json_string_value(json_object_get(answer, "id"));
	unsigned status;
	int changed = 0, r;

	*reply = NULL;
	*by_ek_ca = 0;
	if ((status = get(d, id, &row, &st, e)) != 200)
		goto out;
	if (row.status != DB_ENROL_PENDING) {
		status = 409;
		ingot_fail(e, -EALREADY, "enrolments %s: already answered (each challenge is accepted once): "
			   "refusing a replayed answer", id);
		goto out;
	}
	if (!aid || strcmp(aid, id)) {
		status = 400;
		ingot_fail(e, -EINVAL, "enrolments %s: answer: id: expected %s, got %.64s", id, id, aid ? aid : "(none)");
		goto out;
	}
	/* A wrong or late answer changes nothing: the secret is 256 random
	 * bits, so leaving the challenge open gives nothing to guess at. */
	if ((r = enroll_finish(st, answer, "answer", (time_t)now, &s, e)) < 0) {
		status = status_of(r);
		ingot_prefix(e, "enrolments %s", id);
		goto out;
	}
	r = d->ops->enrol_move(d, id, DB_ENROL_PENDING, DB_ENROL_PROVEN, now, &changed, e);
	if (r == 0 && !changed)
		r = ingot_fail(e, -EALREADY, "enrolments %s: already answered: refusing a replayed answer", id);
	if (r == 0) {
		*by_ek_ca = by_allow_list(ek_ca, s.ca_bundle_sha256, &why);
		*reply = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "id", id, "node", s.node, "status", "proven", "ak_id",
				   s.ak_id, "ek_certificate_sha256", s.ek_cert_sha256, "approval",
				   *by_ek_ca ? "ek-ca" : why);
	}
	enroll_subject_release(&s);
	status = r == 0 ? 200 : r == -EALREADY ? 409 : 503;
out:
	free(row.state);
	return status;
}

unsigned enrol_approve_take(struct db *d, const char *id, int64_t now, struct enroll_subject *out,
			    ingot_error *e)
{
	_cleanup_json_ json_t *st = NULL;
	struct db_enrolment row = { 0 };
	unsigned status;
	int changed = 0, r;

	memset(out, 0, sizeof(*out));
	if ((status = get(d, id, &row, &st, e)) != 200)
		goto out;
	status = 409;
	if (row.status == DB_ENROL_PENDING) {
		ingot_fail(e, -EAGAIN, "enrolments %s: not proven yet: the node has not answered its challenge", id);
		goto out;
	}
	if (row.status != DB_ENROL_PROVEN) {
		ingot_fail(e, -EALREADY, "enrolments %s: already approved", id);
		goto out;
	}
	if (row.moved <= now - ENROL_APPROVE_WITHIN) {
		status = 410;
		ingot_fail(e, -ETIME, "enrolments %s: proven over %d s ago: the node must enrol again", id,
			   ENROL_APPROVE_WITHIN);
		goto out;
	}
	if ((r = enroll_state_subject(st, out, e)) < 0) {
		status = 500;
		goto out;
	}
	/* Taken first, so two approvals racing make one record. */
	r = d->ops->enrol_move(d, id, DB_ENROL_PROVEN, DB_ENROL_APPROVED, now, &changed, e);
	if (r == 0 && !changed)
		r = ingot_fail(e, -EALREADY, "enrolments %s: already approved", id);
	status = r == 0 ? 200 : r == -EALREADY ? 409 : 503;
	if (r < 0)
		enroll_subject_release(out);
out:
	free(row.state);
	return status;
}

void enrol_approve_undo(struct db *d, const char *id, int64_t now)
{
	ingot_error e = { 0 };
	int changed;

	d->ops->enrol_move(d, id, DB_ENROL_APPROVED, DB_ENROL_PROVEN, now, &changed, &e);
}
