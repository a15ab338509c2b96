/* Write-behind: a thread that writes filled buffers to an fd, in order
 * and at consecutive offsets, while the caller fills the next one (or
 * hands them to a sink function instead: writebehind_start_sink).
 * Writing into the page cache costs about as much CPU as gunzip on the
 * development VM (docs/bench.md), so the pack writes of an unpack and the
 * image writes of a build go to a second thread instead of holding up the
 * one that feeds the compressors.  Memory: nbuf buffers of size each. */
#ifndef INGOT_WRITEBEHIND_H
#define INGOT_WRITEBEHIND_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WB_MAX_BUFS 8

struct writebehind {
	int fd;
	uint64_t off;                 /* where the next buffer goes (the thread's) */
	size_t size;                  /* of each buffer */
	unsigned nbuf;
	char *buf[WB_MAX_BUFS];
	size_t len[WB_MAX_BUFS];
	unsigned fill;                /* the buffer the caller fills */
	unsigned head, queued;        /* ring of full buffers, oldest at head */
	bool stop, started;
	int err;                      /* first write error (errno), sticky */
	/* instead of fd, if set: where the buffers go (-errno) */
	int (*sink)(void *ctx, const char *buf, size_t len);
	void *sink_ctx;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t tid;
};

/* Write what is queued to fd from offset off on, through nbuf buffers
 * of size bytes (2 <= nbuf <= WB_MAX_BUFS); -errno. */
int writebehind_start(struct writebehind *w, int fd, uint64_t off, size_t size, unsigned nbuf);
/* The same, the buffers handed to sink(ctx, buf, len) instead of a file
 * (unpack.c hashes an artifact's bytes this way, on a second CPU). */
int writebehind_start_sink(struct writebehind *w, int (*sink)(void *, const char *, size_t),
			   void *ctx, size_t size, unsigned nbuf);
/* Where the caller writes next and how much room is left there. */
static inline char *writebehind_tail(struct writebehind *w, size_t *room)
{
	*room = w->size - w->len[w->fill];
	return w->buf[w->fill] + w->len[w->fill];
}
/* n bytes were written at writebehind_tail(); a full buffer is queued
 * (waiting for a free one if all are queued).  -errno of an earlier
 * failed write, else 0. */
int writebehind_advance(struct writebehind *w, size_t n);
/* len bytes from p, through writebehind_tail/advance (for a caller whose
 * bytes are not made in the buffer itself).  -errno as advance. */
int writebehind_write(struct writebehind *w, const void *p, size_t len);
/* Queue what is left and wait until it is written; the thread goes on.
 * 0 or the first write error as -errno. */
int writebehind_flush(struct writebehind *w);
/* Flush, then queue further buffers from offset off on (the caller wrote
 * or truncated the file itself meanwhile). */
int writebehind_seek(struct writebehind *w, uint64_t off);
/* Queue what is left, wait for every write and stop the thread: 0 or the
 * first write error as -errno.  Safe to call twice, and after a failed
 * start. */
int writebehind_finish(struct writebehind *w);
/* Finish (discarding the result) and free the buffers. */
void writebehind_free(struct writebehind *w);

#endif
