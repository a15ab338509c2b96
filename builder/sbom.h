/* The image's SBOM: an SPDX 2.3 JSON document (NAME.spdx.json) with the
 * image as the described package, one package per artifact (name,
 * version from the .deb control or the tuple, sha256 pin, the recipe's
 * source as download location), every regular file with its sha256, and
 * the relationships DOCUMENT DESCRIBES image, image CONTAINS package,
 * package CONTAINS file (inline files: image CONTAINS file), and the
 * licenses with no SPDX identifier (hasExtractedLicensingInfos).  Only what
 * the build knows, so the bytes depend on the recipe and the artifacts
 * alone (creation time = the recipe's epoch). */
#ifndef INGOT_SBOM_H
#define INGOT_SBOM_H

#include <stdint.h>
#include <jansson.h>

#include "builder/store.h"
#include "builder/tree.h"
#include "builder/unpack.h"
#include "lib/err.h"
#include "lib/json.h"
#include "recipes/recipe.h"

/* Note in st where a .deb's listing has usr/share/doc/PACKAGE/copyright
 * (the data archive's, before the recipe's include/exclude): its license
 * is the package's whether or not the image keeps the file. */
void sbom_note_copyright(struct tree *listing, struct unpack_stats *st);

/* Write the document's bytes (canonical JSON) to out, a file's entries
 * made one at a time.  stats: the n_artifacts unpack results (for .deb
 * versions); t: the finalized staging tree; s: the store holding its
 * files' bytes; sha1: SPDX's per-file SHA1 by tree entry, as the image
 * writer found them (NULL: read again from the store and checked against
 * their sha256); image_sha256: the image's digest (it names the document). */
int sbom_write(const struct recipe *r, const struct unpack_stats *stats, const struct tree *t,
	       const struct store *s, const uint8_t (*sha1)[20], const uint8_t image_sha256[32],
	       const struct json_out *out, ingot_error *e);

#endif
