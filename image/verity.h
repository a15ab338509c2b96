/* dm-verity: building the hash tree, and the one image check (sha256,
 * size and the tree recomputed) that builder/ writes with and verify/,
 * audit/ and cli/ read with.  Format: docs/image.md. */
#ifndef INGOT_IMAGE_VERITY_H
#define INGOT_IMAGE_VERITY_H

#include <stdint.h>
#include <jansson.h>
#include "lib/err.h"
#include "manifest/typed.h"

struct verity_info {
	uint8_t root_hash[32];
	uint8_t salt[32];
	uint32_t salt_len;
	uint32_t data_block_size, hash_block_size;   /* 4096, 4096 */
	uint64_t data_blocks;
	uint64_t hash_offset;      /* veritysetup's --hash-offset: where the verity superblock
				    * sits in the hash file (0); the tree follows at 4096 */
	uint8_t uuid[16];          /* superblock UUID, verity_uuid_for_salt() */
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

/* What one read of an image gives. */
struct image_digest {
	uint8_t sha256[32];
	uint64_t size;
};

/* The one image check, one read: the image's sha256 and size into *got
 * and, with verity_path (may be NULL), the dm-verity tree recomputed: the
 * hash file's superblock must describe the image (version 1, sha256,
 * 4096-byte blocks, its block count), every stored hash block must equal
 * the recomputed one and the root must equal root_hash.  A regular file
 * is read whole; a block device (the image on a partition, longer than
 * the image) up to device_len bytes, the image's size.  -EBADMSG when
 * the data does not match; other codes when it could not be read. */
int verity_check(const char *image_path, const char *verity_path, const uint8_t root_hash[32],
		 uint64_t device_len, struct image_digest *got, ingot_error *e);

/* verity_check against a (checked) manifest's image.sha256, image.size
 * and verity.root_hash: -EBADMSG naming what differs. */
int image_check_manifest(const struct manifest *m, const char *image_path, const char *verity_path,
			 struct image_digest *got, ingot_error *e);

/* Superblock UUID for a salt: the first 16 bytes of
 * sha256("ingot-verity-uuid-v1\0" || salt), made an RFC 4122 version 4
 * UUID (so `veritysetup format --uuid=` accepts it). */
void verity_uuid_for_salt(const uint8_t *salt, uint32_t salt_len, uint8_t uuid[16]);
/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (lower case). */
void verity_uuid_string(const uint8_t uuid[16], char out[37]);

#endif
