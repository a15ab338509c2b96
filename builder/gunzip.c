/* Streaming gzip decompression with ISA-L (see gunzip.h).
 *
 * The member header (RFC 1952, 2.3) is read here, not by isal_inflate:
 * ISA-L 2.30's isal_inflate parses a gzip header into a struct on its own
 * stack, so a header that does not arrive in one call (an FNAME, FCOMMENT
 * or FEXTRA longer than what is buffered, or a pull that hands over a few
 * bytes) resumes with indeterminate flags, and the same file passed or
 * failed from run to run.  ISA-L gets the deflate data and checks the
 * trailer (ISAL_GZIP_NO_HDR_VER). */
#include "builder/gunzip.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>

#include "lib/xalloc.h"

#define IN_BUF (256u << 10)
#define TRUNCATED "unexpected end of data (truncated or corrupt archive)"

/* FLG bits (RFC 1952, 2.3.1); 0xe0 are reserved and must be zero */
enum { FHCRC = 0x02, FEXTRA = 0x04, FNAME = 0x08, FCOMMENT = 0x10, FRESERVED = 0xe0 };

struct gunzip {
	struct inflate_state st;
	gunzip_pull_fn pull;
	void *ctx;
	bool eof;          /* the pull said there is no more */
	bool done;         /* the last member ended */
	bool member_end;   /* a member ended: is another one next? */
	bool header;       /* a member starts: its header is next */
	unsigned member;   /* which member, from 1, for messages */
	char msg[160];     /* *why when it needs numbers */
	uint8_t in[IN_BUF];
};

