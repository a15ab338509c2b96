/* Squashfs image writer (libsquashfs); the dm-verity tree and the image
 * check are image/verity.h.  Formats and layout: docs/image.md. */
#ifndef INGOT_IMAGE_H
#define INGOT_IMAGE_H

#include <stdbool.h>
#include <stdint.h>
#include <jansson.h>
#include "image/verity.h"
#include "lib/err.h"

struct tree;
struct store;

struct image_opts {
	const char *compression;  /* "zstd" (NULL/"" too), "xz", "gzip", "lzma", "lz4" */
	int level;                /* 0 = libsquashfs' default for the compressor */
	uint32_t block_size;      /* power of two, 4096 .. 1048576 */
	unsigned workers;         /* compression threads; output must not depend on it */
	uint64_t mtime;           /* every inode and the superblock; < 2^32 */
	bool no_block_cache;      /* don't use the store's compressed-block cache */
	bool no_file_cache;       /* don't use the store's per-file cache */
	/* if set, t->n entries: each file's SHA-1 (for the SBOM), from the
	 * bytes the writer read or from the file cache */
	uint8_t (*sha1)[20];
};

struct image_info {
	uint64_t size;            /* bytes written, padded to 4096 */
	uint64_t inodes;
	/* data blocks answered by the store's block cache, compressed, and
	 * cache entries found damaged (recompressed) */
	uint64_t blocks_reused, blocks_compressed, blocks_damaged;
	/* files whose compressed blocks came from the store's file cache, and
	 * entries found damaged there (compressed from the source instead) */
	uint64_t files_reused, files_damaged;
	uint64_t files_segments_ignored;   /* file-cache segments past the most read */
};

/* Write a squashfs image of the finalized (sorted) tree into fd, which
 * must be open read-write; it is truncated first.  The root directory is
 * 0755 root:root.  File data is streamed from the store, and bytes this
 * process did not hash on their way in (loc.fresh unset) are re-hashed
 * against their tree entry, blobs as they are read, cached pack ranges
 * on a thread of their own (-EBADMSG on mismatch, -ENOENT when missing).
 * The same tree and options give the same bytes, whatever o->workers.
 * name is for messages. */
int image_write(const struct tree *t, const struct store *s, const struct image_opts *o,
		int fd, const char *name, struct image_info *info, ingot_error *e);

#endif
