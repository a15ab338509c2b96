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
/* What ingot writes since 0.2: the predicate is the manifest's head (every
 * member but files[]) and the manifest file itself is the last subject,
 * bound by the sha256 of its bytes (docs/signing.md).  The v1 form (the
 * whole manifest as predicate) is still read, never written. */
#define MANIFEST_HEAD_PREDICATE_TYPE "https://ingot.dev/manifest-head/v2"
#define MANIFEST_REF_NAME_MAX 255   /* the manifest subject's name: one file name */

/* The manifest file a v2 statement binds: its subject name (a file name,
 * no '/', found beside the envelope) and the signed sha256 of its bytes. */
struct manifest_ref {
	char name[MANIFEST_REF_NAME_MAX + 1];
	char sha256[65];
	size_t subject;   /* its index in statement.subject, for messages */
};

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

/* The v2 statement ingot writes: head is a manifest without files[]
 * (checked: manifest_check_head), manifest_name and manifest_sha256 the
 * manifest file's name (no directory) and the digest of its bytes, its
 * last subject.  The predicate is a reference to head. */
int statement_for_head(const char *name, const json_t *head, const char *manifest_name,
		       const uint8_t manifest_sha256[32], json_t **out, ingot_error *e);

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

/* A Sigstore bundle (mediaType exactly that of v0.1, v0.2 or v0.3;
 * another version is refused) holds a DSSE envelope in dsseEnvelope: *env gets it (new
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

/* Parse a payload as an in-toto statement, the shape every statement
 * ingot reads shares (keys/statement.h opens the signed ones): a JSON
 * object of only _type (v1 or v0.1), subject, predicateType (one of
 * ptypes, NULL-terminated; messages name the first two) and predicate
 * (an object).  Subjects are the caller's: each predicate binds its own.
 * *statement: new reference. */
int statement_parse(const char *name, const uint8_t *payload, size_t len, const char *const *ptypes,
		    json_t **statement, ingot_error *e);

/* Parse a payload as an in-toto statement about an ingot manifest, the
 * one parser of both forms: the statement (statement_parse), the manifest
 * (manifest_check_level; v2: the head, checked in full at either level)
 * and, for MANIFEST_FULL (v2: always), the subjects equal to the
 * manifest's image (and sbom) file name and sha256, v2's last one the
 * manifest file.  *manifest gets the predicate, *statement (optional) the
 * whole statement (new references); ref (optional) the bound manifest
 * file, ref->name "" for a v1 statement. */
int envelope_statement_parse(const char *name, const uint8_t *payload, size_t len,
			     enum manifest_level level, json_t **statement, json_t **manifest,
			     struct manifest_ref *ref, ingot_error *e);
static inline int envelope_statement_manifest(const char *name, const uint8_t *payload, size_t len,
					      enum manifest_level level, json_t **statement,
					      json_t **manifest, ingot_error *e)
{
	return envelope_statement_parse(name, payload, len, level, statement, manifest, NULL, e);
}

/* Where the file a v2 statement binds is: path when given, else
 * ref->name in the envelope's directory (malloc'd, never NULL). */
char *manifest_ref_path(const char *envelope_path, const char *path, const struct manifest_ref *ref);

/* The bound manifest file, the one place it is read: its bytes' sha256
 * must be ref's (-EILSEQ otherwise: "FILE: sha256: expected <signed>
 * (ENVELOPE statement.subject[i].digest.sha256), got <hex>").  With
 * full NULL only the digest is checked (a streamed hash, nothing
 * parsed); else the file is parsed, checked at level, and every member
 * but files[] must equal head's (-EINVAL), and *full gets the whole
 * manifest.  -errno from reading (-ENOENT: no file list). */
int manifest_ref_load(const char *envelope_path, const char *path, const struct manifest_ref *ref,
		      const json_t *head, enum manifest_level level, json_t **full, ingot_error *e);

/* The SBOM the signed manifest binds ("sbom": file, sha256), checked as
 * the image is: path when given, else sbom.file (a plain file name)
 * beside the envelope.  0: its bytes' sha256 is the signed one (*where,
 * malloc'd, names the file checked); 1: not checked, never a pass (no
 * path given and no such file beside the envelope; *where names the file
 * looked for); -EILSEQ: another sha256 ("FILE: sha256: expected <signed>
 * (manifest sbom.sha256), got <hex>"); -ENOENT with path given but the
 * manifest binding no SBOM, or no such file; -EINVAL a sbom.file that is
 * not a plain name; other -errno from reading. */
int manifest_sbom_check(const char *envelope_path, const char *path, const json_t *manifest, char **where,
			ingot_error *e);

/* What `ingot sign FILE` reads, read once: an envelope (*env) or a
 * manifest (*head: every member but files[], checked; sha256: of the
 * file's bytes).  A manifest in canonical form, as ingot writes it, is
 * not parsed beyond its head: files[] is cut from its bytes (in canonical
 * JSON a line break, two spaces and a quote start a top-level member and
 * nothing else) and bound by the digest, its entries checked by whoever
 * loads it (manifest_ref_load).  Any other manifest is parsed and
 * checked in full. */
int manifest_read_signable(const char *path, json_t **env, json_t **head, uint8_t sha256[32],
			   ingot_error *e);

#endif
