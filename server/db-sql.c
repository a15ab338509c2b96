/* The verifier's write transactions, the same in every SQL backend
 * (server/db-sql.h): the nonce consumed and the verdict stored in one
 * transaction; the staleness move conditional on the node still being
 * admitted and old. */
#include "server/db-sql.h"

#include <stdlib.h>
#include <string.h>

#include "lib/cleanup.h"

int db_schema_version(void)
{
	static const char *const migrations[] = DB_SQL_MIGRATIONS("", "");

	return (int)ARRAY_SIZE(migrations);
}

int db_sql_run(struct db *db, const char *sql, int *changes, ingot_error *e, const char *types, ...)
{
	va_list ap;
	int r;

	va_start(ap, types);
	r = db->sql->vrun(db, sql, changes, NULL, NULL, e, types, ap);
	va_end(ap);
	return r;
}

/* The first column of the first row. */
static int value(struct db *db, const char *sql, int64_t *out, ingot_error *e, const char *types, ...)
{
	va_list ap;
	int r;

	*out = 0;
	va_start(ap, types);
	r = db->sql->vrun(db, sql, NULL, out, NULL, e, types, ap);
	va_end(ap);
	return r;
}

/* The first column of the first row as text (malloc'd; NULL if none). */
static int text(struct db *db, const char *sql, char **out, ingot_error *e, const char *types, ...)
{
	va_list ap;
	int r;

	*out = NULL;
	va_start(ap, types);
	r = db->sql->vrun(db, sql, NULL, NULL, out, e, types, ap);
	va_end(ap);
	return r;
}

int db_sql_migrate(struct db *db, ingot_error *e)
{
	const struct db_sql *q = db->sql;
	int64_t have = 0;
	int r;

	/* Verifiers starting together: one migrates, the others wait and
	 * then find the schema current. */
	if ((r = db_sql_run(db, q->begin_write, NULL, e, "")) < 0)
		return r;
	if ((q->lock_migrate && (r = db_sql_run(db, q->lock_migrate, NULL, e, "")) < 0) ||
	    (r = db_sql_run(db, DB_SQL_SCHEMA_TABLE, NULL, e, "")) < 0 || (r = value(db, DB_SQL_SCHEMA_HAVE, &have, e, "")) < 0)
		goto out;
	if (have > db_schema_version()) {
		r = ingot_fail(e, -EPROTO, "database: schema version %lld is newer than this ingot's %d", (long long)have,
			       db_schema_version());
		goto out;
	}
	for (int v = (int)have; v < db_schema_version(); v++) {
		if ((r = q->script(db, q->migrations[v], e)) < 0 ||
		    (r = db_sql_run(db, DB_SQL_SCHEMA_SET, NULL, e, "i", (int64_t)v + 1)) < 0)
			goto out;
	}
	if ((r = db_sql_run(db, "COMMIT", NULL, e, "")) == 0)
		return 0;
out:
	q->rollback(db);
	return r;
}

int db_sql_nonces_held(struct db *db, const char *node, int64_t now, int64_t *held, ingot_error *e)
{
	return value(db, DB_SQL_NONCES_HELD, held, e, "si", node, now);
}

int db_sql_nonce_issue_tx(struct db *db, const char *node, const char *nonce, int64_t now, int64_t expires,
			  unsigned max, ingot_error *e)
{
	int64_t held = 0;
	int r;

	/* Count and insert under a lock: racing requests (or replicas)
	 * cannot both take the last slot. */
	if ((db->sql->lock_node && (r = db_sql_run(db, db->sql->lock_node, NULL, e, "s", node)) < 0) ||
	    (r = db_sql_nonces_held(db, node, now, &held, e)) < 0)
		return r;
	if (held >= max)
		return ingot_fail(e, -EBUSY, "node %s holds %lld unused nonces, at most %u", node, (long long)held, max);
	return db_sql_run(db, DB_SQL_NONCE_ISSUE, NULL, e, "ssii", nonce, node, now, expires);
}

