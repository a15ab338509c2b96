#include "image/sqfs-io.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqfs/error.h>
#include <sqfs/super.h>

#include "lib/writebehind.h"
#include "lib/xalloc.h"

/* The image is fsync'd before it is renamed into place; starting
 * writeback every 32 MiB lets the disk work while blocks are still being
 * compressed, instead of all at once in that fsync.  Only a hint, given
 * by a thread of its own: sync_file_range() submits the I/O in the
 * caller's context and waits when the disk's queue is full, which cost
 * the thread feeding the compressors about 1.2 s per GiB (docs/bench.md). */
#define WRITEBACK_STEP (32u << 20)

struct flusher {
	pthread_t tid;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t want, done;    /* writeback asked up to / started up to */
	uint64_t dropped;       /* written back and dropped from the cache up to */
	bool stop;
};

struct fd_file {
	sqfs_file_t base;   /* first: libsquashfs casts to it */
	int fd;
	uint64_t size;
	uint64_t flushed;   /* writeback asked for up to here */
	int err;
	struct flusher *fl; /* NULL until the first hint, or if it cannot start */
	struct writebehind *wb; /* appends go through it (sqfs_fd_writebehind) */
};

/* Image appends are handed to a write-behind thread: copying 1 GiB into
 * the page cache costs 0.5-2 s of system CPU on the development VM, which
 * held up the thread that feeds the compressors and replays cached
 * blocks (docs/bench.md).  Anything else (a write elsewhere, a read, a
 * truncate) first waits for the queue, so the file always reads as if
 * every write had been made in place. */
/* 4 x 1 MiB put the 4 GiB rebuild's peak RSS at 62.4 MiB (limit 64,
 * docs/bench.md); 4 x 512 KiB: 59.6 MiB, in the same time. */
#define WB_BUF (512u << 10)
#define WB_NBUF 4

static void wb_drain(struct fd_file *f)
{
	int r;

	if (f->wb && (r = writebehind_flush(f->wb)) < 0 && !f->err)
		f->err = -r;
}

/* After a write elsewhere or a truncate: appends go on from the new end. */
static void wb_resume(struct fd_file *f)
{
	if (f->wb)
		writebehind_seek(f->wb, f->size);
}

static void *flusher_main(void *arg)
{
	struct fd_file *f = arg;
	struct flusher *fl = f->fl;

	pthread_mutex_lock(&fl->lock);
	for (;;) {
		uint64_t from = fl->done, to = fl->want;
		if (from == to) {
			if (fl->stop)
				break;
			pthread_cond_wait(&fl->cond, &fl->lock);
			continue;
		}
		pthread_mutex_unlock(&fl->lock);
		sync_file_range(f->fd, (off_t)from, (off_t)(to - from), SYNC_FILE_RANGE_WRITE);
		/* What was written back before this range leaves the page
		 * cache: the image is written once and read once more, from
		 * the start (verity.c), so keeping it cached only makes the
		 * kernel find a fresh page for every block, which is what
		 * copying it in costs on a VM that returns free memory to its
		 * host (docs/bench.md, "Fresh pages").  Pages given back here
		 * are the ones the next writes get. */
		if (from > fl->dropped) {
			sync_file_range(f->fd, (off_t)fl->dropped, (off_t)(from - fl->dropped),
					SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
					SYNC_FILE_RANGE_WAIT_AFTER);
			posix_fadvise(f->fd, (off_t)fl->dropped, (off_t)(from - fl->dropped), POSIX_FADV_DONTNEED);
			fl->dropped = from;
		}
		pthread_mutex_lock(&fl->lock);
		fl->done = to;
	}
	pthread_mutex_unlock(&fl->lock);
	return NULL;
}

/* Ask for writeback up to end; without a thread, nothing (a hint). */
static void writeback_hint(struct fd_file *f, uint64_t end)
{
	if (!f->fl) {
		struct flusher *fl = xcalloc(1, sizeof(*fl));
		pthread_mutex_init(&fl->lock, NULL);
		pthread_cond_init(&fl->cond, NULL);
		f->fl = fl;   /* done = 0: the first hint covers the file from its start */
		if (pthread_create(&fl->tid, NULL, flusher_main, f)) {
			pthread_cond_destroy(&fl->cond);
			pthread_mutex_destroy(&fl->lock);
			free(fl);
			f->fl = NULL;
			return;
		}
	}
	pthread_mutex_lock(&f->fl->lock);
	f->fl->want = end;
	pthread_cond_signal(&f->fl->cond);
	pthread_mutex_unlock(&f->fl->lock);
}

