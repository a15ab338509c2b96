/* Grouped commits (server/db-group.h). */
#include "server/db-group.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"
#include "server/db-sql.h"

/* Writes in one transaction at most: bounds how long the first waits. */
#define GROUP_MAX 512
/* The write-ahead log's frames (4 KiB pages: 64 MiB) past which the
 * committer restarts it (wal_bound). */
#define WAL_FRAMES_MAX 16384

enum { JOB_NONCE, JOB_VERDICT };

struct db_group {
	struct db *db;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t work;
	struct db_group_job *head, **tail;
	int stopping, stopped, running;
	uint64_t seq;   /* the order writes were handed over in */
	atomic_ullong commits, writes;
	/* SQLite: the log is copied back by a thread of its own, on a
	 * connection of its own, while the committer writes the next group
	 * (every page the log holds is written again into the database: on
	 * the one thread every verdict waits for, that was its work twice).
	 * NULL: the backend has no log to copy.  Under mu. */
	struct db *ckpt_db;
	pthread_t ckpt_thread;
	pthread_cond_t ckpt_work, ckpt_done;
	int ckpt_wanted, ckpt_busy, ckpt_stopping, ckpt_failed, ckpt_running;
	int ckpt_log;   /* the log's frames, as the last pass found them */
	int wal_max;
};

/* One write inside the open transaction. */
static int job_run_tx(struct db *db, struct db_group_job *j)
{
	if (j->kind == JOB_NONCE)
		return db_sql_nonce_issue_tx(db, j->node, j->nonce, j->now, j->expires, j->max, &j->e);
	return db_sql_verdict_commit_tx(db, j->v, &j->nonce_state, &j->e);
}

/* One write in a transaction of its own. */
static int job_run_alone(struct db *db, struct db_group_job *j)
{
	if (j->kind == JOB_NONCE)
		return db->ops->nonce_issue(db, j->node, j->nonce, j->now, j->expires, j->max, &j->e);
	return db->ops->verdict_commit(db, j->v, &j->nonce_state, &j->e);
}

/* By node: replicas committing groups that touch the same nodes (a
 * replayed nonce, one node's two requests) take their row locks in the
 * same order, so they wait for each other instead of deadlocking.  Then
 * in the order handed over: a nonce is answered before its write is
 * committed, so its evidence can be queued behind it in one group, and
 * must find it stored. */
