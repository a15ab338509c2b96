/* Store garbage collection (see gc.h). */
#include "builder/gc.h"

#include <errno.h>
#include <fcntl.h>
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
#include "lib/xalloc.h"
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

/* An entry gc neither follows nor removes: not a regular file, nor a
 * directory where the layout has one.  Nothing outside the store may be
 * removed, whatever the store holds: a symlink planted in it is never
 * followed (every walk goes through directory fds, open_dir_at) and is
 * left for its owner, reported. */
static void skip(struct store_gc_stats *st, const char *dir, const char *name, const struct stat *sb)
{
	if (!st->skipped++)
		st->skipped_first = xasprintf("%s/%s: a %s", dir, name, file_type_name(sb->st_mode));
}

/* parent/name as a directory fd and its sorted entries: 0 (and *fd -1)
 * when absent or not a directory (then skipped), -errno on error. */
static int sub_list(int pfd, const char *parent, const char *name, int *fd, char ***names, size_t *n,
		    struct store_gc_stats *st, ingot_error *e)
{
	struct stat sb;
	int r;

	*names = NULL;
	*n = 0;
	*fd = open_dir_at(pfd, name, &sb);
	if (*fd == -ENOTDIR)
		skip(st, parent, name, &sb);
	if (*fd == -ENOENT || *fd == -ENOTDIR)
		return 0;
	if (*fd < 0)
		return ingot_fail(e, *fd, "%s/%s: %s", parent, name, strerror(-*fd));
	if ((r = dir_names_at(*fd, names, n)) < 0)
		return ingot_fail(e, r, "%s/%s: %s", parent, name, strerror(-r));
	return 0;
}

/* Every regular file in dir/name (and its subdirectories with fanout)
 * whose name starts with a sha256 in want is kept, the rest removed;
 * names ending in count (after the 64 hex digits) are counted. */
