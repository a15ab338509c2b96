/* Compressed-block cache (see blockcache.h). */
#include "builder/blockcache.h"

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

#include <openssl/evp.h>

#include "image/sqfs-io.h"
#include "lib/cleanup.h"
#include "lib/digest.h"
#include "lib/fileio.h"
#include "lib/idxmap.h"
#include "lib/le.h"
#include "lib/xalloc.h"

#define IDX_MAGIC "ingot-blocks-v1"   /* 16 bytes with its NUL */
#define IDX_HEAD 16
#define IDX_REC 80                     /* key 32, digest 32, off 8, len 4, reserved 4 */
#define PROBE_SIZE 65536
#define MAX_SEGMENTS 1024              /* fds held open while a build runs */

struct bc_entry {
	uint8_t key[32];
	uint8_t digest[32];   /* sha256 of the compressed bytes */
	uint64_t off;
	uint32_t len;         /* 0: the compressor declined (block stored raw) */
	uint32_t seg;
};

struct block_cache {
	char *dir;            /* STORE/blocks/<compressor id> */
	const struct store *s;
	uint8_t cid[32];      /* compressor identity, part of every key */
	/* loaded segments: read-only while the build runs, so lookups from
	 * worker threads need no lock */
	struct bc_entry *v;
	size_t n;
	struct idxmap index;  /* of v */
	int *seg_fd;
	size_t n_seg;
	/* this build's segment, appended under lock */
	pthread_mutex_t lock;
	int new_fd;
	char *new_tmp;
	uint64_t new_off;
	struct bc_entry *nv;
	size_t nn, nalloc;
	int new_err;          /* first write error: the segment is dropped */
	atomic_ullong hits, misses, damaged;
};

struct ccmp {
	struct sqfs_cmp_wrap w;   /* first: freed through sqfs_destroy */
	struct block_cache *bc;
	uint32_t below;           /* only blocks shorter than this; 0: all */
};


static size_t key_hash(const uint8_t key[32])
{
	return (size_t)le_get(key, 8);
}

static size_t entry_hash(const void *bc, size_t i)
{
	return key_hash(((const struct block_cache *)bc)->v[i].key);
}

static bool entry_is(const void *bc, size_t i, const void *key)
{
	return !memcmp(((const struct block_cache *)bc)->v[i].key, key, 32);
}

static const struct bc_entry *lookup(struct block_cache *bc, const uint8_t key[32])
{
	size_t *s = idxmap_find(&bc->index, key_hash(key), entry_is, bc, key);
	return s && *s ? &bc->v[*s - 1] : NULL;
}

static void add_loaded(struct block_cache *bc, const struct bc_entry *ent, size_t *alloc)
{
	size_t *s;
	if (bc->n == *alloc) {
		size_t na = *alloc ? *alloc * 2 : 1024;
		struct bc_entry *nv = xrealloc(bc->v, na * sizeof(*nv));
		bc->v = nv;
		*alloc = na;
	}
	idxmap_reserve(&bc->index, bc->n, entry_hash, bc);
	s = idxmap_find(&bc->index, key_hash(ent->key), entry_is, bc, ent->key);
	if (*s)
		return;         /* the same block in two segments: first wins */
	bc->v[bc->n] = *ent;
	*s = ++bc->n;
}

/* Settings and observed behaviour: the same settings under a library that
 * compresses differently must not share entries. */
