/* Units for the verifier's database backends (server/db.h): the nonce
 * rules (issued to that node, unused, unexpired) checked and consumed
 * with the verdict in one transaction, so two connections racing for one
 * nonce store exactly one verdict; the schema migrated once and a newer
 * one refused; the sweep; enrolments, one open per node and moved
 * conditionally; each node's latest evidence, for the pool view.  SQLite always; PostgreSQL too when
 * INGOT_TEST_PG holds a libpq connection string to an empty database of
 * its own (tests/e2e/test-serve-pg.sh runs it so, on a private cluster). */
#include "tests/unit/helpers.h"

#include <libpq-fe.h>
#include <pthread.h>
#include <sqlite3.h>

#include "server/db.h"

static char dir[64], path[256];
static const char *pg;   /* the conninfo, while the PostgreSQL group runs */

/* One statement on the test's database, beside the backend: the first
 * column of the first row as an integer (0 if none). */
static long long sql(const char *q)
{
	long long v = 0;

	if (pg) {
		PGconn *c = PQconnectdb(pg);
		assert_int_equal(PQstatus(c), CONNECTION_OK);
		PGresult *res = PQexec(c, "SET client_min_messages = warning");
		PQclear(res);
		res = PQexec(c, q);
		assert_true(PQresultStatus(res) == PGRES_TUPLES_OK || PQresultStatus(res) == PGRES_COMMAND_OK);
		if (PQntuples(res) > 0)
			v = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
		PQclear(res);
		PQfinish(c);
		return v;
	}
	sqlite3 *h;
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, q, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	return v;
}

