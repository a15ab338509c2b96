/* Units for lib/writebehind.c: bytes arrive in order whatever the
 * mix of small appends and ones that span buffers, from the offset given
 * (what lies before it untouched), a flush leaves everything queued on
 * disk while the thread goes on, a failed write is reported (never
 * dropped) by the next call or by finish, and finish is safe to repeat;
 * the same through a sink instead of a file. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/writebehind.h"
#include "lib/fileio.h"

static void test_order(void **state)
{
	(void)state;
	char path[] = "/tmp/ingot-wb-XXXXXX";
	int fd = mkstemp(path);
	struct writebehind w;
	size_t total = 0, room;
	uint8_t *want = malloc(1 << 20), *got = malloc(1 << 20);

	assert_true(fd >= 0 && want && got);
	unlink(path);
	for (size_t i = 0; i < (1 << 20); i++)
		want[i] = (uint8_t)(i * 7 + i / 251);
	/* 3 buffers of 4 KiB: many hand-overs, the caller often waits */
	assert_int_equal(writebehind_start(&w, fd, 0, 4096, 3), 0);
	for (size_t n = 1; total < (1 << 20); n = n * 3 % 10007 + 1) {
		size_t k = n < (1 << 20) - total ? n : (1 << 20) - total;
		if (n % 2) {   /* copied in, as sqfs-io.c does */
			assert_int_equal(writebehind_write(&w, want + total, k), 0);
		} else {   /* straight into the buffer, as unpack.c does */
			char *p = writebehind_tail(&w, &room);
			k = k < room ? k : room;
			memcpy(p, want + total, k);
			assert_int_equal(writebehind_advance(&w, k), 0);
		}
		total += k;
	}
	assert_int_equal(writebehind_finish(&w), 0);
	assert_int_equal(writebehind_finish(&w), 0);
	writebehind_free(&w);
	assert_int_equal(lseek(fd, 0, SEEK_END), 1 << 20);
	assert_int_equal(pread_all(fd, got, 1 << 20, 0), 0);
	assert_memory_equal(got, want, 1 << 20);
	close(fd);
	free(want);
	free(got);
}

/* From offset 100 (a header already there), a flush in the middle of a
 * buffer: every byte appended so far is readable, the header intact,
 * and later appends land after them. */
static void test_flush_offset(void **state)
{
	(void)state;
	char path[] = "/tmp/ingot-wb-XXXXXX";
	int fd = mkstemp(path);
	struct writebehind w;
	uint8_t head[100], data[5000], got[5100];

	assert_true(fd >= 0);
	unlink(path);
	memset(head, 'h', sizeof(head));
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i % 253);
	assert_int_equal(pwrite_all(fd, head, sizeof(head), 0), 0);
	assert_int_equal(writebehind_start(&w, fd, sizeof(head), 1024, 2), 0);
	assert_int_equal(writebehind_write(&w, data, 3000), 0);    /* 2 full buffers, 952 bytes pending */
	assert_int_equal(writebehind_flush(&w), 0);
	assert_int_equal(lseek(fd, 0, SEEK_END), 3100);
	assert_int_equal(pread_all(fd, got, 3100, 0), 0);
	assert_memory_equal(got, head, sizeof(head));
	assert_memory_equal(got + 100, data, 3000);
	assert_int_equal(writebehind_flush(&w), 0);     /* nothing queued: returns */
	assert_int_equal(writebehind_write(&w, data + 3000, 2000), 0);
	assert_int_equal(writebehind_finish(&w), 0);
	writebehind_free(&w);
	assert_int_equal(lseek(fd, 0, SEEK_END), 5100);
	assert_int_equal(pread_all(fd, got, 5100, 0), 0);
	assert_memory_equal(got, head, sizeof(head));
	assert_memory_equal(got + 100, data, sizeof(data));
	close(fd);
}

static void test_write_error(void **state)
{
	(void)state;
	int fd = open("/dev/null", O_RDONLY);   /* writes fail with EBADF */
	struct writebehind w;
	char buf[10000];
	int r = 0;

	memset(buf, 'x', sizeof(buf));
	assert_true(fd >= 0);
	assert_int_equal(writebehind_start(&w, fd, 0, 1024, 2), 0);
	for (int i = 0; i < 100 && r == 0; i++)
		r = writebehind_write(&w, buf, sizeof(buf));
	/* seen by a later append or, at the latest, by finish */
	if (r == 0)
		r = writebehind_finish(&w);
	assert_int_equal(r, -EBADF);
	assert_int_equal(writebehind_finish(&w), -EBADF);
	writebehind_free(&w);
	close(fd);
}

/* A sink instead of a file: it sees every byte once, in order, by the
 * time flush returns; its error comes back like a write error. */
struct sink_log {
	uint8_t *got;
	size_t len, calls;
	size_t fail_at;   /* fail the call that would pass this many bytes, if non-zero */
};

static int sink(void *ctx, const char *buf, size_t len)
{
	struct sink_log *l = ctx;

	if (l->fail_at && l->len + len > l->fail_at)
		return -ENOSPC;
	memcpy(l->got + l->len, buf, len);
	l->len += len;
	l->calls++;
	return 0;
}

static void test_sink(void **state)
{
	(void)state;
	struct writebehind w;
	struct sink_log l = { .got = malloc(300000) };
	uint8_t *want = malloc(300000);
	size_t total = 0;

	assert_true(l.got && want);
	for (size_t i = 0; i < 300000; i++)
		want[i] = (uint8_t)(i * 13 + i / 509);
	assert_int_equal(writebehind_start_sink(&w, sink, &l, 1000, 2), 0);
	for (size_t n = 1; total < 150000; n = n * 5 % 3001 + 1) {
		assert_int_equal(writebehind_write(&w, want + total, n), 0);
		total += n;
	}
	assert_int_equal(writebehind_flush(&w), 0);
	assert_int_equal(l.len, total);
	assert_true(l.calls >= total / 1000);
	assert_memory_equal(l.got, want, total);
	assert_int_equal(writebehind_finish(&w), 0);
	writebehind_free(&w);

	/* the sink fails after 5000 bytes: reported, and nothing later passed */
	l.len = l.calls = 0;
	l.fail_at = 5000;
	assert_int_equal(writebehind_start_sink(&w, sink, &l, 1000, 2), 0);
	for (int i = 0; i < 100; i++)
		(void)writebehind_write(&w, want, 300);
	assert_int_equal(writebehind_finish(&w), -ENOSPC);
	writebehind_free(&w);
	assert_int_equal(l.len, 5000);
	free(l.got);
	free(want);
}

static void test_bad_args(void **state)
{
	(void)state;
	struct writebehind w;
	assert_int_equal(writebehind_start(&w, 1, 0, 4096, 1), -EINVAL);
	writebehind_free(&w);
	assert_int_equal(writebehind_start(&w, 1, 0, 4096, WB_MAX_BUFS + 1), -EINVAL);
	writebehind_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_flush_offset),
		cmocka_unit_test(test_write_error),
		cmocka_unit_test(test_sink),
		cmocka_unit_test(test_bad_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
