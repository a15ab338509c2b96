#include "lib/privdir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/xalloc.h"

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

static const char *type_name(mode_t m)
{
	return S_ISDIR(m) ? "directory" : S_ISFIFO(m) ? "FIFO" : S_ISCHR(m) ? "character device" :
	       S_ISBLK(m) ? "block device" : S_ISSOCK(m) ? "socket" : "special file";
}

int regfile_open(const char *path, size_t max, int flags, ingot_error *e)
{
	int fd, fl, r;
	struct stat st;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY |
		  (flags & REGFILE_NOFOLLOW ? O_NOFOLLOW : 0));
	if (fd < 0) {
		r = -errno;
		if (r == -ELOOP && (flags & REGFILE_NOFOLLOW))
			return ingot_fail(e, r, "%s: expected a regular file, got a symbolic link", path);
		return ingot_fail(e, r, "%s: cannot open: %s", path, strerror(-r));
	}
	if (fstat(fd, &st) < 0)
		r = ingot_fail(e, -errno, "%s: cannot stat: %s", path, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		r = ingot_fail(e, -EINVAL, "%s: expected a regular file, got a %s", path,
			       type_name(st.st_mode));
	else if ((uint64_t)st.st_size > max)
		r = ingot_fail(e, -EFBIG, "%s: %llu bytes, expected at most %zu", path,
			       (unsigned long long)st.st_size, max);
	else if ((flags & REGFILE_PRIVATE) && (st.st_uid != geteuid() || (st.st_mode & 022)))
		r = ingot_fail(e, -EPERM, "%s: expected a file owned by uid %u and not writable by group or others, got owner %u mode %04o",
			       path, (unsigned)geteuid(), (unsigned)st.st_uid,
			       (unsigned)(st.st_mode & 07777));
	else if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		r = ingot_fail(e, -errno, "%s: %s", path, strerror(errno));
	else
		return fd;
	close(fd);
	return r;
}

int regfile_read_fd(int fd, const char *name, size_t max, char **out, size_t *len,
		    ingot_error *e)
{
	/* One byte past max tells a file that grew past it. */
	char *buf = xmalloc(max + 2);
	size_t n = 0;

	while (n <= max) {
		ssize_t got = read(fd, buf + n, max + 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int err = errno;
			free(buf);
			return ingot_fail(e, -err, "%s: read failed: %s", name, strerror(err));
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	if (n > max) {
		free(buf);
		return ingot_fail(e, -EFBIG, "%s: more than %zu bytes", name, max);
	}
	buf[n] = '\0';
	*out = buf;
	if (len)
		*len = n;
	return 0;
}

int regfile_read(const char *path, size_t max, int flags, char **out, size_t *len,
		 ingot_error *e)
{
	_cleanup_close_ int fd = regfile_open(path, max, flags, e);

	if (fd < 0)
		return fd;
	return regfile_read_fd(fd, path, max, out, len, e);
}
