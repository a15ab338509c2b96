/* Reading manifests for review: a plain `<name>.manifest.json` or the
 * DSSE envelope `<name>.manifest.dsse.json` that carries it as the
 * predicate of an in-toto statement.  Nothing here checks signatures
 * (that is keys/envelope.h); it only decodes and checks the shape, so
 * diff and inspect can show what a document claims. */
#ifndef INGOT_AUDIT_MDOC_H
#define INGOT_AUDIT_MDOC_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "lib/err.h"

#define MANIFEST_SCHEMA "ingot.manifest/v1"
#define DSSE_PAYLOAD_TYPE "application/vnd.in-toto+json"
#define INGOT_PREDICATE_TYPE "https://ingot.dev/manifest/v1"

struct mdoc {
	json_t *manifest;   /* the manifest object (always set on success) */
	json_t *envelope;   /* the DSSE envelope, or NULL for a bare manifest */
	json_t *statement;  /* the decoded in-toto statement, or NULL */
};

/* Load path as a manifest or an envelope.  Errors name the file and the
 * field: "a.json: field 'files': expected an array". */
int mdoc_load(const char *path, struct mdoc *out, ingot_error *e);
/* Same, from an already parsed document (name is used in messages;
 * takes its own references). */
int mdoc_from_json(const char *name, json_t *doc, struct mdoc *out, ingot_error *e);
void mdoc_free(struct mdoc *d);
static inline void mdoc_freep(struct mdoc *d) { mdoc_free(d); }
#define _cleanup_mdoc_ __attribute__((cleanup(mdoc_freep)))

/* Check the manifest members diff and audit rely on: schema, recipe,
 * tuple (object or null), artifacts[].name, files[].path. */
int manifest_check_shape(const char *name, const json_t *m, ingot_error *e);

#endif
