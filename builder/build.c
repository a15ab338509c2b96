#include "builder/build.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builder/image.h"
#include "builder/kabi-check.h"
#include "builder/manifest.h"
#include "builder/sbom.h"
#include "builder/store.h"
#include "builder/tree.h"
#include "builder/tuple-check.h"
#include "builder/uki.h"
#include "builder/unpack.h"
#include "keys/envelope.h"
#include "keys/key.h"
#include "manifest/dsse.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/xalloc.h"
#include "recipes/lint.h"
#include "recipes/recipe.h"

#define OUT_MODE 0644

/* --- stage 1 in parallel: import + list every artifact ---------------- */

struct job {
	struct tree listing;
	struct unpack_stats st;
	ingot_error err;
	int rc;
	bool done;
};

struct pool {
	const struct recipe *r;
	struct store *s;
	struct job *jobs;
	size_t *order;           /* job indices, largest source first */
	size_t next, completed;
	size_t first_bad;        /* lowest failed index, SIZE_MAX if none */
	struct unpack_limits lim;
	pthread_mutex_t lock;
	build_progress_fn progress;
	void *progress_ctx;
};

static void run_job(struct pool *p, size_t i)
{
	struct job *j = &p->jobs[i];

	j->rc = unpack_list(p->s, &p->r->artifacts[i], &p->lim, &j->listing, &j->st, &j->err);
	if (j->rc >= 0)
		sbom_note_copyright(&j->listing, &j->st);
	j->done = true;
}

static void *worker(void *arg)
{
	struct pool *p = arg;
	for (;;) {
		size_t i;
		pthread_mutex_lock(&p->lock);
		/* After a failure, only artifacts before it still matter: the
		 * error reported must be the first in recipe order, whichever
		 * thread finished first. */
		do {
			if (p->next >= p->r->n_artifacts) {
				pthread_mutex_unlock(&p->lock);
				return NULL;
			}
			i = p->order[p->next++];
		} while (i > p->first_bad);
		pthread_mutex_unlock(&p->lock);

		run_job(p, i);

		pthread_mutex_lock(&p->lock);
		p->completed++;
		if (p->jobs[i].rc < 0) {
			if (i < p->first_bad)
				p->first_bad = i;
		} else if (p->progress) {
			p->progress(p->progress_ctx, p->completed, p->r->n_artifacts, p->r->artifacts[i].name,
				    p->jobs[i].st.bytes, p->jobs[i].st.cached);
		}
		pthread_mutex_unlock(&p->lock);
	}
}

/* Longest first: the biggest artifact (a CUDA toolkit next to a few
 * small packages) starts at once instead of last, which would leave one
 * worker decompressing it alone.  Sizes of the sources as they are now;
 * only the schedule depends on them, never the result. */
static void schedule(struct pool *p)
{
	size_t n = p->r->n_artifacts;
	_cleanup_free_ uint64_t *size = xcalloc(n + 1, sizeof(*size));

	p->order = xcalloc(n + 1, sizeof(*p->order));
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		size[i] = stat(p->r->artifacts[i].path, &st) == 0 ? (uint64_t)st.st_size : 0;
		p->order[i] = i;
	}
	for (size_t i = 1; i < n; i++)   /* insertion sort: stable, n is small */
		for (size_t j = i; j > 0 && size[p->order[j]] > size[p->order[j - 1]]; j--) {
			size_t t = p->order[j];
			p->order[j] = p->order[j - 1];
			p->order[j - 1] = t;
		}
}

static int list_artifacts(struct pool *p, unsigned workers, ingot_error *e)
{
	size_t n = p->r->n_artifacts;
	pthread_t tids[64];
	unsigned started = 0;

	schedule(p);

	if (workers < 1)
		workers = 1;
	if (workers > ARRAY_SIZE(tids))
		workers = ARRAY_SIZE(tids);
	if (workers > n)
		workers = (unsigned)n;
	if (pthread_mutex_init(&p->lock, NULL))
		return ingot_fail(e, -ENOMEM, "cannot create a mutex");
	if (workers <= 1) {
		worker(p);
	} else {
		for (; started < workers; started++)
			if (pthread_create(&tids[started], NULL, worker, p))
				break;
		if (started == 0)
			worker(p);
		for (unsigned i = 0; i < started; i++)
			pthread_join(tids[i], NULL);
	}
	pthread_mutex_destroy(&p->lock);
	/* Report the first failure in recipe order, whatever finished first. */
	for (size_t i = 0; i < n; i++)
		if (p->jobs[i].done && p->jobs[i].rc < 0) {
			*e = p->jobs[i].err;
			return p->jobs[i].rc;
		}
	return 0;
}

