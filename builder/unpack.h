/* Unpacking artifacts into the staging tree, in two stages:
 *
 *  1. unpack_list(): read the artifact (tar.*, .deb, plain file) from the
 *     store with libarchive, stream every regular file into the store and
 *     return its listing: the archive's entries with normalized paths,
 *     permission bits, sizes and digests (owners, times and xattrs are
 *     dropped).  Hostile entries are refused here: absolute paths, "..",
 *     non-UTF-8 names, hardlinks to anything but an earlier regular file
 *     of the same artifact, duplicated paths.  The listing depends only on
 *     the artifact's bytes and kind, so it is cached in the store as
 *     unpacked/<sha256>.json and a warm rebuild skips decompression.
 *
 *  2. unpack_apply(): apply the recipe's view of the artifact
 *     (strip-components, include/exclude, dest, modes, allow-devices,
 *     replace) and add the entries to the image tree, refusing paths that
 *     go through a symlink or a non-directory already in the tree. */
#ifndef INGOT_UNPACK_H
#define INGOT_UNPACK_H

#include <stdbool.h>
#include <stdint.h>
#include "builder/recipe.h"
#include "builder/store.h"
#include "builder/tree.h"
#include "lib/err.h"

struct unpack_stats {
	bool cached;         /* listing came from unpacked/<sha>.json */
	uint64_t entries;    /* entries in the listing */
	uint64_t bytes;      /* total size of its regular files */
};

/* Stage 1.  The artifact's blob must already be in the store
 * (store_import).  listing is initialised here; free with tree_free. */
int unpack_list(struct store *s, const struct artifact *a, struct tree *listing,
		struct unpack_stats *st, ingot_error *e);

/* Stage 2: add the listing (in its order) to the image tree t. */
int unpack_apply(const struct artifact *a, const struct tree *listing, struct tree *t, ingot_error *e);

/* Does pattern match path or one of its parent directories?  fnmatch(3)
 * without FNM_PATHNAME, so "*" also crosses '/'.  Exposed for tests. */
bool unpack_glob_match(const char *pattern, const char *path);

#endif
