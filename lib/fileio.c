#include "lib/fileio.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/cleanup.h"
#include "lib/xalloc.h"

const char *file_type_name(mode_t mode)
{
	return S_ISREG(mode) ? "regular file" : S_ISDIR(mode) ? "directory" : S_ISFIFO(mode) ? "FIFO" :
	       S_ISCHR(mode) ? "character device" : S_ISBLK(mode) ? "block device" :
	       S_ISSOCK(mode) ? "socket" : S_ISLNK(mode) ? "symbolic link" : "special file";
}

/* open_regular_at, and with blockdev a block device is accepted too. */
static int open_input_at(int dirfd, const char *path, int flags, bool blockdev, struct stat *st,
			 ingot_error *e)
{
	struct stat sb;
	int fd, fl;

	/* O_NONBLOCK: opening a FIFO waits for a writer otherwise; fstat then
	 * judges what was opened (a symlink to a regular file is fine unless
	 * flags has O_NOFOLLOW, one to /dev/zero never is). */
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | flags);
	if (fd < 0 && errno == ELOOP && (flags & O_NOFOLLOW))
		return ingot_fail(e, -ELOOP, "%s: expected a regular file, got a symbolic link", path);
	if (fd < 0)
		return ingot_fail(e, -errno, "%s: cannot open: %s", path, strerror(errno));
	if (!st)
		st = &sb;
	if (fstat(fd, st) < 0 || (fl = fcntl(fd, F_GETFL)) < 0) {
		int err = errno;
		close(fd);
		return ingot_fail(e, -err, "%s: cannot stat: %s", path, strerror(err));
	}
	if (!S_ISREG(st->st_mode) && !(blockdev && S_ISBLK(st->st_mode))) {
		close(fd);
		return ingot_fail(e, S_ISDIR(st->st_mode) ? -EISDIR : -EINVAL,
				  "%s: expected a regular file%s, got a %s", path,
				  blockdev ? " or a block device" : "", file_type_name(st->st_mode));
	}
	if (fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		int err = errno;
		close(fd);
		return ingot_fail(e, -err, "%s: %s", path, strerror(err));
	}
	return fd;
}

int open_regular_at(int dirfd, const char *path, int flags, struct stat *st, ingot_error *e)
{
	return open_input_at(dirfd, path, flags, false, st, e);
}

int open_regular_or_blockdev(const char *path, struct stat *st, ingot_error *e)
{
	return open_input_at(AT_FDCWD, path, 0, true, st, e);
}

int open_regular(const char *path, int flags, struct stat *st, ingot_error *e)
{
	return open_regular_at(AT_FDCWD, path, flags, st, e);
}

