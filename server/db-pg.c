/* The verifier's state in PostgreSQL (server/db.h), for replicas sharing
 * one database.  The SQL is SQLite's (server/db-sql.h); what differs is
 * how writers are serialized: READ COMMITTED, where the conditional
 * UPDATE that consumes a nonce waits for a racer's row lock and then
 * re-checks "used IS NULL", so exactly one transaction wins it (and
 * verdicts.nonce is unique besides); an advisory lock per node around
 * counting and issuing nonces; one advisory lock around the migrations.
 * synchronous_commit is forced on, so a committed verdict is durable
 * before the reply. */
#include "server/db.h"

#include <inttypes.h>
#include <libpq-fe.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/xalloc.h"
#include "server/db-sql.h"

static const char *const migrations[] =
	DB_SQL_MIGRATIONS("BIGINT", "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY");

/* Advisory lock keys: one for the migrations (single 64-bit key space);
 * class 1 of the two-key space for a node's nonces. */
#define LOCK_MIGRATE "SELECT pg_advisory_xact_lock(7236051807150614868)"
#define LOCK_NODE_NONCES "SELECT pg_advisory_xact_lock(1, hashtext($1))"
#define MAX_PARAMS 8

struct db_pg {
	struct db db;
	PGconn *c;
};

static PGconn *C(struct db *db)
{
	return ((struct db_pg *)db)->c;
}

/* libpq's messages end in a newline; ours are one line. */
static int fail(PGconn *c, const PGresult *res, ingot_error *e, const char *what)
{
	const char *m = res ? PQresultErrorMessage(res) : "";
	if (!*m)
		m = PQerrorMessage(c);
	return ingot_fail(e, -EIO, "database: %.60s: %.*s", what, (int)strcspn(m, "\n"), m);
}

/* Run one statement with parameters $1... (s = text or NULL, i = int64;
 * all sent as text, PostgreSQL infers the types).  Returns the result
 * (NULL and *r < 0 on failure); *changes, if asked, the rows changed. */
static PGresult *vq(PGconn *c, const char *sql, ingot_error *e, int *r, int *changes, int64_t *first,
		    char **text, const char *types, va_list ap)
{
	char num[MAX_PARAMS][24];
	const char *vals[MAX_PARAMS];
	int n = (int)strlen(types);

	if (n > MAX_PARAMS) {
		*r = ingot_fail(e, -EINVAL, "database: %.60s: %d parameters, at most %d", sql, n, MAX_PARAMS);
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		if (types[i] == 's') {
			vals[i] = va_arg(ap, const char *);
		} else {
			snprintf(num[i], sizeof(num[i]), "%" PRId64, va_arg(ap, int64_t));
			vals[i] = num[i];
		}
	}
	/* A connection the server dropped (a restart, a failover) is opened
	 * again only at the start of a transaction, never inside one. */
	if (!strncmp(sql, "BEGIN", 5) && PQstatus(c) == CONNECTION_BAD)
		PQreset(c);
	PGresult *res = PQexecParams(c, sql, n, NULL, vals, NULL, NULL, 0);
	ExecStatusType st = PQresultStatus(res);
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		*r = fail(c, res, e, sql);
		PQclear(res);
		return NULL;
	}
	*r = 0;
	if (changes)
		*changes = atoi(PQcmdTuples(res));
	if (first && PQntuples(res) > 0 && PQnfields(res) > 0)
		*first = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	if (text && PQntuples(res) > 0 && PQnfields(res) > 0 && !PQgetisnull(res, 0, 0))
		*text = xstrdup(PQgetvalue(res, 0, 0));
	return res;
}

static PGresult *q(PGconn *c, const char *sql, ingot_error *e, int *r, int *changes, const char *types, ...)
{
	va_list ap;

	va_start(ap, types);
	PGresult *res = vq(c, sql, e, r, changes, NULL, NULL, types, ap);
	va_end(ap);
	return res;
}

static int cmd(PGconn *c, const char *sql, ingot_error *e)
{
	int r;
	PQclear(q(c, sql, e, &r, NULL, ""));
	return r;
}

static void rollback(PGconn *c)
{
	if (PQtransactionStatus(c) != PQTRANS_IDLE)
		PQclear(PQexec(c, "ROLLBACK"));
}


static int64_t get_int(const PGresult *res, int row, int col)
{
	return strtoll(PQgetvalue(res, row, col), NULL, 10);
}

static json_t *col_text(const PGresult *res, int row, int i)
{
	return PQgetisnull(res, row, i) ? json_null() : json_string(PQgetvalue(res, row, i));
}

static json_t *col_int(const PGresult *res, int row, int i)
{
	return PQgetisnull(res, row, i) ? json_null() : json_integer(get_int(res, row, i));
}

