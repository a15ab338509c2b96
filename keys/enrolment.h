/* Signed enrolment records: a verifier's statement that an AK was proven
 * to live in a genuine TPM (attest/enroll.h), which `verify`, `audit` and
 * `attest boot-check` read to know which AK may sign a node's quotes.
 *
 * A DSSE envelope (payloadType application/vnd.in-toto+json) of an
 * in-toto v1 statement:
 *   subject:       [{"name":"<node>","digest":{"sha256":"<ak_id>"}}]
 *   predicateType: https://ingot.dev/enrolment/v1
 *   predicate:     {"node","ak_id","ak_name","ak_public_key":<PEM>,
 *                   "ek_certificate_sha256","ca_bundle_sha256","enrolled":<RFC 3339>}
 * ak_id is the sha256 hex of the AK's DER SubjectPublicKeyInfo, the id
 * quote_info.ak_id reports (attest_ak_id_pem). */
#ifndef INGOT_KEYS_ENROLMENT_H
#define INGOT_KEYS_ENROLMENT_H

#include <jansson.h>
#include <time.h>

#include "attest/enroll.h"
#include "keys/key.h"
#include "keys/keyring.h"
#include "lib/err.h"

#define ENROLMENT_PREDICATE_TYPE "https://ingot.dev/enrolment/v1"
/* A record file: its statement (a PEM key and a few hashes, < 2 KiB
 * base64'd) and signatures of ~200 bytes each; 64 KiB holds
 * ENVELOPE_MAX_SIGS of them and is no reason to read a large file. */
#define ENROLMENT_FILE_MAX (64u << 10)

struct enrolment {
	char node[256];
	char ak_id[65];          /* sha256 hex of the AK's DER SubjectPublicKeyInfo (the id quote_info reports) */
	char ek_cert_sha256[65]; /* sha256 hex of the EK certificate (DER) that enrolment checked */
	char *ak_pem;            /* the enrolled AK's public key, PEM */
	struct ak_key *ak;       /* the same, parsed once here (attest/quote.h): never per quote */
};

/* Read a signed enrolment record (a DSSE envelope, payloadType application/vnd.in-toto+json,
 * in-toto statement predicateType https://ingot.dev/enrolment/v1), verify its signatures
 * against kr with the keyring's threshold, parse and check it.  The file
 * must be a regular file (a symlink to one is fine) of at most
 * ENROLMENT_FILE_MAX bytes.  e->kind is an ENVELOPE_FAIL_* (keys/envelope.h)
 * on failure. */
int enrolment_load(const char *path, const struct keyring *kr, struct enrolment *out, ingot_error *e);
void enrolment_release(struct enrolment *en);

/* The record for an enrolled subject (enroll_finish's), signed by k at
 * time enrolled: *envelope, to be written with envelope_canonical. */
int enrolment_sign(const struct enroll_subject *s, time_t enrolled, const struct signing_key *k,
		   json_t **envelope, ingot_error *e);

#endif
