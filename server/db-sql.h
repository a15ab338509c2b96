/* The SQL of the verifier's state, shared by its backends (server/db.h):
 * SQLite and PostgreSQL agree on all of it but a column type or two and
 * how a transaction takes its lock, so the text is written once.
 * Parameters are $1, $2, ... in both (SQLite binds them by name, so a
 * statement may use one twice). */
#ifndef INGOT_SERVER_DB_SQL_H
#define INGOT_SERVER_DB_SQL_H

/* Numbered migrations: migration i brings the schema to version i + 1.
 * Never edit one that shipped; append.  INT64 is a 64-bit integer column,
 * AUTO_ID an increasing row id that is the primary key. */
#define DB_SQL_MIGRATIONS(INT64, AUTO_ID)                                   \
	{                                                                    \
		/* 1: nonces, verdicts, nodes */                              \
		"CREATE TABLE nonces ("                                      \
		"  nonce TEXT PRIMARY KEY,"                                  \
		"  node TEXT NOT NULL,"                                      \
		"  issued " INT64 " NOT NULL,"                               \
		"  expires " INT64 " NOT NULL,"                              \
		"  used " INT64 ");"                                         \
		"CREATE INDEX nonces_expires ON nonces(expires);"            \
		"CREATE TABLE verdicts ("                                    \
		"  id " AUTO_ID ","                                          \
		"  node TEXT NOT NULL,"                                      \
		"  nonce TEXT UNIQUE," /* a nonce produces at most one verdict */ \
		"  time " INT64 " NOT NULL,"                                 \
		"  verdict TEXT NOT NULL,"                                   \
		"  reason TEXT NOT NULL,"                                    \
		"  ak_id TEXT);"                                             \
		"CREATE INDEX verdicts_node ON verdicts(node, id);"          \
		"CREATE TABLE nodes ("                                       \
		"  node TEXT PRIMARY KEY,"                                   \
		"  state TEXT NOT NULL,"                                     \
		"  reason TEXT NOT NULL,"                                    \
		"  time " INT64 " NOT NULL,"                                 \
		"  last_admit " INT64 ");"                                   \
		"CREATE INDEX nodes_admit ON nodes(state, last_admit);",     \
		/* 2: a node's nonces by node (issuing one counted the     \
		 * node's held nonces by scanning every unexpired one:     \
		 * quadratic in a boot storm) */                           \
		"CREATE INDEX nonces_node ON nonces(node, expires);",       \
		/* 3: enrolments over the API (server/enrol.h): the challenge's \
		 * private state, its status and when it last moved */        \
		"CREATE TABLE enrolments ("                                  \
		"  id TEXT PRIMARY KEY,"                                     \
		"  node TEXT NOT NULL,"                                      \
		"  status " INT64 " NOT NULL,"                               \
		"  created " INT64 " NOT NULL,"                              \
		"  expires " INT64 " NOT NULL,"                              \
		"  moved " INT64 " NOT NULL,"                                \
		"  state TEXT NOT NULL);"                                    \
		"CREATE INDEX enrolments_node ON enrolments(node, status);", \
		/* 4: each node's latest evidence as judged, for the pool  \
		 * view (server/pool.h): the report with its quote and log, \
		 * the nonce, the pool of the manifest judged against */    \
		"CREATE TABLE evidence ("                                    \
		"  node TEXT PRIMARY KEY,"                                   \
		"  pool TEXT,"                                               \
		"  time " INT64 " NOT NULL,"                                 \
		"  verdict TEXT NOT NULL,"                                   \
		"  nonce TEXT NOT NULL,"                                     \
		"  doc TEXT NOT NULL);"                                      \
		"CREATE INDEX evidence_pool ON evidence(pool, node);",       \
	}

#define DB_SQL_SCHEMA_TABLE "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"
#define DB_SQL_SCHEMA_HAVE "SELECT coalesce(max(version), 0) FROM schema_version"
#define DB_SQL_SCHEMA_SET "INSERT INTO schema_version (version) VALUES ($1)"

