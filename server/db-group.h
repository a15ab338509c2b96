/* Grouped commits: the writes of many requests in one transaction and
 * one durable commit (one fsync on SQLite, one WAL flush on PostgreSQL),
 * so the commit's cost is shared instead of paid per request.
 *
 * A request queues its write and waits; one committer thread (with a
 * connection of its own) takes everything queued, runs each write under
 * a savepoint of one transaction, commits, and only then wakes the
 * requests: a verdict is still committed before the node hears it
 * (server/db.h), and a write that fails alone is rolled back alone and
 * tried once more in a transaction of its own, never dropped. */
#ifndef INGOT_SERVER_DB_GROUP_H
#define INGOT_SERVER_DB_GROUP_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "server/db.h"

struct db_group;

/* Open the database named by spec (db_open) for the committer and start it. */
int db_group_open(const char *spec, struct db_group **out, ingot_error *e);
/* Finish what is queued, stop, close. */
void db_group_close(struct db_group *g);

/* As the backend's nonce_issue and verdict_commit (server/db.h), grouped:
 * they return after the commit that holds the write is durable. */
int db_group_nonce_issue(struct db_group *g, const char *node, const char *nonce, int64_t now, int64_t expires,
			 unsigned max, ingot_error *e);
int db_group_verdict_commit(struct db_group *g, const struct db_verdict *v, enum db_nonce *out, ingot_error *e);

/* Commits made and writes they held, for the metrics. */
void db_group_counts(struct db_group *g, uint64_t *commits, uint64_t *writes);

#endif
