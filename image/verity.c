/* dm-verity hash tree, in the on-disk format `veritysetup format` writes
 * (format version 1 with a superblock, sha256, 4096-byte data and hash
 * blocks):
 *
 *   hash file = [superblock, padded to 4096][top level]...[level 0]
 *
 * Level 0 holds H(salt || data block) for every data block, 128 digests
 * per hash block, the last block zero-padded; level i+1 hashes the
 * blocks of level i the same way, until a level fits in one block.  The
 * root hash is H(salt || that block) -- or, for a single data block,
 * H(salt || the data block) and no tree at all, as cryptsetup does.
 *
 * Build and check share one engine: building writes each hash block,
 * checking reads the stored one and compares.  While level 0 is hashed
 * a second thread computes the image's plain sha256 from the same
 * buffers, so the image is read once. */
#include "image/verity.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "lib/cleanup.h"
#include "lib/xalloc.h"
#include "lib/fileio.h"
#include "lib/le.h"
#include "lib/digest.h"

#define VBLOCK 4096u                 /* data and hash block size */
#define DIGEST 32u
#define PER_BLOCK (VBLOCK / DIGEST)  /* 128 digests per hash block */
#define PER_BLOCK_BITS 7
#define MAX_LEVELS 10                /* 7 * 10 > 64 bits of block numbers */
#define CHUNK (1u << 20)             /* image bytes read per step */
#define HBATCH 16u                   /* hash blocks written per step */
#define SB_SIZE 512u
#define MAX_SALT 256u

struct layout {
	uint64_t data_blocks;
	int levels;
	uint64_t start[MAX_LEVELS];      /* first hash block of level i in the file */
	uint64_t size[MAX_LEVELS];       /* hash blocks in level i */
	uint64_t file_blocks;            /* superblock block + tree */
};

static void compute_layout(uint64_t data_blocks, struct layout *l)
{
	uint64_t pos = 1;   /* block 0 holds the superblock */

	memset(l, 0, sizeof(*l));
	l->data_blocks = data_blocks;
	while (PER_BLOCK_BITS * l->levels < 64 &&
	       (data_blocks - 1) >> (PER_BLOCK_BITS * l->levels))
		l->levels++;
	for (int i = l->levels - 1; i >= 0; i--) {
		unsigned shift = (unsigned)(i + 1) * PER_BLOCK_BITS;
		l->size[i] = shift >= 64 ? 1 : (data_blocks + (1ull << shift) - 1) >> shift;
		l->start[i] = pos;
		pos += l->size[i];
	}
	l->file_blocks = pos;
}

struct vctx {
	const char *image_name, *hash_name;
	int image_fd, hash_fd;
	bool check;
	EVP_MD_CTX *salted;              /* state after the salt */
	EVP_MD_CTX *work;
	uint8_t *cmp;                    /* check: stored hash blocks */
	ingot_error *e;
};

static int hash_blocks(struct vctx *c, const uint8_t *data, size_t n, uint8_t *out)
{
	for (size_t i = 0; i < n; i++) {
		if (!EVP_MD_CTX_copy_ex(c->work, c->salted) ||
		    !EVP_DigestUpdate(c->work, data + i * VBLOCK, VBLOCK) ||
		    !EVP_DigestFinal_ex(c->work, out + i * DIGEST, NULL))
			return ingot_fail(c->e, -EIO, "%s: sha256 failed", c->hash_name);
	}
	return 0;
}


/* Write (build) or compare (check) n hash blocks at file block blk;
 * first is the index of the first one within its level. */