static int setup(void **state)
{
	(void)state;
	if (th_mkdtemp(dir, sizeof(dir), "servedb") < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/v.sqlite", dir);
	unlink(path);
	return 0;
}

static int setup_pg(void **state)
{
	(void)state;
	snprintf(path, sizeof(path), "%s%s", DB_PG_PREFIX, pg);
	sql("DROP TABLE IF EXISTS nonces, verdicts, nodes, enrolments, evidence, schema_version");
	return 0;
}

static int teardown_pg(void **state)
{
	(void)state;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return th_rmtree(dir);
}

static struct db *open_db(void)
{
	struct db *d = NULL;
	ingot_error e = { 0 };

	assert_int_equal(db_open(path, &d, &e), 0);
	return d;
}

static void test_nonce_rules(void **state)
{
	struct db *d = open_db();
	ingot_error e = { 0 };
	enum db_nonce n;
	struct db_verdict v = { .node = "n1", .nonce = "aa", .time = 100, .verdict = "admit", .reason = "ok" };

	(void)state;
	assert_int_equal(d->ops->nonce_issue(d, "n1", "aa", 100, 160, 4, &e), 0);
	assert_int_equal(d->ops->nonce_issue(d, "n1", "bb", 100, 160, 4, &e), 0);
	/* at most max unused, unexpired ones per node */
	assert_int_equal(d->ops->nonce_issue(d, "n1", "a1", 100, 160, 3, &e), 0);
	assert_int_equal(d->ops->nonce_issue(d, "n1", "a2", 100, 160, 3, &e), -EBUSY);
	assert_int_equal(d->ops->nonce_issue(d, "n1", "a2", 160, 220, 3, &e), 0);   /* the others expired */
	/* a nonce is issued once */
	assert_true(d->ops->nonce_issue(d, "n2", "aa", 100, 160, 4, &e) < 0);
	assert_int_equal(d->ops->nonce_check(d, "n2", "aa", 100, &n, &e), 0);
	assert_int_equal(n, DB_NONCE_UNKNOWN);   /* another node's */
	assert_int_equal(d->ops->nonce_check(d, "n1", "cc", 100, &n, &e), 0);
	assert_int_equal(n, DB_NONCE_UNKNOWN);
	v.time = 160;   /* expiry is exclusive */
	assert_int_equal(d->ops->verdict_commit(d, &v, &n, &e), 0);
	assert_int_equal(n, DB_NONCE_EXPIRED);
	v.time = 120;
	assert_int_equal(d->ops->verdict_commit(d, &v, &n, &e), 0);
	assert_int_equal(n, DB_NONCE_OK);
	assert_int_equal(d->ops->verdict_commit(d, &v, &n, &e), 0);
	assert_int_equal(n, DB_NONCE_USED);
	/* the read a nonce request's limit is decided by: unused, unexpired */
	int64_t held = -1;
	assert_int_equal(d->ops->nonces_held(d, "n1", 100, &held, &e), 0);
	assert_int_equal(held, 3);   /* bb, a1, a2 (aa used) */
	assert_int_equal(d->ops->nonces_held(d, "n1", 160, &held, &e), 0);
	assert_int_equal(held, 1);   /* a2 */
	assert_int_equal(d->ops->nonces_held(d, "n3", 100, &held, &e), 0);
	assert_int_equal(held, 0);
	v.node = "n2", v.nonce = "bb";
	assert_int_equal(d->ops->verdict_commit(d, &v, &n, &e), 0);
	assert_int_equal(n, DB_NONCE_UNKNOWN);

	json_t *o = NULL;
	assert_int_equal(d->ops->node_get(d, "n1", 10, &o, &e), 0);
	assert_non_null(o);
	assert_string_equal(json_string_value(json_object_get(o, "state")), "admit");
	assert_int_equal(json_array_size(json_object_get(o, "history")), 1);
	json_decref(o);
	assert_int_equal(d->ops->node_get(d, "n2", 10, &o, &e), 0);
	assert_null(o);
	d->ops->close(d);
}

struct racer {
	pthread_barrier_t *go;
	int ok, used;   /* won it; told it was used (not an error) */
};

static void *race(void *arg)
{
	struct racer *r = arg;
	struct db *d = open_db();
	ingot_error e = { 0 };
	enum db_nonce n = DB_NONCE_UNKNOWN;
	struct db_verdict v = { .node = "n1", .nonce = "race", .time = 120, .verdict = "admit", .reason = "ok" };

	pthread_barrier_wait(r->go);
	if (d->ops->verdict_commit(d, &v, &n, &e) == 0)
		r->ok = n == DB_NONCE_OK, r->used = n == DB_NONCE_USED;
	d->ops->close(d);
	return NULL;
}

static void test_nonce_race(void **state)
{
	enum { N = 8 };
	struct db *d = open_db();
	ingot_error e = { 0 };
	pthread_barrier_t go;
	pthread_t t[N];
	struct racer r[N];
	int won = 0, used = 0;

	(void)state;
	assert_int_equal(d->ops->nonce_issue(d, "n1", "race", 100, 1000, 4, &e), 0);
	pthread_barrier_init(&go, NULL, N);
	for (int i = 0; i < N; i++) {
		r[i] = (struct racer){ .go = &go };
		pthread_create(&t[i], NULL, race, &r[i]);
	}
	for (int i = 0; i < N; i++) {
		pthread_join(t[i], NULL);
		won += r[i].ok;
		used += r[i].used;
	}
	pthread_barrier_destroy(&go);
	assert_int_equal(won, 1);
	assert_int_equal(used, N - 1);
	json_t *o = NULL;
	assert_int_equal(d->ops->node_get(d, "n1", 100, &o, &e), 0);
	assert_int_equal(json_array_size(json_object_get(o, "history")), 1);
	json_decref(o);
	d->ops->close(d);
}

static void *open_close(void *arg)
{
	struct db *d = NULL;
	ingot_error e = { 0 };

	pthread_barrier_wait(arg);
	if (db_open(path, &d, &e) < 0) {
		fprintf(stderr, "open: %s\n", e.msg);
		return (void *)1;
	}
	d->ops->close(d);
	return NULL;
}

/* Verifiers started together on an empty database: one migrates, the
 * others wait for it and find the schema current. */
static void test_migrate_race(void **state)
{
	enum { N = 6 };
	pthread_barrier_t go;
	pthread_t t[N];
	int failed = 0;

	(void)state;
	pthread_barrier_init(&go, NULL, N);
	for (int i = 0; i < N; i++)
		pthread_create(&t[i], NULL, open_close, &go);
	for (int i = 0; i < N; i++) {
		void *ret;
		pthread_join(t[i], &ret);
		failed += ret != NULL;
	}
	pthread_barrier_destroy(&go);
	assert_int_equal(failed, 0);
	assert_int_equal(sql("SELECT count(*) FROM schema_version"), db_schema_version());
}

static void test_schema(void **state)
{
	struct db *d = open_db();
	ingot_error e = { 0 };

	(void)state;
	d->ops->close(d);
	d = open_db();   /* migrated once: a second open changes nothing */
	d->ops->close(d);
	assert_int_equal(sql("SELECT count(*) FROM schema_version"), db_schema_version());
	assert_int_equal(sql("SELECT max(version) FROM schema_version"), db_schema_version());
	sql("INSERT INTO schema_version VALUES (999)");
	d = NULL;
	assert_true(db_open(path, &d, &e) < 0);
	assert_non_null(strstr(e.msg, "schema version 999 is newer than this ingot's"));
	assert_true(db_open("postgresql://x", &d, &e) < 0);
	/* no server there: one line naming the backend */
	assert_true(db_open("postgresql:host=/nonexistent port=1 connect_timeout=2", &d, &e) < 0);
	assert_non_null(strstr(e.msg, "database: postgresql: cannot connect: "));
	assert_null(strchr(e.msg, '\n'));
}

static void test_sweep(void **state)
{
	struct db *d = open_db();
	ingot_error e = { 0 };
	json_t *out = NULL;
	struct db_verdict v = { .node = "old", .time = 100, .verdict = "admit", .reason = "ok" };

	(void)state;
	assert_int_equal(d->ops->verdict_record(d, &v, &e), 0);
	v.node = "new", v.time = 200;
	assert_int_equal(d->ops->verdict_record(d, &v, &e), 0);
	v.node = "refused", v.time = 50, v.verdict = "refuse";
	assert_int_equal(d->ops->verdict_record(d, &v, &e), 0);
	assert_int_equal(d->ops->sweep_stale(d, 150, 300, "stale: test", &out, &e), 0);
	assert_int_equal(json_array_size(out), 1);
	assert_string_equal(json_string_value(json_array_get(out, 0)), "old");
	json_decref(out);
	/* once stale, not swept again */
	assert_int_equal(d->ops->sweep_stale(d, 150, 301, "stale: test", &out, &e), 0);
	assert_int_equal(json_array_size(out), 0);
	json_decref(out);
	d->ops->close(d);
}

static void test_enrolments(void **state)
{
	struct db *d = open_db();
	ingot_error e = { 0 };
	struct db_enrolment en;
	int changed = 0;

	(void)state;
	assert_int_equal(d->ops->enrol_open(d, "e1", "n1", "{\"a\":1}", 100, 160, 0, &e), 0);
	/* one pending per node ... */
	assert_int_equal(d->ops->enrol_open(d, "e2", "n1", "{\"a\":2}", 120, 180, 0, &e), -EBUSY);
	assert_int_equal(d->ops->enrol_open(d, "e2", "n2", "{\"a\":2}", 120, 180, 0, &e), 0);
	/* ... until it expired */
	assert_int_equal(d->ops->enrol_open(d, "e3", "n1", "{\"a\":3}", 160, 220, 0, &e), 0);
	assert_int_equal(d->ops->enrol_get(d, "e3", &en, &e), 0);
	assert_int_equal(en.status, DB_ENROL_PENDING);
	assert_int_equal(en.moved, 160);
	assert_string_equal(en.state, "{\"a\":3}");
	free(en.state);
	assert_int_equal(d->ops->enrol_get(d, "nope", &en, &e), 0);
	assert_int_equal(en.status, DB_ENROL_NONE);
	assert_null(en.state);
	/* moved only from the status it is in: of two racers, one */
	assert_int_equal(d->ops->enrol_move(d, "e3", DB_ENROL_PENDING, DB_ENROL_PROVEN, 170, &changed, &e), 0);
	assert_int_equal(changed, 1);
	assert_int_equal(d->ops->enrol_move(d, "e3", DB_ENROL_PENDING, DB_ENROL_PROVEN, 171, &changed, &e), 0);
	assert_int_equal(changed, 0);
	assert_int_equal(d->ops->enrol_get(d, "e3", &en, &e), 0);
	assert_int_equal(en.status, DB_ENROL_PROVEN);
	assert_int_equal(en.moved, 170);
	free(en.state);
	/* a proven one holds the node while it awaits approval */
	assert_int_equal(d->ops->enrol_open(d, "e4", "n1", "{}", 300, 360, 0, &e), -EBUSY);
	assert_int_equal(d->ops->enrol_open(d, "e4", "n1", "{}", 300, 360, 200, &e), 0);
	d->ops->close(d);
}

/* Each node's latest evidence, kept in the verdict's transaction (one row
 * a node, replaced), read back by pool with the node's state. */
static void test_evidence(void **state)
{
	struct db *d = open_db();
	ingot_error e = { 0 };
	enum db_nonce n;
	json_t *rows = NULL;
	struct db_verdict v = { .node = "n1", .nonce = "e1", .time = 120, .verdict = "refuse", .reason = "no",
				.evidence = "{\"time\":\"first\"}", .pool = "p" };

	(void)state;
	assert_int_equal(d->ops->nonce_issue(d, "n1", "e1", 100, 1000, 4, &e), 0);
	assert_int_equal(d->ops->nonce_issue(d, "n1", "e2", 100, 1000, 4, &e), 0);
	assert_int_equal(d->ops->nonce_issue(d, "n2", "e3", 100, 1000, 4, &e), 0);
	assert_int_equal(d->ops->verdict_commit(d, &v, &n, &e), 0);
	v.nonce = "e2", v.time = 130, v.verdict = "admit", v.evidence = "{\"time\":\"second\"}";
	assert_int_equal(d->ops->verdict_commit(d, &v, &n, &e), 0);
	/* a refused nonce stores no evidence either */
	v.evidence = "{\"time\":\"replayed\"}";
	assert_int_equal(d->ops->verdict_commit(d, &v, &n, &e), 0);
	assert_int_equal(n, DB_NONCE_USED);
	v.node = "n2", v.nonce = "e3", v.pool = "q";
	assert_int_equal(d->ops->verdict_commit(d, &v, &n, &e), 0);
	/* a verdict without evidence (the sweep's, an operator's) keeps it */
	struct db_verdict drain = { .node = "n1", .time = 140, .verdict = "drain", .reason = "operator" };
	assert_int_equal(d->ops->verdict_record(d, &drain, &e), 0);

	assert_int_equal(d->ops->pool_evidence(d, "p", &rows, &e), 0);
	assert_int_equal(json_array_size(rows), 1);
	json_t *r = json_array_get(rows, 0);
	assert_string_equal(json_string_value(json_object_get(r, "node")), "n1");
	assert_string_equal(json_string_value(json_object_get(json_object_get(r, "evidence"), "time")), "second");
	assert_string_equal(json_string_value(json_object_get(r, "nonce")), "e2");
	assert_string_equal(json_string_value(json_object_get(r, "verdict")), "admit");
	assert_int_equal(json_integer_value(json_object_get(r, "time")), 130);
	assert_string_equal(json_string_value(json_object_get(r, "state")), "drain");
	assert_int_equal(json_integer_value(json_object_get(r, "last_admit")), 130);
	json_decref(rows);
	assert_int_equal(d->ops->pool_evidence(d, "none", &rows, &e), 0);
	assert_int_equal(json_array_size(rows), 0);
	json_decref(rows);
	assert_int_equal(sql("SELECT count(*) FROM evidence"), 2);
	d->ops->close(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_nonce_rules, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nonce_race, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_race, setup, teardown),
		cmocka_unit_test_setup_teardown(test_schema, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sweep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_enrolments, setup, teardown),
		cmocka_unit_test_setup_teardown(test_evidence, setup, teardown),
	};
	int r = cmocka_run_group_tests_name("sqlite", tests, NULL, NULL);
	if (!(pg = getenv("INGOT_TEST_PG")) || !*pg)
		return r;
	const struct CMUnitTest pg_tests[] = {
		cmocka_unit_test_setup_teardown(test_nonce_rules, setup_pg, teardown_pg),
		cmocka_unit_test_setup_teardown(test_nonce_race, setup_pg, teardown_pg),
		cmocka_unit_test_setup_teardown(test_migrate_race, setup_pg, teardown_pg),
		cmocka_unit_test_setup_teardown(test_schema, setup_pg, teardown_pg),
		cmocka_unit_test_setup_teardown(test_sweep, setup_pg, teardown_pg),
		cmocka_unit_test_setup_teardown(test_enrolments, setup_pg, teardown_pg),
		cmocka_unit_test_setup_teardown(test_evidence, setup_pg, teardown_pg),
	};
	return r | cmocka_run_group_tests_name("postgresql", pg_tests, NULL, NULL);
}