static void fd_file_destroy(sqfs_object_t *obj)
{
	struct fd_file *f = (struct fd_file *)obj;

	if (f->wb) {
		writebehind_free(f->wb);
		free(f->wb);
	}
	if (f->fl) {
		pthread_mutex_lock(&f->fl->lock);
		f->fl->stop = true;
		pthread_cond_signal(&f->fl->cond);
		pthread_mutex_unlock(&f->fl->lock);
		pthread_join(f->fl->tid, NULL);
		pthread_cond_destroy(&f->fl->cond);
		pthread_mutex_destroy(&f->fl->lock);
		free(f->fl);
	}
	free(f);
}

/* After a failed write the file is "dead": further I/O is accepted and
 * dropped, and the caller stops at its next sqfs_fd_errno() check.  An
 * error returned to libsquashfs 1.2's block processor while its queue is
 * full loses the block in hand (append_to_work_queue returns before
 * freeing it): a leak on every ENOSPC.  The output is thrown away anyway. */
static int fd_read_at(sqfs_file_t *base, sqfs_u64 off, void *buf, size_t size)
{
	struct fd_file *f = (struct fd_file *)base;
	uint8_t *p = buf;

	wb_drain(f);
	if (f->err) {
		memset(buf, 0, size);
		return 0;
	}
	if (off > f->size || size > f->size - off)
		return SQFS_ERROR_OUT_OF_BOUNDS;
	while (size > 0) {
		ssize_t n = pread(f->fd, p, size, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			f->err = n < 0 ? errno : EIO;
			return SQFS_ERROR_IO;
		}
		p += n;
		off += (uint64_t)n;
		size -= (size_t)n;
	}
	return 0;
}

static int fd_write_at(sqfs_file_t *base, sqfs_u64 off, const void *buf, size_t size)
{
	struct fd_file *f = (struct fd_file *)base;
	const uint8_t *p = buf;
	uint64_t end = off + size, written;
	bool queued = f->wb && off == f->size;
	int r;

	if (!queued)
		wb_drain(f);
	else if (!f->err && (r = writebehind_write(f->wb, p, size)) < 0)
		f->err = -r;
	while (!queued && size > 0 && !f->err) {
		ssize_t n = pwrite(f->fd, p, size, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			f->err = n < 0 ? errno : EIO;
			break;
		}
		p += n;
		off += (uint64_t)n;
		size -= (size_t)n;
	}
	if (end > f->size)
		f->size = end;
	if (!queued)
		wb_resume(f);
	/* what the write-behind may still hold is not in the page cache yet */
	written = f->size;
	if (f->wb)
		written = written > (uint64_t)WB_BUF * WB_NBUF ? written - (uint64_t)WB_BUF * WB_NBUF : 0;
	if (!f->err && written > f->flushed + WRITEBACK_STEP) {
		f->flushed = written;
		writeback_hint(f, f->flushed);
	}
	return 0;
}

static sqfs_u64 fd_get_size(const sqfs_file_t *base)
{
	return ((const struct fd_file *)base)->size;
}

/* The block writer truncates after dropping a duplicate block. */
static int fd_truncate(sqfs_file_t *base, sqfs_u64 size)
{
	struct fd_file *f = (struct fd_file *)base;

	wb_drain(f);
	if (!f->err && ftruncate(f->fd, (off_t)size) < 0)
		f->err = errno;
	f->size = size;
	wb_resume(f);
	return 0;
}

sqfs_file_t *sqfs_fd_file(int fd, uint64_t size)
{
	struct fd_file *f = xcalloc(1, sizeof(*f));

	f->base.base.destroy = fd_file_destroy;
	f->base.base.copy = NULL;
	f->base.read_at = fd_read_at;
	f->base.write_at = fd_write_at;
	f->base.get_size = fd_get_size;
	f->base.truncate = fd_truncate;
	f->fd = fd;
	f->size = size;
	return &f->base;
}

int sqfs_fd_errno(const sqfs_file_t *f)
{
	return ((const struct fd_file *)f)->err;
}

int sqfs_fd_writebehind(sqfs_file_t *base)
{
	struct fd_file *f = (struct fd_file *)base;
	int r;

	if (f->wb)
		return 0;
	f->wb = xcalloc(1, sizeof(*f->wb));
	if ((r = writebehind_start(f->wb, f->fd, f->size, WB_BUF, WB_NBUF)) < 0) {
		writebehind_free(f->wb);
		free(f->wb);
		f->wb = NULL;
	}
	return r;
}