static int by_node(const void *a, const void *b)
{
	const struct db_group_job *x = *(struct db_group_job *const *)a, *y = *(struct db_group_job *const *)b;
	int c = strcmp(x->node, y->node);

	return c ? c : x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void run_group(struct db_group *g, struct db_group_job **jobs, size_t n)
{
	struct db *db = g->db;
	ingot_error e = { 0 };
	int r;

	qsort(jobs, n, sizeof(*jobs), by_node);
	if (n == 1 || db_sql_run(db, db->sql->begin_write, NULL, &e, "") < 0) {
		for (size_t i = 0; i < n; i++)
			jobs[i]->alone = 1;
		goto alone;
	}
	for (size_t i = 0; i < n; i++) {
		struct db_group_job *j = jobs[i];
		if (db_sql_run(db, "SAVEPOINT ingot_write", NULL, &e, "") < 0)
			goto broken;
		/* A refused nonce changed nothing; an error (a deadlock, a
		 * constraint) is undone here and retried alone below. */
		r = job_run_tx(db, j);
		if (r < 0 && r != -EBUSY && db_sql_run(db, "ROLLBACK TO SAVEPOINT ingot_write", NULL, &e, "") < 0)
			goto broken;
		if (db_sql_run(db, "RELEASE SAVEPOINT ingot_write", NULL, &e, "") < 0)
			goto broken;
		j->r = r;
		j->alone = r < 0 && r != -EBUSY;   /* EBUSY: an answer (too many nonces held) */
	}
	if (db_sql_run(db, "COMMIT", NULL, &e, "") < 0)
		goto broken;
	g->commits++;
	goto alone;
broken:
	/* Nothing of the group was committed: every write again, alone. */
	db->sql->rollback(db);
	for (size_t i = 0; i < n; i++)
		jobs[i]->alone = 1;
alone:
	for (size_t i = 0; i < n; i++)
		if (jobs[i]->alone) {
			jobs[i]->r = job_run_alone(db, jobs[i]);
			g->commits++;
		}
	g->writes += n;
}

static void *checkpointer(void *arg)
{
	struct db_group *g = arg;

	pthread_setname_np(pthread_self(), "ingot-ckpt");
	pthread_mutex_lock(&g->mu);
	while (!g->ckpt_stopping) {
		if (!g->ckpt_wanted) {
			pthread_cond_wait(&g->ckpt_work, &g->mu);
			continue;
		}
		g->ckpt_wanted = 0;
		g->ckpt_busy = 1;
		pthread_mutex_unlock(&g->mu);
		ingot_error e = { 0 };
		int log = 0, copied = 0, r = g->ckpt_db->ops->checkpoint(g->ckpt_db, 0, &log, &copied, &e);
		pthread_mutex_lock(&g->mu);
		g->ckpt_busy = 0;
		/* A connection that cannot checkpoint leaves it to the committer. */
		if (r < 0)
			g->ckpt_failed = 1;
		g->ckpt_log = log;
		pthread_cond_broadcast(&g->ckpt_done);
		if (r < 0)
			break;
	}
	pthread_mutex_unlock(&g->mu);
	return NULL;
}

/* Under mu, after a group is committed: ask for a pass and, with the
 * log past its bound, restart it on the committer's connection (SQLite's
 * RESTART: copy what is left, wait for readers still in the log, so the
 * next write starts the log over).  A PASSIVE copy cannot bound it: the
 * log only starts over when a writer finds it all copied and no reader in
 * it, which under a storm's steady reads it rarely does (0.7 GB of log in
 * a 100,000-node storm).  The checkpointer has copied nearly all of it by
 * then, so the committer's wait is short. */
static void wal_bound(struct db_group *g)
{
	int log = 0, copied = 0;
	ingot_error e = { 0 };

	if (!g->ckpt_db)
		return;
	if (!g->ckpt_failed) {   /* failed: every group copies, as on commit */
		g->ckpt_wanted = 1;
		pthread_cond_signal(&g->ckpt_work);
		if (g->ckpt_log <= g->wal_max)
			return;
		while (g->ckpt_busy)   /* one checkpoint at a time, or BUSY */
			pthread_cond_wait(&g->ckpt_done, &g->mu);
	}
	pthread_mutex_unlock(&g->mu);
	/* its error is the next write's; BUSY (a reader past the timeout): the next group tries again */
	int r = g->db->ops->checkpoint(g->db, !g->ckpt_failed, &log, &copied, &e);
	pthread_mutex_lock(&g->mu);
	if (r == 0 && !g->ckpt_failed)
		g->ckpt_log = 0;   /* started over at the next write, until a pass says otherwise */
}

static void *committer(void *arg)
{
	struct db_group *g = arg;
	struct db_group_job **jobs = xcalloc(GROUP_MAX, sizeof(*jobs));

	pthread_setname_np(pthread_self(), "ingot-commit");   /* its CPU, apart in top -H */
	pthread_mutex_lock(&g->mu);
	for (;;) {
		while (!g->head && !g->stopping)
			pthread_cond_wait(&g->work, &g->mu);
		if (!g->head)
			break;
		size_t n = 0;
		while (g->head && n < GROUP_MAX) {
			jobs[n++] = g->head;
			g->head = g->head->next;
		}
		if (!g->head)
			g->tail = &g->head;
		pthread_mutex_unlock(&g->mu);
		run_group(g, jobs, n);
		/* Committed (or failed, each write's r says): answerable now.
		 * A job is the caller's again once done, so never touched after. */
		for (size_t i = 0; i < n; i++)
			jobs[i]->done(jobs[i]->arg);
		pthread_mutex_lock(&g->mu);
		wal_bound(g);
	}
	g->stopped = 1;
	pthread_mutex_unlock(&g->mu);
	free(jobs);
	return NULL;
}

static int checkpointer_start(struct db_group *g, const char *spec, ingot_error *e)
{
	int r;

	if ((r = db_open(spec, &g->ckpt_db, e)) < 0)
		return r;
	if ((r = g->db->ops->checkpoint_defer(g->db, e)) < 0)
		return r;
	if (pthread_create(&g->ckpt_thread, NULL, checkpointer, g) != 0)
		return ingot_fail(e, -EAGAIN, "database: cannot start the checkpointer");
	g->ckpt_running = 1;
	return 0;
}

int db_group_open(const char *spec, struct db_group **out, ingot_error *e)
{
	struct db_group *g = xcalloc(1, sizeof(*g));
	int r;

	if ((r = db_open(spec, &g->db, e)) < 0) {
		free(g);
		return r;
	}
	if (!g->db->sql) {
		g->db->ops->close(g->db);
		free(g);
		return ingot_fail(e, -ENOTSUP, "database: %s: grouped commits need an SQL backend", spec);
	}
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->work, NULL);
	pthread_cond_init(&g->ckpt_work, NULL);
	pthread_cond_init(&g->ckpt_done, NULL);
	g->tail = &g->head;
	g->wal_max = WAL_FRAMES_MAX;
	if (g->db->ops->checkpoint && (r = checkpointer_start(g, spec, e)) < 0) {
		db_group_close(g);
		return r;
	}
	if (pthread_create(&g->thread, NULL, committer, g) != 0) {
		db_group_close(g);
		return ingot_fail(e, -EAGAIN, "database: cannot start the committer");
	}
	g->running = 1;
	*out = g;
	return 0;
}

