/* The manifest: every immutable digest of one image build, as canonical
 * JSON (docs/CONTRACTS.md "Manifest").  Same inputs give the same bytes:
 * nothing in it depends on the clock, the host or the order of work.
 * The format and its check are manifest/schema.h; this is the writer. */
#ifndef INGOT_MANIFEST_H
#define INGOT_MANIFEST_H

#include <stdint.h>
#include <jansson.h>

#include "lib/err.h"
#include "manifest/schema.h"

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

#endif