int sqfs_fd_flush(sqfs_file_t *base)
{
	struct fd_file *f = (struct fd_file *)base;

	wb_drain(f);
	return f->err;
}

static const struct {
	const char *name;
	SQFS_COMPRESSOR id;
	int min, max;   /* level range; min = max = 0: no levels */
} compressors[] = {
	{ "zstd", SQFS_COMP_ZSTD, SQFS_ZSTD_MIN_LEVEL, SQFS_ZSTD_MAX_LEVEL },
	{ "xz",   SQFS_COMP_XZ,   SQFS_XZ_MIN_LEVEL,   SQFS_XZ_MAX_LEVEL },
	{ "gzip", SQFS_COMP_GZIP, SQFS_GZIP_MIN_LEVEL, SQFS_GZIP_MAX_LEVEL },
	{ "lzma", SQFS_COMP_LZMA, SQFS_LZMA_MIN_LEVEL, SQFS_LZMA_MAX_LEVEL },
	{ "lz4",  SQFS_COMP_LZ4,  0, 0 },
};

int sqfs_compressor_setup(const char *name, int level, uint32_t block_size,
			  sqfs_compressor_config_t *cfg, ingot_error *e)
{
	size_t i;
	int r;

	if (!name || !*name)
		name = "zstd";
	if (!strcmp(name, "lzo"))
		return ingot_fail(e, -ENOTSUP, "compression: 'lzo' is not available in "
				  "libsquashfs (its LZO support is GPL-only); use zstd, xz, "
				  "gzip, lzma or lz4");
	for (i = 0; i < sizeof(compressors) / sizeof(compressors[0]); i++)
		if (!strcmp(name, compressors[i].name))
			break;
	if (i == sizeof(compressors) / sizeof(compressors[0]))
		return ingot_fail(e, -EINVAL, "compression: expected one of zstd, xz, gzip, "
				  "lzma, lz4, got '%s'", name);
	if (block_size < SQFS_MIN_BLOCK_SIZE || block_size > SQFS_MAX_BLOCK_SIZE ||
	    (block_size & (block_size - 1)))
		return ingot_fail(e, -EINVAL, "block_size: expected a power of two from "
				  "4096 to 1048576, got %u", block_size);
	if (level != 0 && compressors[i].max == 0)
		return ingot_fail(e, -EINVAL, "level: %s has no compression levels, got %d",
				  name, level);
	if (level != 0 && (level < compressors[i].min || level > compressors[i].max))
		return ingot_fail(e, -EINVAL, "level: expected %d..%d for %s, got %d",
				  compressors[i].min, compressors[i].max, name, level);
	r = sqfs_compressor_config_init(cfg, compressors[i].id, block_size, 0);
	if (r)
		return ingot_fail(e, sqfs_to_errno(r), "compression: %s: %s", name,
				  sqfs_strerror(r));
	if (level != 0)
		cfg->level = (sqfs_u32)level;
	return 0;
}

/* --- compressor wrappers ------------------------------------------- */

static void wrap_get_configuration(const sqfs_compressor_t *base, sqfs_compressor_config_t *cfg)
{
	const struct sqfs_cmp_wrap *w = (const struct sqfs_cmp_wrap *)base;
	w->inner->get_configuration(w->inner, cfg);
}

static int wrap_write_options(sqfs_compressor_t *base, sqfs_file_t *file)
{
	struct sqfs_cmp_wrap *w = (struct sqfs_cmp_wrap *)base;
	return w->inner->write_options(w->inner, file);
}

static int wrap_read_options(sqfs_compressor_t *base, sqfs_file_t *file)
{
	struct sqfs_cmp_wrap *w = (struct sqfs_cmp_wrap *)base;
	return w->inner->read_options(w->inner, file);
}

static void wrap_destroy(sqfs_object_t *obj)
{
	struct sqfs_cmp_wrap *w = (struct sqfs_cmp_wrap *)obj;
	sqfs_destroy(w->inner);
	free(w);
}

void sqfs_cmp_wrap_init(struct sqfs_cmp_wrap *w, sqfs_compressor_t *inner,
			sqfs_s32 (*do_block)(sqfs_compressor_t *, const sqfs_u8 *, sqfs_u32, sqfs_u8 *, sqfs_u32),
			sqfs_object_t *(*copy)(const sqfs_object_t *))
{
	w->inner = inner;
	w->base.base.destroy = wrap_destroy;
	w->base.base.copy = copy;
	w->base.get_configuration = wrap_get_configuration;
	w->base.write_options = wrap_write_options;
	w->base.read_options = wrap_read_options;
	w->base.do_block = do_block;
}

