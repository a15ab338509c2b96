/* Squashfs writer: the staging tree (builder/tree.h) to a squashfs 4.0
 * image through libsquashfs' low-level API.
 *
 * Layout follows gensquashfs (squashfs-tools-ng) so the two can be
 * compared byte for byte:
 *   superblock, compressor options, file data and fragment blocks (files
 *   in depth-first, name-sorted order), inode table, directory table,
 *   fragment table, id table; no xattrs, no export table; padded to 4096.
 * Inode numbers are allocated depth-first: a directory's subdirectories
 * are numbered before its own children, and the root comes last, so a
 * directory inode is always written after every inode it lists.  Data
 * is streamed from the store one block at a time; only metadata (and the
 * block list of each file) is held in memory. */
#include "builder/image.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <sqfs/block_processor.h>
#include <sqfs/block_writer.h>
#include <sqfs/compressor.h>
#include <sqfs/dir_writer.h>
#include <sqfs/error.h>
#include <sqfs/frag_table.h>
#include <sqfs/id_table.h>
#include <sqfs/inode.h>
#include <sqfs/meta_writer.h>
#include <sqfs/super.h>

#include "builder/blockcache.h"
#include "builder/filecache.h"
#include "image/sqfs-io.h"
#include "builder/store.h"
#include "builder/tree.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/str.h"
#include "lib/writebehind.h"
#include "lib/xalloc.h"

#define NO_XATTR 0xFFFFFFFFu

struct wnode {
	sqfs_inode_generic_t *inode;  /* files: owned by the block processor until finish */
	uint64_t inode_ref;           /* (meta block start << 16) | offset */
	uint32_t inode_num;           /* 1-based */
	size_t first_child, n_children; /* directories: range in ctx->children */
	uint32_t n_subdirs;
	struct fc_job *job;           /* files replayed from the file cache */
};

struct writer {
	const struct tree *t;
	const struct store *store;
	const char *name;
	uint32_t mtime;
	size_t n;                     /* tree entries; node n is the root */
	struct wnode *nodes;          /* n + 1 */
	size_t *children;             /* CSR child lists, name order */
	size_t *by_num;               /* inode number - 1 -> node */
	uint32_t next_num;

	sqfs_file_t *file;
	sqfs_compressor_t *cmp;
	sqfs_compressor_t *data_cmp;  /* cmp through the block cache, for file data */
	struct verifier *ver;         /* re-hashes cached pack ranges alongside */
	struct block_cache *bc;
	struct file_cache *fc;
	uint8_t *cached;              /* per entry: in the file cache (key only) */
	sqfs_block_writer_t *blkwr;
	sqfs_block_writer_t *fcw;     /* blkwr, recording into the file cache */
	sqfs_frag_table_t *frag;
	sqfs_block_processor_t *proc;
	sqfs_id_table_t *ids;
	sqfs_meta_writer_t *im, *dm;
	sqfs_dir_writer_t *dirwr;
	sqfs_super_t super;
	uint8_t *buf;                 /* one data block */
	uint8_t *tail;                /* the current file's bytes after its last whole block */
	uint8_t (*sha1)[20];          /* image_opts.sha1 */
	struct writebehind sha1_wb;   /* a large file's SHA-1, on a thread of its own */
	EVP_MD_CTX *sha1_md;          /* ... fed by sha1_wb's thread */
	bool sha1_ahead;              /* that thread started */
	uint32_t block_size;
	bool in_file, finished;       /* block processor state, for cleanup */
};

static int sqfs_fail(struct writer *w, int code, const char *what, ingot_error *e)
{
	if (code == SQFS_ERROR_IO && w->file && sqfs_fd_errno(w->file))
		return ingot_fail(e, -sqfs_fd_errno(w->file), "%s: %s: %s", w->name, what,
				  strerror(sqfs_fd_errno(w->file)));
	return ingot_fail(e, sqfs_to_errno(code), "%s: %s: %s", w->name, what,
			  sqfs_strerror(code));
}

/* Index of the entry whose path is the first len bytes of key, or SIZE_MAX. */
static size_t find_prefix(const struct tree *t, const char *key, size_t len)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *p = t->v[mid].path;
		int c = strncmp(p, key, len);
		if (c == 0)
			c = p[len] ? 1 : 0;
		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return SIZE_MAX;
}

static uint16_t type_bits(enum tree_type type)
{
	switch (type) {
	case TREE_DIR: return S_IFDIR;
	case TREE_FILE: return S_IFREG;
	case TREE_SYMLINK: return S_IFLNK;
	case TREE_CHR: return S_IFCHR;
	case TREE_BLK: return S_IFBLK;
	case TREE_FIFO: return S_IFIFO;
	case TREE_SOCK: return S_IFSOCK;
	}
	return 0;
}

