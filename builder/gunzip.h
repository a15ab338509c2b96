/* Streaming gzip decompression with ISA-L's igzip: the same bytes as zlib,
 * at several times its speed (docs/bench.md, "The cold build's floor":
 * gunzip was the largest part of a cold build that is not compression).
 * libarchive then reads the plain tar.  Every member of a multi-member
 * file is decompressed and its header and trailer (CRC-32 and size)
 * checked; the header strictly (RFC 1952 and gzip(1): method deflate, no
 * reserved flag bit, FHCRC when set, every field within the input, of
 * any length).  Bytes after the last member that do not start another
 * are left (the pin covers them), as libarchive and gzip(1) do. */
#ifndef INGOT_GUNZIP_H
#define INGOT_GUNZIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct gunzip;

/* Where the compressed bytes come from: up to cap of them into buf; n > 0,
 * 0 at their end, or -errno. */
typedef ssize_t (*gunzip_pull_fn)(void *ctx, uint8_t *buf, size_t cap);

/* Does the data start like a gzip member (its magic, 1f 8b)?  What does
 * is read as gzip, and a bad header is an error, as gzip(1) has it. */
bool gunzip_magic(const uint8_t *p, size_t n);

struct gunzip *gunzip_new(gunzip_pull_fn pull, void *ctx);
void gunzip_free(struct gunzip *g);
/* Up to cap bytes of output: n > 0; 0 once the last member ended; -EBADMSG
 * (corrupt or truncated data) or the pull's -errno, with *why set (it
 * may point into g: valid until gunzip_free). */
ssize_t gunzip_read(struct gunzip *g, uint8_t *out, size_t cap, const char **why);
/* Decompress the rest, output discarded, so a bad trailer is found even
 * when the reader stopped early (tar's end marker): 0 or gunzip_read's
 * error. */
int gunzip_finish(struct gunzip *g, const char **why);

/* Decompression on a thread of its own, nbuf buffers of size bytes ahead
 * of the reader: the largest artifact's inflate no longer shares one CPU
 * with its tar parsing and file digests while the other CPU idles
 * (docs/bench.md, "Inflate ahead").  The reader sees the same bytes and
 * the same error at the same place as through gunzip_read.  g and its
 * pull belong to the thread until gunzip_ahead_stop.  NULL when no
 * thread is to be had: read g directly then. */
struct gunzip_ahead;
struct gunzip_ahead *gunzip_ahead_start(struct gunzip *g, size_t size, unsigned nbuf);
/* The next decompressed bytes at *out, valid until the next call: n > 0,
 * 0 after the last member, or gunzip_read's error with *why. */
ssize_t gunzip_ahead_read(struct gunzip_ahead *a, const uint8_t **out, const char **why);
/* gunzip_finish through the thread: the rest read and discarded. */
int gunzip_ahead_finish(struct gunzip_ahead *a, const char **why);
/* Stop the thread (after the chunk it is inflating) and free a; g is the
 * caller's again.  NULL is ignored. */
void gunzip_ahead_stop(struct gunzip_ahead *a);

#endif
