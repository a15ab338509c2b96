/* The one statements module: every signed in-toto statement ingot reads
 * or writes (manifests, enrolment records, firmware references,
 * evidence, promotions) is opened, verified against a keyring with its
 * threshold, and signed here, in DSSE (a Sigstore bundle's dsseEnvelope,
 * payloadType either in-toto spelling, Statement v1 or v0.1: the format
 * is manifest/dsse.h).  Signatures first, then the statement's shape
 * (statement_parse): a caller names the predicate type it expects and
 * parses the predicate, and its subjects, into its own struct.  The
 * manifest's own statement (several subjects, the file list) is checked
 * by keys/envelope.h on the same two steps. */
#ifndef INGOT_KEYS_STATEMENT_H
#define INGOT_KEYS_STATEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "keys/envelope.h"
#include "keys/key.h"
#include "keys/keyring.h"
#include "lib/err.h"
#include "manifest/typed.h"

#define STATEMENT_DIR_MAX 4096     /* statements read from one directory */

/* An opened statement: authenticated by the keyring's threshold, its
 * shape checked, its predicate an object of the expected type. */
struct statement {
	json_t *doc;               /* the whole statement (own reference) */
	const json_t *predicate;   /* doc's predicate (borrowed from doc) */
};
void statement_release(struct statement *st);
#define _cleanup_statement_ _cleanup_(statement_release)

/* The statement's only subject: its name and digest.sha256 (borrowed),
 * or false when it has not exactly one subject with both strings. */
bool statement_one_subject(const struct statement *st, const char **name, const char **sha256);

/* Verify env (a DSSE envelope or a Sigstore bundle holding one; name
 * for messages) against kr: its threshold of distinct trusted keys, the
 * payload type, and only then the statement, of predicate type ptype.
 * *st zeroed first; release it also on failure.  e->kind: an
 * ENVELOPE_FAIL_* on every failure. */
int statement_verify(const char *name, const json_t *env, const struct keyring *kr, const char *ptype,
		     struct statement *st, struct verify_outcome *out, ingot_error *e);

/* The same on an envelope file (envelope_read_file: ENVELOPE_FILE_MAX,
 * a regular file). */
int statement_open(const char *path, const struct keyring *kr, const char *ptype, struct statement *st,
		   struct verify_outcome *out, ingot_error *e);

/* The statement inside env, its signatures NOT checked: for describing
 * what an envelope that failed verification claims, never for trusting
 * it.  0 with *st's predicate an object, or a negative errno (-EBADMSG:
 * no predicate object) with *st empty; e may be NULL. */
int statement_peek(const char *name, const json_t *env, struct statement *st, ingot_error *e);

/* A new Statement v1 with one subject (name, digest.sha256) and
 * predicate (its reference taken, also on failure); NULL: out of memory. */
json_t *statement_new(const char *ptype, const char *subject_name, const char *subject_sha256,
		      json_t *predicate);

/* The statement about an image (what ingot signs about one besides its
 * manifest): its subject the manifest's image file and sha256. */
int image_statement(const char *ptype, const struct manifest *m, json_t *predicate, json_t **out,
		    ingot_error *e);

/* An image_statement's subject: exactly one, its digest.sha256 64 hex
 * digits, copied to sha256 (-EINVAL, ENVELOPE_FAIL_MALFORMED otherwise). */
int image_subject(const char *name, const struct statement *st, char sha256[65], ingot_error *e);

/* Sign statement with every key: one envelope, n_keys signatures over
 * json_compact(statement) (keys/envelope.h envelope_sign_statement). */
int statement_sign(const json_t *statement, struct signing_key *const *keys, size_t n_keys,
		   json_t **envelope, ingot_error *e);

/* The files in dir whose names end in suffix, sorted (malloc'd array of
 * malloc'd paths, *n entries).  -ENOENT if dir is missing. */
int statement_dir_list(const char *dir, const char *suffix, char ***paths, size_t *n,
		       ingot_error *e);
void statement_dir_free(char **paths, size_t n);

#endif
