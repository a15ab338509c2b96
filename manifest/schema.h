/* The manifest format (docs/CONTRACTS.md "Manifest"): its schema name,
 * limits and the one check every reader and the writer apply. */
#ifndef INGOT_MANIFEST_SCHEMA_H
#define INGOT_MANIFEST_SCHEMA_H

#include <jansson.h>

#include "lib/err.h"

#define MANIFEST_SCHEMA_V1 "ingot.manifest/v1"
#define MANIFEST_MAX_STRING 8192   /* paths, names, targets: PATH_MAX plus slack */

/* The limits, one set: every reader refuses more, and the writer refuses
 * to write more (manifest_check_size), so ingot never writes a manifest
 * it or a node cannot read. */
#define MANIFEST_FILE_MAX (64u << 20)      /* NAME.manifest.json as written (canonical) */
#define MANIFEST_PAYLOAD_MAX (64u << 20)   /* the signed statement (compact), decoded */
#define MANIFEST_MAX_FILES (1u << 20)      /* files[] entries */

struct manifest_limits {
	size_t file_max, payload_max, max_files;
};
#define MANIFEST_LIMITS ((struct manifest_limits){ MANIFEST_FILE_MAX, MANIFEST_PAYLOAD_MAX, \
						   MANIFEST_MAX_FILES })

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

/* What the writer checks before writing m: its entry count, its
 * canonical bytes and its in-toto statement's compact bytes within l
 * (MANIFEST_LIMITS; tests pass smaller ones). */
int manifest_check_size(const json_t *m, const struct manifest_limits *l, ingot_error *e);

/* The same checks in parts, for a writer that never holds files[] whole
 * (builder/manifest.c streams it): manifest_check_head is manifest_check
 * of m with files[] empty, whatever m's "files" member holds;
 * manifest_check_file checks entry i (prev: entry i-1's path, or NULL);
 * manifest_check_sizes is manifest_check_size from the counts (compact:
 * the manifest's compact bytes). */
int manifest_check_head(const char *name, const json_t *m, ingot_error *e);
int manifest_check_file(const char *name, size_t i, const json_t *f, const char *prev,
			ingot_error *e);
int manifest_check_sizes(size_t files, size_t canonical, size_t compact,
			 const struct manifest_limits *l, ingot_error *e);

#endif
