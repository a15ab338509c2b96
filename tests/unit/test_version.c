/* Units for lib/version: dotted numeric comparison and version extraction. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "lib/version.h"

static int sign(int x) { return (x > 0) - (x < 0); }

static void test_cmp(void **state)
{
	static const struct { const char *a, *b; int want; } cases[] = {
		{ "580.95.05", "580.105.08", -1 },  /* numeric, not lexical */
		{ "13.3", "13.10", -1 },
		{ "2.30.7", "2.32.3", -1 },
		{ "13.0", "13.0.0", 0 },            /* missing components are 0 */
		{ "13.0", "13.0.2", -1 },
		{ "580.95.05", "580.95.5", 0 },     /* leading zeros do not count */
		{ "595.91.07", "580.95.05", 1 },
		{ "10", "9.99.99", 1 },
		{ "1.17.7", "1.17.8", -1 },
		{ "25.3.2", "25.3.2", 0 },
		{ "123456789012345678901234567890", "123456789012345678901234567891", -1 },
		{ "0", "0.0.0", 0 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(sign(version_cmp(cases[i].a, cases[i].b)), cases[i].want);
		assert_int_equal(sign(version_cmp(cases[i].b, cases[i].a)), -cases[i].want);
	}
}

static void test_valid(void **state)
{
	(void)state;
	assert_true(version_valid("580.95.05"));
	assert_true(version_valid("13"));
	assert_false(version_valid(""));
	assert_false(version_valid("13."));
	assert_false(version_valid(".13"));
	assert_false(version_valid("13..0"));
	assert_false(version_valid("v25.3.2"));
	assert_false(version_valid("2.27.7+cuda13.0"));
	assert_false(version_valid("580.95.05-1"));
}

static void test_prefix_match(void **state)
{
	(void)state;
	assert_true(version_prefix_match("13.0", "13.0.2"));
	assert_true(version_prefix_match("2.27.7", "2.27.7"));
	assert_true(version_prefix_match("2.30.7", "2.30.7.100100"));
	assert_false(version_prefix_match("13.0", "13.1.0"));
	assert_false(version_prefix_match("2.27.7", "2.21.5"));
	assert_false(version_prefix_match("580.95.05", "580.95"));
	assert_true(version_prefix_match("580.95.05", "580.95.5"));
}

static void test_upstream(void **state)
{
	char buf[32];
	(void)state;
	assert_string_equal(version_upstream("1:580.95.05-1", buf, sizeof(buf)), "580.95.05");
	assert_string_equal(version_upstream("2.27.7+cuda13.0", buf, sizeof(buf)), "2.27.7");
	assert_string_equal(version_upstream("10.1.0-52", buf, sizeof(buf)), "10.1.0");
	assert_string_equal(version_upstream("1.17.8-1", buf, sizeof(buf)), "1.17.8");
	assert_string_equal(version_upstream("13.0.", buf, sizeof(buf)), "13.0");
	assert_null(version_upstream("v1.2", buf, sizeof(buf)));
	assert_null(version_upstream("", buf, sizeof(buf)));
	assert_null(version_upstream("1234567890.1234567890.1234567890.1", buf, 8));
}

static void test_head(void **state)
{
	char buf[16];
	(void)state;
	assert_int_equal(version_components("580.95.05"), 3);
	assert_string_equal(version_head("580.95.05", 1, buf, sizeof(buf)), "580");
	assert_string_equal(version_head("580.95.05", 2, buf, sizeof(buf)), "580.95");
	assert_null(version_head("13", 2, buf, sizeof(buf)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cmp),
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_prefix_match),
		cmocka_unit_test(test_upstream),
		cmocka_unit_test(test_head),
	};
	return cmocka_run_group_tests_name("version", tests, NULL, NULL);
}
