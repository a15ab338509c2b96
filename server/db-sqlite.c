/* The verifier's state in SQLite (server/db.h): WAL, so readers never
 * wait for the writer; a busy timeout, so writers from several threads
 * (or processes) queue instead of failing; BEGIN IMMEDIATE for every
 * write transaction, so a nonce is checked and consumed under the write
 * lock; synchronous=FULL, so a committed verdict survives a crash. */
#include "server/db.h"

#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/xalloc.h"
#include "server/db-sql.h"

#define BUSY_TIMEOUT_MS 10000

static const char *const migrations[] = DB_SQL_MIGRATIONS("INTEGER", "INTEGER PRIMARY KEY AUTOINCREMENT");

/* Statements kept prepared, by their text's address (the SQL is
 * constants): parsing each statement again was a tenth of a verdict's
 * CPU. */
#define STMT_CACHE 24

struct db_sqlite {
	struct db db;
	sqlite3 *h;
	struct {
		const char *sql;
		sqlite3_stmt *st;
	} stmts[STMT_CACHE];
};

static sqlite3 *H(struct db *db)
{
	return ((struct db_sqlite *)db)->h;
}

static int fail(sqlite3 *h, ingot_error *e, const char *what)
{
	return ingot_fail(e, -EIO, "database: %s: %s", what, sqlite3_errmsg(h));
}

static int exec(sqlite3 *h, const char *sql, ingot_error *e)
{
	char *msg = NULL;

	if (sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK) {
		int r = ingot_fail(e, -EIO, "database: %.60s: %s", sql, msg ? msg : sqlite3_errmsg(h));
		sqlite3_free(msg);
		return r;
	}
	return 0;
}

/* PRAGMA journal_mode=WAL on a database other connections are opening
 * at the same moment may be answered SQLITE_BUSY without the busy
 * handler being consulted (SQLite returns BUSY rather than risk a
 * deadlock): retry it, bounded (about BUSY_TIMEOUT_MS), then report. */
static int exec_busy_retry(sqlite3 *h, const char *sql, ingot_error *e)
{
	for (int i = 0; i < BUSY_TIMEOUT_MS / 10; i++) {
		int rc = sqlite3_exec(h, sql, NULL, NULL, NULL) & 0xff;

		if (rc == SQLITE_OK)
			return 0;
		if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED)
			break;
		usleep(10000);
	}
	return exec(h, sql, e);
}

static void rollback(sqlite3 *h)
{
	if (!sqlite3_get_autocommit(h))
		sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
}

static int prepare(sqlite3 *h, const char *sql, sqlite3_stmt **st, ingot_error *e)
{
	if (sqlite3_prepare_v2(h, sql, -1, st, NULL) != SQLITE_OK)
		return fail(h, e, "prepare");
	return 0;
}

/* Bind parameters $1, $2, ... by name (a statement may use one twice,
 * or not at all): s = text (NULL binds NULL), i = int64. */
static void vbind(sqlite3_stmt *st, const char *types, va_list ap)
{
	for (int i = 1; types[i - 1]; i++) {
		char name[16];
		snprintf(name, sizeof(name), "$%d", i);
		int at = sqlite3_bind_parameter_index(st, name);
		if (types[i - 1] == 's') {
			const char *s = va_arg(ap, const char *);
			if (at)
				s ? sqlite3_bind_text(st, at, s, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, at);
		} else {
			int64_t n = va_arg(ap, int64_t);
			if (at)
				sqlite3_bind_int64(st, at, n);
		}
	}
}

static void bind(sqlite3_stmt *st, const char *types, ...)
{
	va_list ap;

	va_start(ap, types);
	vbind(st, types, ap);
	va_end(ap);
}

/* sql's statement, kept prepared (*kept 1) or, the cache full, prepared
 * for this once (*kept 0); stmt_done after it ran. */
