/* Private directories and small files read without surprises.
 *
 * A directory whose contents are trusted once written (the store's
 * listings and packs, the enrolment state that decides which AK gets
 * signed) must not be writable by anyone but us: like ssh's StrictModes
 * for ~/.ssh.  And a file read from one, or a small document read from
 * anywhere, must be a regular file of bounded size: a FIFO must not hang
 * the reader, a link to /dev/zero must not be read up to a large limit. */
#ifndef INGOT_LIB_PRIVDIR_H
#define INGOT_LIB_PRIVDIR_H

#include <stddef.h>

#include "lib/err.h"

/* 0 when dir (not followed if a symlink) is a directory owned by the
 * effective uid and not writable by group or others; else -ENOTDIR or
 * -EPERM with one line naming dir, what it is ("store", "enrolment state")
 * and why it must be private. */
int privdir_check(const char *dir, const char *what, const char *why, ingot_error *e);

enum {
	REGFILE_NOFOLLOW = 1,   /* refuse a symlink (O_NOFOLLOW): -ELOOP */
	REGFILE_PRIVATE = 2,    /* owned by us, not group/other-writable: -EPERM */
};

/* Open path for reading without waiting (O_NONBLOCK: a FIFO gets no
 * chance to block) and check what was opened: a regular file (else
 * -EINVAL), at most max bytes (else -EFBIG), and flags' REGFILE_*.
 * Returns the descriptor (blocking again) or -errno, e naming path. */
int regfile_open(const char *path, size_t max, int flags, ingot_error *e);

/* Read all of fd, opened by regfile_open with the same max, into a
 * malloc'd NUL-terminated *out (len without the NUL); name in messages.
 * At most max bytes, whatever the file grew to since. */
int regfile_read_fd(int fd, const char *name, size_t max, char **out, size_t *len,
		    ingot_error *e);

/* regfile_open then regfile_read_fd. */
int regfile_read(const char *path, size_t max, int flags, char **out, size_t *len,
		 ingot_error *e);

#endif
