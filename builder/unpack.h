/* Unpacking artifacts into the staging tree, in two stages:
 *
 *  1. unpack_list(): read the artifact (tar.*, .deb, plain file) with
 *     libarchive, stream every regular file into the artifact's pack in
 *     the store (see store.h) and return its listing: the archive's entries with normalized paths,
 *     permission bits, sizes and digests (owners, times and xattrs are
 *     dropped).  Hostile entries are refused here: absolute paths, "..",
 *     non-UTF-8 names, hardlinks to anything but an earlier regular file
 *     of the same artifact, duplicated paths.  The listing depends only on
 *     the artifact's bytes and kind, so it is cached in the store as
 *     unpacked/<sha256>.json and a warm rebuild neither reads nor
 *     decompresses the artifact.
 *
 *  2. unpack_apply(): apply the recipe's view of the artifact
 *     (strip-components, include/exclude, dest, modes, allow-devices,
 *     replace) and add the entries to the image tree, refusing paths that
 *     go through a symlink or a non-directory already in the tree.
 *
 * Three files, one job each: builder/unpack.c reads archives (tar.*,
 * .deb through builder/deb.c's walk, plain files), builder/unpack-cache.c
 * keeps the listing cache, builder/unpack-apply.c applies the recipe. */
#ifndef INGOT_UNPACK_H
#define INGOT_UNPACK_H

#include <archive.h>
#include <stdbool.h>
#include <stdint.h>
#include <openssl/types.h>
#include "builder/archive.h"
#include "recipes/recipe.h"
#include "builder/store.h"
#include "builder/tree.h"
#include "lib/err.h"
#include "lib/writebehind.h"

/* Default --max-entries: more entries than this in one artifact is
 * refused as an archive bomb (a full distribution root has ~100k). */
#define UNPACK_MAX_ENTRIES ((uint64_t)1 << 20)
/* Default --max-unpacked-bytes: the bytes of regular files an image may
 * hold, all artifacts together (a CUDA + driver + NCCL + cuDNN root is
 * ~15 GiB unpacked); a guard against decompression and sparse bombs. */
#define UNPACK_MAX_BYTES ((uint64_t)32 << 30)

/* Limits of one unpack; 0 in a field means its default. */
struct unpack_limits {
	uint64_t entries;    /* entries in one artifact */
	uint64_t bytes;      /* regular-file bytes (declared sizes count) */
};

struct unpack_stats {
	bool cached;         /* listing came from unpacked/<sha>.json */
	uint64_t entries;    /* entries in the listing */
	uint64_t bytes;      /* total size of its regular files */
	uint64_t artifact_bytes; /* size of the artifact itself */
	char deb_version[128];   /* a .deb's control Version, read once while
				  * unpacking (kept in the listing); "" otherwise */
	/* and its Package, Architecture and Maintainer, for the SBOM's purl
	 * and supplier ("" when the control file has none) */
	char deb_package[128], deb_arch[32], deb_maintainer[256];
	/* its usr/share/doc/PACKAGE/copyright as the data archive has it,
	 * whatever the recipe keeps of it (builder/sbom.h sbom_note_copyright:
	 * the SBOM's licenseDeclared): where the store has its bytes */
	bool deb_copyright;
	uint64_t deb_copyright_size;
	uint8_t deb_copyright_sha256[32];
	struct store_loc deb_copyright_loc;
};

/* Stage 1, from a->path (a plain file artifact is imported as a blob;
 * an archive's bytes are checked against the pin first, then it is
 * unpacked into a pack, hashed again as it streams so a source changed
 * in between is caught), or from the store's cached listing when it has
 * one.  An artifact beyond a limit (lim NULL: the defaults) is refused:
 * an entry whose declared size crosses the byte limit before any of its
 * data is read.  listing is initialised here; free with tree_free. */
int unpack_list(struct store *s, const struct artifact *a, const struct unpack_limits *lim,
		struct tree *listing, struct unpack_stats *st, ingot_error *e);

/* Stage 2: add the listing (in its order) to the image tree t. */
int unpack_apply(const struct artifact *a, const struct tree *listing, struct tree *t, ingot_error *e);

/* A .deb's control.tar member, and its control file, at most. */
#define UNPACK_CONTROL_MAX (16u << 20)

/* The rest of the current libarchive entry, whole and NUL-terminated
 * (malloc'd): -EFBIG once it reaches max bytes, -EIO on a read error
 * (archive_error(a) says which), -ENOMEM. */
struct archive;
int unpack_read_member(struct archive *a, size_t max, char **out, size_t *len);
/* A .deb's control.tar member (outer at it; filter: what its suffix
 * promises): its control file's Version, Package, Architecture and
 * Maintainer into st's deb_* fields.  what prefixes messages. */
int unpack_deb_control(struct archive *outer, const char *what, const char *member, int filter,
		       struct unpack_stats *st, ingot_error *e);


/* An archive's source file, hashed as libarchive reads it, so that it
 * is read once and its pin is checked over the very bytes unpacked.
 * unpack_source_begin: src reads fd from where it is; -ENOMEM.
 * unpack_source_open: ARCHIVE_OK, or libarchive's error in ar.
 * unpack_source_end: hashes what the reader left (the pin covers the
 * whole file) into got and frees src's buffers; -errno of a failed read.
 * With got NULL it only frees them.  total counts every byte hashed. */
struct gunzip;
struct gunzip_ahead;
struct unpack_source {
	int fd;
	EVP_MD_CTX *md;
	struct writebehind hash;   /* md fed on a thread of its own, if it started */
	char *buf;
	uint64_t total;
	int err;            /* errno of a failed read */
	size_t pending;     /* bytes of buf read (and hashed) but not handed on */
	struct gunzip *gz;  /* a gzip source decompressed here (unpack_source_open_tar) */
	struct gunzip_ahead *ahead;   /* gz inflated on a thread of its own, if it started */
};
int unpack_source_begin(struct unpack_source *src, int fd);
/* The pin first, with a read of its own (a wrong file costs a read, never
 * a decompression), then unpack_source_begin on fd from its start: 0; 1
 * with got set when fd's bytes do not match pin (src not begun); -errno
 * with e filled (messages name path). */
int unpack_source_begin_pinned(struct unpack_source *src, int fd, const char *path, const uint8_t pin[32],
			       uint8_t got[32], ingot_error *e);
int unpack_source_open(struct archive *ar, struct unpack_source *src);
/* The same for a tar artifact: a gzip source is decompressed with ISA-L
 * (builder/gunzip.h) and libarchive reads the plain tar.  After the
 * archive's end, unpack_source_finish checks the rest of the gzip stream
 * (its trailer): 0, or -EBADMSG with *why. */
int unpack_source_open_tar(struct archive *ar, struct unpack_source *src);
int unpack_source_finish(struct unpack_source *src, const char **why);
int unpack_source_end(struct unpack_source *src, uint8_t got[32]);


/* Does pattern match path or one of its parent directories?  fnmatch(3)
 * without FNM_PATHNAME, so "*" also crosses '/'.  Exposed for tests. */
bool unpack_glob_match(const char *pattern, const char *path);

#endif
