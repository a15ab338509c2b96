/* Pinned boot inputs (recipe `boot:`): whole files checked against their
 * sha256 pin, and members taken out of a Debian package's data.tar. */
#ifndef INGOT_BOOTDEB_H
#define INGOT_BOOTDEB_H

#include <stddef.h>
#include <stdlib.h>

#include "lib/err.h"
#include "recipes/boot.h"

#define BOOT_INPUT_MAX ((size_t)512 << 20)

struct blob {
	char *data;
	size_t len;
};

/* Read in->path whole and check it against in->sha256. */
int boot_input_read(const struct boot_input *in, const char *field, struct blob *out, ingot_error *e);

/* True when buf is an ar archive (a .deb). */
int is_deb(const struct blob *b);

/* Called for each regular file of the package's data.tar, its path
 * without "./"; returns the slot to read it into, or NULL to skip it.
 * A slot that already holds data is an error (two matches). */
typedef struct blob *(*deb_pick_fn)(void *ctx, const char *path);

/* what names the package in messages. */
int deb_extract(const struct blob *deb, const char *what, deb_pick_fn pick, void *ctx, ingot_error *e);

static inline void blob_release(struct blob *b) { free(b->data); b->data = NULL; b->len = 0; }

#endif
