/* Compressed-block cache: a rebuild reuses the compressed form of every
 * data block compressed by an earlier build with the same compressor
 * settings, so changing one artifact costs the compression of its blocks
 * only (at zstd level 19, compression is nearly all of a build).
 *
 * The image is the same bytes with or without the cache: an entry is
 * keyed by sha256 of the uncompressed block and of the compressor's
 * identity (its settings plus the digest of its output on a fixed probe
 * block, so a library upgrade that changes output starts a new cache),
 * and holds exactly what the compressor returned.  Each entry carries the
 * sha256 of its compressed bytes, checked on every use: a damaged entry
 * is recompressed, never written into an image.
 *
 * Layout: STORE/blocks/<compressor id>/<segment>.data and <segment>.idx.
 * A build appends its new blocks to one new segment, renamed into place
 * by block_cache_commit (the .idx last: it marks the segment complete). */
#ifndef INGOT_BLOCKCACHE_H
#define INGOT_BLOCKCACHE_H
#include <stdbool.h>
#include <stdint.h>
#include <sqfs/compressor.h>
#include "builder/store.h"
#include "lib/err.h"

struct block_cache;

struct block_cache_stats {
	uint64_t hits, misses, damaged;
};

/* The identity of cmp's settings and behaviour: part of every cache key,
 * here and in the file cache (filecache.h). */
int block_cache_compressor_id(sqfs_compressor_t *cmp, uint8_t cid[32], ingot_error *e);

/* Is caching worth it for these settings (see image.c)? */
bool block_cache_pays(const sqfs_compressor_config_t *cfg);

/* Open the cache of cmp's settings in the store, loading every complete
 * segment's index. */
int block_cache_open(const struct store *s, sqfs_compressor_t *cmp, struct block_cache **out,
		     ingot_error *e);
/* A compressor that answers from the cache and records what it
 * compresses; it owns a copy of inner (libsquashfs copies it per worker
 * thread).  NULL when libsquashfs cannot copy inner. */
sqfs_compressor_t *block_cache_wrap(struct block_cache *bc, sqfs_compressor_t *inner);
/* The same for blocks shorter than below only; the others go straight to
 * inner.  With below = the block size, that is the fragment blocks (file
 * tails packed together: a file's own blocks are whole), which the file
 * cache does not keep and a rebuild compresses again otherwise. */
sqfs_compressor_t *block_cache_wrap_below(struct block_cache *bc, sqfs_compressor_t *inner, uint32_t below);
/* Move this build's new segment into the store (after a good build). */
int block_cache_commit(struct block_cache *bc, ingot_error *e);
void block_cache_stats(const struct block_cache *bc, struct block_cache_stats *st);
/* Frees; an uncommitted segment is removed. */
void block_cache_close(struct block_cache *bc);
#endif
