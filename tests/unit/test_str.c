/* Units for the shared small helpers: lib/str.h, json_set_hex
 * (lib/json.h) and ecdsa_rs_to_der (lib/ecdsa.h). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/ecdsa.h"
#include "lib/escape.h"
#include "lib/json.h"
#include "lib/str.h"
#include "lib/xalloc.h"

static void test_base_name(void **state)
{
	(void)state;
	assert_string_equal(base_name("a/b/c.deb"), "c.deb");
	assert_string_equal(base_name("c.deb"), "c.deb");
	assert_string_equal(base_name("dir/"), "");
}

static void test_ends_with(void **state)
{
	(void)state;
	assert_true(ends_with("x.report.json", ".json"));
	assert_true(ends_with(".json", ".json"));
	assert_false(ends_with("json", ".json"));
	assert_false(ends_with("x.jsonl", ".json"));
	assert_true(ends_with("x", ""));
}

static void test_hexval(void **state)
{
	(void)state;
	assert_int_equal(hexval('0'), 0);
	assert_int_equal(hexval('9'), 9);
	assert_int_equal(hexval('a'), 10);
	assert_int_equal(hexval('F'), 15);
	assert_int_equal(hexval('g'), -1);
	assert_int_equal(hexval('\0'), -1);
}

static void test_json_set_hex(void **state)
{
	const uint8_t d[] = { 0x00, 0xab, 0xff };
	json_t *o = json_object();
	(void)state;
	assert_int_equal(json_set_hex(o, "k", d, sizeof(d)), 0);
	assert_string_equal(json_string_value(json_object_get(o, "k")), "00abff");
	json_decref(o);
}

static void test_ecdsa_der(void **state)
{
	/* r = 1, s = 0x80 (a leading zero byte keeps it positive), given
	 * with leading zeros as P1363 pads them */
	const uint8_t r[] = { 0, 0, 1 }, s[] = { 0, 0x80 };
	const uint8_t want[] = { 0x30, 0x07, 0x02, 0x01, 0x01, 0x02, 0x02, 0x00, 0x80 };
	uint8_t *der = NULL;
	size_t len = 0;
	(void)state;
	assert_int_equal(ecdsa_rs_to_der(r, sizeof(r), s, sizeof(s), &der, &len), 0);
	assert_int_equal(len, sizeof(want));
	assert_memory_equal(der, want, sizeof(want));
	free(der);
}

/* The two escapes of lib/escape.h: \xNN for text, ls -b octal for
 * `ingot inspect`'s listing. */
static void test_escapes(void **state)
{
	const char in[] = "a\\b\nc\x1b\xc3\xa9";   /* a \ b LF c ESC e-acute */
	struct strbuf sb = STRBUF_INIT;
	(void)state;
	strbuf_add_escaped_octal(&sb, in, sizeof(in) - 1);
	assert_string_equal(sb.buf, "a\\\\b\\012c\\033\\303\\251");
	strbuf_release(&sb);
	strbuf_add_escaped(&sb, in, sizeof(in) - 1);
	assert_string_equal(sb.buf, "a\\b\\nc\\x1b\xc3\xa9");
	strbuf_release(&sb);
}

/* An allocation that cannot be made ends the process with one line. */
static void test_xalloc_dies(void **state)
{
	int fds[2], status;
	char buf[64] = "";
	pid_t pid;
	(void)state;

#ifdef __SANITIZE_ADDRESS__
	skip();   /* ASan reports the huge request itself, before malloc can fail */
#endif
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], STDERR_FILENO);
		signal(SIGABRT, SIG_DFL);
		volatile void *p = xmalloc(SIZE_MAX - 4096);
		(void)p;
		_exit(0);
	}
	close(fds[1]);
	assert_true(read(fds[0], buf, sizeof(buf) - 1) > 0);
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	assert_string_equal(buf, "ingot: out of memory\n");
	char *d = xstrdup("abc");
	assert_string_equal(d, "abc");
	free(d);
	d = xasprintf("%s:%zu:%d", "rules.yaml", (size_t)12, 3);
	assert_string_equal(d, "rules.yaml:12:3");
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base_name),
		cmocka_unit_test(test_ends_with),
		cmocka_unit_test(test_hexval),
		cmocka_unit_test(test_json_set_hex),
		cmocka_unit_test(test_ecdsa_der),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_xalloc_dies),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
