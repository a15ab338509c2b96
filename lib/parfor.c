#include "lib/parfor.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/xalloc.h"

struct pf_shared {
	const struct parfor *p;
	atomic_size_t next, failed_at;   /* failed_at: n, or the least index failed */
};

struct pf_thread {
	struct pf_shared *s;
	pthread_t th;
	bool started;
	size_t at;                       /* the least index this thread failed (n: none) */
	int r;
	ingot_error e;
};

static void *work(void *arg)
{
	struct pf_thread *w = arg;
	struct pf_shared *s = w->s;
	const struct parfor *p = s->p;
	void *local = p->local_new ? p->local_new(p->ctx) : NULL;
	size_t i;

	/* Indices are claimed in increasing order, so once one is at or
	 * above a failure, every later claim would be too. */
	while ((i = atomic_fetch_add(&s->next, 1)) < p->n &&
	       (!p->stop || i < atomic_load(&s->failed_at))) {
		ingot_error e;
		e.code = 0, e.kind = 0, e.msg[0] = '\0';
		int r = p->fn(p->ctx, local, i, &e);
		if (r >= 0 || i >= w->at)
			continue;
		w->at = i, w->r = r, w->e = e;
		size_t f = atomic_load(&s->failed_at);
		while (i < f && !atomic_compare_exchange_weak(&s->failed_at, &f, i))
			;
	}
	if (p->local_free)
		p->local_free(local);
	return NULL;
}

static unsigned thread_count(const struct parfor *p)
{
	unsigned t = p->threads;

	if (!t) {
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		t = cpus < 1 ? 1 : cpus > PARFOR_MAX_THREADS ? PARFOR_MAX_THREADS : (unsigned)cpus;
	}
	if (t > PARFOR_MAX_THREADS)
		t = PARFOR_MAX_THREADS;
	if (p->n < (size_t)t * p->min_share)
		t = 1;   /* not worth a thread */
	return t;
}

int parfor_run(const struct parfor *p, size_t *failed_at, ingot_error *e)
{
	unsigned nt = thread_count(p);
	struct pf_shared s = { .p = p };
	struct pf_thread *w;
	size_t at = p->n;
	unsigned k0 = 0;
	int r = 0;

	if (!p->n)
		return 0;
	atomic_init(&s.next, 0);
	atomic_init(&s.failed_at, p->n);
	w = xcalloc(nt, sizeof(*w));
	for (unsigned k = 0; k < nt; k++) {
		w[k].s = &s, w[k].at = p->n;
		if (k > 0)
			w[k].started = pthread_create(&w[k].th, NULL, work, &w[k]) == 0;
	}
	work(&w[0]);
	for (unsigned k = 1; k < nt; k++)
		if (w[k].started)
			pthread_join(w[k].th, NULL);
	for (unsigned k = 0; k < nt; k++)
		if (w[k].at < at)
			at = w[k].at, r = w[k].r, k0 = k;
	if (r < 0 && e)
		*e = w[k0].e;
	if (r < 0 && failed_at)
		*failed_at = at;
	free(w);
	return r;
}