/* --- inline entries --------------------------------------------------- */

static int add_inline(const struct recipe *r, struct store *s, struct tree *t, ingot_error *e)
{
	int rc;

	for (size_t i = 0; i < r->n_files; i++) {
		const struct inline_file *f = &r->files[i];
		struct tree_entry ent = { .path = f->path, .type = TREE_FILE, .mode = f->mode,
					  .uid = f->uid, .gid = f->gid, .origin = "files",
					  .loc.fresh = true };   /* hashed by store_writer */
		struct store_writer w;
		if ((rc = store_writer_begin(s, &w, e)) < 0)
			return rc;
		if ((rc = store_writer_write(&w, f->content, f->len, e)) < 0) {
			store_writer_abort(&w);
			return rc;
		}
		if ((rc = store_writer_commit(&w, ent.sha256, &ent.size, e)) < 0)
			return rc;
		if ((rc = tree_add(t, &ent, false, e)) < 0)
			return ingot_prefix(e, "%s:%zu:%zu: files[%zu]", r->file, f->line, f->column, i);
	}
	for (size_t i = 0; i < r->n_dirs; i++) {
		const struct recipe_dir *d = &r->dirs[i];
		struct tree_entry ent = { .path = d->path, .type = TREE_DIR, .mode = d->mode,
					  .uid = d->uid, .gid = d->gid, .origin = "directories" };
		if ((rc = tree_add(t, &ent, false, e)) < 0)
			return ingot_prefix(e, "%s:%zu:%zu: directories[%zu]", r->file, d->line, d->column, i);
	}
	for (size_t i = 0; i < r->n_symlinks; i++) {
		const struct recipe_symlink *l = &r->symlinks[i];
		struct tree_entry ent = { .path = l->path, .type = TREE_SYMLINK, .mode = 0777,
					  .target = l->target, .origin = "symlinks" };
		if ((rc = tree_add(t, &ent, false, e)) < 0)
			return ingot_prefix(e, "%s:%zu:%zu: symlinks[%zu]", r->file, l->line, l->column, i);
	}
	return 0;
}

/* Each artifact is bounded while it unpacks; the image, all artifacts
 * together, here, in recipe order (the same answer with any worker count). */
static int check_total_bytes(const struct recipe *r, const struct pool *p, ingot_error *e)
{
	uint64_t total = 0;

	for (size_t i = 0; i < r->n_artifacts; i++) {
		uint64_t b = p->jobs[i].st.bytes;
		if (b > p->lim.bytes - total)
			return ingot_fail(e, -EFBIG, "%s: %s: expected at most %llu unpacked bytes in the image, got %llu with this artifact (a limit against archive bombs: --max-unpacked-bytes or max-unpacked-bytes:)",
					  r->artifacts[i].name, r->artifacts[i].source,
					  (unsigned long long)p->lim.bytes, (unsigned long long)(total + b));
		total += b;
	}
	return 0;
}

int build_stage_tree(const struct recipe *r, struct store *s, unsigned workers,
		     const struct unpack_limits *lim, build_progress_fn progress, void *progress_ctx,
		     struct tree *t, size_t *cached, struct unpack_stats *stats, ingot_error *e)
{
	struct pool p = { .r = r, .s = s, .progress = progress, .progress_ctx = progress_ctx,
			  .first_bad = SIZE_MAX };
	int rc;

	if (lim)
		p.lim = *lim;
	if (!p.lim.entries)
		p.lim.entries = UNPACK_MAX_ENTRIES;
	if (!p.lim.bytes)
		p.lim.bytes = r->max_unpacked_bytes ? r->max_unpacked_bytes : UNPACK_MAX_BYTES;

