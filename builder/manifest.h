/* The manifest: every immutable digest of one image build, as canonical
 * JSON (docs/CONTRACTS.md "Manifest").  Same inputs give the same bytes:
 * nothing in it depends on the clock, the host or the order of work.
 * The format and its check are manifest/schema.h; this is the writer. */
#ifndef INGOT_MANIFEST_H
#define INGOT_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "lib/err.h"
#include "lib/strbuf.h"
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

/* The same in parts, for a build that never holds files[] whole: the
 * head is the manifest with files[] a json_splice_mark(0) and no
 * "measurement" yet; the caller adds any other member ("boot", "sbom"),
 * then manifest_seal computes the measurement (of the recipe's name and
 * the head's vi, as manifest_build_head was given) over everything, files
 * included, and checks the result as a reader would (*compact, optional:
 * its compact byte count, for manifest_check_sizes).  The bytes of the
 * manifest are then json_dump_spliced(head, ...) with manifest_files as
 * the splice: the same as json_canonical(manifest_build(...)). */
int manifest_build_head(const struct recipe *r, const uint64_t *sizes, const struct image_opts *io,
			const struct image_info *ii, const struct verity_info *vi, json_t **out, ingot_error *e);
int manifest_seal(json_t *head, const char *name, const struct verity_info *vi, const struct tree *t,
		  size_t *compact, ingot_error *e);

/* files[]'s entries made one at a time from the finalized tree t (a
 * json_splice's next; ctx is the struct).  check: check each entry as
 * manifest_check would (manifest_seal does it once). */
struct manifest_files {
	const struct tree *t;
	size_t i;
	bool check;
	struct strbuf prev;   /* the previous entry's path, for the order check */
};
void manifest_files_init(struct manifest_files *f, const struct tree *t, bool check);
void manifest_files_release(struct manifest_files *f);
int manifest_files_next(void *ctx, json_t **elem, ingot_error *e);

#endif
