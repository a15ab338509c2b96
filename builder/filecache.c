/* Per-file compressed-block cache (see filecache.h). */
#include "builder/filecache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <isa-l/crc64.h>
#include <sqfs/block.h>
#include <sqfs/error.h>
#include <sqfs/inode.h>
#include <sqfs/super.h>

#include "builder/blockcache.h"
#include "builder/tree.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/idxmap.h"
#include "lib/le.h"
#include "lib/strmap.h"
#include "lib/writebehind.h"
#include "lib/xalloc.h"

#define IDX_MAGIC "ingot-files-v2"     /* 16 bytes with its NUL padding */
#define IDX_HEAD 16
/* A record: sha256 32, size 8, calls 4, tail len 4, tail off 8, the
 * blocks' and the tail's CRC-64 (8 each), SHA-1 20; then the calls. */
#define REC_SIZE 32
#define REC_NCALLS 40
#define REC_TAIL_LEN 44
#define REC_TAIL_OFF 48
#define REC_CRC_BLOCKS 56
#define REC_CRC_TAIL 64
#define REC_SHA1 72
#define REC_HEAD 92
#define REC_CALL 20                    /* size 4, checksum 4, flags 4, off 8 */
#define MAX_SEGMENTS 256               /* two fds each, held while a build runs */
/* The new segment's writes (every compressed block of a cold build, as
 * much again as the image) go through a write-behind thread: they were
 * the feeding thread's, which also reads the packs and feeds the
 * compressors (docs/bench.md, "Against the floor, second step").  The
 * index records, a few dozen bytes per file, are gathered IDX_BUF at a
 * time instead of a write(2) each. */
#define SEG_WB_SIZE (256u << 10)
#define SEG_WB_NBUF 4
#define IDX_BUF (64u << 10)

struct fc_entry {                  /* 48 bytes: one per cached file, all loaded */
	uint8_t sha[32];
	uint64_t size;
	uint32_t rec;                  /* record's offset in the segment's .idx (< 1 GiB: load_segment) */
	uint32_t seg;
};

enum { ST_NONE, ST_TAIL, ST_DONE, ST_BAD };

struct file_cache {
	char *dir;
	const struct store *s;
	const struct tree *t;
	uint32_t block_size;
	/* loaded: read-only while the build runs */
	struct fc_entry *v;
	size_t n, alloc;
	struct idxmap index;  /* of v */
	int *data_fd, *idx_fd;
	size_t n_seg, ignored;         /* segments loaded, and past MAX_SEGMENTS */
	/* this build's segment */
	pthread_mutex_t lock;
	int new_fd, new_idx;
	char *new_tmp, *new_idx_tmp;
	uint64_t new_off;
	struct writebehind new_wb;     /* new_fd's writes, if its thread started */
	uint8_t *idx_buf;              /* new_idx's records not yet written (IDX_BUF) */
	size_t idx_len;
	int new_err;
	uint8_t *state;                /* per tree entry */
	uint64_t *tail_off;
	uint32_t *tail_len;
	uint64_t *crc_tail;
	uint8_t (*sha1)[20];
	size_t cur;                    /* entry whose blocks are arriving, or SIZE_MAX */
	struct fc_call *calls;
	size_t n_calls, calls_alloc;
	uint64_t crc;                  /* of cur's blocks so far */
	uint8_t *zero;                 /* one block of zeros: sparse blocks' data */
	struct run *get_run, *replay_run; /* the feeder's and the writer's reads */
	atomic_ullong hits, recorded, damaged;
};

/* A file's blocks were appended to its segment one after another (other
 * files' tails may sit between runs), so one pread serves a run of them:
 * a syscall per block costs more than the copy on this kind of VM. */
#define RUN_BYTES (512u << 10)         /* two of them (reader, writer): memory is bounded */
struct run {
	int fd;
	uint64_t off;
	size_t len;
	uint8_t buf[RUN_BYTES];
};

/* calls[k]'s bytes (k has data), or NULL on a read error. */
static const uint8_t *run_get(struct run *rn, int fd, const struct fc_call *calls, uint32_t n, uint32_t k)
{
	const struct fc_call *c = &calls[k];
	uint64_t start = c->off, end = c->off + c->size;

	if (rn->fd == fd && start >= rn->off && end <= rn->off + rn->len)
		return rn->buf + (start - rn->off);
	for (uint32_t j = k + 1; j < n; j++) {
		const struct fc_call *d = &calls[j];
		if ((d->flags & SQFS_BLK_IS_SPARSE) || !d->size)
			continue;
		if (d->off != end || end + d->size - start > RUN_BYTES)
			break;
		end += d->size;
	}
	rn->fd = -1;
	if (pread_all(fd, rn->buf, (size_t)(end - start), start) < 0)
		return NULL;
	rn->fd = fd;
	rn->off = start;
	rn->len = (size_t)(end - start);
	return rn->buf;
}

static struct run *run_new(void)
{
	struct run *rn = xmalloc(sizeof(*rn));
	rn->fd = -1;
	return rn;
}

struct fc_writer {
	sqfs_block_writer_t base;
	sqfs_block_writer_t *inner;
	struct file_cache *fc;
};

