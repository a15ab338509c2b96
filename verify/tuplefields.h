/* The tuple fields a node probe can show: which probe fact answers which
 * manifest tuple member, how the two compare (verify/tuplecheck.c) and
 * whether the probed value stands in for the declared one when the
 * version-chain rules run on the node (verify/rulescheck.c).  One table,
 * so the two checks never disagree on what a field is. */
#ifndef INGOT_VERIFY_TUPLEFIELDS_H
#define INGOT_VERIFY_TUPLEFIELDS_H

#include <stddef.h>

enum tuple_match { MATCH_EXACT, MATCH_VERSION, MATCH_PREFIX, MATCH_MODEL };

enum tuple_rules {
	RULES_NONE,       /* the rules do not read it */
	RULES_DECLARED,   /* the rules keep the declared value (a node of another vendor is a
			   * tuple mismatch, not another rule world); listed when unreadable */
	RULES_PROBED,     /* the probed value replaces the declared one */
};

struct tuple_field {
	const char *label;      /* for messages */
	const char *tuple;      /* dotted path in the manifest tuple ('_' for the JSON's '-') */
	const char *probe;      /* probe fact key */
	const char *fallback;   /* second probe key, or NULL */
	enum tuple_match how;   /* MATCH_VERSION and MATCH_PREFIX: the rules get the upstream version */
	enum tuple_rules rules;
};

/* Compared fields, in the order they are reported; the first
 * TUPLE_FIELDS_DRIVER_END are the driver's (vendor, driver, flavor). */
extern const struct tuple_field tuple_fields[];
extern const size_t tuple_fields_n;
#define TUPLE_FIELDS_DRIVER_END 3

#endif
