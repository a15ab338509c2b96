/* The signed manifest: a DSSE envelope
 *   {"payloadType":"application/vnd.in-toto+json","payload":"<base64>",
 *    "signatures":[{"keyid":"<hex>","sig":"<base64>"}]}
 * whose payload is an in-toto Statement v1 with the image as subject and
 * the manifest as predicate.  Signatures are over the DSSE PAE bytes
 *   "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body
 * (lengths in ASCII decimal), so `openssl pkeyutl -verify` checks them. */
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

#define ENVELOPE_PAYLOAD_TYPE "application/vnd.in-toto+json"
#define STATEMENT_TYPE "https://in-toto.io/Statement/v1"
#define MANIFEST_PREDICATE_TYPE "https://ingot.dev/manifest/v1"

/* Limits: anything larger is refused before it is decoded. */
#define ENVELOPE_FILE_MAX (96u << 20)     /* base64 of a 64 MiB payload fits */
#define ENVELOPE_PAYLOAD_MAX (64u << 20)  /* decoded payload */
#define ENVELOPE_MAX_SIGS 64
#define ENVELOPE_SIG_B64_MAX 1024         /* Ed25519: 88 chars, P-256 DER: <= 100 */
#define ENVELOPE_TYPE_MAX 256

/* Exit statuses of verification (set in e->status by envelope_verify). */
enum {
	ENVELOPE_EXIT_OK = 0,
	ENVELOPE_EXIT_IO = 1,          /* cannot read the envelope/keyring/image, write state */
	ENVELOPE_EXIT_MALFORMED = 2,   /* not JSON, wrong shape, over a limit, bad keyring/state */
	ENVELOPE_EXIT_SIGNATURE = 3,   /* too few valid signatures by distinct trusted keys */
	ENVELOPE_EXIT_EXPIRED = 4,     /* manifest "expires" is not after now */
	ENVELOPE_EXIT_ROLLBACK = 5,    /* serial below the last one recorded in the state file */
	ENVELOPE_EXIT_DIGEST = 6,      /* image sha256/size or verity root does not match */
};

/* The PAE bytes for (type, body); *out is malloc'd. */
int dsse_pae(const char *type, const void *body, size_t body_len, uint8_t **out, size_t *out_len);

/* The in-toto statement for a manifest (new reference). */
int statement_for_manifest(const json_t *manifest, json_t **out, ingot_error *e);

/* Build an envelope with one signature by k.  The payload is
 * json_compact(statement), so equal manifests give equal payloads (and,
 * with Ed25519, equal envelopes). */
int envelope_create(const json_t *manifest, const struct signing_key *k, json_t **envelope,
		    ingot_error *e);
/* Sign any in-toto statement (evidence, promotions) into a new envelope
 * with one signature by k; envelope_create is this over the manifest's. */
int envelope_sign_statement(const json_t *statement, const struct signing_key *k,
			    json_t **envelope, ingot_error *e);
/* Add k's signature to an existing envelope (checked for shape first).
 * -EEXIST if k already signed it. */
int envelope_add_signature(json_t *envelope, const struct signing_key *k, ingot_error *e);

/* Check the envelope's structure and limits without verifying anything
 * (name is used in messages).  *payload gets the decoded payload. */
int envelope_parse(const char *name, const json_t *env, uint8_t **payload, size_t *payload_len,
		   ingot_error *e);

/* Parse an (authenticated) payload as an in-toto statement about an ingot
 * manifest: statement type, predicate type, manifest schema, and the
 * subject equal to the manifest's image file name and sha256.  *manifest
 * gets the predicate (new reference). */
int envelope_statement_manifest(const char *name, const uint8_t *payload, size_t len,
				json_t **manifest, ingot_error *e);

struct verify_policy {
	time_t now;               /* expiry is checked against this */
	const char *state_path;   /* last-seen serials (NULL: no rollback check) */
	bool record_state;        /* on success, record the serial in state_path */
	const char *image_path;   /* NULL: skip the image sha256/size check */
	const char *verity_path;  /* NULL: skip verity (needs image_path) */
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
	bool image_checked, verity_checked;
	char image_sha256[65];
};

/* Only the envelope's shape, payloadType and signatures against kr
 * (threshold of distinct keys), for statements other than manifests; the
 * caller interprets *payload (authenticated on success). */
int envelope_verify_signatures(const char *name, const json_t *env, const struct keyring *kr,
			       uint8_t **payload, size_t *payload_len, struct verify_outcome *out,
			       ingot_error *e);

/* Read and parse an envelope file (limit ENVELOPE_FILE_MAX); e->status set. */
int envelope_read_file(const char *path, json_t **env, ingot_error *e);

/* Verify an envelope file: signatures first (over the PAE of the type
 * and payload as found; the payload is not interpreted before that),
 * then payload type, statement type, subject == the manifest's image
 * name and sha256, the manifest schema, expiry, rollback against the
 * state file, and the image/verity files when given.  On failure,
 * e->msg names what failed and e->status is one of ENVELOPE_EXIT_*.
 * manifest_out (optional) gets the verified manifest. */
int envelope_verify(const char *path, const struct keyring *kr, const struct verify_policy *p,
		    json_t **manifest_out, struct verify_outcome *out, ingot_error *e);

/* Same on an already parsed envelope (name for messages). */
int envelope_verify_json(const char *name, const json_t *env, const struct keyring *kr,
			 const struct verify_policy *p, json_t **manifest_out,
			 struct verify_outcome *out, ingot_error *e);

/* RFC 3339 ("2027-01-31T00:00:00Z", "...+02:00", fractional seconds
 * allowed) or a decimal epoch ("1767225600") to time_t. */
int parse_time(const char *s, time_t *out);

#endif
