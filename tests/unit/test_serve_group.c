/* Units for the verifier's grouped commits (server/db-group.h) on
 * SQLite: every write handed over is committed, and the write-ahead log
 * stays bounded while a checkpointer thread copies it back behind a
 * committer that is never idle (the committer waits for it past the
 * bound; without that wait the log grows for as long as writes come). */
#include "tests/unit/helpers.h"

#include <sqlite3.h>
#include <stdatomic.h>
#include <sys/stat.h>

#include "server/db-group.h"

#define WRITES 6000
#define WAL_MAX 64   /* frames */

static char dir[64], path[256], wal[272];
static atomic_int done_count;

static void done(void *arg)
{
	(void)arg;
	done_count++;
}

static long long wal_size(void)
{
	struct stat st;

	return stat(wal, &st) == 0 ? (long long)st.st_size : 0;
}

static void test_wal_bounded(void **state)
{
	static struct db_group_job jobs[WRITES];
	static char nodes[WRITES][16], nonces[WRITES][48];
	struct db_group *g = NULL;
	ingot_error e = { 0 };
	long long most = 0;
	(void)state;

	assert_int_equal(db_group_open(path, &g, &e), 0);
	db_group_set_wal_max(g, WAL_MAX);
	for (int i = 0; i < WRITES; i++) {
		snprintf(nodes[i], sizeof(nodes[i]), "node-%05d", i % 997);
		snprintf(nonces[i], sizeof(nonces[i]), "%032x%06d", (unsigned)(i * 2654435761u), i);
		db_group_nonce_issue(g, &jobs[i], nodes[i], nonces[i], 1000, 2000, 1000, done, NULL);
		if (i % 100 == 0 && wal_size() > most)
			most = wal_size();
	}
	while (done_count < WRITES) {
		if (wal_size() > most)
			most = wal_size();
		usleep(1000);
	}
	for (int i = 0; i < WRITES; i++)
		assert_int_equal(jobs[i].r, 0);
	if (wal_size() > most)
		most = wal_size();
	usleep(100 * 1000);   /* the checkpointer's last pass */
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	long long copied = sb.st_size;
	db_group_close(g);

	/* every write is in the database */
	sqlite3 *h;
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, "SELECT count(*) FROM nonces", -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_int_equal(sqlite3_column_int(st, 0), WRITES);
	sqlite3_finalize(st);
	sqlite3_close(h);
	/* The log was copied back while the group ran (the committer's own
	 * commits no longer do it), and kept to a few groups' frames: all
	 * the groups' frames, never copied, are over 10,000. */
	assert_true(copied > 4 * 4096);
	assert_true(most > 0);
	assert_true(most <= 4096 * 4120LL + 32);
}

static int setup(void **state)
{
	(void)state;
	if (th_mkdtemp(dir, sizeof(dir), "servegroup") < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/v.sqlite", dir);
	snprintf(wal, sizeof(wal), "%s-wal", path);
	done_count = 0;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return th_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_wal_bounded, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
