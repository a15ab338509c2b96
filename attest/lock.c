#include "attest/lock.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/xalloc.h"

int attest_lock(const char *path, ingot_error *e)
{
	_cleanup_free_ char *lock_path = xasprintf("%s.lock", path);
	_cleanup_close_ int fd = -1;

	fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return ingot_fail(e, -errno, "%s: cannot open: %s", lock_path, strerror(errno));
	while (flock(fd, LOCK_EX) < 0)
		if (errno != EINTR)
			return ingot_fail(e, -errno, "%s: cannot lock: %s", lock_path, strerror(errno));
	return TAKE_FD(fd);
}
