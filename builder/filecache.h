/* Per-file compressed-block cache: a rebuild takes a file's compressed
 * data blocks from the store, keyed by the file's sha256 and size and the
 * compressor's identity (blockcache.h), instead of reading and compressing
 * it again, at every compression level.  An unchanged artifact (same pin)
 * is then neither unpacked, read nor compressed; only the file tails,
 * which share fragment blocks with their neighbours, are packed again
 * (from the cache too, not from the pack), and a fragment block that
 * comes out as before is taken from the block cache, which keeps the
 * fragment blocks at every level (image.c).
 *
 * What is kept per file is exactly what libsquashfs' block processor
 * handed its block writer for that file (size, checksum, flags and bytes
 * of every data block, the sparse ones and the end-of-file marker
 * included) plus the tail's raw bytes.  Replaying those calls into the
 * same block writer at the same point of the data stream gives the same
 * bytes, the same deduplication and the same inode as compressing the
 * file: the image is identical with the cache cold, warm or unused
 * (tests/unit/test_filecache.c, tests/e2e/test-build-filecache.sh).
 *
 * An entry's blocks and tail carry a CRC-64 (ISA-L), checked before
 * anything of it is written: a damaged entry is counted and the file
 * compressed from its source instead.  A checksum, not a digest: it is
 * there for damage (a torn write, a bad disk; segments are not fsync'd),
 * not for tampering, which a digest stored beside the bytes it covers
 * never stopped (anyone who can rewrite one can rewrite both).  The
 * store is trusted as the build machine is; what is trusted in the end
 * is checked on the node (docs/builder.md, "The store").
 *
 * Layout: STORE/files/<compressor id>/<segment>.data and .idx; a build
 * writes one new segment, renamed into place by file_cache_commit after
 * a good build (the .idx last). */
#ifndef INGOT_FILECACHE_H
#define INGOT_FILECACHE_H
#include <stdbool.h>
#include <stdint.h>
#include <sqfs/block_processor.h>
#include <sqfs/block_writer.h>
#include <sqfs/compressor.h>
#include "builder/store.h"
#include "lib/err.h"

struct file_cache;
struct tree;

struct file_cache_stats {
	uint64_t hits, recorded, damaged;
	uint64_t segments_ignored;     /* past the most a build reads: `ingot store gc` */
};

/* One cached file, as file_cache_get found it (its bytes checked). */
struct fc_call {
	uint32_t size, checksum, flags;
	uint64_t off;              /* in the segment's .data; unused when sparse */
};
struct fc_hit {
	struct fc_call *calls;
	uint32_t n_calls;
	uint32_t tail_len;
	uint64_t tail_off;
	int fd;                    /* the segment's .data (not owned) */
	uint8_t sha1[20];          /* of the whole file, for the SBOM */
};

/* What replaying a file's blocks put into its inode, to be merged into
 * the inode the block processor made for the tail (fc_patch_inode). */
struct fc_patch {
	uint32_t *sizes;           /* block sizes as the inode stores them */
	uint32_t n_sizes;
	uint64_t sparse;           /* bytes of all-zero blocks */
	uint64_t start;            /* location of the first block */
	bool has_start;
	uint64_t file_size;
};

/* One cached file on its way into the image: submitted to the block
 * processor as a marker block (file_cache_submit) where the file's data
 * blocks belong in the stream, and replayed by the file cache's block
 * writer when the processor writes that marker, so no file waits for the
 * blocks before it (sqfs_block_processor_sync). */
struct fc_job {
	struct fc_hit hit;
	struct fc_patch patch;
};

/* Open the cache of cmp's settings; t is the tree whose files the block
 * writer's user pointers index (user = entry index + 1). */
int file_cache_open(const struct store *s, sqfs_compressor_t *cmp, uint32_t block_size,
		    const struct tree *t, struct file_cache **out, ingot_error *e);
/* A block writer that forwards to inner and records the data blocks of
 * every file begun with a user pointer.  Freed by sqfs_destroy. */
sqfs_block_writer_t *file_cache_writer(struct file_cache *fc, sqfs_block_writer_t *inner);
/* Before end_file of tree entry id (fed with user = id + 1): the SHA-1
 * of its bytes and its tail, the bytes after its last whole block. */
int file_cache_note(struct file_cache *fc, size_t id, const uint8_t sha1[20], const void *tail, size_t len);
/* Is the file in the cache (key only, no I/O)? */
bool file_cache_has(const struct file_cache *fc, const uint8_t sha256[32], uint64_t size);
/* 1 and *hit (free with file_cache_hit_free) when the file is cached and
 * its entry's bytes check out; 0 when not cached or damaged (counted). */
int file_cache_get(struct file_cache *fc, const uint8_t sha256[32], uint64_t size,
		   struct fc_hit *hit, ingot_error *e);
void file_cache_hit_free(struct fc_hit *hit);
/* Queue job's blocks behind what the processor holds (between files);
 * the writer from file_cache_writer replays them.  An SQFS_ERROR code or 0. */
int file_cache_submit(sqfs_block_processor_t *proc, struct fc_job *job);
void file_cache_job_free(struct fc_job *job);
/* Read the hit's tail into buf (block_size bytes). */
int file_cache_read_tail(const struct fc_hit *hit, uint8_t *buf);
/* Merge p into *inode (the tail's inode from the block processor).
 * Returns an SQFS_ERROR code or 0. */
int fc_patch_inode(sqfs_inode_generic_t **inode, const struct fc_patch *p);
int file_cache_commit(struct file_cache *fc, ingot_error *e);
void file_cache_stats(const struct file_cache *fc, struct file_cache_stats *st);
void file_cache_close(struct file_cache *fc);

/* Compaction, for `ingot store gc` (the store locked against builds):
 * rewrite the segments of one compressor's directory (STORE/files/<id>)
 * into one, keeping the entries keep() accepts, the older of two copies,
 * and nothing of a damaged segment; the old segments (and a .data left
 * without its .idx) are removed once the new one is in place, the
 * directory too when nothing is kept.  Entries' bytes are copied as they
 * are (their digests are checked when a build uses them).  Adds to *st;
 * dry_run counts without writing or removing anything. */
typedef bool (*file_cache_keep_fn)(void *ctx, const uint8_t sha256[32], uint64_t size);
/* A file-cache entry's key as text, "<sha256 hex>:<size>", for sets of them. */
#define FILE_CACHE_KEY_LEN (64 + 1 + 20 + 1)
void file_cache_key(const uint8_t sha256[32], uint64_t size, char key[FILE_CACHE_KEY_LEN]);
struct file_cache_gc_stats {
	uint64_t segments, damaged_segments;   /* read */
	uint64_t kept, removed;                /* entries */
	uint64_t bytes_before, bytes_after;
};
/* pfd/name: the directory (dir names it in messages), opened without
 * following a symlink; only its regular files are read or removed. */
int file_cache_compact(const struct store *s, int pfd, const char *name, const char *dir,
		       file_cache_keep_fn keep, void *ctx, bool dry_run, struct file_cache_gc_stats *st,
		       ingot_error *e);
#endif