static uint16_t node_mode(const struct writer *w, size_t i)
{
	if (i == w->n)
		return S_IFDIR | 0755;
	return (uint16_t)(type_bits(w->t->v[i].type) | (w->t->v[i].mode & 07777));
}

static bool node_is_dir(const struct writer *w, size_t i)
{
	return i == w->n || w->t->v[i].type == TREE_DIR;
}

/* Parent links, child lists (CSR) and subdirectory counts. */
static int link_nodes(struct writer *w, ingot_error *e)
{
	const struct tree *t = w->t;
	_cleanup_free_ size_t *parent = xcalloc(w->n + 1, sizeof(*parent));
	_cleanup_free_ size_t *fill = NULL;

	w->nodes = xcalloc(w->n + 1, sizeof(*w->nodes));
	w->children = xcalloc(w->n + 1, sizeof(*w->children));
	w->by_num = xcalloc(w->n + 1, sizeof(*w->by_num));

	for (size_t i = 0; i < w->n; i++) {
		const char *path = t->v[i].path;
		const char *slash = strrchr(path, '/');
		size_t p = w->n;

		if (i > 0 && strcmp(t->v[i - 1].path, path) >= 0)
			return ingot_fail(e, -EINVAL, "%s: tree: expected entries sorted by "
					  "path (tree_finalize), got '%s' after '%s'",
					  w->name, path, t->v[i - 1].path);
		if (slash) {
			p = find_prefix(t, path, (size_t)(slash - path));
			if (p == SIZE_MAX || t->v[p].type != TREE_DIR)
				return ingot_fail(e, -EINVAL, "%s: tree: '%s': expected a parent "
						  "directory '%.*s'", w->name, path,
						  (int)(slash - path), path);
		}
		parent[i] = p;
		w->nodes[p].n_children++;
		if (t->v[i].type == TREE_DIR)
			w->nodes[p].n_subdirs++;
	}

	fill = xcalloc(w->n + 1, sizeof(*fill));
	for (size_t i = 0, pos = 0; i <= w->n; i++) {
		w->nodes[i].first_child = pos;
		pos += w->nodes[i].n_children;
	}
	/* Entries are sorted by path, so siblings arrive in name order. */
	for (size_t i = 0; i < w->n; i++) {
		struct wnode *pn = &w->nodes[parent[i]];
		w->children[pn->first_child + fill[parent[i]]++] = i;
	}
	return 0;
}

static void number_children(struct writer *w, size_t dir)
{
	const struct wnode *d = &w->nodes[dir];

	for (size_t k = 0; k < d->n_children; k++) {
		size_t c = w->children[d->first_child + k];
		if (node_is_dir(w, c))
			number_children(w, c);
	}
	for (size_t k = 0; k < d->n_children; k++) {
		size_t c = w->children[d->first_child + k];
		w->nodes[c].inode_num = ++w->next_num;
		w->by_num[w->nodes[c].inode_num - 1] = c;
	}
}

static void evp_freep(EVP_MD_CTX **c) { EVP_MD_CTX_free(*c); }

/* The SBOM's SHA-1 of a large file is made on a thread of its own, from
 * the very buffers the file is read into: on the thread that feeds the
 * compressors it was a third of that thread's work, and that thread is
 * the write phase's longest (docs/bench.md, "SHA-1 beside the feed").
 * Small files keep it inline: a hand-over per file would cost more. */
#define SHA1_AHEAD_MIN (1u << 20)
#define SHA1_NBUF 4

static int sha1_sink(void *md, const char *buf, size_t len)
{
	return EVP_DigestUpdate(md, buf, len) ? 0 : -EIO;
}

/* A file whose compressed blocks are in the file cache: they go to the
 * block writer where the processor's stream reaches them, exactly as the
 * processor would have written them (filecache.h, struct fc_job); the
 * tail still goes through the processor, into the fragment block it
 * shares with its neighbours. */
static int replay_file(struct writer *w, size_t i, ingot_error *e)
{
	struct wnode *nd = &w->nodes[i];
	const struct fc_hit *hit = &nd->job->hit;
	int r;

	nd->job->patch.file_size = w->t->v[i].size;
	if ((r = file_cache_submit(w->proc, nd->job)))
		return sqfs_fail(w, r, "writing cached file data", e);
	if (file_cache_read_tail(hit, w->buf) < 0)
		return ingot_fail(e, -EIO, "%s: /%s: reading the file cache: %s", w->name,
				  w->t->v[i].path, strerror(errno));
	r = sqfs_block_processor_begin_file(w->proc, &nd->inode, NULL, 0);
	if (r)
		return sqfs_fail(w, r, "starting file data", e);
	w->in_file = true;
	if (hit->tail_len && (r = sqfs_block_processor_append(w->proc, w->buf, hit->tail_len)))
		return sqfs_fail(w, r, "writing file data", e);
	w->in_file = false;
	if ((r = sqfs_block_processor_end_file(w->proc)))
		return sqfs_fail(w, r, "finishing file data", e);
	return 0;
}

