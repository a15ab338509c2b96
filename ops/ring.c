/* The audit's ring column: which rings the image a node runs holds, from
 * the promotion statements (--promotions, --promotion-keyring), checked
 * with the same code as `ingot verify --ring`. */
#include <stdlib.h>

#include "audit/audit-private.h"
#include "keys/keyring.h"
#include "lib/cleanup.h"
#include "verify/promotion.h"

int audit_rings_load(struct audit_ctx *c, ingot_error *e)
{
	_cleanup_keyring_ struct keyring *kr = NULL;
	int r;

	if (!c->o->promotions_dir)
		return 0;
	if (!c->o->promotion_keyring)
		return ingot_fail(e, -EINVAL, "--promotions needs --promotion-keyring");
	if ((r = keyring_load(c->o->promotion_keyring, &kr, e)) < 0)
		return r;
	c->rings = calloc(1, sizeof(*c->rings));
	if (!c->rings)
		return ingot_fail(e, -ENOMEM, "audit: out of memory");
	return promotions_load(c->o->promotions_dir, kr, NULL, c->rings, e);
}

void audit_rings_free(struct audit_ctx *c)
{
	if (c->rings)
		promotions_free(c->rings);
	free(c->rings);
}

void audit_ring_of(const struct audit_ctx *c, const json_t *m, json_t *row)
{
	const char *image = json_string_value(json_object_get(json_object_get(m, "image"), "sha256"));
	char held[512];

	if (!c->rings)
		return;
	promotion_rings_held(c->rings, image ? image : "", held, sizeof(held));
	json_object_set_new(row, "ring", json_string(*held ? held : "-"));
}
