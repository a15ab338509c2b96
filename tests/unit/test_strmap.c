/* Units for lib/strmap.h: every key found after growth, absent keys not
 * found, a put of a present key returns its slot, values freed once. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/strmap.h"

static void test_put_get_grow(void **state)
{
	struct strmap m = STRMAP_INIT;
	char k[32];
	int created;

	(void)state;
	assert_null(strmap_get(&m, "absent"));   /* an empty table */
	for (intptr_t i = 0; i < 5000; i++) {
		snprintf(k, sizeof(k), "node-%05ld", (long)i);
		void **v = strmap_put(&m, k, &created);
		assert_true(created);
		assert_null(*v);
		*v = (void *)(i + 1);
	}
	assert_int_equal(m.n, 5000);
	assert_true(m.cap >= 10000);   /* load at most 1/2 */
	for (intptr_t i = 0; i < 5000; i++) {
		snprintf(k, sizeof(k), "node-%05ld", (long)i);
		assert_int_equal((intptr_t)strmap_get(&m, k), i + 1);
	}
	assert_null(strmap_get(&m, "node-05000"));
	assert_null(strmap_get(&m, "node-0000"));   /* a prefix is another key */
	assert_null(strmap_get(&m, ""));
	/* A present key: the same slot, not a second entry. */
	void **v = strmap_put(&m, "node-00042", &created);
	assert_false(created);
	assert_int_equal((intptr_t)*v, 43);
	assert_int_equal(m.n, 5000);
	size_t seen = 0;
	struct strmap_slot *s;
	strmap_foreach(&m, s)
		seen++;
	assert_int_equal(seen, 5000);
	strmap_free(&m, NULL);
	assert_int_equal(m.n, 0);
	assert_null(strmap_get(&m, "node-00001"));
}

static int freed;
static void count_free(void *p)
{
	freed++;
	free(p);
}

static void test_free_values(void **state)
{
	struct strmap m = STRMAP_INIT;

	(void)state;
	*strmap_put(&m, "a", NULL) = strdup("1");
	*strmap_put(&m, "b", NULL) = strdup("2");
	*strmap_put(&m, "", NULL) = strdup("3");   /* the empty key is a key */
	assert_string_equal(strmap_get(&m, ""), "3");
	freed = 0;
	strmap_free(&m, count_free);
	assert_int_equal(freed, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_get_grow),
		cmocka_unit_test(test_free_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
