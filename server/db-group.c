/* Grouped commits (server/db-group.h). */
#include "server/db-group.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"
#include "server/db-sql.h"

/* Writes in one transaction at most: bounds how long the first waits. */
#define GROUP_MAX 512

enum job_kind { JOB_NONCE, JOB_VERDICT };

struct job {
	enum job_kind kind;
	const char *node;
	/* JOB_NONCE */
	const char *nonce;
	int64_t now, expires;
	unsigned max;
	/* JOB_VERDICT */
	const struct db_verdict *v;
	enum db_nonce *out;
	int r, done, alone;
	ingot_error *e;
	struct job *next;
};

struct db_group {
	struct db *db;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	struct job *head, **tail;
	int stopping, running;
	atomic_ullong commits, writes;
};

/* One write inside the open transaction. */
static int job_run_tx(struct db *db, struct job *j)
{
	if (j->kind == JOB_NONCE)
		return db_sql_nonce_issue_tx(db, j->node, j->nonce, j->now, j->expires, j->max, j->e);
	return db_sql_verdict_commit_tx(db, j->v, j->out, j->e);
}

/* One write in a transaction of its own. */
static int job_run_alone(struct db *db, struct job *j)
{
	if (j->kind == JOB_NONCE)
		return db->ops->nonce_issue(db, j->node, j->nonce, j->now, j->expires, j->max, j->e);
	return db->ops->verdict_commit(db, j->v, j->out, j->e);
}

/* By node: replicas committing groups that touch the same nodes (a
 * replayed nonce, one node's two requests) take their row locks in the
 * same order, so they wait for each other instead of deadlocking. */
static int by_node(const void *a, const void *b)
{
	return strcmp((*(struct job *const *)a)->node, (*(struct job *const *)b)->node);
}

static void run_group(struct db_group *g, struct job **jobs, size_t n)
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
		struct job *j = jobs[i];
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

static void *committer(void *arg)
{
	struct db_group *g = arg;
	struct job **jobs = xcalloc(GROUP_MAX, sizeof(*jobs));

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
		pthread_mutex_lock(&g->mu);
		for (size_t i = 0; i < n; i++)
			jobs[i]->done = 1;
		pthread_cond_broadcast(&g->done);
	}
	pthread_mutex_unlock(&g->mu);
	free(jobs);
	return NULL;
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
	pthread_cond_init(&g->done, NULL);
	g->tail = &g->head;
	if (pthread_create(&g->thread, NULL, committer, g) != 0) {
		db_group_close(g);
		return ingot_fail(e, -EAGAIN, "database: cannot start the committer");
	}
	g->running = 1;
	*out = g;
	return 0;
}

void db_group_close(struct db_group *g)
{
	if (!g)
		return;
	if (g->running) {
		pthread_mutex_lock(&g->mu);
		g->stopping = 1;
		pthread_cond_signal(&g->work);
		pthread_mutex_unlock(&g->mu);
		pthread_join(g->thread, NULL);
	}
	g->db->ops->close(g->db);
	pthread_mutex_destroy(&g->mu);
	pthread_cond_destroy(&g->work);
	pthread_cond_destroy(&g->done);
	free(g);
}

static int submit(struct db_group *g, struct job *j)
{
	pthread_mutex_lock(&g->mu);
	*g->tail = j;
	g->tail = &j->next;
	pthread_cond_signal(&g->work);
	while (!j->done)
		pthread_cond_wait(&g->done, &g->mu);
	pthread_mutex_unlock(&g->mu);
	return j->r;
}

int db_group_nonce_issue(struct db_group *g, const char *node, const char *nonce, int64_t now, int64_t expires,
			 unsigned max, ingot_error *e)
{
	struct job j = { .kind = JOB_NONCE, .node = node, .nonce = nonce, .now = now, .expires = expires, .max = max,
			 .e = e };

	return submit(g, &j);
}

int db_group_verdict_commit(struct db_group *g, const struct db_verdict *v, enum db_nonce *out, ingot_error *e)
{
	struct job j = { .kind = JOB_VERDICT, .node = v->node, .v = v, .out = out, .e = e };

	*out = DB_NONCE_UNKNOWN;   /* never a pass unless the commit says so */
	return submit(g, &j);
}

void db_group_counts(struct db_group *g, uint64_t *commits, uint64_t *writes)
{
	*commits = atomic_load(&g->commits);
	*writes = atomic_load(&g->writes);
}
