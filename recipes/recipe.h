/* The recipe: a declarative YAML description of one pool image.
 * Parsed with libyaml; every error names file:line:col and the field. */
#ifndef INGOT_RECIPE_H
#define INGOT_RECIPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/err.h"

struct tuple; /* recipes/tuple.h */
struct boot_spec; /* recipes/boot.h */

enum artifact_kind { ART_TAR, ART_DEB, ART_FILE };

struct mode_override {
	char *glob;          /* fnmatch(3) pattern on image paths */
	int32_t mode;        /* -1 = keep */
	int64_t uid, gid;    /* -1 = keep */
};

/* What a built artifact was made from (built-from:), for the SBOM's
 * GENERATED_FROM: a source package or a patch, by name, its sha256 pin,
 * and optionally its version and purl. */
struct built_from {
	char *name, *version, *purl;   /* version, purl: NULL when not given */
	uint8_t sha256[32];
};

struct artifact {
	char *name;
	char *source;        /* as written in the recipe */
	char *path;          /* resolved absolute/relative-to-cwd path (file:// decoded,
			      * relative sources against the recipe's directory) */
	uint8_t sha256[32];
	enum artifact_kind kind;
	char *dest;          /* tar/deb: image directory it lands in ("" = root);
			      * file: the file's image path */
	unsigned strip_components;
	char **include;  size_t n_include;   /* globs on the archive path after strip */
	char **exclude;  size_t n_exclude;
	struct mode_override *modes; size_t n_modes;
	bool allow_devices;  /* device nodes refused unless set */
	bool replace;        /* this artifact wins over earlier ones on the same path */
	uint32_t file_mode;  /* ART_FILE: mode of the single file (default 0644) */
	struct built_from *from; size_t n_from;   /* built-from: (SBOM only) */
	char *version, *purl;  /* version:, purl: (SBOM only; NULL when not given) */
	size_t line, column; /* where it was declared, 1-based */
};

struct inline_file {
	char *path; char *content; size_t len;
	uint32_t mode; uint32_t uid, gid;
	size_t line, column;
};

struct recipe_dir { char *path; uint32_t mode; uint32_t uid, gid; size_t line, column; };
struct recipe_symlink { char *path; char *target; size_t line, column; };

struct recipe {
	char *file;               /* path given to recipe_load */
	char *dir;                /* directory sources resolve against */
	uint8_t file_sha256[32];  /* digest of the recipe file's bytes */

	char *name;               /* [a-z0-9][a-z0-9._-]*, image file stem */
	char *version;
	uint64_t epoch;           /* mtime of every entry and the superblock */
	bool allow_source_date_epoch; /* SOURCE_DATE_EPOCH may override epoch */

	char *compression;        /* "zstd" (default), "xz", "gzip", "lz4" */
	int level;                /* compressor level; 0 = compressor default */
	uint32_t block_size;      /* 4 KiB .. 1 MiB, power of two; default 128 KiB */

	uint64_t serial;          /* manifest serial (monotonic per pool) */
	uint64_t max_unpacked_bytes; /* bytes of regular files the artifacts may
				      * unpack to, all together; 0 = the builder's default */
	char *expires;            /* RFC 3339, manifest expiry; NULL = none */

	struct artifact *artifacts; size_t n_artifacts;
	struct inline_file *files;  size_t n_files;
	struct recipe_dir *dirs;    size_t n_dirs;
	struct recipe_symlink *symlinks; size_t n_symlinks;

	struct tuple *tuple;      /* NULL when the recipe has no tuple: section */
	struct boot_spec *boot;   /* NULL when the recipe has no boot: section */
};

/* Parse and validate a recipe file.  env_epoch is SOURCE_DATE_EPOCH's
 * value or NULL; it overrides epoch only if the recipe allows it. */
int recipe_load(const char *path, const char *env_epoch, struct recipe **out, ingot_error *e);
/* Same, from memory (name is used in messages, dir for relative sources). */
int recipe_load_buf(const char *name, const char *dir, const char *buf, size_t len,
		    const char *env_epoch, struct recipe **out, ingot_error *e);
/* Same, with ${NAME} in source:, sha256:, version: and purl: values replaced by VALUE from
 * the "NAME=VALUE" strings in vars (ingot build --set); a reference
 * without a value is an error naming it. */
int recipe_load_vars(const char *path, const char *env_epoch, const char *const *vars, size_t n_vars,
		     struct recipe **out, ingot_error *e);
int recipe_load_buf_vars(const char *name, const char *dir, const char *buf, size_t len,
			 const char *env_epoch, const char *const *vars, size_t n_vars,
			 struct recipe **out, ingot_error *e);
void recipe_free(struct recipe *r);

const char *artifact_kind_name(enum artifact_kind k);

#endif
