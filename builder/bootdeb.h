/* Pinned boot inputs (recipe `boot:`): whole files checked against their
 * sha256 pin, and members streamed out of a Debian package's data.tar. */
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

/* Called for each regular file of the package's data.tar, its path
 * without "./"; returns the slot to read it into, or NULL to skip it.
 * A slot that already holds data is an error (two matches). */
typedef struct blob *(*deb_pick_fn)(void *ctx, const char *path);

/* Read a pinned boot input.  A Debian package (an ar archive) is
 * streamed: the files pick chooses from its data.tar land in their slots
 * and *whole stays empty.  Anything else is read whole into *whole.  The
 * pin is checked over every byte either way.  1 for a package, 0 for a
 * plain file; on error the slots may hold data (the caller frees them). */
int boot_input_take(const struct boot_input *in, const char *field, deb_pick_fn pick, void *ctx,
		    struct blob *whole, ingot_error *e);

static inline void blob_release(struct blob *b) { free(b->data); b->data = NULL; b->len = 0; }

#endif
