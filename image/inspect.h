/* Reading a squashfs image back: every entry with its metadata and the
 * sha256 of each file's content, through libsquashfs' reader side.
 * Used by `ingot inspect` and to compare an image with its manifest. */
#ifndef INGOT_INSPECT_H
#define INGOT_INSPECT_H

#include <stdint.h>
#include <jansson.h>

#include "image/filetype.h"
#include "lib/err.h"

struct image_entry {
	const char *path;          /* absolute: "/usr/bin/x"; the root itself is not listed */
	enum tree_type type;
	uint32_t mode;             /* permission bits (07777) */
	uint32_t uid, gid;
	uint32_t mtime;
	uint32_t nlink;
	uint64_t size;             /* files: content length; others 0 */
	uint8_t sha256[32];        /* files: content digest; others zero */
	const char *target;        /* symlinks: link target; others NULL */
	uint32_t rdev_major, rdev_minor; /* char/block devices */
};

struct image_summary {
	const char *compression;   /* "zstd", ... (static string) */
	uint32_t block_size;
	uint32_t mtime;            /* superblock modification time */
	uint32_t inodes;
	uint64_t bytes_used;       /* squashfs size before padding */
	uint64_t file_size;        /* image file size */
	uint32_t root_mode;        /* permission bits of "/" */
	uint32_t root_uid, root_gid;
};

/* Called once per entry, in byte order of path (the manifest's order).
 * A negative return stops the listing and is returned by image_list. */
typedef int (*image_list_fn)(const struct image_entry *ent, void *user, ingot_error *e);

/* Open the image at path, read its superblock, tables and directory tree,
 * hash every file's content and call fn for each entry.  sum (optional)
 * gets the image-wide facts.  A truncated or corrupted image fails with
 * one line: "IMAGE: corrupted inode table: ...". */
int image_list(const char *path, image_list_fn fn, void *user, struct image_summary *sum,
	       ingot_error *e);

/* One entry in the shape of a manifest "files" item, plus "mtime" and,
 * for devices, "major"/"minor" (new reference; NULL if out of memory or
 * a string is not UTF-8). */
json_t *image_entry_to_json(const struct image_entry *ent);

/* ls(1)-style "drwxr-xr-x" for type and mode; out holds 11 bytes. */
void image_mode_string(enum tree_type type, uint32_t mode, char out[11]);

#endif
