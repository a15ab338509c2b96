/* Store garbage collection (`ingot store gc`): keep what builds of the
 * given recipes use, remove the rest.
 *
 * Kept: each recipe's artifacts (packs and listings by pin, file
 * artifacts' blobs), the blobs of every file its image holds, and the
 * file cache's entries for those files (every compressor's directory,
 * each compacted into one segment).  Removed: everything else under
 * unpacked/ and blobs/, the other file-cache entries, and the whole
 * block cache (blocks/: keyed by block, it cannot be tied to files; the
 * file cache already serves every unchanged file).
 *
 * The store is a cache: what gc removes costs a later build time, never
 * correctness.  It works under the store's exclusive lock (a running
 * build holds it shared: gc then refuses), and resolves every recipe
 * before it removes anything, so a recipe that fails to load or unpack
 * stops it with nothing removed.  Nothing outside the store is ever
 * removed: gc walks from directory fds and never follows a symlink (one
 * planted in the store is left in place and reported). */
#ifndef INGOT_GC_H
#define INGOT_GC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/err.h"

struct store_gc_opts {
	const char *store;               /* NULL: store_default_root() */
	const char *const *recipes;      /* at least one */
	size_t n_recipes;
	const char *source_date_epoch;   /* as for ingot build */
	unsigned workers;                /* unpack threads for an artifact not yet in the store */
	bool dry_run;                    /* count, remove nothing */
};

struct store_gc_stats {
	uint64_t artifacts_kept, artifacts_removed;   /* unpacked/ listings and packs, by pin */
	uint64_t blobs_kept, blobs_removed;
	uint64_t files_kept, files_removed;           /* file-cache entries */
	uint64_t file_segments, file_segments_damaged;
	uint64_t block_segments_removed;
	uint64_t bytes_before, bytes_after;           /* of everything gc looked at */
	/* entries left alone: a symlink, FIFO, device or socket anywhere gc
	 * walks, a directory where a file belongs (never followed, never
	 * removed); the first as "PATH: a symbolic link" (malloc'd) */
	uint64_t skipped;
	char *skipped_first;
};

/* On failure too, *st is to be freed with store_gc_stats_free. */
int store_gc(const struct store_gc_opts *o, struct store_gc_stats *st, ingot_error *e);
void store_gc_stats_free(struct store_gc_stats *st);

#endif
