/* Units for lib/parfor.h: every index run once, per-thread state made
 * and freed once per thread, and the same result under any thread count:
 * the least failed index wins (its error, its index), and with stop no
 * index below it is skipped. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/parfor.h"

#define N 5000

struct run {
	atomic_int calls[N];
	int out[N];
	atomic_int locals;            /* made minus freed */
	size_t fail_from, fail_every; /* fails i >= fail_from with i % fail_every == 0 */
};

static void *local_new(void *ctx)
{
	struct run *r = ctx;
	atomic_fetch_add(&r->locals, 1);
	return r;
}

static void local_free(void *local)
{
	struct run *r = local;
	atomic_fetch_sub(&r->locals, 1);
}

static int one(void *ctx, void *local, size_t i, ingot_error *e)
{
	struct run *r = ctx;

	assert_ptr_equal(local, r);
	atomic_fetch_add(&r->calls[i], 1);
	r->out[i] = (int)(i * 3);
	/* Pauses, so the threads interleave and the least failure is not
	 * the first one met. */
	if (i % 50 == 0 || i == 1239)
		nanosleep(&(struct timespec){ .tv_nsec = i == 1239 ? 2000000 : 20000 }, NULL);
	if (r->fail_every && i >= r->fail_from && i % r->fail_every == 0)
		return ingot_fail(e, -(int)(1 + i % 100), "item %zu failed", i);
	return 0;
}

static int run(struct run *r, unsigned threads, bool stop, size_t *at, ingot_error *e)
{
	struct parfor pf = { .n = N, .threads = threads, .min_share = 1, .stop = stop, .fn = one,
			     .ctx = r, .local_new = local_new, .local_free = local_free };
	for (size_t i = 0; i < N; i++)
		atomic_init(&r->calls[i], 0), r->out[i] = -1;
	atomic_init(&r->locals, 0);
	return parfor_run(&pf, at, e);
}

static void test_all_once(void **state)
{
	static struct run r;
	(void)state;
	for (unsigned t = 0; t <= 9; t++) {
		ingot_error e = { 0 };
		size_t at = 42;
		assert_int_equal(run(&r, t, false, &at, &e), 0);
		assert_int_equal(at, 42);   /* untouched on success */
		assert_int_equal(atomic_load(&r.locals), 0);
		for (size_t i = 0; i < N; i++) {
			assert_int_equal(atomic_load(&r.calls[i]), 1);
			assert_int_equal(r.out[i], (int)(i * 3));
		}
	}
}

static void test_least_failed_wins(void **state)
{
	static struct run r;
	(void)state;
	r.fail_from = 1234, r.fail_every = 7;   /* 1239 is the least */
	for (int stop = 0; stop <= 1; stop++)
		for (unsigned t = 1; t <= 9; t++)
			for (int rep = 0; rep < 5; rep++) {
				ingot_error e = { 0 };
				size_t at = 0;
				assert_int_equal(run(&r, t, stop, &at, &e), -(1 + 1239 % 100));
				assert_int_equal(at, 1239);
				assert_string_equal(e.msg, "item 1239 failed");
				assert_int_equal(atomic_load(&r.locals), 0);
				for (size_t i = 0; i < N; i++) {
					int c = atomic_load(&r.calls[i]);
					if (i <= 1239 || !stop)
						assert_int_equal(c, 1);   /* nothing below the failure skipped */
					else
						assert_true(c <= (t == 1 ? 0 : 1));   /* one thread stops at once */
				}
			}
}

static void test_empty_and_null_error(void **state)
{
	static struct run r;
	struct parfor pf = { .n = 0, .fn = one, .ctx = &r };
	(void)state;
	assert_int_equal(parfor_run(&pf, NULL, NULL), 0);
	r.fail_from = 0, r.fail_every = 1;
	assert_int_equal(run(&r, 4, true, NULL, NULL), -1);   /* index 0 */
	assert_int_equal(atomic_load(&r.calls[0]), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_once),
		cmocka_unit_test(test_least_failed_wins),
		cmocka_unit_test(test_empty_and_null_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