int db_sql_nonce_issue(struct db *db, const char *node, const char *nonce, int64_t now, int64_t expires,
		       unsigned max, ingot_error *e)
{
	int r;

	if ((r = db_sql_run(db, db->sql->begin_write, NULL, e, "")) < 0)
		return r;
	if ((r = db_sql_nonce_issue_tx(db, node, nonce, now, expires, max, e)) < 0 ||
	    (r = db_sql_run(db, "COMMIT", NULL, e, "")) < 0)
		db->sql->rollback(db);
	return r;
}

/* The verdict row and the node's state, inside the caller's transaction. */
static int store_verdict(struct db *db, const struct db_verdict *v, ingot_error *e)
{
	int r;

	if ((r = db_sql_run(db, DB_SQL_VERDICT_INSERT, NULL, e, "ssisss", v->node, v->nonce, v->time, v->verdict,
			    v->reason, v->ak_id)) < 0 ||
	    (v->evidence && (r = db_sql_run(db, DB_SQL_EVIDENCE_UPSERT, NULL, e, "ssisss", v->node, v->pool, v->time,
					    v->verdict, v->nonce, v->evidence)) < 0))
		return r;
	return db_sql_run(db, DB_SQL_NODE_UPSERT, NULL, e, "sssii", v->node, v->verdict, v->reason, v->time,
			  (int64_t)!strcmp(v->verdict, "admit"));
}

int db_sql_verdict_commit_tx(struct db *db, const struct db_verdict *v, enum db_nonce *out, ingot_error *e)
{
	int changed = 0, r;

	/* Check and consume in one statement: a racer (another thread, or
	 * another replica) waits for the row, then finds it used. */
	if ((r = db_sql_run(db, DB_SQL_NONCE_CONSUME, &changed, e, "iss", v->time, v->nonce, v->node)) < 0)
		return r;
	if (changed != 1) {
		if ((r = db->sql->nonce_state(db, v->node, v->nonce, v->time, out, e)) == 0 && *out == DB_NONCE_OK)
			*out = DB_NONCE_UNKNOWN;   /* cannot happen after the UPDATE; never a pass */
		return r;
	}
	*out = DB_NONCE_OK;
	return store_verdict(db, v, e);
}

int db_sql_verdict_commit(struct db *db, const struct db_verdict *v, enum db_nonce *out, ingot_error *e)
{
	int r;

	if ((r = db_sql_run(db, db->sql->begin_write, NULL, e, "")) < 0)
		return r;
	/* Nothing to keep when the nonce was refused: rolled back. */
	if ((r = db_sql_verdict_commit_tx(db, v, out, e)) < 0 || *out != DB_NONCE_OK ||
	    (r = db_sql_run(db, "COMMIT", NULL, e, "")) < 0)
		db->sql->rollback(db);
	return r;
}

int db_sql_verdict_record(struct db *db, const struct db_verdict *v, ingot_error *e)
{
	int r;

	if ((r = db_sql_run(db, db->sql->begin_write, NULL, e, "")) < 0)
		return r;
	if ((r = store_verdict(db, v, e)) < 0 || (r = db_sql_run(db, "COMMIT", NULL, e, "")) < 0)
		db->sql->rollback(db);
	return r;
}

static json_t *int_or_null(const char *s)
{
	return s ? json_integer(strtoll(s, NULL, 10)) : json_null();
}

int db_sql_evidence_row(json_t *out, const char *const col[DB_SQL_POOL_EVIDENCE_COLS], ingot_error *e)
{
	json_t *doc = col[1] ? json_loads(col[1], 0, NULL) : NULL;

	/* written by store_verdict from our own JSON: anything else is a
	 * database someone else wrote */
	if (!json_is_object(doc)) {
		json_decref(doc);
		return ingot_fail(e, -EIO, "database: evidence of node %.255s: expected a JSON object", col[0]);
	}
	json_array_append_new(out, json_pack("{s:s,s:o,s:s?,s:o,s:s?,s:s?,s:o}", "node", col[0], "evidence", doc,
					     "nonce", col[2], "time", int_or_null(col[3]), "verdict", col[4],
					     "state", col[5], "last_admit", int_or_null(col[6])));
	return 0;
}