/* An entry is found by its content: sha256 and size. */
struct fc_key {
	const uint8_t *sha;
	uint64_t size;
};

static size_t key_hash(const uint8_t sha[32], uint64_t size)
{
	return (size_t)le_get(sha, 8) ^ (size_t)size;
}

static size_t entry_hash(const void *fc, size_t i)
{
	const struct fc_entry *e = &((const struct file_cache *)fc)->v[i];
	return key_hash(e->sha, e->size);
}

static bool entry_is(const void *fc, size_t i, const void *key)
{
	const struct fc_entry *e = &((const struct file_cache *)fc)->v[i];
	const struct fc_key *k = key;
	return e->size == k->size && !memcmp(e->sha, k->sha, 32);
}

static size_t *slot_for(const struct file_cache *fc, const uint8_t sha[32], uint64_t size)
{
	const struct fc_key k = { sha, size };
	return idxmap_find(&fc->index, key_hash(sha, size), entry_is, fc, &k);
}

static const struct fc_entry *lookup(const struct file_cache *fc, const uint8_t sha[32], uint64_t size)
{
	size_t *s = slot_for(fc, sha, size);
	return s && *s ? &fc->v[*s - 1] : NULL;
}

static void add_loaded(struct file_cache *fc, const struct fc_entry *ent)
{
	size_t *s;
	if (fc->n == fc->alloc) {
		size_t na = fc->alloc ? fc->alloc * 2 : 1024;
		struct fc_entry *nv = xrealloc(fc->v, na * sizeof(*nv));
		fc->v = nv;
		fc->alloc = na;
	}
	idxmap_reserve(&fc->index, fc->n, entry_hash, fc);
	s = slot_for(fc, ent->sha, ent->size);
	if (*s)
		return;         /* in two segments: the older one wins */
	fc->v[fc->n] = *ent;
	*s = ++fc->n;
}

/* A record is used only if everything in it lies inside its segment and
 * makes sense for the block size (0: unknown, as for file_cache_compact:
 * any size a squashfs block may have); one bad record drops the segment. */
static bool record_ok(uint32_t block_size, const uint8_t *rec, size_t avail, uint64_t data_size,
		      size_t *len)
{
	uint64_t size = le_get(rec + REC_SIZE, 8), tail_off = le_get(rec + REC_TAIL_OFF, 8);
	uint32_t n = (uint32_t)le_get(rec + REC_NCALLS, 4), tail_len = (uint32_t)le_get(rec + REC_TAIL_LEN, 4);
	uint32_t max = block_size ? block_size : SQFS_MAX_BLOCK_SIZE;

	if (block_size && (n > size / block_size + 1 || tail_len != size % block_size))
		return false;
	if (tail_len > max || tail_off > data_size || tail_len > data_size - tail_off ||
	    (size_t)n * REC_CALL > avail - REC_HEAD)
		return false;
	for (uint32_t k = 0; k < n; k++) {
		const uint8_t *c = rec + REC_HEAD + (size_t)k * REC_CALL;
		uint32_t sz = (uint32_t)le_get(c, 4), fl = (uint32_t)le_get(c + 8, 4);
		uint64_t off = le_get(c + 12, 8);
		if (sz > max || (fl & ~(uint32_t)SQFS_BLK_FLAGS_ALL) ||
		    (!(fl & SQFS_BLK_IS_SPARSE) && (off > data_size || sz > data_size - off)))
			return false;
	}
	*len = REC_HEAD + (size_t)n * REC_CALL;
	return true;
}

static int load_segment(struct file_cache *fc, const char *name)
{
	_cleanup_free_ char *idx = NULL, *data = NULL, *buf = NULL;
	size_t len = 0, nl = strlen(name), first = fc->n;
	struct stat st;
	ingot_error ie = { 0 };
	int dfd, ifd;

	if (fc->n_seg >= MAX_SEGMENTS) {
		fc->ignored++;
		return 0;
	}
	idx = xasprintf("%s/%s", fc->dir, name);
	data = xasprintf("%s/%.*s.data", fc->dir, (int)(nl - 4), name);
	if (read_file(idx, (size_t)1 << 30, &buf, &len, &ie) < 0 || len < IDX_HEAD ||
	    memcmp(buf, IDX_MAGIC, sizeof(IDX_MAGIC)))
		return 0;       /* not ours or damaged: ignored, never trusted */
	dfd = open_regular(data, O_NOFOLLOW, &st, &ie);
	if (dfd < 0)
		return 0;
	ifd = open_regular(idx, O_NOFOLLOW, NULL, &ie);
	if (ifd < 0) {
		close(dfd);
		return 0;
	}
	for (size_t p = IDX_HEAD; p < len;) {
		const uint8_t *rec = (const uint8_t *)buf + p;
		struct fc_entry ent = { .rec = (uint32_t)p, .seg = (uint32_t)fc->n_seg };
		size_t rl;
		if (len - p < REC_HEAD || !record_ok(fc->block_size, rec, len - p, (uint64_t)st.st_size, &rl)) {
			/* drop what this segment added: entries are appended in order;
			 * index again, as removing from open addressing breaks probe chains */
			fc->n = first;
			idxmap_rebuild(&fc->index, fc->n, entry_hash, fc);
			close(ifd);
			close(dfd);
			return 0;
		}
		memcpy(ent.sha, rec, 32);
		ent.size = le_get(rec + REC_SIZE, 8);
		add_loaded(fc, &ent);
		p += rl;
	}
	fc->data_fd[fc->n_seg] = dfd;
	fc->idx_fd[fc->n_seg] = ifd;
	fc->n_seg++;
	return 0;
}