static int stmt_get(struct db_sqlite *d, const char *sql, sqlite3_stmt **st, int *kept, ingot_error *e)
{
	size_t i;
	int r;

	for (i = 0; i < STMT_CACHE && d->stmts[i].sql && d->stmts[i].sql != sql; i++)
		;
	*kept = i < STMT_CACHE;
	if (*kept && d->stmts[i].sql) {
		*st = d->stmts[i].st;
		return 0;
	}
	if ((r = prepare(d->h, sql, st, e)) < 0)
		return r;
	if (*kept)
		d->stmts[i].sql = sql, d->stmts[i].st = *st;
	return 0;
}

static void stmt_done(sqlite3_stmt *st, int kept)
{
	if (!kept) {
		sqlite3_finalize(st);
		return;
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
}

/* One statement run to completion; *changes the rows it changed,
 * *first the first column of its first row. */
static int vrun(struct db_sqlite *d, const char *sql, ingot_error *e, int *changes, int64_t *first, char **text,
		const char *types, va_list ap)
{
	sqlite3 *h = d->h;
	sqlite3_stmt *st = NULL;
	int r, kept;

	if ((r = stmt_get(d, sql, &st, &kept, e)) < 0)
		return r;
	vbind(st, types, ap);
	r = sqlite3_step(st);
	if (r == SQLITE_ROW && first)
		*first = sqlite3_column_int64(st, 0);
	if (r == SQLITE_ROW && text && sqlite3_column_type(st, 0) != SQLITE_NULL)
		*text = xstrdup((const char *)sqlite3_column_text(st, 0));
	stmt_done(st, kept);
	if (r != SQLITE_DONE && r != SQLITE_ROW)
		return fail(h, e, sql);
	if (changes)
		*changes = sqlite3_changes(h);
	return 0;
}

static void sqlite_close(struct db *db)
{
	if (db) {
		struct db_sqlite *d = (struct db_sqlite *)db;
		for (size_t i = 0; i < STMT_CACHE && d->stmts[i].sql; i++)
			sqlite3_finalize(d->stmts[i].st);
		sqlite3_close(H(db));
		free(db);
	}
}

/* The evidence's pre-check, once per piece of evidence: its statement
 * kept prepared too. */
static int nonce_state(struct db_sqlite *d, const char *node, const char *nonce, int64_t now, enum db_nonce *out,
		       ingot_error *e)
{
	sqlite3 *h = d->h;
	sqlite3_stmt *st = NULL;
	int r, kept;

	if ((r = stmt_get(d, DB_SQL_NONCE_LOOKUP, &st, &kept, e)) < 0)
		return r;
	bind(st, "s", nonce);
	r = sqlite3_step(st);
	if (r == SQLITE_DONE || (r == SQLITE_ROW && strcmp((const char *)sqlite3_column_text(st, 0), node)))
		*out = DB_NONCE_UNKNOWN;
	else if (r == SQLITE_ROW && sqlite3_column_type(st, 2) != SQLITE_NULL)
		*out = DB_NONCE_USED;
	else if (r == SQLITE_ROW && sqlite3_column_int64(st, 1) <= now)
		*out = DB_NONCE_EXPIRED;
	else if (r == SQLITE_ROW)
		*out = DB_NONCE_OK;
	if (r != SQLITE_ROW && r != SQLITE_DONE)
		r = fail(h, e, "nonce lookup");
	stmt_done(st, kept);
	return r == SQLITE_ROW || r == SQLITE_DONE ? 0 : r;
}

static int sqlite_nonce_check(struct db *db, const char *node, const char *nonce, int64_t now, enum db_nonce *out,
			      ingot_error *e)
{
	return nonce_state((struct db_sqlite *)db, node, nonce, now, out, e);
}

static json_t *col_text(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? json_null()
							 : json_string((const char *)sqlite3_column_text(st, i));
}

static json_t *col_int(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? json_null() : json_integer(sqlite3_column_int64(st, i));
}

static int sqlite_node_get(struct db *db, const char *node, int history, json_t **out, ingot_error *e)
{
	sqlite3 *h = H(db);
	sqlite3_stmt *st = NULL;
	_cleanup_json_ json_t *o = NULL;
	int r;

	*out = NULL;
	/* One read transaction: the node row and its history agree. */
	if ((r = exec(h, "BEGIN", e)) < 0)
		return r;
	if ((r = prepare(h, DB_SQL_NODE_GET, &st, e)) < 0)
		goto out;
	bind(st, "s", node);
	if ((r = sqlite3_step(st)) == SQLITE_ROW)
		o = json_pack("{s:s,s:o,s:o,s:o,s:o,s:[]}", "node", node, "state", col_text(st, 0), "reason",
			      col_text(st, 1), "time", col_int(st, 2), "last_admit", col_int(st, 3), "history");
	sqlite3_finalize(st);
	if (r != SQLITE_ROW && r != SQLITE_DONE) {
		r = fail(h, e, "node lookup");
		goto out;
	}
	r = 0;
	if (!o)
		goto out;
	if ((r = prepare(h, DB_SQL_NODE_HISTORY, &st, e)) < 0)
		goto out;
	bind(st, "si", node, (int64_t)history);
	while ((r = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(json_object_get(o, "history"),
				      json_pack("{s:o,s:o,s:o,s:o,s:o,s:o}", "id", col_int(st, 0), "time", col_int(st, 1),
						"verdict", col_text(st, 2), "reason", col_text(st, 3), "nonce",
						col_text(st, 4), "ak_id", col_text(st, 5)));
	sqlite3_finalize(st);
	r = r == SQLITE_DONE ? 0 : fail(h, e, "history");
	if (r == 0)
		*out = TAKE_PTR(o);
out:
	exec(h, "COMMIT", NULL);
	return r;
}

static int sqlite_sweep_stale(struct db *db, int64_t cutoff, int64_t now, const char *reason, json_t **out,
			      ingot_error *e)
{
	sqlite3 *h = H(db);
	sqlite3_stmt *st = NULL;
	_cleanup_json_ json_t *cand = json_array(), *done = json_array();
	int r;

	if ((r = prepare(h, DB_SQL_STALE_CANDIDATES, &st, e)) < 0)
		return r;
	bind(st, "i", cutoff);
	while ((r = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(cand, json_string((const char *)sqlite3_column_text(st, 0)));
	sqlite3_finalize(st);
	if (r != SQLITE_DONE)
		return fail(h, e, "stale nodes");
	size_t i;
	json_t *n;
	json_array_foreach(cand, i, n) {
		int changed = 0;
		if ((r = db_sql_mark_stale(db, json_string_value(n), cutoff, now, reason, &changed, e)) < 0)
			return r;
		if (changed)
			json_array_append(done, n);
	}
	*out = TAKE_PTR(done);
	return 0;
}

static int sqlite_pool_evidence(struct db *db, const char *pool, json_t **out, ingot_error *e)
{
	sqlite3 *h = H(db);
	sqlite3_stmt *st = NULL;
	_cleanup_json_ json_t *rows = json_array();
	int r;

	if ((r = prepare(h, DB_SQL_POOL_EVIDENCE, &st, e)) < 0)
		return r;
	bind(st, "s", pool);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		const char *col[DB_SQL_POOL_EVIDENCE_COLS];
		for (int i = 0; i < DB_SQL_POOL_EVIDENCE_COLS; i++)
			col[i] = (const char *)sqlite3_column_text(st, i);
		if ((r = db_sql_evidence_row(rows, col, e)) < 0)
			break;
	}
	sqlite3_finalize(st);
	if (r < 0)
		return r;
	if (r != SQLITE_DONE)
		return fail(h, e, "pool evidence");
	*out = TAKE_PTR(rows);
	return 0;
}

static int sqlite_checkpoint(struct db *db, int restart, int *log, int *copied, ingot_error *e)
{
	int rc = sqlite3_wal_checkpoint_v2(H(db), NULL, restart ? SQLITE_CHECKPOINT_RESTART : SQLITE_CHECKPOINT_PASSIVE,
					   log, copied);

	/* BUSY: another checkpoint, or a reader that outlasted the timeout;
	 * the next call copies the rest */
	if (rc == SQLITE_BUSY)
		return restart ? -EBUSY : 0;
	return rc == SQLITE_OK ? 0 : fail(H(db), e, "checkpoint");
}

static int sqlite_checkpoint_defer(struct db *db, ingot_error *e)
{
	return exec(H(db), "PRAGMA wal_autocheckpoint=0", e);
}

static int sqlite_nonce_forget(struct db *db, int64_t cutoff, ingot_error *e)
{
	return db_sql_run(db, DB_SQL_NONCE_FORGET, NULL, e, "i", cutoff);
}

static int sqlite_node_counts(struct db *db, json_t **out, ingot_error *e)
{
	sqlite3 *h = H(db);
	sqlite3_stmt *st = NULL;
	_cleanup_json_ json_t *o = json_object();
	int r;

	if ((r = prepare(h, DB_SQL_NODE_COUNTS, &st, e)) < 0)
		return r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW)
		json_object_set_new(o, (const char *)sqlite3_column_text(st, 0), json_integer(sqlite3_column_int64(st, 1)));
	sqlite3_finalize(st);
	if (r != SQLITE_DONE)
		return fail(h, e, "node counts");
	*out = TAKE_PTR(o);
	return 0;
}

static int sqlite_vrun(struct db *db, const char *sql, int *changes, int64_t *first, char **text, ingot_error *e,
		       const char *types, va_list ap)
{
	return vrun((struct db_sqlite *)db, sql, e, changes, first, text, types, ap);
}

static int sqlite_script(struct db *db, const char *sql, ingot_error *e)
{
	return exec(H(db), sql, e);
}

static void sqlite_rollback(struct db *db)
{
	rollback(H(db));
}

/* Every write takes the write lock first: a nonce is checked and
 * consumed under it. */
static const struct db_sql sqlite_sql = {
	.begin_write = "BEGIN IMMEDIATE",
	.migrations = migrations,
	.vrun = sqlite_vrun,
	.script = sqlite_script,
	.rollback = sqlite_rollback,
	.nonce_state = sqlite_nonce_check,
};

static const struct db_backend sqlite_backend = {
	.name = "sqlite",
	.close = sqlite_close,
	.nonce_issue = db_sql_nonce_issue,
	.nonces_held = db_sql_nonces_held,
	.nonce_check = sqlite_nonce_check,
	.verdict_commit = db_sql_verdict_commit,
	.verdict_record = db_sql_verdict_record,
	.node_get = sqlite_node_get,
	.sweep_stale = sqlite_sweep_stale,
	.pool_evidence = sqlite_pool_evidence,
	.nonce_forget = sqlite_nonce_forget,
	.node_counts = sqlite_node_counts,
	.enrol_open = db_sql_enrol_open,
	.enrol_get = db_sql_enrol_get,
	.enrol_move = db_sql_enrol_move,
	.checkpoint = sqlite_checkpoint,
	.checkpoint_defer = sqlite_checkpoint_defer,
};

int db_sqlite_open(const char *path, struct db **out, ingot_error *e)
{
	struct db_sqlite *d = xcalloc(1, sizeof(*d));
	int r;

	d->db.ops = &sqlite_backend;
	d->db.sql = &sqlite_sql;
	if (sqlite3_open_v2(path, &d->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		r = ingot_fail(e, -EIO, "%s: cannot open database: %s", path, d->h ? sqlite3_errmsg(d->h) : "out of memory");
		goto fail;
	}
	sqlite3_busy_timeout(d->h, BUSY_TIMEOUT_MS);
	if ((r = exec_busy_retry(d->h, "PRAGMA journal_mode=WAL", e)) < 0 || (r = exec(d->h, "PRAGMA synchronous=FULL", e)) < 0 ||
	    (r = exec(d->h, "PRAGMA foreign_keys=ON", e)) < 0 || (r = db_sql_migrate(&d->db, e)) < 0) {
		ingot_prefix(e, "%s", path);
		goto fail;
	}
	*out = &d->db;
	return 0;
fail:
	sqlite_close(&d->db);
	return r;
}
