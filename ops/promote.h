/* `ingot promote`: check an image against a ring's policy (recipes/rings.h)
 * - evidence signed by the allowed keys and thresholds, about this image,
 * meeting the bars; soak time since its promotion to the previous ring -
 * and sign a promotion statement (verify/promotion.h), or refuse naming
 * everything that is missing. */
#ifndef INGOT_AUDIT_PROMOTE_H
#define INGOT_AUDIT_PROMOTE_H

#include <stddef.h>
#include <time.h>
#include <jansson.h>

#include "keys/key.h"
#include "lib/err.h"

/* What failed (e->kind; an envelope read inside may leave its own
 * ENVELOPE_FAIL_* instead).  Above the envelope kinds, so kinds never collide. */
enum promote_fail {
	PROMOTE_FAIL_IO = 16,         /* cannot read or write something */
	PROMOTE_FAIL_MALFORMED,       /* bad policy, manifest or keyring */
	PROMOTE_FAIL_REFUSED,         /* the policy is not met: reasons in the message */
};


struct promote_opts {
	const char *manifest_path;    /* plain manifest or its envelope */
	const char *ring;
	const char *rings_dir;        /* the ring policies (RING.yaml) */
	const char *evidence_dir;     /* *.evidence.dsse.json */
	const char *promotions_dir;   /* *.promotion.dsse.json: read, and the new one written */
	time_t now;
};

struct promote_result {
	char *path;                   /* the promotion written */
	unsigned long long serial;
	char retired[65];             /* "" or the image it retired */
	size_t n_evidence;
};

/* Check and, when every requirement is met, write the promotion signed by
 * keys.  On refusal e->msg lists each unmet requirement ("; "-separated). */
int promote_image(const struct promote_opts *o, struct signing_key *const *keys, size_t n_keys,
		  struct promote_result *res, ingot_error *e);
void promote_result_free(struct promote_result *res);

#endif
