/* One parallel for: fn(ctx, local, i, e) for every i in [0, n), spread
 * over threads that claim the next index in order (the calling thread
 * works too, and alone if no other can start).  The result does not
 * depend on the thread count as long as fn writes only to slot i of the
 * caller's arrays and to its thread's local state: the error returned
 * is that of the least index that failed, and with stop set no index
 * above a failed one is claimed (every index below it still runs). */
#ifndef INGOT_LIB_PARFOR_H
#define INGOT_LIB_PARFOR_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/err.h"

#define PARFOR_MAX_THREADS 64

struct parfor {
	size_t n;
	unsigned threads;      /* 0: one per online core; at most PARFOR_MAX_THREADS */
	size_t min_share;      /* fewer than threads * min_share items: one thread */
	bool stop;             /* claim no index above the least failed one */
	int (*fn)(void *ctx, void *local, size_t i, ingot_error *e);
	void *ctx;
	/* Optional: each thread's own state (e.g. a cache that needs no lock). */
	void *(*local_new)(void *ctx);
	void (*local_free)(void *local);
};

/* 0, or the least failed index's return with its error in e and the
 * index in *failed_at (may be NULL). */
int parfor_run(const struct parfor *p, size_t *failed_at, ingot_error *e);

#endif