bool gunzip_magic(const uint8_t *p, size_t n)
{
	return n >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

/* ISA-L reads a member's deflate data and checks its trailer. */
static void start_member(struct gunzip *g)
{
	uint8_t *in = g->st.next_in;
	uint32_t avail = g->st.avail_in;

	isal_inflate_reset(&g->st);
	g->st.crc_flag = ISAL_GZIP_NO_HDR_VER;
	g->st.next_in = in;
	g->st.avail_in = avail;
	g->member_end = false;
	g->header = true;
	g->member++;
}

struct gunzip *gunzip_new(gunzip_pull_fn pull, void *ctx)
{
	struct gunzip *g = xmalloc(sizeof(*g));
	isal_inflate_init(&g->st);
	g->st.next_in = g->in;
	g->st.avail_in = 0;
	g->pull = pull;
	g->ctx = ctx;
	g->eof = g->done = false;
	g->member = 0;
	start_member(g);
	return g;
}

void gunzip_free(struct gunzip *g)
{
	free(g);
}

static const char *inflate_error(int r)
{
	switch (r) {
	case ISAL_INCORRECT_CHECKSUM: return "gzip: the trailer does not match the data (CRC-32 or size): corrupt archive";
	default: return "gzip: invalid compressed data (corrupt archive)";
	}
}

/* Append input after what is left of it: 1, 0 at its end, or -errno. */
static int refill(struct gunzip *g)
{
	ssize_t n;

	if (g->eof)
		return 0;
	if (g->st.next_in != g->in) {
		memmove(g->in, g->st.next_in, g->st.avail_in);
		g->st.next_in = g->in;
	}
	if (g->st.avail_in == IN_BUF)
		return 1;
	n = g->pull(g->ctx, g->in + g->st.avail_in, IN_BUF - g->st.avail_in);
	if (n < 0)
		return (int)n;
	if (n == 0) {
		g->eof = true;
		return 0;
	}
	g->st.avail_in += (uint32_t)n;
	return 1;
}

/* Inside a member, which needs more input than is left: 0 once some was
 * added; -EBADMSG (the input ends, or a full buffer is not enough) or the
 * pull's -errno, with *why. */
static int more_input(struct gunzip *g, const char **why)
{
	uint32_t had = g->st.avail_in;
	int f = refill(g);

	if (f > 0 && g->st.avail_in > had)
		return 0;
	if (f < 0) {
		*why = strerror(-f);
		return f;
	}
	*why = f == 0 ? TRUNCATED : inflate_error(ISAL_INVALID_BLOCK);
	return -EBADMSG;
}

/* At least n (at most IN_BUF) bytes of input buffered: 1, 0 when the
 * input ends before, or the pull's -errno with *why. */
static int have(struct gunzip *g, uint32_t n, const char **why)
{
	int f = 1;

	while (g->st.avail_in < n && (f = refill(g)) > 0)
		;
	if (f < 0)
		*why = strerror(-f);
	return f < 0 ? f : g->st.avail_in >= n;
}

static int header_error(struct gunzip *g, const char **why, const char *what)
{
	snprintf(g->msg, sizeof(g->msg), "gzip: member %u: header: %s", g->member, what);
	*why = g->msg;
	return -EBADMSG;
}

/* Consume n buffered header bytes into the header's CRC-32. */
static void take(struct gunzip *g, uint32_t n, uint32_t *crc)
{
	*crc = crc32_gzip_refl(*crc, g->st.next_in, n);
	g->st.next_in += n;
	g->st.avail_in -= n;
}

/* FEXTRA's data (len bytes), or up to FNAME's or FCOMMENT's NUL (len 0),
 * of any length: 0, or -EBADMSG / -errno with *why. */
static int skip_field(struct gunzip *g, const char *field, uint32_t len, uint32_t *crc, const char **why)
{
	char what[96];

	for (bool end = false; !end;) {
		int r = have(g, 1, why);
		uint32_t n = g->st.avail_in;
		if (r < 0)
			return r;
		if (!r) {
			snprintf(what, sizeof(what), "%s: " TRUNCATED, field);
			return header_error(g, why, what);
		}
		if (len) {
			n = n < len ? n : len;
			len -= n;
			end = !len;
		} else {
			const uint8_t *nul = memchr(g->st.next_in, 0, n);
			if (nul) {
				n = (uint32_t)(nul - g->st.next_in) + 1;
				end = true;
			}
		}
		take(g, n, crc);
	}
	return 0;
}

/* A member's header (RFC 1952, 2.3), read as strictly as gzip(1) does:
 * method deflate, no reserved flag bit, every field within the input,
 * and the CRC-16 when FHCRC is set.  0, or -EBADMSG / -errno with *why. */
static int read_header(struct gunzip *g, const char **why)
{
	uint32_t crc = 0;
	uint8_t flg;
	char what[96];
	int r = have(g, 10, why);

	if (r <= 0)
		return r < 0 ? r : header_error(g, why, TRUNCATED);
	if (!gunzip_magic(g->st.next_in, 2))
		return header_error(g, why, "no gzip magic (1f 8b)");
	if (g->st.next_in[2] != 8) {
		snprintf(what, sizeof(what), "compression method %u, expected 8 (deflate)", g->st.next_in[2]);
		return header_error(g, why, what);
	}
	flg = g->st.next_in[3];
	if (flg & FRESERVED) {
		snprintf(what, sizeof(what), "reserved flag bits set (FLG 0x%02x; RFC 1952: must be zero)", flg);
		return header_error(g, why, what);
	}
	take(g, 10, &crc);
	if (flg & FEXTRA) {
		if ((r = have(g, 2, why)) <= 0)
			return r < 0 ? r : header_error(g, why, "FEXTRA length: " TRUNCATED);
		uint32_t xlen = (uint32_t)g->st.next_in[0] | (uint32_t)g->st.next_in[1] << 8;
		take(g, 2, &crc);
		if (xlen && (r = skip_field(g, "FEXTRA", xlen, &crc, why)) < 0)
			return r;
	}
	if ((flg & FNAME) && (r = skip_field(g, "FNAME", 0, &crc, why)) < 0)
		return r;
	if ((flg & FCOMMENT) && (r = skip_field(g, "FCOMMENT", 0, &crc, why)) < 0)
		return r;
	if (flg & FHCRC) {
		if ((r = have(g, 2, why)) <= 0)
			return r < 0 ? r : header_error(g, why, "FHCRC: " TRUNCATED);
		uint32_t want = (uint32_t)g->st.next_in[0] | (uint32_t)g->st.next_in[1] << 8;
		if (want != (crc & 0xffff)) {
			snprintf(what, sizeof(what), "CRC-16 (FHCRC) is 0x%04x, the header's bytes give 0x%04x",
				 want, crc & 0xffff);
			return header_error(g, why, what);
		}
		take(g, 2, &crc);
	}
	g->header = false;
	return 0;
}

/* A member ended: what follows is read as gzip(1) reads it: nothing, or
 * zero bytes, ends the file; the magic starts another member, which must
 * then be whole; other bytes are left (gzip: "trailing garbage
 * ignored"), but a lone one is refused, as gzip refuses it.  1 when a
 * member starts, 0 at the end, or -EBADMSG / -errno with *why. */
static int next_member(struct gunzip *g, const char **why)
{
	int r = have(g, 2, why);

	if (r < 0)
		return r;
	if (r && gunzip_magic(g->st.next_in, 2)) {
		start_member(g);
		return 1;
	}
	if (!r && g->st.avail_in && g->st.next_in[0]) {
		*why = TRUNCATED;
		return -EBADMSG;
	}
	g->done = true;      /* what follows is not ours to read */
	return 0;
}

ssize_t gunzip_read(struct gunzip *g, uint8_t *out, size_t cap, const char **why)
{
	if (cap > UINT32_MAX)
		cap = UINT32_MAX;
	while (!g->done) {
		uint32_t before;
		int r;
		if (g->member_end && (r = next_member(g, why)) <= 0)
			return r;
		if (g->header && (r = read_header(g, why)) < 0)
			return r;
		if (!g->st.avail_in && (r = more_input(g, why)) < 0)
			return r;
		before = g->st.avail_in;
		g->st.next_out = out;
		g->st.avail_out = (uint32_t)cap;
		r = isal_inflate(&g->st);
		if (r < 0) {
			*why = inflate_error(r);
			return -EBADMSG;
		}
		if (g->st.block_state == ISAL_BLOCK_FINISH)
			g->member_end = true;
		if (cap - g->st.avail_out)
			return (ssize_t)(cap - g->st.avail_out);
		/* nothing out, nothing taken: it needs more than what is left */
		if (!g->member_end && g->st.avail_in == before && (r = more_input(g, why)) < 0)
			return r;
	}
	return 0;
}

int gunzip_finish(struct gunzip *g, const char **why)
{
	uint8_t sink[1 << 14];
	ssize_t n;

	while ((n = gunzip_read(g, sink, sizeof(sink), why)) > 0)
		;
	return n < 0 ? (int)n : 0;
}

/* --- inflate ahead ------------------------------------------------------ */

#define AHEAD_MAX 8

struct gunzip_ahead {
	struct gunzip *g;
	size_t size;
	unsigned nbuf;
	uint8_t *buf[AHEAD_MAX];
	size_t len[AHEAD_MAX];
	unsigned head, queued;   /* full buffers from head on; the reader's counts until it returns */
	bool held;               /* the reader has buf[head] */
	bool done, stop;
	ssize_t end;             /* what gunzip_read said last: 0 or its error */
	const char *why;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t tid;
};

static void *ahead_main(void *arg)
{
	struct gunzip_ahead *a = arg;

	for (;;) {
		const char *why = NULL;
		unsigned slot;
		ssize_t n;

		pthread_mutex_lock(&a->lock);
		while (!a->stop && a->queued == a->nbuf)
			pthread_cond_wait(&a->cond, &a->lock);
		if (a->stop) {
			pthread_mutex_unlock(&a->lock);
			return NULL;
		}
		slot = (a->head + a->queued) % a->nbuf;
		pthread_mutex_unlock(&a->lock);

		n = gunzip_read(a->g, a->buf[slot], a->size, &why);

		pthread_mutex_lock(&a->lock);
		if (n > 0) {
			a->len[slot] = (size_t)n;
			a->queued++;
		} else {
			a->end = n;
			a->why = why;
			a->done = true;
		}
		pthread_cond_broadcast(&a->cond);
		pthread_mutex_unlock(&a->lock);
		if (n <= 0)
			return NULL;
	}
}

static void ahead_free(struct gunzip_ahead *a)
{
	for (unsigned i = 0; i < a->nbuf; i++)
		free(a->buf[i]);
	free(a);
}

struct gunzip_ahead *gunzip_ahead_start(struct gunzip *g, size_t size, unsigned nbuf)
{
	struct gunzip_ahead *a;

	if (nbuf < 2 || nbuf > AHEAD_MAX || !size)
		return NULL;
	a = xcalloc(1, sizeof(*a));
	a->g = g;
	a->size = size;
	a->nbuf = nbuf;
	for (unsigned i = 0; i < nbuf; i++)
		a->buf[i] = xmalloc(size);
	if (pthread_mutex_init(&a->lock, NULL)) {
		ahead_free(a);
		return NULL;
	}
	if (pthread_cond_init(&a->cond, NULL)) {
		pthread_mutex_destroy(&a->lock);
		ahead_free(a);
		return NULL;
	}
	if (pthread_create(&a->tid, NULL, ahead_main, a)) {
		pthread_cond_destroy(&a->cond);
		pthread_mutex_destroy(&a->lock);
		ahead_free(a);
		return NULL;
	}
	return a;
}

ssize_t gunzip_ahead_read(struct gunzip_ahead *a, const uint8_t **out, const char **why)
{
	ssize_t n;

	pthread_mutex_lock(&a->lock);
	if (a->held) {   /* the reader is done with the last buffer */
		a->head = (a->head + 1) % a->nbuf;
		a->queued--;
		a->held = false;
		pthread_cond_broadcast(&a->cond);
	}
	while (!a->queued && !a->done)
		pthread_cond_wait(&a->cond, &a->lock);
	if (a->queued) {
		*out = a->buf[a->head];
		n = (ssize_t)a->len[a->head];
		a->held = true;
	} else {
		n = a->end;
		if (n < 0)
			*why = a->why;
	}
	pthread_mutex_unlock(&a->lock);
	return n;
}

int gunzip_ahead_finish(struct gunzip_ahead *a, const char **why)
{
	const uint8_t *p;
	ssize_t n;

	while ((n = gunzip_ahead_read(a, &p, why)) > 0)
		;
	return n < 0 ? (int)n : 0;
}

void gunzip_ahead_stop(struct gunzip_ahead *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->stop = true;
	pthread_cond_broadcast(&a->cond);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->tid, NULL);
	pthread_cond_destroy(&a->cond);
	pthread_mutex_destroy(&a->lock);
	ahead_free(a);
}
