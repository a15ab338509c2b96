/* lib/privdir.h: private directories (the store's, the enrolment
 * state's) and bounded reads of regular files only. */
#include "tests/unit/helpers.h"

#include "lib/privdir.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	return th_mkdtemp(dir, sizeof(dir), "privdir");
}

static int teardown(void **state)
{
	(void)state;
	return th_rmtree(dir);
}

static void test_privdir(void **state)
{
	_cleanup_free_ char *d = th_path(dir, "d"), *f = th_path(dir, "f"), *l = th_path(dir, "l");
	ingot_error e = { 0 };
	(void)state;

	assert_int_equal(mkdir(d, 0700), 0);
	assert_int_equal(privdir_check(d, "thing", "why", &e), 0);
	assert_int_equal(chmod(d, 0755), 0);
	assert_int_equal(privdir_check(d, "thing", "why", &e), 0);
	assert_int_equal(chmod(d, 0777), 0);
	assert_int_equal(privdir_check(d, "thing", "why", &e), -EPERM);
	assert_non_null(strstr(e.msg, ": thing: expected a directory owned by uid"));
	assert_non_null(strstr(e.msg, "mode 0777 (why)"));
	assert_int_equal(chmod(d, 0720), 0);
	assert_int_equal(privdir_check(d, "thing", "why", &e), -EPERM);
	/* A symlink to a private directory is not the directory. */
	assert_int_equal(chmod(d, 0700), 0);
	assert_int_equal(symlink(d, l), 0);
	assert_int_equal(privdir_check(l, "thing", "why", &e), -ENOTDIR);
	assert_int_equal(write_file_atomic(f, "x", 1, 0600, &e), 0);
	assert_int_equal(privdir_check(f, "thing", "why", &e), -ENOTDIR);
}

static void test_regfile(void **state)
{
	_cleanup_free_ char *f = th_path(dir, "r"), *l = th_path(dir, "rl"),
			    *p = th_path(dir, "p"), *z = th_path(dir, "z");
	_cleanup_free_ char *buf = NULL;
	ingot_error e = { 0 };
	size_t len;
	(void)state;

	assert_int_equal(write_file_atomic(f, "hello", 5, 0600, &e), 0);
	assert_int_equal(regfile_read(f, 5, REGFILE_NOFOLLOW | REGFILE_PRIVATE, &buf, &len, &e), 0);
	assert_int_equal(len, 5);
	assert_string_equal(buf, "hello");
	free(TAKE_PTR(buf));
	/* One byte over the bound. */
	assert_int_equal(regfile_read(f, 4, 0, &buf, &len, &e), -EFBIG);
	assert_non_null(strstr(e.msg, "5 bytes, expected at most 4"));
	/* Followed unless told not to. */
	assert_int_equal(symlink(f, l), 0);
	assert_int_equal(regfile_read(l, 64, 0, &buf, &len, &e), 0);
	free(TAKE_PTR(buf));
	assert_int_equal(regfile_read(l, 64, REGFILE_NOFOLLOW, &buf, &len, &e), -ELOOP);
	assert_non_null(strstr(e.msg, "got a symbolic link"));
	/* Writable by others. */
	assert_int_equal(chmod(f, 0620), 0);
	assert_int_equal(regfile_read(f, 64, 0, &buf, &len, &e), 0);
	free(TAKE_PTR(buf));
	assert_int_equal(regfile_read(f, 64, REGFILE_PRIVATE, &buf, &len, &e), -EPERM);
	assert_non_null(strstr(e.msg, "mode 0620"));
	/* A FIFO does not block, a device is no file. */
	assert_int_equal(mkfifo(p, 0600), 0);
	assert_int_equal(regfile_read(p, 64, 0, &buf, &len, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "got a FIFO"));
	assert_int_equal(symlink("/dev/zero", z), 0);
	assert_int_equal(regfile_read(z, 64, 0, &buf, &len, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "got a character device"));
	assert_int_equal(regfile_read(dir, 64, 0, &buf, &len, &e), -EISDIR);
	assert_non_null(strstr(e.msg, "got a directory"));
	assert_null(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_privdir),
		cmocka_unit_test(test_regfile),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
