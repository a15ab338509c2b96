/* Streaming gzip decompression with ISA-L (see gunzip.h). */
#include "builder/gunzip.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/igzip_lib.h>

#define IN_BUF (256u << 10)
#define TRUNCATED "unexpected end of data (truncated or corrupt archive)"

struct gunzip {
	struct inflate_state st;
	gunzip_pull_fn pull;
	void *ctx;
	bool eof;          /* the pull said there is no more */
	bool done;         /* the last member ended */
	bool member_end;   /* a member ended: is another one next? */
	uint8_t in[IN_BUF];
};

bool gunzip_magic(const uint8_t *p, size_t n)
{
	return n >= 3 && p[0] == 0x1f && p[1] == 0x8b && p[2] == 8;
}

struct gunzip *gunzip_new(gunzip_pull_fn pull, void *ctx)
{
	struct gunzip *g = malloc(sizeof(*g));
	if (!g)
		return NULL;
	isal_inflate_init(&g->st);
	g->st.crc_flag = ISAL_GZIP;
	g->st.next_in = g->in;
	g->st.avail_in = 0;
	g->pull = pull;
	g->ctx = ctx;
	g->eof = g->done = g->member_end = false;
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
	case ISAL_INVALID_WRAPPER: return "gzip: invalid header";
	case ISAL_UNSUPPORTED_METHOD: return "gzip: compression method is not deflate";
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

/* A member ended: start the next one if the input goes on with one. */
static int next_member(struct gunzip *g, const char **why)
{
	uint8_t *in;
	uint32_t avail;
	int f = 1;

	while (g->st.avail_in < 3 && (f = refill(g)) > 0)
		;
	if (f < 0) {
		*why = strerror(-f);
		return f;
	}
	if (!gunzip_magic(g->st.next_in, g->st.avail_in)) {
		g->done = true;      /* what follows is not ours to read */
		return 0;
	}
	in = g->st.next_in;
	avail = g->st.avail_in;
	isal_inflate_reset(&g->st);
	g->st.crc_flag = ISAL_GZIP;
	g->st.next_in = in;
	g->st.avail_in = avail;
	g->member_end = false;
	return 1;
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
