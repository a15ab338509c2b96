/* lib/strbuf: buf is never NULL.  An empty strbuf points at the shared
 * slop buffer, which no operation writes, so callers read sb.buf as ""
 * without a guard. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lib/strbuf.h"

static void test_init_is_empty_string(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	(void)state;
	assert_non_null(sb.buf);
	assert_ptr_equal(sb.buf, strbuf_slopbuf);
	assert_string_equal(sb.buf, "");
	assert_int_equal(sb.len, 0);
	/* What the guards were for: an empty strbuf printed and parsed as "". */
	assert_int_equal(strlen(sb.buf), 0);
	strbuf_release(&sb);
	assert_ptr_equal(sb.buf, strbuf_slopbuf);
}

static void test_slop_never_written(void **state)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	(void)state;
	strbuf_reset(&a);
	strbuf_setlen(&a, 0);
	strbuf_addstr(&a, "");
	strbuf_addstr(&b, "hello");
	assert_string_equal(b.buf, "hello");
	assert_true(b.buf != strbuf_slopbuf);
	strbuf_release(&b);
	assert_ptr_equal(b.buf, strbuf_slopbuf);
	assert_int_equal(strbuf_slopbuf[0], '\0');
	strbuf_release(&a);
}

static void test_detach_empty_is_owned(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	size_t len = 99;
	(void)state;
	char *s = strbuf_detach(&sb, &len);
	assert_non_null(s);
	assert_true(s != strbuf_slopbuf);
	assert_string_equal(s, "");
	assert_int_equal(len, 0);
	assert_ptr_equal(sb.buf, strbuf_slopbuf);
	free(s);
	strbuf_addf(&sb, "%d", 42);
	s = strbuf_detach(&sb, NULL);
	assert_string_equal(s, "42");
	assert_ptr_equal(sb.buf, strbuf_slopbuf);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_is_empty_string),
		cmocka_unit_test(test_slop_never_written),
		cmocka_unit_test(test_detach_empty_is_owned),
	};
	return cmocka_run_group_tests_name("strbuf", tests, NULL, NULL);
}
