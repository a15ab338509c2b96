/* The build orchestrator: recipe -> lint -> store -> unpack -> staging
 * tree -> squashfs image -> dm-verity tree -> manifest -> (signature).
 *
 * Outputs in outdir, named after the recipe's `name`:
 *   NAME.sqfs  NAME.verity  NAME.manifest.json  NAME.spdx.json (SPDX 2.3 SBOM,
 *   builder/sbom.h)  [NAME.manifest.dsse.json]  [NAME.efi]
 * Everything is written to temporary files in outdir first and renamed
 * into place only when the whole build succeeded, so a failed or killed
 * build leaves no file under any output name. */
#ifndef INGOT_BUILD_H
#define INGOT_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/err.h"

/* Called once per artifact when its bytes are in the store and its
 * listing is known (done counts completions, in any order). */
typedef void (*build_progress_fn)(void *ctx, size_t done, size_t total, const char *name,
				  uint64_t bytes, bool cached);

struct build_opts {
	const char *recipe;              /* recipe file */
	const char *outdir;              /* created if missing */
	const char *store;               /* NULL: store_default_root() */
	unsigned workers;                /* unpack/compression threads; 0 = 1.  Never changes output. */
	const char *key;                 /* signing key (PEM) or NULL: no envelope */
	const char *rules_dir;           /* lint rules, NULL: the default */
	const char *date;                /* lint date YYYY-MM-DD (required unless no_lint) */
	const char *source_date_epoch;   /* $SOURCE_DATE_EPOCH or NULL */
	const char *const *vars;         /* "NAME=VALUE" for the recipe's ${NAME} (--set) */
	size_t n_vars;
	bool no_lint;
	uint64_t max_entries;            /* per artifact; 0 = UNPACK_MAX_ENTRIES */
	uint64_t max_unpacked_bytes;     /* all artifacts; 0 = the recipe's
					  * max-unpacked-bytes, else UNPACK_MAX_BYTES */
	build_progress_fn progress;
	void *progress_ctx;
};

struct build_result {
	char *name;                      /* recipe name */
	char *image_path, *verity_path, *manifest_path, *sbom_path, *envelope_path; /* NULL if not written */
	char *uki_path;                  /* NAME.efi, recipes with a boot: section */
	uint8_t image_sha256[32];
	uint64_t image_size;
	uint8_t verity_root[32];
	size_t entries;                  /* entries in the image (all types) */
	size_t files;                    /* regular files */
	size_t artifacts, artifacts_cached;
	uint64_t blocks_compressed;      /* data blocks compressed by this build */
	uint64_t blocks_reused;          /* ... taken from the store's block cache */
	uint64_t files_reused;           /* files whose compressed blocks came from the file cache */
	uint64_t cache_segments_ignored; /* file-cache segments not read (too many: `ingot store gc`) */
	size_t lint_warnings;
	char **warnings;                 /* lint warnings, one line each */
};

int ingot_build(const struct build_opts *o, struct build_result *res, ingot_error *e);
void build_result_free(struct build_result *res);

/* Stages up to the finalized staging tree (recipe's artifacts imported,
 * unpacked, inline entries added), for tests and `inspect`-like tools. */
struct recipe;
struct store;
struct tree;
struct unpack_stats;
struct unpack_limits;
/* lim (may be NULL; a 0 field: the recipe's limit, else the default);
 * stats (may be NULL): n_artifacts unpack results, in recipe order. */
int build_stage_tree(const struct recipe *r, struct store *s, unsigned workers,
		     const struct unpack_limits *lim, build_progress_fn progress, void *progress_ctx,
		     struct tree *t, size_t *cached, struct unpack_stats *stats, ingot_error *e);

#endif
