/* Content-addressed store.  Layout under the root:
 *   blobs/ab/<64 hex>     file contents (artifacts and unpacked files), by sha256
 *   tmp/                  temporaries, renamed into blobs/ once verified
 *   unpacked/<64 hex>.json  cached unpack listing of an artifact, by artifact sha256
 * A blob whose bytes do not match its name never enters blobs/. */
#ifndef INGOT_STORE_H
#define INGOT_STORE_H

#include <stddef.h>
#include <stdint.h>
#include "lib/err.h"

struct store {
	char *root;
};

/* Default root: $XDG_CACHE_HOME/ingot or ~/.cache/ingot. Caller frees. */
char *store_default_root(void);
int store_open(struct store *s, const char *root, ingot_error *e);
void store_close(struct store *s);

/* Path of a blob (malloc'd); it may not exist. */
char *store_blob_path(const struct store *s, const uint8_t sha256[32]);
int store_has_blob(const struct store *s, const uint8_t sha256[32]);

/* Copy src into the store if its sha256 equals want; otherwise refuse
 * with "NAME: sha256 mismatch: recipe pins X, file has Y". */
int store_import(struct store *s, const char *name, const char *src, const uint8_t want[32],
		 ingot_error *e);

/* Streaming insert of unknown content: begin, write..., commit yields the
 * digest (the blob is renamed into place only then). */
struct store_writer {
	struct store *s;
	int fd;
	char *tmp;
	void *md;       /* EVP_MD_CTX */
	uint64_t size;
};
int store_writer_begin(struct store *s, struct store_writer *w, ingot_error *e);
int store_writer_write(struct store_writer *w, const void *buf, size_t len, ingot_error *e);
int store_writer_commit(struct store_writer *w, uint8_t sha256[32], uint64_t *size, ingot_error *e);
void store_writer_abort(struct store_writer *w);

/* Re-hash every blob; report the first whose bytes don't match its name. */
int store_verify(const struct store *s, uint64_t *checked, ingot_error *e);

#endif
