/* The listing cache of builder/unpack.c (STORE/unpacked/<sha256>.jsonl and
 * .pack; docs/CONTRACTS.md "Unpack cache"): a listing written once per
 * artifact, read back on a warm rebuild so the artifact is neither read
 * nor decompressed again.  Internal to the unpacker. */
#ifndef INGOT_UNPACK_CACHE_H
#define INGOT_UNPACK_CACHE_H

#include <stdint.h>
#include <sys/stat.h>

#include "builder/unpack.h"

#define UNPACK_CACHE_SCHEMA "ingot.unpacked/v5"

/* The source file as it was when its listing was cached. */
struct unpack_cache_meta {
	uint64_t mtime_ns, ino;
};

/* Write l (its pack is pack_size bytes) as a's cached listing; src is
 * the source's stat, st the unpack's stats. */
int unpack_cache_write(const struct store *s, const struct artifact *a, const struct tree *l,
		       uint64_t pack_size, const struct stat *src, const struct unpack_stats *st,
		       ingot_error *e);

/* Load a cached listing; any problem (missing, stale, damaged, pack
 * gone or short) returns < 0 and the artifact is simply unpacked again. */
int unpack_cache_read(const struct store *s, const struct artifact *a, struct tree *l,
		      struct unpack_stats *st, struct unpack_cache_meta *cm);

/* The size of the regular file path; -ENOENT for anything else. */
int unpack_file_size(const char *path, uint64_t *size);

/* A cached artifact whose source is still there must still match its pin. */
int unpack_cache_check_source(const struct artifact *a, const struct unpack_stats *st,
			       const struct unpack_cache_meta *cm, ingot_error *e);

#endif
