/* The audit's ring column: which rings the image a node runs holds, from
 * the promotion statements (--promotions, --promotion-keyring), checked
 * with the same code as `ingot verify --ring`. */
#include <stdlib.h>
#include <string.h>

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

/* Ring evidence that went backwards, as the node's own verifier saw it:
 * its ring check (verify --ring --state) met promotions below the serial
 * it had recorded for the ring.  The served serial is kept in the row
 * ("ring_serial") so the node's reports can be compared over time. */
void audit_ring_report(const json_t *rep, json_t *row)
{
	const json_t *c;
	size_t i;

	json_array_foreach(json_object_get(rep, "checks"), i, c) {
		const json_t *d = json_object_get(c, "details");
		const json_t *served = json_object_get(d, "ring_serial"), *seen = json_object_get(d, "ring_serial_seen");
		const char *ring = json_string_value(json_object_get(d, "ring"));
		if (!json_is_string(json_object_get(c, "name")) || strcmp(json_string_value(json_object_get(c, "name")), "ring") ||
		    !ring || !json_is_integer(served))
			continue;
		json_object_set_new(row, "ring_serial", json_pack("{s:s,s:I}", "ring", ring, "serial",
								  json_integer_value(served)));
		if (json_is_integer(seen) && json_integer_value(served) < json_integer_value(seen))
			audit_add_finding(row, "ring-rollback", "ring %s: verified against promotions up to serial "
					  "%lld, serial %lld was seen before", ring,
					  (long long)json_integer_value(served), (long long)json_integer_value(seen));
	}
}

void audit_ring_compare(json_t *newer, const json_t *older)
{
	const json_t *a = json_object_get(older, "ring_serial"), *b = json_object_get(newer, "ring_serial");
	const char *ring = json_string_value(json_object_get(b, "ring"));

	if (a && b && ring && !strcmp(ring, json_string_value(json_object_get(a, "ring")) ?: "") &&
	    json_integer_value(json_object_get(b, "serial")) < json_integer_value(json_object_get(a, "serial")))
		audit_add_finding(newer, "ring-rollback", "ring %s: the newest report verified against promotions "
				  "up to serial %lld, an older one (%s) up to %lld", ring,
				  (long long)json_integer_value(json_object_get(b, "serial")),
				  json_string_value(json_object_get(older, "report")) ?: "?",
				  (long long)json_integer_value(json_object_get(a, "serial")));
}