int db_sql_mark_stale(struct db *db, const char *node, int64_t cutoff, int64_t now, const char *reason, int *changed,
		      ingot_error *e)
{
	struct db_verdict v = { .node = node, .time = now, .verdict = "stale", .reason = reason };
	int r;

	*changed = 0;
	if ((r = db_sql_run(db, db->sql->begin_write, NULL, e, "")) < 0)
		return r;
	if ((r = db_sql_run(db, DB_SQL_STALE_MARK, changed, e, "si", node, cutoff)) < 0 ||
	    (*changed && (r = store_verdict(db, &v, e)) < 0) || (r = db_sql_run(db, "COMMIT", NULL, e, "")) < 0)
		db->sql->rollback(db);
	return r;
}

int db_sql_enrol_open(struct db *db, const char *id, const char *node, const char *state, int64_t now,
		      int64_t expires, int64_t proven_after, ingot_error *e)
{
	int64_t live = 0;
	int r;

	if ((r = db_sql_run(db, db->sql->begin_write, NULL, e, "")) < 0)
		return r;
	/* Counted and inserted under the node's lock: two racing requests
	 * (or replicas) cannot both open one. */
	if ((db->sql->lock_node && (r = db_sql_run(db, db->sql->lock_node, NULL, e, "s", node)) < 0) ||
	    (r = value(db, DB_SQL_ENROL_LIVE, &live, e, "sii", node, now, proven_after)) < 0)
		goto out;
	if (live) {
		r = ingot_fail(e, -EBUSY, "node %s has an enrolment pending or awaiting approval", node);
		goto out;
	}
	if ((r = db_sql_run(db, DB_SQL_ENROL_INSERT, NULL, e, "ssiis", id, node, now, expires, state)) == 0 &&
	    (r = db_sql_run(db, "COMMIT", NULL, e, "")) == 0)
		return 0;
out:
	db->sql->rollback(db);
	return r;
}

int db_sql_enrol_get(struct db *db, const char *id, struct db_enrolment *out, ingot_error *e)
{
	int64_t status = 0;
	int r;

	memset(out, 0, sizeof(*out));
	/* One transaction: the status, its time and the state agree. */
	if ((r = db_sql_run(db, db->sql->begin_write, NULL, e, "")) < 0)
		return r;
	if ((r = value(db, DB_SQL_ENROL_STATUS, &status, e, "s", id)) == 0 && status &&
	    (r = value(db, DB_SQL_ENROL_MOVED, &out->moved, e, "s", id)) == 0)
		r = text(db, DB_SQL_ENROL_STATE, &out->state, e, "s", id);
	db->sql->rollback(db);   /* read only: nothing to keep */
	if (r == 0 && status && !out->state)
		r = ingot_fail(e, -EIO, "database: enrolment %s: no state", id);
	if (r < 0) {
		free(out->state);
		memset(out, 0, sizeof(*out));
		return r;
	}
	out->status = (enum db_enrol_status)status;
	return 0;
}

int db_sql_enrol_move(struct db *db, const char *id, int from, int to, int64_t now, int *changed, ingot_error *e)
{
	int r;

	*changed = 0;
	if ((r = db_sql_run(db, db->sql->begin_write, NULL, e, "")) < 0)
		return r;
	if ((r = db_sql_run(db, DB_SQL_ENROL_MOVE, changed, e, "siii", id, (int64_t)from, (int64_t)to, now)) < 0 ||
	    (r = db_sql_run(db, "COMMIT", NULL, e, "")) < 0)
		db->sql->rollback(db);
	return r;
}