void db_group_set_wal_max(struct db_group *g, int frames)
{
	pthread_mutex_lock(&g->mu);
	g->wal_max = frames;
	pthread_mutex_unlock(&g->mu);
}

/* Tell a thread of g's to stop (under mu) and wait for it. */
static void join_thread(struct db_group *g, int *running, int *stopping, pthread_cond_t *wake, pthread_t thread)
{
	if (!*running)
		return;
	pthread_mutex_lock(&g->mu);
	*stopping = 1;
	pthread_cond_signal(wake);
	pthread_mutex_unlock(&g->mu);
	pthread_join(thread, NULL);
	*running = 0;
}

static void checkpointer_stop(struct db_group *g)
{
	join_thread(g, &g->ckpt_running, &g->ckpt_stopping, &g->ckpt_work, g->ckpt_thread);
}

void db_group_stop(struct db_group *g)
{
	if (!g)
		return;
	join_thread(g, &g->running, &g->stopping, &g->work, g->thread);
	checkpointer_stop(g);
}

void db_group_close(struct db_group *g)
{
	if (!g)
		return;
	db_group_stop(g);   /* and the checkpointer, also after an open that failed before the committer ran */
	if (g->ckpt_db)
		g->ckpt_db->ops->close(g->ckpt_db);
	g->db->ops->close(g->db);   /* SQLite's close copies the log back */
	pthread_mutex_destroy(&g->mu);
	pthread_cond_destroy(&g->work);
	pthread_cond_destroy(&g->ckpt_work);
	pthread_cond_destroy(&g->ckpt_done);
	free(g);
}

static void submit(struct db_group *g, struct db_group_job *j)
{
	int stopped;

	j->r = 0;
	j->alone = 0;
	j->next = NULL;
	memset(&j->e, 0, sizeof(j->e));
	pthread_mutex_lock(&g->mu);
	if (!(stopped = g->stopped)) {
		j->seq = g->seq++;
		*g->tail = j;
		g->tail = &j->next;
		pthread_cond_signal(&g->work);
	}
	pthread_mutex_unlock(&g->mu);
	if (stopped) {
		j->r = ingot_fail(&j->e, -ECANCELED, "database: the service is stopping");
		j->done(j->arg);
	}
}

void db_group_nonce_issue(struct db_group *g, struct db_group_job *j, const char *node, const char *nonce, int64_t now,
			  int64_t expires, unsigned max, void (*done)(void *), void *arg)
{
	*j = (struct db_group_job){ .kind = JOB_NONCE, .node = node, .nonce = nonce, .now = now, .expires = expires, .max = max,
			   .done = done, .arg = arg };
	submit(g, j);
}

void db_group_verdict_commit(struct db_group *g, struct db_group_job *j, const struct db_verdict *v,
			     void (*done)(void *), void *arg)
{
	*j = (struct db_group_job){ .kind = JOB_VERDICT, .node = v->node, .v = v, .done = done, .arg = arg,
			   .nonce_state = DB_NONCE_UNKNOWN };   /* never a pass unless the commit says so */
	submit(g, j);
}

void db_group_counts(struct db_group *g, uint64_t *commits, uint64_t *writes)
{
	*commits = atomic_load(&g->commits);
	*writes = atomic_load(&g->writes);
}