int block_cache_compressor_id(sqfs_compressor_t *cmp, uint8_t cid[32], ingot_error *e)
{
	sqfs_compressor_config_t cfg;
	_cleanup_free_ uint8_t *probe = xmalloc(PROBE_SIZE), *out = xmalloc(PROBE_SIZE);
	EVP_MD_CTX *d = EVP_MD_CTX_new();
	uint8_t head[16];
	uint32_t x = 2463534242u;
	sqfs_s32 n;
	int ok;

	if (!d)   /* OpenSSL's own allocation */
		return ingot_fail(e, -ENOMEM, "out of memory");
	memset(&cfg, 0, sizeof(cfg));
	cmp->get_configuration(cmp, &cfg);
	/* half text-like, half noise: both paths of a compressor */
	for (size_t i = 0; i < PROBE_SIZE / 2; i++)
		probe[i] = (uint8_t)"ingot compressor probe block\n"[i % 29];
	for (size_t i = PROBE_SIZE / 2; i < PROBE_SIZE; i++) {
		x ^= x << 13; x ^= x >> 17; x ^= x << 5;
		probe[i] = (uint8_t)x;
	}
	n = cmp->do_block(cmp, probe, PROBE_SIZE, out, PROBE_SIZE);
	if (n < 0) {
		EVP_MD_CTX_free(d);
		return ingot_fail(e, -EIO, "block cache: probe compression failed (%d)", (int)n);
	}
	le_put(head, cfg.id, 2);
	le_put(head + 2, cfg.flags, 2);
	le_put(head + 4, cfg.block_size, 4);
	le_put(head + 8, cfg.level, 4);
	le_put(head + 12, (uint32_t)n, 4);
	ok = EVP_DigestInit_ex(d, EVP_sha256(), NULL) && EVP_DigestUpdate(d, IDX_MAGIC, sizeof(IDX_MAGIC)) &&
	     EVP_DigestUpdate(d, head, sizeof(head)) && EVP_DigestUpdate(d, &cfg.opt, sizeof(cfg.opt)) &&
	     EVP_DigestUpdate(d, out, (size_t)n) && EVP_DigestFinal_ex(d, cid, NULL);
	EVP_MD_CTX_free(d);
	return ok ? 0 : ingot_fail(e, -EIO, "sha256 failed");
}

static void load_segment(struct block_cache *bc, const char *name, size_t *alloc)
{
	_cleanup_free_ char *idx = NULL, *data = NULL, *buf = NULL;
	size_t len = 0, nl = strlen(name);
	struct stat st;
	ingot_error ie = { 0 };
	int fd;

	if (bc->n_seg >= MAX_SEGMENTS)
		return;
	idx = xasprintf("%s/%s", bc->dir, name);
	data = xasprintf("%s/%.*s.data", bc->dir, (int)(nl - 4), name);
	if (read_file(idx, (size_t)1 << 30, &buf, &len, &ie) < 0 || len < IDX_HEAD ||
	    memcmp(buf, IDX_MAGIC, IDX_HEAD) || (len - IDX_HEAD) % IDX_REC)
		return;         /* not ours or damaged: ignored, never trusted */
	fd = open_regular(data, O_NOFOLLOW, &st, &ie);
	if (fd < 0)
		return;
	bc->seg_fd[bc->n_seg] = fd;
	for (size_t p = IDX_HEAD; p < len; p += IDX_REC) {
		const uint8_t *rec = (const uint8_t *)buf + p;
		struct bc_entry ent = { .seg = (uint32_t)bc->n_seg };
		memcpy(ent.key, rec, 32);
		memcpy(ent.digest, rec + 32, 32);
		ent.off = le_get(rec + 64, 8);
		ent.len = (uint32_t)le_get(rec + 72, 4);
		if (ent.off > (uint64_t)st.st_size || ent.len > (uint64_t)st.st_size - ent.off)
			continue;
		add_loaded(bc, &ent, alloc);
	}
	bc->n_seg++;
}

bool block_cache_pays(const sqfs_compressor_config_t *cfg)
{
	switch (cfg->id) {
	case SQFS_COMP_LZ4:
		return false;
	case SQFS_COMP_ZSTD:
		return cfg->level >= 6;
	default:                /* gzip, xz, lzma: tens of MB/s */
		return true;
	}
}

