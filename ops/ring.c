/* Which rings an image holds, from the promotion statements (the audit's
 * --promotions, --promotion-keyring), checked with the same code as
 * `ingot verify --ring`. */
#include "ops/ring.h"

#include <stdlib.h>

#include "keys/keyring.h"
#include "lib/cleanup.h"
#include "lib/xalloc.h"
#include "verify/promotion.h"

int rings_load(const char *promotions_dir, const char *keyring_path, struct promotion_set **out,
	       ingot_error *e)
{
	_cleanup_keyring_ struct keyring *kr = NULL;
	int r;

	*out = NULL;
	if (!promotions_dir)
		return 0;
	if (!keyring_path)
		return ingot_fail(e, -EINVAL, "--promotions needs --promotion-keyring");
	if ((r = keyring_load_role(keyring_path, KEY_ROLE_PROMOTION, true, &kr, e)) < 0)
		return r;
	*out = xcalloc(1, sizeof(**out));
	return promotions_load(promotions_dir, kr, NULL, *out, e);
}

void rings_free(struct promotion_set *set)
{
	if (set)
		promotions_free(set);
	free(set);
}

void rings_of_manifest(const struct promotion_set *set, const struct manifest *m, json_t *row)
{
	const char *image = m->have & MF_IMAGE ? m->image.sha256_hex : NULL;
	char held[512];

	if (!set)
		return;
	promotion_rings_held(set, image ? image : "", held, sizeof(held));
	json_object_set_new(row, "ring", json_string(*held ? held : "-"));
}
