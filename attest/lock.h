/* Serialising read-modify-rename updates of a file (ingot's event log,
 * the seen-nonces file): an exclusive flock on "<path>.lock", a file
 * that is never renamed, so every writer locks the same inode. */
#ifndef INGOT_ATTEST_LOCK_H
#define INGOT_ATTEST_LOCK_H

#include "lib/err.h"

/* Returns the locked descriptor (close it to unlock) or -errno. */
int attest_lock(const char *path, ingot_error *e);

#endif