	tree_init(t);
	*cached = 0;
	p.jobs = xcalloc(r->n_artifacts + 1, sizeof(*p.jobs));
	rc = list_artifacts(&p, workers, e);
	if (rc >= 0)
		rc = check_total_bytes(r, &p, e);
	/* Stage 2 runs in recipe order, so which artifact wins a path (and
	 * every error) is the same with any number of workers. */
	for (size_t i = 0; rc >= 0 && i < r->n_artifacts; i++) {
		*cached += p.jobs[i].st.cached;
		if (stats)
			stats[i] = p.jobs[i].st;
		rc = unpack_apply(&r->artifacts[i], &p.jobs[i].listing, t, e);
	}
	for (size_t i = 0; i < r->n_artifacts; i++)
		tree_free(&p.jobs[i].listing);
	free(p.jobs);
	free(p.order);
	if (rc >= 0)
		rc = add_inline(r, s, t, e);
	if (rc >= 0)
		rc = tree_finalize(t, e);
	if (rc < 0)
		tree_free(t);
	return rc;
}

/* --- outputs ---------------------------------------------------------- */

/* An output's fsync on a thread of its own, started once its bytes are
 * all written: the commit's fsyncs waited 0.1-0.15 s for the disk (the
 * journal commit of the image's extents) with both CPUs idle; now that
 * wait overlaps the hash pass and the manifest (docs/bench.md, "Synced
 * ahead").  The commit still fsyncs every output; this one's error is
 * reported on joining, since a second fsync may no longer see it. */
struct sync_ahead {
	pthread_t tid;
	int fd, err;
	bool started;
};

static void *sync_main(void *arg)
{
	struct sync_ahead *s = arg;
	s->err = fsync(s->fd) < 0 ? errno : 0;
	return NULL;
}

/* Without a thread, the commit's own fsync does it all, as before. */
static void sync_ahead_start(struct sync_ahead *s, int fd)
{
	*s = (struct sync_ahead){ .fd = fd };
	s->started = pthread_create(&s->tid, NULL, sync_main, s) == 0;
}

static int sync_ahead_finish(struct sync_ahead *s, const char *path, ingot_error *e)
{
	if (!s->started)
		return 0;
	pthread_join(s->tid, NULL);
	s->started = false;
	if (s->err)
		return ingot_fail(e, -s->err, "%s: fsync failed: %s", path, strerror(s->err));
	return 0;
}

struct outputs {
	struct atomic_file image, verity, manifest, sbom, envelope, uki;
};

static void outputs_abort(struct outputs *o)
{
	atomic_abort(&o->image);
	atomic_abort(&o->verity);
	atomic_abort(&o->manifest);
	atomic_abort(&o->sbom);
	atomic_abort(&o->envelope);
	atomic_abort(&o->uki);
}

/* Rename everything into place.  All the slow work (fsync of every
 * temporary) happens first; then the renames run back to back and the
 * directory is synced once, so a kill leaves either no new name or a
 * complete set, except within a window of a few system calls.  Renames
 * replace old outputs atomically: a previous build's files stay intact
 * until the moment they are replaced. */
static int outputs_commit(struct outputs *o, struct build_result *res, ingot_error *e)
{
	bool signed_build = o->envelope.tmp != NULL, boot_build = o->uki.tmp != NULL;
	/* The image last: a NAME.sqfs from this build means the rest of its
	 * set is in place too, even after a kill between two renames. */
	struct atomic_file *v[] = { &o->verity, &o->manifest, &o->sbom, signed_build ? &o->envelope : NULL,
				    boot_build ? &o->uki : NULL, &o->image };
	_cleanup_free_ char *dir = NULL;
	int dfd;

	for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
		if (!v[i])
			continue;
		if (fsync(v[i]->fd) < 0)
			return ingot_fail(e, -errno, "%s: fsync failed: %s", v[i]->path, strerror(errno));
		if (close(v[i]->fd) < 0) {
			v[i]->fd = -1;
			return ingot_fail(e, -errno, "%s: close failed: %s", v[i]->path, strerror(errno));
		}
		v[i]->fd = -1;
	}
	for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
		if (!v[i])
			continue;
		if (rename(v[i]->tmp, v[i]->path) < 0)
			return ingot_fail(e, -errno, "%s: rename failed: %s", v[i]->path, strerror(errno));
		free(v[i]->tmp);
		v[i]->tmp = NULL;
	}
	/* Unsigned build: an envelope left by an earlier signed build would
	 * vouch for an image that is no longer there. */
	if (!signed_build) {
		if (unlink(res->envelope_path) < 0 && errno != ENOENT)
			return ingot_fail(e, -errno, "%s: cannot remove stale output: %s", res->envelope_path, strerror(errno));
		free(res->envelope_path);
		res->envelope_path = NULL;
	}
	if (!boot_build && res->uki_path) {
		if (unlink(res->uki_path) < 0 && errno != ENOENT)
			return ingot_fail(e, -errno, "%s: cannot remove stale output: %s", res->uki_path, strerror(errno));
		free(res->uki_path);
		res->uki_path = NULL;
	}
	dir = path_dirname(res->image_path);
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}

