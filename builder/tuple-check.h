/* The artifact-evidence check of a recipe's tuple (docs/tuple.md,
 * "Artifact checks"): the bits must carry the versions the tuple
 * declares.  In builder/ because the evidence is the unpacked artifacts:
 * the staging tree, the store's bytes and the unpacker's listings. */
#ifndef INGOT_TUPLE_CHECK_H
#define INGOT_TUPLE_CHECK_H

#include "builder/store.h"
#include "builder/tree.h"
#include "builder/unpack.h"
#include "recipes/recipe.h"

/* stats: the unpack_list() result of each of r's artifacts, in recipe
 * order (a .deb's control Version comes from there).  0 when every
 * component that names an artifact is borne out, -EINVAL with the first
 * mismatch or missing evidence otherwise. */
int tuple_check_artifacts(const struct recipe *r, const struct tree *t, const struct store *s,
			  const struct unpack_stats *stats, ingot_error *e);

#endif
