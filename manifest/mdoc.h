/* Reading manifests for review: a plain `<name>.manifest.json` or the
 * DSSE envelope `<name>.manifest.dsse.json` that carries it as the
 * predicate of an in-toto statement.  Nothing here checks signatures
 * (keys/envelope.h does); it decodes with the one envelope parser and
 * checks the manifest at MANIFEST_REVIEW level, so diff and inspect can
 * show what a document claims.  A v2 statement's manifest is the file it
 * binds, beside the envelope, read only when its digest matches. */
#ifndef INGOT_MANIFEST_MDOC_H
#define INGOT_MANIFEST_MDOC_H

#include <jansson.h>
#include "lib/err.h"
#include "manifest/typed.h"

struct mdoc {
	struct manifest *manifest;   /* the manifest, checked at MANIFEST_REVIEW (always set on success) */
	json_t *envelope;   /* the DSSE envelope, or NULL for a bare manifest */
	json_t *statement;  /* the decoded in-toto statement, or NULL */
};

/* Load path as a manifest or an envelope.  Errors name the file and the
 * field. */
int mdoc_load(const char *path, struct mdoc *out, ingot_error *e);
/* The same for a reader of the head only (evidence, promotion: the
 * image digest and tuple): a v2 statement's file list is not read, the
 * manifest is its head, without files[]. */
int mdoc_load_head(const char *path, struct mdoc *out, ingot_error *e);
/* Same, from an already parsed document (name is used in messages;
 * takes its own references). */
int mdoc_from_json(const char *name, json_t *doc, struct mdoc *out, ingot_error *e);
void mdoc_free(struct mdoc *d);
static inline void mdoc_freep(struct mdoc *d) { mdoc_free(d); }
#define _cleanup_mdoc_ __attribute__((cleanup(mdoc_freep)))

#endif