static int out_name(const char *dir, const char *name, const char *ext, char **out, ingot_error *e)
{
	size_t n = strlen(name), m = strlen(ext);
	_cleanup_free_ char *base = xmalloc(n + m + 1);

	memcpy(base, name, n);
	memcpy(base + n, ext, m + 1);
	*out = path_join(dir, base);
	return *out ? 0 : ingot_fail(e, -ENOMEM, "out of memory");
}

/* A json_out writing to an output's temporary and hashing what it writes
 * (md may be NULL). */
struct out_digest {
	struct atomic_file *af;
	EVP_MD_CTX *md;
};

static int out_file_write(void *ctx, const char *buf, size_t len, ingot_error *e)
{
	struct out_digest *o = ctx;
	int r = atomic_write(o->af, buf, len, e);
	return r < 0 || !o->md ? r : sha256_write(o->md, buf, len, e);
}

/* NAME.spdx.json, written a file at a time: the SBOM and the manifest
 * are never held as trees, which with one node per file were most of a
 * build's memory (docs/bench.md).  Its name and sha256 go into the
 * manifest ("sbom"), so the signed statement names it as its second
 * subject. */
static int write_sbom(const struct recipe *r, const struct unpack_stats *stats, const struct tree *t,
		      const struct store *s, uint8_t (*sha1)[20], struct outputs *o, const struct build_result *res, json_t **member, ingot_error *e)
{
	const char *base = strrchr(res->sbom_path, '/') ? strrchr(res->sbom_path, '/') + 1 : res->sbom_path;
	struct out_digest of = { &o->sbom, sha256_begin() };
	char hex[SHA256_HEX_LEN + 1];
	uint8_t d[32];
	int rc;

	if (!of.md)
		return ingot_fail(e, -ENOMEM, "out of memory");
	if ((rc = atomic_open(&o->sbom, res->sbom_path, OUT_MODE, e)) >= 0)
		rc = sbom_write(r, stats, t, s, (const uint8_t (*)[20])sha1, res->image_sha256,
				&(struct json_out){ out_file_write, &of }, e);
	sha256_end(of.md, d);
	if (rc < 0)
		return rc;
	hex_encode(d, sizeof(d), hex);
	if (!(*member = json_pack("{s:s,s:s}", "file", base, "sha256", hex)))
		return ingot_fail(e, -ENOMEM, "out of memory");
	return 0;
}

/* NAME.manifest.json: json_canonical of the manifest, files[] made as
 * they are written.  *len gets the byte count, sha256 the digest the
 * signed statement binds it by. */
static int write_manifest(struct atomic_file *af, const char *path, const json_t *head,
			  const struct tree *t, size_t *len, uint8_t sha256[32], ingot_error *e)
{
	struct manifest_files f;
	struct out_digest of = { af, sha256_begin() };
	const struct json_out out = { out_file_write, &of };
	int rc;

	if (!of.md)
		return ingot_fail(e, -ENOMEM, "out of memory");
	if ((rc = atomic_open(af, path, OUT_MODE, e)) >= 0) {
		manifest_files_init(&f, t, false);
		rc = json_dump_spliced(head, JSON_CANONICAL_FLAGS, &(struct json_splice){ manifest_files_next, &f },
				       1, &out, len, e);
		manifest_files_release(&f);
	}
	if (rc >= 0 && (rc = out_file_write(&of, "\n", 1, e)) >= 0)
		++*len;
	sha256_end(of.md, sha256);
	return rc < 0 ? rc : 0;
}

