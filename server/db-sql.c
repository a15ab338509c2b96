/* The verifier's write transactions, the same in every SQL backend
 * (server/db-sql.h): the nonce consumed and the verdict stored in one
 * transaction; the staleness move conditional on the node still being
 * admitted and old. */
#include "server/db-sql.h"

#include <string.h>

int db_sql_run(struct db *db, const char *sql, int *changes, ingot_error *e, const char *types, ...)
{
	va_list ap;
	int r;

	va_start(ap, types);
	r = db->sql->vrun(db, sql, changes, e, types, ap);
	va_end(ap);
	return r;
}

/* The verdict row and the node's state, inside the caller's transaction. */
static int store_verdict(struct db *db, const struct db_verdict *v, ingot_error *e)
{
	int r;

	if ((r = db_sql_run(db, DB_SQL_VERDICT_INSERT, NULL, e, "ssisss", v->node, v->nonce, v->time, v->verdict,
			    v->reason, v->ak_id)) < 0)
		return r;
	return db_sql_run(db, DB_SQL_NODE_UPSERT, NULL, e, "sssii", v->node, v->verdict, v->reason, v->time,
			  (int64_t)!strcmp(v->verdict, "admit"));
}

int db_sql_verdict_commit(struct db *db, const struct db_verdict *v, enum db_nonce *out, ingot_error *e)
{
	int changed = 0, r;

	if ((r = db_sql_run(db, db->sql->begin_write, NULL, e, "")) < 0)
		return r;
	/* Check and consume in one statement: a racer (another thread, or
	 * another replica) waits for the row, then finds it used. */
	if ((r = db_sql_run(db, DB_SQL_NONCE_CONSUME, &changed, e, "iss", v->time, v->nonce, v->node)) < 0)
		goto out;
	if (changed != 1) {
		if ((r = db->sql->nonce_state(db, v->node, v->nonce, v->time, out, e)) == 0 && *out == DB_NONCE_OK)
			*out = DB_NONCE_UNKNOWN;   /* cannot happen after the UPDATE; never a pass */
		goto out;
	}
	*out = DB_NONCE_OK;
	if ((r = store_verdict(db, v, e)) < 0 || (r = db_sql_run(db, "COMMIT", NULL, e, "")) < 0)
		goto out;
	return 0;
out:
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
