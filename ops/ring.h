/* The rings an image holds: the promotion statements of a directory,
 * each checked against the promotion keyring (verify/promotion.h), for
 * the audit's ring column. */
#ifndef INGOT_OPS_RING_H
#define INGOT_OPS_RING_H

#include <jansson.h>
#include "lib/err.h"
#include "manifest/typed.h"

struct promotion_set;

/* Load promotions_dir's statements (*out NULL when promotions_dir is;
 * keyring_path is then required).  Free with rings_free. */
int rings_load(const char *promotions_dir, const char *keyring_path, struct promotion_set **out,
	       ingot_error *e);
void rings_free(struct promotion_set *set);

/* row["ring"]: the rings manifest m's image holds, "-" for none; nothing
 * without a set. */
void rings_of_manifest(const struct promotion_set *set, const struct manifest *m, json_t *row);

#endif