int file_cache_open(const struct store *s, sqfs_compressor_t *cmp, uint32_t block_size,
		    const struct tree *t, struct file_cache **out, ingot_error *e)
{
	struct file_cache *fc = xcalloc(1, sizeof(*fc));
	uint8_t cid[32];
	char hex[SHA256_HEX_LEN + 1];
	struct dirent **names = NULL;
	int n, r = 0;

	*out = NULL;
	fc->s = s;
	fc->t = t;
	fc->block_size = block_size;
	fc->new_fd = fc->new_idx = -1;
	fc->cur = SIZE_MAX;
	pthread_mutex_init(&fc->lock, NULL);
	if ((r = block_cache_compressor_id(cmp, cid, e)) < 0)
		goto fail;
	hex_encode(cid, 16, hex);
	fc->dir = xasprintf("%s/files/%.32s", s->root, hex);
	if ((r = mkdir_p(fc->dir, 0755, e)) < 0)
		goto fail;
	fc->data_fd = xcalloc(MAX_SEGMENTS, sizeof(int));
	fc->idx_fd = xcalloc(MAX_SEGMENTS, sizeof(int));
	fc->state = xcalloc(t->n ? t->n : 1, 1);
	/* sorted: which segment wins a duplicate is the same every time */
	n = scandir(fc->dir, &names, NULL, alphasort);
	if (n < 0) {
		r = ingot_fail(e, -errno, "%s: %s", fc->dir, strerror(errno));
		goto fail;
	}
	for (int i = 0; i < n; i++) {
		size_t l = strlen(names[i]->d_name);
		if (l > 4 && !strcmp(names[i]->d_name + l - 4, ".idx"))
			load_segment(fc, names[i]->d_name);
		free(names[i]);
	}
	free(names);
	*out = fc;
	return 0;
fail:
	file_cache_close(fc);
	return r;
}

bool file_cache_has(const struct file_cache *fc, const uint8_t sha256[32], uint64_t size)
{
	return lookup(fc, sha256, size) != NULL;
}

void file_cache_hit_free(struct fc_hit *hit)
{
	free(hit->calls);
	hit->calls = NULL;
}

int file_cache_get(struct file_cache *fc, const uint8_t sha256[32], uint64_t size,
		   struct fc_hit *hit, ingot_error *e)
{
	const struct fc_entry *ent = lookup(fc, sha256, size);
	_cleanup_free_ uint8_t *raw = NULL, *buf = NULL;
	uint8_t head[REC_HEAD];
	uint64_t crc = 0;
	int ifd, ok = 1;

	(void)e;   /* kept for the callers: a damaged entry is a miss, and memory cannot fail */
	memset(hit, 0, sizeof(*hit));
	if (!ent)
		return 0;
	ifd = fc->idx_fd[ent->seg];
	hit->fd = fc->data_fd[ent->seg];
	if (pread_all(ifd, head, REC_HEAD, ent->rec) < 0 || memcmp(head, sha256, 32) ||
	    le_get(head + REC_SIZE, 8) != size)
		goto damaged;
	hit->n_calls = (uint32_t)le_get(head + REC_NCALLS, 4);
	hit->tail_len = (uint32_t)le_get(head + REC_TAIL_LEN, 4);
	hit->tail_off = le_get(head + REC_TAIL_OFF, 8);
	memcpy(hit->sha1, head + REC_SHA1, 20);
	raw = xmalloc((size_t)hit->n_calls * REC_CALL + 1);
	hit->calls = xcalloc(hit->n_calls + 1, sizeof(*hit->calls));
	buf = xmalloc(fc->block_size);
	if (!fc->get_run)
		fc->get_run = run_new();
	/* load_segment checked the bounds; the bytes are checked here */
	if (pread_all(ifd, raw, (size_t)hit->n_calls * REC_CALL, ent->rec + REC_HEAD) < 0)
		ok = 0;
	for (uint32_t k = 0; ok && k < hit->n_calls; k++) {
		struct fc_call *c = &hit->calls[k];
		const uint8_t *p = raw + (size_t)k * REC_CALL;
		c->size = (uint32_t)le_get(p, 4);
		c->checksum = (uint32_t)le_get(p + 4, 4);
		c->flags = (uint32_t)le_get(p + 8, 4);
		c->off = le_get(p + 12, 8);
		if (c->size > fc->block_size)
			ok = 0;
	}
	for (uint32_t k = 0; ok && k < hit->n_calls; k++) {
		const struct fc_call *c = &hit->calls[k];
		const uint8_t *d;
		if ((c->flags & SQFS_BLK_IS_SPARSE) || !c->size)
			continue;
		if (!(d = run_get(fc->get_run, hit->fd, hit->calls, hit->n_calls, k)))
			ok = 0;
		else
			crc = crc64_ecma_refl(crc, d, c->size);
	}
	if (ok && crc != le_get(head + REC_CRC_BLOCKS, 8))
		ok = 0;
	if (ok && hit->tail_len)
		ok = hit->tail_len <= fc->block_size &&
		     pread_all(hit->fd, buf, hit->tail_len, hit->tail_off) == 0 &&
		     crc64_ecma_refl(0, buf, hit->tail_len) == le_get(head + REC_CRC_TAIL, 8);
	if (ok) {
		atomic_fetch_add(&fc->hits, 1);
		return 1;
	}
damaged:
	file_cache_hit_free(hit);
	atomic_fetch_add(&fc->damaged, 1);
	return 0;
}

