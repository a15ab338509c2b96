/* The signed manifest's container: a DSSE envelope
 *   {"payloadType":"application/vnd.in-toto+json","payload":"<base64>",
 *    "signatures":[{"keyid":"<hex>","sig":"<base64>"}]}
 * whose payload is an in-toto Statement v1 with the image as subject and
 * the manifest as predicate.  Signatures are over the DSSE PAE bytes
 *   "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body
 * (lengths in ASCII decimal).  This is the format only: parsing and
 * building; signing and verifying are keys/envelope.h. */
#ifndef INGOT_MANIFEST_DSSE_H
#define INGOT_MANIFEST_DSSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "lib/err.h"
#include "lib/json.h"
#include "manifest/schema.h"

#define ENVELOPE_PAYLOAD_TYPE "application/vnd.in-toto+json"
#define STATEMENT_TYPE "https://in-toto.io/Statement/v1"
/* What other signers write and readers accept beside them: the in-toto
 * v1 media type with its version in it, and Statement v0.1 (what `cosign
 * attest` writes; its subject, predicateType and predicate are v1's). */
#define ENVELOPE_PAYLOAD_TYPE_V1 "application/vnd.in-toto.v1+json"
#define STATEMENT_TYPE_V01 "https://in-toto.io/Statement/v0.1"
#define SIGSTORE_BUNDLE_PREFIX "application/vnd.dev.sigstore.bundle"
#define MANIFEST_PREDICATE_TYPE "https://ingot.dev/manifest/v1"

/* Limits: anything larger is refused before it is decoded. */
#define ENVELOPE_PAYLOAD_MAX MANIFEST_PAYLOAD_MAX   /* decoded payload */
#define ENVELOPE_FILE_MAX (96u << 20)     /* base64 of the largest payload fits */
#define ENVELOPE_MAX_SIGS 64
#define ENVELOPE_SIG_B64_MAX 1024         /* Ed25519: 88 chars, P-256 DER: <= 100 */
#define ENVELOPE_TYPE_MAX 256

/* Base64 as DSSE allows it: standard or URL-safe (RFC 4648 sections 4
 * and 5), one alphabet per string, padded and canonical (lib/base64.h's
 * strictness otherwise), as the DSSE reference implementation decodes.
 * -EINVAL for anything else. */
int dsse_base64_decode(const char *in, size_t len, uint8_t **out, size_t *out_len);

/* The PAE bytes for (type, body); *out is malloc'd. */
void dsse_pae(const char *type, const void *body, size_t body_len, uint8_t **out, size_t *out_len);

/* The in-toto statement for a manifest (new reference), after checking
 * the manifest in full (manifest_check; name is used in its messages:
 * -EINVAL or -EFBIG, else -ENOMEM).  Its predicate is a reference to
 * manifest, not a copy: modify neither while the statement lives. */
int statement_for_manifest(const char *name, const json_t *manifest, json_t **out,
			   ingot_error *e);

/* The same for a manifest head (builder/manifest.h): checked with
 * manifest_check_head, its files[] a splice mark the caller fills and
 * has checked entry by entry. */
int statement_for_manifest_head(const char *name, const json_t *head, json_t **out,
				ingot_error *e);

/* json_canonical(env), byte for byte, without jansson escaping the
 * payload (most of an envelope's bytes) character by character: it is
 * copied as is when it is base64 and sorts first, as in every envelope
 * ingot writes; otherwise this is json_canonical.  NULL: out of memory.
 * Written with json_write_file_as(path, env, envelope_canonical, ...). */
char *envelope_canonical(const json_t *env, size_t *len);

/* The same bytes for the envelope rest plus {"payload": base64(payload)},
 * the payload encoded as it is written, so a large one is held once (by
 * the caller).  rest: the other members (payloadType, signatures), all
 * sorting after "payload" (-EINVAL otherwise). */
int envelope_write(const json_t *rest, const void *payload, size_t len, const struct json_out *out,
		   ingot_error *e);

/* Check the envelope's structure and limits without verifying anything
 * (name is used in messages).  *payload gets the decoded payload. */
int envelope_parse(const char *name, const json_t *env, uint8_t **payload, size_t *payload_len,
		   ingot_error *e);

/* Either spelling of the in-toto payload type (the signatures cover the
 * spelling: it is checked after them, never rewritten). */
bool envelope_payload_type_ok(const char *type);
/* Statement v1 or v0.1. */
bool statement_type_ok(const char *type);

/* A Sigstore bundle (mediaType application/vnd.dev.sigstore.bundle...,
 * v0.1 to v0.3) holds a DSSE envelope in dsseEnvelope: *env gets it (new
 * reference) and 1 is returned; 0 and *env = NULL when doc is no bundle.
 * Only public-key verification material is accepted: the envelope's
 * signatures are then checked against the keyring like any other.
 * Keyless bundles (a Fulcio certificate) need Sigstore's trust root and
 * are refused; tlogEntries and timestamps are not checked (the keyring
 * threshold is the whole trust decision). */
int sigstore_bundle_envelope(const char *name, const json_t *doc, json_t **env, ingot_error *e);

/* Read a manifest or envelope file as JSON within the limit of what it
 * is: ENVELOPE_FILE_MAX for an envelope, MANIFEST_FILE_MAX for a bare
 * manifest.  -EFBIG over the limit, -EBADMSG when not JSON.  Every
 * command that reads either uses this, so all apply the same limits.
 * A Sigstore bundle is read as the DSSE envelope it holds
 * (sigstore_bundle_envelope).  sha256 (optional) gets the digest of the
 * bytes parsed. */
int manifest_read_file(const char *path, json_t **doc, uint8_t sha256[32], ingot_error *e);

/* Parse a payload as an in-toto statement about an ingot manifest:
 * statement type, predicate type, the manifest (manifest_check_level)
 * and, for MANIFEST_FULL, the subject equal to the manifest's image file
 * name and sha256.  *manifest gets the predicate, *statement (optional)
 * the whole statement (new references). */
int envelope_statement_manifest(const char *name, const uint8_t *payload, size_t len,
				enum manifest_level level, json_t **statement, json_t **manifest,
				ingot_error *e);

#endif
