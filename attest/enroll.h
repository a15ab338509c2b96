/* AK enrolment: proving that an attestation key lives in a genuine TPM
 * before any quote it signs counts (docs/attest.md "Enrolment").
 *
 *   node                                   verifier
 *   request  {EK certificate, AK public} ->
 *                                          EK cert chain to the CA bundle,
 *                                          AK attributes, AK name;
 *                                       <- challenge  MakeCredential(EK, AK name, secret)
 *   answer   ActivateCredential (only the
 *            TPM holding the EK's private
 *            key and the AK can) ->
 *                                          finish: the secret, once, in time
 *
 * The verifier has no TPM: MakeCredential is done in software (TPM 2.0
 * Part 1 section 24: a seed encrypted to the EK with RSA-OAEP, label
 * "IDENTITY", KDFa-derived AES-128-CFB and HMAC keys).  The challenge's
 * private state (the secret's digest, what the record will say) stays
 * with the verifier in a state directory, one file per challenge, taken
 * (renamed) by the first finish so an answer is accepted at most once.
 *
 * Documents (JSON, written canonically):
 *   request   {"format":"ingot.enroll-request/v1","node","ek_certificate":<base64 DER>,
 *              "ak_public":<base64 marshalled TPM2B_PUBLIC>}
 *   challenge {"format":"ingot.enroll-challenge/v1","id":<hex>,"expires":<RFC 3339>,
 *              "credential_blob":<base64 TPM2B_ID_OBJECT>,"secret":<base64 TPM2B_ENCRYPTED_SECRET>}
 *   answer    {"format":"ingot.enroll-answer/v1","id","credential":<hex>}
 *   state     {"format":"ingot.enroll-state/v1","id","expires","credential_sha256",
 *              "node","ak_id","ak_name","ak_public_key","ek_certificate_sha256",
 *              "ca_bundle_sha256"} */
#ifndef INGOT_ATTEST_ENROLL_H
#define INGOT_ATTEST_ENROLL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <openssl/types.h>

#include "lib/digest.h"
#include "lib/err.h"

struct tpm;

#define ENROLL_REQUEST_FORMAT "ingot.enroll-request/v1"
#define ENROLL_CHALLENGE_FORMAT "ingot.enroll-challenge/v1"
#define ENROLL_ANSWER_FORMAT "ingot.enroll-answer/v1"
#define ENROLL_STATE_FORMAT "ingot.enroll-state/v1"

#define ENROLL_NODE_MAX 255          /* node names: [A-Za-z0-9._:-], 1..255 */
#define ENROLL_DOC_MAX (64u << 10)   /* any enrolment document or state; an EK cert is < 2 KiB */
#define ENROLL_CA_MAX (4u << 20)     /* a CA bundle file */
#define ENROLL_CREDENTIAL_LEN 32     /* the activation secret */
#define ENROLL_ID_HEX 32             /* challenge ids: 16 random bytes in hex */
#define ENROLL_TTL_DEFAULT 300       /* seconds a challenge stays answerable */
/* AK name: nameAlg (2 bytes) || digest (at most SHA-512) */
#define ENROLL_NAME_MAX (2 + 64)

/* The TCG EK Credential Profile's NV index of the RSA 2048 EK certificate. */
#define ENROLL_EK_CERT_NV_RSA 0x01c00002u

/* 0, or -EINVAL naming what as the field when node is not a node name. */
int enroll_node_check(const char *what, const char *node, ingot_error *e);

/* KDFa (TPM 2.0 Part 1 section 11.4.10.2) with SHA-256: bits/8 bytes
 * into out of counter-mode HMAC(key, i || label || 0 || u || v || bits). */
int enroll_kdfa_sha256(const uint8_t *key, size_t key_len, const char *label, const uint8_t *u,
		       size_t u_len, const uint8_t *v, size_t v_len, unsigned bits, uint8_t *out);

/* TPM2_MakeCredential in software against an RSA EK (nameAlg SHA-256,
 * AES-128-CFB: the TCG default EK template), for the object name
 * name[name_len]: *blob gets the marshalled TPM2B_ID_OBJECT, *secret the
 * marshalled TPM2B_ENCRYPTED_SECRET (malloc'd).  A non-RSA EK: -ENOTSUP. */
int enroll_make_credential(EVP_PKEY *ek, const uint8_t *name, size_t name_len,
			   const uint8_t *cred, size_t cred_len, uint8_t **blob, size_t *blob_len,
			   uint8_t **secret, size_t *secret_len, ingot_error *e);