int file_cache_read_tail(const struct fc_hit *hit, uint8_t *buf)
{
	return hit->tail_len ? pread_all(hit->fd, buf, hit->tail_len, hit->tail_off) : 0;
}

/* What libsquashfs' process_completed_block does with each block, minus
 * the compression: the same writer calls, the same inode fields. */
static int replay(const struct fc_hit *hit, sqfs_block_writer_t *wr, const uint8_t *zero,
		  struct run *rn, struct fc_patch *p)
{
	p->sizes = xcalloc(hit->n_calls + 1, sizeof(*p->sizes));
	for (uint32_t k = 0; k < hit->n_calls; k++) {
		const struct fc_call *c = &hit->calls[k];
		bool sparse = c->flags & SQFS_BLK_IS_SPARSE;
		const uint8_t *d = zero;
		sqfs_u64 loc = 0;
		int r;
		if (!sparse && c->size && !(d = run_get(rn, hit->fd, hit->calls, hit->n_calls, k)))
			return SQFS_ERROR_IO;
		r = wr->write_data_block(wr, NULL, c->size, c->checksum, c->flags, d, &loc);
		if (r)
			return r;
		if (sparse) {
			p->sparse += c->size;
			p->sizes[p->n_sizes++] = 0;
		} else if (c->size) {
			p->sizes[p->n_sizes++] = c->size | ((c->flags & SQFS_BLK_IS_COMPRESSED) ? 0 : 1u << 24);
		}
		if (c->flags & SQFS_BLK_LAST_BLOCK) {
			p->start = loc;
			p->has_start = true;
		}
	}
	return 0;
}

int fc_patch_inode(sqfs_inode_generic_t **inode, const struct fc_patch *p)
{
	sqfs_inode_generic_t *in = *inode;
	size_t need = (size_t)p->n_sizes * sizeof(sqfs_u32);
	int r;

	if (in->payload_bytes_used)
		return SQFS_ERROR_INTERNAL;   /* a tail that went in as blocks */
	if (in->payload_bytes_available < need) {
		*inode = in = xrealloc(in, sizeof(*in) + need);   /* libsquashfs' malloc'd inode */
		in->payload_bytes_available = (sqfs_u32)need;
	}
	memcpy(in->extra, p->sizes, need);
	in->payload_bytes_used = (sqfs_u32)need;
	if (p->sparse) {
		sqfs_inode_make_extended(in);
		in->data.file_ext.sparse += p->sparse;
	}
	if ((r = sqfs_inode_set_file_size(in, p->file_size)))
		return r;
	if (p->has_start && (r = sqfs_inode_set_file_block_start(in, p->start)))
		return r;
	return 0;
}

/* ---- recording ---- */

static int new_segment(struct file_cache *fc)
{
	ingot_error ie = { 0 };
	if (fc->new_fd >= 0)
		return 0;
	if ((fc->new_fd = store_tmp_create(fc->s, "files", &fc->new_tmp, &ie)) < 0)
		return fc->new_fd;
	if ((fc->new_idx = store_tmp_create(fc->s, "files-idx", &fc->new_idx_tmp, &ie)) < 0)
		return fc->new_idx;
	/* without the thread (or its buffers) the writes are made here */
	if (writebehind_start(&fc->new_wb, fc->new_fd, 0, SEG_WB_SIZE, SEG_WB_NBUF) < 0)
		writebehind_free(&fc->new_wb);
	return write_all(fc->new_idx, IDX_MAGIC "\0", IDX_HEAD);
}

static int append_data(struct file_cache *fc, const void *data, size_t len, uint64_t *off)
{
	int r = new_segment(fc);
	if (r < 0)
		return r;
	if ((r = fc->new_wb.started ? writebehind_write(&fc->new_wb, data, len)
				    : write_all(fc->new_fd, data, len)) < 0)
		return r;
	*off = fc->new_off;
	fc->new_off += len;
	return 0;
}

static int flush_idx(struct file_cache *fc)
{
	int r = fc->idx_len ? write_all(fc->new_idx, fc->idx_buf, fc->idx_len) : 0;
	fc->idx_len = 0;
	return r;
}

static int append_idx(struct file_cache *fc, const void *rec, size_t len)
{
	int r;

	if (!fc->idx_buf)
		fc->idx_buf = xmalloc(IDX_BUF);
	if (fc->idx_len + len > IDX_BUF && (r = flush_idx(fc)) < 0)
		return r;
	if (len > IDX_BUF)
		return write_all(fc->new_idx, rec, len);
	memcpy(fc->idx_buf + fc->idx_len, rec, len);
	fc->idx_len += len;
	return 0;
}

