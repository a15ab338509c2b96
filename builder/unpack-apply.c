/* Applying the recipe's view of an artifact to the image tree (see
 * unpack.h, stage 2). */
#include "builder/unpack.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/escape.h"
#include "lib/fileio.h"
#include "lib/imgpath.h"
#include "lib/xalloc.h"

bool unpack_glob_match(const char *pattern, const char *path)
{
	_cleanup_free_ char *p = xstrdup(path);
	char *slash;

	for (;;) {
		if (fnmatch(pattern, p, 0) == 0)
			return true;
		slash = strrchr(p, '/');
		if (!slash)
			return false;
		*slash = '\0';
	}
}

/* Refuse an entry whose parent (or any ancestor) is already in the tree
 * as something other than a directory, e.g. a symlink: writing through
 * it would put the file somewhere the recipe does not say. */
static int check_ancestors(const struct artifact *a, struct tree *t, const char *path, const char *raw, ingot_error *e)
{
	_cleanup_free_ char *p = xstrdup(path);
	char *slash;

	while ((slash = strrchr(p, '/'))) {
		struct tree_entry *par;
		*slash = '\0';
		par = tree_find(t, p);
		if (!par)
			continue;
		if (par->type == TREE_DIR)
			return 0;
		return ingot_fail(e, -ENOTDIR, "%s: archive entry '%s': path goes through '/%s', which is a %s from '%s', not a directory",
				  a->name, raw, p, tree_type_name(par->type), par->origin);
	}
	return 0;
}

/* Strip n leading components; NULL when nothing is left. */
static const char *strip(const char *path, unsigned n)
{
	while (n--) {
		const char *s = strchr(path, '/');
		if (!s)
			return NULL;
		path = s + 1;
	}
	return path;
}

int unpack_apply(const struct artifact *a, const struct tree *listing, struct tree *t, ingot_error *e)
{
	size_t added = 0;

	for (size_t i = 0; i < listing->n; i++) {
		const struct tree_entry *src = &listing->v[i];
		struct tree_entry ent = *src;
		_cleanup_free_ char *img = NULL;
		const char *rel = src->path;
		struct tree_entry *old;
		ingot_error sub = { 0 };
		int r;

		if (a->kind != ART_FILE) {
			bool keep = a->n_include == 0;
			rel = strip(src->path, a->strip_components);
			if (!rel)
				continue;
			for (size_t j = 0; j < a->n_include && !keep; j++)
				keep = unpack_glob_match(a->include[j], rel);
			for (size_t j = 0; j < a->n_exclude && keep; j++)
				keep = !unpack_glob_match(a->exclude[j], rel);
			if (!keep)
				continue;
			img = a->dest && *a->dest ? path_join(a->dest, rel) : xstrdup(rel);
			if (!img)
				return ingot_fail(e, -ENOMEM, "out of memory");
			ent.path = img;
		}
		if ((ent.type == TREE_CHR || ent.type == TREE_BLK) && !a->allow_devices)
			return ingot_fail(e, -EPERM, "%s: archive entry '%s': expected no device nodes, got a %s device %u:%u (set 'allow-devices: true' to allow)",
					  a->name, src->path, ent.type == TREE_CHR ? "character" : "block",
					  ent.rdev_major, ent.rdev_minor);
		ent.uid = ent.gid = 0;
		ent.origin = (char *)a->name;
		for (size_t j = 0; j < a->n_modes; j++) {
			const struct mode_override *m = &a->modes[j];
			if (fnmatch(m->glob, ent.path, 0) != 0)
				continue;
			if (m->mode >= 0)
				ent.mode = (uint32_t)m->mode;
			if (m->uid >= 0)
				ent.uid = (uint32_t)m->uid;
			if (m->gid >= 0)
				ent.gid = (uint32_t)m->gid;
		}
		if ((r = check_ancestors(a, t, ent.path, src->path, e)) < 0)
			return r;
		old = tree_find(t, ent.path);
		if (old && old->origin && !strcmp(old->origin, a->name) &&
		    !(old->type == TREE_DIR && ent.type == TREE_DIR))
			return ingot_fail(e, -EEXIST, "%s: archive entry '%s': expected each image path once, got '/%s' twice (after strip-components)",
					  a->name, src->path, ent.path);
		if (tree_add(t, &ent, a->replace, &sub) < 0)
			return ingot_fail(e, sub.code, "%s", sub.msg);
		added++;
	}
	/* An artifact that adds nothing is a mistake (an empty archive, or a
	 * strip-components/include/exclude typo), not a silent no-op. */
	if (!added)
		return ingot_fail(e, -ENODATA, "%s: %s: expected at least one entry in the image, got none (%s)",
				  a->name, a->source ? a->source : "",
				  listing->n ? "strip-components/include/exclude drop every entry" : "the archive is empty");
	return 0;
}
