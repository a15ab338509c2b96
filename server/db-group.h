/* Grouped commits: the writes of many requests in one transaction and
 * one durable commit (one fsync on SQLite, one WAL flush on PostgreSQL),
 * so the commit's cost is shared instead of paid per request.
 *
 * A request hands its write to one committer thread (with a connection
 * of its own) and does not wait: the committer takes everything queued,
 * runs each write under a savepoint of one transaction, commits, and
 * only then calls each write's done(): a verdict is still committed
 * before the node hears it (server/db.h), and a write that fails alone
 * is rolled back alone and tried once more in a transaction of its own,
 * never dropped. */
#ifndef INGOT_SERVER_DB_GROUP_H
#define INGOT_SERVER_DB_GROUP_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "server/db.h"

struct db_group;

/* One write, in the caller's memory until done(arg) is called (on the
 * committer's thread, or on the caller's if the group is stopped).  The
 * strings and the verdict it points to must live as long. */
struct db_group_job {
	int kind;
	const char *node;
	const char *nonce;               /* nonce: the new nonce */
	int64_t now, expires;
	unsigned max;
	const struct db_verdict *v;      /* verdict */
	/* results, set before done() */
	int r;                           /* as the backend's nonce_issue / verdict_commit */
	enum db_nonce nonce_state;       /* verdict: DB_NONCE_OK if it consumed the nonce */
	ingot_error e;
	void (*done)(void *arg);
	void *arg;
	int alone;
	uint64_t seq;
	struct db_group_job *next;
};

/* Open the database named by spec (db_open) for the committer and start it. */
int db_group_open(const char *spec, struct db_group **out, ingot_error *e);
/* Finish what is queued and stop the committer: writes handed over later
 * are done at once with -ECANCELED.  db_group_close does it too. */
void db_group_stop(struct db_group *g);
void db_group_close(struct db_group *g);

/* As the backend's nonce_issue and verdict_commit (server/db.h), grouped:
 * done() is called once the commit that holds the write is durable. */
void db_group_nonce_issue(struct db_group *g, struct db_group_job *j, const char *node, const char *nonce, int64_t now,
			  int64_t expires, unsigned max, void (*done)(void *), void *arg);
void db_group_verdict_commit(struct db_group *g, struct db_group_job *j, const struct db_verdict *v,
			     void (*done)(void *), void *arg);

/* The write-ahead log's bound, in frames (the default 16384, 64 MiB):
 * past it the committer waits for the checkpointer.  For tests. */
void db_group_set_wal_max(struct db_group *g, int frames);

/* Commits made and writes they held, for the metrics. */
void db_group_counts(struct db_group *g, uint64_t *commits, uint64_t *writes);

#endif
