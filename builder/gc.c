/* Store garbage collection (see gc.h). */
#include "builder/gc.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builder/build.h"
#include "builder/filecache.h"
#include "builder/store.h"
#include "builder/tree.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/strmap.h"
#include "recipes/recipe.h"

struct keep {
	struct strmap pins;     /* artifact sha256 hex */
	struct strmap blobs;    /* file sha256 hex */
	struct strmap files;    /* "<sha256 hex>:<size>" */
};

/* A set: the value only says "present" (strmap_get's NULL is "absent"). */
static int put(struct strmap *m, const char *key)
{
	void **v = strmap_put(m, key, NULL);
	if (!v)
		return -ENOMEM;
	*v = m;
	return 0;
}

/* What a build of the recipe uses: its staging tree, as ingot build makes
 * it (an artifact not in the store yet is unpacked into it). */
static int mark_recipe(const struct store_gc_opts *o, struct store *s, const char *path,
		       struct keep *k, ingot_error *e)
{
	struct recipe *r = NULL;
	struct tree t;
	size_t cached;
	char key[FILE_CACHE_KEY_LEN];
	int rc;

	if ((rc = recipe_load(path, o->source_date_epoch, &r, e)) < 0)
		return rc;
	if ((rc = build_stage_tree(r, s, o->workers, NULL, NULL, NULL, &t, &cached, NULL, e)) < 0) {
		recipe_free(r);
		return ingot_prefix(e, "store gc: %s", path);
	}
	/* file artifacts are blobs named by their pin */
	for (size_t i = 0; rc >= 0 && i < r->n_artifacts; i++) {
		hex_encode(r->artifacts[i].sha256, 32, key);
		if ((rc = put(&k->pins, key)) >= 0)
			rc = put(&k->blobs, key);
	}
	for (size_t i = 0; rc >= 0 && i < t.n; i++) {
		const struct tree_entry *te = &t.v[i];
		if (te->type != TREE_FILE)
			continue;
		hex_encode(te->sha256, 32, key);
		if ((rc = put(&k->blobs, key)) >= 0) {
			file_cache_key(te->sha256, te->size, key);
			rc = put(&k->files, key);
		}
	}
	tree_free(&t);
	recipe_free(r);
	return rc < 0 ? ingot_fail(e, rc, "out of memory") : 0;
}

static bool keep_file(void *ctx, const uint8_t sha256[32], uint64_t size)
{
	const struct keep *k = ctx;
	char key[FILE_CACHE_KEY_LEN];
	file_cache_key(sha256, size, key);
	return strmap_get(&k->files, key) != NULL;
}

/* Every regular file under dir (and its subdirectories with fanout) whose
 * name starts with a sha256 in want is kept, the rest removed; names
 * ending in count (after the 64 hex digits) are counted. */
static int sweep(const char *dir, bool fanout, const struct strmap *want, const char *count,
		 bool dry_run, uint64_t *kept, uint64_t *removed, struct store_gc_stats *st, ingot_error *e)
{
	struct dirent **names = NULL;
	int n = scandir(dir, &names, NULL, alphasort), r = 0;

	if (n < 0)
		return errno == ENOENT ? 0 : ingot_fail(e, -errno, "%s: %s", dir, strerror(errno));
	for (int i = 0; i < n; i++) {
		const char *d = names[i]->d_name;
		_cleanup_free_ char *p = NULL;
		struct stat sb;
		char key[SHA256_HEX_LEN + 1] = "";
		bool hex, keep;

		/* store names start with the sha256 they are kept under */
		if (strlen(d) >= SHA256_HEX_LEN)
			memcpy(key, d, SHA256_HEX_LEN);
		key[SHA256_HEX_LEN] = 0;
		hex = is_sha256_hex(key);

		if (!strcmp(d, ".") || !strcmp(d, "..") || r < 0)
			goto next;
		if (asprintf(&p, "%s/%s", dir, d) < 0) {
			r = ingot_fail(e, -ENOMEM, "out of memory");
			goto next;
		}
		if (lstat(p, &sb) < 0)
			goto next;
		if (fanout && S_ISDIR(sb.st_mode)) {
			r = sweep(p, false, want, count, dry_run, kept, removed, st, e);
			if (!dry_run)
				rmdir(p);       /* only if empty */
			goto next;
		}
		keep = hex && strmap_get(want, key);
		st->bytes_before += (uint64_t)sb.st_size;
		if (keep)
			st->bytes_after += (uint64_t)sb.st_size;
		else if (!dry_run)
			unlink(p);
		if (hex && !strcmp(d + SHA256_HEX_LEN, count))
			(*(keep ? kept : removed))++;
next:
		free(names[i]);
	}
	free(names);
	return r;
}