static int emit(struct vctx *c, const struct layout *l, int level, uint64_t first,
		const uint8_t *buf, size_t n)
{
	uint64_t blk = l->start[level] + first;
	int r;

	if (!c->check) {
		r = pwrite_all(c->hash_fd, buf, n * VBLOCK, blk * VBLOCK);
		if (r < 0)
			return ingot_fail(c->e, r, "%s: write failed: %s", c->hash_name,
					  strerror(-r));
		return 0;
	}
	r = pread_all(c->hash_fd, c->cmp, n * VBLOCK, blk * VBLOCK);
	if (r < 0)
		return ingot_fail(c->e, -EBADMSG, "%s: hash tree level %d: cannot read "
				  "block %llu: %s", c->hash_name, level,
				  (unsigned long long)blk,
				  r == -ENODATA ? "file truncated" : strerror(-r));
	for (size_t i = 0; i < n; i++) {
		if (memcmp(c->cmp + i * VBLOCK, buf + i * VBLOCK, VBLOCK) == 0)
			continue;
		if (level == 0) {
			uint64_t d0 = (first + i) * PER_BLOCK;
			uint64_t d1 = d0 + PER_BLOCK - 1;
			if (d1 >= l->data_blocks)
				d1 = l->data_blocks - 1;
			return ingot_fail(c->e, -EBADMSG, "%s: data blocks %llu..%llu do not "
					  "match the hash tree in %s", c->image_name,
					  (unsigned long long)d0, (unsigned long long)d1,
					  c->hash_name);
		}
		return ingot_fail(c->e, -EBADMSG, "%s: hash tree level %d block %llu does "
				  "not match its level below", c->hash_name, level,
				  (unsigned long long)(first + i));
	}
	return 0;
}

/* Plain sha256 of the image, fed by the level-0 loop from a second thread. */
struct sha_worker {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	EVP_MD_CTX *md;
	const uint8_t *buf;
	size_t len;
	bool busy, quit, started, failed;
};