/* NAME.manifest.dsse.json: the signed statement, a few KB whatever the
 * image: the manifest's head (files[] is the splice mark in head, left
 * out) and the manifest file bound by its digest (docs/signing.md). */
static int sign_manifest(const char *key, const json_t *head, const char *manifest_path,
			 const uint8_t manifest_sha256[32], struct out_digest *of, const char *path,
			 ingot_error *e)
{
	_cleanup_(signing_key_freep) struct signing_key *k = NULL;
	_cleanup_json_ json_t *st = NULL, *h = json_copy((json_t *)head);
	_cleanup_free_ char *payload = NULL;
	const char *base = strrchr(manifest_path, '/') ? strrchr(manifest_path, '/') + 1 : manifest_path;
	size_t len;
	int r;

	if (!h || json_object_del(h, "files") < 0)
		return ingot_fail(e, -ENOMEM, "out of memory");
	if ((r = signing_key_load(key, &k, e)) < 0 ||
	    (r = statement_for_head("manifest", h, base, manifest_sha256, &st, e)) < 0)
		return r;
	if (!(payload = json_compact(st, &len)))
		return ingot_fail(e, -ENOMEM, "out of memory");
	if ((r = atomic_open(of->af, path, OUT_MODE, e)) < 0)
		return r;
	return envelope_write_signed(payload, len, k, &(struct json_out){ out_file_write, of }, e);
}

/* NAME.efi and the manifest's "boot" predictions.  Unless the lint is
 * skipped, the image's modules must be built for the UKI's kernel. */
static int build_uki(const struct build_opts *o, const struct recipe *r, const struct tree *t,
		     const struct store *s, const struct verity_info *vi, struct build_result *res,
		     struct outputs *out, json_t *manifest, ingot_error *e)
{
	_cleanup_strbuf_ struct strbuf efi = STRBUF_INIT;
	_cleanup_free_ char *base = xasprintf("%s.efi", r->name);
	struct boot_kernel kernel;
	json_t *boot = NULL;
	int rc;

	if ((rc = uki_build(r, vi, base, &efi, &boot, &kernel, e)) < 0)
		return rc;
	if (!o->no_lint && (rc = kabi_check(r, t, s, &kernel, e)) < 0) {
		char why[INGOT_ERR_MSG];
		snprintf(why, sizeof(why), "%s", e->msg);
		json_decref(boot);
		return ingot_fail(e, rc, "%s: lint: %s (--no-lint skips the check)", r->name, why);
	}
	if (json_object_set_new(manifest, "boot", boot) < 0)
		return ingot_fail(e, -ENOMEM, "out of memory");
	if ((rc = atomic_open(&out->uki, res->uki_path, OUT_MODE, e)) < 0)
		return rc;
	return atomic_write(&out->uki, efi.buf, efi.len, e);
}

static int run_build(const struct build_opts *o, struct recipe *r, struct store *s,
		     struct build_result *res, struct outputs *out, ingot_error *e)
{
	_cleanup_json_ json_t *manifest = NULL, *sbom_member = NULL;
	struct tree t;
	struct image_opts io = { 0 };
	struct image_info ii = { 0 };
	struct verity_info vi = { 0 };
	uint8_t salt[32];
	_cleanup_free_ uint64_t *sizes = xcalloc(r->n_artifacts + 1, sizeof(*sizes));
	_cleanup_free_ struct unpack_stats *stats = xcalloc(r->n_artifacts + 1, sizeof(*stats));
	struct unpack_limits lim = { .entries = o->max_entries, .bytes = o->max_unpacked_bytes };
	size_t cached = 0, compact = 0, canonical = 0;
	uint8_t manifest_sha256[32];
	_cleanup_free_ uint8_t (*sha1)[20] = NULL;
	struct sync_ahead sync_image = { 0 }, sync_verity = { 0 };
	int rc;

