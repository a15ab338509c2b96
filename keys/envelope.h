/* Signing and verifying the signed manifest, a DSSE envelope (its format
 * and parser are manifest/dsse.h).  Signatures are over the PAE bytes,
 * so `openssl pkeyutl -verify` checks them. */
#ifndef INGOT_KEYS_ENVELOPE_H
#define INGOT_KEYS_ENVELOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <jansson.h>

#include "keys/key.h"
#include "keys/keyring.h"
#include "lib/err.h"
#include "manifest/dsse.h"
#include "manifest/typed.h"

/* What failed in verification (e->kind, set by envelope_verify and the
 * readers below).  The values are stable (a node report prints them) and
 * lie below PROMOTE_FAIL_IO (ops/promote.h), so one kind names one failure. */
enum envelope_fail {
	ENVELOPE_FAIL_IO = 1,          /* cannot read the envelope/keyring/image, write state */
	ENVELOPE_FAIL_MALFORMED = 2,   /* not JSON, wrong shape, over a limit, bad keyring/state */
	ENVELOPE_FAIL_SIGNATURE = 3,   /* too few valid signatures by distinct trusted keys */
	ENVELOPE_FAIL_EXPIRED = 4,     /* manifest "expires" is not after now */
	ENVELOPE_FAIL_ROLLBACK = 5,    /* serial below the last one recorded in the state file */
	ENVELOPE_FAIL_DIGEST = 6,      /* image sha256/size or verity root does not match */
};

/* Build a v1 envelope (the whole manifest as predicate) with one
 * signature by k: what ingot wrote before the v2 statement, kept for the
 * tests of the v1 reader until it goes (docs/signing.md).  The payload is
 * json_compact(statement), so equal manifests give equal payloads (and,
 * with Ed25519, equal envelopes). */
int envelope_create(const json_t *manifest, const struct signing_key *k, json_t **envelope,
		    ingot_error *e);
/* Sign any in-toto statement (evidence, promotions) into a new envelope
 * with one signature by k; envelope_create is this over the manifest's. */
int envelope_sign_statement(const json_t *statement, const struct signing_key *k,
			    json_t **envelope, ingot_error *e);
/* The same over payload, a statement's compact bytes made by the caller. */
int envelope_sign_payload(const char *payload, size_t len, const struct signing_key *k,
			  json_t **envelope, ingot_error *e);
/* The same, written to out as envelope_canonical would write it, with
 * no base64 copy of the payload held (manifest/dsse.h envelope_write). */
int envelope_write_signed(const char *payload, size_t len, const struct signing_key *k,
			  const struct json_out *out, ingot_error *e);
/* Add k's signature to an existing envelope (checked for shape first).
 * -EEXIST if k already signed it. */
int envelope_add_signature(json_t *envelope, const struct signing_key *k, ingot_error *e);

/* What a v2 statement's file list (the manifest file it binds by digest)
 * is read for: loaded whole, the manifest given back the bound file
 * (the default); its digest only, a streamed hash (verify-manifest); or
 * not at all, for a reader that judges only the signed head (audit):
 * either of the last two gives back the head, without files[]. */
enum file_list_use { FILE_LIST_LOAD, FILE_LIST_DIGEST, FILE_LIST_HEAD };

struct verify_policy {
	time_t now;               /* expiry is checked against this */
	const char *state_path;   /* last-seen serials (NULL: no rollback check) */
	const char *file_list;    /* v2: the bound manifest file (NULL: its subject name beside the envelope) */
	enum file_list_use file_list_use;
};

#define VERIFY_MAX_SIGNERS ENVELOPE_MAX_SIGS

