/* Content-addressed store.  Layout under the root:
 *   blobs/ab/<64 hex>     contents by sha256: file artifacts, inline files,
 *                         and files copied out of a pack on demand
 *   unpacked/<hex>.pack   the regular files of an unpacked archive artifact
 *                         (by artifact sha256), back to back in archive order
 *   unpacked/<hex>.json   its listing: paths, types, modes, sizes, digests
 *                         and pack offsets (written last: it marks the pack
 *                         complete)
 *   tmp/<pid>.<what>.XXXXXX  temporaries, renamed into place once verified;
 *                         those of dead processes are removed by store_open
 * A blob whose bytes do not match its name never enters blobs/, and a pack
 * is only renamed into place once its artifact matched the recipe's pin.
 * Archive artifacts themselves are not copied in: they are hashed while
 * they are unpacked, so a cold build reads each one once.
 *
 * The store is a trusted cache (listings are not re-verified), so
 * store_open refuses a root or subdirectory that another user owns or that
 * group or others may write. */
#ifndef INGOT_STORE_H
#define INGOT_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <stdint.h>
#include "lib/err.h"

struct store {
	char *root;
	int lock_fd;         /* STORE/lock: shared while open, exclusive for gc */
};

/* Where a file's bytes are kept (struct tree_entry carries one): a range
 * of an artifact's pack when packed, else the blob named by the file's
 * sha256.  One pack per artifact rather than one blob per entry: creating
 * thousands of small files was most of a cold build's time. */
struct store_loc {
	bool packed;
	uint8_t pack[32];    /* artifact sha256 */
	uint64_t off;
	bool fresh;          /* hashed by this process as it went in (a pack
			      * range or a blob): the image writer need not
			      * hash it again */
};

/* Default root: $XDG_CACHE_HOME/ingot or ~/.cache/ingot. Caller frees;
 * NULL when neither variable is set. */
char *store_default_root(void);
/* Opens (creating) the store at root, or at store_default_root() when
 * root is NULL, and holds a shared lock on STORE/lock until store_close:
 * builds share a store, `ingot store gc` waits for none. */
int store_open(struct store *s, const char *root, ingot_error *e);
/* Trade the shared lock for an exclusive one, without waiting: -EBUSY
 * "ROOT: store in use by another ingot process ..." if another holds it. */
int store_lock_exclusive(struct store *s, ingot_error *e);
void store_close(struct store *s);

/* unpacked/<hex of artifact><suffix> (malloc'd, never NULL); it may not exist. */
char *store_unpacked_path(const struct store *s, const uint8_t artifact[32], const char *suffix);
/* Create tmp/<pid>.<what>.XXXXXX (mode 0644 whatever the umask); returns
 * the fd and the malloc'd name in *path. */
int store_tmp_create(const struct store *s, const char *what, char **path, ingot_error *e);
/* Close fd (if >= 0) and rename the temporary to dst; on failure it is
 * removed.  *tmp is freed either way. */
int store_tmp_commit(int fd, char **tmp, const char *dst, ingot_error *e);
/* The same into dirfd/name (dir names the directory in messages). */
int store_tmp_commit_at(int fd, char **tmp, int dirfd, const char *name, const char *dir, ingot_error *e);
/* Give a temporary up: close fd (if >= 0), remove and free *tmp (if set). */
void store_tmp_abort(int fd, char **tmp);
/* A whole file into place through tmp/ (a cache entry: no fsync; what is
 * read back is checked or re-derived). */
int store_write_file(const struct store *s, const char *dst, const void *buf, size_t len, ingot_error *e);

/* Reading a file's bytes wherever they are kept. */
struct store_content {
	int fd;
	uint64_t off, left;
	char *path;          /* for messages */
};
int store_content_open(const struct store *s, const struct store_loc *loc, const uint8_t sha256[32],
		       uint64_t size, struct store_content *c, ingot_error *e);
/* Up to len bytes; 0 at the end of the range, -errno on error. */
ssize_t store_content_read(struct store_content *c, void *buf, size_t len);
void store_content_close(struct store_content *c);
/* The path of a blob with the content, copying it out of its pack (and
 * checking its digest) the first time: for readers that need a file. */
int store_content_blob(const struct store *s, const struct store_loc *loc, const uint8_t sha256[32],
		       uint64_t size, char **path, ingot_error *e);

/* Path of a blob (malloc'd, never NULL); it may not exist. */
char *store_blob_path(const struct store *s, const uint8_t sha256[32]);
int store_has_blob(const struct store *s, const uint8_t sha256[32]);

/* Copy src into the store if its sha256 equals want; otherwise refuse
 * with "NAME: sha256 mismatch: recipe pins X, file has Y". */
int store_import(struct store *s, const char *name, const char *src, const uint8_t want[32],
		 ingot_error *e);

/* Open an artifact's source for reading: it must be a regular file (a
 * FIFO, device or directory is refused at once, never read); returns the
 * fd (blocking, O_CLOEXEC) or -errno. */
int store_source_open(const char *name, const char *src, ingot_error *e);
/* -EBADMSG with "NAME: sha256 mismatch: recipe pins WANT, file has GOT". */
int store_pin_mismatch(const char *name, const uint8_t want[32], const uint8_t got[32], ingot_error *e);
/* Hash src and compare with want: store_pin_mismatch() if not. */
int store_check_source(const char *name, const char *src, const uint8_t want[32], ingot_error *e);
/* Streaming insert of unknown content: begin, write..., commit yields the
 * digest (the blob is renamed into place only then). */
struct store_writer {
	const struct store *s;
	int fd;
	char *tmp;
	void *md;       /* EVP_MD_CTX */
	uint64_t size;
};
int store_writer_begin(const struct store *s, struct store_writer *w, ingot_error *e);
int store_writer_write(struct store_writer *w, const void *buf, size_t len, ingot_error *e);
int store_writer_commit(struct store_writer *w, uint8_t sha256[32], uint64_t *size, ingot_error *e);
void store_writer_abort(struct store_writer *w);

/* Re-hash every blob; report the first whose bytes don't match its name. */
int store_verify(const struct store *s, uint64_t *checked, ingot_error *e);

#endif