int block_cache_open(const struct store *s, sqfs_compressor_t *cmp, struct block_cache **out,
		     ingot_error *e)
{
	struct block_cache *bc = xcalloc(1, sizeof(*bc));
	char hex[SHA256_HEX_LEN + 1];
	struct dirent **names = NULL;
	size_t alloc = 0;
	int n, r = 0;

	*out = NULL;
	bc->s = s;
	bc->new_fd = -1;
	pthread_mutex_init(&bc->lock, NULL);
	if ((r = block_cache_compressor_id(cmp, bc->cid, e)) < 0)
		goto fail;
	hex_encode(bc->cid, 16, hex);
	bc->dir = xasprintf("%s/blocks/%.32s", s->root, hex);
	if ((r = mkdir_p(bc->dir, 0755, e)) < 0)
		goto fail;
	bc->seg_fd = xcalloc(MAX_SEGMENTS, sizeof(int));
	/* sorted: which segment wins a duplicate is the same every time */
	n = scandir(bc->dir, &names, NULL, alphasort);
	if (n < 0) {
		r = ingot_fail(e, -errno, "%s: %s", bc->dir, strerror(errno));
		goto fail;
	}
	for (int i = 0; i < n; i++) {
		size_t l = strlen(names[i]->d_name);
		if (l > 4 && !strcmp(names[i]->d_name + l - 4, ".idx"))
			load_segment(bc, names[i]->d_name, &alloc);
		free(names[i]);
	}
	free(names);
	*out = bc;
	return 0;
fail:
	block_cache_close(bc);
	return r;
}

static int key_for(const struct block_cache *bc, const uint8_t *in, uint32_t size, uint8_t key[32])
{
	EVP_MD_CTX *d = EVP_MD_CTX_new();
	uint8_t sz[4];
	int ok;

	le_put(sz, size, 4);
	ok = d && EVP_DigestInit_ex(d, EVP_sha256(), NULL) && EVP_DigestUpdate(d, bc->cid, 32) &&
	     EVP_DigestUpdate(d, sz, 4) && EVP_DigestUpdate(d, in, size) && EVP_DigestFinal_ex(d, key, NULL);
	EVP_MD_CTX_free(d);
	return ok ? 0 : -ENOMEM;
}

static void record(struct block_cache *bc, const uint8_t key[32], const uint8_t *out, sqfs_s32 n)
{
	struct bc_entry ent = { .len = (uint32_t)n };
	ingot_error ie = { 0 };

	memcpy(ent.key, key, 32);
	if (n > 0)
		sha256_buf(out, (size_t)n, ent.digest);
	pthread_mutex_lock(&bc->lock);
	if (bc->new_err)
		goto out;
	if (bc->new_fd < 0 && (bc->new_fd = store_tmp_create(bc->s, "blocks", &bc->new_tmp, &ie)) < 0) {
		bc->new_err = bc->new_fd;
		goto out;
	}
	if (bc->nn == bc->nalloc) {
		size_t na = bc->nalloc ? bc->nalloc * 2 : 1024;
		bc->nv = xrealloc(bc->nv, na * sizeof(*bc->nv));
		bc->nalloc = na;
	}
	ent.off = bc->new_off;
	if (n > 0) {
		int r = write_all(bc->new_fd, out, (size_t)n);
		if (r < 0) {
			bc->new_err = r;
			goto out;
		}
		bc->new_off += (uint64_t)n;
	}
	bc->nv[bc->nn++] = ent;
out:
	pthread_mutex_unlock(&bc->lock);
}

static sqfs_s32 cached_do_block(sqfs_compressor_t *base, const sqfs_u8 *in, sqfs_u32 size,
				sqfs_u8 *out, sqfs_u32 outsize)
{
	struct ccmp *c = (struct ccmp *)base;
	struct block_cache *bc = c->bc;
	const struct bc_entry *h;
	uint8_t key[32], got[32];
	sqfs_s32 n;

	if (c->below && size >= c->below)
		return c->w.inner->do_block(c->w.inner, in, size, out, outsize);
	if (key_for(bc, in, size, key) < 0)
		return c->w.inner->do_block(c->w.inner, in, size, out, outsize);
	h = lookup(bc, key);
	if (h && h->len <= outsize) {
		if (h->len == 0) {
			atomic_fetch_add(&bc->hits, 1);
			return 0;
		}
		if (pread_all(bc->seg_fd[h->seg], out, h->len, h->off) == 0) {
			sha256_buf(out, h->len, got);
			if (!memcmp(got, h->digest, 32)) {
				atomic_fetch_add(&bc->hits, 1);
				return (sqfs_s32)h->len;
			}
		}
		atomic_fetch_add(&bc->damaged, 1);
	}
	atomic_fetch_add(&bc->misses, 1);
	n = c->w.inner->do_block(c->w.inner, in, size, out, outsize);
	if (n >= 0)
		record(bc, key, out, n);
	return n;
}