/* What a checked request says. */
struct enroll_subject {
	char node[ENROLL_NODE_MAX + 1];
	char ak_id[SHA256_HEX_LEN + 1];          /* attest_ak_id_pem(ak_pem) */
	char ak_name[2 * ENROLL_NAME_MAX + 1];   /* hex of the AK's TPM name */
	char ek_cert_sha256[SHA256_HEX_LEN + 1];
	char ca_bundle_sha256[SHA256_HEX_LEN + 1];
	char *ak_pem;                             /* malloc'd */
	EVP_PKEY *ek;                             /* the certified EK's public key */
	uint8_t name[ENROLL_NAME_MAX];
	size_t name_len;
};
void enroll_subject_release(struct enroll_subject *s);

/* The sha256 (hex) of the CA bundle at path, as an enrolment's state
 * records it (ca_bundle_sha256): which bundle a request chained to. */
int enroll_bundle_sha256(const char *path, char sha[SHA256_HEX_LEN + 1], ingot_error *e);

/* Check a request (name used in messages) against the CA bundle at
 * ca_path (PEM certificates: roots and intermediates): the EK certificate
 * chains to it at time now, its key is an RSA key; the AK public area has
 * fixedTPM, fixedParent, sensitiveDataOrigin, userWithAuth, restricted
 * and sign set, decrypt clear, a SHA-256/384/512 name algorithm, and a
 * key quote_verify can read (ECC P-256; RSA 2048/3072/4096 bits matching
 * keyBits, exponent odd and >= 3).  -EPERM for a refusal, -EINVAL/-EBADMSG for
 * a malformed request. */
int enroll_check_request(const char *name, const json_t *req, const char *ca_path, time_t now,
			 struct enroll_subject *out, ingot_error *e);

/* A fresh challenge for a checked request, valid ttl seconds from now:
 * *challenge goes to the node, *state stays with the verifier. */
int enroll_challenge(const struct enroll_subject *s, time_t now, unsigned ttl, json_t **challenge,
		     json_t **state, ingot_error *e);

/* Write state as DIR/<id>.json (mode 0600, atomically); take it back for
 * the answer's id by renaming it to DIR/<id>.used first, so a second
 * finish for the same challenge is refused (-EALREADY) whatever the
 * first one's outcome.  The state decides which AK gets signed, so both
 * refuse a DIR that is not a directory of ours closed to group and others
 * (lib/privdir.h: -ENOTDIR, -EPERM), and take refuses, before renaming, a
 * state file that is a symlink (-ELOOP), not a regular file (-EINVAL),
 * not ours or writable by others (-EPERM), over ENROLL_DOC_MAX (-EFBIG),
 * or whose id is not its name or whose ak_id is not its key's (-EINVAL). */
int enroll_state_store(const char *dir, const json_t *state, ingot_error *e);
int enroll_state_take(const char *dir, const json_t *answer, const char *answer_name,
		      json_t **state, ingot_error *e);

/* Judge an answer against its (taken) state at time now: same id, not
 * expired, credential equal to the one sealed.  -EPERM for a refusal,
 * -ETIME when expired.  *out gets what the record will say (no ek). */
int enroll_finish(const json_t *state, const json_t *answer, const char *answer_name, time_t now,
		  struct enroll_subject *out, ingot_error *e);

/* What the record will say for a state (no ek): enroll_finish's *out
 * once the answer was judged, for a verifier that judged it earlier
 * (server/enrol.h: proven, then approved). */
int enroll_state_subject(const json_t *state, struct enroll_subject *out, ingot_error *e);

/* Node side, through the TPM (attest/enroll-tpm.c). */
/* The request: the EK certificate from ek_cert_path (DER or PEM) or, when
 * NULL, the TPM's NV index ENROLL_EK_CERT_NV_RSA; the AK in ak_dir.  The
 * EK re-derived from the default template must be the certified key. */
int tpm_enroll_request(struct tpm *t, const char *ak_dir, const char *node,
		       const char *ek_cert_path, json_t **request, ingot_error *e);
/* TPM2_ActivateCredential of the challenge with the AK in ak_dir and the
 * EK (policy session: PolicySecret(TPM_RH_ENDORSEMENT)). */
int tpm_enroll_answer(struct tpm *t, const char *ak_dir, const json_t *challenge,
		      const char *challenge_name, json_t **answer, ingot_error *e);

#endif
