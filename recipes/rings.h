/* Ring policy as data: recipes/rings/NAME.yaml says, for one ring (lab,
 * canary, production), what evidence an image needs before it may be
 * promoted there, which keys may sign each kind of evidence and how many
 * of them, the promotion keys, and the minimum soak time in the previous
 * ring.  Parsed here only; ops/promote.c applies it. */
#ifndef INGOT_RECIPES_RINGS_H
#define INGOT_RECIPES_RINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

#define RING_MAX_REQUIREMENTS 8
#define RING_ID_MAX 64

struct ring_requirement {
	char kind[RING_ID_MAX];   /* nccl-tests | dcgm-diag | custom | rollback */
	char *keyring;            /* runners' keyring (path resolved against the policy file) */
	unsigned threshold;       /* signatures needed; 0: the keyring's own */
	bool required;            /* false: optional (e.g. rollback, which retires) */
	double min_busbw;         /* nccl-tests: GB/s at every size >= min_bytes */
	uint64_t min_bytes;       /* nccl-tests: message size the bar applies from */
	unsigned min_nodes;       /* nccl-tests: nodes in the run */
	unsigned min_level;       /* dcgm-diag: dcgmi diag -r level */
};

struct ring_policy {
	char *file;
	char name[RING_ID_MAX];
	char previous[RING_ID_MAX];     /* "" for the first ring */
	uint64_t soak_seconds;          /* minimum time since promotion to previous */
	char *promotion_keyring;
	unsigned promotion_threshold;   /* 0: the keyring's own */
	bool retire_after_rollback;     /* rollback evidence retires the ring's previous image */
	struct ring_requirement req[RING_MAX_REQUIREMENTS];
	size_t n_req;
};

/* Load one policy file; errors read "FILE:LINE:COL: field: expected ...". */
int ring_policy_load(const char *path, struct ring_policy **out, ingot_error *e);
/* DIR/RING.yaml, whose ring: must be RING. */
int ring_policy_load_dir(const char *dir, const char *ring, struct ring_policy **out,
			 ingot_error *e);
void ring_policy_free(struct ring_policy *p);
static inline void ring_policy_freep(struct ring_policy **p) { if (*p) ring_policy_free(*p); }
#define _cleanup_ring_policy_ __attribute__((cleanup(ring_policy_freep)))

/* The requirement for kind, or NULL. */
const struct ring_requirement *ring_requirement(const struct ring_policy *p, const char *kind);

#endif
