/* File I/O helpers.  Every output ingot writes goes through atomic_file:
 * a temporary file beside the target, fsync'd and renamed into place, so
 * an interrupted run never leaves a half-written output under its name. */
#ifndef INGOT_FILEIO_H
#define INGOT_FILEIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "lib/err.h"

/* Read a whole file (NUL-terminated, len excludes the NUL).  Files larger
 * than max bytes are refused with -EFBIG. */
int read_file(const char *path, size_t max, char **out, size_t *len, ingot_error *e);

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

/* path_join("a", "b") -> "a/b" (malloc'd). */
char *path_join(const char *a, const char *b);
/* Directory part of path ("." if none), malloc'd. */
char *path_dirname(const char *path);

#endif
