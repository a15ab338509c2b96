#include "builder/tree.h"

#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/idxmap.h"
#include "lib/imgpath.h"
#include "lib/xalloc.h"

void tree_init(struct tree *t)
{
	memset(t, 0, sizeof(*t));
}

static void entry_free(struct tree_entry *ent)
{
	free(ent->path);
	free(ent->target);
	free(ent->origin);
}

void tree_free(struct tree *t)
{
	for (size_t i = 0; i < t->n; i++)
		entry_free(&t->v[i]);
	free(t->v);
	idxmap_free(&t->index);
	tree_init(t);
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct tree_entry *)a)->path, ((const struct tree_entry *)b)->path);
}

static size_t entry_hash(const void *t, size_t i)
{
	return idxmap_hash_str(((const struct tree *)t)->v[i].path);
}

static bool entry_is(const void *t, size_t i, const void *path)
{
	return !strcmp(((const struct tree *)t)->v[i].path, path);
}

struct tree_entry *tree_find(struct tree *t, const char *path)
{
	size_t *slot = idxmap_find(&t->index, idxmap_hash_str(path), entry_is, t, path);
	return slot && *slot ? &t->v[*slot - 1] : NULL;
}

static void dup_entry(struct tree_entry *dst, const struct tree_entry *src)
{
	*dst = *src;
	/* A symlink's mode means nothing to Linux: mksquashfs, the kernel
	 * and every extractor give it 0777 whatever the archive claims, so
	 * the image and the manifest say so too (else `verify --root` on an
	 * extracted image sees every link "changed"). */
	if (dst->type == TREE_SYMLINK)
		dst->mode = 0777;
	dst->path = xstrdup(src->path);
	dst->target = src->target ? xstrdup(src->target) : NULL;
	dst->origin = xstrdup(src->origin ? src->origin : "?");
}

int tree_add(struct tree *t, const struct tree_entry *ent, bool replace, ingot_error *e)
{
	struct tree_entry *old;
	int r = imgpath_check_shape(ent->path, ent->origin ? ent->origin : "entry", e);
	if (r < 0)
		return r;
	old = tree_find(t, ent->path);
	if (old) {
		if (old->type == TREE_DIR && ent->type == TREE_DIR) {
			old->mode = ent->mode;
			old->uid = ent->uid;
			old->gid = ent->gid;
			old->implicit = false;
			return 0;
		}
		if (!replace)
			return ingot_fail(e, -EEXIST, "%s: path '%s' also written by '%s' (mark one artifact 'replace: true' to say which wins)",
					  ent->origin ? ent->origin : "?", ent->path, old->origin);
		struct tree_entry nw;
		dup_entry(&nw, ent);
		entry_free(old);
		*old = nw;
		return 0;
	}
	if (t->n == t->alloc) {
		size_t na = t->alloc ? t->alloc * 2 : 256;
		struct tree_entry *nv = xrealloc(t->v, na * sizeof(*nv));
		t->v = nv;
		t->alloc = na;
	}
	idxmap_reserve(&t->index, t->n, entry_hash, t);
	dup_entry(&t->v[t->n], ent);
	/* Its slot: the reserve may have moved the one tree_find saw. */
	*idxmap_find(&t->index, idxmap_hash_str(ent->path), entry_is, t, ent->path) = t->n + 1;
	t->n++;
	t->sorted = false;
	return 0;
}

int tree_finalize(struct tree *t, ingot_error *e)
{
	size_t n0 = t->n;
	int r;

	/* Walk up from every entry until an existing ancestor: creating the
	 * missing ones and refusing any ancestor that is not a directory
	 * (a file under a file, or a path through a symlink). */
	for (size_t i = 0; i < n0; i++) {
		_cleanup_free_ char *p = xstrdup(t->v[i].path);
		char *slash;
		while ((slash = strrchr(p, '/'))) {
			*slash = '\0';
			struct tree_entry *par = tree_find(t, p);
			if (par) {
				if (par->type != TREE_DIR)
					return ingot_fail(e, -ENOTDIR, "%s: '%s' goes through '%s', which is a %s from '%s', not a directory",
							  t->v[i].origin, t->v[i].path, p, tree_type_name(par->type), par->origin);
				break;
			}
			struct tree_entry d = { .path = p, .type = TREE_DIR, .mode = 0755,
						.origin = "implicit", .implicit = true };
			r = tree_add(t, &d, false, e);
			if (r < 0)
				return r;
		}
	}
	if (t->n) /* qsort(NULL, 0, ...) is undefined behaviour */
		qsort(t->v, t->n, sizeof(*t->v), cmp_entry);
	idxmap_rebuild(&t->index, t->n, entry_hash, t);
	t->sorted = true;
	return 0;
}

size_t tree_count(const struct tree *t, enum tree_type type)
{
	size_t c = 0;
	for (size_t i = 0; i < t->n; i++)
		c += t->v[i].type == type;
	return c;
}