/* Files under STORE/<sub>/<compressor id>/: compacted (files) or removed (blocks). */
static int sweep_caches(struct store *s, const struct store_gc_opts *o, struct keep *k,
			struct store_gc_stats *st, ingot_error *e)
{
	_cleanup_free_ char *files = path_join(s->root, "files"), *blocks = path_join(s->root, "blocks");
	struct file_cache_gc_stats fs = { 0 };
	struct dirent **names = NULL;
	int n, r = 0;

	if (!files || !blocks)
		return ingot_fail(e, -ENOMEM, "out of memory");
	n = scandir(files, &names, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		_cleanup_free_ char *dir = NULL;
		struct stat sb;
		if (r >= 0 && names[i]->d_name[0] != '.' && asprintf(&dir, "%s/%s", files, names[i]->d_name) >= 0 &&
		    lstat(dir, &sb) == 0) {
			if (S_ISDIR(sb.st_mode))
				r = file_cache_compact(s, dir, keep_file, k, o->dry_run, &fs, e);
			else if (!o->dry_run)
				unlink(dir);    /* not the cache's: a stray file never stops gc */
		}
		free(names[i]);
	}
	free(names);
	names = NULL;
	if (r < 0)
		return r;
	st->files_kept = fs.kept;
	st->files_removed = fs.removed;
	st->file_segments = fs.segments;
	st->file_segments_damaged = fs.damaged_segments;
	st->bytes_before += fs.bytes_before;
	st->bytes_after += fs.bytes_after;

	n = scandir(blocks, &names, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		_cleanup_free_ char *dir = NULL;
		struct dirent **segs = NULL;
		int m;
		if (names[i]->d_name[0] == '.' || asprintf(&dir, "%s/%s", blocks, names[i]->d_name) < 0)
			goto next;
		m = scandir(dir, &segs, NULL, alphasort);
		for (int j = 0; j < m; j++) {
			_cleanup_free_ char *p = NULL;
			struct stat sb;
			size_t l = strlen(segs[j]->d_name);
			if (segs[j]->d_name[0] != '.' && asprintf(&p, "%s/%s", dir, segs[j]->d_name) >= 0 &&
			    lstat(p, &sb) == 0 && S_ISREG(sb.st_mode)) {
				st->bytes_before += (uint64_t)sb.st_size;
				if (l > 4 && !strcmp(segs[j]->d_name + l - 4, ".idx"))
					st->block_segments_removed++;
				if (!o->dry_run)
					unlink(p);
			}
			free(segs[j]);
		}
		free(segs);
		if (!o->dry_run)
			rmdir(dir);
next:
		free(names[i]);
	}
	free(names);
	return 0;
}

int store_gc(const struct store_gc_opts *o, struct store_gc_stats *st, ingot_error *e)
{
	struct keep k = { STRMAP_INIT, STRMAP_INIT, STRMAP_INIT };
	struct store s = { 0 };
	_cleanup_free_ char *unpacked = NULL, *blobs = NULL;
	int r;

	memset(st, 0, sizeof(*st));
	if (!o->n_recipes)
		return ingot_fail(e, -EINVAL, "store gc: expected at least one recipe to keep");
	if ((r = store_open(&s, o->store, e)) < 0)
		return r;
	if ((r = store_lock_exclusive(&s, e)) < 0)
		goto out;
	/* every recipe resolved before anything is removed */
	for (size_t i = 0; i < o->n_recipes && r >= 0; i++)
		r = mark_recipe(o, &s, o->recipes[i], &k, e);
	if (r < 0)
		goto out;
	if (!(unpacked = path_join(s.root, "unpacked")) || !(blobs = path_join(s.root, "blobs"))) {
		r = ingot_fail(e, -ENOMEM, "out of memory");
		goto out;
	}
	/* an artifact's listing marks its pack complete: counted by listing */
	if ((r = sweep(unpacked, false, &k.pins, ".jsonl", o->dry_run, &st->artifacts_kept,
		       &st->artifacts_removed, st, e)) < 0 ||
	    (r = sweep(blobs, true, &k.blobs, "", o->dry_run, &st->blobs_kept, &st->blobs_removed, st, e)) < 0)
		goto out;
	r = sweep_caches(&s, o, &k, st, e);
out:
	strmap_free(&k.pins, NULL);
	strmap_free(&k.blobs, NULL);
	strmap_free(&k.files, NULL);
	store_close(&s);
	return r;
}