static void pg_close(struct db *db)
{
	if (db) {
		PQfinish(C(db));
		free(db);
	}
}

static int nonce_state(PGconn *c, const char *node, const char *nonce, int64_t now, enum db_nonce *out,
		       ingot_error *e)
{
	int r;
	PGresult *res = q(c, DB_SQL_NONCE_LOOKUP, e, &r, NULL, "s", nonce);

	if (!res)
		return r;
	if (PQntuples(res) == 0 || strcmp(PQgetvalue(res, 0, 0), node))
		*out = DB_NONCE_UNKNOWN;
	else if (!PQgetisnull(res, 0, 2))
		*out = DB_NONCE_USED;
	else if (get_int(res, 0, 1) <= now)
		*out = DB_NONCE_EXPIRED;
	else
		*out = DB_NONCE_OK;
	PQclear(res);
	return 0;
}

static int pg_nonce_check(struct db *db, const char *node, const char *nonce, int64_t now, enum db_nonce *out,
			  ingot_error *e)
{
	if (PQstatus(C(db)) == CONNECTION_BAD)
		PQreset(C(db));
	return nonce_state(C(db), node, nonce, now, out, e);
}

static int pg_node_get(struct db *db, const char *node, int history, json_t **out, ingot_error *e)
{
	PGconn *c = C(db);
	PGresult *res;
	_cleanup_json_ json_t *o = NULL;
	int r;

	*out = NULL;
	/* One snapshot: the node row and its history agree. */
	if ((r = cmd(c, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", e)) < 0)
		return r;
	if (!(res = q(c, DB_SQL_NODE_GET, e, &r, NULL, "s", node)))
		goto out;
	if (PQntuples(res) == 1)
		o = json_pack("{s:s,s:o,s:o,s:o,s:o,s:[]}", "node", node, "state", col_text(res, 0, 0), "reason",
			      col_text(res, 0, 1), "time", col_int(res, 0, 2), "last_admit", col_int(res, 0, 3),
			      "history");
	PQclear(res);
	if (!o)
		goto out;
	if (!(res = q(c, DB_SQL_NODE_HISTORY, e, &r, NULL, "si", node, (int64_t)history)))
		goto out;
	for (int i = 0; i < PQntuples(res); i++)
		json_array_append_new(json_object_get(o, "history"),
				      json_pack("{s:o,s:o,s:o,s:o,s:o,s:o}", "id", col_int(res, i, 0), "time",
						col_int(res, i, 1), "verdict", col_text(res, i, 2), "reason",
						col_text(res, i, 3), "nonce", col_text(res, i, 4), "ak_id",
						col_text(res, i, 5)));
	PQclear(res);
	*out = TAKE_PTR(o);
out:
	rollback(c);   /* read only: nothing to keep */
	return r;
}

static int pg_sweep_stale(struct db *db, int64_t cutoff, int64_t now, const char *reason, json_t **out,
			  ingot_error *e)
{
	PGconn *c = C(db);
	_cleanup_json_ json_t *done = json_array();
	PGresult *cand;
	int r;

	if ((r = cmd(c, "BEGIN", e)) < 0)
		return r;
	cand = q(c, DB_SQL_STALE_CANDIDATES, e, &r, NULL, "i", cutoff);
	rollback(c);
	if (!cand)
		return r;
	for (int i = 0; i < PQntuples(cand); i++) {
		int changed = 0;
		if ((r = db_sql_mark_stale(db, PQgetvalue(cand, i, 0), cutoff, now, reason, &changed, e)) < 0)
			break;
		if (changed)
			json_array_append_new(done, json_string(PQgetvalue(cand, i, 0)));
	}
	PQclear(cand);
	if (r < 0)
		return r;
	*out = TAKE_PTR(done);
	return 0;
}

static int pg_pool_evidence(struct db *db, const char *pool, json_t **out, ingot_error *e)
{
	PGconn *c = C(db);
	_cleanup_json_ json_t *rows = json_array();
	PGresult *res;
	int r;

	/* One snapshot, as node_get's. */
	if ((r = cmd(c, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", e)) < 0)
		return r;
	res = q(c, DB_SQL_POOL_EVIDENCE, e, &r, NULL, "s", pool);
	rollback(c);   /* read only: nothing to keep */
	if (!res)
		return r;
	for (int i = 0; i < PQntuples(res) && r == 0; i++) {
		const char *col[DB_SQL_POOL_EVIDENCE_COLS];
		for (int k = 0; k < DB_SQL_POOL_EVIDENCE_COLS; k++)
			col[k] = PQgetisnull(res, i, k) ? NULL : PQgetvalue(res, i, k);
		r = db_sql_evidence_row(rows, col, e);
	}
	PQclear(res);
	if (r < 0)
		return r;
	*out = TAKE_PTR(rows);
	return 0;
}

static int pg_nonce_forget(struct db *db, int64_t cutoff, ingot_error *e)
{
	int r;

	if ((r = cmd(C(db), "BEGIN", e)) < 0)
		return r;
	PQclear(q(C(db), DB_SQL_NONCE_FORGET, e, &r, NULL, "i", cutoff));
	if (r < 0 || (r = cmd(C(db), "COMMIT", e)) < 0)
		rollback(C(db));
	return r;
}

static int pg_node_counts(struct db *db, json_t **out, ingot_error *e)
{
	_cleanup_json_ json_t *o = json_object();
	PGresult *res;
	int r;

	if ((r = cmd(C(db), "BEGIN", e)) < 0)
		return r;
	res = q(C(db), DB_SQL_NODE_COUNTS, e, &r, NULL, "");
	rollback(C(db));
	if (!res)
		return r;
	for (int i = 0; i < PQntuples(res); i++)
		json_object_set_new(o, PQgetvalue(res, i, 0), json_integer(get_int(res, i, 1)));
	PQclear(res);
	*out = TAKE_PTR(o);
	return 0;
}

static void quiet(void *arg, const char *message)
{
	(void)arg, (void)message;
}

static int pg_vrun(struct db *db, const char *sql, int *changes, int64_t *first, char **text, ingot_error *e,
		   const char *types, va_list ap)
{
	int r;

	PQclear(vq(C(db), sql, e, &r, changes, first, text, types, ap));
	return r;
}

/* PQexec: a migration is several statements. */
static int pg_script(struct db *db, const char *sql, ingot_error *e)
{
	PGresult *res = PQexec(C(db), sql);
	int r = PQresultStatus(res) == PGRES_COMMAND_OK ? 0 : fail(C(db), res, e, "migration");

	PQclear(res);
	return r;
}

static void pg_rollback(struct db *db)
{
	rollback(C(db));
}

static int pg_nonce_state(struct db *db, const char *node, const char *nonce, int64_t now, enum db_nonce *out,
			  ingot_error *e)
{
	return nonce_state(C(db), node, nonce, now, out, e);
}

/* READ COMMITTED: the conditional UPDATE that consumes a nonce is what
 * serializes racers. */
static const struct db_sql pg_sql = {
	.begin_write = "BEGIN",
	.lock_migrate = LOCK_MIGRATE,
	.lock_node = LOCK_NODE_NONCES,
	.migrations = migrations,
	.vrun = pg_vrun,
	.script = pg_script,
	.rollback = pg_rollback,
	.nonce_state = pg_nonce_state,
};

static const struct db_backend pg_backend = {
	.name = "postgresql",
	.close = pg_close,
	.nonce_issue = db_sql_nonce_issue,
	.nonces_held = db_sql_nonces_held,
	.nonce_check = pg_nonce_check,
	.verdict_commit = db_sql_verdict_commit,
	.verdict_record = db_sql_verdict_record,
	.node_get = pg_node_get,
	.sweep_stale = pg_sweep_stale,
	.pool_evidence = pg_pool_evidence,
	.nonce_forget = pg_nonce_forget,
	.node_counts = pg_node_counts,
	.enrol_open = db_sql_enrol_open,
	.enrol_get = db_sql_enrol_get,
	.enrol_move = db_sql_enrol_move,
};

int db_pg_open(const char *conninfo, struct db **out, ingot_error *e)
{
	struct db_pg *d = xcalloc(1, sizeof(*d));
	PGresult *res;
	int r;

	d->db.ops = &pg_backend;
	d->db.sql = &pg_sql;
	d->c = PQconnectdb(conninfo);
	if (!d->c || PQstatus(d->c) != CONNECTION_OK) {
		const char *m = d->c ? PQerrorMessage(d->c) : "out of memory";
		r = ingot_fail(e, -EIO, "database: postgresql: cannot connect: %.*s", (int)strcspn(m, "\n"), m);
		goto fail;
	}
	/* Durable before the reply, whatever the server's default; no
	 * notices on stderr. */
	PQsetNoticeProcessor(d->c, quiet, NULL);
	if (!(res = q(d->c, "SET synchronous_commit = on", e, &r, NULL, "")) || (PQclear(res), (r = db_sql_migrate(&d->db, e)) < 0)) {
		ingot_prefix(e, "postgresql");
		goto fail;
	}
	*out = &d->db;
	return 0;
fail:
	pg_close(&d->db);
	return r;
}
