/* lib/idxmap.h: the one hash index of the block and file caches. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/idxmap.h"

#define N 20000

struct fx {
	uint64_t key[N];
	struct idxmap m;
};

/* A poor hash on purpose: many keys share a bucket, so probing runs long. */
static size_t hash_of(uint64_t k) { return (size_t)(k % 1021); }
static size_t entry_hash(const void *ctx, size_t i) { return hash_of(((const struct fx *)ctx)->key[i]); }
static bool entry_is(const void *ctx, size_t i, const void *key)
{
	return ((const struct fx *)ctx)->key[i] == *(const uint64_t *)key;
}

static size_t *slot(struct fx *f, uint64_t k)
{
	return idxmap_find(&f->m, hash_of(k), entry_is, f, &k);
}

static void test_add_find_drop(void **state)
{
	static struct fx f;
	size_t n = 0;
	(void)state;
	assert_null(slot(&f, 7));   /* empty: no table yet */
	for (uint64_t k = 0; k < N; k++) {
		idxmap_reserve(&f.m, n, entry_hash, &f);
		size_t *s = slot(&f, k * 7919);
		assert_non_null(s);
		assert_int_equal(*s, 0);
		f.key[n] = k * 7919;
		*s = ++n;
		assert_true(f.m.cap >= 2 * n);
	}
	for (uint64_t k = 0; k < N; k++)
		assert_int_equal(*slot(&f, k * 7919), k + 1);
	assert_int_equal(*slot(&f, 5), 0);
	/* Drop the second half and index again: the first half still found,
	 * the dropped ones gone, probe chains whole. */
	n = N / 2;
	idxmap_rebuild(&f.m, n, entry_hash, &f);
	for (uint64_t k = 0; k < N; k++)
		assert_int_equal(*slot(&f, k * 7919), k < N / 2 ? k + 1 : 0);
	idxmap_free(&f.m);
	assert_null(slot(&f, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_find_drop),
	};
	return cmocka_run_group_tests_name("idxmap", tests, NULL, NULL);
}