static int write_record(struct file_cache *fc, size_t id, const struct fc_call *calls, size_t n,
			uint64_t crc_blocks)
{
	const struct tree_entry *ent = &fc->t->v[id];
	size_t len = REC_HEAD + n * REC_CALL;
	_cleanup_free_ uint8_t *rec = xcalloc(1, len);
	int r;

	memcpy(rec, ent->sha256, 32);
	le_put(rec + REC_SIZE, ent->size, 8);
	le_put(rec + REC_NCALLS, n, 4);
	le_put(rec + REC_TAIL_LEN, fc->tail_len[id], 4);
	le_put(rec + REC_TAIL_OFF, fc->tail_off[id], 8);
	le_put(rec + REC_CRC_BLOCKS, crc_blocks, 8);
	le_put(rec + REC_CRC_TAIL, fc->crc_tail[id], 8);
	memcpy(rec + REC_SHA1, fc->sha1[id], 20);
	for (size_t k = 0; k < n; k++) {
		uint8_t *c = rec + REC_HEAD + k * REC_CALL;
		le_put(c, calls[k].size, 4);
		le_put(c + 4, calls[k].checksum, 4);
		le_put(c + 8, calls[k].flags, 4);
		le_put(c + 12, calls[k].off, 8);
	}
	if ((r = new_segment(fc)) < 0 || (r = append_idx(fc, rec, len)) < 0)
		return r;
	atomic_fetch_add(&fc->recorded, 1);
	fc->state[id] = ST_DONE;
	return 0;
}

/* The blocks of entry cur are all written: its record goes out (if its
 * tail was noted, i.e. the file was fed whole). */
static int finish_current(struct file_cache *fc)
{
	size_t id = fc->cur;
	int r = 0;

	if (id == SIZE_MAX)
		return 0;
	fc->cur = SIZE_MAX;
	if (fc->state[id] == ST_TAIL)
		r = write_record(fc, id, fc->calls, fc->n_calls, fc->crc);
	fc->n_calls = 0;
	return r;
}

static int record_call(struct file_cache *fc, size_t id, sqfs_u32 size, sqfs_u32 checksum,
		       sqfs_u32 flags, const sqfs_u8 *data)
{
	struct fc_call c = { .size = size, .checksum = checksum, .flags = flags };
	int r;

	if (id != fc->cur) {
		if ((r = finish_current(fc)) < 0)
			return r;
		/* a file's blocks arrive together; if not, it is not cached */
		if (fc->state[id] == ST_DONE)
			fc->state[id] = ST_BAD;
		fc->cur = id;
		fc->crc = 0;
	}
	if (!(flags & SQFS_BLK_IS_SPARSE) && size) {
		if ((r = append_data(fc, data, size, &c.off)) < 0)
			return r;
		fc->crc = crc64_ecma_refl(fc->crc, data, size);
	}
	if (fc->n_calls == fc->calls_alloc) {
		size_t na = fc->calls_alloc ? fc->calls_alloc * 2 : 64;
		struct fc_call *nc = xrealloc(fc->calls, na * sizeof(*nc));
		fc->calls = nc;
		fc->calls_alloc = na;
	}
	fc->calls[fc->n_calls++] = c;
	return 0;
}

int file_cache_note(struct file_cache *fc, size_t id, const uint8_t sha1[20], const void *tail, size_t len)
{
	const struct tree_entry *ent = &fc->t->v[id];
	const uint8_t *b = tail;
	bool zero = len > 0;
	int r = 0;

	for (size_t k = 0; k < len && zero; k++)
		zero = !b[k];
	pthread_mutex_lock(&fc->lock);
	if (fc->new_err)
		goto out;
	if (!fc->tail_off) {
		size_t n = fc->t->n;
		fc->tail_off = xcalloc(n, sizeof(*fc->tail_off));
		fc->tail_len = xcalloc(n, sizeof(*fc->tail_len));
		fc->crc_tail = xcalloc(n, sizeof(*fc->crc_tail));
		fc->sha1 = xcalloc(n, sizeof(*fc->sha1));
	}
	/* an all-zero tail is a sparse block in the inode, which a replay
	 * would have to merge: such a file is simply not cached */
	if (zero || fc->state[id] != ST_NONE) {
		fc->state[id] = ST_BAD;
		goto out;
	}
	fc->tail_len[id] = (uint32_t)len;
	memcpy(fc->sha1[id], sha1, 20);
	if (len) {
		if ((r = append_data(fc, tail, len, &fc->tail_off[id])) < 0)
			goto out;
		fc->crc_tail[id] = crc64_ecma_refl(0, tail, len);
	}
	fc->state[id] = ST_TAIL;
	/* no whole block: no block writer call will finish it */
	if (ent->size < fc->block_size)
		r = write_record(fc, id, NULL, 0, 0);
out:
	if (r < 0)
		fc->new_err = r;
	pthread_mutex_unlock(&fc->lock);
	return 0;
}

/* The marker's flags: none of libsquashfs' own blocks (file data,
 * fragment blocks) carries DONT_COMPRESS unless a caller asks for it,
 * which image.c never does; kept whole (no sparse test, no tail). */