/* Stream one file through the block processor, checking that its bytes
 * still hash to the digest the tree gives them (unless this process
 * hashed them on their way into the store moments ago). */
static int pack_file(struct writer *w, size_t i, ingot_error *e)
{
	const struct tree_entry *ent = &w->t->v[i];
	/* Only blobs from earlier runs are hashed here: fresh bytes were
	 * hashed by this process as they went into the store, and cached pack
	 * ranges are checked by the verifier thread. */
	bool blob = !ent->loc.packed && !ent->loc.fresh, hash = blob;
	uint64_t tail_len = ent->size % w->block_size, tail_at = ent->size - tail_len;
	struct store_content c;
	_cleanup_(evp_freep) EVP_MD_CTX *md = EVP_MD_CTX_new();
	_cleanup_(evp_freep) EVP_MD_CTX *md1 = w->sha1 ? EVP_MD_CTX_new() : NULL;
	uint8_t got[32], sha1[20];
	uint64_t total = 0;
	bool ahead;
	int r;

	if (w->cached && w->cached[i]) {
		struct fc_job *job = xcalloc(1, sizeof(*job));
		r = file_cache_get(w->fc, ent->sha256, ent->size, &job->hit, e);
		if (r <= 0)
			free(job);
		if (r < 0)
			return ingot_prefix(e, "%s", w->name);
		if (r > 0) {
			if (w->sha1)
				memcpy(w->sha1[i], job->hit.sha1, 20);
			w->nodes[i].job = job;
			return replay_file(w, i, e);
		}
		/* a damaged entry: from the store, checked here (the verifier
		 * thread skips files it expected from the cache) */
		hash = blob || (ent->loc.packed && !ent->loc.fresh);
	}
	/* (the thread is idle between files: each ends with a flush) */
	ahead = md1 && w->sha1_ahead && ent->size >= SHA1_AHEAD_MIN;
	if (!md || !EVP_DigestInit_ex(md, EVP_sha256(), NULL) ||
	    (w->sha1 && (!md1 || !EVP_DigestInit_ex(ahead ? w->sha1_md : md1, EVP_sha1(), NULL))))
		return ingot_fail(e, -ENOMEM, "%s: out of memory", w->name);
	/* a blob is read one byte past its size, so one longer than the tree
	 * says is caught; a pack range is exact (the next file follows) */
	if ((r = store_content_open(w->store, &ent->loc, ent->sha256, ent->size + blob, &c, e)) < 0)
		return ingot_prefix(e, "%s: /%s", w->name, ent->path);

	r = sqfs_block_processor_begin_file(w->proc, &w->nodes[i].inode,
					    w->fc ? (void *)(uintptr_t)(i + 1) : NULL, 0);
	if (r) {
		store_content_close(&c);
		return sqfs_fail(w, r, "starting file data", e);
	}
	w->in_file = true;
	for (;;) {
		size_t room = w->block_size;
		uint8_t *p = ahead ? (uint8_t *)writebehind_tail(&w->sha1_wb, &room) : w->buf;
		ssize_t n = store_content_read(&c, p, room);
		if (n < 0) {
			r = ingot_fail(e, (int)n, "%s: /%s: reading %s: %s", w->name, ent->path, c.path,
				       strerror((int)-n));
			store_content_close(&c);
			return r;
		}
		if (n == 0)
			break;
		if (w->fc && total + (uint64_t)n > tail_at && total < ent->size) {
			uint64_t from = total > tail_at ? total : tail_at;
			uint64_t to = total + (uint64_t)n < ent->size ? total + (uint64_t)n : ent->size;
			memcpy(w->tail + (from - tail_at), p + (from - total), (size_t)(to - from));
		}
		total += (uint64_t)n;
		if (md1 && !ahead)
			EVP_DigestUpdate(md1, p, (size_t)n);
		if (hash)
			EVP_DigestUpdate(md, p, (size_t)n);
		r = sqfs_block_processor_append(w->proc, p, (size_t)n);
		if (!r && sqfs_fd_errno(w->file))
			r = SQFS_ERROR_IO;
		if (r) {
			store_content_close(&c);
			return sqfs_fail(w, r, "writing file data", e);
		}
		/* the processor copied the bytes: the buffer goes to be hashed */
		if (ahead && writebehind_advance(&w->sha1_wb, (size_t)n) < 0) {
			store_content_close(&c);
			return ingot_fail(e, -EIO, "%s: /%s: sha1: digest update failed", w->name, ent->path);
		}
	}
	w->in_file = false;
	if (ahead && writebehind_flush(&w->sha1_wb) < 0) {
		store_content_close(&c);
		return ingot_fail(e, -EIO, "%s: /%s: sha1: digest update failed", w->name, ent->path);
	}
	if (md1) {
		EVP_DigestFinal_ex(ahead ? w->sha1_md : md1, sha1, NULL);
		memcpy(w->sha1[i], sha1, 20);
	}
	if (w->fc && md1 && total == ent->size)
		file_cache_note(w->fc, i, sha1, w->tail, (size_t)tail_len);
	r = sqfs_block_processor_end_file(w->proc);
	if (r) {
		store_content_close(&c);
		return sqfs_fail(w, r, "finishing file data", e);
	}
	EVP_DigestFinal_ex(md, got, NULL);
	if (total != ent->size || (hash && memcmp(got, ent->sha256, 32))) {
		char want_hex[SHA256_HEX_LEN + 1], got_hex[SHA256_HEX_LEN + 1];
		hex_encode(ent->sha256, 32, want_hex);
		hex_encode(got, 32, got_hex);
		r = ingot_fail(e, -EBADMSG, "%s: /%s: store %s: expected %llu bytes "
			       "with sha256 %s, got %llu bytes%s%s", w->name,
			       ent->path, c.path, (unsigned long long)ent->size, want_hex,
			       (unsigned long long)total, hash ? " with sha256 " : "", hash ? got_hex : "");
		store_content_close(&c);
		return r;
	}
	store_content_close(&c);
	return 0;
}

