/* Promotion statements: a signed record that one image (by sha256) was
 * promoted to one ring (lab, canary, production) with a serial, and which
 * evidence justified it.  `ingot promote` writes them (ops/promote.c);
 * admission reads them here, below audit, so a node can check that its
 * image holds its ring.  Also the generic opener for ingot's own in-toto
 * statements (evidence, promotions): signatures first, then the shape. */
#ifndef INGOT_VERIFY_PROMOTION_H
#define INGOT_VERIFY_PROMOTION_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <jansson.h>

#include "keys/envelope.h"
#include "keys/keyring.h"
#include "lib/err.h"

#define EVIDENCE_PREDICATE_TYPE "https://ingot.dev/evidence/v1"
#define PROMOTION_PREDICATE_TYPE "https://ingot.dev/promotion/v1"
#define PROMOTION_SUFFIX ".promotion.dsse.json"
#define EVIDENCE_SUFFIX ".evidence.dsse.json"
#define RING_NAME_MAX 64
#define STATEMENT_DIR_MAX 4096     /* statements read from one directory */

/* The in-toto statement with one image subject (what ingot signs about an
 * image besides its manifest): the manifest's image file and sha256. */
int image_statement(const char *ptype, const struct manifest *m, json_t *predicate, json_t **out,
		    ingot_error *e);

/* Verify path's signatures against kr (its threshold of distinct keys),
 * then the statement: predicateType ptype, one subject with a sha256.
 * *predicate: new reference; subject_sha256 gets the subject's digest.
 * e->kind is an ENVELOPE_FAIL_* on failure. */
int statement_open(const char *path, const struct keyring *kr, const char *ptype,
		   json_t **predicate, char subject_sha256[65], struct verify_outcome *out,
		   ingot_error *e);

/* The files in dir whose names end in suffix, sorted (malloc'd array of
 * malloc'd paths, *n entries).  -ENOENT if dir is missing. */
int statement_dir_list(const char *dir, const char *suffix, char ***paths, size_t *n,
		       ingot_error *e);
void statement_dir_free(char **paths, size_t n);

struct promotion {
	char *file;
	char ring[RING_NAME_MAX];
	uint64_t serial;
	char image_sha256[65];
	time_t date;
	char retires[65];          /* "" or the image this promotion retired */
};

struct promotion_set {
	struct promotion *v;
	size_t n;
	size_t refused;            /* statements in the directory that did not verify */
	char *why;                 /* the first refusal, for messages (or NULL) */
};

/* Every promotion to ring (NULL: to any ring) in dir signed by kr's threshold.  Statements
 * that do not verify are counted in set->refused, never used. */
int promotions_load(const char *dir, const struct keyring *kr, const char *ring,
		    struct promotion_set *set, ingot_error *e);
void promotions_free(struct promotion_set *set);

enum promotion_standing {
	PROMOTION_NONE,            /* never promoted to the ring */
	PROMOTION_CURRENT,         /* the ring's latest promoted image */
	PROMOTION_PREVIOUS,        /* the one before, kept until a rollback retires it */
	PROMOTION_RETIRED,         /* the previous one, retired after a rollback drill */
	PROMOTION_SUPERSEDED,      /* older than the previous image */
};

/* Where image stands in the ring's set; *which (optional) gets its latest
 * promotion, why gets one line naming the reason. */
enum promotion_standing promotion_standing(const struct promotion_set *set, const char *image,
					   const struct promotion **which, char *why, size_t n);
static inline bool promotion_admits(enum promotion_standing s)
{
	return s == PROMOTION_CURRENT || s == PROMOTION_PREVIOUS;
}

/* The rings of a set of any rings (promotions_load with ring NULL) whose
 * admission image passes, as "canary production(previous)" in out (""
 * when none). */
void promotion_rings_held(const struct promotion_set *all, const char *image, char *out,
			  size_t n);

/* The latest (highest serial) promotion of image in set, or NULL. */
const struct promotion *promotion_of(const struct promotion_set *set, const char *image);

#endif