#define MARKER_FLAGS (SQFS_BLK_DONT_COMPRESS | SQFS_BLK_DONT_FRAGMENT | SQFS_BLK_DONT_DEDUPLICATE | \
		      SQFS_BLK_IGNORE_SPARSE | SQFS_BLK_DONT_HASH)

int file_cache_submit(sqfs_block_processor_t *proc, struct fc_job *job)
{
	static const uint8_t one = 1;
	return sqfs_block_processor_submit_block(proc, job, MARKER_FLAGS, &one, 1);
}

void file_cache_job_free(struct fc_job *job)
{
	if (!job)
		return;
	file_cache_hit_free(&job->hit);
	free(job->patch.sizes);
	free(job);
}

static int fcw_write(sqfs_block_writer_t *base, void *user, sqfs_u32 size, sqfs_u32 checksum,
		     sqfs_u32 flags, const sqfs_u8 *data, sqfs_u64 *location)
{
	struct fc_writer *w = (struct fc_writer *)base;
	struct file_cache *fc = w->fc;
	int r;

	if (user && (flags & MARKER_FLAGS) == MARKER_FLAGS) {
		struct fc_job *job = user;
		*location = 0;
		if (!fc->zero)
			fc->zero = xcalloc(1, fc->block_size);
		if (!fc->replay_run)
			fc->replay_run = run_new();
		r = replay(&job->hit, w->inner, fc->zero, fc->replay_run, &job->patch);
		/* the inode needs the patch only: the calls go now (memory per file) */
		file_cache_hit_free(&job->hit);
		return r;
	}
	r = w->inner->write_data_block(w->inner, user, size, checksum, flags, data, location);
	if (r || (flags & SQFS_BLK_FRAGMENT_BLOCK))
		return r;
	pthread_mutex_lock(&fc->lock);
	/* libsquashfs' end-of-file marker (a 0-byte LAST_BLOCK) carries no
	 * user pointer: it belongs to the file whose blocks it follows */
	if (!user && (flags & SQFS_BLK_LAST_BLOCK) && fc->cur != SIZE_MAX)
		user = (void *)(uintptr_t)(fc->cur + 1);
	if (user && !fc->new_err) {
		size_t id = (size_t)((uintptr_t)user - 1);
		int e2 = id < fc->t->n ? record_call(fc, id, size, checksum, flags, data) : -EINVAL;
		if (e2 < 0)
			fc->new_err = e2;
	}
	pthread_mutex_unlock(&fc->lock);
	return 0;
}

static sqfs_u64 fcw_count(const sqfs_block_writer_t *base)
{
	const struct fc_writer *w = (const struct fc_writer *)base;
	return w->inner->get_block_count(w->inner);
}

static void fcw_destroy(sqfs_object_t *obj)
{
	free(obj);
}

sqfs_block_writer_t *file_cache_writer(struct file_cache *fc, sqfs_block_writer_t *inner)
{
	struct fc_writer *w = xcalloc(1, sizeof(*w));
	w->base.base.destroy = fcw_destroy;
	w->base.write_data_block = fcw_write;
	w->base.get_block_count = fcw_count;
	w->inner = inner;
	w->fc = fc;
	return &w->base;
}

/* DIR/<time>-<pid> (<time>-<pid> when dir is NULL), malloc'd: names sort
 * by time, and older segments win duplicates. */
static char *segment_base(const char *dir)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return xasprintf("%s%s%016llx-%ld", dir ? dir : "", dir ? "/" : "",
			 (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec,
			 (long)getpid());
}

int file_cache_commit(struct file_cache *fc, ingot_error *e)
{
	_cleanup_free_ char *base = NULL, *data = NULL, *idx = NULL;
	int r;

	pthread_mutex_lock(&fc->lock);
	if (!fc->new_err && (r = finish_current(fc)) < 0)
		fc->new_err = r;
	if (!fc->new_err && fc->new_fd >= 0 && (r = flush_idx(fc)) < 0)
		fc->new_err = r;
	pthread_mutex_unlock(&fc->lock);
	/* every block written before the segment is named */
	if ((r = writebehind_finish(&fc->new_wb)) < 0 && !fc->new_err)
		fc->new_err = r;
	/* the cache is an optimisation: a segment that could not be written
	 * is dropped, the build stands */
	if (fc->new_err || fc->new_fd < 0)
		return 0;
	base = segment_base(fc->dir);
	data = xasprintf("%s.data", base);
	idx = xasprintf("%s.idx", base);
	r = store_tmp_commit(fc->new_fd, &fc->new_tmp, data, e);
	fc->new_fd = -1;
	if (r < 0)
		return r;
	r = store_tmp_commit(fc->new_idx, &fc->new_idx_tmp, idx, e);
	fc->new_idx = -1;
	return r;
}

void file_cache_stats(const struct file_cache *fc, struct file_cache_stats *st)
{
	struct file_cache *m = (struct file_cache *)fc;
	st->hits = atomic_load(&m->hits);
	st->recorded = atomic_load(&m->recorded);
	st->damaged = atomic_load(&m->damaged);
	st->segments_ignored = fc->ignored;
}