/* A compressor whose output is never larger than its input: libsquashfs
 * 1.2's LZ4 returns a compressed metadata block longer than the block
 * itself (a 4-byte id table as 5 bytes), which unsquashfs rejects as
 * corrupt.  0 from do_block means "store it uncompressed", what the other
 * compressors answer in that case. */
static sqfs_s32 guard_do_block(sqfs_compressor_t *base, const sqfs_u8 *in, sqfs_u32 size,
			       sqfs_u8 *out, sqfs_u32 outsize)
{
	struct sqfs_cmp_wrap *g = (struct sqfs_cmp_wrap *)base;
	sqfs_s32 n = g->inner->do_block(g->inner, in, size, out, outsize);
	return n > 0 && (sqfs_u32)n >= size ? 0 : n;
}

static sqfs_compressor_t *guard_wrap(sqfs_compressor_t *inner);

static sqfs_object_t *guard_copy(const sqfs_object_t *obj)
{
	const struct sqfs_cmp_wrap *g = (const struct sqfs_cmp_wrap *)obj;
	sqfs_compressor_t *copy = sqfs_copy(g->inner);
	return copy ? (sqfs_object_t *)guard_wrap(copy) : NULL;
}

/* Takes ownership of inner (destroyed on failure). */
static sqfs_compressor_t *guard_wrap(sqfs_compressor_t *inner)
{
	struct sqfs_cmp_wrap *g = xcalloc(1, sizeof(*g));
	sqfs_cmp_wrap_init(g, inner, guard_do_block, guard_copy);
	return &g->base;
}

int sqfs_writer_compressor_create(const sqfs_compressor_config_t *cfg, sqfs_compressor_t **out)
{
	sqfs_compressor_t *inner;
	int r = sqfs_compressor_create(cfg, &inner);

	*out = NULL;
	if (r)
		return r;
	if (cfg->flags & SQFS_COMP_FLAG_UNCOMPRESS) {
		*out = inner;
		return 0;
	}
	*out = guard_wrap(inner);
	return *out ? 0 : SQFS_ERROR_ALLOC;
}

const char *sqfs_strerror(int code)
{
	switch (code) {
	case SQFS_ERROR_ALLOC: return "out of memory";
	case SQFS_ERROR_IO: return "I/O error";
	case SQFS_ERROR_COMPRESSOR: return "compressor error (corrupted compressed data?)";
	case SQFS_ERROR_INTERNAL: return "internal libsquashfs error";
	case SQFS_ERROR_CORRUPTED: return "corrupted data";
	case SQFS_ERROR_UNSUPPORTED: return "unsupported feature";
	case SQFS_ERROR_OVERFLOW: return "size overflow (corrupted image?)";
	case SQFS_ERROR_OUT_OF_BOUNDS: return "out of bounds read (truncated or corrupted image?)";
	case SFQS_ERROR_SUPER_MAGIC: return "not a squashfs image (bad magic)";
	case SFQS_ERROR_SUPER_VERSION: return "unsupported squashfs version";
	case SQFS_ERROR_SUPER_BLOCK_SIZE: return "invalid block size in superblock";
	case SQFS_ERROR_NOT_DIR: return "not a directory";
	case SQFS_ERROR_NO_ENTRY: return "no such entry";
	case SQFS_ERROR_LINK_LOOP: return "hard link loop";
	case SQFS_ERROR_NOT_FILE: return "not a regular file";
	case SQFS_ERROR_ARG_INVALID: return "invalid argument";
	case SQFS_ERROR_SEQUENCE: return "calls out of sequence";
	}
	return "unknown libsquashfs error";
}

int sqfs_to_errno(int code)
{
	switch (code) {
	case SQFS_ERROR_ALLOC: return -ENOMEM;
	case SQFS_ERROR_IO: return -EIO;
	case SQFS_ERROR_UNSUPPORTED: return -ENOTSUP;
	case SQFS_ERROR_OVERFLOW: return -EOVERFLOW;
	case SQFS_ERROR_NOT_DIR: return -ENOTDIR;
	case SQFS_ERROR_NO_ENTRY: return -ENOENT;
	case SQFS_ERROR_ARG_INVALID: return -EINVAL;
	}
	return -EBADMSG;   /* corrupted, out of bounds, bad magic, ... */
}