/* Files taken from a cached pack are re-hashed (the store is trusted for
 * listings, not for bytes) by a thread of their own, so the check costs
 * no time on the thread that feeds the compressor.  The image is not
 * finished before the verifier has said yes.  (It reads the pack again
 * rather than sharing a mapping: mapped pages would count as the
 * process's memory, up to the whole image.) */
#define VERIFY_BUF (1u << 20)
struct verifier {
	const struct writer *w;
	pthread_t tid;
	atomic_bool stop;
	size_t bad;                   /* first mismatching entry, or SIZE_MAX */
	uint8_t got[32];
};

/* A cached pack range, unless its compressed form comes from the file
 * cache (whose entries carry their own checksums). */
static bool needs_check(const struct writer *w, size_t i)
{
	const struct tree_entry *ent = &w->t->v[i];
	return ent->type == TREE_FILE && ent->loc.packed && !ent->loc.fresh &&
	       !(w->cached && w->cached[i]);
}

static void *verify_packs(void *arg)
{
	struct verifier *v = arg;
	const struct tree *t = v->w->t;
	uint8_t *buf = xmalloc(VERIFY_BUF);
	EVP_MD_CTX *md = EVP_MD_CTX_new();

	for (size_t i = 0; i < t->n && md && !atomic_load(&v->stop); i++) {
		const struct tree_entry *ent = &t->v[i];
		struct store_content c;
		ingot_error ie = { 0 };
		uint8_t got[32] = { 0 };
		ssize_t n = 0;
		if (!needs_check(v->w, i))
			continue;
		/* its own reads: the feeding thread's buffer is not shared */
		if (store_content_open(v->w->store, &ent->loc, ent->sha256, ent->size, &c, &ie) == 0) {
			EVP_DigestInit_ex(md, EVP_sha256(), NULL);
			while ((n = store_content_read(&c, buf, VERIFY_BUF)) > 0)
				EVP_DigestUpdate(md, buf, (size_t)n);
			EVP_DigestFinal_ex(md, got, NULL);
			store_content_close(&c);
		}
		if (n < 0 || memcmp(got, ent->sha256, 32)) {
			v->bad = i;
			memcpy(v->got, got, 32);
			break;
		}
	}
	if (!md)
		v->bad = SIZE_MAX - 1;   /* out of memory: not verified */
	free(buf);
	EVP_MD_CTX_free(md);
	return NULL;
}

/* Start the verifier if a cached pack range needs checking. */
static int verifier_start(struct writer *w, ingot_error *e)
{
	bool any = false;

	for (size_t i = 0; i < w->t->n && !any; i++)
		any = needs_check(w, i);
	if (!any)
		return 0;
	w->ver = xcalloc(1, sizeof(*w->ver));
	w->ver->w = w;
	w->ver->bad = SIZE_MAX;
	atomic_init(&w->ver->stop, false);
	if (pthread_create(&w->ver->tid, NULL, verify_packs, w->ver)) {
		free(w->ver);
		w->ver = NULL;
		return ingot_fail(e, -EAGAIN, "%s: cannot start a thread", w->name);
	}
	return 0;
}