void file_cache_close(struct file_cache *fc)
{
	if (!fc)
		return;
	for (size_t i = 0; i < fc->n_seg; i++) {
		close(fc->data_fd[i]);
		close(fc->idx_fd[i]);
	}
	writebehind_free(&fc->new_wb);   /* its thread writes to new_fd */
	free(fc->idx_buf);
	store_tmp_abort(fc->new_fd, &fc->new_tmp);
	store_tmp_abort(fc->new_idx, &fc->new_idx_tmp);
	free(fc->data_fd);
	free(fc->idx_fd);
	free(fc->v);
	idxmap_free(&fc->index);
	free(fc->state);
	free(fc->tail_off);
	free(fc->tail_len);
	free(fc->crc_tail);
	free(fc->sha1);
	free(fc->calls);
	free(fc->zero);
	free(fc->get_run);
	free(fc->replay_run);
	free(fc->dir);
	pthread_mutex_destroy(&fc->lock);
	free(fc);
}

/* ---- compaction (ingot store gc) ---- */

struct compact {
	const struct store *s;
	file_cache_keep_fn keep;
	void *ctx;
	bool dry_run;
	struct strmap seen;            /* keys kept so far: older segments win */
	int data_fd, idx_fd;
	char *data_tmp, *idx_tmp;
	uint64_t off;                  /* next offset in the new .data */
	uint64_t kept, idx_len;        /* in this directory */
	uint8_t *buf;                  /* one block */
	struct file_cache_gc_stats *st;
};

/* len bytes at off of from into the new segment; *new_off says where. */
static int copy_range(struct compact *c, int from, uint64_t off, uint32_t len, uint64_t *new_off)
{
	int r;

	if ((r = pread_all(from, c->buf, len, off)) < 0)
		return r;
	if (!c->dry_run) {
		if (c->data_fd < 0 &&
		    (c->data_fd = store_tmp_create(c->s, "files", &c->data_tmp, &(ingot_error){ 0 })) < 0)
			return c->data_fd;
		if ((r = write_all(c->data_fd, c->buf, len)) < 0)
			return r;
	}
	*new_off = c->off;
	c->off += len;
	return 0;
}

void file_cache_key(const uint8_t sha256[32], uint64_t size, char key[FILE_CACHE_KEY_LEN])
{
	hex_encode(sha256, 32, key);
	snprintf(key + SHA256_HEX_LEN, FILE_CACHE_KEY_LEN - SHA256_HEX_LEN, ":%llu", (unsigned long long)size);
}

static int compact_record(struct compact *c, int dfd, const uint8_t *rec, size_t len)
{
	_cleanup_free_ uint8_t *out = xmalloc(len);
	uint32_t n = (uint32_t)le_get(rec + REC_NCALLS, 4), tail_len = (uint32_t)le_get(rec + REC_TAIL_LEN, 4);
	uint64_t size = le_get(rec + REC_SIZE, 8), at;
	char key[FILE_CACHE_KEY_LEN];
	int created = 0, r;

	file_cache_key(rec, size, key);
	if (!c->keep(c->ctx, rec, size))
		goto drop;
	strmap_put(&c->seen, key, &created);
	if (!created)
		goto drop;       /* also in an older segment, which wins */
	memcpy(out, rec, len);
	/* a file's blocks stay back to back, as the build wrote them: one
	 * read serves a run of them (run_get) */
	for (uint32_t k = 0; k < n; k++) {
		uint8_t *call = out + REC_HEAD + (size_t)k * REC_CALL;
		uint32_t sz = (uint32_t)le_get(call, 4), fl = (uint32_t)le_get(call + 8, 4);
		if ((fl & SQFS_BLK_IS_SPARSE) || !sz)
			continue;
		if ((r = copy_range(c, dfd, le_get(call + 12, 8), sz, &at)) < 0)
			return r;
		le_put(call + 12, at, 8);
	}
	if (tail_len) {
		if ((r = copy_range(c, dfd, le_get(rec + REC_TAIL_OFF, 8), tail_len, &at)) < 0)
			return r;
		le_put(out + REC_TAIL_OFF, at, 8);
	}
	if (!c->dry_run) {
		if (c->idx_fd < 0) {
			if ((c->idx_fd = store_tmp_create(c->s, "files-idx", &c->idx_tmp, &(ingot_error){ 0 })) < 0)
				return c->idx_fd;
			if ((r = write_all(c->idx_fd, IDX_MAGIC "\0", IDX_HEAD)) < 0)
				return r;
		}
		if ((r = write_all(c->idx_fd, out, len)) < 0)
			return r;
	}
	c->kept++;
	c->idx_len += len;
	c->st->kept++;
	return 0;
drop:
	c->st->removed++;
	return 0;
}

/* One segment's records into the new one; a damaged segment (a record out
 * of bounds, as load_segment would find it) is dropped whole. */
