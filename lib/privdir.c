#include "lib/privdir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/fileio.h"

int privdir_check(const char *dir, const char *what, const char *why, ingot_error *e)
{
	struct stat st;

	if (lstat(dir, &st) < 0)
		return ingot_fail(e, -errno, "%s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return ingot_fail(e, -ENOTDIR, "%s: %s: expected a directory", dir, what);
	if (st.st_uid != geteuid() || (st.st_mode & 022))
		return ingot_fail(e, -EPERM, "%s: %s: expected a directory owned by uid %u and not writable by group or others, got owner %u mode %04o (%s)",
				  dir, what, (unsigned)geteuid(), (unsigned)st.st_uid,
				  (unsigned)(st.st_mode & 07777), why);
	return 0;
}

int regfile_open(const char *path, size_t max, int flags, ingot_error *e)
{
	struct stat st;
	int fd, r;

	/* open_regular (lib/fileio.h) refuses what is not a regular file
	 * without blocking on it; here the bound and, for state that decides
	 * trust, the owner are checked on the same descriptor. */
	fd = open_regular(path, flags & REGFILE_NOFOLLOW ? O_NOFOLLOW : 0, &st, e);
	if (fd < 0)
		return fd;
	if ((uint64_t)st.st_size > max)
		r = ingot_fail(e, -EFBIG, "%s: %llu bytes, expected at most %zu", path,
			       (unsigned long long)st.st_size, max);
	else if ((flags & REGFILE_PRIVATE) && (st.st_uid != geteuid() || (st.st_mode & 022)))
		r = ingot_fail(e, -EPERM, "%s: expected a file owned by uid %u and not writable by group or others, got owner %u mode %04o",
			       path, (unsigned)geteuid(), (unsigned)st.st_uid,
			       (unsigned)(st.st_mode & 07777));
	else
		return fd;
	close(fd);
	return r;
}

int regfile_read_fd(int fd, const char *name, size_t max, char **out, size_t *len,
		    ingot_error *e)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return ingot_fail(e, -errno, "%s: cannot stat: %s", name, strerror(errno));
	return read_fd(fd, name, &st, max, out, len, e);
}

int regfile_read(const char *path, size_t max, int flags, char **out, size_t *len,
		 ingot_error *e)
{
	_cleanup_close_ int fd = regfile_open(path, max, flags, e);

	if (fd < 0)
		return fd;
	return regfile_read_fd(fd, path, max, out, len, e);
}