/* Join the verifier; its verdict when r is still 0. */
static int verifier_finish(struct writer *w, int r, ingot_error *e)
{
	struct verifier *v = w->ver;

	if (!v)
		return r;
	if (r < 0)
		atomic_store(&v->stop, true);
	pthread_join(v->tid, NULL);
	w->ver = NULL;
	if (r >= 0 && v->bad == SIZE_MAX - 1)
		r = ingot_fail(e, -ENOMEM, "%s: out of memory", w->name);
	else if (r >= 0 && v->bad != SIZE_MAX) {
		const struct tree_entry *ent = &w->t->v[v->bad];
		char want_hex[SHA256_HEX_LEN + 1], got_hex[SHA256_HEX_LEN + 1];
		hex_encode(ent->sha256, 32, want_hex);
		hex_encode(v->got, 32, got_hex);
		r = ingot_fail(e, -EBADMSG, "%s: /%s: store pack: expected %llu bytes with sha256 %s, got sha256 %s",
			       w->name, ent->path, (unsigned long long)ent->size, want_hex, got_hex);
	}
	free(v);
	return r;
}

/* File data goes out depth-first in name order, like gensquashfs. */
static int pack_dir(struct writer *w, size_t dir, ingot_error *e)
{
	const struct wnode *d = &w->nodes[dir];

	for (size_t k = 0; k < d->n_children; k++) {
		size_t c = w->children[d->first_child + k];
		int r = 0;
		if (node_is_dir(w, c))
			r = pack_dir(w, c, e);
		else if (w->t->v[c].type == TREE_FILE)
			r = pack_file(w, c, e);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Linux's new_encode_dev(): what the kernel and unsquashfs decode. */
static int encode_dev(const struct tree_entry *ent, uint32_t *out)
{
	if (ent->rdev_major >= 4096 || ent->rdev_minor >= (1u << 20))
		return -ERANGE;
	*out = (ent->rdev_minor & 0xff) | (ent->rdev_major << 8) |
	       ((ent->rdev_minor & ~0xffu) << 12);
	return 0;
}

static sqfs_inode_generic_t *simple_inode(const struct tree_entry *ent)
{
	size_t extra = ent->type == TREE_SYMLINK ? strlen(ent->target) : 0;
	sqfs_inode_generic_t *in = xcalloc(1, sizeof(*in) + extra);

	switch (ent->type) {
	case TREE_SYMLINK:
		in->base.type = SQFS_INODE_SLINK;
		in->data.slink.nlink = 1;
		in->data.slink.target_size = (sqfs_u32)extra;
		in->payload_bytes_available = (sqfs_u32)extra;
		in->payload_bytes_used = (sqfs_u32)extra;
		memcpy(in->extra, ent->target, extra);
		break;
	case TREE_CHR:
	case TREE_BLK:
		in->base.type = ent->type == TREE_CHR ? SQFS_INODE_CDEV : SQFS_INODE_BDEV;
		in->data.dev.nlink = 1;
		break;
	case TREE_FIFO:
	case TREE_SOCK:
		in->base.type = ent->type == TREE_FIFO ? SQFS_INODE_FIFO : SQFS_INODE_SOCKET;
		in->data.ipc.nlink = 1;
		break;
	default:
		free(in);
		return NULL;
	}
	return in;
}

static int dir_inode(struct writer *w, size_t i, sqfs_inode_generic_t **out, ingot_error *e)
{
	const struct wnode *d = &w->nodes[i];
	sqfs_inode_generic_t *in;
	uint32_t parent_num = 0;
	int r;

	r = sqfs_dir_writer_begin(w->dirwr, 0);
	if (r)
		return sqfs_fail(w, r, "directory table", e);
	for (size_t k = 0; k < d->n_children; k++) {
		size_t c = w->children[d->first_child + k];
		r = sqfs_dir_writer_add_entry(w->dirwr, base_name(w->t->v[c].path),
					      w->nodes[c].inode_num, w->nodes[c].inode_ref,
					      node_mode(w, c));
		if (r)
			return sqfs_fail(w, r, "directory table", e);
	}
	r = sqfs_dir_writer_end(w->dirwr);
	if (r)
		return sqfs_fail(w, r, "directory table", e);

	/* The parent's number is known: it is numbered after its children.
	 * Like gensquashfs, the root's parent is 0. */
	if (i != w->n) {
		const char *slash = strrchr(w->t->v[i].path, '/');
		size_t p = slash ? find_prefix(w->t, w->t->v[i].path,
					       (size_t)(slash - w->t->v[i].path)) : w->n;
		parent_num = w->nodes[p].inode_num;
	}
	in = sqfs_dir_writer_create_inode(w->dirwr, 0, NO_XATTR, parent_num);
	if (!in)
		return ingot_fail(e, -ENOMEM, "%s: out of memory", w->name);
	if (in->base.type == SQFS_INODE_DIR)
		in->data.dir.nlink = 2 + d->n_subdirs;
	else
		in->data.dir_ext.nlink = 2 + d->n_subdirs;
	*out = in;
	return 0;
}

static int write_inode(struct writer *w, size_t i, ingot_error *e)
{
	struct wnode *nd = &w->nodes[i];
	const struct tree_entry *ent = i == w->n ? NULL : &w->t->v[i];
	_cleanup_free_ sqfs_inode_generic_t *in = NULL;
	uint32_t uid = ent ? ent->uid : 0, gid = ent ? ent->gid : 0;
	sqfs_u64 block;
	sqfs_u32 offset;
	int r;

	if (node_is_dir(w, i)) {
		r = dir_inode(w, i, &in, e);
		if (r < 0)
			return r;
	} else if (ent->type == TREE_FILE) {
		in = TAKE_PTR(nd->inode);
		if (!in)
			return ingot_fail(e, -EINVAL, "%s: /%s: no data inode", w->name, ent->path);
		if (nd->job && (r = fc_patch_inode(&in, &nd->job->patch)))
			return sqfs_fail(w, r, "cached file inode", e);
		if (in->base.type == SQFS_INODE_EXT_FILE)
			in->data.file_ext.nlink = 1;
	} else {
		in = simple_inode(ent);
		if (!in)
			return ingot_fail(e, -EINVAL, "%s: /%s: no inode for its type", w->name, ent->path);
		if (ent->type == TREE_CHR || ent->type == TREE_BLK) {
			if (encode_dev(ent, &in->data.dev.devno) < 0)
				return ingot_fail(e, -ERANGE, "%s: /%s: rdev: expected major < 4096 "
						  "and minor < 1048576, got %u:%u", w->name,
						  ent->path, ent->rdev_major, ent->rdev_minor);
		}
	}

	in->base.mode = node_mode(w, i);
	in->base.mod_time = w->mtime;
	in->base.inode_number = nd->inode_num;
	r = sqfs_inode_set_xattr_index(in, NO_XATTR);
	if (!r)
		r = sqfs_id_table_id_to_index(w->ids, uid, &in->base.uid_idx);
	if (!r)
		r = sqfs_id_table_id_to_index(w->ids, gid, &in->base.gid_idx);
	if (r)
		return sqfs_fail(w, r, "id table", e);

	sqfs_meta_writer_get_position(w->im, &block, &offset);
	nd->inode_ref = (block << 16) | offset;
	r = sqfs_meta_writer_write_inode(w->im, in);
	if (r)
		return sqfs_fail(w, r, "inode table", e);
	return 0;
}

static int pad_to(struct writer *w, uint64_t align, ingot_error *e)
{
	uint64_t size = w->file->get_size(w->file);
	static const uint8_t zero[4096];
	size_t pad = (size_t)((align - size % align) % align);

	while (pad > 0) {
		size_t n = pad < sizeof(zero) ? pad : sizeof(zero);
		int r = w->file->write_at(w->file, size, zero, n);
		if (r)
			return sqfs_fail(w, r, "padding", e);
		size += n;
		pad -= n;
	}
	return 0;
}

static int writer_setup(struct writer *w, const struct image_opts *o, ingot_error *e)
{
	sqfs_compressor_config_t cfg;
	unsigned workers = o->workers ? o->workers : 1;
	size_t backlog;
	int r;

	r = sqfs_compressor_setup(o->compression, o->level, o->block_size, &cfg, e);
	if (r < 0)
		return ingot_prefix(e, "%s", w->name);
	r = sqfs_writer_compressor_create(&cfg, &w->cmp);
	if (r)
		return sqfs_fail(w, r, "creating compressor", e);
	r = sqfs_super_init(&w->super, o->block_size, w->mtime, (SQFS_COMPRESSOR)cfg.id);
	if (r)
		return sqfs_fail(w, r, "superblock", e);
	r = sqfs_super_write(&w->super, w->file);
	if (r)
		return sqfs_fail(w, r, "writing superblock", e);
	r = w->cmp->write_options(w->cmp, w->file);
	if (r < 0)
		return sqfs_fail(w, r, "writing compressor options", e);
	if (r > 0)
		w->super.flags |= SQFS_FLAG_COMPRESSOR_OPTIONS;

	w->blkwr = sqfs_block_writer_create(w->file, SQFS_DEVBLK_SIZE, 0);
	w->frag = sqfs_frag_table_create(0);
	w->ids = sqfs_id_table_create(0);
	w->im = sqfs_meta_writer_create(w->file, w->cmp, 0);
	w->dm = sqfs_meta_writer_create(w->file, w->cmp, SQFS_META_WRITER_KEEP_IN_MEMORY);
	w->dirwr = w->dm ? sqfs_dir_writer_create(w->dm, 0) : NULL;
	w->block_size = o->block_size;
	w->buf = xmalloc(o->block_size);
	w->tail = xmalloc(o->block_size);
	if (!w->blkwr || !w->frag || !w->ids || !w->im || !w->dm || !w->dirwr)
		return ingot_fail(e, -ENOMEM, "%s: out of memory", w->name);
	/* without that thread (or its memory) the SHA-1s are made inline */
	if (o->sha1 && (w->sha1_md = EVP_MD_CTX_new()))
		w->sha1_ahead = writebehind_start_sink(&w->sha1_wb, sha1_sink, w->sha1_md, o->block_size,
						       SHA1_NBUF) == 0;
	/* Whole files' compressed blocks come from the store's file cache at
	 * every level: taking them costs a CRC-64 of the compressed bytes,
	 * far less than reading, checking and compressing the file. */
	/* (only with the SHA-1s: an entry must carry the one the SBOM needs) */
	if (w->store && !o->no_file_cache && o->sha1) {
		if ((r = file_cache_open(w->store, w->cmp, o->block_size, w->t, &w->fc, e)) < 0)
			return ingot_prefix(e, "%s", w->name);
		if (!(w->fcw = file_cache_writer(w->fc, w->blkwr)))
			return ingot_fail(e, -ENOMEM, "%s: out of memory", w->name);
		w->cached = xcalloc(w->n + 1, 1);
		for (size_t i = 0; i < w->n; i++)
			w->cached[i] = w->t->v[i].type == TREE_FILE &&
				       file_cache_has(w->fc, w->t->v[i].sha256, w->t->v[i].size);
	}
	/* File data is compressed through the store's block cache (same
	 * bytes, less work on a rebuild) when compressing costs more than the
	 * two sha256 passes a cached block needs (key and check, ~1.7 GB/s
	 * each with SHA-NI): not for lz4 or zstd below level 6, which
	 * compress at several hundred MB/s.  Metadata goes directly. */
	/* Below that, with the file cache on, the fragment blocks only: the
	 * file cache replays whole blocks but keeps tails raw, so a rebuild
	 * packed and compressed every small file again (fragment blocks
	 * holding only unchanged tails, in the same order, come out the
	 * same; docs/bench.md, "Against the floor, second step"). */
	if (w->store && !o->no_block_cache && (block_cache_pays(&cfg) || w->fc)) {
		if ((r = block_cache_open(w->store, w->cmp, &w->bc, e)) < 0)
			return ingot_prefix(e, "%s", w->name);
		if (!(w->data_cmp = block_cache_wrap_below(w->bc, w->cmp,
							   block_cache_pays(&cfg) ? 0 : o->block_size)))
			return ingot_fail(e, -ENOMEM, "%s: out of memory", w->name);
	}
	/* Ordering of blocks is the processor's job: results are written in
	 * submission order whatever the worker count (checked by tests).
	 * The backlog is what lets the feeding thread read ahead while the
	 * workers compress; 10 per worker (gensquashfs' default) left them
	 * waiting on each other here, so it is 8 MiB of blocks when that is
	 * more (bench/: docs/bench.md). */
	backlog = (8u << 20) / o->block_size;
	if (backlog < 10 * workers)
		backlog = 10 * workers;
	w->proc = sqfs_block_processor_create(o->block_size, w->data_cmp ? w->data_cmp : w->cmp,
					      workers, backlog, w->fcw ? w->fcw : w->blkwr, w->frag);
	if (!w->proc)
		return ingot_fail(e, -ENOMEM, "%s: cannot create block processor (%u workers)",
				  w->name, workers);
	return 0;
}

static void writer_free(struct writer *w)
{
	/* libsquashfs 1.2 leaks queued blocks when a processor is destroyed
	 * unfinished, so after an error drain it first (the output is being
	 * thrown away anyway).  The processor goes first: it joins its workers. */
	if (w->proc && !w->finished) {
		if (w->in_file)
			sqfs_block_processor_end_file(w->proc);
		sqfs_block_processor_finish(w->proc);
	}
	sqfs_destroy(w->proc);
	writebehind_free(&w->sha1_wb);   /* before the digest it feeds */
	EVP_MD_CTX_free(w->sha1_md);
	sqfs_destroy(w->fcw);
	file_cache_close(w->fc);
	free(w->cached);
	sqfs_destroy(w->dirwr);
	sqfs_destroy(w->dm);
	sqfs_destroy(w->im);
	sqfs_destroy(w->ids);
	sqfs_destroy(w->frag);
	sqfs_destroy(w->blkwr);
	sqfs_destroy(w->data_cmp);
	block_cache_close(w->bc);
	sqfs_destroy(w->cmp);
	sqfs_destroy(w->file);
	if (w->nodes)
		for (size_t i = 0; i <= w->n; i++) {
			free(w->nodes[i].inode);
			file_cache_job_free(w->nodes[i].job);
		}
	free(w->nodes);
	free(w->children);
	free(w->by_num);
	free(w->buf);
	free(w->tail);
}

int image_write(const struct tree *t, const struct store *s, const struct image_opts *o,
		int fd, const char *name, struct image_info *info, ingot_error *e)
{
	struct writer w = { .t = t, .store = s, .name = name, .n = t->n };
	int r;

	if (o->mtime > UINT32_MAX) {
		r = ingot_fail(e, -ERANGE, "%s: mtime: expected at most %u (squashfs stores "
			       "32-bit times), got %llu", name, UINT32_MAX,
			       (unsigned long long)o->mtime);
		goto out;
	}
	if (t->n >= UINT32_MAX - 1) {
		r = ingot_fail(e, -EFBIG, "%s: too many entries (%zu)", name, t->n);
		goto out;
	}
	w.mtime = (uint32_t)o->mtime;
	w.sha1 = o->sha1;
	w.file = sqfs_fd_file(fd, 0);
	if (!w.file) {
		r = ingot_fail(e, -ENOMEM, "%s: out of memory", name);
		goto out;
	}
	if (ftruncate(fd, 0) < 0) {
		r = ingot_fail(e, -errno, "%s: truncate: %s", name, strerror(errno));
		goto out;
	}
	if ((r = sqfs_fd_writebehind(w.file)) < 0) {
		r = ingot_fail(e, r, "%s: cannot start the image writer: %s", name, strerror(-r));
		goto out;
	}
	r = link_nodes(&w, e);
	if (r < 0)
		goto out;
	number_children(&w, w.n);
	w.nodes[w.n].inode_num = ++w.next_num;
	w.by_num[w.n] = w.n;

	r = writer_setup(&w, o, e);
	if (r < 0)
		goto out;
	r = verifier_start(&w, e);
	if (r >= 0)
		r = pack_dir(&w, w.n, e);
	r = verifier_finish(&w, r, e);
	if (r < 0)
		goto out;
	r = sqfs_block_processor_finish(w.proc);
	w.finished = true;
	if (r) {
		r = sqfs_fail(&w, r, "writing data blocks", e);
		goto out;
	}

	w.super.inode_table_start = w.file->get_size(w.file);
	w.super.inode_count = w.next_num;
	for (uint32_t k = 0; k < w.next_num; k++) {
		r = write_inode(&w, w.by_num[k], e);
		if (r < 0)
			goto out;
	}
	if ((r = sqfs_meta_writer_flush(w.im)) || (r = sqfs_meta_writer_flush(w.dm))) {
		r = sqfs_fail(&w, r, "flushing metadata", e);
		goto out;
	}
	w.super.root_inode_ref = w.nodes[w.n].inode_ref;
	w.super.directory_table_start = w.file->get_size(w.file);
	if ((r = sqfs_meta_write_write_to_file(w.dm))) {
		r = sqfs_fail(&w, r, "writing directory table", e);
		goto out;
	}
	if ((r = sqfs_frag_table_write(w.frag, w.file, &w.super, w.cmp))) {
		r = sqfs_fail(&w, r, "writing fragment table", e);
		goto out;
	}
	if ((r = sqfs_id_table_write(w.ids, w.file, &w.super, w.cmp))) {
		r = sqfs_fail(&w, r, "writing id table", e);
		goto out;
	}
	w.super.flags |= SQFS_FLAG_NO_XATTRS;
	w.super.xattr_id_table_start = 0xFFFFFFFFFFFFFFFFull;
	w.super.bytes_used = w.file->get_size(w.file);
	if ((r = sqfs_super_write(&w.super, w.file))) {
		r = sqfs_fail(&w, r, "updating superblock", e);
		goto out;
	}
	r = pad_to(&w, 4096, e);
	if (r < 0)
		goto out;
	if (sqfs_fd_flush(w.file)) {
		r = sqfs_fail(&w, SQFS_ERROR_IO, "writing", e);
		goto out;
	}
	if (w.bc && (r = block_cache_commit(w.bc, e)) < 0)
		goto out;
	if (w.fc && (r = file_cache_commit(w.fc, e)) < 0)
		goto out;
	if (info) {
		info->size = w.file->get_size(w.file);
		info->inodes = w.next_num;
		if (w.bc) {
			struct block_cache_stats bs;
			block_cache_stats(w.bc, &bs);
			info->blocks_reused = bs.hits;
			info->blocks_compressed = bs.misses;
			info->blocks_damaged = bs.damaged;
		}
		if (w.fc) {
			struct file_cache_stats fs;
			file_cache_stats(w.fc, &fs);
			info->files_reused = fs.hits;
			info->files_damaged = fs.damaged;
			info->files_segments_ignored = fs.segments_ignored;
		}
	}
	r = 0;
out:
	writer_free(&w);
	return r;
}