	rc = build_stage_tree(r, s, o->workers, &lim, o->progress, o->progress_ctx, &t, &cached,
			      stats, e);
	if (rc < 0)
		return rc;
	/* The listings were made and freed on the unpack threads, in malloc
	 * arenas of their own that no later thread reuses: give their pages
	 * back before the image writer's threads take theirs. */
	malloc_trim(0);
	for (size_t i = 0; i < r->n_artifacts; i++)
		sizes[i] = stats[i].artifact_bytes;
	res->artifacts = r->n_artifacts;
	res->artifacts_cached = cached;
	res->entries = t.n;
	res->files = tree_count(&t, TREE_FILE);

	if (r->tuple && (rc = tuple_check_artifacts(r, &t, s, stats, e)) < 0)
		goto done;

	io.compression = r->compression;
	io.level = r->level;
	io.block_size = r->block_size;
	io.workers = o->workers ? o->workers : 1;
	io.mtime = r->epoch;
	/* the SBOM's SHA-1s, made as the image is written (no second read) */
	sha1 = xcalloc(t.n ? t.n : 1, sizeof(*sha1));
	io.sha1 = sha1;
	if ((rc = mkdir_p(o->outdir, 0755, e)) < 0)
		goto done;
	if ((rc = atomic_open(&out->image, res->image_path, OUT_MODE, e)) < 0 ||
	    (rc = atomic_open(&out->verity, res->verity_path, OUT_MODE, e)) < 0)
		goto done;
	if ((rc = image_write(&t, s, &io, out->image.fd, res->image_path, &ii, e)) < 0)
		goto done;
	sync_ahead_start(&sync_image, out->image.fd);
	res->blocks_compressed = ii.blocks_compressed;
	res->blocks_reused = ii.blocks_reused;
	res->files_reused = ii.files_reused;
	res->cache_segments_ignored = ii.files_segments_ignored;
	if (lseek(out->image.fd, 0, SEEK_SET) < 0) {
		rc = ingot_fail(e, -errno, "%s: seek: %s", res->image_path, strerror(errno));
		goto done;
	}
	verity_salt_for_recipe(r->file_sha256, salt);
	if ((rc = verity_build(out->image.fd, res->image_path, out->verity.fd, res->verity_path,
			       salt, sizeof(salt), &vi, e)) < 0)
		goto done;
	sync_ahead_start(&sync_verity, out->verity.fd);
	memcpy(res->image_sha256, vi.image_sha256, 32);
	memcpy(res->verity_root, vi.root_hash, 32);
	res->image_size = vi.image_size;
	/* The image's blocks were allocated and freed on other threads, in
	 * malloc arenas of their own: give their pages back (as after the
	 * listings) so the peak RSS is what is in use (docs/bench.md). */
	malloc_trim(0);

	/* The manifest's head (all but files[]) gets every member, then the
	 * seal measures and checks the whole; written and signed with
	 * files[] made from the tree as they go (builder/manifest.h). */
	if ((rc = write_sbom(r, stats, &t, s, sha1, out, res, &sbom_member, e)) < 0 ||
	    (rc = manifest_build_head(r, sizes, &io, &ii, &vi, &manifest, e)) < 0 ||
	    (r->boot && (rc = build_uki(o, r, &t, s, &vi, res, out, manifest, e)) < 0))
		goto done;
	if (json_object_set_new(manifest, "sbom", TAKE_PTR(sbom_member)) < 0) {
		rc = ingot_fail(e, -ENOMEM, "out of memory");
		goto done;
	}
	if ((rc = manifest_seal(manifest, r->name, &vi, &t, &compact, e)) < 0 ||
	    (rc = write_manifest(&out->manifest, res->manifest_path, manifest, &t, &canonical, manifest_sha256, e)) < 0)
		goto done;
	if ((rc = manifest_check_sizes(res->entries, canonical, compact, &MANIFEST_LIMITS, e)) < 0) {
		ingot_prefix(e, "%s", r->name);
		goto done;
	}
	if (o->key && (rc = sign_manifest(o->key, manifest, res->manifest_path, manifest_sha256,
					  &(struct out_digest){ &out->envelope, NULL }, res->envelope_path, e)) < 0)
		goto done;
	if ((rc = sync_ahead_finish(&sync_image, res->image_path, e)) < 0 ||
	    (rc = sync_ahead_finish(&sync_verity, res->verity_path, e)) < 0)
		goto done;
	rc = outputs_commit(out, res, e);
done:
	if (rc < 0) {   /* joined before the outputs' fds are closed; the first error stands */
		ingot_error scratch = { 0 };
		sync_ahead_finish(&sync_image, res->image_path, &scratch);
		sync_ahead_finish(&sync_verity, res->verity_path, &scratch);
	}
	tree_free(&t);
	return rc;
}