int read_fd(int fd, const char *path, const struct stat *st, size_t max, char **out, size_t *len,
	    ingot_error *e)
{
	/* the bound, one byte that proves a file over it, and the NUL */
	size_t limit = max < SIZE_MAX - 2 ? max + 2 : SIZE_MAX, n = 0, cap;
	char *buf;

	if ((uint64_t)st->st_size > max)
		return ingot_fail(e, -EFBIG, "%s: file too large (%llu bytes, limit %zu)",
				  path, (unsigned long long)st->st_size, max);
	/* st_size is a hint, never the bound: procfs and securityfs say 0,
	 * sysfs 4096, and a file may grow while it is read.  Room for its
	 * size, the NUL and one byte for the read that finds EOF (with only
	 * the NUL's room that read doubled, and copied, the buffer). */
	cap = (size_t)st->st_size + 2 < 256 ? 256 : (size_t)st->st_size + 2;
	if (cap > limit)
		cap = limit;
	buf = xmalloc(cap);
	for (;;) {
		if (n + 1 >= cap) {
			if (cap >= limit)
				break;   /* max + 1 bytes read: over the bound, read no further */
			cap = cap > limit / 2 ? limit : cap * 2;
			buf = xrealloc(buf, cap);
		}
		ssize_t got = read(fd, buf + n, cap - n - 1);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			int err = errno;
			free(buf);
			return ingot_fail(e, -err, "%s: read failed: %s", path, strerror(err));
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	if (n > max) {
		free(buf);
		return ingot_fail(e, -EFBIG, "%s: file too large (limit %zu bytes)", path, max);
	}
	buf[n] = '\0';
	*out = buf;
	if (len)
		*len = n;
	return 0;
}

int read_file(const char *path, size_t max, char **out, size_t *len, ingot_error *e)
{
	struct stat st;
	_cleanup_close_ int fd = open_regular(path, 0, &st, e);

	if (fd < 0)
		return fd;
	return read_fd(fd, path, &st, max, out, len, e);
}

int open_dir_at(int dirfd, const char *name, struct stat *st)
{
	int fd;

	if (fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISDIR(st->st_mode))
		return -ENOTDIR;
	/* O_NOFOLLOW: a directory swapped for a symlink since fstatat is
	 * refused too */
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? (errno == ELOOP ? -ENOTDIR : -errno) : fd;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int dir_names_at(int dirfd, char ***names, size_t *n)
{
	int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	size_t cap = 0;

	*names = NULL;
	*n = 0;
	if (!d) {
		int err = errno;
		if (fd >= 0)
			close(fd);
		return -err;
	}
	rewinddir(d);    /* the duplicate shares dirfd's offset */
	while ((errno = 0, de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (*n == cap)
			*names = xrealloc(*names, (cap = cap ? 2 * cap : 16) * sizeof(**names));
		(*names)[(*n)++] = xstrdup(de->d_name);
	}
	if (errno) {
		int err = errno;
		closedir(d);
		dir_names_free(*names, *n);
		*names = NULL;
		*n = 0;
		return -err;
	}
	closedir(d);
	if (*n)
		qsort(*names, *n, sizeof(**names), cmp_names);
	return 0;
}

void dir_names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

char *path_join(const char *a, const char *b)
{
	size_t la = strlen(a);
	char *r = xmalloc(la + strlen(b) + 2);
	if (la && a[la - 1] == '/')
		sprintf(r, "%s%s", a, b);
	else
		sprintf(r, "%s/%s", a, b);
	return r;
}

char *path_dirname(const char *path)
{
	_cleanup_free_ char *cp = xstrdup(path);
	return xstrdup(dirname(cp));
}

int pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = pread(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENODATA;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

void remove_dead_temps(const char *dir, const char *prefix, size_t tail_len)
{
	DIR *d = opendir(dir);
	size_t pl = strlen(prefix);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		const char *n = de->d_name;
		char *end;
		long pid;
		if (strncmp(n, prefix, pl))
			continue;
		pid = strtol(n + pl, &end, 10);
		if (end == n + pl || *end != '.' || (tail_len && strlen(end) != tail_len) || pid <= 0 ||
		    pid == (long)getpid())
			continue;
		if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
			unlinkat(dirfd(d), n, 0);
	}
	closedir(d);
}

int atomic_open(struct atomic_file *af, const char *path, mode_t mode, ingot_error *e)
{
	_cleanup_free_ char *cp = xstrdup(path);
	_cleanup_free_ char *dir = path_dirname(path);
	char *base;

	af->fd = -1;
	af->path = NULL;
	af->tmp = NULL;
	/* rename() would replace a device, FIFO or socket with a regular file:
	 * "-o /dev/null" run as root once turned the host's /dev/null into a
	 * file every later reader got other processes' output from. */
	struct stat st;
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
		return ingot_fail(e, -EEXIST, "%s: exists and is not a regular file; refusing to replace it",
				  path);
	base = basename(cp);
	{
		_cleanup_free_ char *prefix = xasprintf(".%s.", base);
		remove_dead_temps(dir, prefix, strlen(".XXXXXX"));
	}
	af->tmp = xasprintf("%s/.%s.%ld.XXXXXX", dir, base, (long)getpid());
	af->fd = mkostemp(af->tmp, O_CLOEXEC);
	if (af->fd < 0) {
		int err = errno;
		free(af->tmp);
		af->tmp = NULL;
		return ingot_fail(e, -err, "%s: cannot create temporary file in %s: %s",
				  path, dir, strerror(err));
	}
	/* fchmod, not umask: output modes must not depend on the caller's umask. */
	if (fchmod(af->fd, mode) < 0) {
		int err = errno;
		atomic_abort(af);
		return ingot_fail(e, -err, "%s: chmod: %s", path, strerror(err));
	}
	af->path = xstrdup(path);
	return 0;
}

int atomic_write(struct atomic_file *af, const void *buf, size_t len, ingot_error *e)
{
	int r = write_all(af->fd, buf, len);
	if (r < 0)
		return ingot_fail(e, r, "%s: write failed: %s", af->path, strerror(-r));
	return 0;
}

int atomic_commit(struct atomic_file *af, ingot_error *e)
{
	_cleanup_free_ char *dir = NULL;
	int dfd;

	if (fsync(af->fd) < 0)
		return ingot_fail(e, -errno, "%s: fsync failed: %s", af->path, strerror(errno));
	if (close(af->fd) < 0) {
		af->fd = -1;
		return ingot_fail(e, -errno, "%s: close failed: %s", af->path, strerror(errno));
	}
	af->fd = -1;
	if (rename(af->tmp, af->path) < 0)
		return ingot_fail(e, -errno, "%s: rename failed: %s", af->path, strerror(errno));
	free(af->tmp);
	af->tmp = NULL;
	dir = path_dirname(af->path);
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fsync(dfd);
		close(dfd);
	}
	free(af->path);
	af->path = NULL;
	return 0;
}

void atomic_abort(struct atomic_file *af)
{
	if (af->fd >= 0) {
		close(af->fd);
		af->fd = -1;
	}
	if (af->tmp) {
		unlink(af->tmp);
		free(af->tmp);
		af->tmp = NULL;
	}
	free(af->path);
	af->path = NULL;
}

int write_file_atomic(const char *path, const void *buf, size_t len, mode_t mode, ingot_error *e)
{
	_cleanup_atomic_ struct atomic_file af = { .fd = -1 };
	int r = atomic_open(&af, path, mode, e);
	if (r < 0)
		return r;
	r = atomic_write(&af, buf, len, e);
	if (r < 0)
		return r;
	return atomic_commit(&af, e);
}

int mkdir_p(const char *path, mode_t mode, ingot_error *e)
{
	_cleanup_free_ char *p = xstrdup(path);
	for (char *s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s = '\0';
			if (mkdir(p, mode) < 0 && errno != EEXIST)
				return ingot_fail(e, -errno, "%s: cannot create directory: %s", p, strerror(errno));
			*s = c;
			if (!c)
				break;
		}
	}
	return 0;
}

int pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;

	while (len > 0) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}
