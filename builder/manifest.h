/* The manifest: every immutable digest of one image build, as canonical
 * JSON (docs/CONTRACTS.md "Manifest").  Same inputs give the same bytes:
 * nothing in it depends on the clock, the host or the order of work. */
#ifndef INGOT_MANIFEST_H
#define INGOT_MANIFEST_H

#include <stdint.h>
#include <jansson.h>

#include "lib/err.h"

#define MANIFEST_SCHEMA_V1 "ingot.manifest/v1"
#define MANIFEST_MAX_STRING 8192   /* paths, names, targets: PATH_MAX plus slack */

struct recipe;
struct tree;
struct image_opts;
struct image_info;
struct verity_info;

/* Assemble the manifest of a finished build (new reference in *out).
 * The tree must be finalized (sorted).  Artifact sizes are taken from
 * the recipe's resolved artifact paths.  The "measurement" member is
 * attest_predict_measurement() over the rest (PCR 15). */
int manifest_build(const struct recipe *r, const struct tree *t, const struct image_opts *io,
		   const struct image_info *ii, const struct verity_info *vi, json_t **out,
		   ingot_error *e);
/* The same with the artifact sizes given (what the build read; the
 * sources may be gone on a rebuild from the store). */
int manifest_build_sized(const struct recipe *r, const uint64_t *sizes, const struct tree *t,
			 const struct image_opts *io, const struct image_info *ii,
			 const struct verity_info *vi, json_t **out, ingot_error *e);

/* Load a manifest file and validate it (manifest_check). */
int manifest_load(const char *path, json_t **out, ingot_error *e);

/* Validate every member's presence and type, hex digests, modes, paths
 * order and limits.  name is used in messages:
 *   "a.manifest.json: files[3].sha256: expected 64 lower-case hex digits, got \"xyz\"" */
int manifest_check(const char *name, const json_t *m, ingot_error *e);

#endif
