/* Pinned boot inputs (recipe `boot:`): whole files checked against their
 * sha256 pin, and members streamed out of a Debian package's data.tar. */
#ifndef INGOT_BOOTDEB_H
#define INGOT_BOOTDEB_H

#include <stddef.h>
#include <stdlib.h>

#include "lib/err.h"
#include "recipes/boot.h"

#define BOOT_INPUT_MAX ((size_t)512 << 20)
/* What a UKI's inputs may take into memory, all together: the vmlinuz,
 * the stub, the init and the modules, counted by their declared sizes
 * before any of their data is read.  Real inputs come to ~15 MiB (a
 * Debian 6.1 vmlinuz is 8 MiB, an initramfs needs a few storage and
 * dm-verity modules); the limit keeps a refused input's cost bounded. */
#define BOOT_HELD_MAX ((size_t)48 << 20)

struct blob {
	char *data;
	size_t len;
};

/* Read in->path whole and check it against in->sha256.  Sources follow
 * the artifacts' rules (store_source_open: regular files only, opened
 * without waiting on a FIFO); its size comes off *budget before it is
 * read, and one over it is refused unread. */
int boot_input_read(const struct boot_input *in, const char *field, size_t *budget, struct blob *out,
		    ingot_error *e);

/* Called for each regular file of the package's data.tar, its path
 * without "./"; returns the slot to read it into, or NULL to skip it.
 * A slot that already holds data is an error (two matches). */
typedef struct blob *(*deb_pick_fn)(void *ctx, const char *path);

/* Read a pinned boot input.  A Debian package (an ar archive) is
 * streamed: the files pick chooses from its data.tar land in their slots
 * and *whole stays empty.  Anything else is read whole into *whole.  The
 * pin is checked over every byte either way, and before anything is
 * decompressed.  A picked file's declared size comes off *budget before
 * its data is read (one over it, or one whose data runs past its
 * declared size, is refused).  1 for a package, 0 for a plain file; on error the slots may hold data (the caller frees them). */
int boot_input_take(const struct boot_input *in, const char *field, deb_pick_fn pick, void *ctx,
		    size_t *budget, struct blob *whole, ingot_error *e);

/* A boot input that is a Debian package: its control file's labels
 * (builder/unpack.h unpack_deb_control) into *labels, the pin checked
 * over every byte, nothing of data.tar kept; 1.  0, read no further,
 * when it is no package. */
struct unpack_stats;
int boot_input_labels(const struct boot_input *in, const char *field, struct unpack_stats *labels, ingot_error *e);

static inline void blob_release(struct blob *b) { free(b->data); b->data = NULL; b->len = 0; }

#endif