/* node, now */
#define DB_SQL_NONCES_HELD "SELECT count(*) FROM nonces WHERE node = $1 AND used IS NULL AND expires > $2"
/* nonce, node, issued, expires */
#define DB_SQL_NONCE_ISSUE "INSERT INTO nonces (nonce, node, issued, expires) VALUES ($1, $2, $3, $4)"
/* nonce: the columns nonce_state reads */
#define DB_SQL_NONCE_LOOKUP "SELECT node, expires, used FROM nonces WHERE nonce = $1"
/* Check and consume in one statement: time, nonce, node.  The row it
 * changed (or not) says whether this transaction won the nonce; a racer
 * waits for the row and then finds it used. */
#define DB_SQL_NONCE_CONSUME "UPDATE nonces SET used = $1 WHERE nonce = $2 AND node = $3 AND used IS NULL AND expires > $1"
/* cutoff */
#define DB_SQL_NONCE_FORGET "DELETE FROM nonces WHERE expires < $1"

/* node, nonce, time, verdict, reason, ak_id */
#define DB_SQL_VERDICT_INSERT \
	"INSERT INTO verdicts (node, nonce, time, verdict, reason, ak_id) VALUES ($1, $2, $3, $4, $5, $6)"
/* node, state, reason, time, admitted (1 or 0); the casts give
 * PostgreSQL one type for $4 and $5 */
#define DB_SQL_NODE_UPSERT                                                                        \
	"INSERT INTO nodes (node, state, reason, time, last_admit)"                                \
	" VALUES ($1, $2, $3, $4, CASE WHEN CAST($5 AS BIGINT) = 1 THEN CAST($4 AS BIGINT) END)" \
	" ON CONFLICT(node) DO UPDATE SET state = $2, reason = $3, time = $4,"                     \
	" last_admit = CASE WHEN CAST($5 AS BIGINT) = 1 THEN CAST($4 AS BIGINT) ELSE nodes.last_admit END"

/* node, pool, time, verdict, nonce, doc: the node's latest evidence */
#define DB_SQL_EVIDENCE_UPSERT                                                        \
	"INSERT INTO evidence (node, pool, time, verdict, nonce, doc) VALUES ($1, $2, $3, $4, $5, $6)" \
	" ON CONFLICT(node) DO UPDATE SET pool = $2, time = $3, verdict = $4, nonce = $5, doc = $6"
/* pool: the columns of db.h's pool_evidence, in order */
#define DB_SQL_POOL_EVIDENCE                                                                 \
	"SELECT e.node, e.doc, e.nonce, e.time, e.verdict, n.state, n.last_admit FROM evidence e" \
	" LEFT JOIN nodes n ON n.node = e.node WHERE e.pool = $1 ORDER BY e.node"

/* node */
#define DB_SQL_NODE_GET "SELECT state, reason, time, last_admit FROM nodes WHERE node = $1"
/* node, how many */
#define DB_SQL_NODE_HISTORY \
	"SELECT id, time, verdict, reason, nonce, ak_id FROM verdicts WHERE node = $1 ORDER BY id DESC LIMIT $2"
#define DB_SQL_NODE_COUNTS "SELECT state, count(*) FROM nodes GROUP BY state"

/* cutoff */
#define DB_SQL_STALE_CANDIDATES "SELECT node FROM nodes WHERE state = 'admit' AND last_admit < $1"
/* node, cutoff: still admitted and still old (another replica, or a
 * fresh admission, may have come first) */
#define DB_SQL_STALE_MARK "UPDATE nodes SET state = 'stale' WHERE node = $1 AND state = 'admit' AND last_admit < $2"

/* node, now, proven-after: the node's enrolments still answerable or
 * still awaiting approval */
#define DB_SQL_ENROL_LIVE                                                                   \
	"SELECT count(*) FROM enrolments WHERE node = $1 AND ((status = 1 AND expires > $2)" \
	" OR (status = 2 AND moved > $3))"
/* id, node, now, expires, state */
#define DB_SQL_ENROL_INSERT \
	"INSERT INTO enrolments (id, node, status, created, expires, moved, state) VALUES ($1, $2, 1, $3, $4, $3, $5)"
