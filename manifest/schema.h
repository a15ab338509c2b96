/* The manifest format (docs/CONTRACTS.md "Manifest"): its schema name,
 * limits and the one check every reader and the writer apply. */
#ifndef INGOT_MANIFEST_SCHEMA_H
#define INGOT_MANIFEST_SCHEMA_H

#include <jansson.h>

#include "lib/err.h"

#define MANIFEST_SCHEMA_V1 "ingot.manifest/v1"
#define MANIFEST_MAX_STRING 8192   /* paths, names, targets: PATH_MAX plus slack */

enum manifest_level {
	/* Everything: presence and type of every member, hex digests, modes,
	 * path order, per-type members.  What signing and verifying need. */
	MANIFEST_FULL,
	/* For review (diff, inspect): schema, recipe, artifacts[].name and
	 * files[].path must be there; any other member, when present, must
	 * have its full type.  Handwritten or trimmed manifests pass. */
	MANIFEST_REVIEW,
};

/* Validate m.  name is used in messages:
 *   "a.manifest.json: files[3].sha256: expected 64 lower-case hex digits, got \"xyz\"" */
int manifest_check_level(const char *name, const json_t *m, enum manifest_level level,
			 ingot_error *e);
static inline int manifest_check(const char *name, const json_t *m, ingot_error *e)
{
	return manifest_check_level(name, m, MANIFEST_FULL, e);
}

/* Load a manifest file and check it in full. */
int manifest_load(const char *path, json_t **out, ingot_error *e);

#endif
