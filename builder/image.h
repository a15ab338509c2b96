/* Squashfs image writer (libsquashfs) and dm-verity hash tree. */
#ifndef INGOT_IMAGE_H
#define INGOT_IMAGE_H

#include <stdint.h>
#include "lib/err.h"

struct tree;
struct store;

struct image_opts {
	const char *compression;  /* "zstd", "xz", "gzip", ... */
	int level;                /* 0 = default */
	uint32_t block_size;
	unsigned workers;         /* compression threads; output must not depend on it */
	uint64_t mtime;           /* every inode and the superblock */
};

struct image_info {
	uint64_t size;            /* bytes written, padded to 4096 */
	uint64_t inodes;
};

/* Write a squashfs image of the finalized tree into fd (positioned at 0,
 * empty).  File data is streamed from the store.  name is for messages. */
int image_write(const struct tree *t, const struct store *s, const struct image_opts *o,
		int fd, const char *name, struct image_info *info, ingot_error *e);

struct verity_info {
	uint8_t root_hash[32];
	uint8_t salt[32];
	uint32_t salt_len;
	uint32_t data_block_size, hash_block_size;   /* 4096, 4096 */
	uint64_t data_blocks;
	uint64_t hash_offset;      /* offset of the tree in the hash file (4096: after superblock) */
	uint8_t uuid[16];          /* superblock UUID, derived from the salt */
	uint8_t image_sha256[32];  /* computed in the same read pass */
	uint64_t image_size;
};

/* One read pass over image_fd: its sha256 and the dm-verity hash tree
 * (superblock format version 1, sha256), written to verity_fd.  The
 * image must already be a multiple of 4096 bytes. */
int verity_build(int image_fd, const char *image_name, int verity_fd, const char *verity_name,
		 const uint8_t *salt, uint32_t salt_len, struct verity_info *out, ingot_error *e);

/* Deterministic salt for a recipe: sha256("ingot-verity-salt-v1\0" || recipe sha256). */
void verity_salt_for_recipe(const uint8_t recipe_sha256[32], uint8_t salt[32]);

/* Recompute root hash of image+hash file and compare (for verify/audit). */
int verity_check(const char *image_path, const char *verity_path, const uint8_t root_hash[32],
		 ingot_error *e);

#endif
