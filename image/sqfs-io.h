/* Glue between libsquashfs and ingot: an sqfs_file_t over a caller's
 * file descriptor (so outputs can go through lib/fileio.h's atomic
 * files), compressor selection, and readable libsquashfs error codes. */
#ifndef INGOT_SQFS_IO_H
#define INGOT_SQFS_IO_H

#include <stdint.h>
#include <sqfs/compressor.h>
#include <sqfs/io.h>

#include "lib/err.h"

/* An sqfs_file_t writing to / reading from fd, which it does not own
 * (sqfs_destroy frees the wrapper, never closes fd).  size is the
 * current length of the file; on a new output pass 0.  A failed read
 * returns SQFS_ERROR_IO; a failed write or truncate does not: it leaves
 * its errno in sqfs_fd_errno() and the file drops all further I/O, so
 * a writer must check sqfs_fd_errno() as it goes and before it succeeds
 * (see sqfs-io.c for why). */
sqfs_file_t *sqfs_fd_file(int fd, uint64_t size);
int sqfs_fd_errno(const sqfs_file_t *f);
/* From now on appends are written by a thread of f's own (2 MiB of
 * buffers), so the caller goes on; -errno if it cannot start.  A write
 * error then shows in sqfs_fd_errno() a little later: check
 * sqfs_fd_flush() before success. */
int sqfs_fd_writebehind(sqfs_file_t *f);
/* Wait until every write made so far is in fd; sqfs_fd_errno() after it. */
int sqfs_fd_flush(sqfs_file_t *f);

/* Compressor configuration for name ("zstd", "xz", "gzip", "lz4",
 * "lzma") at level (0 = libsquashfs' default) and block_size.
 * Errors name the field: "compression: expected one of ..., got 'x'". */
int sqfs_compressor_setup(const char *name, int level, uint32_t block_size,
			  sqfs_compressor_config_t *cfg, ingot_error *e);

/* A compressor that wraps (and owns) another: configuration and options
 * are the inner one's, do_block and copy are the wrapper's.  Wrappers
 * embed it first; sqfs_destroy destroys inner and frees the allocation. */
struct sqfs_cmp_wrap {
	sqfs_compressor_t base;
	sqfs_compressor_t *inner;
};
void sqfs_cmp_wrap_init(struct sqfs_cmp_wrap *w, sqfs_compressor_t *inner,
			sqfs_s32 (*do_block)(sqfs_compressor_t *, const sqfs_u8 *, sqfs_u32, sqfs_u8 *, sqfs_u32),
			sqfs_object_t *(*copy)(const sqfs_object_t *));

/* sqfs_compressor_create for writing: a block that does not shrink is
 * stored uncompressed whatever the compressor (see sqfs-io.c). */
int sqfs_writer_compressor_create(const sqfs_compressor_config_t *cfg, sqfs_compressor_t **out);

/* "corrupted data", "out of bounds read", ... for a SQFS_ERROR code. */
const char *sqfs_strerror(int code);

/* Map a SQFS_ERROR code to a negative errno for ingot_error. */
int sqfs_to_errno(int code);

#endif
