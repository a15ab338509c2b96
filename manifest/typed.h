/* The manifest as a type: what builder/manifest.c wrote, checked once
 * (manifest/schema.h) and decoded once, here.  Readers (the verdict,
 * verify/, audit/, ops/, diff, inspect) take a const struct manifest and
 * read its members; none walks the JSON again.  Only manifest_load and
 * the envelope verification (keys/envelope.h) make one; a test may fill
 * one by hand.
 *
 * Strings point into doc, the checked JSON the struct keeps a reference
 * to (for a writer that passes the document on as it was signed).  A
 * member a MANIFEST_REVIEW document left out is zero and its MF_* bit in
 * have is clear; at MANIFEST_FULL every bit but MF_BOOT, MF_SBOM and
 * MF_EXPIRES is set. */
#ifndef INGOT_MANIFEST_TYPED_H
#define INGOT_MANIFEST_TYPED_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "lib/boot-prediction.h"
#include "lib/err.h"
#include "manifest/schema.h"

enum manifest_have {
	MF_RECIPE = 1u << 0,        /* recipe.name (at FULL also version, file, sha256) */
	MF_VERSION = 1u << 1,       /* epoch, serial, ingot_version */
	MF_EXPIRES = 1u << 2,       /* expires is a time (not null) */
	MF_IMAGE = 1u << 3,
	MF_VERITY = 1u << 4,
	MF_MEASUREMENT = 1u << 5,
	MF_PREDICTED = 1u << 6,     /* measurement.predicted.sha256 */
	MF_BOOT = 1u << 7,          /* a boot object (recipe with boot:) */
	MF_SBOM = 1u << 8,
	MF_FILES = 1u << 9,         /* files is an array (n_files entries) */
};

struct manifest {
	json_t *doc;                /* the checked document (own reference) */
	const char *name;           /* the file it came from, for messages (own copy) */
	enum manifest_level level;
	unsigned have;              /* enum manifest_have */
	const char *ingot_version;
	struct {
		const char *name, *version, *file;
		uint8_t sha256[32];
	} recipe;
	uint64_t epoch, serial;
	time_t expires;             /* with MF_EXPIRES */
	const char *expires_text;   /* as written, or NULL */
	/* The tuple, NULL or the object recipes/tuple-fields.h's table names
	 * the members of (kept as JSON: that table is the one reader). */
	const json_t *tuple;
	struct {
		const char *file, *compression;
		uint8_t sha256[32];
		char sha256_hex[65];
		uint64_t size, block_size;
		int64_t level;
	} image;
	struct {
		const char *file, *hash_algorithm, *uuid;
		uint8_t root_hash[32];
		char root_hex[65];
		uint8_t *salt;          /* own copy */
		size_t salt_len;
		uint64_t format, data_block_size, hash_block_size, data_blocks, hash_offset;
	} verity;
	struct {
		unsigned pcr;
		uint32_t event_type;
		const char *event_data;
		uint8_t content_digest[32];
		uint8_t predicted[32];  /* sha256 bank, with MF_PREDICTED */
		char predicted_hex[65];
	} measurement;
	struct boot_prediction boot;   /* the boot object's predictions (MF_BOOT) */
	struct {
		const char *file;
		uint8_t sha256[32];
	} sbom;
	size_t n_files, n_artifacts;
};

/* One files[] entry.  Strings are NULL when absent (a REVIEW or an
 * unchecked document), numbers 0. */
struct manifest_entry {
	const char *path, *type;
	const char *target;         /* symlinks */
	const char *mode_text;      /* "0644", as written */
	unsigned mode;
	bool has_ids;               /* uid and gid are integers */
	int64_t uid, gid, size, major, minor;
	const char *sha256_hex;     /* files: as written ... */
	bool has_sha256;            /* ... and as bytes when 64 lower-case hex digits */
	uint8_t sha256[32];
};

/* Check doc at level (manifest_check_level: one line naming name and the
 * field) and decode it; *out takes a reference to doc. */
int manifest_parse(const char *name, json_t *doc, enum manifest_level level, struct manifest **out,
		   ingot_error *e);
/* Decode doc without checking it: a member of another type reads as
 * absent (its bit clear).  For a document manifest_check_level passed at
 * level (the envelope verification's, which checked it as part of the
 * statement), or one that is only described, never trusted (`ingot
 * verify`'s predicate of an envelope whose signatures failed). */
struct manifest *manifest_decode(const char *name, json_t *doc, enum manifest_level level);

/* Load a manifest file (at most MANIFEST_FILE_MAX bytes) and check it in full. */
int manifest_load(const char *path, struct manifest **out, ingot_error *e);

void manifest_free(struct manifest *m);
static inline void manifest_freep(struct manifest **m) { manifest_free(*m); }
#define _cleanup_manifest_ __attribute__((cleanup(manifest_freep)))

/* The entries in order: *i starts at 0; 1 and *f filled while there is
 * one, then 0. */
int manifest_next_entry(const struct manifest *m, size_t *i, struct manifest_entry *f);
/* One files[] entry o as written (a diff's side, borrowed from doc). */
void manifest_entry_decode(const json_t *o, struct manifest_entry *f);

/* The sha256 PCR 15 the boot object predicts, as hex, or NULL: what an
 * auditor matches a quoted PCR 15 against to find the image. */
static inline const char *manifest_boot_pcr15(const struct manifest *m)
{
	return m && (m->boot.have & MB_PCR15) ? m->boot.pcr15_hex : NULL;
}

#endif