static int sweep(int pfd, const char *parent, const char *name, bool fanout, const struct strmap *want,
		 const char *count, bool dry_run, uint64_t *kept, uint64_t *removed,
		 struct store_gc_stats *st, ingot_error *e)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *dir = xasprintf("%s/%s", parent, name);
	char **names = NULL;
	size_t n = 0;
	int r;

	if ((r = sub_list(pfd, parent, name, &fd, &names, &n, st, e)) < 0 || fd < 0)
		return r;
	for (size_t i = 0; i < n && r >= 0; i++) {
		const char *d = names[i];
		struct stat sb;
		char key[SHA256_HEX_LEN + 1] = "";
		bool hex, keep;

		/* store names start with the sha256 they are kept under */
		if (strlen(d) >= SHA256_HEX_LEN)
			memcpy(key, d, SHA256_HEX_LEN);
		key[SHA256_HEX_LEN] = 0;
		hex = is_sha256_hex(key);
		if (fstatat(fd, d, &sb, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (fanout && S_ISDIR(sb.st_mode)) {
			r = sweep(fd, dir, d, false, want, count, dry_run, kept, removed, st, e);
			if (!dry_run)
				unlinkat(fd, d, AT_REMOVEDIR);       /* only if empty */
			continue;
		}
		if (!S_ISREG(sb.st_mode)) {
			skip(st, dir, d, &sb);
			continue;
		}
		keep = hex && strmap_get(want, key);
		st->bytes_before += (uint64_t)sb.st_size;
		if (keep)
			st->bytes_after += (uint64_t)sb.st_size;
		else if (!dry_run)
			unlinkat(fd, d, 0);
		if (hex && !strcmp(d + SHA256_HEX_LEN, count))
			(*(keep ? kept : removed))++;
	}
	dir_names_free(names, n);
	return r;
}

/* The entries of a cache directory that are not regular files (the file
 * cache only ever opens or removes regular files). */
static void skip_strays(int fd, const char *dir, struct store_gc_stats *st)
{
	char **names = NULL;
	size_t n = 0;

	dir_names_at(fd, &names, &n);
	for (size_t i = 0; i < n; i++) {
		struct stat sb;
		if (fstatat(fd, names[i], &sb, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(sb.st_mode))
			skip(st, dir, names[i], &sb);
	}
	dir_names_free(names, n);
}

/* STORE/files/<compressor id>/: compacted. */
static int sweep_files(int rfd, struct store *s, const struct store_gc_opts *o, struct keep *k,
		       struct store_gc_stats *st, ingot_error *e)
{
	_cleanup_free_ char *files = path_join(s->root, "files");
	_cleanup_close_ int fd = -1;
	struct file_cache_gc_stats fs = { 0 };
	char **names = NULL;
	size_t n = 0;
	int r;

	if ((r = sub_list(rfd, s->root, "files", &fd, &names, &n, st, e)) < 0 || fd < 0)
		return r;
	for (size_t i = 0; i < n && r >= 0; i++) {
		_cleanup_free_ char *dir = xasprintf("%s/%s", files, names[i]);
		_cleanup_close_ int cfd = -1;
		struct stat sb;
		if (names[i][0] == '.')
			continue;
		cfd = open_dir_at(fd, names[i], &sb);
		if (cfd >= 0) {
			skip_strays(cfd, dir, st);
			r = file_cache_compact(s, fd, names[i], dir, keep_file, k, o->dry_run, &fs, e);
		} else if (cfd == -ENOTDIR && S_ISREG(sb.st_mode)) {
			if (!o->dry_run)
				unlinkat(fd, names[i], 0);   /* not the cache's: a stray file never stops gc */
		} else if (cfd == -ENOTDIR) {
			skip(st, files, names[i], &sb);
		}
	}
	dir_names_free(names, n);
	if (r < 0)
		return r;
	st->files_kept = fs.kept;
	st->files_removed = fs.removed;
	st->file_segments = fs.segments;
	st->file_segments_damaged = fs.damaged_segments;
	st->bytes_before += fs.bytes_before;
	st->bytes_after += fs.bytes_after;
	return 0;
}

/* STORE/blocks/<compressor id>/: removed whole. */
static int sweep_blocks(int rfd, struct store *s, const struct store_gc_opts *o, struct store_gc_stats *st,
			ingot_error *e)
{
	_cleanup_free_ char *blocks = path_join(s->root, "blocks");
	_cleanup_close_ int fd = -1;
	char **names = NULL;
	size_t n = 0;
	int r;

	if ((r = sub_list(rfd, s->root, "blocks", &fd, &names, &n, st, e)) < 0 || fd < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *dir = xasprintf("%s/%s", blocks, names[i]);
		_cleanup_close_ int cfd = -1;
		char **segs = NULL;
		size_t m = 0;
		struct stat sb;
		if (names[i][0] == '.' ||
		    sub_list(fd, blocks, names[i], &cfd, &segs, &m, st, &(ingot_error){ 0 }) < 0 || cfd < 0)
			continue;
		for (size_t j = 0; j < m; j++) {
			size_t l = strlen(segs[j]);
			if (segs[j][0] == '.' || fstatat(cfd, segs[j], &sb, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			if (!S_ISREG(sb.st_mode)) {
				skip(st, dir, segs[j], &sb);
				continue;
			}
			st->bytes_before += (uint64_t)sb.st_size;
			if (l > 4 && !strcmp(segs[j] + l - 4, ".idx"))
				st->block_segments_removed++;
			if (!o->dry_run)
				unlinkat(cfd, segs[j], 0);
		}
		dir_names_free(segs, m);
		if (!o->dry_run)
			unlinkat(fd, names[i], AT_REMOVEDIR);   /* only if empty */
	}
	dir_names_free(names, n);
	return 0;
}

void store_gc_stats_free(struct store_gc_stats *st)
{
	free(st->skipped_first);
	st->skipped_first = NULL;
}

int store_gc(const struct store_gc_opts *o, struct store_gc_stats *st, ingot_error *e)
{
	struct keep k = { STRMAP_INIT, STRMAP_INIT, STRMAP_INIT };
	struct store s = { 0 };
	_cleanup_close_ int rfd = -1;
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
	/* every walk from a directory fd, never through a symlink */
	if ((rfd = open(s.root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		r = ingot_fail(e, -errno, "%s: %s", s.root, strerror(errno));
		goto out;
	}
	/* an artifact's listing marks its pack complete: counted by listing */
	if ((r = sweep(rfd, s.root, "unpacked", false, &k.pins, ".jsonl", o->dry_run, &st->artifacts_kept,
		       &st->artifacts_removed, st, e)) < 0 ||
	    (r = sweep(rfd, s.root, "blobs", true, &k.blobs, "", o->dry_run, &st->blobs_kept,
		       &st->blobs_removed, st, e)) < 0 ||
	    (r = sweep_files(rfd, &s, o, &k, st, e)) < 0)
		goto out;
	r = sweep_blocks(rfd, &s, o, st, e);
out:
	strmap_free(&k.pins, NULL);
	strmap_free(&k.blobs, NULL);
	strmap_free(&k.files, NULL);
	store_close(&s);
	return r;
}