static void *sha_main(void *arg)
{
	struct sha_worker *s = arg;

	pthread_mutex_lock(&s->mu);
	for (;;) {
		while (!s->busy && !s->quit)
			pthread_cond_wait(&s->cv, &s->mu);
		if (!s->busy)
			break;
		pthread_mutex_unlock(&s->mu);
		bool ok = EVP_DigestUpdate(s->md, s->buf, s->len);
		pthread_mutex_lock(&s->mu);
		s->failed |= !ok;
		s->busy = false;
		pthread_cond_broadcast(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

static void sha_wait(struct sha_worker *s)
{
	if (!s->started)
		return;
	pthread_mutex_lock(&s->mu);
	while (s->busy)
		pthread_cond_wait(&s->cv, &s->mu);
	pthread_mutex_unlock(&s->mu);
}

static void sha_submit(struct sha_worker *s, const uint8_t *buf, size_t len)
{
	if (!s->started) {
		s->failed |= !EVP_DigestUpdate(s->md, buf, len);
		return;
	}
	pthread_mutex_lock(&s->mu);
	while (s->busy)
		pthread_cond_wait(&s->cv, &s->mu);
	s->buf = buf;
	s->len = len;
	s->busy = true;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

static void sha_stop(struct sha_worker *s)
{
	if (!s->started)
		return;
	pthread_mutex_lock(&s->mu);
	while (s->busy)
		pthread_cond_wait(&s->cv, &s->mu);
	s->quit = true;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->th, NULL);
	s->started = false;
}

static int sha_start(struct sha_worker *s)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	s->md = EVP_MD_CTX_new();
	if (!s->md || !EVP_DigestInit_ex(s->md, EVP_sha256(), NULL))
		return -ENOMEM;
	/* Without a thread the digest is computed inline: slower, same result. */
	s->started = pthread_create(&s->th, NULL, sha_main, s) == 0;
	return 0;
}

static void sha_free(struct sha_worker *s)
{
	sha_stop(s);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	EVP_MD_CTX_free(s->md);
	s->md = NULL;
}

/* The image read ahead by a thread of its own, RA_N chunks at most, so
 * the disk works while both threads hash.  A build reads its new image
 * with O_DIRECT: the writer has already let it go from the page cache
 * (sqfs-io.c), and a read through the cache would take a fresh page for
 * every block and copy it again, which cost 0.7 s per GiB on the
 * development VM (docs/bench.md, "Fresh pages"). */
#define RA_N 4
struct reader {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int fd;
	uint64_t blocks, next;           /* data blocks in all / the next one to read */
	uint8_t *buf[RA_N];
	size_t nblk[RA_N];
	int err[RA_N];
	bool full[RA_N], quit, started;
};

static void *reader_main(void *arg)
{
	struct reader *rd = arg;

	for (unsigned k = 0;; k = (k + 1) % RA_N) {
		uint64_t at, left;
		size_t n;
		int r;

		pthread_mutex_lock(&rd->mu);
		while (rd->full[k] && !rd->quit)
			pthread_cond_wait(&rd->cv, &rd->mu);
		if (rd->quit || rd->next >= rd->blocks) {
			pthread_mutex_unlock(&rd->mu);
			break;
		}
		at = rd->next;
		left = rd->blocks - at;
		n = left < CHUNK / VBLOCK ? (size_t)left : CHUNK / VBLOCK;
		rd->next += n;
		pthread_mutex_unlock(&rd->mu);
		r = pread_all(rd->fd, rd->buf[k], n * VBLOCK, at * VBLOCK);
		pthread_mutex_lock(&rd->mu);
		rd->nblk[k] = n;
		rd->err[k] = r;
		rd->full[k] = true;
		pthread_cond_broadcast(&rd->cv);
		pthread_mutex_unlock(&rd->mu);
		if (r < 0)
			break;
	}
	return NULL;
}

static int reader_start(struct reader *rd, int fd, uint64_t blocks)
{
	memset(rd, 0, sizeof(*rd));
	rd->fd = fd;
	rd->blocks = blocks;
	for (unsigned k = 0; k < RA_N; k++)
		if (posix_memalign((void **)&rd->buf[k], VBLOCK, CHUNK))
			return -ENOMEM;
	pthread_mutex_init(&rd->mu, NULL);
	pthread_cond_init(&rd->cv, NULL);
	if (pthread_create(&rd->th, NULL, reader_main, rd))
		return -EAGAIN;
	rd->started = true;
	return 0;
}

/* Chunk k, once read: its blocks, or -errno of its read. */
static int reader_get(struct reader *rd, unsigned k, uint8_t **buf, size_t *nblk)
{
	int r;

	pthread_mutex_lock(&rd->mu);
	while (!rd->full[k])
		pthread_cond_wait(&rd->cv, &rd->mu);
	*buf = rd->buf[k];
	*nblk = rd->nblk[k];
	r = rd->err[k];
	pthread_mutex_unlock(&rd->mu);
	return r;
}

static void reader_put(struct reader *rd, unsigned k)
{
	pthread_mutex_lock(&rd->mu);
	rd->full[k] = false;
	pthread_cond_broadcast(&rd->cv);
	pthread_mutex_unlock(&rd->mu);
}

static void reader_free(struct reader *rd)
{
	if (rd->started) {
		pthread_mutex_lock(&rd->mu);
		rd->quit = true;
		pthread_cond_broadcast(&rd->cv);
		pthread_mutex_unlock(&rd->mu);
		pthread_join(rd->th, NULL);
		pthread_mutex_destroy(&rd->mu);
		pthread_cond_destroy(&rd->cv);
	}
	for (unsigned k = 0; k < RA_N; k++)
		free(rd->buf[k]);
}

/* The build's own image again, for reading past the page cache; or -1
 * (tmpfs and others refuse O_DIRECT: the cached fd is used then). */
static int reopen_direct(int fd)
{
	char p[64];

	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	return open(p, O_RDONLY | O_DIRECT | O_CLOEXEC);
}

/* Level 0 from the image (and its sha256 if image_sha256 is non-NULL). */
static int level0(struct vctx *c, const struct layout *l, uint8_t root[32],
		  uint8_t *image_sha256)
{
	_cleanup_free_ uint8_t *hb = xcalloc(HBATCH, VBLOCK);
	_cleanup_close_ int dfd = c->check ? -1 : reopen_direct(c->image_fd);
	struct sha_worker sw = { 0 };
	struct reader rd;
	uint64_t done = 0, hb_first = 0;
	size_t hb_fill = 0;   /* digests in hb */
	unsigned k = 0, prev = RA_N;
	int r;

	r = reader_start(&rd, dfd >= 0 ? dfd : c->image_fd, l->data_blocks);
	if (r < 0) {
		reader_free(&rd);
		return ingot_fail(c->e, r == -EAGAIN ? r : -ENOMEM, "%s: %s", c->image_name,
				  r == -EAGAIN ? "cannot start a thread" : "out of memory");
	}
	if (image_sha256 && sha_start(&sw) < 0) {
		sha_free(&sw);
		reader_free(&rd);
		return ingot_fail(c->e, -ENOMEM, "%s: out of memory", c->image_name);
	}
	while (done < l->data_blocks) {
		uint8_t *buf;
		size_t nblk;

		r = reader_get(&rd, k, &buf, &nblk);
		if (r < 0) {
			r = ingot_fail(c->e, r == -ENODATA ? -EBADMSG : r, "%s: read failed at "
				       "byte %llu: %s", c->image_name,
				       (unsigned long long)(done * VBLOCK),
				       r == -ENODATA ? "file shrank" : strerror(-r));
			break;
		}
		/* returns once the sha thread is done with the chunk before */
		if (image_sha256)
			sha_submit(&sw, buf, nblk * VBLOCK);
		if (prev != RA_N)
			reader_put(&rd, prev);
		for (size_t i = 0; i < nblk; ) {
			size_t room = HBATCH * PER_BLOCK - hb_fill;
			size_t n = nblk - i < room ? nblk - i : room;
			r = hash_blocks(c, buf + i * VBLOCK, n, hb + hb_fill * DIGEST);
			if (r < 0)
				break;
			hb_fill += n;
			i += n;
			if (hb_fill == HBATCH * PER_BLOCK && l->levels > 0) {
				r = emit(c, l, 0, hb_first, hb, HBATCH);
				if (r < 0)
					break;
				hb_first += HBATCH;
				hb_fill = 0;
				memset(hb, 0, HBATCH * VBLOCK);
			}
		}
		if (r < 0)
			break;
		done += nblk;
		prev = k;
		k = (k + 1) % RA_N;
	}
	sha_wait(&sw);
	reader_free(&rd);
	if (r == 0) {
		if (l->levels == 0)
			memcpy(root, hb, DIGEST);   /* one data block: its hash is the root */
		else if (hb_fill > 0)
			r = emit(c, l, 0, hb_first, hb, (hb_fill + PER_BLOCK - 1) / PER_BLOCK);
	}
	if (r == 0 && image_sha256) {
		sha_stop(&sw);
		if (sw.failed || !EVP_DigestFinal_ex(sw.md, image_sha256, NULL))
			r = ingot_fail(c->e, -EIO, "%s: sha256 failed", c->image_name);
	}
	if (image_sha256)
		sha_free(&sw);
	return r;
}

/* Levels 1.. from the level below as stored in the hash file (written
 * by us, or compared equal to what we computed), then the root. */
static int upper_levels(struct vctx *c, const struct layout *l, uint8_t root[32])
{
	_cleanup_free_ uint8_t *in = xmalloc((size_t)HBATCH * VBLOCK);
	_cleanup_free_ uint8_t *out = xcalloc(HBATCH, VBLOCK);
	int r;

	for (int lv = 1; lv < l->levels; lv++) {
		uint64_t src = 0, out_first = 0;
		size_t fill = 0;
		while (src < l->size[lv - 1]) {
			uint64_t left = l->size[lv - 1] - src;
			size_t n = left < HBATCH ? (size_t)left : HBATCH;
			/* Hash whole input batches; output fills in HBATCH*128 units. */
			if (n > HBATCH * PER_BLOCK - fill)
				n = HBATCH * PER_BLOCK - fill;
			r = pread_all(c->hash_fd, in, n * VBLOCK, (l->start[lv - 1] + src) * VBLOCK);
			if (r < 0)
				return ingot_fail(c->e, -EBADMSG, "%s: cannot read hash block: %s",
						  c->hash_name, r == -ENODATA ? "file truncated"
						  : strerror(-r));
			r = hash_blocks(c, in, n, out + fill * DIGEST);
			if (r < 0)
				return r;
			fill += n;
			src += n;
			if (fill == HBATCH * PER_BLOCK) {
				r = emit(c, l, lv, out_first, out, HBATCH);
				if (r < 0)
					return r;
				out_first += HBATCH;
				fill = 0;
				memset(out, 0, HBATCH * VBLOCK);
			}
		}
		if (fill > 0) {
			r = emit(c, l, lv, out_first, out, (fill + PER_BLOCK - 1) / PER_BLOCK);
			if (r < 0)
				return r;
			memset(out, 0, HBATCH * VBLOCK);
		}
	}
	if (l->levels > 0) {
		r = pread_all(c->hash_fd, in, VBLOCK, l->start[l->levels - 1] * VBLOCK);
		if (r < 0)
			return ingot_fail(c->e, -EBADMSG, "%s: cannot read top hash block: %s",
					  c->hash_name, r == -ENODATA ? "file truncated" : strerror(-r));
		r = hash_blocks(c, in, 1, root);
		if (r < 0)
			return r;
	}
	return 0;
}

static void md_freep(EVP_MD_CTX **m) { EVP_MD_CTX_free(*m); }

static int run_tree(struct vctx *c, const struct layout *l, const uint8_t *salt,
		    uint32_t salt_len, uint8_t root[32], uint8_t *image_sha256)
{
	_cleanup_(md_freep) EVP_MD_CTX *salted = EVP_MD_CTX_new();
	_cleanup_(md_freep) EVP_MD_CTX *work = EVP_MD_CTX_new();
	_cleanup_free_ uint8_t *cmp = c->check ? xmalloc((size_t)HBATCH * VBLOCK) : NULL;
	int r;

	if (!salted || !work)
		return ingot_fail(c->e, -ENOMEM, "%s: out of memory", c->hash_name);
	if (!EVP_DigestInit_ex(salted, EVP_sha256(), NULL) ||
	    !EVP_DigestUpdate(salted, salt, salt_len))
		return ingot_fail(c->e, -EIO, "%s: sha256 init failed", c->hash_name);
	c->salted = salted;
	c->work = work;
	c->cmp = cmp;
	r = level0(c, l, root, image_sha256);
	if (r == 0)
		r = upper_levels(c, l, root);
	c->salted = c->work = NULL;
	c->cmp = NULL;
	return r;
}


/* struct verity_sb of cryptsetup's lib/verity/verity.c, little endian. */
static void sb_encode(uint8_t sb[SB_SIZE], const uint8_t uuid[16], uint64_t data_blocks,
		      const uint8_t *salt, uint32_t salt_len)
{
	memset(sb, 0, SB_SIZE);
	memcpy(sb, "verity\0\0", 8);
	le_put(sb + 8, 1, 4);                  /* version */
	le_put(sb + 12, 1, 4);                 /* hash_type: 1 = salt first, padded digests */
	memcpy(sb + 16, uuid, 16);
	memcpy(sb + 32, "sha256", 6);      /* algorithm[32] */
	le_put(sb + 64, VBLOCK, 4);            /* data_block_size */
	le_put(sb + 68, VBLOCK, 4);            /* hash_block_size */
	le_put(sb + 72, data_blocks, 8);
	sb[80] = (uint8_t)salt_len;        /* salt_size (u16) */
	sb[81] = (uint8_t)(salt_len >> 8);
	if (salt_len)
		memcpy(sb + 88, salt, salt_len);   /* salt[256] */
}

void verity_uuid_for_salt(const uint8_t *salt, uint32_t salt_len, uint8_t uuid[16])
{
	static const char tag[] = "ingot-verity-uuid-v1"; /* hashed with its NUL */
	uint8_t d[32];
	_cleanup_free_ uint8_t *buf = xmalloc(sizeof(tag) + salt_len);

	memcpy(buf, tag, sizeof(tag));
	memcpy(buf + sizeof(tag), salt, salt_len);
	sha256_buf(buf, sizeof(tag) + salt_len, d);
	memcpy(uuid, d, 16);
	uuid[6] = (uint8_t)((uuid[6] & 0x0f) | 0x40);   /* version 4 */
	uuid[8] = (uint8_t)((uuid[8] & 0x3f) | 0x80);   /* RFC 4122 variant */
}

void verity_uuid_string(const uint8_t u[16], char out[37])
{
	char hex[33];

	hex_encode(u, 16, hex);
	snprintf(out, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16,
		 hex + 20);
}

void verity_salt_for_recipe(const uint8_t recipe_sha256[32], uint8_t salt[32])
{
	static const char tag[] = "ingot-verity-salt-v1"; /* hashed with its NUL */
	uint8_t buf[sizeof(tag) + 32];

	memcpy(buf, tag, sizeof(tag));
	memcpy(buf + sizeof(tag), recipe_sha256, 32);
	sha256_buf(buf, sizeof(buf), salt);
}

static int image_blocks(int fd, const char *name, uint64_t *size, uint64_t *blocks,
			ingot_error *e)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return ingot_fail(e, -errno, "%s: stat: %s", name, strerror(errno));
	if (st.st_size <= 0 || st.st_size % VBLOCK)
		return ingot_fail(e, -EINVAL, "%s: size: expected a non-zero multiple of %u "
				  "bytes, got %lld", name, VBLOCK, (long long)st.st_size);
	*size = (uint64_t)st.st_size;
	*blocks = *size / VBLOCK;
	return 0;
}

int verity_build(int image_fd, const char *image_name, int verity_fd, const char *verity_name,
		 const uint8_t *salt, uint32_t salt_len, struct verity_info *out, ingot_error *e)
{
	struct vctx c = { .image_name = image_name, .hash_name = verity_name,
			  .image_fd = image_fd, .hash_fd = verity_fd, .e = e };
	struct verity_info vi = { 0 };
	_cleanup_free_ uint8_t *blk0 = xcalloc(1, VBLOCK);
	struct layout l;
	int r;

	if (salt_len > sizeof(vi.salt))
		return ingot_fail(e, -EINVAL, "%s: salt: expected at most %zu bytes, got %u",
				  verity_name, sizeof(vi.salt), salt_len);
	r = image_blocks(image_fd, image_name, &vi.image_size, &vi.data_blocks, e);
	if (r < 0)
		return r;
	compute_layout(vi.data_blocks, &l);
	if (salt_len)
		memcpy(vi.salt, salt, salt_len);
	vi.salt_len = salt_len;
	vi.data_block_size = vi.hash_block_size = VBLOCK;
	vi.hash_offset = 0;
	verity_uuid_for_salt(salt, salt_len, vi.uuid);

	if (ftruncate(verity_fd, 0) < 0)
		return ingot_fail(e, -errno, "%s: truncate: %s", verity_name, strerror(errno));
	sb_encode(blk0, vi.uuid, vi.data_blocks, salt, salt_len);
	r = pwrite_all(verity_fd, blk0, VBLOCK, 0);
	if (r < 0)
		return ingot_fail(e, r, "%s: write failed: %s", verity_name, strerror(-r));
	r = run_tree(&c, &l, salt, salt_len, vi.root_hash, vi.image_sha256);
	if (r < 0)
		return r;
	if (out)
		*out = vi;
	return 0;
}

static int sb_decode(const uint8_t *sb, const char *name, uint64_t *data_blocks,
		     uint8_t salt[MAX_SALT], uint32_t *salt_len, ingot_error *e)
{
	uint32_t v;

	if (memcmp(sb, "verity\0\0", 8))
		return ingot_fail(e, -EBADMSG, "%s: expected a dm-verity superblock, got none "
				  "(bad signature)", name);
	if ((v = (uint32_t)le_get(sb + 8, 4)) != 1)
		return ingot_fail(e, -EBADMSG, "%s: version: expected 1, got %u", name, v);
	if ((v = (uint32_t)le_get(sb + 12, 4)) != 1)
		return ingot_fail(e, -EBADMSG, "%s: hash_type: expected 1, got %u", name, v);
	if (strncmp((const char *)sb + 32, "sha256", 32))
		return ingot_fail(e, -EBADMSG, "%s: algorithm: expected sha256, got '%.32s'",
				  name, (const char *)sb + 32);
	if ((v = (uint32_t)le_get(sb + 64, 4)) != VBLOCK)
		return ingot_fail(e, -EBADMSG, "%s: data_block_size: expected %u, got %u",
				  name, VBLOCK, v);
	if ((v = (uint32_t)le_get(sb + 68, 4)) != VBLOCK)
		return ingot_fail(e, -EBADMSG, "%s: hash_block_size: expected %u, got %u",
				  name, VBLOCK, v);
	*data_blocks = le_get(sb + 72, 8);
	if (*data_blocks == 0)
		return ingot_fail(e, -EBADMSG, "%s: data_blocks: expected at least 1, got 0", name);
	*salt_len = (uint32_t)sb[80] | (uint32_t)sb[81] << 8;
	if (*salt_len > MAX_SALT)
		return ingot_fail(e, -EBADMSG, "%s: salt_size: expected at most %u, got %u",
				  name, MAX_SALT, *salt_len);
	memcpy(salt, sb + 88, *salt_len);
	return 0;
}

/* sha256 of the first len bytes of fd (a block device holding the image). */
static int hash_prefix(int fd, const char *name, uint64_t len, uint8_t out[32], ingot_error *e)
{
	_cleanup_(md_freep) EVP_MD_CTX *md = EVP_MD_CTX_new();
	_cleanup_free_ uint8_t *buf = xmalloc(CHUNK);
	uint64_t off = 0;

	if (!md || !EVP_DigestInit_ex(md, EVP_sha256(), NULL))
		return ingot_fail(e, -ENOMEM, "%s: out of memory", name);
	while (off < len) {
		size_t n = len - off < CHUNK ? (size_t)(len - off) : CHUNK;
		int r = pread_all(fd, buf, n, off);
		if (r < 0)
			return ingot_fail(e, r == -ENODATA ? -EBADMSG : r, "%s: read failed at byte %llu: %s",
					  name, (unsigned long long)off,
					  r == -ENODATA ? "device shrank" : strerror(-r));
		if (!EVP_DigestUpdate(md, buf, n))
			return ingot_fail(e, -EIO, "%s: sha256 failed", name);
		off += n;
	}
	if (!EVP_DigestFinal_ex(md, out, NULL))
		return ingot_fail(e, -EIO, "%s: sha256 failed", name);
	return 0;
}

/* How many bytes of the image to read: all of a file; of a block device
 * (longer than the image it holds), the first `want`. */
static int image_extent(int fd, const char *name, uint64_t want, bool *is_dev, uint64_t *len,
			ingot_error *e)
{
	struct stat st;
	uint64_t dev;

	if (fstat(fd, &st) < 0)
		return ingot_fail(e, -errno, "%s: stat: %s", name, strerror(errno));
	*is_dev = S_ISBLK(st.st_mode);
	if (!*is_dev) {   /* open_regular_or_blockdev: then a regular file */
		*len = (uint64_t)st.st_size;
		return 0;
	}
	if (ioctl(fd, BLKGETSIZE64, &dev) < 0)
		return ingot_fail(e, -errno, "%s: size: %s", name, strerror(errno));
	if (dev < want)
		return ingot_fail(e, -EBADMSG, "%s: size: expected at least %llu bytes (the image), "
				  "got %llu", name, (unsigned long long)want, (unsigned long long)dev);
	*len = want;
	return 0;
}

int verity_check(const char *image_path, const char *verity_path, const uint8_t root_hash[32],
		 uint64_t device_len, struct image_digest *got, ingot_error *e)
{
	_cleanup_close_ int ifd = open_regular_or_blockdev(image_path, NULL, e);
	_cleanup_close_ int hfd = -1;
	uint8_t sb[SB_SIZE], salt[MAX_SALT], root[32];
	uint32_t salt_len = 0;
	uint64_t len = 0, blocks = 0;
	struct layout l;
	struct vctx c = { .image_name = image_path, .hash_name = verity_path, .check = true,
			  .e = e };
	bool is_dev = false;
	int r;

	if (ifd < 0)
		return ifd;
	r = image_extent(ifd, image_path, device_len, &is_dev, &len, e);
	if (r < 0)
		return r;
	if (!verity_path) {
		got->size = len;
		return is_dev ? hash_prefix(ifd, image_path, len, got->sha256, e)
			      : sha256_fd(ifd, image_path, got->sha256, &got->size, e);
	}
	hfd = open_regular_or_blockdev(verity_path, NULL, e);
	if (hfd < 0)
		return hfd;
	r = pread_all(hfd, sb, sizeof(sb), 0);
	if (r < 0)
		return ingot_fail(e, -EBADMSG, "%s: cannot read superblock: %s", verity_path,
				  r == -ENODATA ? "file too short" : strerror(-r));
	r = sb_decode(sb, verity_path, &blocks, salt, &salt_len, e);
	if (r < 0)
		return r;
	/* The tree must cover exactly the image: all of a file, and of a
	 * device the image's length. */
	if (len % VBLOCK || len / VBLOCK != blocks)
		return ingot_fail(e, -EBADMSG, "%s: data_blocks: expected %llu (%llu bytes of %s), "
				  "got %llu", verity_path, (unsigned long long)(len / VBLOCK),
				  (unsigned long long)len, image_path, (unsigned long long)blocks);
	compute_layout(blocks, &l);
	c.image_fd = ifd;
	c.hash_fd = hfd;
	r = run_tree(&c, &l, salt, salt_len, root, got->sha256);
	if (r < 0)
		return r;
	got->size = len;
	if (memcmp(root, root_hash, 32)) {
		char want[65], have[65];
		hex_encode(root_hash, 32, want);
		hex_encode(root, 32, have);
		return ingot_fail(e, -EBADMSG, "%s: verity root hash: expected %s, got %s",
				  image_path, want, have);
	}
	return 0;
}

int image_check_manifest(const struct manifest *m, const char *image_path, const char *verity_path,
			 struct image_digest *got, ingot_error *e)
{
	const char *want = m->image.sha256_hex;
	uint64_t want_size = m->image.size;
	char hex[65];
	int r;

	if (!(m->have & MF_IMAGE) || want_size == 0 || want_size > INT64_MAX)
		return ingot_fail(e, -EINVAL, "manifest: image.sha256 and image.size: expected a "
				  "digest and a size");
	if (verity_path && !(m->have & MF_VERITY))
		return ingot_fail(e, -EINVAL, "manifest: verity.root_hash: expected 64 hex digits");
	r = verity_check(image_path, verity_path, m->verity.root_hash, want_size, got, e);
	if (r < 0)
		return r;
	hex_encode(got->sha256, 32, hex);
	if (strcmp(hex, want))
		return ingot_fail(e, -EBADMSG, "%s: sha256 %s, but the signed manifest says %s",
				  image_path, hex, want);
	if (got->size != want_size)
		return ingot_fail(e, -EBADMSG, "%s: %llu bytes, but the signed manifest says %lld",
				  image_path, (unsigned long long)got->size, (long long)want_size);
	return 0;
}