struct verify_outcome {
	unsigned valid;                       /* distinct trusted keys with a valid signature */
	unsigned threshold;
	char signers[VERIFY_MAX_SIGNERS][KEYID_HEX_LEN + 1];   /* their key ids */
	const char *signer_names[VERIFY_MAX_SIGNERS];          /* names in the keyring (borrowed) */
	char recipe[256];                     /* manifest recipe.name */
	uint64_t serial;                      /* manifest serial */
	uint64_t last_serial;                 /* from the state file before this run (0: none) */
	bool has_expiry;
	time_t expires;
	char image_sha256[65];                /* the signed manifest's image.sha256 */
	bool file_list;                       /* a v2 statement: its file list's digest matched */
};

/* Only the envelope's shape, payloadType and signatures against kr
 * (threshold of distinct keys), for statements other than manifests; the
 * caller interprets *payload (authenticated on success): keys/statement.h's
 * statement_verify, the one opener of those. */
int envelope_verify_signatures(const char *name, const json_t *env, const struct keyring *kr,
			       uint8_t **payload, size_t *payload_len, struct verify_outcome *out,
			       ingot_error *e);

/* Read and parse an envelope file (limit ENVELOPE_FILE_MAX); e->kind set. */
int envelope_read_file(const char *path, json_t **env, ingot_error *e);

/* Verify an envelope file: signatures first (over the PAE of the type
 * and payload as found; the payload is not interpreted before that),
 * then payload type, statement type, subject == the manifest's image
 * name and sha256, the manifest schema, expiry and rollback against the
 * state file, and, for a v2 statement, the bound manifest file's digest
 * (p->file_list; a mismatch is ENVELOPE_FAIL_DIGEST, a missing or
 * unreadable file ENVELOPE_FAIL_IO, never a pass).  The image itself is checked by the caller
 * (image/verity.h: image_check_manifest) and the serial recorded with
 * envelope_record_state once everything passed.  On failure, e->msg
 * names what failed and e->kind is one of ENVELOPE_FAIL_*.
 * manifest_out (optional) gets the verified manifest, typed
 * (manifest/manifest.h). */
int envelope_verify(const char *path, const struct keyring *kr, const struct verify_policy *p,
		    struct manifest **manifest_out, struct verify_outcome *out, ingot_error *e);

/* Same on an already parsed envelope (name for messages). */
int envelope_verify_json(const char *name, const json_t *env, const struct keyring *kr,
			 const struct verify_policy *p, struct manifest **manifest_out,
			 struct verify_outcome *out, ingot_error *e);

/* What verifying a manifest envelope gives, each piece made once: the
 * authenticated payload bytes, the statement parsed from them (only
 * after the signatures held), its predicate and the manifest's content
 * digest (attest/predict.h attest_content_digest). */
struct verified_manifest {
	uint8_t *payload;
	size_t payload_len;
	json_t *statement;
	json_t *manifest;              /* the manifest (own reference): v1 the predicate, v2 the
					* bound file (the head with file_list_digest_only) */
	struct manifest_ref ref;       /* v2: the bound file (ref.name "" for v1) */
	uint8_t content_digest[32];
};
void verified_manifest_free(struct verified_manifest *vm);

/* envelope_verify_json, keeping what it decoded and parsed in *vm
 * (zeroed first; free with verified_manifest_free, also on failure). */
int envelope_verify_manifest(const char *name, const json_t *env, const struct keyring *kr,
			     const struct verify_policy *p, struct verified_manifest *vm,
			     struct verify_outcome *out, ingot_error *e);

/* Record out's serial for out's recipe in the state file (created if
 * absent, atomically), unless a serial as high is already there. */
int envelope_record_state(const char *state_path, const struct verify_outcome *out,
			  ingot_error *e);

/* Promotion serials, in the same state file ("promotions": {"RING": N}):
 * the highest serial of a promotion to ring this verifier has seen (0:
 * none; files written before they were recorded have none), and raising
 * it (atomically, never lowering it).  e->kind as above on failure. */
int state_promotion_serial(const char *state_path, const char *ring, uint64_t *last, ingot_error *e);
int state_record_promotion(const char *state_path, const char *ring, uint64_t serial, ingot_error *e);

#endif