static sqfs_object_t *ccmp_copy(const sqfs_object_t *obj)
{
	const struct ccmp *c = (const struct ccmp *)obj;
	return (sqfs_object_t *)block_cache_wrap_below(c->bc, c->w.inner, c->below);
}


static sqfs_compressor_t *wrap_owned(struct block_cache *bc, sqfs_compressor_t *inner, uint32_t below)
{
	struct ccmp *c = xcalloc(1, sizeof(*c));
	c->bc = bc;
	c->below = below;
	sqfs_cmp_wrap_init(&c->w, inner, cached_do_block, ccmp_copy);
	return &c->w.base;
}

sqfs_compressor_t *block_cache_wrap_below(struct block_cache *bc, sqfs_compressor_t *inner, uint32_t below)
{
	sqfs_compressor_t *copy = sqfs_copy(inner);
	return copy ? wrap_owned(bc, copy, below) : NULL;
}

sqfs_compressor_t *block_cache_wrap(struct block_cache *bc, sqfs_compressor_t *inner)
{
	return block_cache_wrap_below(bc, inner, 0);
}

int block_cache_commit(struct block_cache *bc, ingot_error *e)
{
	_cleanup_free_ char *base = NULL, *data = NULL, *idx = NULL;
	_cleanup_free_ uint8_t *buf = NULL;
	struct timespec ts;
	size_t len;
	int r;

	if (bc->new_err) {
		/* the cache is an optimisation: a segment that could not be
		 * written is dropped, the build stands */
		return 0;
	}
	if (bc->new_fd < 0)
		return 0;
	len = IDX_HEAD + bc->nn * IDX_REC;
	buf = xcalloc(1, len);
	memcpy(buf, IDX_MAGIC, IDX_HEAD);
	for (size_t i = 0; i < bc->nn; i++) {
		uint8_t *rec = buf + IDX_HEAD + i * IDX_REC;
		memcpy(rec, bc->nv[i].key, 32);
		memcpy(rec + 32, bc->nv[i].digest, 32);
		le_put(rec + 64, bc->nv[i].off, 8);
		le_put(rec + 72, bc->nv[i].len, 4);
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	/* names sort by time: older segments win duplicates */
	base = xasprintf("%s/%016llx-%ld", bc->dir,
			 (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec, (long)getpid());
	data = xasprintf("%s.data", base);
	idx = xasprintf("%s.idx", base);
	r = store_tmp_commit(bc->new_fd, &bc->new_tmp, data, e);
	bc->new_fd = -1;
	if (r < 0)
		return r;
	return store_write_file(bc->s, idx, buf, len, e);
}

void block_cache_stats(const struct block_cache *bc, struct block_cache_stats *st)
{
	st->hits = atomic_load(&((struct block_cache *)bc)->hits);
	st->misses = atomic_load(&((struct block_cache *)bc)->misses);
	st->damaged = atomic_load(&((struct block_cache *)bc)->damaged);
}

void block_cache_close(struct block_cache *bc)
{
	if (!bc)
		return;
	for (size_t i = 0; i < bc->n_seg; i++)
		close(bc->seg_fd[i]);
	store_tmp_abort(bc->new_fd, &bc->new_tmp);
	free(bc->seg_fd);
	free(bc->v);
	idxmap_free(&bc->index);
	free(bc->nv);
	free(bc->dir);
	pthread_mutex_destroy(&bc->lock);
	free(bc);
}
