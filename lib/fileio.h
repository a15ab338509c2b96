/* File I/O helpers.  Every output ingot writes goes through atomic_file:
 * a temporary file beside the target, fsync'd and renamed into place, so
 * an interrupted run never leaves a half-written output under its name. */
#ifndef INGOT_FILEIO_H
#define INGOT_FILEIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include "lib/err.h"

/* Open path read-only (O_CLOEXEC, plus flags: O_NOFOLLOW) if it is a
 * regular file; a FIFO, device, socket or directory is refused ("PATH:
 * expected a regular file, got a FIFO": -EINVAL, -EISDIR for a directory)
 * without blocking on it.  The fd is blocking; *st (if st) is its fstat.
 * Returns the fd or -errno.  Every reader of a path it was given starts
 * here (docs/hardening.md, "Rules for every input"). */
int open_regular(const char *path, int flags, struct stat *st, ingot_error *e);
/* The same, path relative to dirfd (openat). */
int open_regular_at(int dirfd, const char *path, int flags, struct stat *st, ingot_error *e);
/* open_regular, but a block device is accepted too (an image or its
 * hash tree on a node's partition). */
int open_regular_or_blockdev(const char *path, struct stat *st, ingot_error *e);
/* "regular file", "directory", "FIFO", "symbolic link", ... for messages. */
const char *file_type_name(mode_t mode);

/* Read a whole file (NUL-terminated, len excludes the NUL): a regular file
 * only (open_regular), of at most max bytes, else -EFBIG; no more than
 * max + 1 bytes are ever read.  The size fstat reports is not trusted as
 * the length, so the pseudo-files of procfs (size 0), sysfs (4096) and
 * securityfs (0, the firmware event log) read whole. */
int read_file(const char *path, size_t max, char **out, size_t *len, ingot_error *e);
/* read_file on an fd from open_regular (st: its fstat); path for messages. */
int read_fd(int fd, const char *path, const struct stat *st, size_t max, char **out, size_t *len,
	    ingot_error *e);

/* Open dirfd/name as a directory without following a symlink (O_NOFOLLOW;
 * for walks that must never leave a tree, like the store's gc): the fd,
 * -ENOTDIR when it is anything else (*st says what: lstat), or -errno. */
int open_dir_at(int dirfd, const char *name, struct stat *st);
/* The names in the directory open at dirfd but "." and "..", sorted by
 * strcmp (dir_names_free frees them); dirfd stays open.  0 or -errno. */
int dir_names_at(int dirfd, char ***names, size_t *n);
void dir_names_free(char **names, size_t n);

/* Write all bytes or fail (handles EINTR/short writes). */
int write_all(int fd, const void *buf, size_t len);

/* Exactly len bytes at off, or -errno (-ENODATA at end of file). */
int pread_all(int fd, void *buf, size_t len, uint64_t off);
/* All len bytes at off, or -errno. */
int pwrite_all(int fd, const void *buf, size_t len, uint64_t off);
struct atomic_file {
	int fd;
	char *path;     /* final name */
	char *tmp;      /* temporary name in the same directory */
};

/* Remove the files "<dir>/<prefix><pid>.<tail>" whose process is gone
 * (killed mid-write): the pid in the name says whose each one is, so a
 * live writer's file is never touched.  tail_len: the length of
 * ".<tail>", or 0 for any. */
void remove_dead_temps(const char *dir, const char *prefix, size_t tail_len);
/* Create "<dir>/.<base>.<pid>.XXXXXX" with the given mode (umask-
 * independent), first removing such temporaries of dead processes. */
int atomic_open(struct atomic_file *af, const char *path, mode_t mode, ingot_error *e);
int atomic_write(struct atomic_file *af, const void *buf, size_t len, ingot_error *e);
/* fsync, rename into place, fsync the directory. */
int atomic_commit(struct atomic_file *af, ingot_error *e);
/* Unlink the temporary file; safe to call after commit or twice. */
void atomic_abort(struct atomic_file *af);
static inline void atomic_abortp(struct atomic_file *af) { atomic_abort(af); }
#define _cleanup_atomic_ __attribute__((cleanup(atomic_abortp)))

/* Convenience: whole buffer to path, atomically. */
int write_file_atomic(const char *path, const void *buf, size_t len, mode_t mode, ingot_error *e);

/* mkdir -p with mode for created components. */
int mkdir_p(const char *path, mode_t mode, ingot_error *e);

/* path_join("a", "b") -> "a/b" (malloc'd, never NULL: lib/xalloc.h). */
char *path_join(const char *a, const char *b);
/* Directory part of path ("." if none), malloc'd, never NULL. */
char *path_dirname(const char *path);

#endif
