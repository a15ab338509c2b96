#include "lib/writebehind.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fileio.h"
#include "lib/xalloc.h"

static void *wb_main(void *arg)
{
	struct writebehind *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		unsigned b;
		int r;

		while (!w->queued && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (!w->queued)
			break;
		b = w->head;
		pthread_mutex_unlock(&w->lock);
		/* after an error the rest is dropped: the output is thrown away */
		r = w->err ? 0 : w->sink ? w->sink(w->sink_ctx, w->buf[b], w->len[b])
			       : pwrite_all(w->fd, w->buf[b], w->len[b], w->off);
		w->off += w->len[b];
		pthread_mutex_lock(&w->lock);
		if (r < 0 && !w->err)
			w->err = -r;
		w->len[b] = 0;
		w->head = (w->head + 1) % w->nbuf;
		w->queued--;
		pthread_cond_broadcast(&w->cond);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

static int start(struct writebehind *w, int fd, uint64_t off, size_t size, unsigned nbuf,
		 int (*sink)(void *, const char *, size_t), void *ctx)
{
	memset(w, 0, sizeof(*w));
	w->sink = sink;
	w->sink_ctx = ctx;
	w->fd = fd;
	w->off = off;
	w->size = size;
	w->nbuf = nbuf;
	if (nbuf < 2 || nbuf > WB_MAX_BUFS || !size)
		return -EINVAL;
	for (unsigned i = 0; i < nbuf; i++)
		w->buf[i] = xmalloc(size);
	if (pthread_mutex_init(&w->lock, NULL))
		return -ENOMEM;
	if (pthread_cond_init(&w->cond, NULL)) {
		pthread_mutex_destroy(&w->lock);
		return -ENOMEM;
	}
	if (pthread_create(&w->tid, NULL, wb_main, w)) {
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->lock);
		return -EAGAIN;
	}
	w->started = true;
	return 0;
}

int writebehind_start(struct writebehind *w, int fd, uint64_t off, size_t size, unsigned nbuf)
{
	return start(w, fd, off, size, nbuf, NULL, NULL);
}

int writebehind_start_sink(struct writebehind *w, int (*sink)(void *, const char *, size_t),
			   void *ctx, size_t size, unsigned nbuf)
{
	return start(w, -1, 0, size, nbuf, sink, ctx);
}

/* Hand the fill buffer to the thread and move to the next free one. */
static int queue_fill(struct writebehind *w)
{
	int err;

	pthread_mutex_lock(&w->lock);
	w->queued++;
	pthread_cond_broadcast(&w->cond);
	while (w->queued == w->nbuf)
		pthread_cond_wait(&w->cond, &w->lock);
	w->fill = (w->fill + 1) % w->nbuf;
	err = w->err;
	pthread_mutex_unlock(&w->lock);
	return -err;
}

int writebehind_advance(struct writebehind *w, size_t n)
{
	w->len[w->fill] += n;
	if (w->len[w->fill] < w->size)
		return 0;
	return queue_fill(w);
}

int writebehind_write(struct writebehind *w, const void *p, size_t len)
{
	const char *s = p;

	while (len > 0) {
		size_t room, n;
		char *t = writebehind_tail(w, &room);
		int r;
		n = len < room ? len : room;
		memcpy(t, s, n);
		if ((r = writebehind_advance(w, n)) < 0)
			return r;
		s += n;
		len -= n;
	}
	return 0;
}

int writebehind_flush(struct writebehind *w)
{
	int err;

	if (!w->started)
		return w->err ? -w->err : 0;
	pthread_mutex_lock(&w->lock);
	if (w->len[w->fill]) {
		w->queued++;
		w->fill = (w->fill + 1) % w->nbuf;
		pthread_cond_broadcast(&w->cond);
	}
	while (w->queued)
		pthread_cond_wait(&w->cond, &w->lock);
	err = w->err;
	pthread_mutex_unlock(&w->lock);
	return -err;
}

int writebehind_seek(struct writebehind *w, uint64_t off)
{
	int r = writebehind_flush(w);

	if (w->started) {
		pthread_mutex_lock(&w->lock);
		w->off = off;
		pthread_mutex_unlock(&w->lock);
	}
	return r;
}

int writebehind_finish(struct writebehind *w)
{
	int r = writebehind_flush(w);

	if (!w->started)
		return r;
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->tid, NULL);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	w->started = false;
	return r;
}

void writebehind_free(struct writebehind *w)
{
	writebehind_finish(w);
	for (unsigned i = 0; i < WB_MAX_BUFS; i++) {
		free(w->buf[i]);
		w->buf[i] = NULL;
	}
}
