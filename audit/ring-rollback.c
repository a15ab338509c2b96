/* Ring evidence that went backwards: a node's verifier met promotions
 * below the serial it had recorded for the ring (verify --ring --state),
 * or a newer report of the node was verified against older promotions
 * than an earlier one. */
#include <string.h>

#include "audit/audit-private.h"

void audit_ring_report(const struct node_report *rep, json_t *row)
{
	for (size_t i = 0; i < rep->n_checks; i++) {
		const struct report_check *c = &rep->checks[i];
		if (!c->ring || !c->has_ring_serial)
			continue;
		json_object_set_new(row, "ring_serial", json_pack("{s:s,s:I}", "ring", c->ring, "serial",
								  (json_int_t)c->ring_serial));
		if (c->has_ring_serial_seen && c->ring_serial < c->ring_serial_seen)
			audit_add_finding(row, "ring-rollback", "ring %s: verified against promotions up to serial "
					  "%lld, serial %lld was seen before", c->ring,
					  (long long)c->ring_serial, (long long)c->ring_serial_seen);
	}
}

void audit_ring_compare(json_t *newer, const json_t *older)
{
	struct audit_row a, b;

	audit_row_decode(older, &a);
	audit_row_decode(newer, &b);
	if (a.has_ring_serial && b.has_ring_serial && b.ring_serial_ring &&
	    !strcmp(b.ring_serial_ring, a.ring_serial_ring ?: "") && b.ring_serial < a.ring_serial)
		audit_add_finding(newer, "ring-rollback", "ring %s: the newest report verified against promotions "
				  "up to serial %lld, an older one (%s) up to %lld", b.ring_serial_ring,
				  b.ring_serial, a.report ?: "?", a.ring_serial);
	audit_row_release(&a);
	audit_row_release(&b);
}
