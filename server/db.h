/* The verifier's state behind one small interface, so a backend is a
 * table of functions: SQLite (server/db-sqlite.c) for one verifier,
 * PostgreSQL (server/db-pg.c) for replicas sharing a database; both run
 * the same SQL (server/db-sql.h).
 *
 * What every backend guarantees (docs/verifier.md "State"):
 *   - a nonce is consumed in the transaction that stores the verdict it
 *     produced (db_verdict_commit), and only if it was issued to that
 *     node, is unused and unexpired: two requests, or two replicas, never
 *     both consume one nonce;
 *   - db_verdict_commit returns only after the commit is durable, so a
 *     verdict a node hears is in the database;
 *   - the schema is versioned (table schema_version) and migrated at open,
 *     inside one transaction; a database newer than this program is
 *     refused.
 * One connection is used by one thread at a time. */
#ifndef INGOT_SERVER_DB_H
#define INGOT_SERVER_DB_H

#include <jansson.h>
#include <stdint.h>

#include "lib/err.h"

/* The outcome of presenting a nonce. */
enum db_nonce {
	DB_NONCE_OK = 0,
	DB_NONCE_UNKNOWN,      /* never issued (or issued to another node, or forgotten) */
	DB_NONCE_USED,         /* already consumed by a verdict */
	DB_NONCE_EXPIRED,
};

const char *db_nonce_name(enum db_nonce n);

/* A verdict as stored: one row per judged request. */
struct db_verdict {
	const char *node;
	const char *nonce;      /* hex; NULL for a sweep's or an operator's verdict */
	int64_t time;           /* seconds since the epoch */
	const char *verdict;    /* admit | refuse | unverified | not-made | stale | drain */
	const char *reason;     /* one line */
	const char *ak_id;      /* or NULL */
	/* The evidence as judged (JSON text: the node report, its
	 * attestation the quote and log judged, server/pool.h) and the pool
	 * of the manifest it was judged against: kept as the node's latest
	 * (table evidence) in the verdict's transaction.  NULL: none. */
	const char *evidence;
	const char *pool;
};

/* An enrolment over the API (server/enrol.h), by the status it moved to. */
enum db_enrol_status {
	DB_ENROL_NONE = 0,       /* no such enrolment */
	DB_ENROL_PENDING = 1,    /* challenged, not answered */
	DB_ENROL_PROVEN = 2,     /* answered with the secret: awaiting the operator */
	DB_ENROL_APPROVED = 3,   /* signed and recorded */
};

struct db_enrolment {
	enum db_enrol_status status;
	int64_t moved;   /* when it moved to that status */
	char *state;     /* the challenge's private state (attest/enroll.h), JSON text; malloc'd */
};

struct db;

struct db_backend {
	const char *name;
	void (*close)(struct db *db);
	/* Store a nonce for node, unless node already holds max unused,
	 * unexpired ones (-EBUSY): a flood of requests cannot grow the table
	 * past max per enrolled node. */
	int (*nonce_issue)(struct db *db, const char *node, const char *nonce, int64_t now, int64_t expires,
			   unsigned max, ingot_error *e);
	/* How many unused, unexpired nonces node holds at now: a read, for
	 * answering a nonce request before its write is committed
	 * (nonce_issue still decides what is stored). */
	int (*nonces_held)(struct db *db, const char *node, int64_t now, int64_t *held, ingot_error *e);
	/* A read, for refusing early; db_verdict_commit decides. */
	int (*nonce_check)(struct db *db, const char *node, const char *nonce, int64_t now, enum db_nonce *out,
			   ingot_error *e);
	/* Consume v->nonce (issued to v->node, unused, unexpired at v->time)
	 * and store v, in one transaction; *out says why nothing was stored. */
	int (*verdict_commit)(struct db *db, const struct db_verdict *v, enum db_nonce *out, ingot_error *e);
	/* Store a verdict without a nonce (sweep, operator). */
	int (*verdict_record)(struct db *db, const struct db_verdict *v, ingot_error *e);
	/* {"node","state","reason","time","last_admit","history":[{...}]}, or
	 * *out NULL for a node never judged. */
	int (*node_get)(struct db *db, const char *node, int history, json_t **out, ingot_error *e);
	/* Nodes whose state is admit and whose last admission is before
	 * cutoff, each moved to "stale" with reason (one transaction per
	 * node, conditional on it still being so): *out an array of names. */
	int (*sweep_stale)(struct db *db, int64_t cutoff, int64_t now, const char *reason, json_t **out,
			   ingot_error *e);
	/* The latest evidence of each node of pool, by node:
	 * [{"node","evidence" (parsed),"nonce","time","verdict","state","last_admit"}]
	 * (state and last_admit the node's now, from nodes). */
	int (*pool_evidence)(struct db *db, const char *pool, json_t **out, ingot_error *e);
	/* Forget nonces that expired before cutoff. */
	int (*nonce_forget)(struct db *db, int64_t cutoff, ingot_error *e);
	/* {"<state>": count, ...} over all nodes. */
	int (*node_counts)(struct db *db, json_t **out, ingot_error *e);
	/* Store a pending enrolment (state: its private JSON), unless node
	 * already has one pending and unexpired at now, or proven after
	 * proven_after (-EBUSY): one at a time per node. */
	int (*enrol_open)(struct db *db, const char *id, const char *node, const char *state, int64_t now,
			  int64_t expires, int64_t proven_after, ingot_error *e);
	/* One enrolment (out->status DB_ENROL_NONE if none; free out->state). */
	int (*enrol_get)(struct db *db, const char *id, struct db_enrolment *out, ingot_error *e);
	/* Move it from one status to another at now, only if it is still in
	 * from: *changed 1 if this call moved it. */
	int (*enrol_move)(struct db *db, const char *id, int from, int to, int64_t now, int *changed, ingot_error *e);
	/* Copy the write-ahead log back into the database without waiting
	 * for anyone (SQLite's PASSIVE checkpoint), or with restart, also
	 * waiting (the busy timeout) for readers still in it so that the next
	 * write starts it over (RESTART): *log the log's frames, *copied those
	 * copied so far.  NULL where the backend has no log of its own to copy
	 * (PostgreSQL checkpoints in the server). */
	int (*checkpoint)(struct db *db, int restart, int *log, int *copied, ingot_error *e);
	/* Stop this connection's commits from checkpointing: another
	 * connection calls checkpoint(). */
	int (*checkpoint_defer)(struct db *db, ingot_error *e);
};

struct db {
	const struct db_backend *ops;
	const struct db_sql *sql;   /* for a backend on SQL (server/db-sql.h) */
};

/* Open (creating and migrating) the database named by spec: a file
 * path, "sqlite:PATH", or "postgresql:CONNINFO" (libpq's keyword=value
 * string or URI). */
#define DB_PG_PREFIX "postgresql:"
int db_open(const char *spec, struct db **out, ingot_error *e);

int db_sqlite_open(const char *path, struct db **out, ingot_error *e);
int db_pg_open(const char *conninfo, struct db **out, ingot_error *e);
/* The schema version this program migrates to. */
int db_schema_version(void);

#endif
