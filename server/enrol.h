/* Enrolment over the verifier's API (docs/verifier.md "Enrolment"): the
 * steps of attest/enroll.h with the challenge's private state in the
 * verifier's database instead of a state directory, so any replica can
 * take the answer and the approval.
 *
 *   POST /v1/enrolments           request -> challenge   (open: proves nothing yet)
 *   POST /v1/enrolments/ID/answer answer  -> "proven"    (open: the TPM's proof)
 *   POST /v1/enrolments/ID/approve        -> the record  (the operator's token)
 *
 * Proving possession of a TPM is not the operator's consent: a proven
 * enrolment waits for the approval, which signs the record with the
 * verifier's enrolment key.  Each function answers an HTTP status: 200,
 * or the refusal's, with its one line in e; nothing changes on a
 * refusal. */
#ifndef INGOT_SERVER_ENROL_H
#define INGOT_SERVER_ENROL_H

#include <jansson.h>
#include <stdint.h>

#include "attest/enroll.h"
#include "lib/err.h"
#include "server/db.h"

/* A proven enrolment waits this long for its approval. */
#define ENROL_APPROVE_WITHIN (24 * 3600)

/* Check the request against the EK CA allow-list at ek_ca (or NULL)
 * first, then against the bundle at ca: its EK certificate must chain
 * to one of them.  Make its challenge (valid ttl seconds), store it
 * pending, with the bundle it chained to: *challenge is the node's
 * (attest/enroll.h's challenge document).  409 when the node already
 * has one pending or awaiting approval. */
unsigned enrol_request(struct db *d, const char *ca, const char *ek_ca, int64_t ttl, const json_t *req, int64_t now,
		       json_t **challenge, ingot_error *e);

/* Judge the answer to enrolment id: its secret, in time, once.  200:
 * proven, *reply what it proved, and *by_ek_ca 1 when its EK
 * certificate chained to the allow-list at ek_ca as that file is now
 * (the caller approves it then, without the operator), 0 when the
 * operator's approval is needed ("approval" in *reply says which). */
unsigned enrol_answer(struct db *d, const char *id, const json_t *answer, int64_t now, const char *ek_ca,
		      json_t **reply, int *by_ek_ca, ingot_error *e);

/* Take proven enrolment id for its approval (moved to approved): *out
 * what the record says.  enrol_approve_undo puts it back when the record
 * could not be made. */
unsigned enrol_approve_take(struct db *d, const char *id, int64_t now, struct enroll_subject *out,
			    ingot_error *e);
void enrol_approve_undo(struct db *d, const char *id, int64_t now);

#endif