static int compact_segment(struct compact *c, int dirfd, const char *name, uint64_t *bytes)
{
	_cleanup_free_ char *data = NULL, *buf = NULL;
	_cleanup_close_ int dfd = -1, ifd = -1;
	size_t len = 0, nl = strlen(name), rl;
	struct stat st, ist;

	data = xasprintf("%.*s.data", (int)(nl - 4), name);
	/* regular files only, never through a symlink: anything else is not
	 * ours (the segment counts as damaged) */
	ifd = open_regular_at(dirfd, name, O_NOFOLLOW, &ist, &(ingot_error){ 0 });
	if (ifd >= 0)
		*bytes += (uint64_t)ist.st_size;
	dfd = open_regular_at(dirfd, data, O_NOFOLLOW, &st, &(ingot_error){ 0 });
	if (dfd >= 0)
		*bytes += (uint64_t)st.st_size;
	if (dfd < 0 || ifd < 0 || read_fd(ifd, name, &ist, (size_t)1 << 30, &buf, &len, &(ingot_error){ 0 }) < 0 ||
	    len < IDX_HEAD || memcmp(buf, IDX_MAGIC, sizeof(IDX_MAGIC)))
		goto damaged;
	for (size_t p = IDX_HEAD; p < len; p += rl)
		if (len - p < REC_HEAD || !record_ok(0, (uint8_t *)buf + p, len - p, (uint64_t)st.st_size, &rl))
			goto damaged;
	for (size_t p = IDX_HEAD; p < len; p += rl) {
		record_ok(0, (uint8_t *)buf + p, len - p, (uint64_t)st.st_size, &rl);
		int r = compact_record(c, dfd, (uint8_t *)buf + p, rl);
		if (r < 0)
			return r;
	}
	return 0;
damaged:
	c->st->damaged_segments++;
	return 0;
}

static bool is_idx(const char *name)
{
	size_t l = strlen(name);
	return l > 4 && !strcmp(name + l - 4, ".idx");
}

/* Remove every regular file of the directory but keep's .data and .idx
 * (old segments, and a .data whose .idx never came: a build killed while
 * committing); nothing else is touched. */
static void remove_others(int dirfd, char **names, size_t n, const char *keep)
{
	size_t kl = keep ? strlen(keep) : 0;

	for (size_t i = 0; i < n; i++) {
		const char *d = names[i];
		struct stat sb;
		if (!(keep && !strncmp(d, keep, kl) && (!strcmp(d + kl, ".data") || !strcmp(d + kl, ".idx"))) &&
		    fstatat(dirfd, d, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode))
			unlinkat(dirfd, d, 0);
	}
}

int file_cache_compact(const struct store *s, int pfd, const char *name, const char *dir,
		       file_cache_keep_fn keep, void *ctx, bool dry_run, struct file_cache_gc_stats *st,
		       ingot_error *e)
{
	struct compact c = { .s = s, .keep = keep, .ctx = ctx, .dry_run = dry_run,
			     .seen = STRMAP_INIT, .data_fd = -1, .idx_fd = -1, .st = st };
	_cleanup_free_ char *base = NULL, *data = NULL, *idx = NULL;
	_cleanup_close_ int dfd = -1;
	char **names = NULL;
	size_t n = 0;
	uint64_t before = 0;
	struct stat sb;
	int r = 0;

	/* never through a symlink: gc removes what is in here */
	if ((dfd = open_dir_at(pfd, name, &sb)) < 0)
		return ingot_fail(e, dfd, "%s: %s", dir, dfd == -ENOTDIR ? "expected a directory" : strerror(-dfd));
	/* sorted: the same entry wins a duplicate as in file_cache_open */
	if ((r = dir_names_at(dfd, &names, &n)) < 0)
		return ingot_fail(e, r, "%s: %s", dir, strerror(-r));
	c.buf = xmalloc(SQFS_MAX_BLOCK_SIZE);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		if (!is_idx(names[i]))
			continue;
		r = compact_segment(&c, dfd, names[i], &before);
		st->segments++;
	}
	st->bytes_before += before;
	if (r < 0) {
		r = ingot_fail(e, r, "file cache %s: %s", dir, strerror(-r));
	} else if (!dry_run && c.idx_fd >= 0) {
		base = segment_base(NULL);
		data = xasprintf("%s.data", base);
		idx = xasprintf("%s.idx", base);
		/* the .data first: an .idx marks a complete segment */
		if ((r = store_tmp_commit_at(c.data_fd, &c.data_tmp, dfd, data, dir, e)) >= 0 &&
			 (r = store_tmp_commit_at(c.idx_fd, &c.idx_tmp, dfd, idx, dir, e)) < 0)
			unlinkat(dfd, data, 0);
		c.data_fd = c.idx_fd = -1;
	}
	if (r >= 0)
		st->bytes_after += c.kept ? c.off + IDX_HEAD + c.idx_len : 0;
	/* the old segments go only once the new one is in place: a crash in
	 * between leaves duplicates, which the older copy wins */
	if (r >= 0 && !dry_run) {
		remove_others(dfd, names, n, c.kept ? base : NULL);
		if (!c.kept)
			unlinkat(pfd, name, AT_REMOVEDIR);   /* only if empty */
	}
	dir_names_free(names, n);
	store_tmp_abort(c.data_fd, &c.data_tmp);
	store_tmp_abort(c.idx_fd, &c.idx_tmp);
	strmap_free(&c.seen, NULL);
	free(c.buf);
	return r;
}