/* Refuse a tuple that breaks an error rule; keep warnings for the caller. */
static int run_lint(const struct build_opts *o, const struct recipe *r, struct build_result *res,
		    ingot_error *e)
{
	struct lint_report *rep = NULL;
	char buf[4096];
	const char *dir = o->rules_dir ? o->rules_dir : lint_default_rules_dir(buf, sizeof(buf));
	size_t nerr;
	int rc = lint_recipe(r, dir, o->date, &rep, e);

	if (rc < 0)
		return ingot_prefix(e, "lint");
	nerr = lint_report_errors(rep);
	res->warnings = xcalloc(rep->n + 1, sizeof(char *));
	for (size_t i = 0; i < rep->n; i++) {
		const struct lint_finding *f = &rep->v[i];
		if (f->severity == LINT_ERROR) {
			if (rc >= 0)
				rc = ingot_fail(e, -EINVAL, "%s: lint: %zu error%s; first: %s: %s (--no-lint skips the check)",
						f->where ? f->where : r->file, nerr, nerr == 1 ? "" : "s", f->rule, f->message);
			continue;
		}
		res->warnings[res->lint_warnings++] = xasprintf("%s: lint: %s: %s",
								f->where ? f->where : r->file, f->rule, f->message);
	}
	lint_report_free(rep);
	return rc;
}

int ingot_build(const struct build_opts *o, struct build_result *res, ingot_error *e)
{
	struct recipe *r = NULL;
	struct store s = { 0 };
	struct outputs out = { .image = { .fd = -1 }, .verity = { .fd = -1 },
			       .manifest = { .fd = -1 }, .sbom = { .fd = -1 }, .envelope = { .fd = -1 },
			       .uki = { .fd = -1 } };
	int rc;

	memset(res, 0, sizeof(*res));
	rc = recipe_load_vars(o->recipe, o->source_date_epoch, o->vars, o->n_vars, &r, e);
	if (rc < 0)
		return rc;
	if (!o->no_lint && r->tuple && (rc = run_lint(o, r, res, e)) < 0)
		goto out;
	if ((rc = store_open(&s, o->store, e)) < 0)
		goto out;
	res->name = xstrdup(r->name);
	if ((rc = out_name(o->outdir, r->name, ".sqfs", &res->image_path, e)) < 0 ||
	    (rc = out_name(o->outdir, r->name, ".verity", &res->verity_path, e)) < 0 ||
	    (rc = out_name(o->outdir, r->name, ".manifest.json", &res->manifest_path, e)) < 0 ||
	    (rc = out_name(o->outdir, r->name, ".spdx.json", &res->sbom_path, e)) < 0 ||
	    (rc = out_name(o->outdir, r->name, ".manifest.dsse.json", &res->envelope_path, e)) < 0 ||
	    (rc = out_name(o->outdir, r->name, ".efi", &res->uki_path, e)) < 0)
		goto out;
	rc = run_build(o, r, &s, res, &out, e);
out:
	outputs_abort(&out);
	store_close(&s);
	recipe_free(r);
	return rc;
}

void build_result_free(struct build_result *res)
{
	free(res->name);
	free(res->image_path);
	free(res->verity_path);
	free(res->manifest_path);
	free(res->sbom_path);
	free(res->envelope_path);
	free(res->uki_path);
	for (size_t i = 0; i < res->lint_warnings; i++)
		free(res->warnings[i]);
	free(res->warnings);
	memset(res, 0, sizeof(*res));
}
