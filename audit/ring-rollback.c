/* Ring evidence that went backwards: a node's verifier met promotions
 * below the serial it had recorded for the ring (verify --ring --state),
 * or a newer report of the node was verified against older promotions
 * than an earlier one. */
#include <string.h>

#include "audit/audit-private.h"

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
