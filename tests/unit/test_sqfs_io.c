/* Units for image/sqfs-io.c's file with a write-behind thread: whatever
 * the mix of appends (queued), writes elsewhere, reads and truncates
 * (each waits for the queue first), the file reads back exactly as a
 * model that made every write in place; a write error reaches
 * sqfs_fd_flush. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqfs/io.h>

#include "image/sqfs-io.h"
#include "lib/fileio.h"

#define MAX (48u << 20)

static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void test_model(void **state)
{
	(void)state;
	char path[] = "/tmp/ingot-sqfsio-XXXXXX";
	int fd = mkstemp(path);
	uint8_t *model = calloc(1, MAX), *got = malloc(MAX), *src = malloc(MAX);
	uint64_t size = 0;
	uint32_t seed = 12345;
	sqfs_file_t *f;
	unsigned appends = 0, others = 0;

	assert_true(fd >= 0 && model && got && src);
	unlink(path);
	for (size_t i = 0; i < MAX; i++)
		src[i] = (uint8_t)rnd(&seed);
	f = sqfs_fd_file(fd, 0);
	assert_non_null(f);
	assert_int_equal(sqfs_fd_writebehind(f), 0);
	for (int op = 0; op < 400; op++) {
		uint32_t r = rnd(&seed) % 100;
		if (r < 70 || size < 4096) {   /* append: mostly small, some over a buffer */
			size_t n = r % 13 == 0 ? 1 + rnd(&seed) % (3u << 20) : 1 + rnd(&seed) % 70000;
			if (size + n > MAX)
				break;
			size_t from = rnd(&seed) % (MAX - n);
			assert_int_equal(f->write_at(f, size, src + from, n), 0);
			memcpy(model + size, src + from, n);
			size += n;
			appends++;
		} else if (r < 80) {           /* a write inside, as the superblock's */
			size_t n = 1 + rnd(&seed) % 200, at = rnd(&seed) % (size - n);
			assert_int_equal(f->write_at(f, at, src, n), 0);
			memcpy(model + at, src, n);
			others++;
		} else if (r < 90) {           /* a read of what was just appended */
			size_t n = 1 + rnd(&seed) % 4000, at = size - n;
			assert_int_equal(f->read_at(f, at, got, n), 0);
			assert_memory_equal(got, model + at, n);
			others++;
		} else {                       /* the block writer drops a duplicate */
			size_t cut = rnd(&seed) % 4096;
			assert_int_equal(f->truncate(f, size - cut), 0);
			size -= cut;
			others++;
		}
		assert_int_equal(f->get_size(f), size);
	}
	assert_int_equal(sqfs_fd_flush(f), 0);
	assert_int_equal(lseek(fd, 0, SEEK_END), (off_t)size);
	assert_int_equal(pread_all(fd, got, size, 0), 0);
	assert_memory_equal(got, model, size);
	assert_true(appends > 100 && others > 50);
	sqfs_destroy(f);
	close(fd);
	free(model);
	free(got);
	free(src);
}

/* Appends queued to an fd that cannot be written: the error is not
 * lost on its way back from the thread. */
static void test_error(void **state)
{
	(void)state;
	int fd = open("/dev/null", O_RDONLY);
	static uint8_t buf[3u << 20];
	sqfs_file_t *f;

	assert_true(fd >= 0);
	f = sqfs_fd_file(fd, 0);
	assert_non_null(f);
	assert_int_equal(sqfs_fd_writebehind(f), 0);
	assert_int_equal(f->write_at(f, 0, buf, 100), 0);
	assert_int_equal(sqfs_fd_flush(f), EBADF);
	assert_int_equal(sqfs_fd_errno(f), EBADF);
	assert_int_equal(f->write_at(f, 100, buf, sizeof(buf)), 0);   /* dropped */
	assert_int_equal(sqfs_fd_flush(f), EBADF);
	sqfs_destroy(f);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