/* id */
#define DB_SQL_ENROL_STATUS "SELECT status FROM enrolments WHERE id = $1"
#define DB_SQL_ENROL_MOVED "SELECT moved FROM enrolments WHERE id = $1"
#define DB_SQL_ENROL_STATE "SELECT state FROM enrolments WHERE id = $1"
/* id, from, to, now: conditional, so of two racers one moves it */
#define DB_SQL_ENROL_MOVE "UPDATE enrolments SET status = $3, moved = $4 WHERE id = $1 AND status = $2"

/* The write transactions, written once over what a backend gives
 * (server/db-sql.c): a struct db whose backend is on SQL carries this. */
#include <stdarg.h>

#include "server/db.h"

struct db_sql {
	const char *begin_write;   /* starts a transaction that may write */
	const char *lock_migrate;  /* serializes migrators (NULL: begin_write does) */
	const char *lock_node;     /* serializes a node's nonce issuers, $1 the node (NULL: begin_write does) */
	const char *const *migrations;   /* db_schema_version() of them, in this dialect */
	/* One statement with parameters $1... (s = text or NULL, i = int64);
	 * *changes, if asked, the rows it changed; *first, if asked, the
	 * first column of the first row (0 if none); *text, if asked, that
	 * column as text (malloc'd; NULL if none). */
	int (*vrun)(struct db *db, const char *sql, int *changes, int64_t *first, char **text, ingot_error *e,
		    const char *types, va_list ap);
	/* Several statements, no parameters (a migration). */
	int (*script)(struct db *db, const char *sql, ingot_error *e);
	void (*rollback)(struct db *db);   /* if a transaction is open */
	/* The state of a nonce presented by node at now, inside the
	 * caller's transaction. */
	int (*nonce_state)(struct db *db, const char *node, const char *nonce, int64_t now, enum db_nonce *out,
			   ingot_error *e);
};

int db_sql_run(struct db *db, const char *sql, int *changes, ingot_error *e, const char *types, ...);
/* Migrate to db_schema_version() in one transaction; a newer schema is
 * refused. */
int db_sql_migrate(struct db *db, ingot_error *e);
int db_sql_nonce_issue(struct db *db, const char *node, const char *nonce, int64_t now, int64_t expires,
		       unsigned max, ingot_error *e);
int db_sql_nonces_held(struct db *db, const char *node, int64_t now, int64_t *held, ingot_error *e);
/* The same two inside the caller's write transaction (server/db-group.c
 * runs many in one): no BEGIN, no COMMIT. */
int db_sql_nonce_issue_tx(struct db *db, const char *node, const char *nonce, int64_t now, int64_t expires,
			  unsigned max, ingot_error *e);
int db_sql_verdict_commit_tx(struct db *db, const struct db_verdict *v, enum db_nonce *out, ingot_error *e);
int db_sql_verdict_commit(struct db *db, const struct db_verdict *v, enum db_nonce *out, ingot_error *e);
int db_sql_verdict_record(struct db *db, const struct db_verdict *v, ingot_error *e);
/* Mark node stale if it is still admitted and still older than cutoff,
 * with its verdict, in one transaction; *changed whether it was. */
/* Enrolments (server/db.h), on SQL for every backend. */
int db_sql_enrol_open(struct db *db, const char *id, const char *node, const char *state, int64_t now,
		      int64_t expires, int64_t proven_after, ingot_error *e);
int db_sql_enrol_get(struct db *db, const char *id, struct db_enrolment *out, ingot_error *e);
int db_sql_enrol_move(struct db *db, const char *id, int from, int to, int64_t now, int *changed, ingot_error *e);
/* One row of DB_SQL_POOL_EVIDENCE, its columns as text (NULL for SQL
 * NULL), appended to out as db.h's pool_evidence gives it. */
#define DB_SQL_POOL_EVIDENCE_COLS 7
int db_sql_evidence_row(json_t *out, const char *const col[DB_SQL_POOL_EVIDENCE_COLS], ingot_error *e);
int db_sql_mark_stale(struct db *db, const char *node, int64_t cutoff, int64_t now, const char *reason, int *changed,
		      ingot_error *e);

#endif
