/* The staging tree: every entry of the future image, metadata only.
 * File contents live in the content-addressed store (see store.h) and
 * are referenced by their sha256, so memory stays proportional to the
 * file count, not the image size. */
#ifndef INGOT_TREE_H
#define INGOT_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "builder/store.h"
#include "image/filetype.h"
#include "lib/idxmap.h"
#include "lib/err.h"

struct tree_entry {
	char *path;          /* relative, no leading or trailing '/', never "" */
	enum tree_type type;
	uint32_t mode;       /* permission bits only (07777) */
	uint32_t uid, gid;
	uint64_t size;       /* TREE_FILE: content length */
	uint8_t sha256[32];  /* TREE_FILE: content digest */
	struct store_loc loc; /* TREE_FILE: where the store keeps the bytes */
	char *target;        /* TREE_SYMLINK: link target */
	uint32_t rdev_major, rdev_minor; /* TREE_CHR / TREE_BLK */
	char *origin;        /* who created it: artifact name, "files", "directories", ... */
	bool implicit;       /* parent directory created by tree_finalize */
};

struct tree {
	struct tree_entry *v;
	size_t n, alloc;
	bool sorted;
	/* path -> position in v, so tree_add/tree_find stay O(1) on
	 * images with 100k+ entries.  Private to tree.c. */
	struct idxmap index;
};

void tree_init(struct tree *t);
void tree_free(struct tree *t);

/* Add an entry (strings copied).  A second entry at the same path is an
 * error naming both origins, unless replace is set, in which case the
 * new entry replaces the old one (recipe said which artifact wins). A
 * directory added over an implicit or explicit directory merges (the
 * later mode wins). */
int tree_add(struct tree *t, const struct tree_entry *ent, bool replace, ingot_error *e);

/* Find an entry by path (works before and after finalize). */
struct tree_entry *tree_find(struct tree *t, const char *path);

/* Create missing parent directories (mode 0755, uid/gid 0), refuse any
 * path whose parent is not a directory (e.g. a file under a symlink),
 * and sort entries by byte order of their path (strcmp).  After this,
 * t->v is in the order the image writer and manifest use. */
int tree_finalize(struct tree *t, ingot_error *e);

/* Entry count of each type, for summaries. */
size_t tree_count(const struct tree *t, enum tree_type type);


#endif
