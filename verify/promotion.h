/* Promotion statements: a signed record that one image (by sha256) was
 * promoted to one ring (lab, canary, production) with a serial, and which
 * evidence justified it.  `ingot promote` writes them (ops/promote.c);
 * admission reads them here, below audit, so a node can check that its
 * image holds its ring.  The statements are opened by keys/statement.h. */
#ifndef INGOT_VERIFY_PROMOTION_H
#define INGOT_VERIFY_PROMOTION_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <jansson.h>

#include "keys/keyring.h"
#include "keys/statement.h"
#include "lib/err.h"

#define EVIDENCE_PREDICATE_TYPE "https://ingot.dev/evidence/v1"
#define PROMOTION_PREDICATE_TYPE "https://ingot.dev/promotion/v1"
#define PROMOTION_SUFFIX ".promotion.dsse.json"
#define EVIDENCE_SUFFIX ".evidence.dsse.json"
#define RING_NAME_MAX 64

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
